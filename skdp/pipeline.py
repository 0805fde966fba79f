"""One budget for a whole pipeline: private preprocessing and a private model, one guarantee.

:class:`PrivatePipeline` is a :class:`sklearn.pipeline.Pipeline` with a privacy budget
``(epsilon, delta)``. At ``fit`` it

1. **refuses** every step that would learn non-private state from the data (``StandardScaler``,
   ``MinMaxScaler``, ``SimpleImputer(strategy="mean")``, ``OneHotEncoder(categories="auto")``,
   a non-private final estimator, ...), with an error naming the step and its private
   replacement (:func:`check_private_steps`);
2. **splits** the budget on the zCDP scale (:func:`skdp.privacy.split.zcdp_budget`) among its
   private steps by public weights: by default the private preprocessing steps share
   :data:`DEFAULT_PREPROCESSING_SHARE` of it equally and the final skdp estimator gets the rest;
3. **composes** their events sequentially (every private step, those inside a
   ``ColumnTransformer`` included, reads every row): the final estimator calibrates its optimizer
   to what the preprocessing left, and its ``dp_event_`` covers the whole pipeline;
4. **charges** its ledgers once, with that one event (the steps charge nothing themselves).

When the preprocessing bounds its output rows publicly (every coordinate of
:class:`~skdp.preprocessing.PrivateRobustScaler` is in [-1, 1], a one-hot block with public
categories has norm at most 1, ``Normalizer`` gives norm 1), the final estimator's
``data_norm="auto"`` uses that public bound and spends nothing on it. A scaler that passed its
features through (too few rows for reliable quartiles: ``if_unreliable``) gives no bound, and
spends nothing: the estimator then estimates the bound privately with the budget left.
"""

from contextlib import contextmanager
import math
import numbers

import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.utils.validation import _num_samples, check_is_fitted

from ._dask import is_dask
from ._fit_state import RELEASE_ID, keeps_state_on_error
from ._row_wise import check_row_wise, rows_of
from ._streams import object_tags, released_streams, remember_streams
from ._validation import OPEN_UNIT, POSITIVE_OR_INF, check_delta, check_epsilon
from .ledger import LedgerCarrierMixin, PrivacyLedger, _suspended, charge
from .ledger import ledgers_to_charge, precheck
from ._warnings import warn
from .linear_model._base import (
    RELEASE_DIGEST, DPLinearModel, check_sample_weight, not_private, release_digest,
)
from .linear_model._bounds import PipelinePlan
from .preprocessing._step import PrivateStepMixin, StepBudget
from .privacy import ComposedEvent, NonPrivateEvent, PrivacyRecord
from .privacy.split import zcdp_budget

__all__ = [
    "DEFAULT_PREPROCESSING_SHARE",
    "NonPrivateStepError",
    "PrivatePipeline",
    "ROW_WISE_CHECK_ROWS",
    "check_private_steps",
    "make_private_pipeline",
]

#: Share of the pipeline's zCDP budget (rho) that its private preprocessing steps share equally
#: (the final estimator gets the rest). At epsilon = 1, delta = 1e-5 the 12 quartiles of 6
#: numeric features then get an exponential mechanism with epsilon 0.045 each; at epsilon = 0.1,
#: 0.0054, still reliable from about 15,000 rows (n * epsilon * 0.25 >= 20).
DEFAULT_PREPROCESSING_SHARE = 0.1


class NonPrivateStepError(ValueError):
    """A pipeline step learns state from the private data without privacy."""


