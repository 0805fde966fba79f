"""Shared test helpers: data, the objective gap against scikit-learn, optimizer lists."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.preprocessing import Normalizer, StandardScaler
from sklearn.svm import LinearSVC

from skdp.datasets import find_data_dir, load_adult
from skdp.estimator_checks import PRIVATE_FIT_FAILURES
from skdp.losses import get_loss, objective
from skdp.optimizers import available_optimizers

OPTIMIZERS = available_optimizers()

needs_shared_data = pytest.mark.skipif(
    find_data_dir() is None, reason="../shared/data (UCI Adult) not available"
)


def unit_rows(X):
    """Standardise then scale rows to unit norm (so row clipping to data_norm=1 is inactive)."""
    return Normalizer().fit_transform(StandardScaler().fit_transform(X))


def unit_row_classification(n, d, seed=0, noise=0.2):
    """``(X, y)``: n Gaussian rows scaled to norm 1 (the public bound ``data_norm=1``), labels
    from the first feature plus ``noise`` times Gaussian noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + noise * rng.normal(size=n) > 0).astype(int)
    return X, y


def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return unit_rows(X), y


def iris():
    X, y = load_iris(return_X_y=True)
    return unit_rows(X), y


def diabetes():
    """Diabetes with rows of unit norm and targets mapped into [-1, 1] (public bounds 1 and
    (-1, 1), the defaults before "auto")."""
    X, y = load_diabetes(return_X_y=True)
    return unit_rows(X), (y - 185.0) / 165.0


def adult_subset(n=None):
    X, y, Xt, yt = load_adult()
    if n is not None:
        X, y = X[:n], y[:n]
    return X, y, Xt, yt


def augmented(X):
    return np.hstack([X, np.ones((X.shape[0], 1))])


def sklearn_reference(kind, X, y, reg=1.0):
    """scikit-learn's solution of the same objective (intercept as a regularised column).

    Returns W of shape (p, K) for the augmented design.
    """
    Xa = augmented(X)
    if kind == "logistic":
        est = LogisticRegression(C=reg, fit_intercept=False, tol=1e-12, max_iter=100000)
        est.fit(Xa, y)
        return np.ascontiguousarray(est.coef_.T)
    if kind == "svc":
        est = LinearSVC(C=reg, fit_intercept=False, tol=1e-12, max_iter=100000, dual=False)
        est.fit(Xa, y)
        return np.ascontiguousarray(est.coef_.T)
    if kind == "ridge":
        est = Ridge(alpha=reg, fit_intercept=False, tol=1e-12, solver="cholesky")
        est.fit(Xa, y)
        return np.ascontiguousarray(est.coef_[:, None])
    raise ValueError(kind)


def encoded(kind, y):
    """(loss name, Y matrix) the estimators use for targets y."""
    classes = np.unique(y)
    if kind == "ridge":
        return "squared", np.asarray(y, float)[:, None]
    if len(classes) == 2:
        Y = np.where(y == classes[1], 1.0, -1.0)[:, None]
        return ("logistic" if kind == "logistic" else "squared_hinge"), Y
    idx = np.searchsorted(classes, y)
    if kind == "logistic":
        return "multinomial", np.eye(len(classes))[idx]
    Y = -np.ones((len(y), len(classes)))
    Y[np.arange(len(y)), idx] = 1.0
    return "squared_hinge", Y


def estimator_W(est):
    """The fitted estimator's coefficients as W (p, K) on the augmented design."""
    coef = np.atleast_2d(est.coef_)
    intercept = np.atleast_1d(est.intercept_)
    return np.ascontiguousarray(np.vstack([coef.T, intercept[None, :]]))


def relative_objective_gap(kind, est, X, y, reg=1.0):
    """(F(est) - F(sklearn)) / |F(sklearn)| on the objective both minimise."""
    n = X.shape[0]
    loss, Y = encoded(kind, y)
    lam = reg / n if kind == "ridge" else 1.0 / (n * reg)
    Xa = augmented(X)
    lid = get_loss(loss).loss_id
    f_est = objective(Xa, Y, estimator_W(est), lid, lam, np.inf)
    f_ref = objective(Xa, Y, sklearn_reference(kind, X, y, reg), lid, lam, np.inf)
    return (f_est - f_ref) / abs(f_ref)


#: scikit-learn checks that a private fit fails by design (the public list, see
#: skdp.estimator_checks and tests/test_sklearn_checks.py).
PRIVATE_ONLY_FAILURES = PRIVATE_FIT_FAILURES


@pytest.fixture(scope="module", autouse=True)
def fast_accounting():
    """Memoised accounting for a module of audits (every optimizer class imported first, so
    that their accounting functions are the memoised ones)."""
    from skdp.audit import memoized_accounting
    from skdp.optimizers import available_optimizers, get_optimizer_class

    for name in available_optimizers():
        get_optimizer_class(name)
    with memoized_accounting():
        yield
