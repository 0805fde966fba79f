"""DPLinearSVC."""

from sklearn.base import ClassifierMixin, _fit_context
from sklearn.utils._param_validation import StrOptions

from .._validation import POSITIVE, check_positive
from ..losses import get_loss
from ..optimizers._defaults import SVC_DUAL_MAX_SNR
from ._base import DPLinearModel, releases_model
from ._classifier import encode_labels, resolve_classes, state_label_set
from ._docs import fill

__all__ = ["DPLinearSVC"]


class DPLinearSVC(ClassifierMixin, DPLinearModel):
    __doc__ = fill(
        """Differentially private linear support vector classifier (squared hinge loss).

    Minimises the objective of ``sklearn.svm.LinearSVC(loss="squared_hinge")``,
    ``C * sum_i max(0, 1 - y_i w.x_i)^2 + 1/2 ||w||^2`` (scaled by ``1/(n C)``), with the
    intercept regularised as liblinear does. The squared hinge is smooth, which the private
    optimizers need; its derivative is clipped to ``derivative_clip`` (a Huberised squared hinge).
    Multiclass problems are one-vs-rest, where the derivatives of all classes of one example are
    clipped jointly and released in one noisy step, so the whole fit is one guarantee.

    Parameters
    ----------
    %(privacy_params)s
    C : float > 0, default=1.0
        Inverse regularisation strength, as in scikit-learn.
    loss : {"squared_hinge"}, default="squared_hinge"
        Only the smooth squared hinge is supported.
    classes : array-like or None, default=None
        The public label set. When omitted the labels are read from y, which reveals which
        labels occur in the training data: ``epsilon_`` then holds between data sets with the
        same label set, and ``privacy_record_.relation`` says so
        (:data:`skdp.privacy.PUBLIC_LABEL_SET`).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    %(privacy_attributes)s
    """,
        auto_rule=(
            "dp_gdws for binary problems (dp_scd where the budget is small for the data, "
            "s = n sqrt(2 rho) / sqrt(p) below 8, with a public row bound and C * "
            "data_norm**2 <= 16; :func:`skdp.optimizers._defaults.prefers_dual`), dp_nag_opt "
            "for multiclass (one-vs-rest) problems (measured on public data: docs, *Which "
            "optimizer when*)"
        ),
    )

    def _auto_choice(self, n_samples, n_columns, fit, public_norm, lam):
        """Binary: dp_gdws (since session 12, when its squared-hinge step was shortened where
        the budget is small for the data: on the defaults grid's development part ahead of
        dp_nag_opt by 0.3 points on average at the public row bound, and by 0.75 at all the
        estimator's defaults, with 5 cells below the Opacus anchor against 9). Multiclass:
        dp_nag_opt (level on average on standardised digits, wine and iris, but dp_gdws lost
        up to 10 points on wine; ``benchmarks/dev_rules_s12_checks.py``). The number of classes
        is public (``classes``) or read from y as ``classes_`` is. Binary with a public row bound
        at a small budget for the data: dp_scd (session 13, with its squared-hinge update clip;
        :data:`~skdp.optimizers._defaults.SVC_DUAL_MAX_SNR`)."""
        if len(self.classes_) > 2:
            return "dp_nag_opt"
        if self._dual_preferred(n_samples, n_columns, fit, public_norm, lam, SVC_DUAL_MAX_SNR):
            return "dp_scd"
        return "dp_gdws"

    _parameter_constraints: dict = {
        **DPLinearModel._parameter_constraints,
        "C": [POSITIVE],
        "loss": [StrOptions({"squared_hinge"})],
        "classes": ["array-like", None],
    }

    def __init__(
        self, epsilon=1.0, delta=None, optimizer="auto", C=1.0, loss="squared_hinge",
        fit_intercept=True, intercept_scaling="auto", data_norm="auto", derivative_clip="auto",
        classes=None, accountant="rdp", random_state=None, verbose=0, ledger=None,
        secure_mode=False, max_sample_weight=1.0, warm_start=False, callback=None,
        callback_every=1, max_iter=None, tol=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.optimizer = optimizer
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.data_norm = data_norm
        self.derivative_clip = derivative_clip
        self.classes = classes
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
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Non-negative example weights, clipped to ``[0, max_sample_weight]``; each example's
            loss is multiplied by its weight. None: weights of one.

        Returns
        -------
        self
        """
        X, y = self._validate_X_y(X, y)
        C = check_positive(self.C, "C")
        self.classes_, index = resolve_classes(self.classes, y)
        n, K = X.shape[0], self.classes_.shape[0]
        loss = get_loss("squared_hinge")
        Y = encode_labels(index, K, -1.0)
        W = self._fit_problem(
            X, Y, loss, 1.0 / (n * C), loss.default_clip(Y.shape[1]), n, sample_weight
        )
        self.coef_, self.intercept_ = self._split_coef(W)
        state_label_set(self)
        return self

    def decision_function(self, X):
        """Margins: shape (n_samples,) for binary problems, (n_samples, n_classes) otherwise."""
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted labels."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]