# -- what is allowed ---------------------------------------------------------------------------
_SCALE = (
    "skdp.preprocessing.PrivateRobustScaler() (private per-feature bounds, mapped onto [-1, 1]), "
    "or PrivateRobustScaler(bounds=<public ranges>) (free)"
)
_IMPUTE = "SimpleImputer(strategy='constant', fill_value=<a public value>)"
_REPLACEMENTS = {
    "StandardScaler": _SCALE,
    "MinMaxScaler": _SCALE,
    "MaxAbsScaler": _SCALE,
    "RobustScaler": _SCALE,
    "QuantileTransformer": _SCALE,
    "PowerTransformer": _SCALE,
    "KBinsDiscretizer": _SCALE + ", then public bins",
    "KNNImputer": _IMPUTE,
    "IterativeImputer": _IMPUTE,
    "TargetEncoder": "OneHotEncoder(categories=<public lists>, handle_unknown='ignore')",
    "LogisticRegression": "skdp.DPLogisticRegression",
    "LogisticRegressionCV": "skdp.DPLogisticRegression",
    "SGDClassifier": "skdp.DPLogisticRegression or skdp.DPLinearSVC",
    "LinearSVC": "skdp.DPLinearSVC",
    "Ridge": "skdp.DPRidge",
    "RidgeCV": "skdp.DPRidge",
    "LinearRegression": "skdp.DPRidge",
    "SGDRegressor": "skdp.DPRidge",
}
# Stateless (or only the public number of input features is learned).
_PUBLIC = ("FunctionTransformer", "Normalizer", "Binarizer", "PolynomialFeatures")


def _refuse(path, step, why, replacement, verdict=", which is not private"):
    raise NonPrivateStepError(f"step {path!r} ({step!r}) {why}{verdict}; use {replacement}")


def _check_leaf(path, step):
    name = type(step).__name__
    if isinstance(step, PrivateStepMixin):
        return
    if name in ("OneHotEncoder", "OrdinalEncoder"):
        public = (
            "OneHotEncoder(categories=<public lists>, handle_unknown='ignore')"
            if name == "OneHotEncoder" else
            "OrdinalEncoder(categories=<public lists>, handle_unknown='use_encoded_value', "
            "unknown_value=-1)"
        )
        if isinstance(step.categories, str):  # "auto"
            _refuse(path, step, "learns the set of categories present in the data", public)
        if getattr(step, "min_frequency", None) is not None or getattr(
            step, "max_categories", None
        ) is not None:
            _refuse(path, step, "learns which categories are infrequent in the data", public)
        if step.handle_unknown == "error":
            _refuse(path, step, "fails on a category missing from its list (the failure "
                    "reveals that a record holds it)", public)
        if step.handle_unknown == "warn":
            _refuse(path, step, "warns of a category missing from its list (the warning "
                    "reveals that a record holds it)", public)
        return
    if name == "SimpleImputer":
        if step.strategy != "constant":
            _refuse(path, step, f"imputes the {step.strategy} of the data", _IMPUTE)
        if step.add_indicator:
            _refuse(path, step, "learns which features have missing values (add_indicator)",
                    _IMPUTE + " with add_indicator=False, and MissingIndicator(features='all')")
        return
    if name == "MissingIndicator":
        if step.features != "all":
            _refuse(path, step, "learns which features have missing values",
                    "MissingIndicator(features='all')")
        return
    if name == "SplineTransformer":
        if isinstance(step.knots, str):
            _refuse(path, step, f"places its knots from the data (knots={step.knots!r})",
                    "SplineTransformer(knots=<a public array>) after a bounded private scaler")
        return
    if name in _PUBLIC:
        return
    if name in _REPLACEMENTS:
        _refuse(path, step, "learns its state from the data", _REPLACEMENTS[name])
    try:
        stateless = not step.__sklearn_tags__().requires_fit
    except AttributeError:
        stateless = False
    if not stateless:
        _refuse(path, step, "learns state from the data, and skdp cannot tell whether that "
                "state is private", "a private step of skdp.preprocessing, a step fitted on "
                "public information, or a stateless FunctionTransformer", verdict="")


def _children(step, fitted):
    """(name, child) of a composite step; None for a leaf."""
    if isinstance(step, Pipeline):
        return list(step.steps)
    if isinstance(step, ColumnTransformer):
        if fitted and hasattr(step, "transformers_"):
            return [(name, t) for name, t, _ in step.transformers_]
        items = [(name, t) for name, t, _ in step.transformers]
        if not isinstance(step.remainder, str):
            items.append(("remainder", step.remainder))
        return items
    if isinstance(step, FeatureUnion):
        return list(step.transformer_list)
    return None


def _walk(step, path, fitted=False):
    """(path, node) of ``step`` and of every step inside it, each composite before its
    children; "passthrough" / "drop" strings and None included. One traversal for all the
    checks that look inside a pipeline."""
    yield path, step
    children = None if step is None or isinstance(step, str) else _children(step, fitted)
    for name, child in children or ():
        yield from _walk(child, f"{path}__{name}" if path else name, fitted)


