"""float32 designs (issue 16): a fit reads them without a float64 copy of X, and gives the same
model as the same rows in float64 (the conversion to float64 is exact)."""

import tracemalloc

import numpy as np
import pytest
from sklearn.base import clone

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge


def _data(n=40000, d=50):
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((n, d)) * 10).astype(np.float32)
    y = (X[:, 0] + rng.standard_normal(n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(random_state=0, max_iter=5),
    lambda: DPLinearSVC(random_state=0, max_iter=5),
    lambda: DPRidge(random_state=0, optimizer="dp_gdws", max_iter=5),
    lambda: DPRidge(random_state=0),  # dp_scd, y_bounds="auto"
])
def test_float32_fit_equals_float64_fit(make):
    X, y = _data(n=3000)
    X_before = X.copy()
    a = make().fit(X, y)
    b = make().fit(X.astype(np.float64), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.data_norm_ == b.data_norm_ and a.epsilon_ == b.epsilon_
    np.testing.assert_array_equal(a.predict(X), b.predict(X.astype(np.float64)))
    np.testing.assert_array_equal(X, X_before)  # the caller's array is not touched


@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(random_state=0, max_iter=5),
    lambda: DPRidge(random_state=0, optimizer="dp_gdws", max_iter=5),
])
def test_float32_fit_holds_no_float64_copy_of_x(make):
    X, y = _data()
    est = make()
    clone(est).fit(X[:200], y[:200])  # compile outside the measurement
    tracemalloc.start()
    try:
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the clipped float64 copy with its intercept column is 2 (d + 1) / d of X's bytes; a
    # float64 conversion of X on top of it would bring the peak past 4x
    assert peak < 3.5 * X.nbytes, peak / X.nbytes
