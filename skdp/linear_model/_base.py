"""The scikit-learn layer shared by the three estimators: validation, clipping, the optimizer call.

No numerics live here beyond preparing the clipped design matrix; the optimizer does the rest.
"""

from dataclasses import replace
import functools
import hashlib
import inspect
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from sklearn.utils._param_validation import StrOptions

from .._compile_notice import compile_notice
from .._dask import (
    DaskDesign, as_dask_inputs, check_dask_feature_names, dask_sample_weight, is_dask,
)
from .._fit_state import failed_fit_guard
from .._streams import SHARED, UNVERIFIED, compare_streams, object_tags, released_streams
from .._streams import remember_streams
from .._validation import (
    AUTO, OPEN_UNIT, POSITIVE, POSITIVE_INT, POSITIVE_OR_INF, RANDOM_STATE, TOLERANCE,
    check_delta, check_epsilon, check_positive, explained_data_errors, refuse_negative_weights,
)
from ..ledger import _composed_epsilon as composed_epsilon
from ..ledger import LedgerCarrierMixin, PrivacyLedger, charge
from ..optimizers import (
    OPTIMIZER_NAMES, DPOptimizer, Problem, get_optimizer_class, resolve_optimizer,
)
from ..optimizers._base import nonprivate_record
from ..optimizers._defaults import DUAL_MAX_SNR, budget_rho, prefers_dual, snr
from ..privacy import (
    ACCOUNTANTS, PUBLIC_LABEL_SET, ComposedEvent, NonPrivateEvent, PrivacyRecord, with_public_labels,
)
from ..progress import check_callback
from ._bounds import (
    PrivateFit, _row_norms, exact_largest_norm, public_data_norm, resolve_data_norm,
)
from .._warnings import warn

__all__ = ["DPLinearModel", "clip_rows", "clipped_design"]


#: The sparse formats the estimators accept (others are converted to the first).
SPARSE_FORMATS = ("csr", "csc")

# scikit-learn >= 1.7 refuses all-zero weights in _check_sample_weight unless told otherwise;
# skdp decides itself (a private fit must not refuse them, see _validate_sample_weight).
_ALLOW_ZERO_WEIGHTS = (
    {"allow_all_zero_weights": True}
    if "allow_all_zero_weights" in inspect.signature(_check_sample_weight).parameters
    else {}
)


def check_sample_weight(sample_weight, X):
    """``sample_weight`` as scikit-learn's ``_check_sample_weight`` checks it for X (a scalar for
    every row, or a finite vector of n entries; float64), all-zero weights allowed (a fit
    decides, see ``DPLinearModel._validate_sample_weight``), and a negative weight refused with
    skdp's text, :data:`skdp._validation.NEGATIVE_SAMPLE_WEIGHT`, which says what is allowed (the
    Dask checks give the same)."""
    return refuse_negative_weights(
        _check_sample_weight(sample_weight, X, dtype=np.float64, **_ALLOW_ZERO_WEIGHTS))


#: The row-norm bounds a fit accepts (public or released): the fit works in units of the bound,
#: and its square must stay a normal float64
ROW_NORM_RANGE = (1e-100, 1e100)

def _same_value(a, b):
    """Whether a parameter kept its value: the same object, or an equal plain value."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and bool(np.all(a == b)))
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # an object without a plain equality
        return False


def release_digest(coef, intercept):
    """A digest of a model's ``coef_`` and ``intercept_`` (shapes and float64 bytes).

    Kept by every fit for the model it released, so that a warm start can tell the released
    model from one whose coefficients were set or changed by hand since (whose origin, and so
    whose privacy, is unknown).
    """
    h = hashlib.blake2b(digest_size=16)
    for part in (coef, intercept):
        part = np.ascontiguousarray(np.asarray(part, dtype=np.float64))
        h.update(repr(part.shape).encode())
        h.update(part.tobytes())
    return h.hexdigest()


#: The attribute that holds :func:`release_digest` of the model a fit released.
RELEASE_DIGEST = "_skdp_release_digest"


def releases_model(fit):
    """Decorator of the estimators' ``fit``: a fit that raises leaves the estimator as it was
    (:class:`~skdp._fit_state.restored_on_error`: no private bound, class list or coefficient
    computed on the way stays behind uncharged) and charges the bounds it released before the
    error (:class:`~skdp._fit_state.charged_if_failed`); one that returns keeps the digest of the model
    it released (:func:`release_digest`), which a warm start checks."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        with failed_fit_guard(self):
            fitted = fit(self, *args, **kwargs)
            setattr(self, RELEASE_DIGEST, release_digest(self.coef_, self.intercept_))
        return fitted

    return wrapper


def not_private(record):
    """``record`` with a ``NonPrivateEvent`` composed in (epsilon inf): a release that no
    composition bounds (its noise may repeat another's)."""
    return replace(record, event=ComposedEvent((record.event, NonPrivateEvent())),
                   epsilon=math.inf)


def warm_started_record(start, record, delta, accountant, shared_stream=False):
    """The record of a model fitted (``record``) from the earlier release described by ``start``.

    The released model depends on the data through its starting point too, so its guarantee is
    the composition of every fit of the warm-start chain (each composed once): ``event`` is the
    ``ComposedEvent`` of the chain's per-fit events, ``epsilon`` its accountant's epsilon at
    ``delta`` (inf when a fit of the chain was not private). The fields describing the
    mechanism (noise multiplier, sensitivity, steps, sampling) are this fit's; every fit's own
    record, oldest first, is in ``details["warm_start_history"]``. ``shared_stream``: this fit
    drew from the random stream of an earlier fit of the chain (:mod:`skdp._streams`), so no
    composition bounds the chain: this fit's entry of the history gains a ``NonPrivateEvent``
    (epsilon inf), which every later fit of the chain composes too.
    """
    if shared_stream:  # in the history, so that a later link does not drop it
        record = not_private(record)
    history = start.details.get("warm_start_history", (start,)) + (record,)
    events = [r.event for r in history]
    event = ComposedEvent(tuple(events))
    epsilon = composed_epsilon(events, delta, accountant)
    pure = event.pure_epsilon()
    spent_delta = 0.0 if (pure is not None and epsilon == pure and math.isfinite(epsilon)) else delta
    # a label set read from y by an earlier fit was released with the chain (its relation)
    record = with_public_labels(record, PUBLIC_LABEL_SET in start.relation)
    return replace(
        record, event=event, epsilon=epsilon, delta=spent_delta, accountant=accountant,
        details={**record.details, "warm_start_history": history},
    )


def _warn_of_chain(source, record, private, shared_stream, unverified):
    """Warn when a private fit's released model (``record``, a warm start's composed with its
    chain) is not private: its chain cannot be verified or shares a random stream
    (:meth:`DPLinearModel._chain_check`), or it started from a model that is not private."""
    if unverified and private and not shared_stream:
        warn(
            f"{source} was warm-started from a model fitted in another Python session (and "
            "unpickled), with random_state set: skdp cannot tell whether this fit draws the "
            "noise of an earlier fit of the chain (the same seed in the same script), so no "
            "composition bounds the chain and epsilon_ = inf. Warm-start a saved model with "
            "random_state=None (fresh randomness, for the estimator and the pipeline's "
            "private steps).",
            UserWarning,
        )
    elif shared_stream and private:
        warn(
            f"{source} was warm-started from a model fitted with the same random stream (the "
            "same integer random_state, or a copy of one RandomState or Generator): the two "
            "fits' noise is not independent, so no composition bounds the chain and "
            "epsilon_ = inf. Give each fit of a chain fresh randomness (random_state=None) or "
            "a seed of its own.",
            UserWarning,
        )
    elif private and not math.isfinite(record.epsilon):
        warn(
            f"{source} was warm-started from a model that is not private (fitted with "
            "epsilon=inf, or with coef_ or intercept_ set or changed by hand since its fit): "
            "the released model is not private either, epsilon_ = inf. Use "
            "warm_start=False for a private model.",
            UserWarning,
        )


def clip_rows(X, data_norm, intercept_scaling=None, unit=1.0, norms=None):
    """A new array: rows of X scaled to L2 norm <= data_norm, plus an intercept column, all
    divided by ``unit``.

    The caller's array is never modified. With ``intercept_scaling`` set, a constant column of
    that value is appended, so every row of the result has norm <= sqrt(data_norm^2 + s^2)
    (over ``unit``). A sparse X gives a new CSR matrix (the clipping touches the stored entries
    only; ``norms`` from :func:`~skdp._rows.sparse_row_norms`). The bound holds for the exact norm of the stored floats, not only up to rounding:
    rows are compared with, and scaled to, :func:`~skdp._rows.clip_limit` (a few ulps below
    data_norm). ``unit`` (the fit works in units of data_norm) is applied in the same pass (a
    row within the bound is ``x / unit``), so the copy is written once. ``norms``: the rows'
    norms when the caller has computed them already (dense float64 X: the same
    :func:`~skdp._rows.row_norms`; sparse X: :func:`~skdp._rows.sparse_row_norms`).
    """
    from .._rows import clip_factors, clip_sparse_rows, float64_blocks, row_norms

    if sp.issparse(X):
        out = clip_sparse_rows(X, data_norm, intercept_scaling, norms)
        if unit != 1.0:
            out.data /= unit
        return out
    X = np.asarray(X)
    if X.dtype not in (np.float64, np.float32):
        X = X.astype(np.float64)
    n, d = X.shape
    p = d + (intercept_scaling is not None)
    out = np.empty((n, p), dtype=np.float64)
    # float32 rows are read a block at a time (exact conversion): no float64 copy of X
    for start, stop, rows in float64_blocks(X):
        if norms is None or X.dtype != np.float64:
            block_norms = row_norms(rows)  # no overflow for huge entries (1e200 is clipped)
        else:
            block_norms = norms[start:stop]
        factor = clip_factors(block_norms, data_norm, d)
        if unit == 1.0:
            np.multiply(rows, factor[:, None], out=out[start:stop, :d])
        else:  # a row within the bound is x / unit, correctly rounded, as before the fold
            np.divide(rows, (unit / factor)[:, None], out=out[start:stop, :d])
    if intercept_scaling is not None:
        out[:, d] = intercept_scaling / unit
    return out


def clipped_design(X, data_norm, intercept_scaling=None, unit=1.0, norms=None):
    """The design a fit runs on: the rows of X clipped to L2 norm <= data_norm, plus an
    intercept column, all divided by ``unit``, without a copy of X where it can.

    A dense C-contiguous float64 or float32 X is read in place through per-row factors
    (:func:`~skdp._rows.clipped_dense_rows`: n numbers beyond X, where :func:`clip_rows` wrote
    n x p in float64); another dense X is copied once to that layout (in its own float dtype).
    Sparse X, and rows too large to read in place, get :func:`clip_rows`'s copy. The caller's
    array is never modified. ``norms``: as in :func:`clip_rows`.
    """
    from .._rows import clipped_dense_rows  # numba: on first use

    if not sp.issparse(X):
        X = np.asarray(X)
        if X.dtype not in (np.float64, np.float32):
            X = X.astype(np.float64)
        view = clipped_dense_rows(np.ascontiguousarray(X), data_norm, intercept_scaling, unit, norms)
        if view is not None:
            return view
    return clip_rows(X, data_norm, intercept_scaling, unit, norms)


def prediction_row_factors(X, data_norm):
    """Per-row factors ``min(1, data_norm / ||x_i||)``: predictions use the rows as the fit saw
    them (clipped to norm ``data_norm``), a per-row scalar, so it multiplies ``X @ coef``.

    Why: the model was fitted to clipped rows; a row far above the bound is predicted as the
    clipped row was, instead of extrapolating linearly. With a bound released by
    ``data_norm="auto"`` that is, by chance, far below the typical row (an unreliable median at
    small n times epsilon), unclipped predictions are off by the same factor (R^2 of -1e5 on 750
    rows of raw wine quality at epsilon 0.3); clipped ones stay near the baseline. Rows within
    the bound (all of them, for a bound above every row) are predicted exactly as
    ``X @ coef_.T + intercept_``.
    """
    norms = _row_norms(X)
    with np.errstate(divide="ignore"):
        return np.where(norms > data_norm, data_norm / norms, 1.0)