_COMPOSITES = (Pipeline, ColumnTransformer, FeatureUnion)


def _leaves(step, path, fitted=False):
    """(path, leaf) of every non-trivial transformer inside ``step``, in order."""
    return [(p, node) for p, node in _walk(step, path, fitted)
            if not (isinstance(node, _COMPOSITES) or node is None
                    or (isinstance(node, str) and node in ("passthrough", "drop")))]


#: Rows of a private fit's data on which a ``FunctionTransformer`` is checked to be row-wise
ROW_WISE_CHECK_ROWS = 12


def _row_wise_function(func, path):
    """``func``, checked on every call during a private fit to map each row on its own
    (:func:`skdp._row_wise.check_row_wise` on the first rows it is given) before it runs.

    Checking the private rows reveals nothing a correct step would not: a row-wise function
    always passes, whatever the data; a function that is not row-wise voids the estimator's
    guarantee, and is refused before the estimator sees its output."""
    def checked(X, *args, **kwargs):
        k = min(_num_samples(X), ROW_WISE_CHECK_ROWS)
        if k >= 2:
            check_row_wise(path, "FunctionTransformer", lambda Z: func(Z, *args, **kwargs),
                           rows_of(X, 0, k))
        return func(X, *args, **kwargs)

    checked._skdp_unchecked = func
    return checked


def _function_leaves(pipeline, fitted):
    return [(path, leaf) for path, leaf in _leaves(Pipeline(list(pipeline.steps)), "", fitted)
            if type(leaf).__name__ == "FunctionTransformer" and leaf.func is not None]


@contextmanager
def _row_wise_checked(pipeline):
    """Within this context the pipeline's ``FunctionTransformer`` steps check, on the rows they
    transform, that they are row-wise; their ``func`` is restored after (fitted copies too)."""
    wrapped = []
    for path, leaf in _function_leaves(pipeline, fitted=False):
        if not hasattr(leaf.func, "_skdp_unchecked"):
            wrapped.append(leaf)
            leaf.func = _row_wise_function(leaf.func, path)
    try:
        yield
    finally:
        for leaf in wrapped + [leaf for _, leaf in _function_leaves(pipeline, fitted=True)]:
            while hasattr(leaf.func, "_skdp_unchecked"):
                leaf.func = leaf.func._skdp_unchecked


def check_dask_steps(pipeline):
    """Raise ValueError for a step that cannot keep Dask inputs on the workers.

    On a dask array or DataFrame every step must take and return dask collections, chunk by
    chunk: :class:`~skdp.preprocessing.PrivateRobustScaler` (its counts reduced over chunks,
    its transform ``map_blocks``) and the skdp estimators (the final step). A
    ``ColumnTransformer`` or ``FeatureUnion`` selects and stacks columns with numpy (it would
    gather the rows on the client), and a scikit-learn transformer converts its input to numpy:
    both are refused rather than bring the data to the client.
    """
    from .preprocessing import PrivateRobustScaler

    for name, step in pipeline.steps:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        if isinstance(step, (PrivateRobustScaler, DPLinearModel)):
            continue
        kind = type(step).__name__
        raise ValueError(
            f"step {name!r} ({kind}) cannot run on Dask inputs: on a dask array or DataFrame a "
            "PrivatePipeline takes PrivateRobustScaler steps and an skdp estimator (the rows "
            "stay on the workers); a ColumnTransformer, FeatureUnion or scikit-learn "
            "transformer would gather the data on the client. Select and encode the columns "
            "with dask first, or compute the data into memory"
        )


# Leaves whose output is dense for dense input: a ColumnTransformer holding only these (and
# "drop" / "passthrough") outputs dense arrays whatever its sparse_threshold.
_DENSE_FOR_DENSE_INPUT = (
    "OrdinalEncoder", "SimpleImputer", "MissingIndicator", "Normalizer", "Binarizer",
    "PolynomialFeatures",
)


