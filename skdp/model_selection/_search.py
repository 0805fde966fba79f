"""PrivateSearchCV: hyper-parameter search with one (epsilon, delta) guarantee for the whole search."""

from dataclasses import replace
import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._fit_state import keeps_state_on_error
from .._streams import ATTRIBUTE as STREAMS_ATTRIBUTE
from .._streams import released_streams, remember_streams, stream_state
from .._validation import (
    OPEN_UNIT, POSITIVE, POSITIVE_OR_INF, RANDOM_STATE, check_delta, make_generator,
)
from .._row_wise import check_row_wise
from .._dask import as_dask_inputs, compute, is_dask, predict_blocks, take_rows
from ..ledger import LedgerCarrierMixin, PrivacyLedger, _suspended, charge
from ..ledger import precheck
from ..privacy import (
    ComposedEvent,
    GaussianEvent,
    PrivacyRecord,
    calibrate_noise_multiplier,
    compute_epsilon,
    with_public_labels,
)
from ..linear_model._bounds import public_target_bounds
from ..linear_model._classifier import resolve_classes
from ._cost import _budgets, _schema, final_estimator, plan_event, same_event, target_columns
from ._events import MaxEvent, RepeatAndSelectEvent, sample_repetitions
from .._warnings import warn

__all__ = ["PrivateSearchCV"]

_SCORINGS = ("accuracy", "neg_mean_squared_error")


def _take(a, idx):
    return a.iloc[idx] if hasattr(a, "iloc") else np.asarray(a)[idx]


def _best_has(name):
    def check(self):
        check_is_fitted(self, "best_estimator_")
        return hasattr(self.best_estimator_, name)

    return check


