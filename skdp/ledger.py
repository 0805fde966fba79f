"""A clone-safe privacy ledger: the privacy events of every fit, composed, with a ceiling.

A :class:`PrivacyLedger` is charged by every skdp fit that sees it, either through the
estimators' ``ledger=`` parameter or by being open as a context manager
(``with PrivacyLedger(epsilon=8) as ledger: ...``). It keeps the :class:`~skdp.privacy.DPEvent`
of each fit, composes them with the accountant (:func:`skdp.privacy.compute_epsilon`) and
refuses, with :class:`BudgetExceededError`, a fit that would pass its ceiling.

Why it survives scikit-learn
----------------------------
``clone`` deep-copies non-estimator parameters, which silently detaches diffprivlib's
accountant. :meth:`PrivacyLedger.__deepcopy__` and ``__copy__`` return the ledger itself, so
every clone made by ``GridSearchCV``, ``cross_val_score`` or a ``Pipeline`` charges the same
ledger, and ``clone``'s identity check (``check_estimators_overwrite_params``) passes.

Worker processes (``n_jobs > 1``)
---------------------------------
A process-based joblib backend (loky, multiprocessing) sends each worker a *pickled* copy of the
estimator. Pickling a ledger (``__reduce__``) creates, once, a spool directory owned by the
ledger; the copy unpickled in a worker ("replica") shares the ledger's id and that directory.
Every charge made anywhere (the owner included, once the spool exists) is written to the spool
as one file, atomically (write then rename), under a file lock that also covers the ceiling
check, so concurrent workers cannot together pass the ceiling. Reading the ledger in any process
reads the spool, so after ``GridSearchCV(n_jobs=2).fit`` the parent ledger holds the events of
the fits that ran in the workers. Unpickling in the owner's process returns the owner itself
(identity is kept). A ledger unpickled after its owner has gone (the spool was removed) becomes
a detached copy holding the entries known when it was pickled.

Forked processes (the multiprocessing backend, ``ProcessPoolExecutor`` with the fork start
method) inherit a *copy* of every ledger of their parent, open contexts included, and unpickling
there finds that copy. So that its charges reach the parent, a hook run before every fork
(``os.register_at_fork``) gives each of the parent's ledgers a spool first, and a hook run in the
child turns every inherited copy into a replica of that spool (fresh locks, no ownership of the
directory). A copy inherited by a fork that ran no hook is adopted the same way when it is next
used (each ledger remembers the process it belongs to); one that then has no spool refuses to
charge rather than lose the charge.

Objects that spend budget (the estimators, :class:`~skdp.model_selection.PrivateSearchCV`)
derive from :class:`LedgerCarrierMixin`: pickled while a ledger context is open, they carry the
open ledgers with them (a private attribute set in ``__getstate__``, kept by ``clone``), so
fits running in worker processes are charged to the context ledgers too. Threads share the
process-wide context.

This needs a file system shared by the processes (one machine). A Dask cluster on one machine
(``distributed.LocalCluster``, joblib's ``"dask"`` backend) is served by the same spool. A copy
unpickled on another machine (a multi-host cluster) cannot reach the spool: it refuses to charge
(the fit raises), never loses a charge. There, run the search with
:meth:`PrivacyLedger.fit_search` (its fold fits are planned and charged on the client before they run; the copies sent to
the workers carry the plan and take the planned events), search with
:class:`~skdp.model_selection.PrivateSearchCV` on Dask inputs (the search is charged once, on the
client, before any run), or pass the fitted estimators' events to :meth:`PrivacyLedger.record` or
:func:`compose`.
"""

from dataclasses import dataclass, replace
import itertools
import math
import numbers
import os
import pickle
import shutil
import socket
import tempfile
import threading
import time
import uuid
import weakref

import numpy as np

from .privacy import ACCOUNTANTS, ComposedEvent, DPEvent, NonPrivateEvent, PrivacyRecord
from .privacy import SelfComposedEvent, _epsilon_cache, compute_epsilon
from ._streams import SHARED, UNVERIFIED, first_conflict, object_tags, released_streams
from ._streams import stream_tags
from ._warnings import warn

try:  # POSIX advisory lock; released by the OS if a worker dies holding it
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = [
    "PrivacyLedger",
    "BudgetExceededError",
    "LedgerEntry",
    "LedgerCarrierMixin",
    "compose",
    "active_ledgers",
]


class BudgetExceededError(RuntimeError):
    """A fit (or a search) would take a :class:`PrivacyLedger` past its ceiling.

    Raised before the fit's kernel runs when the worst case of the fit already passes the
    ceiling, or after it ran (the model is then discarded, never returned) when its exact event
    does. The refusal itself depends on public quantities only. What a fit released before it
    failed (a private bound drawn with ``data_norm="auto"``) is recorded even past the ceiling,
    and this error then says the ledger is over its ceiling: it refuses every later fit.
    """


@dataclass(frozen=True)
class LedgerEntry:
    """One charge of a ledger: the event of one fit (or one private search).

    Attributes
    ----------
    event : DPEvent
    epsilon, delta : float
        The spend of this fit alone, as its own record reports it.
    source : str
        Class name of what was charged (``"DPLogisticRegression"``, ``"PrivateSearchCV"``...).
    target_epsilon, target_delta : float
        The budget the fit was calibrated to (``epsilon <= target_epsilon``).
    n_samples : int or None
    pid : int
        Process that ran the fit.
    time : float
        ``time.time()`` when it was charged.
    label : str or None
    streams : frozenset of str
        Keyed tags of the random streams the release drew from (:mod:`skdp._streams`), with
        the ledger's own key: two charges that share one are not independent, and the ledger's
        total is then infinite.
    object_streams : frozenset of str or None
        The same streams' tags as the fitted object keeps them (its process's key, named by
        :data:`~skdp._streams.KEY_ID`; ``released_streams`` of the object): what
        :meth:`PrivacyLedger.record` and :func:`compose` compare fitted objects with, whose
        streams are known by those tags only. None in an entry pickled by an skdp before this
        field: its ``streams`` then stand for streams of an unknown key (compared with nothing,
        so a seeded object recorded with it is not private).
    """

    event: DPEvent
    epsilon: float
    delta: float
    source: str
    target_epsilon: float
    target_delta: float
    n_samples: object = None
    pid: int = 0
    time: float = 0.0
    label: object = None
    streams: frozenset = frozenset()
    object_streams: object = None


def _object_streams(entry):
    """The object tags of ``entry`` (:attr:`LedgerEntry.object_streams`); for an entry of an
    older skdp (None: the class's default stands in for the missing field), its ledger tags:
    tags of an unknown key."""
    tags = entry.object_streams
    return entry.streams if tags is None else tags