def _may_output_sparse(leaf, sparse_input):
    """Whether a leaf of a ColumnTransformer may output a sparse matrix (public: its type and
    parameters, and whether the caller's X is sparse)."""
    if leaf is None or isinstance(leaf, str):  # None / "passthrough" ("drop": no output)
        return leaf != "drop" and sparse_input
    if isinstance(leaf, PrivateStepMixin):  # skdp's scaler: dense arrays
        return False
    name = type(leaf).__name__
    if name in ("OneHotEncoder", "SplineTransformer"):
        return bool(leaf.sparse_output) or sparse_input
    if name in _DENSE_FOR_DENSE_INPUT:
        return sparse_input
    return True  # a FunctionTransformer, or anything else: it may


def _check_sparse_threshold(path, ct, sparse_input):
    """Refuse a ColumnTransformer that would choose sparse or dense output from the data.

    scikit-learn stacks its outputs as a sparse matrix when one of them is sparse and their
    overall density is below ``sparse_threshold``: the density counts the non-zero values of the
    private data, and the choice is visible in the fitted pipeline (``sparse_output_``, the type
    of ``transform``'s output), so one record can flip it. With ``sparse_threshold=0`` (or
    outputs that are all dense) there is no choice."""
    if ct.sparse_threshold == 0:
        return
    tops = [t for _, t, _ in ct.transformers] + [ct.remainder]
    leaves = [node for top in tops for _, node in _walk(top, "")
              if not isinstance(node, _COMPOSITES)]  # "passthrough" strings included
    if any(_may_output_sparse(leaf, sparse_input) for leaf in leaves):
        raise NonPrivateStepError(
            f"step {path!r} (ColumnTransformer(sparse_threshold={ct.sparse_threshold!r})) "
            "chooses sparse or dense output from the density of the data, which is not "
            "private (the choice shows in the fitted pipeline); use ColumnTransformer(..., "
            "sparse_threshold=0) for dense output (or transformers whose output is dense, "
            "such as OneHotEncoder(sparse_output=False))"
        )


def check_private_steps(pipeline, sparse_input=False):
    """Raise :class:`NonPrivateStepError` for any step that would learn non-private state.

    Walks the steps of a ``Pipeline`` (and of the ``ColumnTransformer``, ``FeatureUnion`` and
    nested pipelines in it). Allowed: skdp's private steps and estimators (an estimator only as
    the final step), stateless transformers (``FunctionTransformer``, ``Normalizer``, ...; a
    ``PrivatePipeline`` checks during its fit that a ``FunctionTransformer`` maps each row on
    its own, :data:`ROW_WISE_CHECK_ROWS`),
    ``OneHotEncoder`` / ``OrdinalEncoder`` with public category lists and no failure on unknown
    categories, ``SimpleImputer(strategy="constant")``, ``MissingIndicator(features="all")``.
    Refused, with the private replacement in the message: scalers and imputers that learn data
    statistics, encoders with ``categories="auto"``, non-private estimators, and any other step
    that requires fitting; a ``ColumnTransformer`` that would choose between sparse and dense
    output from the density of the data (``sparse_threshold > 0`` with an output that may be
    sparse: use ``sparse_threshold=0``).

    Parameters
    ----------
    pipeline : Pipeline (or a single estimator)
    sparse_input : bool, default=False
        Whether the data is a sparse matrix (its "passthrough" columns are then sparse).
    """
    steps = pipeline.steps if isinstance(pipeline, Pipeline) else [("estimator", pipeline)]
    for i, (name, step) in enumerate(steps):
        final = i == len(steps) - 1
        if final and isinstance(step, DPLinearModel):
            continue
        if isinstance(step, DPLinearModel):
            raise NonPrivateStepError(
                f"step {name!r}: a skdp estimator can only be the final step of a pipeline"
            )
        for path, leaf in _leaves(step, name):
            if isinstance(leaf, DPLinearModel):
                raise NonPrivateStepError(
                    f"step {path!r}: a skdp estimator can only be the final step of a pipeline"
                )
            _check_leaf(path, leaf)
    for path, ct in _column_transformers(steps):
        _check_sparse_threshold(path, ct, sparse_input)


def _column_transformers(steps):
    """(path, ColumnTransformer) of every ColumnTransformer under ``steps``, nested ones too."""
    return [(path, node) for name, step in steps for path, node in _walk(step, name)
            if isinstance(node, ColumnTransformer)]


# -- public bounds on the rows a step outputs ---------------------------------------------------
def _norm_bound(step):
    """A public bound on the L2 norm of every output row of a fitted step, or None."""
    if step is None or isinstance(step, str):
        return 0.0 if step == "drop" else None
    if hasattr(step, "_skdp_output_norm_bound"):
        return step._skdp_output_norm_bound()
    name = type(step).__name__
    if name == "Normalizer":
        return math.sqrt(step.n_features_in_) if step.norm == "max" else 1.0
    if name == "OneHotEncoder" and not isinstance(step.categories, str):
        return math.sqrt(step.n_features_in_)  # at most one 1 per input feature
    if isinstance(step, Pipeline):
        bound = None
        for _, sub in step.steps:
            if sub is None or (isinstance(sub, str) and sub == "passthrough"):
                continue
            bound = _norm_bound(sub)
        return bound
    if isinstance(step, (ColumnTransformer, FeatureUnion)):
        parts = (
            [t for _, t, _ in step.transformers_] if isinstance(step, ColumnTransformer)
            else [t for _, t in step.transformer_list]
        )
        squares = 0.0
        for t in parts:
            b = _norm_bound(t)
            if b is None:
                return None
            squares += b * b
        return math.sqrt(squares)
    return None


class _LazyPlan:
    """The final estimator's :class:`PipelinePlan`, read when its fit starts (the private
    preprocessing is fitted by then, so its events and output bound are known)."""

    def __init__(self, pipeline, epsilon, delta):
        self._pipeline, self.epsilon, self.delta = pipeline, epsilon, delta

    def resolve(self):
        head = Pipeline(list(self._pipeline.steps[:-1])) if len(self._pipeline.steps) > 1 else None
        prior = tuple(_events(head)) if head is not None else ()
        bound = _norm_bound(head) if head is not None else None
        # for the estimator's warm-start check: the pipeline's earlier releases and the streams
        # its steps drew from in this fit (a scaler reusing its seed across the chain)
        private = [] if head is None else [
            leaf for _, leaf in _leaves(head, "", fitted=True) if isinstance(leaf, PrivateStepMixin)]
        steps = tuple(vars(leaf).get("_skdp_stream_state") for leaf in private)
        return PipelinePlan(self.epsilon, self.delta, prior, bound,
                            chain_streams=released_streams(self._pipeline),
                            step_streams=object_tags(steps))


def _events(fitted_step):
    return [
        leaf.dp_event_ for _, leaf in _leaves(fitted_step, "", fitted=True)
        if isinstance(leaf, PrivateStepMixin) and hasattr(leaf, "dp_event_")
    ]


def _release_marks(pipeline):
    """What names the releases in a fitted pipeline: (path, release id, coefficients unchanged)
    of every private object fitted in it (:data:`~skdp._fit_state.RELEASE_ID`, new at every
    fit; an estimator's coefficients against the digest of the model it released)."""
    marks = []
    for path, obj in _walk(pipeline, "", fitted=True):
        release = getattr(obj, RELEASE_ID, None) if path else None
        if release is not None:
            digest = getattr(obj, RELEASE_DIGEST, None)
            unchanged = digest is None or digest == release_digest(obj.coef_, obj.intercept_)
            marks.append((path, release, unchanged))
    return tuple(marks)


#: How each of a fitted pipeline's privacy attributes reads once its steps are no longer the
#: releases its record describes (:class:`_PipelineClaim`): not private.
_NOT_PRIVATE = {
    "privacy_record_": not_private,
    "dp_event_": lambda event: ComposedEvent((event, NonPrivateEvent())),
    "epsilon_": lambda epsilon: math.inf,
    "delta_": lambda delta: delta,
}


def _check_routed_weights(X, params):
    """Refuse bad ``<step>__sample_weight`` fit parameters before any step releases anything
    (a public check: the estimator would refuse them too, but after the preprocessing's private
    releases, whose charge the failed fit then pays). In memory; Dask weights are checked in one
    pass by the step that reads them."""
    if is_dask(X):
        return
    for key, value in params.items():
        if key.endswith("__sample_weight") and value is not None and not is_dask(value):
            check_sample_weight(value, X)


