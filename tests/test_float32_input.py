"""float32 designs (issue 16): a fit reads them in place, without a copy of X, and gives the same
model as the same rows in float64 (the kernels compute in float64; the conversion is exact)."""

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


@pytest.mark.parametrize("make,same_bits", [
    (lambda: DPLogisticRegression(random_state=0, max_iter=5), True),
    (lambda: DPLinearSVC(random_state=0, max_iter=5), True),
    (lambda: DPRidge(random_state=0, optimizer="dp_gdws", max_iter=5), True),
    (lambda: DPRidge(random_state=0), False),  # dp_scd, y_bounds="auto"
])
def test_float32_fit_equals_float64_fit(make, same_bits):
    """The kernels read float32 entries in place and compute in float64 (exact conversion).
    The full-batch gradient sums give the same bits; dp_scd's fused dot products and squared
    norms are vectorised with another summation order for float32 loads (fastmath's
    reassociation), so its model is the same up to that rounding."""
    X, y = _data(n=3000)
    X_before = X.copy()
    a = make().fit(X, y)
    b = make().fit(X.astype(np.float64), y)
    if same_bits:
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.intercept_, b.intercept_)
    else:
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-10)
        np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-6, atol=1e-10)
    assert a.data_norm_ == b.data_norm_ and a.epsilon_ == b.epsilon_
    if same_bits:
        np.testing.assert_array_equal(a.predict(X), b.predict(X.astype(np.float64)))
    else:
        # 1e-6 of the predictions' scale: an element-wise relative check is undefined where a
        # prediction crosses 0 (two of 3000 here are ~1e-8 and differ by 4e-14)
        pred = b.predict(X.astype(np.float64))
        np.testing.assert_allclose(a.predict(X), pred, rtol=1e-6, atol=1e-6 * np.abs(pred).max())
    np.testing.assert_array_equal(X, X_before)  # the caller's array is not touched


# slow: about 10 s (compile and data) of the 5-minute default run; CI runs it
@pytest.mark.slow
@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(random_state=0, max_iter=5),
    lambda: DPRidge(random_state=0, optimizer="dp_gdws", max_iter=5),
])
def test_float32_fit_holds_no_float64_copy_of_x(make):
    X, y = _data(n=200000)  # per-row buffers (8 bytes a row each) are 4% of X each at d = 50
    est = make()
    clone(est).fit(X[:200], y[:200])  # compile outside the measurement
    tracemalloc.start()
    try:
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the fit reads X in place: a copy of X in any dtype would bring the peak past 1x (the
    # clipped float64 copy it wrote before: 2 (d + 1) / d by itself); the rest is per-row
    # buffers (about 0.45x here) and a float64 block of rows for the row norms
    assert peak < 1.0 * X.nbytes, peak / X.nbytes
