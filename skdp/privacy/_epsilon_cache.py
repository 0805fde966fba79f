"""A per-process cache of the accountant's answers, keyed by the events' public parameters.

:func:`~skdp.privacy.compute_epsilon` is a pure function of an event's parameters (noise
multipliers, sampling rates, step counts: public quantities), delta and the accountant's name.
A calibration bisects over it, and a fit reports its epsilon with it, which at a few hundred
rows costs more than the optimisation. The folds of a search, the candidates that share a
budget and the refits of one configuration ask the same questions, so the answers are kept
here, for the process, in a bounded least-recently-used table.

An answer is kept only when its question can be written down exactly: an event built entirely
of frozen dataclasses whose fields are plain numbers, strings, None or tuples of those (every
event skdp builds). The key holds each value with its type, so two questions share an answer
only when their parameters are the same values of the same types. Anything else (a user's
mutable event, an array field) is computed every time.
"""

import dataclasses
import threading
from collections import OrderedDict

import numpy as np

#: Answers kept per process (a key is a few dozen numbers; 4096 of them take well under a MiB).
#: 0 turns the cache off (``benchmarks/bench_accountant_share.py`` times fits without it).
MAX_ENTRIES = 4096

_NOT_CACHEABLE = object()
_PLAIN = (bool, int, float, str, np.integer, np.floating)
#: Event wrappers whose answers are those of the event they wrap (type -> the wrapped event),
#: see :func:`answers_as_wrapped`.
_WRAPPERS = {}
_ENTRIES = OrderedDict()
_LOCK = threading.Lock()


def question_key(value):
    """A hashable exact description of ``value`` (an event, or delta), or ``_NOT_CACHEABLE``."""
    if value is None or isinstance(value, _PLAIN):
        return (type(value), value)
    if isinstance(value, tuple):
        parts = tuple(question_key(v) for v in value)
        return _NOT_CACHEABLE if any(p is _NOT_CACHEABLE for p in parts) else (tuple, parts)
    cls = type(value)
    if cls in _WRAPPERS:
        inner = question_key(_WRAPPERS[cls](value))
        return _NOT_CACHEABLE if inner is _NOT_CACHEABLE else (cls, inner)
    if dataclasses.is_dataclass(value) and cls.__dataclass_params__.frozen:
        parts = tuple(question_key(getattr(value, f.name)) for f in dataclasses.fields(value))
        return _NOT_CACHEABLE if any(p is _NOT_CACHEABLE for p in parts) else (cls, parts)
    return _NOT_CACHEABLE


def answers_as_wrapped(cls, wrapped):
    """Describe the events of class ``cls`` by the event ``wrapped(e)`` they wrap.

    For wrappers whose accounting is the wrapped event's, with a cache of their own inside
    (the ledger's per-event memo of RDP curves): they are not frozen dataclasses, but a
    question about one is a question about the event it wraps.
    """
    _WRAPPERS[cls] = wrapped


def cached_answer(compute, event, delta, accountant):
    """``compute(event, delta, accountant)``, served from the table when asked before.

    Errors are not kept: a question that raised raises again.
    """
    key = (question_key(event), question_key(delta), question_key(accountant))
    if MAX_ENTRIES <= 0 or any(k is _NOT_CACHEABLE for k in key):
        return compute(event, delta, accountant)
    with _LOCK:
        if key in _ENTRIES:
            _ENTRIES.move_to_end(key)
            return _ENTRIES[key]
    value = compute(event, delta, accountant)
    with _LOCK:
        _ENTRIES[key] = value
        while len(_ENTRIES) > MAX_ENTRIES:
            _ENTRIES.popitem(last=False)
    return value


def clear():
    """Forget every kept answer."""
    with _LOCK:
        _ENTRIES.clear()


def size():
    """The number of answers kept."""
    return len(_ENTRIES)
