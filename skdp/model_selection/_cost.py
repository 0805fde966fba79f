"""What a fit will spend, from public quantities only, and what an ordinary search has spent."""

import copy
from dataclasses import dataclass, field
import math
import numbers
import warnings

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import (
    KFold,
    LeaveOneOut,
    LeavePOut,
    RepeatedKFold,
    ShuffleSplit,
    TimeSeriesSplit,
    check_cv,
)

from ..ledger import LedgerCarrierMixin, _suspended, compose
from ..linear_model._base import DPLinearModel
from ..privacy import DEFAULT_ORDERS, compute_epsilon
from .._warnings import warn

__all__ = ["plan_event", "plan_search_fits", "tuning_cost", "TuningCost", "final_estimator",
           "same_event"]

#: The splitters whose splits are a function of the number of records (and their own seed)
#: only: a record changes its own row of the training parts, never which part another record
#: is in. Exact classes: a subclass may look at the data.
DATA_INDEPENDENT_SPLITTERS = (KFold, RepeatedKFold, ShuffleSplit, LeaveOneOut, LeavePOut,
                              TimeSeriesSplit)


def final_estimator(estimator):
    """The skdp estimator at the end of ``estimator`` (itself, or the last step of a Pipeline),
    and the prefix of its parameter names (``""`` or ``"step__"``)."""
    prefix = ""
    est = estimator
    while hasattr(est, "steps"):
        name, est = est.steps[-1]
        prefix += name + "__"
    if not isinstance(est, DPLinearModel):
        raise TypeError(
            "expected a skdp estimator or a Pipeline ending in one; got "
            f"{type(estimator).__name__} ending in {type(est).__name__}"
        )
    return est, prefix