class PrivateSearchCV(LedgerCarrierMixin, MetaEstimatorMixin, BaseEstimator):
    """Private hyper-parameter search by random stopping (Papernot & Steinke 2022).

    The whole search, model selection included, satisfies one (``epsilon_``, ``delta_``)-DP
    guarantee, computed before any private record is read. The search:

    1. splits the data once into a training part and a validation part of public sizes, by a
       random permutation drawn from the search's own generator (never stratified by the
       labels nor grouped: which part a record is in does not depend on any record);
    2. draws the number of runs K from a truncated negative binomial distribution with mean
       ``n_iter`` and shape ``shape`` (or a Poisson distribution, ``shape=np.inf``);
    3. K times: draws a candidate uniformly from ``param_grid``, fits it privately on the
       training part (the candidate's own ``epsilon``), and scores it privately on the
       validation part (accuracy, or clipped squared error for regressors, with Gaussian noise);
    4. releases only the candidate with the best noisy score, and its model.

    Each run is one "candidate-and-score" mechanism Q. Its fit and its score read disjoint,
    data-independent parts of the data, so a record changes only one of them: Q's Rényi-DP is
    the pointwise maximum of the fit's and the score's (parallel composition), maximised again
    over the candidates (a public random choice). Releasing the best of K runs with K random is
    charged by Papernot & Steinke's theorem (:class:`RepeatAndSelectEvent`, which equals
    dp-accounting's ``RepeatAndSelectDpEvent``). K, the other runs and their scores stay
    secret: releasing them would cost K compositions instead.

    Parameters
    ----------
    estimator : skdp estimator, PrivatePipeline, or Pipeline ending in a skdp estimator
        A :class:`~skdp.pipeline.PrivatePipeline` is private as a whole (its private steps
        spend from its own budget, its ``epsilon``). In a plain ``Pipeline``, the
        non-final steps must be row-wise and fixed in advance (for example
        ``Normalizer``, or a ``FunctionTransformer`` of an element-wise function), since only
        the skdp estimator is private: a step that learns from the data, or whose output for a
        record depends on the other records, is refused (batch dependence is detected on public
        synthetic rows; a step row-wise on those but not on the data cannot be detected).
    param_grid : dict or list of dicts
        Finite lists of values, as for ``GridSearchCV``. Continuous distributions are not
        accepted: the guarantee needs the privacy cost of every candidate that could be drawn.
    n_iter : float >= 1, default=10
        The mean number of runs E[K].
    shape : float >= 0 or np.inf, default=1.0
        Distribution of K: 0 logarithmic, 1 geometric, (0, inf) truncated negative binomial,
        ``np.inf`` Poisson (which can draw K=0: then no model is released).
    validation_fraction : float in (0, 1), default=0.25
        Share of the records held out to score the candidates.
    scoring : {"accuracy", "neg_mean_squared_error"} or None, default=None
        None: accuracy for classifiers, negative clipped mean squared error for regressors
        (targets and predictions clipped to the estimator's public ``y_bounds``; for a 2-D y
        the mean over the columns, each clipped to its own pair).
    score_epsilon : float > 0 or None, default=None
        Budget of one noisy validation score (its Gaussian noise is calibrated to it at
        ``delta``). None: the smallest candidate ``epsilon``, so the score costs about as much
        as one fit, and by parallel composition nothing on top of it.
    delta : float in (0, 1) or None, default=None
        Delta of the search's guarantee; None: ``min(1e-5, 0.1 / n_samples)``.
    max_epsilon : float > 0 or None, default=None
        If the search's epsilon exceeds it, ``fit`` raises ValueError before reading the data.
    refit : bool, default=False
        Refit the selected candidate on all the data. This composes one more fit (the largest
        full-data fit among the candidates) into the guarantee. False: the selected model is the
        one trained on the training part.
    ledger : PrivacyLedger or None, default=None
        Charged with the whole search as one event (as are open ledger contexts, also when the
        search runs in a worker process), before any private record is read: a refused charge
        leaves no model behind. So is every ledger a plain fit of ``estimator`` would charge
        (its own ``ledger``; for a PrivatePipeline its ``ledger`` and its steps'): their
        ceilings hold for the search. The internal fits charge nothing themselves.
    random_state : int, Generator or None, default=None
        Seeds the split, K, the candidates, the fits and the score noise. The guarantee assumes
        this randomness is secret: a model whose seed is published has no privacy. The seeds
        drawn for the fits are used only while they run: the released model keeps the
        ``random_state`` values of ``estimator`` (and of its steps), and neither they nor the
        split are kept on the search.
    verbose : int, default=0
        > 0: print the planned guarantee before the search and the selected candidate after it.

    Attributes
    ----------
    best_estimator_ : estimator or None
        The selected model (None only when a Poisson K was 0). It was chosen with the data, so
        its guarantee is the search's: its ``privacy_record_``, ``dp_event_``, ``epsilon_`` and
        ``delta_`` (and those of a pipeline's private steps) are the search's, and a warm start
        from it composes the whole search. Its own fit's record is in
        ``privacy_record_.details["selected_fit"]``.
    best_params_ : dict or None
    best_index_ : int or None
        Index of the selected candidate in ``candidates_``.
    best_score_ : float or None
        Its noisy validation score (released as part of the selected run).
    candidates_ : list of dict
        The grid (public).
    epsilon_, delta_ : float
        The guarantee of the whole search (refit included).
    dp_event_ : DPEvent
        ``RepeatAndSelectEvent(MaxEvent(fits..., score), n_iter, shape)``, composed with the
        refit's ``MaxEvent`` when ``refit=True``.
    privacy_record_ : PrivacyRecord
    score_noise_multiplier_ : float
        Noise std of the score divided by its sensitivity (1/m for accuracy, B/m for the
        squared error, m the validation size).
    n_train_, n_validation_ : int
    n_features_in_ : int
    classes_ : ndarray
        For classifiers.

    Notes
    -----
    ``cv_results_`` is deliberately absent: it would release every run. The time the search
    takes reveals K (a timing side channel, as for any adaptive stopping).

    The plan (the event of every candidate) is computed with :func:`plan_event`: one fit per
    candidate on synthetic data of the public shape, before the data is read. Every real fit is
    checked to record exactly its planned event.

    References
    ----------
    N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential Privacy. ICLR 2022.
    J. Liu, K. Talwar. Private Selection from Private Candidates. STOC 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import DPLogisticRegression
    >>> from skdp.model_selection import PrivateSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 4)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> search = PrivateSearchCV(DPLogisticRegression(epsilon=1.0, delta=1e-6),
    ...                          {"C": [0.1, 1.0, 10.0]}, n_iter=3, random_state=0).fit(X, y)
    >>> bool(search.epsilon_ < 3 * 1.0)   # cheaper than three fits composed
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "param_grid": [dict, list, tuple],
        "n_iter": [Interval(Real, 1, np.inf, closed="left")],
        "shape": [Interval(Real, 0, np.inf, closed="both")],
        "validation_fraction": [OPEN_UNIT],
        "scoring": [StrOptions(set(_SCORINGS)), None],
        "score_epsilon": [POSITIVE, None],
        "delta": [OPEN_UNIT, None],
        "max_epsilon": [POSITIVE_OR_INF, None],
        "refit": ["boolean"],
        "ledger": [PrivacyLedger, None],
        "random_state": RANDOM_STATE,
        "verbose": ["verbose"],
    }

    # a search charges its whole plan before it runs: the releases of a failed run are in it
    _failed_fit_ledgers = None

    def __init__(
        self, estimator, param_grid, *, n_iter=10, shape=1.0, validation_fraction=0.25,
        scoring=None, score_epsilon=None, delta=None, max_epsilon=None, refit=False,
        ledger=None, random_state=None, verbose=0,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.n_iter = n_iter
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.score_epsilon = score_epsilon
        self.delta = delta
        self.max_epsilon = max_epsilon
        self.refit = refit
        self.ledger = ledger
        self.random_state = random_state
        self.verbose = verbose

    # -- checks ---------------------------------------------------------------------------------
    def _candidates(self):
        grids = self.param_grid if isinstance(self.param_grid, (list, tuple)) else [self.param_grid]
        for grid in grids:
            for key, values in grid.items():
                if hasattr(values, "rvs") or isinstance(values, (str, bytes)) or not hasattr(
                    values, "__len__"
                ):
                    raise ValueError(
                        f"param_grid[{key!r}] must be a finite list of values; got {values!r}. "
                        "Continuous distributions are not supported: discretise them."
                    )
        candidates = list(ParameterGrid(self.param_grid))
        if not candidates:
            raise ValueError("param_grid has no candidate")
        return candidates

    def _check_params(self):
        """The parameters against ``_parameter_constraints`` (InvalidParameterError)."""
        self._validate_params()

    # -- the search -----------------------------------------------------------------------------
    @keeps_state_on_error
    def fit(self, X, y):
        """Run the private search.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), or (n_samples, n_targets) for DPRidge

        Returns
        -------
        self
        """
        self._check_params()
        candidates = self._candidates()
        final, prefix = final_estimator(self.estimator)
        classifier = is_classifier(final)
        scoring = self.scoring or ("accuracy" if classifier else "neg_mean_squared_error")
        if scoring == "accuracy" and not classifier:
            raise ValueError("scoring='accuracy' needs a classifier")
        if scoring == "neg_mean_squared_error" and not hasattr(final, "y_bounds"):
            raise ValueError("scoring='neg_mean_squared_error' needs a regressor with y_bounds")
        if scoring == "neg_mean_squared_error" and isinstance(final.y_bounds, str):
            raise ValueError(
                "scoring='neg_mean_squared_error' needs public y_bounds (a pair) on the "
                "regressor: the score's sensitivity is computed from them before any fit, and "
                "y_bounds='auto' only releases bounds inside each fit"
            )

        dask_input = is_dask(X)
        if dask_input:  # rows on Dask workers: the runs fit there, the scores are reductions
            X, y = as_dask_inputs(X, y, multi_output=not classifier)
            y_arr = y
            n, n_features = int(X.shape[0]), int(X.shape[1])
        else:
            y_arr = np.asarray(y)
            n = y_arr.shape[0]
            n_features = np.asarray(X[:1] if not hasattr(X, "iloc") else X.iloc[:1]).shape[1]
        n_targets = None if classifier else target_columns(y_arr)  # a regressor's 2-D y
        if scoring == "neg_mean_squared_error":  # public: checked against y's shape now
            low, high = public_target_bounds(final.y_bounds, n_targets or 1)
        _check_stateless_steps(self.estimator, _probe(n_features))
        delta = check_delta(self.delta, n)
        m = int(round(self.validation_fraction * n))
        if not 1 <= m <= n - 2:
            raise ValueError(f"validation_fraction={self.validation_fraction} leaves no training "
                             f"or no validation record out of {n}")
        n_train = n - m

        estimators = []
        classes = None
        if classifier:
            # the label set must be fixed for the plan; as for the estimators, reading it from
            # y reveals which labels occur (pass `classes` to the estimator to avoid it). The
            # whole y is checked against declared classes now, as a plain fit checks it: a label
            # outside them raises here, before any charge, not in whichever run's training part
            # the secret split put it
            declared, _ = resolve_classes(final.classes, y_arr)
            classes = np.asarray(final.classes) if final.classes is not None else declared
        for params in candidates:
            est = clone(self.estimator).set_params(**params)
            if classifier:
                est.set_params(**{prefix + "classes": classes})
            estimators.append(est)

        # -- the plan: every candidate's event, from public quantities only ---------------------
        schema = None if dask_input else _schema(X)  # a DataFrame's columns, for its pipeline
        fit_records = [plan_event(est, n_train, n_features, classes, schema, n_targets)
                       for est in estimators]
        targets = []
        for est, rec in zip(estimators, fit_records):
            # the budget the candidate's fit is given: a PrivatePipeline's own epsilon (its
            # final estimator's parameter is not used inside it), else the estimator's
            target = min(eps for eps, _ in _budgets(est))
            if not math.isfinite(target) or not math.isfinite(rec.epsilon):
                raise ValueError("every candidate must be private (finite epsilon); got "
                                 f"epsilon={target!r} in {est!r}")
            targets.append(target)
        score_eps = min(targets) if self.score_epsilon is None else float(self.score_epsilon)
        z_score, _ = calibrate_noise_multiplier(GaussianEvent, score_eps, delta)
        fit_events = _unique([r.event for r in fit_records])
        run_event = MaxEvent(tuple(fit_events) + (GaussianEvent(z_score),))
        event = RepeatAndSelectEvent(run_event, float(self.n_iter), float(self.shape))
        full_records = None
        if self.refit:
            full_records = [plan_event(est, n, n_features, classes, schema, n_targets)
                            for est in estimators]
            event = ComposedEvent((event, MaxEvent(tuple(_unique([r.event for r in full_records])))))
        epsilon = compute_epsilon(event, delta, "rdp")
        if self.verbose:
            print(f"[PrivateSearchCV] {len(candidates)} candidates, E[K]={self.n_iter}, "
                  f"shape={self.shape}: the search is ({epsilon:.4g}, {delta:.3g})-DP")
        if self.max_epsilon is not None and epsilon > self.max_epsilon:
            raise ValueError(
                f"the search would spend epsilon={epsilon:.4g} at delta={delta:.3g}, over "
                f"max_epsilon={self.max_epsilon}; lower the candidates' epsilon or n_iter"
            )
        # every ledger a plain fit of a candidate would charge (a PrivatePipeline's own and its
        # steps' ledgers too), each charged with the whole search
        ledgers = self._fit_ledgers()
        for est in estimators:
            for led in _fit_ledgers(est):
                if all(led is not other for other in ledgers):
                    ledgers.append(led)
        precheck(ledgers, epsilon, delta, type(self).__name__, event=event)
        if scoring == "accuracy":
            sensitivity = 1.0 / m
        else:
            # a record's share of the mean over its K clipped squared errors
            sensitivity = float(np.mean((high - low) ** 2)) / m
        record = with_public_labels(PrivacyRecord(
            event=event, epsilon=float(epsilon), delta=float(delta), accountant="rdp",
            mechanism="repeat_and_select", noise_multiplier=float(z_score),
            sensitivity=float(sensitivity), n_steps=0, sampling="random stopping",
            details={"mean_runs": float(self.n_iter), "shape": float(self.shape),
                     "n_candidates": len(candidates), "refit": bool(self.refit)},
        ), classifier and final.classes is None)  # classes_ read from y: the record says so
        # the split, the number of runs, the choices and the runs' seeds: ChaCha20 when a
        # candidate asks for secure_mode (a public parameter), as its own fit would draw
        secure = any(bool(final_estimator(est)[0].secure_mode) for est in estimators)
        rng = make_generator(self.random_state, secure=secure)
        # the search's stream (skdp._streams), before any draw
        stream = stream_state(rng, seeded=self.random_state is not None)
        # Charged before any private record is read: the event is exact and known now, and a
        # refusal (another process may have spent since the pre-check) leaves no model behind.
        charge(ledgers, record, type(self).__name__, epsilon, delta, n_samples=n,
               before_fit=True, stream=stream)
        remember_streams(self, stream)

        # -- the runs (nothing below is released except the selected run) -----------------------
        # The split is drawn from the search's own generator, never from the labels: a record
        # changes the training part or the validation part, never which part the others are in.
        valid, train = _split(rng, n, m)
        take = take_rows if dask_input else _take
        X_tr, y_tr, X_va, y_va = take(X, train), take(y, train), take(X, valid), y_arr[valid]
        K = sample_repetitions(rng, float(self.n_iter), float(self.shape))
        best = None  # (noisy score, candidate index, model)
        for _ in range(K):
            c = int(rng.integers(len(candidates)))
            model = _fit_with_fresh_seeds(clone(estimators[c]), rng, X_tr, y_tr)
            _check_planned(model, fit_records[c])
            raw = _score(model, X_va, y_va, scoring, final)
            noisy = raw + rng.normal(0.0, z_score * sensitivity)
            if best is None or noisy > best[0]:
                best = (noisy, c, model)

        self.candidates_ = candidates
        self.n_train_, self.n_validation_ = n_train, m
        self.n_features_in_ = n_features
        if classifier:
            self.classes_ = classes
        self.score_noise_multiplier_ = float(z_score)
        if best is None:
            warn("the Poisson number of runs was 0: no candidate is released", UserWarning)
            self.best_score_ = self.best_index_ = self.best_params_ = self.best_estimator_ = None
        else:
            score, c, model = best
            if self.refit:
                model = _fit_with_fresh_seeds(clone(estimators[c]), rng, X, y)
                _check_planned(model, full_records[c])
            self.best_score_, self.best_index_ = float(score), c
            self.best_params_ = dict(candidates[c])
            self.best_estimator_ = _carry_search_record(model, record, released_streams(self))
        self.dp_event_ = event
        self.epsilon_, self.delta_ = float(epsilon), float(delta)
        self.privacy_record_ = record
        if self.verbose and best is not None:
            print(f"[PrivateSearchCV] selected {self.best_params_} (noisy score "
                  f"{self.best_score_:.4g})")
        return self

    # -- delegation -----------------------------------------------------------------------------
    @available_if(_best_has("predict"))
    def predict(self, X):
        """Predict with the selected model."""
        return self.best_estimator_.predict(X)

    @available_if(_best_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the selected model."""
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the selected model."""
        return self.best_estimator_.decision_function(X)

    def score(self, X, y):
        """Score of the selected model on (X, y) (its ``score`` method; not private)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)


