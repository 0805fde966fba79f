"""skdp's warnings name the user's line (skdp._warnings), however deep the fit that raised them
and whichever scikit-learn machinery called the estimator."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp import DPLogisticRegression, DPRidge
from skdp.pipeline import make_private_pipeline


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, (X[:, 0] > 0).astype(int)


def _skdp_warnings(call):
    """The warnings of ``call()`` that skdp raised (by their messages), as recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    ours = ("is above 1/n_samples", "is unreliable", "did not converge at epsilon=inf")
    return [w for w in caught if any(s in str(w.message) for s in ours)]


def _fit_directly(est, X, y):
    return lambda: est.fit(X, y)


def _fit_in_pipeline(est, X, y):
    return lambda: make_pipeline(FunctionTransformer(), est).fit(X, y)


def _fit_in_search(est, X, y):
    return lambda: GridSearchCV(est, {"C": [1.0]}, cv=2).fit(X, y)


def _fit_in_private_pipeline(est, X, y):
    return lambda: make_private_pipeline(FunctionTransformer(), est, epsilon=0.3,
                                         delta=0.2).fit(X, y)


@pytest.mark.parametrize("route", [_fit_directly, _fit_in_pipeline, _fit_in_search,
                                   _fit_in_private_pipeline])
def test_fit_warnings_point_at_the_callers_line(route):
    """delta above 1/n (validation) and an unreliable private row bound (the bounds, three
    calls further in): each is attributed to this file, directly, in a Pipeline, in
    GridSearchCV and in a private pipeline."""
    X, y = _data(20)
    est = DPLogisticRegression(epsilon=0.3, delta=0.2)  # data_norm="auto" at n = 20: unreliable
    caught = _skdp_warnings(route(est, X, y))
    messages = {str(w.message).split(":")[0][:40] for w in caught}
    assert any("is unreliable" in str(w.message) for w in caught), messages
    assert all(w.filename == __file__ for w in caught), {(w.filename, w.lineno) for w in caught}


def test_the_convergence_warning_of_a_non_private_fit_points_at_the_caller():
    """epsilon=inf stopped by max_iter: the ConvergenceWarning comes from the optimizer's
    L-BFGS loop, several calls below fit."""
    X, y = _data(200)
    rng = np.random.default_rng(1)
    target = X @ rng.normal(size=3) + rng.normal(size=200)
    est = DPRidge(epsilon=np.inf, max_iter=1, data_norm=1.0, y_bounds=(-5, 5))
    caught = _skdp_warnings(lambda: est.fit(X, target))
    assert len(caught) == 1 and caught[0].filename == __file__