def _synthetic(n_samples, n_features, classes, classifier, schema=None, n_targets=None):
    """Public synthetic data of the given shape (no private record is involved): ``n_targets``
    columns of y for a regressor fitted on a 2-D y (None: a 1-D y).

    With a ``schema`` (the column names and dtypes of a DataFrame, ``X.dtypes``), a DataFrame
    with those columns: numeric columns hold Gaussian values, boolean ones alternate, and every
    other column holds one placeholder string, which encoders with public categories and no
    failure on unknown ones (all a private pipeline allows) map to a row of their public width.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_samples, n_features))
    if schema is not None:
        import pandas as pd

        if len(schema) != n_features:
            raise ValueError(f"the schema has {len(schema)} columns, not n_features={n_features}")
        columns = {}
        for j, (name, dtype) in enumerate(schema.items()):
            if pd.api.types.is_bool_dtype(dtype):
                columns[name] = np.arange(n_samples) % 2 == 0
            elif pd.api.types.is_numeric_dtype(dtype):
                columns[name] = np.round(X[:, j]) if pd.api.types.is_integer_dtype(dtype) \
                    else X[:, j]
            else:
                columns[name] = np.full(n_samples, "skdp-synthetic", dtype=object)
        X = pd.DataFrame(columns, columns=list(schema.index))
    if classifier:
        y = np.asarray(classes)[np.arange(n_samples) % len(classes)]
    else:
        y = np.zeros(n_samples if n_targets is None else (n_samples, int(n_targets)))
    return X, y


def target_columns(y):
    """The number of columns of a 2-D y (a regressor's several targets), or None for a 1-D y
    (public: the data's shape)."""
    shape = np.shape(y)
    return int(shape[1]) if len(shape) == 2 else None


def _schema(X):
    """The column names and dtypes of a DataFrame (public: what the data looks like, no record
    value), or None for an array."""
    return X.dtypes if hasattr(X, "columns") and hasattr(X, "dtypes") else None


def _plan_fit(estimator, n_samples, n_features, classes=None, schema=None, n_targets=None):
    """A clone of ``estimator`` fitted on public synthetic data of the given shape (and schema),
    with ledger charging suspended; the synthetic fit's warnings are not the user's."""
    est = clone(estimator)
    final, prefix = final_estimator(est)
    classifier = is_classifier(final)
    if classifier:
        if classes is None:
            classes = final.classes if final.classes is not None else [0, 1]
        est.set_params(**{prefix + "classes": np.asarray(classes)})
    X, y = _synthetic(int(n_samples), int(n_features), classes, classifier, schema, n_targets)
    with _suspended(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est


def plan_event(estimator, n_samples, n_features, classes=None, schema=None, n_targets=None):
    """The privacy record a fit of ``estimator`` on ``n_samples`` x ``n_features`` data will have.

    skdp calibrates noise from public quantities only (n, d, the bounds, the budget, the
    hyper-parameters), never from the data values, so the event of a fit does not depend on the
    data. It is computed here by fitting a clone on synthetic data of the same shape (with the
    public label set ``classes`` for classifiers), with ledger charging suspended: this costs
    one fit of compute and no privacy. :class:`PrivateSearchCV` checks that every real fit
    records exactly the planned event, which would reveal an event that depends on the data.

    Parameters
    ----------
    estimator : skdp estimator or Pipeline ending in one
        A pipeline is fitted whole on the synthetic data, so its steps may change the width
        (a ``ColumnTransformer`` with a ``OneHotEncoder`` of public categories).
    n_samples, n_features : int
    classes : array-like or None
        The label set, for classifiers (default: the estimator's ``classes`` or [0, 1]).
    schema : pandas.Series or None
        For a pipeline fitted on a DataFrame (columns selected by name): the DataFrame's
        ``dtypes``, its column names and dtypes (no record value). The synthetic data is then a
        DataFrame with those columns (see :func:`_synthetic`).
    n_targets : int or None
        The columns of a regressor's 2-D y (None: a 1-D y).

    Returns
    -------
    PrivacyRecord
        The record of the final estimator, which for a
        :class:`~skdp.pipeline.PrivatePipeline` covers the whole pipeline.
    """
    est = _plan_fit(estimator, n_samples, n_features, classes, schema, n_targets)
    return final_estimator(est)[0].privacy_record_


def _charging_parts(estimator, fitted=False):
    """The objects one fit of ``estimator`` charges, in order.

    A :class:`~skdp.pipeline.PrivatePipeline` charges once for all its steps. In a plain
    ``Pipeline`` (or ``ColumnTransformer``, ``FeatureUnion``) every private step charges its own
    budget, and so does the final skdp estimator.
    """
    from ..pipeline import PrivatePipeline, _children
    from ..preprocessing._step import PrivateStepMixin

    if isinstance(estimator, (PrivatePipeline, DPLinearModel, PrivateStepMixin)):
        return [estimator]
    children = _children(estimator, fitted)
    if children is None:
        return []
    return [part for _, child in children if not isinstance(child, str)
            for part in _charging_parts(child, fitted)]


def _check_pipeline_steps(estimator):
    """Refuse a plain Pipeline whose non-final steps learn non-private state from the data.

    Such a step (a ``StandardScaler``, an encoder with ``categories="auto"``) makes every row
    the final estimator sees a function of all the records, so one record changes all of them:
    no composition of the private steps' events bounds the fit. A
    :class:`~skdp.pipeline.PrivatePipeline` refuses them itself when it is fitted.
    """
    from ..pipeline import NonPrivateStepError, PrivatePipeline, check_private_steps

    if not hasattr(estimator, "steps") or isinstance(estimator, PrivatePipeline):
        return
    try:
        check_private_steps(estimator)
    except NonPrivateStepError as exc:
        raise ValueError(
            f"a search's cost needs every step of its pipeline to be private or stateless: {exc}"
        ) from exc


class _FitPlanner:
    """The privacy records of a search's fits, one tuple per fit: one record per part the fit
    charges (:func:`_charging_parts`), planned on synthetic data of the training part's size and
    of the data's schema, once per candidate and size."""

    def __init__(self, base, X, y):
        self.base = base
        self.classes = np.unique(y) if is_classifier(final_estimator(base)[0]) else None
        self.n_features = (np.asarray(X) if not hasattr(X, "shape") else X).shape[1]
        self.schema = _schema(X)
        self.n_targets = target_columns(y)
        self.cache = {}

    def records(self, params, n_samples):
        """The records of a fit of candidate ``params`` on ``n_samples`` rows."""
        key = (repr(sorted(params.items(), key=lambda kv: kv[0])), int(n_samples))
        if key not in self.cache:
            est = _plan_fit(clone(self.base).set_params(**params), n_samples, self.n_features,
                            self.classes, self.schema, self.n_targets)
            # a step that released nothing (a scaler passing its features through) has no
            # record and charges nothing
            records = (part.privacy_record_ for part in _charging_parts(est, fitted=True))
            self.cache[key] = tuple(record for record in records if record is not None)
        return self.cache[key]


def _budgets(estimator):
    """(epsilon, delta) of every part a fit of ``estimator`` charges (delta None: at most 1e-5,
    the default ``min(1e-5, 0.1 / n)``)."""
    return [(float(part.epsilon), float(part.delta) if part.delta is not None else 1e-5)
            for part in _charging_parts(estimator)]


def same_event(a, b):
    """Whether two events are equal (as objects, or by their RDP curves)."""
    try:
        if a == b:
            return True
    except Exception:  # pragma: no cover - events holding arrays
        pass
    ra, rb = np.asarray(a.rdp(DEFAULT_ORDERS)), np.asarray(b.rdp(DEFAULT_ORDERS))
    return bool(np.allclose(ra, rb, rtol=1e-12, atol=0) and a.pure_epsilon() == b.pure_epsilon())


@dataclass
class TuningCost:
    """The privacy spent by an ordinary (non-private) search over one data set.

    Attributes
    ----------
    n_fits : int
        Fits made: candidates x folds, plus the refit.
    epsilon : float
        The composed epsilon at ``delta``: exact (from the events) when ``exact``, otherwise the
        bound ``epsilon_bound``.
    delta : float
    exact : bool
    epsilon_bound : float
        Bound from the fits' target budgets only: the smaller of basic composition and the
        heterogeneous advanced composition (Kairouz, Oh, Viswanath 2015, Thm 3.5 style bound
        ``sqrt(2 log(1/d') sum eps_i^2) + sum eps_i (e^eps_i - 1)/(e^eps_i + 1)`` at
        ``delta = sum delta_i + d'``); inf when ``sum delta_i >= delta`` (then
        :func:`tuning_cost` without data warns: pass the data for the exact total, which
        composes the fits' events and has no such limit).
    target_epsilons : list of float
        The target epsilon of every charge of every fit: one per fit for a skdp estimator or
        a :class:`~skdp.pipeline.PrivatePipeline` (its ``epsilon``), one per private step and
        one for the estimator in a plain ``Pipeline``.
    event : ComposedEvent or None
        The composed events (when ``exact``).
    epsilon_per_record : float or None
        (When ``exact``.) The largest spend of one record: the composition of only the fits
        whose training part contains it (the folds are chosen independently of the data), plus
        the refit. Tighter than ``epsilon``, which composes every fit as a ledger does. For a
        randomised splitter whose seed was not an integer (the search's splits cannot be
        recomputed), the patterns of membership that any draw can give are used: the same as
        any draw's for ``KFold``, every fit (``epsilon``) for the others.

    Notes
    -----
    Neither number covers the choice of the best candidate, made from exact (non-private)
    validation scores: use :class:`PrivateSearchCV` for a guarantee of the selection.
    Both assume folds chosen independently of the data (see :func:`tuning_cost`).
    """

    n_fits: int
    epsilon: float
    delta: float
    exact: bool
    epsilon_bound: float
    target_epsilons: list = field(default_factory=list)
    event: object = None
    epsilon_per_record: object = None

    def __str__(self):
        how = "exact composition of the fits' events" if self.exact else "bound from targets"
        return (f"{self.n_fits} fits spent epsilon={self.epsilon:.4g} at delta={self.delta:.3g} "
                f"({how}; the per-fit targets sum to {sum(self.target_epsilons):.4g})")


def _target_bound(targets, deltas, delta):
    eps = np.asarray(targets, dtype=float)
    if not np.all(np.isfinite(eps)):
        return math.inf
    slack = delta - float(np.sum(deltas))
    if slack <= 0:
        return math.inf
    basic = float(eps.sum())
    advanced = math.sqrt(2 * math.log(1 / slack) * float(np.sum(eps**2))) + float(
        np.sum(eps * np.expm1(eps) / (np.exp(eps) + 1))
    )
    return min(basic, advanced)


def _search_splitter(search, y, classifier):
    """The splitter the search used, refused unless its splits ignore the data.

    Each fit's event is a guarantee for training sets that differ in one record. With a
    splitter that reads the labels (``StratifiedKFold``, which ``GridSearchCV`` uses for a
    classifier with an integer ``cv``) or the groups, changing one record also moves other
    records between folds, so a fold model's neighbour differs in several records and no
    composition of the events bounds the search.
    """
    cv = search.cv
    if (cv is None or isinstance(cv, numbers.Integral)) and classifier and y is None:
        name = "StratifiedKFold"  # what check_cv gives a classifier's binary or multiclass y
    else:
        cv = check_cv(cv, y, classifier=classifier)
        name = type(cv).__name__
        if name == "_CVIterableWrapper":
            name = "a fixed list of splits"
    if type(cv) not in DATA_INDEPENDENT_SPLITTERS:
        allowed = ", ".join(c.__name__ for c in DATA_INDEPENDENT_SPLITTERS)
        raise ValueError(
            f"tuning_cost needs folds chosen independently of the data, but the search split "
            f"with {name}; with an integer cv scikit-learn stratifies "
            "a classifier's folds by label, and a splitter that reads labels or groups (or a "
            "fixed list of splits, whose origin cannot be checked) moves other records between "
            "folds when one record changes, so the fits' events do not bound the search. Run "
            f"the search with one of {allowed}, for example cv=KFold(n_splits, shuffle=True)"
        )
    return cv


def _check_fresh_streams(search, candidates):
    """Refuse a search whose fits of one candidate would draw the same noise.

    ``GridSearchCV`` fits clones of its estimator, and a clone copies an integer
    ``random_state``, a ``RandomState`` or a ``Generator`` alike: every fold fit and the refit of
    a candidate would start from the same generator state. Their releases can then cancel the
    noise (see :mod:`skdp._streams`), so no composition of their events bounds the search.
    """
    for params in candidates:
        est = clone(search.estimator).set_params(**params)
        spenders = [("the estimator", est)] + [
            (name, obj) for name, obj in est.get_params(deep=True).items()
            if isinstance(obj, LedgerCarrierMixin)
        ]
        for name, obj in spenders:
            seed = obj.get_params(deep=False).get("random_state")
            if seed is not None:
                raise ValueError(
                    "a search's cost (tuning_cost, PrivacyLedger.fit_search) needs every fit "
                    f"of the search to draw fresh noise, but "
                    f"{type(obj).__name__} ({name}) has random_state={seed!r}: GridSearchCV's "
                    "clones copy it, so every fold fit and the refit of a candidate draw the "
                    "same noise, their releases can cancel it, and no composition bounds the "
                    "search. Set random_state=None (each fit then draws from the operating "
                    "system), or use PrivateSearchCV, which seeds every run from its own "
                    "random_state"
                )


def _search_candidates(search):
    """The parameter settings an unfitted GridSearchCV / RandomizedSearchCV will fit."""
    from sklearn.model_selection import ParameterGrid, ParameterSampler

    if hasattr(search, "param_grid"):
        return list(ParameterGrid(search.param_grid))
    if hasattr(search, "param_distributions"):
        if not isinstance(search.random_state, numbers.Integral):
            raise ValueError(
                "a RandomizedSearchCV's candidates can be planned only when its random_state is "
                f"an integer (the draw is then known in advance); got {search.random_state!r}"
            )
        return list(ParameterSampler(search.param_distributions, search.n_iter,
                                     random_state=search.random_state))
    raise TypeError("plan_search_fits takes a GridSearchCV or a RandomizedSearchCV; got "
                    f"{type(search).__name__}")


def plan_search_fits(search, X, y=None, groups=None):
    """The privacy records of the cross-validation fits a search will make, before it runs.

    One record per candidate, fold and part that a fit charges (the refit is not included: it
    runs where ``fit`` was called): a skdp estimator or a
    :class:`~skdp.pipeline.PrivatePipeline` charges one record a fit, a plain ``Pipeline`` one
    per private step and one for its skdp estimator. They are planned as :func:`plan_event`
    plans (a fit on synthetic data of the fold's size and of the data's columns: compute, no
    privacy), once per distinct candidate and training size. The search's splitter must choose
    the folds independently of the data (see :func:`tuning_cost`).

    Parameters
    ----------
    search : GridSearchCV or RandomizedSearchCV (integer ``random_state``), unfitted
    X, y : array-like or DataFrame
        The data the search will be fitted on (only their shape, a DataFrame's column names
        and dtypes, the fold sizes and, for a classifier without public ``classes``, the label
        set are read).
    groups : array-like or None

    Returns
    -------
    list of PrivacyRecord

    Raises
    ------
    ValueError
        As :func:`tuning_cost`: folds that depend on the data, fits that share a seed, or a
        plain pipeline step that learns non-private state.
    """
    base = search.estimator
    cv = _search_splitter(search, y, is_classifier(base))
    candidates = _search_candidates(search)
    _check_fresh_streams(search, candidates)
    _check_pipeline_steps(base)
    planner = _FitPlanner(base, X, y)
    X_arr = np.asarray(X) if not hasattr(X, "shape") else X
    splits = [train for train, _ in cv.split(X_arr, y, groups)]
    return [record for params in candidates for train in splits
            for record in planner.records(params, len(train))]


def _reproducible(cv):
    """Whether ``cv.split`` gives again the splits the search drew (an integer seed, or none)."""
    shuffled = getattr(cv, "shuffle", isinstance(cv, (ShuffleSplit, RepeatedKFold)))
    return not shuffled or isinstance(getattr(cv, "random_state", None), numbers.Integral)


def _training_parts(cv, X, y, groups):
    """The training indices of the search's splits, and whether they give the record patterns.

    A randomised splitter seeded by None or a RandomState drew splits that cannot be drawn
    again; their sizes do not depend on the seed, so a copy seeded with 0 gives the sizes. Its
    membership patterns are those of the search only for KFold (a record is in every training
    part but the one of its fold, whatever the permutation).
    """
    if _reproducible(cv):
        return [train for train, _ in cv.split(X, y, groups)], True
    twin = copy.deepcopy(cv)
    twin.random_state = 0
    return [train for train, _ in twin.split(X, y, groups)], type(cv) is KFold


def tuning_cost(search, X=None, y=None, groups=None, *, delta=1e-5, accountant="rdp"):
    """What a fitted ``GridSearchCV`` / ``RandomizedSearchCV`` over a skdp estimator spent.

    Every fit of the search (each candidate on each training fold, and the refit) reads the
    same data set, so their privacy events compose: the folds overlap, and the validation
    scores only rank models that already saw the data. This helper adds them up.

    The fits' events bound the search only if the folds were chosen independently of the
    data: the search's ``cv`` must be a ``KFold``, ``RepeatedKFold``, ``ShuffleSplit``,
    ``LeaveOneOut``, ``LeavePOut`` or ``TimeSeriesSplit`` (for example
    ``KFold(n_splits, shuffle=True)``), or an integer for a regressor (``KFold``). A splitter
    that reads the labels or the groups is refused, and so is an integer ``cv`` with a
    classifier (scikit-learn then uses ``StratifiedKFold``): there one record's label moves
    other records between folds.

    Parameters
    ----------
    search : fitted GridSearchCV or RandomizedSearchCV
    X, y : array-like, DataFrame or None
        The data the search was fitted on. When given, the fold sizes are recomputed from
        ``search.cv`` and the exact events of every fit are planned as :func:`plan_event`
        plans (one fit on synthetic data of the data's shape and columns per distinct candidate
        and training size: compute, no privacy); otherwise only the bound from the target
        budgets is available. The splits of a
        randomised splitter whose ``random_state`` is not an integer are never recomputed (a
        new draw would differ from the search's): see ``TuningCost.epsilon_per_record``.
    groups : array-like or None
        Passed to the splitter.
    delta : float, default=1e-5
        The delta of the reported total.
    accountant : {"rdp", "pld"}, default="rdp"

    Returns
    -------
    TuningCost

    Raises
    ------
    ValueError
        When the search's splitter depends on the data (labels, groups) or cannot be checked,
        or when its estimator (or a private step of it) has a ``random_state``: the search's
        clones copy it, so the fits of a candidate would draw the same noise, and no
        composition bounds releases that share their noise. Also when a step of a plain
        ``Pipeline`` learns non-private state (a ``StandardScaler``, say): one record then
        changes every row the estimator sees.

    Notes
    -----
    A search fitted inside a :class:`skdp.PrivacyLedger` is charged fit by fit; its ledger
    gives the same exact total without replanning (with the same data-independent folds).
    """
    params = list(search.cv_results_["params"])
    n_splits = int(search.n_splits_)
    fits = [p for p in params for _ in range(n_splits)]
    refit = bool(search.refit) and hasattr(search, "best_params_")
    if refit:
        fits.append(search.best_params_)
    base = search.estimator
    classifier = is_classifier(base)
    cv = _search_splitter(search, y, classifier)
    _check_fresh_streams(search, params)
    _check_pipeline_steps(base)

    n = None if X is None else len(y) if y is not None else X.shape[0]
    budgets = [b for p in fits for b in _budgets(clone(base).set_params(**p))]
    targets = [eps for eps, _ in budgets]
    deltas = [d for _, d in budgets]
    bound = _target_bound(targets, deltas, delta)
    if X is None:
        if sum(deltas) >= delta and np.all(np.isfinite(targets)):
            # the targets' bound needs delta above the fits' own deltas (a fit at the default
            # delta has 1e-5, so two of them exhaust tuning_cost's default)
            warn(
                f"no bound from the targets at delta={delta:.3g}: the {len(deltas)} charges' "
                f"deltas sum to {sum(deltas):.3g}. Pass the data (tuning_cost(search, X, y)) "
                f"for the exact total, or a delta above {sum(deltas):.3g}.",
                UserWarning)
        return TuningCost(len(fits), bound, delta, False, bound, targets)

    X_arr = np.asarray(X) if not hasattr(X, "shape") else X
    splits, patterns_known = _training_parts(cv, X_arr, y, groups)
    if len(splits) != n_splits:
        raise ValueError(f"search.cv gives {len(splits)} splits of X, y but the search made "
                         f"{n_splits}: pass the data the search was fitted on")
    member = np.zeros((n, len(splits)), dtype=bool)  # record i in the training part of split j
    for j, train in enumerate(splits):
        member[train, j] = True
    if not patterns_known:  # any record may have been in every training part
        member = np.ones((1, len(splits)), dtype=bool)
    planner = _FitPlanner(base, X, y)

    def planned(p, n_samples):
        return [record.event for record in planner.records(p, n_samples)]

    # by_split[j]: the events of every candidate's fit on the training part of split j
    by_split = [[e for p in params for e in planned(p, len(train))] for train in splits]
    events = [e for p in params for train in splits for e in planned(p, len(train))]
    refit_events = planned(search.best_params_, n) if refit else []
    events += refit_events
    event = compose(events)
    eps = compute_epsilon(event, delta, accountant)
    if bound < eps:  # both are valid bounds at delta
        eps = bound
    per_record = 0.0
    for pattern in np.unique(member, axis=0):
        used = [e for j in np.flatnonzero(pattern) for e in by_split[j]] + refit_events
        if used:
            per_record = max(per_record, compute_epsilon(compose(used), delta, accountant))
    return TuningCost(len(fits), eps, delta, True, bound, targets, event, min(per_record, eps))