def _probe(n_features, n_rows=12):
    """Public synthetic rows of the data's width: no private value.

    Rows of very different scales and signs, a zero row and a repeated row, so that a step
    whose output for a row depends on the other rows of its batch shows it.
    """
    rng = np.random.default_rng(0)
    P = rng.normal(size=(n_rows, n_features)) * 10.0 ** rng.uniform(-2, 2, size=(n_rows, 1))
    P[0] = 0.0
    P[1] = P[2]
    return P


def _check_row_wise(name, step, P):
    """Refuse a step whose transform of a row depends on the other rows of the batch
    (:func:`skdp._row_wise.check_row_wise` on the public probe ``P``, the step fitted on it).
    Returns the step's output on the probe (the next step's probe)."""
    step = clone(step)

    def transform(Z):
        step.fit(P)
        return step.transform(Z)

    return check_row_wise(name, type(step).__name__, transform, P)


def _check_stateless_steps(estimator, probe):
    """Non-final Pipeline steps must be row-wise functions fixed in advance.

    Only the skdp step is private: a step that learns from the data (``requires_fit``) or
    whose output for one record depends on the other records (a ``FunctionTransformer`` that
    centres its batch, say) lets one record change the rows of all the others, so neither the
    fits' sensitivity nor the parallel composition of training and validation parts would
    hold. Learning is refused from the step's tags; batch dependence is refused when it shows
    on ``probe`` (public synthetic rows, see :func:`_probe`). A step row-wise on the probe but
    not on the data cannot be detected: the documentation asks for row-wise steps.
    """
    from ..pipeline import PrivatePipeline, check_private_steps
    from ..preprocessing import PrivateStepMixin

    if isinstance(estimator, PrivatePipeline):
        check_private_steps(estimator)
        return
    est, P = estimator, probe
    while hasattr(est, "steps"):
        for name, step in est.steps[:-1]:
            if step is None or step == "passthrough":
                continue
            if isinstance(step, PrivateStepMixin):
                raise ValueError(
                    f"Pipeline step {name!r} ({type(step).__name__}) is private, but in a plain "
                    "Pipeline it spends a budget of its own, outside the search's plan; search "
                    "a skdp.pipeline.PrivatePipeline (make_private_pipeline) holding it and the "
                    "estimator, which share one budget"
                )
            if step.__sklearn_tags__().requires_fit:
                raise ValueError(
                    f"Pipeline step {name!r} ({type(step).__name__}) learns from the data, "
                    "which is not private; use stateless row-wise steps (for example "
                    "Normalizer), fit it on public data beforehand, or search a "
                    "skdp.pipeline.PrivatePipeline, whose private steps (PrivateRobustScaler, "
                    "encoders with public categories) share its budget"
                )
            P = _check_row_wise(name, step, P)
        est = est.steps[-1][1]


