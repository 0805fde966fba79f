"""DPLogisticRegression."""

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import ClassifierMixin, _fit_context

from .._validation import POSITIVE
from ..losses import get_loss
from ._base import DPLinearModel, releases_model
from ._classifier import encode_labels, resolve_classes, state_label_set
from ._docs import fill

__all__ = ["DPLogisticRegression"]


class DPLogisticRegression(ClassifierMixin, DPLinearModel):
    __doc__ = fill(
        """Differentially private L2-regularised logistic regression.

    Minimises the objective of :class:`sklearn.linear_model.LogisticRegression`,
    ``C * sum_i log_loss_i + 1/2 ||w||^2`` (scaled by ``1/(n C)``: mean loss +
    ``lam/2 ||w||^2`` with ``lam = 1/(n C)``), with the intercept regularised too. Binary
    problems use the logistic loss; multiclass problems the multinomial loss, where the
    gradient of all classes of one example is clipped jointly, so one fit is one guarantee.
    A private fit with a gradient method clips the derivative of the loss at
    ``derivative_clip_`` (by default its size at zero at a small budget for the data, 1/2 for
    a binary model, up to the never-active bound at a large one): at 1/2 the binary objective
    is the logistic loss on the examples the model classifies correctly, continued linearly
    with slope 1/2 through the misclassified ones (convex, and classification-calibrated); at
    ``epsilon=np.inf`` nothing is clipped and the objective is scikit-learn's.

    Parameters
    ----------
    %(privacy_params)s
    C : float > 0, default=1.0
        Inverse regularisation strength, as in scikit-learn.
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

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler, Normalizer
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdp import DPLogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = make_pipeline(Normalizer(), DPLogisticRegression(epsilon=1.0, random_state=0))
    >>> clf.fit(X, y).score(X, y) > 0.5
    True
    """,
        auto_rule=(
            "dp_gdws for binary problems; for multiclass problems dp_scd where the budget is "
            "small for the data (signal-to-noise ratio ``n sqrt(2 rho) / sqrt(p)`` below 16, p "
            "columns, rho the zCDP of (epsilon, delta)) and the row bound is public with "
            "``C * data_norm**2 <= 16``, dp_gdws otherwise (rule and measurements: "
            ":func:`skdp.optimizers._defaults.prefers_dual`)"
        ),
    )

    _parameter_constraints: dict = {
        **DPLinearModel._parameter_constraints,
        "C": [POSITIVE],
        "classes": ["array-like", None],
    }

    def __init__(
        self, epsilon=1.0, delta=None, optimizer="auto", C=1.0, fit_intercept=True,
        intercept_scaling="auto", data_norm="auto", derivative_clip="auto", classes=None,
        accountant="rdp", random_state=None, verbose=0, ledger=None,
        secure_mode=False, max_sample_weight=1.0, warm_start=False, callback=None,
        callback_every=1, max_iter=None, tol=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.optimizer = optimizer
        self.C = C
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
        from .._validation import check_positive

        X, y = self._validate_X_y(X, y)
        C = check_positive(self.C, "C")
        self.classes_, index = resolve_classes(self.classes, y)
        n, K = X.shape[0], self.classes_.shape[0]
        loss = get_loss("logistic" if K == 2 else "multinomial")
        Y = encode_labels(index, K, 0.0)
        # the derivative clip follows the optimizer and the public signal-to-noise ratio s
        # (resolved in _fit_problem)
        W = self._fit_problem(
            X, Y, loss, 1.0 / (n * C),
            lambda optimizer, s: optimizer.default_logistic_clip(s, K), n, sample_weight,
        )
        self.coef_, self.intercept_ = self._split_coef(W)
        state_label_set(self)
        return self

    def _auto_choice(self, n_samples, n_columns, fit, public_norm, lam):
        """Binary: dp_gdws. Multiclass: dp_scd at a small signal-to-noise ratio on a
        well-regularised problem with a public row bound, else dp_gdws
        (:func:`~skdp.optimizers._defaults.prefers_dual`). The number of classes is public
        (``classes``) or read from y as ``classes_`` is."""
        multiclass = len(self.classes_) > 2
        if multiclass and self._dual_preferred(n_samples, n_columns, fit, public_norm, lam):
            return "dp_scd"
        return "dp_gdws"

    def decision_function(self, X):
        """Margins: shape (n_samples,) for binary problems, (n_samples, n_classes) otherwise."""
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p1 = expit(scores)
            return np.column_stack([1.0 - p1, p1])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))

    def predict(self, X):
        """Predicted labels."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]
