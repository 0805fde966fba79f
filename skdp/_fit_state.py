"""A fit that raises leaves its estimators as they were before the call.

A fit computes things from the private data before it can fail: a private row bound or target
range, the class list, the fitted steps of a pipeline before its last step refuses. None of them
is released when the fit raises, so none may stay on the estimator for the caller to read,
publish or warm-start from. Restoring the state the call found
is one mechanism for every skdp estimator that fits (the linear models, the private pipeline, the
scaler, the private search).

What a failed fit cannot take back is what it already said: a warning or an error raised after a
private release (a bound) can depend on the released value. Every release is logged
(:func:`log_release`, called by the mechanisms), and a fit that raises after releases charges
them to its ledgers before the exception propagates (:func:`charged_if_failed`): repeated failed
attempts are counted like any other releases. Public checks run before the releases, so that a
refusal of the options or of the input costs nothing.
"""

import contextvars
import copy
import functools
import math
import os

import numpy as np
from sklearn.base import BaseEstimator

__all__ = [
    "RELEASE_ID", "charged_if_failed", "failed_fit_guard", "keeps_state_on_error", "log_release",
    "log_stream", "restored_on_error",
]

#: The attribute that names a fitted object's last release: a new random id at every fit that
#: returns (:class:`failed_fit_guard`), so that a pipeline can tell whether its steps are still
#: the releases its record describes.
RELEASE_ID = "_skdp_release_id"


def _estimators_under(estimator):
    """``estimator`` and every estimator among its deep parameters (a pipeline's steps, a
    column transformer's transformers, a search's estimator), each once."""
    found = {id(estimator): estimator}
    get_params = getattr(estimator, "get_params", None)
    if get_params is not None:
        for value in get_params(deep=True).values():
            if isinstance(value, BaseEstimator):
                found.setdefault(id(value), value)
    return list(found.values())


def _saved(value):
    # a fit replaces most attributes, but a pipeline's ``steps`` list is assigned in place and an
    # array could be written into: both are copied, everything else is kept by reference
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, dict, set)):
        return copy.copy(value)
    return value


class restored_on_error:
    """Context manager: on an exception, every estimator under ``estimator`` gets back the
    attributes it had on entry (those added are removed); on success nothing changes.

    Ledgers and random generators are not estimators' state and are left as they are: a charge
    made before the failure stays (an over-statement, never an under-statement), and a generator
    that advanced is still fresh randomness.
    """

    def __init__(self, estimator):
        self._saved = [
            (est, {key: _saved(value) for key, value in vars(est).items()})
            for est in _estimators_under(estimator)
        ]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            for est, state in self._saved:
                attributes = vars(est)
                attributes.clear()
                attributes.update(state)
        return False


def keeps_state_on_error(fit):
    """Decorator of a ``fit`` method: a call that raises leaves the estimator (and the estimators
    it holds) as the call found it (:class:`restored_on_error`), and charges the releases it
    made before the error (:class:`charged_if_failed`)."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        with failed_fit_guard(self):
            return fit(self, *args, **kwargs)

    return wrapper


class failed_fit_guard:
    """What every fitting class wraps its ``fit`` in: :class:`charged_if_failed` (to the
    ledgers of the estimator's ``_failed_fit_ledgers()``, when it has one) around
    :class:`restored_on_error`."""

    def __init__(self, estimator):
        ledgers = getattr(estimator, "_failed_fit_ledgers", None)
        self._estimator = estimator
        self._charged = charged_if_failed(estimator, ledgers)
        self._restored = restored_on_error(estimator)

    def __enter__(self):
        self._charged.__enter__()
        self._restored.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self._restored.__exit__(exc_type, exc, tb)
        finally:
            self._charged.__exit__(exc_type, exc, tb)
        if exc_type is None:  # a new release
            setattr(self._estimator, RELEASE_ID, os.urandom(8).hex())
        return False


# -- releases made by a fit that then fails ------------------------------------------------------
#: The events released so far by the outermost fit running in this context (None outside a fit).
_RELEASES = contextvars.ContextVar("skdp_releases", default=None)

#: Source label of the ledger entry of a fit that raised after private releases.
FAILED_FIT = "failed fit"


class _ReleaseLog:
    """What the outermost fit running in a context has released so far: the events, and the
    random streams they may draw from (raw states, :func:`skdp._streams.stream_state`)."""

    def __init__(self):
        self.events, self.streams = [], []


def log_release(event):
    """Record a private release's event for the fit running in this context (a no-op outside a
    fit): the mechanisms call it when they return a released value."""
    log = _RELEASES.get()
    if log is not None:
        log.events.append(event)


def log_stream(state):
    """Record the random stream (raw state) a fit or step draws its releases from, for the
    fit running in this context (a no-op outside a fit): a failed fit's charge carries it, so a
    ledger sees when a later fit draws the same noise (:mod:`skdp._streams`)."""
    log = _RELEASES.get()
    if log is not None and state is not None:
        log.streams.append(state)


class charged_if_failed:
    """Context manager of a fit: the releases made within it are charged to ``ledgers()`` (a
    callable, None to charge nothing) when the block raises after any of them.

    Only the outermost fit of a context charges: a pipeline's steps and a search's fits log into
    the pipeline's or the search's log (a private search charges its whole plan before it runs,
    and passes ``ledgers=None``). The charge is one pure-DP entry of the released events (the
    exponential mechanism's). It is recorded even past a ledger's ceiling, since the releases
    were made; the ceiling's refusal (or another failure of the charge) is then raised with the
    fit's own error as its cause.
    """

    def __init__(self, estimator, ledgers):
        self._source = type(estimator).__name__
        self._ledgers = ledgers

    def __enter__(self):
        self._owner = _RELEASES.get() is None
        if self._owner:
            self._token = _RELEASES.set(_ReleaseLog())
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self._owner:
            return False
        log = _RELEASES.get()
        _RELEASES.reset(self._token)
        if exc_type is not None and log.events and self._ledgers is not None:
            try:
                _charge_releases(self._ledgers(), tuple(log.events), self._source,
                                 tuple(log.streams))
            except Exception as charge_error:
                # (a ceiling) raised with the fit's error as its cause, so neither is hidden;
                # an interrupt (KeyboardInterrupt) stays one: the entry is recorded all the
                # same, and the ledger refuses the next fit
                if not isinstance(exc, Exception):
                    return False
                raise charge_error from exc
        return False


def _charge_releases(ledgers, events, source, streams):
    from .ledger import charge
    from .privacy.events import ComposedEvent
    from .privacy.record import PrivacyRecord

    if not ledgers:
        return
    event = ComposedEvent(events)
    pure = event.pure_epsilon()  # the logged mechanisms are pure DP; any other: no finite claim
    epsilon = float(pure) if pure is not None else math.inf
    record = PrivacyRecord(
        event=event, epsilon=epsilon, delta=0.0, accountant="rdp", mechanism="exponential",
        noise_multiplier=math.nan, sensitivity=1.0, n_steps=0, sampling="full batch",
    )
    charge(ledgers, record, f"{source} ({FAILED_FIT})", epsilon, 0.0, made=True,
           stream=streams)
