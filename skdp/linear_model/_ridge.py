"""DPRidge."""

import math

import numpy as np
from sklearn.base import RegressorMixin, _fit_context

from .._validation import AUTO, POSITIVE, check_positive
from ..losses import get_loss
from ._base import DPLinearModel
from ._bounds import PrivateFit, check_y_bounds, resolve_y_bounds
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
    clipped to the public ``y_bounds`` and centred on their midpoint (a public shift), and a
    private fit's optimizer sees them divided by the bounds' half-range (an exact
    reparameterisation: the model is the same function of the data in any units of y); the
    residual is clipped to ``derivative_clip`` (a Huber loss, in the targets' units) so that
    gradients are bounded.

    Parameters
    ----------
    %(privacy_params)s
    alpha : float > 0, default=1.0
        Regularisation strength, as in scikit-learn.
    y_bounds : "auto" or tuple (low, high), default="auto"
        Bounds of the target; targets outside are clipped to them and the fit is centred on
        their midpoint. A pair is a public bound (free; it must not be derived from the private
        data). "auto": the private median of y plus or minus 2.35 private upper quartiles of
        ``|y - median|`` (2.7 standard deviations for normal targets; 4 private median absolute
        deviations where the quartile's release would be unreliable; 4 private medians of the
        other targets' distance to the centre where more than three quarters of the targets
        share its value), for 10% of the fit's zCDP budget (up to 40% on small data sets) and
        up to 2% for the third release (charged whether or not it is drawn),
        included in ``epsilon_`` (see
        :ref:`raw_data`); the exact range of y at ``epsilon=np.inf``. The values used are
        ``y_bounds_``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    y_bounds_ : tuple (low, high)
        The target bounds the fit used (the public pair, or the private estimate).
    %(privacy_attributes)s
    """,
        auto_rule="dp_scd",
    )

    _auto_default = "dp_scd"

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

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Dense or sparse (CSR/CSC; never densified) features.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Non-negative example weights, clipped to ``[0, max_sample_weight]``; each example's
            loss is multiplied by its weight. None: weights of one.

        Returns
        -------
        self
        """
        X, y = self._validate_X_y(X, y, y_numeric=True)
        if y.dtype.kind not in "biuf":
            raise ValueError(
                f"{type(self).__name__} is a regressor: y must be numeric; got an array of dtype "
                f"{y.dtype} (for example {str(y[0])!r})"
            )
        alpha = check_positive(self.alpha, "alpha")
        check_y_bounds(self.y_bounds)
        n = X.shape[0]
        self._check_common_params(n)
        fit = PrivateFit(self, n)
        sw = self._validate_sample_weight(sample_weight, X)  # exact bounds: weighted records
        low, high = self.y_bounds_ = resolve_y_bounds(self.y_bounds, y, fit, sw)
        # A private fit's optimizer sees targets in [-1, 1]: an exact reparameterisation of the
        # same ridge objective (y' = (y - centre) / half, W' = W / half; lam unchanged), in which
        # its public rules (step counts, times, the residual clip) are free of the targets'
        # units: the same data in other units gives the same model in those units. At
        # epsilon=inf (no rule, no clip) the targets keep their units, and the exact solver's
        # absolute tolerance its precision in them.
        centre = (low + high) / 2.0
        half = (high - low) / 2.0 if math.isfinite(fit.epsilon) else 1.0
        Y = ((np.clip(y, low, high) - centre) / half)[:, None]
        # the residual clip follows the optimizer (resolved in _fit_problem, "auto" included)
        W = self._fit_problem(
            X, Y, get_loss("squared"), alpha / n,
            lambda optimizer, s: optimizer.default_squared_clip(1.0), n, sample_weight, fit,
            target_map=(centre, half),
        )
        coef, intercept = self._split_coef(W)
        self.coef_ = coef[0] * half
        self.intercept_ = float(intercept[0]) * half + centre
        return self

    def predict(self, X):
        """Predicted targets, shape (n_samples,)."""
        return self._decision(X).ravel()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # At the default budget (epsilon=1) on scikit-learn's 200-row check data the DP noise
        # dominates (R^2 < 0.5); the same check data gives R^2 > 0.8 at epsilon=inf
        # (tests/test_estimators.py::test_ridge_check_data_without_noise).
        tags.regressor_tags.poor_score = True
        return tags