def _first_conflict(ledger_tags, tags, groups):
    """``(i, j, kind)``, the first two releases that may share a random stream, or None: a
    ledger tag in both (``ledger_tags``: one ledger's key, or several ledgers', whose tags never
    meet), or what :func:`~skdp._streams.first_conflict` finds of their object tags (``tags``,
    ``groups``: the ledger of a charge with ledger tags, which compare it with that ledger's
    other charges; ``tags`` None: nothing to compare by them)."""
    hits = [None if tags is None else first_conflict(tags, groups)]
    first = {}  # ledger tag -> position of the first charge that drew from it
    for j, own in enumerate(ledger_tags):
        if not first.keys().isdisjoint(own):
            hits.append((min(first[t] for t in own if t in first), j, SHARED))
            break
        for t in own:
            first[t] = j
    hits = [h for h in hits if h is not None]
    return min(hits, key=lambda h: (h[1], h[0])) if hits else None


def shares_a_stream(entries):
    """Whether two of ``entries`` may draw from one random stream (see
    :func:`first_shared_stream`)."""
    return first_shared_stream(entries) is not None


def first_shared_stream(entries):
    """``(i, j, kind)``: the positions of the first two of ``entries`` (charges of one ledger)
    that drew from one random stream (``kind`` :data:`~skdp._streams.SHARED`), or may have
    (:data:`~skdp._streams.UNVERIFIED`: seeded streams whose tags cannot be compared), or None.

    Two charges of fits are compared by the ledger's own tags (``streams``: one key, wherever
    they ran); a charge recorded from a fitted object (:meth:`PrivacyLedger.record`, which
    knows its object tags only) is compared with every other by their object tags
    (:func:`~skdp._streams.compare_streams`)."""
    ledger_tags = [e.streams for e in entries]
    # Two charges of fits share a stream exactly when they share a ledger tag (one key): their
    # object tags add nothing unless a charge was recorded from an object (no ledger tags).
    recorded = any(not own and e.object_streams for e, own in zip(entries, ledger_tags))
    if not recorded:
        return _first_conflict(ledger_tags, None, None)
    return _first_conflict(ledger_tags, [_object_streams(e) for e in entries],
                           [0 if own else None for own in ledger_tags])


def _shared_stream_message(source, ledger_label, outcome, kind=SHARED):
    """Why a charge that may share a random stream makes the total infinite. ``outcome``:
    "before" (refused before fitting), "after" (refused, the fitted model discarded) or
    "charged"; ``kind``: :data:`~skdp._streams.SHARED` or ``UNVERIFIED``."""
    what = {"before": "is refused before fitting by", "after": "was refused by",
            "charged": "was charged to"}[outcome]
    total = "is now infinite" if outcome == "charged" else "would be infinite"
    if kind == UNVERIFIED:
        why = (
            "it draws its noise from a seeded random stream (random_state set), as does "
            "another of the ledger's charges, and one of the two was fitted in another Python "
            "session (a model saved there and loaded here): their streams' tags are keyed by "
            "different sessions' secrets and cannot be compared, and the same seed gives the "
            "same noise in any session (the same script run again). Nothing tells whether the "
            "two releases' noise is independent"
        )
    else:
        why = (
            "it draws its noise from the same random stream as another of the ledger's "
            "charges (the same integer random_state twice, or copies of one RandomState or "
            "Generator, as the clones GridSearchCV fits are; or one fitted model charged twice, "
            "when it was fitted and again with record). The two releases' noise is not "
            "independent"
        )
    return (
        f"{source} {what} {ledger_label}: {why}, so no composition bounds them (combined, they "
        f"can cancel it) and the total {total}. Give every fit fresh randomness "
        "(random_state=None) or a seed of its own."
    )


# -- process-wide state ------------------------------------------------------------------------
_REGISTRY = weakref.WeakValueDictionary()  # uid -> the ledger object of this process
_REGISTRY_LOCK = threading.RLock()  # held across a fork by _before_fork
_ACTIVE = []  # open ledger contexts, process-wide (worker threads of a search share them)
_ACTIVE_LOCK = threading.Lock()
_LOCAL = threading.local()  # per-thread suspension (fits inside a private search, dry runs)
_COUNTER = itertools.count()


def active_ledgers():
    """The ledgers whose context is open in this process, outermost first."""
    with _ACTIVE_LOCK:
        return list(dict.fromkeys(_ACTIVE))