class _PipelineClaim:
    """A fitted :class:`PrivatePipeline`'s ``privacy_record_``, ``dp_event_``, ``epsilon_`` or
    ``delta_``: as the pipeline's fit set it while its private steps are the releases that fit
    made; not private (epsilon inf, with a warning) once one was refitted on its own, replaced,
    or had its coefficients changed since, because the record no longer describes the model the
    pipeline predicts with."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, pipeline, owner=None):
        if pipeline is None:
            return self
        try:
            value = vars(pipeline)["_skdp_claims"][self.name]
        except KeyError:
            raise AttributeError(self.name) from None
        if _release_marks(pipeline) != vars(pipeline).get("_skdp_release_marks"):
            warn(
                f"{type(pipeline).__name__}: a private step was refitted on its own, replaced, "
                "or had its coefficients changed since the pipeline's fit, so the pipeline's "
                f"record no longer describes its model: {self.name} reads as not private "
                "(epsilon inf). Refit the pipeline as a whole for one guarantee.",
                UserWarning,
            )
            value = _NOT_PRIVATE[self.name](value)
        return value

    def __set__(self, pipeline, value):
        vars(pipeline).setdefault("_skdp_claims", {})[self.name] = value


class PrivatePipeline(LedgerCarrierMixin, Pipeline):
    """A scikit-learn ``Pipeline`` whose private steps share one (epsilon, delta) budget.

    Parameters
    ----------
    steps : list of (name, estimator) tuples
        As for ``Pipeline``. Every step must be private (skdp's private preprocessing and
        estimators), public (fitted on public information) or stateless; others are refused at
        ``fit`` (:func:`check_private_steps`). The steps' own ``epsilon`` and ``delta`` are not
        used: the pipeline's budget replaces them. Private steps given the same
        ``random_state`` (an integer, or one ``RandomState`` / ``Generator``, which a
        ``ColumnTransformer`` copies into each of its steps) draw from distinct streams
        (composition needs independent noise); two releases that still share a stream are
        refused.
    epsilon : float > 0 or np.inf, default=1.0
        Budget of the whole pipeline fit. ``np.inf``: no privacy (exact statistics).
    delta : float in (0, 1) or None, default=None
        None: ``min(1e-5, 0.1 / n_samples)``.
    weights : dict or None, default=None
        Public weights of the private steps, keyed by their path (``"scaler"``, or
        ``"columntransformer__num"`` inside a ``ColumnTransformer``, or the final estimator's
        name); must name every private step. A preprocessing step gets ``weight / total`` of the
        budget's rho, the final estimator what is left. None: the preprocessing steps share
        :data:`DEFAULT_PREPROCESSING_SHARE` equally (the whole budget when the pipeline ends in
        a transformer).
    ledger : PrivacyLedger or None, default=None
        Charged once per fit with the pipeline's event (as are open ledger contexts and the
        steps' own ``ledger``); the steps charge nothing themselves.
    transform_input, memory, verbose
        As for ``Pipeline``.

    Attributes
    ----------
    epsilon_, delta_ : float
        The guarantee of the whole fit (at most ``epsilon``). It describes the releases the
        pipeline's fit made: once a private step is refitted on its own, replaced, or has its
        coefficients changed, the four privacy attributes read as not private (``epsilon_`` inf,
        with a warning) until the pipeline is refitted as a whole.
    dp_event_ : DPEvent
        The composition of every private step's event.
    privacy_record_ : PrivacyRecord
    budget_shares_ : dict
        The share of rho given to each private preprocessing step (by path).
    """

    privacy_record_ = _PipelineClaim()
    dp_event_ = _PipelineClaim()
    epsilon_ = _PipelineClaim()
    delta_ = _PipelineClaim()

    _parameter_constraints = {
        **Pipeline._parameter_constraints,
        "epsilon": [POSITIVE_OR_INF],
        "delta": [OPEN_UNIT, None],
        "weights": [dict, None],
        "ledger": [PrivacyLedger, None],
    }

    def __init__(
        self, steps, *, epsilon=1.0, delta=None, weights=None, ledger=None,
        transform_input=None, memory=None, verbose=False,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.weights = weights
        self.ledger = ledger
        super().__init__(steps, transform_input=transform_input, memory=memory, verbose=verbose)

    # -- the budget ------------------------------------------------------------------------------
    def _shares(self, private_paths, final_name):
        """The share of rho of each private preprocessing step (the estimator gets the rest);
        without a final skdp estimator the steps share the whole budget."""
        if self.weights is None:
            k = len(private_paths)
            total = DEFAULT_PREPROCESSING_SHARE if final_name is not None else 1.0
            return {p: total / k for p in private_paths}
        if not isinstance(self.weights, dict):
            raise ValueError(f"weights must be None or a dict; got {self.weights!r}")
        names = list(private_paths) + ([final_name] if final_name else [])
        missing = [p for p in names if p not in self.weights]
        extra = [p for p in self.weights if p not in names]
        if missing or extra:
            raise ValueError(
                f"weights must name exactly the private steps {names}; missing {missing}, "
                f"unknown {extra}"
            )
        for p, w in self.weights.items():
            if isinstance(w, bool) or not isinstance(w, numbers.Real) or not (
                w > 0 and math.isfinite(w)
            ):
                raise ValueError(f"weights must be finite reals > 0; got {p!r}: {w!r}")
        total = float(sum(self.weights.values()))
        shares = {p: self.weights[p] / total for p in private_paths}
        if final_name is None and shares:
            # no estimator: the preprocessing steps take the whole budget, in these proportions
            s = sum(shares.values())
            shares = {p: v / s for p, v in shares.items()}
        return shares

    def _fit_ledgers(self):
        ledgers = super()._fit_ledgers()  # its own, the open contexts, the carried ones
        for _, step in self.steps:
            for _, leaf in _leaves(step, "x"):
                own = getattr(leaf, "ledger", None)
                for led in ledgers_to_charge(own) if own is not None else ():
                    if all(led is not other for other in ledgers):
                        ledgers.append(led)
        return ledgers

    @contextmanager
    def _private_fit(self, X):
        check_private_steps(self, sparse_input=sp.issparse(X))
        if is_dask(X):
            check_dask_steps(self)
        n = _num_samples(X)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, n)
        final_name, final = self.steps[-1]
        estimator = final if isinstance(final, DPLinearModel) else None
        private = [
            (path, leaf) for path, leaf in _leaves(Pipeline(list(self.steps)), "")
            if isinstance(leaf, PrivateStepMixin)
        ]
        shares = self._shares([p for p, _ in private], final_name if estimator else None)
        ledgers = self._fit_ledgers()
        source = type(self).__name__
        precheck(ledgers, epsilon, delta, source)
        rho = zcdp_budget(epsilon, delta) if math.isfinite(epsilon) else math.inf
        marked = []
        for stream, (path, leaf) in enumerate(private, start=1):
            leaf._skdp_budget = StepBudget(rho * shares[path], delta, epsilon, stream)
            marked.append(leaf)
        if estimator is not None:
            estimator._skdp_pipeline_plan = _LazyPlan(self, epsilon, delta)
            marked.append(estimator)
        try:
            with _suspended(), _row_wise_checked(self):
                yield
        finally:
            fitted = [leaf for _, leaf in _leaves(Pipeline(list(self.steps)), "", fitted=True)]
            streams = []  # the random streams of the steps' releases, for the one charge
            shared = False  # two objects' releases drew from one stream
            own = None  # the final estimator's record of this fit alone
            for obj in marked + fitted:
                state = vars(obj).pop("_skdp_stream_state", None)  # (once per object)
                if state is not None:
                    shared = shared or state in streams
                    streams.append(state)
                own = vars(obj).pop("_skdp_fit_record", own)
                for attr in ("_skdp_budget", "_skdp_pipeline_plan"):
                    if attr in vars(obj):
                        delattr(obj, attr)
        if shared:  # no composition bounds two releases of one noise: refused, nothing charged
            raise ValueError(
                "two private steps of the pipeline drew their noise from one random stream, so "
                "no composition bounds their releases; give the steps random_state=None, or "
                "seeds of their own"
            )
        # the fit succeeded: one record, one charge (of this fit's own event: a warm-started
        # estimator's record composes its chain, whose earlier fits were charged when they ran)
        if estimator is not None:
            record = self.steps[-1][1].privacy_record_
        else:
            events = _events(Pipeline(list(self.steps)))
            event = ComposedEvent(tuple(events)) if math.isfinite(epsilon) else NonPrivateEvent()
            record = PrivacyRecord.from_event(
                event, delta, "rdp", mechanism="exponential", noise_multiplier=math.nan,
                sensitivity=1.0, n_steps=0, sampling="full batch",
            ) if math.isfinite(epsilon) else PrivacyRecord(
                event=event, epsilon=math.inf, delta=0.0, accountant="none", mechanism="none",
                noise_multiplier=0.0, sensitivity=math.inf, n_steps=0, sampling="full batch",
            )
        charge(ledgers, record if own is None else own, source, epsilon, delta, n_samples=int(n),
               stream=tuple(streams))
        # a warm-started estimator continues the pipeline's chain: its tags stay, for the next
        # chained fit's check (PipelinePlan.chain_streams)
        chained = estimator is not None and "warm_start_history" in record.details
        remember_streams(self, tuple(streams), released_streams(self) if chained else ())
        self.privacy_record_ = record
        self.dp_event_ = record.event
        self.epsilon_ = record.epsilon
        self.delta_ = record.delta
        self.budget_shares_ = {p: shares[p] for p, _ in private}
        self._skdp_release_marks = _release_marks(self)  # the releases the record describes

    # -- fitting -----------------------------------------------------------------------------------
    @keeps_state_on_error
    def fit(self, X, y=None, **params):
        """Fit every step under the pipeline's one budget (see the class docstring).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None
        **params : dict
            Fit parameters of the steps, as ``step__param`` (as for ``Pipeline``).

        Returns
        -------
        self
        """
        self._validate_params()
        _check_routed_weights(X, params)
        with self._private_fit(X):
            super().fit(X, y, **params)
        return self

    @keeps_state_on_error
    def fit_transform(self, X, y=None, **params):
        """Fit under the pipeline's budget, then transform X (the final step is a transformer)."""
        self._validate_params()
        _check_routed_weights(X, params)
        with self._private_fit(X):
            out = super().fit_transform(X, y, **params)
        return out

    def fit_predict(self, X, y=None, **params):
        """Fit under the pipeline's budget, then predict X."""
        self.fit(X, y, **params)
        return self.predict(X)

    def __sklearn_is_fitted__(self):
        """Fitted when the pipeline was (its record exists), or when every step is: a slice of
        a fitted pipeline (``pipe[:-1]``) is a new PrivatePipeline that shares the fitted steps
        but not the record. Every step, not only the last as for ``Pipeline``: an unfitted
        pipeline whose last step is stateless is not fitted."""
        if "_skdp_claims" in vars(self):
            return True
        for _, step in self.steps:
            if step is None or (isinstance(step, str) and step == "passthrough"):
                continue
            try:
                check_is_fitted(step)
            except NotFittedError:
                return False
        return True


def make_private_pipeline(*steps, epsilon=1.0, delta=None, weights=None, ledger=None,
                          memory=None, verbose=False):
    """Build a :class:`PrivatePipeline` from estimators, naming the steps automatically.

    As :func:`sklearn.pipeline.make_pipeline`, with the pipeline's budget.

    Parameters
    ----------
    *steps : estimators
    epsilon : float > 0 or np.inf, default=1.0
    delta : float in (0, 1) or None, default=None
    weights : dict or None, default=None
    ledger : PrivacyLedger or None, default=None
    memory, verbose
        As for ``make_pipeline``.

    Returns
    -------
    PrivatePipeline

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from skdp import DPLogisticRegression
    >>> from skdp.pipeline import make_private_pipeline
    >>> from skdp.preprocessing import PrivateRobustScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> pipe = make_private_pipeline(PrivateRobustScaler(), DPLogisticRegression(),
    ...                              epsilon=1.0, delta=1e-5)
    >>> pipe.fit(X, y).epsilon_ <= 1.0
    True
    """
    from sklearn.pipeline import _name_estimators

    return PrivatePipeline(
        _name_estimators(steps), epsilon=epsilon, delta=delta, weights=weights, ledger=ledger,
        memory=memory, verbose=verbose,
    )