def _fit_ledgers(estimator):
    """The ledgers a plain fit of ``estimator`` charges (``_fit_ledgers`` of the object that
    spends: a PrivatePipeline, with its steps' ledgers, or the final skdp estimator of a plain
    Pipeline), as that fit finds them."""
    from ..pipeline import PrivatePipeline

    est = estimator
    while not isinstance(est, PrivatePipeline) and hasattr(est, "steps"):
        est = est.steps[-1][1]  # a plain Pipeline: only its final step spends
    return est._fit_ledgers()


def _unique(events):
    out = []
    for e in events:
        if not any(same_event(e, o) for o in out):
            out.append(e)
    return out


def _split(rng, n, m):
    """The validation and training rows (sorted indices): a random permutation of ``n`` rows
    from the search's generator, its first ``m`` held out. Secret: never kept on the search."""
    perm = rng.permutation(n)
    return np.sort(perm[:m]), np.sort(perm[m:])


def _fresh_seeds(est, rng):
    """Fresh independent generators from ``rng`` for every ``random_state`` of ``est`` (the runs
    must draw independent noise), as a ``set_params`` dict. Each is seeded with 128 bits, which
    the fit draws again (:func:`~skdp._validation.make_generator`): an integer seed (at most 32
    bits under scikit-learn's validation) could be searched exhaustively by refitting the
    released model on candidate data sets (about 2^31 fits; session 57's red-team pass)."""
    return {k: np.random.default_rng(rng.integers(0, 2**64, size=2, dtype=np.uint64))
            for k in est.get_params(deep=True)
            if k == "random_state" or k.endswith("__random_state")}


def _fit_with_fresh_seeds(est, rng, X, y):
    """Fit ``est`` (charging no ledger) with :func:`_fresh_seeds`, then give every
    ``random_state`` back its own value.

    The seeds are as secret as the noise they generate: left on the model, they would let anyone
    holding it refit a clone on a candidate data set and recognise the true one by the bit-exact
    coefficients (no privacy at all). So the released model keeps the estimator's own values.
    """
    own = {k: v for k, v in est.get_params(deep=True).items()
           if k == "random_state" or k.endswith("__random_state")}
    est.set_params(**_fresh_seeds(est, rng))
    try:
        with _suspended():
            est.fit(X, y)
    finally:
        est.set_params(**own)
    return est


def _carry_search_record(model, record, streams):
    """``model`` (the selected model), with the search's guarantee on every fitted skdp object
    in it (itself, a pipeline's steps): ``privacy_record_``, ``dp_event_``, ``epsilon_``,
    ``delta_``. Returns ``model``.

    The model was chosen with the data, so what it reveals is bounded by the whole search, not
    by its own fit: a warm start from it (which composes its start's ``privacy_record_``, see
    :func:`~skdp.linear_model._base.warm_started_record`) or a composition reading its
    ``dp_event_`` must count the search. The fit's own record stays in the record's
    ``details["selected_fit"]``. Its coefficients are untouched, so the release digest a warm
    start checks still matches. The search's random stream is added to the streams the model
    remembers (:mod:`skdp._streams`): a later fit drawing from it is not independent of it.
    """
    from ..pipeline import _walk

    seen = set()
    for _, obj in _walk(model, "", fitted=True):
        if id(obj) in seen or not isinstance(getattr(obj, "privacy_record_", None), PrivacyRecord):
            continue
        seen.add(id(obj))
        obj.privacy_record_ = replace(
            record, details={**record.details, "selected_fit": obj.privacy_record_})
        obj.dp_event_ = record.event
        obj.epsilon_, obj.delta_ = record.epsilon, record.delta
        setattr(obj, STREAMS_ATTRIBUTE, released_streams(obj) | streams)
    return model


def _check_planned(model, planned):
    record = final_estimator(model)[0].privacy_record_
    if not same_event(record.event, planned.event):
        raise RuntimeError(
            "a fit recorded a privacy event different from the one planned from public "
            f"quantities ({record.event!r} vs {planned.event!r}): its noise depends on the "
            "data, which is a privacy bug; the search is aborted and nothing is released"
        )


def _score(model, X, y, scoring, final):
    """The exact validation score; its per-record contributions are bounded (sensitivity): the
    mean of the squared errors, each target and prediction clipped to its column's bounds."""
    if is_dask(X):  # predicted where the rows live; only the mean comes back
        pred = predict_blocks(model, X)
        if scoring == "accuracy":
            return float(compute((pred == y).mean())[0])
        low, high = public_target_bounds(final.y_bounds, target_columns(y) or 1)
        err = (y.astype(float).clip(low, high) - pred.clip(low, high)) ** 2
        return -float(compute(err.mean())[0])
    pred = model.predict(X)
    if scoring == "accuracy":
        return float(np.mean(pred == y))
    y = np.asarray(y, dtype=float)
    low, high = public_target_bounds(final.y_bounds, target_columns(y) or 1)
    err = (np.clip(y, low, high) - np.clip(pred, low, high)) ** 2
    return -float(np.mean(err))