class _suspended:
    """Within this context, fits made by the current thread charge no ledger.

    Used by :class:`skdp.model_selection.PrivateSearchCV`, which charges its whole search as one
    event, and for fits on synthetic public-shape data (which touch no private record).
    """

    def __enter__(self):
        _LOCAL.depth = getattr(_LOCAL, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _LOCAL.depth -= 1
        return False


def _is_suspended():
    return getattr(_LOCAL, "depth", 0) > 0


def ledgers_to_charge(explicit=None, carried=()):
    """The ledgers a fit made now must charge: ``explicit``, the open contexts and the
    (still alive) ledgers carried by an estimator pickled inside a context; none while
    charging is suspended in this thread. Duplicates removed, order kept."""
    if _is_suspended():
        return []
    if explicit is not None and not isinstance(explicit, PrivacyLedger):
        raise ValueError(f"ledger must be None or a PrivacyLedger; got {explicit!r}")
    out = [] if explicit is None else [explicit]
    out += active_ledgers()
    for ledger in carried:
        ledger._adopt()  # a copy inherited through fork: a replica, or an orphan that refuses
        if ledger._alive() or ledger._orphan:
            out.append(ledger)
    seen, unique = set(), []
    for ledger in out:
        if id(ledger) not in seen:
            seen.add(id(ledger))
            unique.append(ledger)
    return unique


# -- composition -------------------------------------------------------------------------------
def _group(events):
    """Equal events grouped as ``SelfComposedEvent(e, count)``: the same composition, cheaper
    to account (one RDP curve per distinct event)."""
    counts, order = {}, []
    for e in events:
        try:
            key = hash(e)
        except TypeError:  # unhashable event: its own group
            key = ("id", id(e))
        for cand in counts.get(key, ()):
            if cand[0] is e or cand[0] == e:
                cand[1] += 1
                break
        else:
            cand = [e, 1]
            counts.setdefault(key, []).append(cand)
            order.append(cand)
    return tuple(e if c == 1 else SelfComposedEvent(e, c) for e, c in order)


def _as_events(item):
    """The events charged by one item (see :func:`compose`)."""
    if isinstance(item, DPEvent):
        return [item]
    if isinstance(item, PrivacyRecord):
        return [item.event]
    if isinstance(item, LedgerEntry):
        return [item.event]
    if isinstance(item, PrivacyLedger):
        return item.events
    event = getattr(item, "dp_event_", None)
    if isinstance(event, DPEvent):
        return [event]
    if isinstance(item, (list, tuple)):
        return [e for sub in item for e in _as_events(sub)]
    raise TypeError(
        "compose takes DPEvents, PrivacyRecords, fitted skdp estimators or searches (with "
        f"dp_event_), ledgers, or lists of these; got {type(item).__name__}"
    )


def compose(items):
    """The adaptive composition of the events of ``items``, as one :class:`ComposedEvent`.

    Parameters
    ----------
    items : iterable
        DPEvents, PrivacyRecords, fitted skdp estimators (their ``dp_event_``), fitted
        :class:`~skdp.model_selection.PrivateSearchCV` objects, ledgers, or nested lists.
        For example the ``estimator`` list of ``cross_validate(..., return_estimator=True)``.

    Returns
    -------
    ComposedEvent
        Charge it with ``skdp.compute_epsilon(event, delta)``. When two items drew their noise
        from one random stream (fits of one integer ``random_state``: the estimators of
        ``cross_validate`` with a fixed seed), no composition bounds them: the event then
        includes a ``NonPrivateEvent`` (epsilon inf) and a warning says why. So it does when
        two items were both fitted with a ``random_state`` set (an estimator's, a pipeline's
        private step's, a search's) and their streams cannot be compared: one of them was
        fitted in another Python session and unpickled here (the tags of its streams are keyed
        by that session's secret), where the same seed gives the same noise. Fits with
        ``random_state=None`` draw fresh entropy and are never in doubt.

    Notes
    -----
    The items' random streams are compared by the tags each fitted object keeps
    (:mod:`skdp._streams`), a ledger's and a :class:`LedgerEntry`'s by the tags of the objects
    they charged (:attr:`LedgerEntry.object_streams`); the charges of one ledger are compared by
    its own tags too. Bare events and records carry no stream.
    """
    if isinstance(items, (PrivacyLedger, DPEvent, PrivacyRecord)) or hasattr(items, "dp_event_"):
        items = [items]  # one item given alone
    items = list(items)
    events = [e for item in items for e in _as_events(item)]
    conflict = _items_conflict(items)
    if conflict is not None:
        if conflict[2] == UNVERIFIED:
            why = (
                "compose: two of the items were fitted with a random_state set and one of them "
                "in another Python session (a model saved there and loaded here): their random "
                "streams' tags are keyed by different sessions' secrets and cannot be compared, "
                "and the same seed gives the same noise in any session (the same script run "
                "again), so nothing tells whether their noise is independent"
            )
        else:
            why = (
                "compose: two of the items drew their noise from the same random stream (the "
                "same integer random_state, or copies of one RandomState or Generator, as the "
                "estimators of cross_validate are; or one release given twice, as a model and "
                "in a ledger that charged it): their noise is not independent"
            )
        warn(
            f"{why}. No composition bounds them: the composed event is not private (epsilon "
            "inf). Fit with random_state=None, or a seed of its own for each fit.",
            UserWarning,
        )
        events.append(NonPrivateEvent())
    return ComposedEvent(_group(events))


def _items_conflict(items):
    """``(i, j, kind)`` for two of :func:`compose`'s items (flattened: a ledger's charges
    count one by one) that may share a random stream, or None (see
    :func:`first_shared_stream`)."""
    ledger_tags, tags, groups = [], [], []

    def visit(item):
        if isinstance(item, (list, tuple)):
            for sub in item:
                visit(sub)
        elif isinstance(item, PrivacyLedger):
            for e in item.entries:
                ledger_tags.append(e.streams)
                tags.append(_object_streams(e))
                groups.append(item._uid if e.streams else None)
        elif isinstance(item, LedgerEntry):
            ledger_tags.append(item.streams)
            tags.append(_object_streams(item))
            groups.append(None)  # its ledger is unknown here
        else:
            ledger_tags.append(frozenset())
            tags.append(released_streams(item))
            groups.append(None)

    visit(items)
    return _first_conflict(ledger_tags, tags, groups)


class _Memo(DPEvent):
    """An event whose RDP curve is cached per orders array (ledgers recompose the same events
    at every charge; a subsampled-Gaussian curve costs milliseconds per order)."""

    def __init__(self, event):
        self.event = event
        self._rdp = {}

    def rdp(self, orders):
        orders = np.asarray(orders, dtype=float)
        key = orders.tobytes()
        if key not in self._rdp:
            self._rdp[key] = np.asarray(self.event.rdp(orders), dtype=float)
        return self._rdp[key]

    def pure_epsilon(self):
        return self.event.pure_epsilon()

    def to_dp_accounting(self):
        return self.event.to_dp_accounting()


_epsilon_cache.answers_as_wrapped(_Memo, lambda memo: memo.event)

_MEMO = {}  # event -> _Memo (events are immutable)
_MEMO_LOCK = threading.Lock()


def _memo(event):
    try:
        with _MEMO_LOCK:
            m = _MEMO.get(event)
            if m is None:
                if len(_MEMO) > 4096:  # bound the cache
                    _MEMO.clear()
                m = _MEMO[event] = _Memo(event)
        return m
    except TypeError:  # unhashable event
        return event


def _composed_epsilon(events, delta, accountant):
    if not events:
        return 0.0
    if any(isinstance(e, NonPrivateEvent) for e in events):
        return math.inf
    grouped = _group(events)
    if accountant != "pld":
        grouped = tuple(
            SelfComposedEvent(_memo(e.event), e.count) if isinstance(e, SelfComposedEvent)
            else _memo(e) for e in grouped
        )
    event = ComposedEvent(grouped)
    if accountant == "pld":
        try:
            return compute_epsilon(event, delta, "pld")
        except NotImplementedError:
            pass  # an event with no PLD form: the RDP route is valid for all of them
        except Exception as exc:  # dp-accounting's UnsupportedEventError
            if type(exc).__name__ != "UnsupportedEventError":
                raise
    return compute_epsilon(event, delta, "rdp")


# -- prepaid fits -------------------------------------------------------------------------------
class _Reservation:
    """The planned events of fits charged in advance by :meth:`PrivacyLedger.fit_search`.

    A copy travels with every pickled copy of the ledger while the reservation is open. A fit
    whose exact event is one of the planned events takes it (it is not charged again); any
    other fit is charged as usual, and refused where the ledger cannot be charged (a remote
    copy). Each copy can take each planned event once: fits beyond the plan are never free.
    The ledger that made the plan takes them too for the fits run in its own process (a
    sequential search), as long as no copy was made: after one, a fit in this process is charged
    as usual (the copies may take the same planned events).
    """

    def __init__(self, events, label):
        self.events = list(events)
        self.label = label
        self.copied = False  # whether a copy went out (the owner then stops taking events)
        self._lock = threading.Lock()

    def copy(self):
        with self._lock:
            self.copied = True
            return _Reservation(self.events, self.label)

    def __getstate__(self):
        return {"events": self.events, "label": self.label}

    def __setstate__(self, state):
        self.__init__(state["events"], state["label"])

    def claim(self, entries):
        """Take the planned events of ``entries``: (the entries still owed, the events taken)."""
        from .model_selection._cost import same_event  # the ledger is imported first

        owed, taken = [], []
        with self._lock:
            for entry in entries:
                k = next((k for k, ev in enumerate(self.events) if same_event(ev, entry.event)),
                         None)
                if k is None:
                    owed.append(entry)
                else:
                    taken.append(self.events.pop(k))
        return owed, taken

    def release(self, events):
        with self._lock:
            self.events.extend(events)


# -- the ledger --------------------------------------------------------------------------------
#: The machine a ledger's spool lives on: a copy unpickled on another machine cannot reach it.
_HOST = socket.gethostname()


def _rebuild(uid, spool, config, base, host=None, reservation=None):
    """Unpickle a ledger: the object itself in its own process, a replica elsewhere.

    On another machine (``host``, the owner's, differs from this one's: a worker of a
    multi-host Dask cluster) the spool cannot be reached, so the copy is a *remote* replica
    that refuses to charge (a fit with it raises RuntimeError): a charge must never be lost.

    In a forked child the registry holds the copy inherited from the parent, a replica of the
    parent's spool (see :meth:`PrivacyLedger._adopt`): it is returned, so that its charges
    reach the parent and the ceiling check sees every process's charges. An orphan copy (no
    spool at the fork) is replaced by a replica of the spool pickled since.
    """
    with _REGISTRY_LOCK:
        obj = _REGISTRY.get(uid)
    if obj is not None:
        obj._adopt()
        if not obj._orphan:
            if reservation is not None and obj._pid == os.getpid() and not obj._owner:
                obj._reservation = reservation  # a replica: the fits its copy was sent for
            return obj
    obj = PrivacyLedger.__new__(PrivacyLedger)
    obj._setup(uid=uid, base=list(base), owner=False, **config)
    obj._reservation = reservation
    if host is not None and host != _HOST:
        obj._orphan = obj._remote = True  # its charges could not reach the owner: refuses
    elif spool is not None and os.path.isdir(spool):
        obj._spool = spool  # a replica writes to the owner's spool
    return obj


class PrivacyLedger:
    """Record, compose and cap the privacy spend of every fit on one data set.

    Parameters
    ----------
    epsilon : float > 0 or np.inf, default=np.inf
        The ceiling. A fit that could take the composed spend past it is refused with
        :class:`BudgetExceededError`. ``np.inf``: record only.
    delta : float in (0, 1), default=1e-5
        The delta at which the composed spend is reported and the ceiling checked.
    accountant : {"rdp", "pld"}, default="rdp"
        How the events are composed (see :func:`skdp.privacy.compute_epsilon`). With "pld",
        events that have no PLD form fall back to the RDP route.
    name : str or None, default=None
        A label for messages.

    Attributes
    ----------
    entries : list of LedgerEntry
        Every charge, in order (fits in worker processes included).
    events : list of DPEvent

    Notes
    -----
    **The ceiling check.** A fit's exact event is only known once its optimizer has calibrated
    its noise, inside the fit. Before the kernel runs, the ledger therefore checks the worst
    case: the fit is calibrated so that it spends at most its target ``(eps_t, delta_t)``
    (calibration is conservative), so by basic composition the total after it is at most
    ``spent(delta - delta_t) + eps_t`` at ``delta``; the fit is refused when that passes the
    ceiling. This needs ``delta_t < delta`` (set the estimators' ``delta`` below the ledger's);
    otherwise only an already exhausted ledger refuses before the kernel. After the kernel, the
    exact event is composed with the others and, if the accountant puts the total over the
    ceiling (possible when the pre-check could not run), the fit raises and its model is
    discarded. Both checks depend on public quantities only (events are functions of n, the
    dimensions, the bounds and the hyper-parameters), so refusing releases nothing about the
    data. The exact check and the recording are atomic (one lock across threads and processes).

    **What counts as a fit.** Every call of ``fit`` of a skdp estimator that sees the ledger,
    including the folds of a cross-validation and the final refit of a search (all of them read
    the same data set, so their events compose), and one entry per
    :class:`~skdp.model_selection.PrivateSearchCV` (its whole search is one event). Composing
    the folds' events is valid for folds chosen independently of the data
    (``KFold(shuffle=True)``); an integer ``cv`` stratifies a classifier's folds by label,
    which moves other records between folds when one record changes: the ledger cannot see
    the splitter and would understate such a search.

    **Identity.** ``copy.copy``, ``copy.deepcopy`` and ``clone`` return this object; pickling
    within the process returns it too. See the module docstring for worker processes.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import DPLogisticRegression, PrivacyLedger
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> with PrivacyLedger(epsilon=3.0, delta=1e-5) as ledger:
    ...     for seed in range(2):
    ...         _ = DPLogisticRegression(epsilon=1.0, delta=1e-6, random_state=seed).fit(X, y)
    >>> len(ledger), bool(ledger.spent() <= 2.0)
    (2, True)
    """

    def __init__(self, epsilon=np.inf, delta=1e-5, accountant="rdp", name=None):
        if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not epsilon > 0:
            raise ValueError(f"epsilon (the ceiling) must be a real > 0 or np.inf; got {epsilon!r}")
        if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
            raise ValueError(f"delta must be a real in (0, 1); got {delta!r}")
        if accountant not in ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {ACCOUNTANTS}; got {accountant!r}")
        self._setup(
            uid=uuid.uuid4().hex, base=[], owner=True, epsilon=float(epsilon),
            delta=float(delta), accountant=accountant, name=name,
        )

    def _setup(self, uid, base, owner, epsilon, delta, accountant, name, stream_key=None):
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.name = name
        self._uid = uid
        self._base = base  # entries recorded before a spool existed (or in a detached copy)
        self._spool = None
        self._seen = {}  # spool file name -> entry
        self._owner = owner
        self._lock = threading.RLock()
        self._file_depth = 0
        self._cache = {}  # (n_entries, delta) -> epsilon
        self._pid = os.getpid()  # the process this object belongs to (see _adopt)
        self._finalizer = None  # removes the spool of an owner
        self._orphan = False  # inherited through fork with no spool: cannot reach its owner
        self._remote = False  # unpickled on another machine than its owner's (also an orphan)
        self._reservation = None  # prepaid fits (see fit_search)
        # the key of the entries' stream tags: secret, shared with the copies sent to workers
        self._stream_key = os.urandom(32) if stream_key is None else stream_key
        with _REGISTRY_LOCK:
            _REGISTRY[uid] = self

    # -- identity under copy / clone / pickle ---------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        spool = self._ensure_spool()
        config = dict(epsilon=self.epsilon, delta=self.delta, accountant=self.accountant,
                      name=self.name, stream_key=self._stream_key)
        reservation = None if self._reservation is None else self._reservation.copy()
        return (_rebuild, (self._uid, spool, config, tuple(self._base), _HOST, reservation))

    def _ensure_spool(self):
        self._adopt()
        with self._lock:
            if self._spool is None:
                if self._orphan:
                    raise RuntimeError(self._orphan_message())
                self._spool = tempfile.mkdtemp(prefix="skdp-ledger-")
                self._owner = True
                self._finalizer = weakref.finalize(self, shutil.rmtree, self._spool, True)
            return self._spool

    # -- forked processes -----------------------------------------------------------------------
    def _adopt(self):
        """Make a copy inherited through ``fork`` a replica of its parent's ledger.

        A no-op in the process that made (or unpickled) this object. In a forked child: new
        locks (a parent thread may have held them at the fork), the parent's spool is no longer
        ours to remove, and every charge goes to that spool. A copy with no spool (its parent
        could not create one before the fork, or the fork ran no hook) is made an orphan that
        refuses to charge: its charges could not reach the parent.
        """
        pid = os.getpid()
        if self._pid == pid:
            return
        self._lock = threading.RLock()
        self._file_depth = 0
        if self._finalizer is not None:
            self._finalizer.detach()  # only in this process: the parent keeps its own
            self._finalizer = None
        self._owner = False
        self._pid = pid
        self._orphan = self._spool is None

    def _orphan_message(self):
        if self._remote:
            return (
                f"{self._label()} was sent to another machine (host {socket.gethostname()!r}, "
                "a worker of a multi-host cluster) than the one holding its spool, so charges "
                "made here cannot reach it; nothing is charged and the fit is refused. On a "
                "cluster, run the search with ledger.fit_search(search, X, y) (its fold fits "
                "are charged on the client before they run; a fit outside that plan is "
                "refused here), or search with skdp.model_selection.PrivateSearchCV (charged "
                "once, on the client, before any run) on Dask inputs, or run the search on one "
                "machine "
                "(a LocalCluster), or fit without a ledger and charge the fitted estimators' "
                "dp_event_ with PrivacyLedger.record"
            )
        return (
            f"{self._label()} was inherited by a forked process (pid {os.getpid()}) before it "
            "had a spool directory, so charges made here cannot reach the parent's ledger; "
            "nothing is charged and the fit is refused. Use a spawn-based pool (joblib's "
            "default loky backend) or make sure the temporary directory is writable."
        )

    def _alive(self):
        """False for a replica whose owner has gone (its spool was removed)."""
        return self._owner or (self._spool is not None and os.path.isdir(self._spool))

    # -- the context manager --------------------------------------------------------------------
    def __enter__(self):
        with _ACTIVE_LOCK:
            _ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        with _ACTIVE_LOCK:
            for k in range(len(_ACTIVE) - 1, -1, -1):
                if _ACTIVE[k] is self:
                    del _ACTIVE[k]
                    break
        return False

    # -- storage --------------------------------------------------------------------------------
    class _Locked:
        def __init__(self, ledger):
            self.ledger = ledger
            self.fd = None

        def __enter__(self):
            led = self.ledger
            led._lock.acquire()
            led._file_depth += 1
            if led._file_depth == 1 and led._spool is not None and fcntl is not None:
                try:
                    self.fd = os.open(os.path.join(led._spool, "lock"), os.O_RDWR | os.O_CREAT)
                    fcntl.flock(self.fd, fcntl.LOCK_EX)
                except OSError:  # the spool went away: a detached copy from now on
                    self.fd = None
            return self

        def __exit__(self, *exc):
            led = self.ledger
            if self.fd is not None:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
                os.close(self.fd)
            led._file_depth -= 1
            led._lock.release()
            return False

    def _locked(self):
        self._adopt()
        if self._orphan:
            raise RuntimeError(self._orphan_message())
        return PrivacyLedger._Locked(self)

    def _read_spool(self):
        if self._spool is None:
            return []
        try:
            names = sorted(n for n in os.listdir(self._spool) if n.endswith(".entry"))
        except OSError:
            names = []
        for n in names:
            if n not in self._seen:
                try:
                    with open(os.path.join(self._spool, n), "rb") as fh:
                        self._seen[n] = pickle.load(fh)
                except (OSError, EOFError, pickle.UnpicklingError):  # pragma: no cover
                    continue  # not yet complete; files are renamed into place, so rare
        return [self._seen[n] for n in sorted(self._seen)]

    def _write(self, entry):
        spool = self._spool
        if spool is not None and os.path.isdir(spool):
            name = f"{time.time_ns():020d}-{os.getpid():08d}-{next(_COUNTER):08d}"
            tmp = os.path.join(spool, name + ".tmp")
            with open(tmp, "wb") as fh:
                pickle.dump(entry, fh)
            os.replace(tmp, os.path.join(spool, name + ".entry"))
            return
        if spool is not None:  # the owner has gone: keep recording locally
            self._base = self._base + [e for e in self._read_spool()]
            self._spool, self._seen, self._owner = None, {}, True
        self._base.append(entry)

    @property
    def entries(self):
        """Every charge so far, fits in worker processes included (list of LedgerEntry)."""
        self._adopt()
        with self._lock:
            return list(self._base) + self._read_spool()

    @property
    def events(self):
        """The events of :attr:`entries` (list of DPEvent)."""
        return [e.event for e in self.entries]

    def __len__(self):
        return len(self.entries)

    # -- reporting ------------------------------------------------------------------------------
    def _epsilon_of(self, entries, delta, extra=None):
        if shares_a_stream(entries):
            return math.inf  # two releases of one noise: no composition bounds them
        events = [e.event for e in entries] + ([] if extra is None else [extra])
        key = None
        if extra is None:
            key = (len(entries), float(delta))
            if key in self._cache:
                return self._cache[key]
        eps = _composed_epsilon(events, delta, self.accountant)
        if key is not None:
            self._cache[key] = eps
        return eps

    def spent(self, delta=None):
        """Epsilon spent so far by the composition of every recorded event.

        Parameters
        ----------
        delta : float or None
            None: the ledger's ``delta``.

        Returns
        -------
        float
        """
        delta = self.delta if delta is None else delta
        return self._epsilon_of(self.entries, delta)

    def remaining(self):
        """``epsilon - spent()``: the epsilon left under the ceiling at the ledger's delta.

        A new fit of target ``(eps_t, delta_t)`` is accepted before its kernel runs when
        :meth:`can_afford` says so, which also accounts for the split of delta.

        Raises
        ------
        ValueError
            When the ledger has no ceiling (``epsilon=np.inf``): it has no budget to hand out,
            and an infinite "remaining" epsilon passed on to an estimator
            (``epsilon=ledger.remaining()``) would silently fit a non-private model. Use
            :meth:`spent` to read the total of a ledger without a ceiling.
        """
        if math.isinf(self.epsilon):
            raise ValueError(
                f"{self._label()} has no ceiling (epsilon=inf), so no remaining budget: passing "
                "an infinite epsilon on would fit a model without privacy. Give the ledger a "
                "ceiling (PrivacyLedger(epsilon=...)), or read its total with spent()"
            )
        return self.epsilon - self.spent()

    @property
    def event(self):
        """The composed event of every recorded fit (a ComposedEvent); with a
        ``NonPrivateEvent`` when two charges may share a random stream (:meth:`spent` is then
        infinite too)."""
        entries = self.entries
        extra = [NonPrivateEvent()] if shares_a_stream(entries) else []
        return ComposedEvent(_group([e.event for e in entries] + extra))

    def to_dp_accounting(self):
        """The composed event as a dp-accounting ``DpEvent``."""
        return self.event.to_dp_accounting()

    def _worst_case(self, entries, target_epsilon, target_delta):
        """Upper bound on the spend at ``self.delta`` after a fit of target (eps_t, delta_t), or
        None when it cannot be bounded before the fit (delta_t >= the ledger's delta)."""
        if not math.isfinite(target_epsilon):
            return math.inf
        if not target_delta < self.delta:
            return None
        return self._epsilon_of(entries, self.delta - target_delta) + target_epsilon

    def can_afford(self, epsilon, delta, event=None):
        """Whether a fit of target ``(epsilon, delta)`` (or with the known ``event``) passes the
        pre-fit check of the ceiling. See the Notes of the class."""
        entries = self.entries
        if event is not None:
            return self._epsilon_of(entries, self.delta, extra=event) <= self.epsilon
        bound = self._worst_case(entries, epsilon, delta)
        if bound is None:
            return self._epsilon_of(entries, self.delta) < self.epsilon
        return bound <= self.epsilon

    def _label(self):
        return f"PrivacyLedger {self.name!r}" if self.name else "the PrivacyLedger"

    def _takes_prepaid(self):
        """Whether a fit charged here takes a planned event of an open :meth:`fit_search`: in a
        copy sent to a worker, and in the ledger that planned it while no copy was made."""
        reservation = self._reservation
        return reservation is not None and (not self._owner or not reservation.copied)

    def _precheck(self, target_epsilon, target_delta, source, event=None, stream=None):
        self._adopt()
        tags = stream_tags(stream, self._stream_key)
        if tags and not math.isinf(self.epsilon):
            entries = self.entries
            probe = LedgerEntry(None, 0.0, 0.0, source, 0.0, 0.0, streams=tags,
                                object_streams=object_tags(stream))
            conflict = first_shared_stream(entries + [probe])
            if conflict is not None and conflict[1] == len(entries):
                raise BudgetExceededError(_shared_stream_message(
                    source, self._label(), "before", conflict[2]))
        if self._takes_prepaid() and self._reservation.events:
            # a prepaid fit would fail the worst-case check (its charge is already in the
            # ledger): the exact check at the charge takes the prepaid event or refuses
            return
        if self._orphan:
            raise RuntimeError(self._orphan_message())
        if math.isinf(self.epsilon):
            return
        if self.can_afford(target_epsilon, target_delta, event):
            return
        spent, n = self.spent(), len(self)
        if event is not None:
            after = self._epsilon_of(self.entries, self.delta, extra=event)
            what = f"its exact event brings the total to epsilon={after:.4g}"
        elif not math.isfinite(target_epsilon):
            what = "it is not private (epsilon=inf)"
        else:
            bound = self._worst_case(self.entries, target_epsilon, target_delta)
            what = (
                f"at its target (epsilon={target_epsilon:.4g}, delta={target_delta:.3g}) it can "
                + (f"bring the total to epsilon={bound:.4g}" if bound is not None
                   else "only add to a ledger that is already at its ceiling")
            )
        raise BudgetExceededError(
            f"{source} refused before fitting by {self._label()}: {what} at delta="
            f"{self.delta:.3g}, over the ceiling epsilon={self.epsilon:.4g} (spent so far "
            f"{spent:.4g} over {n} charges)."
        )

    def record(self, *items, label=None):
        """Charge events made elsewhere (for example by fits in another process or cluster).

        Parameters
        ----------
        *items
            DPEvents, PrivacyRecords, fitted estimators or searches (``dp_event_``), or lists.
        label : str or None

        Raises
        ------
        BudgetExceededError
            When the total would pass the ceiling (nothing is recorded then).

        Notes
        -----
        Fitted objects are compared by their random streams, as :func:`compose` compares them,
        with each other and with the ledger's earlier charges (their
        :attr:`LedgerEntry.object_streams`: the tags the fitted objects keep, fits charged in
        worker processes included); each recorded entry keeps its object's tags, so later
        charges are compared with it too. Two that drew from one stream (the same integer
        ``random_state``; or one model charged when it was fitted and recorded again) have no
        composition, and neither have two fitted with a ``random_state`` set whose streams
        cannot be compared (one fitted in another Python session and unpickled, where the
        same seed gives the same noise): the total becomes infinite (refused by a ledger with a
        ceiling, nothing recorded; a warning otherwise). Fits with ``random_state=None`` draw
        fresh entropy and are never in doubt. Bare events and records carry no stream.
        """
        entries = []

        def add(event, epsilon, delta, source, streams):
            entries.append(LedgerEntry(event, epsilon, delta, source, epsilon, delta, None,
                                       os.getpid(), time.time(), label,
                                       object_streams=frozenset(streams)))

        def visit(sub):
            if isinstance(sub, (list, tuple)):
                for part in sub:
                    visit(part)
                return
            if isinstance(sub, PrivacyLedger):
                for entry in sub.entries:
                    visit(entry)
                return
            record = sub if isinstance(sub, PrivacyRecord) else getattr(
                sub, "privacy_record_", None)
            streams = (_object_streams(sub) if isinstance(sub, LedgerEntry)
                       else released_streams(sub))
            if record is not None:
                add(record.event, record.epsilon, record.delta, type(sub).__name__, streams)
            else:
                for ev in _as_events(sub):
                    add(ev, compute_epsilon(ev, self.delta), self.delta, type(ev).__name__,
                        streams)

        visit(list(items))
        _charge([self], entries)

    def fit_search(self, search, X, y=None, groups=None, label=None, **fit_params):
        """Fit a search whose fits run on other machines, its folds charged here beforehand.

        For ``GridSearchCV`` / ``RandomizedSearchCV`` under ``joblib.parallel_backend("dask")``
        on a multi-host cluster, where a copy of the ledger sent to a worker cannot reach this
        one to charge it. First the event of every fit the search will make (each candidate on
        each fold, planned from public quantities with
        :func:`skdp.model_selection.plan_search_fits`) is charged here at once, against the
        ceiling: if they do not fit under it, nothing is charged and nothing runs. Then
        ``search.fit(X, y, groups=groups, **fit_params)`` runs once. Each copy of the ledger
        pickled during that call (one per task sent to a worker) carries the plan: a fit in a
        worker whose exact event is a planned one takes it instead of being charged again, and
        any other fit in a worker is charged as usual, or refused where the ledger cannot be
        charged (another machine). The plan ends with the call, so copies made later carry
        nothing. The ledger is open as a context during the call (as in ``with ledger:``), so
        fits in this process, the refit included, are charged to it even when the search's
        estimator does not carry it; while no copy has gone out (a search run in this process),
        each of them takes a planned event of its exact kind if one is left, once.

        Parameters
        ----------
        search : GridSearchCV or RandomizedSearchCV (integer ``random_state``), unfitted
            Its splitter must choose folds independently of the data (for example
            ``KFold(n_splits, shuffle=True)``), as composing the folds' events requires.
        X, y, groups : array-like
            The data of the search.
        label : str or None
        **fit_params
            Passed to ``search.fit``.

        Returns
        -------
        search
            Fitted.

        Raises
        ------
        BudgetExceededError
            When the planned fits would pass the ceiling (nothing is charged, nothing runs).

        Notes
        -----
        Events are functions of public quantities, so the plan is exact: the fold fits record
        the planned events, one fit per planned event (a search makes each fold fit once). The
        plan is tied to this one call because copies cannot count what other copies took: a
        plan left open across two searches would let the second one's folds go uncharged. For
        the same reason a fit in this process takes a planned event only while no copy has gone
        out (the copies' takings cannot be seen here): each planned event is then taken once,
        by one fit of its exact event, and every fit beyond them is charged; after a copy went
        out, fits here are charged as usual (the ledger over-states, never under-states). After
        the call, a search whose number of fits differs from the plan gets a warning.
        """
        # open as a context for the call: the fits made here (the refit, the model the search
        # releases) are charged to it even when the search's estimator does not carry it
        with _ReservedSearch(self, search, X, y, groups, label), self:
            search.fit(X, y, groups=groups, **fit_params)
        return search

    def summary(self):
        """A short text table: one line per charge and the composed total."""
        entries = self.entries
        # the source column as wide as its longest entry ("DPLogisticRegression (failed fit)"),
        # so that the epsilon and delta columns line up
        width = max([22] + [len(e.source) for e in entries])
        lines = [
            f"{self._label()}: ceiling epsilon={self.epsilon:.4g} at delta={self.delta:.3g} "
            f"({self.accountant})",
            f"{'#':>4}  {'source':<{width}} {'epsilon':>9} {'delta':>9}  label",
        ]
        for k, e in enumerate(entries):
            lines.append(f"{k:>4}  {e.source:<{width}} {e.epsilon:>9.4g} {e.delta:>9.3g}  "
                         f"{'' if e.label is None else e.label}")
        total = self._epsilon_of(entries, self.delta)
        naive = sum(e.epsilon for e in entries)
        lines.append(f"composed: epsilon={total:.4g} at delta={self.delta:.3g} over {len(entries)} "
                     f"charges (sum of the per-fit epsilons: {naive:.4g})")
        shared = first_shared_stream(entries)
        if shared is not None and shared[2] == UNVERIFIED:
            lines.append(f"infinite: charges #{shared[0]} and #{shared[1]} were fitted with a "
                         "random_state set, one of them in another Python session: nothing "
                         "tells whether they drew their noise from one random stream; give "
                         "every fit fresh randomness")
        elif shared is not None:
            lines.append(f"infinite: charges #{shared[0]} and #{shared[1]} drew their noise from "
                         "one random stream (the same integer random_state, or copies of one "
                         "generator); give every fit fresh randomness")
        return "\n".join(lines)

    def __repr__(self):
        name = "" if self.name is None else f"name={self.name!r}, "
        return (f"PrivacyLedger({name}epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"accountant={self.accountant!r})")


class _ReservedSearch:
    """The plan of :meth:`PrivacyLedger.fit_search`, open for one ``search.fit`` call."""

    def __init__(self, ledger, search, X, y, groups, label):
        self.ledger, self.search, self.label = ledger, search, label
        self.X, self.y, self.groups = X, y, groups
        self.entries = []

    def __enter__(self):
        from .model_selection._cost import plan_search_fits  # the ledger is imported first

        led = self.ledger
        if led._reservation is not None:
            raise RuntimeError(f"{led._label()} already has an open reservation")
        records = plan_search_fits(self.search, self.X, self.y, self.groups)
        source = type(self.search).__name__
        label = self.label if self.label is not None else f"reserved by {source}"
        self.entries = [
            LedgerEntry(event=r.event, epsilon=float(r.epsilon), delta=float(r.delta),
                        source=source, target_epsilon=float(r.epsilon),
                        target_delta=float(r.delta), n_samples=None, pid=os.getpid(),
                        time=time.time(), label=label)
            for r in records
        ]
        _charge([led], self.entries, before_fit=True)
        led._reservation = _Reservation([e.event for e in self.entries], label)
        return list(self.entries)

    def __exit__(self, *exc):
        led = self.ledger
        led._reservation = None
        results = getattr(self.search, "cv_results_", None)
        if exc[0] is None and results is not None:
            made = len(results["params"]) * int(self.search.n_splits_)
            if made != len(self.entries):
                warn(
                    f"{led._label()}: fit_search planned {len(self.entries)} fits but the "
                    f"search made {made}; fits outside the plan were charged as usual (or "
                    "refused where the ledger could not be reached), and planned fits that did "
                    "not run stay charged",
                    RuntimeWarning,
                )
        return False


def precheck(ledgers, target_epsilon, target_delta, source, event=None, stream=None):
    """Refuse (BudgetExceededError) before a fit that could pass any ledger's ceiling, or that
    draws from a random stream (``stream``, :func:`~skdp._streams.stream_state`) a ledger with a
    ceiling was already charged with."""
    for ledger in ledgers:
        ledger._precheck(target_epsilon, target_delta, source, event, stream)


def _charge(ledgers, entries, before_fit=False, streams=None, made=False):
    """Atomically check every ledger's ceiling with ``entries`` added, then record them all.

    Locks are taken in a fixed order (by id) so that concurrent charges cannot deadlock.
    ``before_fit``: the charge is made before anything ran (the refusal message says so).
    ``made``: the releases were already made and cannot be withheld (those of a fit that
    failed): they are recorded even past a ceiling, so the ledger then refuses every later fit,
    and the refusal is raised after the recording. Refusing to record them would let repeated
    failed fits release without limit under a ledger that never moves.
    ``streams``: the random streams each entry drew from (raw states, aligned with ``entries``),
    tagged with each ledger's own key (and with the process's, as the fitted object keeps
    them: :attr:`LedgerEntry.object_streams`). A charge that may share a stream with another
    (:func:`first_shared_stream`) makes the total infinite: refused by a ledger with a ceiling,
    recorded with a warning otherwise.
    """
    if not ledgers or not entries:
        return
    ordered = sorted(ledgers, key=lambda led: led._uid)
    owed, claimed = {}, {}  # per ledger: the entries to record, the prepaid events they use
    for led in ordered:
        led._adopt()
        mine = entries if streams is None else [
            replace(e, streams=stream_tags(s, led._stream_key), object_streams=object_tags(s))
            for e, s in zip(entries, streams)
        ]
        owed[led._uid], claimed[led._uid] = mine, []
        if led._takes_prepaid():
            owed[led._uid], claimed[led._uid] = led._reservation.claim(mine)
    shared = []  # (ledger, kind): those without a ceiling whose total the charge makes infinite
    refusals = []  # with ``made``: what a ceiling would have refused, raised once recorded
    locks = []
    try:
        for led in ordered:
            if owed[led._uid]:
                locks.append(led._locked())  # an orphan refuses here: RuntimeError
                locks[-1].__enter__()
        for led in ordered:
            if not owed[led._uid]:
                continue
            current = led.entries
            conflict = (first_shared_stream(current + owed[led._uid])
                        if not shares_a_stream(current) else None)
            if conflict is not None and math.isinf(led.epsilon):
                shared.append((led, conflict[2]))
            elif conflict is not None:
                message = _shared_stream_message(
                    entries[0].source, led._label(), "before" if before_fit else "after",
                    conflict[2])
                if not made:
                    raise BudgetExceededError(message)
                refusals.append(message)
            if math.isinf(led.epsilon):
                continue
            events = [e.event for e in current] + [e.event for e in owed[led._uid]]
            total = _composed_epsilon(events, led.delta, led.accountant)
            if total > led.epsilon:
                what = (f"its privacy event brings the total to epsilon={total:.4g} at delta="
                        f"{led.delta:.3g}, over the ceiling epsilon={led.epsilon:.4g}.")
                if not made:
                    raise BudgetExceededError(
                        f"{entries[0].source} refused {'before fitting ' if before_fit else ''}"
                        f"by {led._label()}: {what} "
                        + ("Nothing was run." if before_fit else "The fitted model was discarded.")
                    )
                refusals.append(
                    f"{entries[0].source} is over the ceiling of {led._label()}: {what} Its "
                    "releases were made before the fit failed and cannot be withheld, so they "
                    "are recorded: the ledger is past its ceiling and refuses every later fit."
                )
        for led in ordered:
            for e in owed[led._uid]:
                led._write(e)
    except BaseException:
        for led in ordered:  # a refused fit leaves its prepaid events for another
            if claimed[led._uid]:
                led._reservation.release(claimed[led._uid])
        raise
    finally:
        for lk in reversed(locks):
            lk.__exit__(None, None, None)
    for led, kind in shared:
        warn(_shared_stream_message(entries[0].source, led._label(), "charged", kind),
             UserWarning)
    if refusals:
        raise BudgetExceededError(" ".join(dict.fromkeys(refusals)))


def charge(ledgers, record, source, target_epsilon, target_delta, n_samples=None, label=None,
           before_fit=False, stream=None, made=False):
    """Charge one fit's :class:`PrivacyRecord` to ``ledgers`` (check, then record).

    ``before_fit=True`` when the record is known exactly before anything runs (a private
    search): charging first means a refusal leaves nothing behind. ``stream``: the random
    stream(s) the release drew from (:func:`~skdp._streams.stream_state`; a tuple for a
    pipeline's steps), None when unknown. ``made=True``: the releases were made already (a
    failed fit's) and are recorded even past a ceiling (see :func:`_charge`).
    """
    if not ledgers:
        return
    entry = LedgerEntry(
        event=record.event, epsilon=float(record.epsilon), delta=float(record.delta),
        source=source, target_epsilon=float(target_epsilon), target_delta=float(target_delta),
        n_samples=n_samples, pid=os.getpid(), time=time.time(), label=label,
    )
    _charge(ledgers, [entry], before_fit=before_fit, streams=[stream], made=made)


# -- the carrier of open contexts --------------------------------------------------------------
_CARRIED = "_skdp_context_ledgers"


class LedgerCarrierMixin:
    """Base of every object that spends budget: it carries the open ledger contexts with it.

    An object pickled while a ledger context is open (for example sent to a worker process by
    ``GridSearchCV(n_jobs=2)`` or ``cross_val_score(n_jobs=2)``) carries the open ledgers in a
    private attribute, so that what it spends in the worker is charged to them too; ``clone``
    keeps the attribute. The next pickling replaces it with the ledgers open then. A subclass
    charges :meth:`_fit_ledgers`.
    """

    def __getstate__(self):
        state = dict(super().__getstate__())  # object.__getstate__ returns __dict__ itself
        state.pop(_CARRIED, None)
        state.pop("_skdp_stream_state", None)  # a fit's raw stream (skdp._streams): never pickled
        active = active_ledgers()
        if active:
            state[_CARRIED] = tuple(active)
        return state

    def __sklearn_clone__(self):
        new = super().__sklearn_clone__()
        carried = getattr(self, _CARRIED, None)
        if carried:
            setattr(new, _CARRIED, carried)
        return new

    def _carried_ledgers(self):
        """The ledgers this object carries from where it was pickled (a tuple)."""
        return getattr(self, _CARRIED, ())

    def _fit_ledgers(self):
        """The ledgers a fit of this object charges, as the fit finds them: its ``ledger``, the
        open contexts and the carried ledgers (a pipeline adds its steps' own)."""
        return ledgers_to_charge(getattr(self, "ledger", None), self._carried_ledgers())

    def _failed_fit_ledgers(self):
        """The ledgers charged with the releases of a fit that raised after making them
        (:class:`skdp._fit_state.charged_if_failed`): those a successful fit would charge."""
        return self._fit_ledgers()


# -- fork hooks --------------------------------------------------------------------------------
_FORK = threading.local()  # whether this thread's _before_fork holds _REGISTRY_LOCK


def _before_fork():
    """In the parent, just before ``fork``: give every ledger of this process its spool.

    A child can only reach a ledger through its spool, and a spool made after the fork (the
    parent pickling the ledger to send it a task, say) is unknown to the copy the child
    inherited. The registry lock is held across the fork so that no ledger appears in between.
    """
    _REGISTRY_LOCK.acquire()
    _FORK.held = True
    try:
        ledgers = list(_REGISTRY.values())
        for led in ledgers:
            if led._pid == os.getpid() and led._spool is None and not led._orphan:
                try:
                    led._ensure_spool()
                except OSError:  # the child's copy becomes an orphan that refuses to charge
                    pass
    except Exception:  # pragma: no cover - a fork hook must not raise
        pass


def _after_fork_in_parent():
    if getattr(_FORK, "held", False):
        _FORK.held = False
        _REGISTRY_LOCK.release()


def _after_fork_in_child():
    """In the child: fresh module locks (another parent thread may have held one at the fork)
    and every inherited ledger a replica of its parent's spool."""
    global _REGISTRY_LOCK, _ACTIVE_LOCK, _MEMO_LOCK
    _FORK.held = False
    _REGISTRY_LOCK, _ACTIVE_LOCK, _MEMO_LOCK = threading.RLock(), threading.Lock(), threading.Lock()
    for led in list(_REGISTRY.values()):
        led._adopt()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(
        before=_before_fork, after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )
