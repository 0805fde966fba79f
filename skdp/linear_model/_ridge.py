"""DPRidge."""

import math

import numpy as np
from sklearn.base import RegressorMixin, _fit_context

from .._validation import AUTO, POSITIVE, check_positive
from ..losses import get_loss
from ..optimizers._defaults import budget_rho, prefers_accelerated_ridge, ridge_fallback
from ._base import DPLinearModel, releases_model
from ._bounds import PrivateFit, check_y_bounds, resolve_target_bounds
from ._docs import fill

__all__ = ["DPRidge"]


class DPRidge(RegressorMixin, DPLinearModel):
    # The default optimizer is dp_scd for the ridge: on wine quality and diabetes it is the only
    # one with a positive R^2 from epsilon 0.5 (benchmarks/results/utility_wine.md).
    __doc__ = fill(
        """Differentially private ridge regression.

    Minimises the objective of :class:`sklearn.linear_model.Ridge`,
    ``||y - X w||^2 + alpha ||w||^2`` (scaled by ``1/(2n)``: mean of ``(y - x.w)^2 / 2`` +
    ``lam/2 ||w||^2`` with ``lam = alpha / n``), with the intercept regularised too. Targets are
    clipped to the public ``y_bounds`` and centred on their midpoint (a public shift; with
    ``fit_intercept=False`` they keep their origin), and a private fit's optimizer sees them
    divided by the bounds' half-range (their largest magnitude without an intercept; an exact
    reparameterisation: the model is the same function of the data in any units of y); the
    residual is clipped to ``derivative_clip`` (a Huber loss, in the targets' units) so that
    gradients are bounded.

    A y of shape (n_samples, n_targets) is fitted in one fit under one guarantee, as
    :class:`sklearn.linear_model.Ridge` fits it: each column is clipped to its own bounds and
    seen in units of its own half-range, and the residuals of a record are clipped jointly (the
    record's K residuals are one vector, as a classifier's K margins are), so the noise is that
    of one target, not of K fits (compare :class:`sklearn.multioutput.MultiOutputRegressor`,
    whose K fits compose; see :doc:`/user_guide/budget`).

    Parameters
    ----------
    %(privacy_params)s
    alpha : float > 0, default=1.0
        Regularisation strength, as in scikit-learn.
    y_bounds : "auto", tuple (low, high) or array-like of shape (n_targets, 2), default="auto"
        Bounds of the target; targets outside are clipped to them and the fit is centred on
        their midpoint (not with ``fit_intercept=False``). A pair is a public bound (free; it must not be derived from the private
        data), applied to every column of a 2-D y; an array gives each column its own pair.
        "auto": the private median of y plus or minus 2.35 private upper quartiles of
        ``|y - median|`` (2.7 standard deviations for normal targets; 4 private median absolute
        deviations where the quartile's release would be unreliable; 4 private medians of the
        other targets' distance to the centre where more than three quarters of the targets
        share its value), for 10% of the fit's zCDP budget (up to 40% on small data sets) and
        up to 2% for the third release (charged whether or not it is drawn),
        included in ``epsilon_`` (see
        :ref:`raw_data`); the exact range of y at ``epsilon=np.inf``. With several columns each
        column gets these releases, all of them together the shares of one column (each tail
        reserve raised to what a reliable release needs, all of them within its 2%). The values
        used are ``y_bounds_``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        The second shape for a 2-D y (as in scikit-learn).
    intercept_ : float or ndarray of shape (n_targets,)
    y_bounds_ : tuple (low, high) or ndarray of shape (n_targets, 2)
        The target bounds the fit used (the public pair, or the private estimate), per column
        for a 2-D y.
    %(privacy_attributes)s
    """,
        auto_rule=(
            "dp_scd, or dp_masg where the budget is large for the data (a signal-to-noise ratio "
            "``n sqrt(2 rho) / sqrt(p)`` of at least 300; see :doc:`/user_guide/"
            "choosing_an_optimizer`)"
        ),
        fallback="dp_masg from a ratio of 10 and dp_gdws below it",
    )

    _auto_default = "dp_scd"

    def _auto_choice(self, n_samples, n_columns, fit, public_norm, lam):
        """dp_scd, or dp_masg from a signal-to-noise ratio of 300 (session 37:
        :func:`~skdp.optimizers._defaults.prefers_accelerated_ridge`). Public quantities only:
        n, the columns with the intercept and the budget; the same rule with public and private
        bounds."""
        if fit.private and prefers_accelerated_ridge(
                n_samples, n_columns, budget_rho(fit.epsilon, fit.delta)):
            return "dp_masg"
        return self._auto_default

    def _fallback_choice(self, n_samples, n_columns, fit):
        """Where dp_scd cannot run (Dask input, ``warm_start``): dp_masg from a signal-to-noise
        ratio of 10, dp_gdws below (session 53:
        :func:`~skdp.optimizers._defaults.ridge_fallback`). Public quantities only."""
        rho = budget_rho(fit.epsilon, fit.delta) if fit.private else float("inf")
        return ridge_fallback(n_samples, n_columns, rho)

    # y_bounds also accepts "auto" (a private estimate of the bounds, charged to the fit).
    _parameter_constraints: dict = {
        **DPLinearModel._parameter_constraints,
        "alpha": [POSITIVE],
        "y_bounds": ["array-like", AUTO],
    }

    def __init__(
        self, epsilon=1.0, delta=None, optimizer="auto", alpha=1.0, fit_intercept=True,
        intercept_scaling="auto", data_norm="auto", y_bounds="auto", derivative_clip="auto",
        accountant="rdp", random_state=None, verbose=0, ledger=None,
        secure_mode=False, max_sample_weight=1.0, warm_start=False, callback=None,
        callback_every=1, max_iter=None, tol=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.optimizer = optimizer
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.data_norm = data_norm
        self.y_bounds = y_bounds
        self.derivative_clip = derivative_clip
        self.accountant = accountant
        self.random_state = random_state
        self.verbose = verbose
        self.ledger = ledger
        self.secure_mode = secure_mode
        self.max_sample_weight = max_sample_weight
        self.warm_start = warm_start
        self.callback = callback
        self.callback_every = callback_every
        self.max_iter = max_iter
        self.tol = tol

    @releases_model
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Dense or sparse (CSR/CSC; never densified) features.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Non-negative example weights, clipped to ``[0, max_sample_weight]``; each example's
            loss is multiplied by its weight. None: weights of one.

        Returns
        -------
        self
        """
        X, y = self._validate_X_y(X, y, y_numeric=True, multi_output=True)
        if y.dtype.kind not in "biuf":
            raise ValueError(
                f"{type(self).__name__} is a regressor: y must be numeric; got an array of dtype "
                f"{y.dtype} (for example {str(y[0])!r})"
            )
        alpha = check_positive(self.alpha, "alpha")
        one_column = y.ndim == 1  # the fitted attributes keep y's shape, as in scikit-learn
        Y = y[:, None] if one_column else y
        K = Y.shape[1]
        check_y_bounds(self.y_bounds, K)
        if K > 1 and not (isinstance(self.derivative_clip, str)
                          and self.derivative_clip == "auto"):
            raise ValueError(
                f"derivative_clip must be 'auto' for a y of several columns (got "
                f"{self.derivative_clip!r}): the residual vector is clipped jointly in units of "
                "each target's half-range, which is no single number in the targets' units"
            )
        n = X.shape[0]
        fit = PrivateFit(self, n)
        optimizer = self._checked_optimizer(X, K, n, fit, alpha / n)  # before any release
        sw = self._validate_sample_weight(sample_weight, X, fit.private, Y)  # (weighted bounds)
        low, high = resolve_target_bounds(self.y_bounds, Y, fit, sw)
        # A private fit's optimizer sees targets in [-1, 1]: an exact reparameterisation of the
        # same ridge objective (y' = (y - centre) / half, W' = W / half, column by column; lam
        # unchanged), in which its public rules (step counts, times, the residual clip) are free
        # of the targets' units: the same data in other units gives the same model in those
        # units. At epsilon=inf (no rule, no clip) one target keeps its units, and the exact
        # solver's absolute tolerance its precision in them; several are scaled as in a private
        # fit, so that a column in large units does not set the solver's stopping point alone.
        # Without an intercept nothing can carry the shift back: the targets keep their origin
        # (the model passes through it, as Ridge(fit_intercept=False)) and are divided by their
        # largest bound in magnitude, so they are in [-1, 1] all the same.
        if self.fit_intercept:
            centre, half = (low + high) / 2.0, (high - low) / 2.0
        else:
            centre, half = np.zeros_like(low), np.maximum(np.abs(low), np.abs(high))
        if not (math.isfinite(fit.epsilon) or K > 1):
            half = np.ones(1)
        Y = (np.clip(Y, low, high) - centre) / half
        # The residual clip follows the optimizer (resolved in _fit_problem, "auto" included):
        # its rule's target bound is the largest residual at W = 0, sqrt(K) for K columns in
        # [-1, 1] (the K residuals of a record are clipped jointly, as one release).
        W = self._fit_problem(
            X, Y, get_loss("squared"), alpha / n,
            lambda optimizer, s: optimizer.default_squared_clip(math.sqrt(K)), n, sw,
            fit, target_map=(float(centre[0]), float(half[0])) if K == 1 else (centre, half),
            weights_validated=True, optimizer=optimizer,
        )
        # the released bounds are set once the fit is charged (_fit_problem), not before: a
        # callback that reads them during a fit that then fails would hold an uncharged release
        self.y_bounds_ = (float(low[0]), float(high[0])) if one_column else np.column_stack(
            [low, high])
        coef, intercept = self._split_coef(W)
        coef, intercept = coef * half[:, None], intercept * half + centre
        if one_column:
            self.coef_, self.intercept_ = coef[0], float(intercept[0])
        else:
            self.coef_, self.intercept_ = coef, intercept
        return self

    def predict(self, X):
        """Predicted targets, shape (n_samples,), or (n_samples, n_targets) for a model fitted on
        a y of shape (n_samples, n_targets)."""
        scores = self._decision(X)
        return scores if np.ndim(self.coef_) == 2 else scores.ravel()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # At the default budget (epsilon=1) on scikit-learn's 200-row check data the DP noise
        # dominates (R^2 < 0.5); the same check data gives R^2 > 0.8 at epsilon=inf
        # (tests/test_estimators.py::test_ridge_check_data_without_noise).
        tags.regressor_tags.poor_score = True
        tags.target_tags.multi_output = True  # one fit, one guarantee, for all columns of y
        return tags