class DPLinearModel(LedgerCarrierMixin, BaseEstimator):
    """Base class of the skdp estimators (not for direct use).

    Subclasses define ``_encode_targets`` (targets -> loss and Y matrix), ``_regularisation``
    and the prediction methods, and extend ``_parameter_constraints`` with their own parameters
    (their ``fit`` validates them all through scikit-learn's ``_fit_context``).
    """

    # The parameters every estimator has; ``data_norm`` also accepts "auto" (a private estimate
    # of the bound, whose cost is in the fit's guarantee).
    _parameter_constraints: dict = {
        "epsilon": [POSITIVE_OR_INF],
        "delta": [OPEN_UNIT, None],
        "optimizer": [StrOptions(set(OPTIMIZER_NAMES) | {"auto"}), DPOptimizer],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [POSITIVE, AUTO],
        "data_norm": [POSITIVE, AUTO],
        "derivative_clip": [POSITIVE, AUTO],
        "accountant": [StrOptions(set(ACCOUNTANTS))],
        "random_state": RANDOM_STATE,
        "verbose": ["verbose"],
        "ledger": [PrivacyLedger, None],
        "secure_mode": ["boolean"],
        "max_sample_weight": [POSITIVE],
        "warm_start": ["boolean"],
        "callback": [callable, None],
        "callback_every": [POSITIVE_INT],
        "max_iter": [POSITIVE_INT, None],
        "tol": TOLERANCE,
    }

    # -- parameter checks ---------------------------------------------------------------------
    def _check_common_params(self, n_samples):
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, n_samples, warn=False)  # PrivateFit warns, once a fit
        data_norm = self.data_norm
        if not (isinstance(data_norm, str) and data_norm == "auto"):
            data_norm = check_positive(data_norm, "data_norm")
        intercept_scaling = self.intercept_scaling
        if not (isinstance(intercept_scaling, str) and intercept_scaling == "auto"):
            intercept_scaling = check_positive(intercept_scaling, "intercept_scaling")
        if self.accountant not in ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {ACCOUNTANTS}; got {self.accountant!r}")
        if self.derivative_clip != "auto":
            check_positive(self.derivative_clip, "derivative_clip")
        # "auto" is resolved by the fit (_auto_optimizer), from public quantities only
        auto = isinstance(self.optimizer, str) and self.optimizer == "auto"
        optimizer = None if auto else self._resolve_optimizer(self.optimizer)
        return epsilon, delta, data_norm, intercept_scaling, optimizer

    #: What ``optimizer="auto"`` runs (:meth:`_auto_choice` may pick another by its rule).
    _auto_default = "dp_gdws"

    def _auto_choice(self, n_samples, n_columns, fit, public_norm, lam):
        """The optimizer the estimator's public rule prefers (its default; subclasses may read
        n, the number of columns with the intercept, the budget in ``fit``, the public row
        bound or None, and the per-example regularisation ``lam``)."""
        return self._auto_default

    @staticmethod
    def _dual_preferred(n_samples, n_columns, fit, public_norm, lam, max_snr=DUAL_MAX_SNR):
        """Whether a classifier's rule picks dp_scd: a private fit with a public row bound, at a
        small budget for the data, on a problem regularised enough in units of that bound
        (:func:`~skdp.optimizers._defaults.prefers_dual` with the estimator's ``max_snr``).
        Public quantities only; never true with ``data_norm="auto"`` (``public_norm`` None)."""
        return bool(fit.private and public_norm is not None and prefers_dual(
            n_samples, n_columns, budget_rho(fit.epsilon, fit.delta),
            lam * n_samples / public_norm**2, max_snr=max_snr,
        ))

    def _auto_optimizer(self, n_samples, n_columns, fit, public_norm, lam, distributed):
        """The name ``optimizer="auto"`` runs: a function of public quantities only.

        :meth:`_auto_choice`, or :meth:`_fallback_choice` where that choice cannot run (Dask
        input, ``warm_start``). ``public_norm`` is None when ``data_norm="auto"`` releases a
        bound: the choice is made before any private computation and never reads a release.
        """
        name = self._auto_choice(n_samples, n_columns, fit, public_norm, lam)
        cls = get_optimizer_class(name)
        if (distributed and not cls.supports_distributed) or (
            self.warm_start and not cls.supports_warm_start
        ):
            return self._fallback_choice(n_samples, n_columns, fit)
        return name

    def _fallback_choice(self, n_samples, n_columns, fit):
        """What ``optimizer="auto"`` runs where :meth:`_auto_choice`'s optimizer cannot (it runs
        on Dask and warm-starts): dp_gdws (subclasses may read n, the columns with the
        intercept and the budget in ``fit``)."""
        return "dp_gdws"

    def _resolve_optimizer(self, name_or_instance):
        """A fresh optimizer instance with the estimator's ``max_iter`` and ``tol`` applied.

        The estimator's values (when not None) are set on the fresh instance, never on the
        ``optimizer`` parameter; an optimizer instance that sets the same parameter to another
        value is a contradiction and raises.
        """
        optimizer = resolve_optimizer(name_or_instance)
        own = optimizer.get_params(deep=False)
        overrides = {}
        for key in ("max_iter", "tol"):
            value = getattr(self, key)
            if value is None:
                continue
            if own[key] is not None and own[key] != value:
                raise ValueError(
                    f"{key}={value!r} contradicts the optimizer's {key}={own[key]!r}; set it "
                    f"on the estimator or on the optimizer ({key}=None on the other)"
                )
            overrides[key] = value
        return optimizer.set_params(**overrides)

    # -- optimizer__<param> with an optimizer given by its name -------------------------------
    def get_params(self, deep=True):
        """Parameters of the estimator; with ``deep=True`` also the optimizer's, as
        ``optimizer__<name>`` (for an optimizer given by its name: its default instance's)."""
        params = super().get_params(deep=deep)
        if deep and isinstance(self.optimizer, str) and self.optimizer in OPTIMIZER_NAMES:
            try:
                default = get_optimizer_class(self.optimizer)()
            except ValueError:  # not available in this build: nothing to expose
                return params
            for key, value in default.get_params(deep=False).items():
                params[f"optimizer__{key}"] = value
        return params

    def set_params(self, **params):
        """Set parameters; ``optimizer__<name>`` also works when ``optimizer`` is a name.

        An optimizer given by its name stands for the default instance of its class, so
        ``set_params(optimizer__max_iter=50)`` on ``optimizer="dp_gdws"`` sets ``optimizer`` to
        ``DPGDWS(max_iter=50)`` (as ``GridSearchCV`` does with ``{"optimizer__max_iter": ...}``).
        """
        if any(key.startswith("optimizer__") for key in params):
            optimizer = params.get("optimizer", self.optimizer)
            if isinstance(optimizer, str) and optimizer == "auto":
                raise ValueError(
                    'optimizer="auto" picks its optimizer at fit time, so it has no parameters '
                    'to set; name the optimizer (e.g. optimizer="dp_gdws") together with '
                    f"{sorted(k for k in params if k.startswith('optimizer__'))}"
                )
            if isinstance(optimizer, str):
                params = {**params, "optimizer": get_optimizer_class(optimizer)()}
        return super().set_params(**params)

    def _validate_X_y(self, X, y, **kwargs):
        if is_dask(X):  # rows that stay on Dask workers (skdp._dask): checked there
            check_dask_feature_names(self, X, reset=True)
            with explained_data_errors(self, X):
                X, y = as_dask_inputs(X, y, kwargs.get("multi_output", False))
            self.n_features_in_ = int(X.shape[1])
            return X, y
        # float32 stays float32: the fit reads it in place (clipped_design), computing in
        # float64, so it never holds a float64 copy of a float32 X
        with explained_data_errors(self, X):
            return validate_data(
                self, X, y, accept_sparse=SPARSE_FORMATS, dtype=(np.float64, np.float32),
                **kwargs
            )

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        with explained_data_errors(self, X):
            return validate_data(
                self, X, accept_sparse=SPARSE_FORMATS, dtype=np.float64, reset=False
            )

    def _validate_sample_weight(self, sample_weight, X, private, y=None):
        """Weights clipped to ``[0, max_sample_weight]`` (a new array), or None for ones.

        On Dask, X, the weights and ``y`` (the targets, when given) are checked for NaN and
        infinity here, in one pass, before any private computation (in memory ``fit``'s
        validation has checked X and y already).

        ``private``: whether the fit is private (its budget's, which a pipeline's replaces:
        not the estimator's own ``epsilon``). Only a non-private fit refuses all-zero weights
        or warns of clipped ones: under privacy either would tell something of the weights.

        ``sample_weight=None`` means weights of one, as in scikit-learn, clipped like any other
        weights: with ``max_sample_weight < 1`` every row gets weight ``max_sample_weight`` (the
        noise is calibrated for that bound, so the weights used must respect it).
        """
        M = check_positive(self.max_sample_weight, "max_sample_weight")
        if is_dask(X):  # checked as in memory (skdp._dask), clipped on the workers
            with explained_data_errors(self, X):
                return dask_sample_weight(sample_weight, X, M, y)
        if sample_weight is None:
            return None if M >= 1.0 else np.full(X.shape[0], M)
        sw = check_sample_weight(sample_weight, X)
        if not private:
            # Only without privacy: under DP an all-zero weight vector is a valid data set (all
            # null records), and refusing it (or warning of clipped weights) would reveal
            # something of the weights.
            if not np.any(sw > 0):
                raise ValueError(
                    "sample_weight must contain at least one non-zero number; all weights are "
                    "zero"
                )
            if np.any(sw > M):
                warn(
                    f"{type(self).__name__}: sample_weight has weights above "
                    f"max_sample_weight={M:g} (up to {float(sw.max()):g}), clipped to it: the fit "
                    "is not that of the weighted objective. Pass max_sample_weight at least the "
                    "largest weight (a public bound, under privacy).",
                    UserWarning,
                )
        return np.clip(sw, 0.0, M)

    # -- the fit ------------------------------------------------------------------------------
    def _checked_optimizer(self, X, n_outputs, n_samples, fit, lam):
        """The optimizer this fit runs, once every check that needs no private computation has
        passed: called before the first private release (a bound), so that a refusal of the
        options or of the model to warm-start from costs nothing and says nothing of the data.

        ``optimizer="auto"`` is resolved here from public values (n, the columns, the budget,
        a public row bound); then the optimizer's support of a warm start and of Dask inputs,
        and the shape of the model a warm start starts from.
        """
        _, _, data_norm, _, optimizer = self._check_common_params(n_samples)
        if optimizer is None:  # "auto"
            public_norm = public_data_norm(data_norm, fit)
            optimizer = self._resolve_optimizer(self._auto_optimizer(
                n_samples, X.shape[1] + bool(self.fit_intercept), fit, public_norm, lam,
                is_dask(X),
            ))
        if self.warm_start and not optimizer.supports_warm_start:
            raise ValueError(
                f"warm_start=True is not supported by {optimizer.name or type(optimizer).__name__}"
                ": it cannot start from a fitted model (dp_scd is a dual method whose start "
                "would be its secret dual state); use warm_start=False or another optimizer"
            )
        if is_dask(X):
            from ..optimizers._loops import check_distributed  # numba: only for Dask fits

            check_distributed(optimizer, n_samples)  # before any work on the cluster
        if self.warm_start:
            self._check_warm_shape(X.shape[1], n_outputs)
        return optimizer

    def _fit_problem(
        self, X, Y, loss, lam, clip_default, n_samples, sample_weight=None, private_fit=None,
        target_map=(0.0, 1.0), weights_validated=False, optimizer=None,
    ):
        """Clip, build the problem, run the optimizer, store the fitted attributes.

        ``clip_default`` is the derivative clip of ``derivative_clip="auto"`` in the units of
        ``Y``: a number, or a function of the resolved optimizer and the fit's public
        signal-to-noise ratio (:func:`~skdp.optimizers._defaults.snr` of n, the columns and
        the fit's budget): DPRidge's residual clip follows the optimizer,
        DPLogisticRegression's derivative clip both.
        ``sample_weight`` is the caller's argument of ``fit``, or (``weights_validated=True``)
        what :meth:`_validate_sample_weight` made of it for this fit. ``private_fit``
        (a :class:`~skdp.linear_model._bounds.PrivateFit`) carries the budget, generator and
        bounds events of a fit that already released private bounds (DPRidge's ``y_bounds``).
        ``target_map`` is ``(offset, scale)``, the public affine map of the caller's targets
        that ``Y`` is, ``(y - offset) / scale`` (DPRidge's; the identity for the classifiers):
        a warm start and an explicit ``derivative_clip`` (in the targets' own units) go through
        it. ``optimizer``: what :meth:`_checked_optimizer` returned for a fit that released
        bounds before this call (None: checked here).

        Returns the coefficient matrix of shape (p, K) in the clipped design's parameterisation.
        """
        params = self.get_params(deep=False)  # (a callback must not change them mid-fit)
        epsilon, delta, data_norm, s, _ = self._check_common_params(n_samples)
        fit = private_fit if private_fit is not None else PrivateFit(self, n_samples)
        epsilon, delta = fit.epsilon, fit.delta  # a PrivatePipeline's budget replaces the params
        callback, every = check_callback(self.callback, self.callback_every)
        if optimizer is None:
            optimizer = self._checked_optimizer(X, Y.shape[1], n_samples, fit, lam)
        sw = sample_weight if weights_validated else self._validate_sample_weight(
            sample_weight, X, fit.private, Y)
        data_norm, row_scale, norms = resolve_data_norm(data_norm, X, fit, sw)
        if not ROW_NORM_RANGE[0] <= data_norm <= ROW_NORM_RANGE[1]:
            # the fit works in units of data_norm (its square divides the regularisation)
            raise ValueError(
                f"the row-norm bound data_norm={data_norm:.3g} is outside the range skdp fits in "
                f"float64, [{ROW_NORM_RANGE[0]:g}, {ROW_NORM_RANGE[1]:g}]: rescale X (or its "
                "bound) by a public constant"
            )
        if fit.private:  # the released or public row bound: public
            optimizer.check_regularisation(lam * n_samples / data_norm**2, loss)
        s = row_scale if s == "auto" else s
        init = (self._warm_point(X.shape[1], Y.shape[1], s, target_map) if self.warm_start
                else None)
        # the release the fit starts from (None: a cold start); read before it is replaced
        start = self._warm_start_record() if init is not None else None
        # its chain's streams; whether this fit shares one, or cannot be checked against them
        chain_streams, shared_stream, unverified = self._chain_check(start, fit)
        what = optimizer.name or type(optimizer).__name__
        R = math.hypot(data_norm, s) if self.fit_intercept else data_norm
        # the typical row (public: the released median under data_norm="auto", else the bound),
        # for the step sizes that would otherwise assume every row at the bound
        typical = math.hypot(row_scale, s) if self.fit_intercept else row_scale
        unit = data_norm
        if not fit.private and norms is None:  # epsilon=inf under a public bound
            # the units of the rows' own largest norm within it: the solver's tolerance, on the
            # gradient in those units, is not loosened by the factor of a generous bound
            top, norms = exact_largest_norm(X, sw)
            unit = max(min(top, data_norm), ROW_NORM_RANGE[0])
        if is_dask(X):  # the same preparation, chunk by chunk on the workers
            Xc = DaskDesign(
                X, Y, sw, data_norm, s if self.fit_intercept else None, unit,
                float(self.max_sample_weight),
            )
        else:
            # The optimizer works in units of data_norm: rows of norm <= 1, the scale its step
            # rules and heuristics assume. An exact reparameterisation of the same objective
            # (X_u = X / D, W_u = D W, lam_u = lam / D^2); nothing changes when D = 1.
            with compile_notice(what, self.verbose):  # a first fit says so when numba compiles
                Xc = clipped_design(X, data_norm, s if self.fit_intercept else None, unit, norms)
            Y = np.ascontiguousarray(Y, dtype=np.float64)
        del norms  # not held through the optimizer's run (peak memory)
        if unit != 1.0:  # (the clipped copy, in memory or on Dask, is already in these units)
            R, lam, typical = R / unit, lam / unit**2, typical / unit
            init = None if init is None else init * unit
        private = math.isfinite(epsilon)
        if not private:
            clip = math.inf  # no privacy: no derivative clipping, the plain objective
        elif self.derivative_clip == "auto":  # a number, or a rule of the optimizer and s
            clip = (clip_default(optimizer, snr(
                n_samples, X.shape[1] + bool(self.fit_intercept), budget_rho(epsilon, delta)))
                if callable(clip_default) else clip_default)
        else:
            clip = float(self.derivative_clip) / target_map[1]
        problem = Problem(
            X=Xc, Y=Y, loss=loss, lam=lam,
            row_norm_bound=R, clip=clip, fit_intercept=bool(self.fit_intercept),
            sample_weight=sw,
            max_sample_weight=float(self.max_sample_weight), init=init,
            typical_row_norm=typical,  # (Problem clamps it to R)
        )
        ledgers, source = fit.ledgers, fit.source  # prechecked when the fit started
        if ledgers and not private:
            warn(
                f"{source} was fitted with epsilon=inf (no noise, not private) and is charged to "
                "a ledger without a ceiling, whose total is now infinite",
                UserWarning,
            )
        try:
            with compile_notice(what, self.verbose):  # a first fit says so when numba compiles
                result, record = fit.solve(optimizer, problem, callback, every)
        finally:
            if is_dask(X):
                Xc.close()  # the persisted chunks are not needed after the fit
        # Ledgers are charged with this fit's own event (the start was charged by its own fit);
        # the model's record composes the start's history with it.
        # (not private when its stream is, or cannot be told apart from, one of the chain's: a
        # ledger with a ceiling refuses it, as it refuses a stream it sees twice; the ledger
        # may not have seen the chain's earlier fits)
        charged = not_private(record) if (shared_stream or unverified) and private else record
        charge(ledgers, charged, source, epsilon, delta, n_samples=int(n_samples),
               stream=fit.stream)
        # What the fit resolved and released (the private row bound, the intercept scaling read
        # from it) is set only now, once charged: a callback reading the estimator during the
        # run sees none of it, so a fit that fails cannot hand out an uncharged release.
        self._check_params_unchanged(params)
        self.optimizer_ = optimizer
        self.data_norm_ = data_norm
        self.intercept_scaling_ = s
        self.derivative_clip_ = clip * target_map[1]  # in the targets' own units
        if getattr(self, "_skdp_pipeline_plan", None) is not None:
            # for the pipeline's one charge, which drops them: this fit's streams and its own
            # record (a warm start's chain, composed below, was charged by its earlier fits)
            self._skdp_stream_state = fit.stream
            self._skdp_fit_record = charged
        # the fit's stream, with its chain's, for the next warm start's check
        remember_streams(self, fit.stream, chain_streams)
        if start is not None:
            record = warm_started_record(start, record, delta, record.accountant,
                                         shared_stream or unverified)
        _warn_of_chain(source, record, private, shared_stream, unverified)
        self.privacy_record_ = record
        self.dp_event_ = record.event
        self.epsilon_ = record.epsilon
        self.delta_ = record.delta
        self.noise_multiplier_ = record.noise_multiplier
        self.n_iter_ = int(result.n_iter)
        # the optimizer's "auto"/None defaults as resolved by its public rules (issue 15)
        self.hyperparameters_ = dict(result.extras.get("hyperparameters", {}))
        if self.verbose:
            chain = record.details.get("warm_start_history", ())
            print(
                f"[{type(self).__name__}] {optimizer.name}: {self.n_iter_} iterations, "
                f"epsilon spent {self.epsilon_:.4g} at delta {self.delta_:.3g} "
                + (f"by its warm-start chain of {len(chain)} fits " if chain else "")
                + f"({record.mechanism}, noise multiplier {self.noise_multiplier_:.4g})"
            )
        if self.verbose >= 2:
            print(
                f"[{type(self).__name__}] released {record.n_steps} noisy steps, sampling "
                f"{record.sampling}, sensitivity {record.sensitivity:.4g}, relation: "
                f"{record.relation}"
            )
            for ledger in ledgers:
                print(
                    f"[{type(self).__name__}] {ledger._label()}: {len(ledger)} charges, "
                    f"epsilon spent {ledger.spent():.4g} of {ledger.epsilon:.4g} at delta "
                    f"{ledger.delta:.3g}"
                )
        return result.coef / unit if unit != 1.0 else result.coef

    def _check_params_unchanged(self, params):
        """Raise when a parameter was set during the fit (by its callback, say): the model was
        fitted under the old values, and the fitted attributes would mix the two."""
        changed = sorted(k for k, v in self.get_params(deep=False).items()
                         if not _same_value(v, params[k]))
        if changed:
            raise RuntimeError(
                f"the parameters {changed} of {type(self).__name__} were changed during its fit "
                "(by its callback?); set them before fit. The fit is discarded."
            )

    def _warm_point(self, n_features, n_outputs, intercept_scaling, target_map=(0.0, 1.0)):
        """The fitted ``coef_`` / ``intercept_`` as the clipped design's (p, K) matrix, or None.

        None (a cold start) when the estimator is not fitted. A fitted model of another shape
        (other n_features or number of classes / outputs) raises, as scikit-learn's
        ``LogisticRegression(warm_start=True)`` does. The intercept row is the intercept minus
        the public shift ``fit`` adds (DPRidge's target centre), divided by the scaling; the
        model is expressed in the targets' units of the fit (``target_map``, see
        :meth:`_fit_problem`).
        """
        coef = self._check_warm_shape(n_features, n_outputs)
        if coef is None:
            return None
        offset, scale = target_map
        if not self.fit_intercept:
            return np.ascontiguousarray(coef.T / scale)
        intercept = np.atleast_1d(np.asarray(self.intercept_, dtype=np.float64))
        intercept = (intercept - offset) / scale / float(intercept_scaling)
        return np.ascontiguousarray(np.vstack([coef.T / scale, intercept[None, :]]))

    def _check_warm_shape(self, n_features, n_outputs):
        """The fitted ``coef_`` as a 2-D float array (None when not fitted); ValueError when its
        shape is not ``(n_outputs, n_features)``."""
        coef = getattr(self, "coef_", None)
        if coef is None:
            return None
        coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
        if coef.shape != (n_outputs, n_features):
            raise ValueError(
                f"warm_start=True: the fitted coef_ has shape {coef.shape} but this fit needs "
                f"{(n_outputs, n_features)} (another number of features, classes or targets); use "
                "warm_start=False for a cold start"
            )
        return coef

    def _warm_start_record(self):
        """The privacy record of the fitted model a warm start starts from.

        A model whose ``coef_`` or ``intercept_`` was not released by a skdp fit (set by hand on
        an unfitted estimator, or set or changed after the fit: the digest the fit kept no
        longer matches) is not what the record covers: its origin is unknown, so it counts as a
        non-private release.
        """
        record = getattr(self, "privacy_record_", None)
        released = getattr(self, RELEASE_DIGEST, None)
        if (not isinstance(record, PrivacyRecord)
                or released != release_digest(self.coef_, self.intercept_)):
            return nonprivate_record(0)
        return record

    def _chain_check(self, start, fit):
        """``(chain_streams, shared, unverified)`` of a fit that starts from the release whose
        record is ``start`` (None: a cold start, which begins a new chain: empty, False, False).

        ``chain_streams``: the stream tags (:mod:`skdp._streams`) of the start's chain (in a
        pipeline: with the pipeline's earlier fits' streams, the chain of its other steps).
        This fit's streams (its own, a pipeline's private steps') against the chain's
        (:func:`~skdp._streams.compare_streams`): ``shared``, one of them again; ``unverified``,
        a seeded one that cannot be compared with a seeded stream of the chain (a chain fitted
        in another Python session keeps tags this one cannot compare, and the same script run
        again repeats its seeds); fresh randomness is never in doubt. Either way no composition
        bounds the chain.

        Reads only (``fit`` is the fit's :class:`~skdp.linear_model._bounds.PrivateFit`): the
        caller keeps this fit's tags (:func:`~skdp._streams.remember_streams`) once it is
        charged.
        """
        if start is None:
            return frozenset(), False, False
        plan = fit.plan
        chain_streams = released_streams(self) | plan.chain_streams
        relation = compare_streams(object_tags(fit.stream) | plan.step_streams, chain_streams)
        shared, unverified = relation == SHARED, relation == UNVERIFIED
        return chain_streams, shared, unverified

    def _split_coef(self, W):
        """(coef (K, d), intercept (K,)) in the original feature space from W of shape (p, K)."""
        if self.fit_intercept:
            return W[:-1].T.copy(), W[-1] * float(self.intercept_scaling_)
        return W.T.copy(), np.zeros(W.shape[1])

    def _decision(self, X):
        """``clip(X) @ coef_.T + intercept_``: the function the fit learned, whose rows were
        scaled to norm at most ``data_norm_`` (see :func:`prediction_row_factors`)."""
        X = self._validate_X_predict(X)
        scores = np.asarray(X @ self.coef_.T, dtype=np.float64)
        factors = prediction_row_factors(X, self.data_norm_)
        scores *= factors[:, None] if scores.ndim == 2 else factors
        return scores + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
