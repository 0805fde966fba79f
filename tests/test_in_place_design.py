"""A fit reads the caller's dense X in place (issue 16): per-row clip factors, no clipped copy.

The design a fit runs on is ``scale[i] * x_i`` plus an intercept column (``skdp._rows.DenseRows``);
before, it was a clipped float64 copy of X (``clip_rows``). Both are the same rows up to rounding,
so every optimizer must give the same model from either, for every kind of fit.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp._rows import DenseRows, make_rows
from skdp.linear_model import _base as estimator_base
from skdp.linear_model._base import clip_rows, clipped_design
from skdp.optimizers import available_optimizers


def _copying_design(X, data_norm, intercept_scaling=None, unit=1.0, norms=None):
    return clip_rows(X, data_norm, intercept_scaling, unit, norms)


def _data(kind):
    if kind == "ridge":
        X, y = make_regression(300, 6, noise=5.0, random_state=0)
        return X * 3.0, y / 50.0
    X, y = make_classification(300, 6, n_informative=4, n_classes=3 if kind == "multiclass" else 2,
                               random_state=0)
    return X * 3.0, y


ESTIMATORS = {
    "binary": lambda **kw: DPLogisticRegression(**kw),
    "multiclass": lambda **kw: DPLogisticRegression(**kw),
    "svc": lambda **kw: DPLinearSVC(**kw),
    "ridge": lambda **kw: DPRidge(y_bounds=(-4.0, 4.0), **kw),
}


@pytest.mark.parametrize("optimizer", available_optimizers())
@pytest.mark.parametrize("kind", list(ESTIMATORS))
def test_fit_in_place_equals_fit_on_the_clipped_copy(monkeypatch, optimizer, kind):
    X, y = _data(kind)
    if kind == "svc":
        y = (y > 0).astype(int)
    weights = np.random.default_rng(1).uniform(0.0, 1.0, size=X.shape[0])
    X_before = X.copy()
    params = dict(epsilon=1.0, optimizer=optimizer, data_norm=4.0, random_state=3)
    in_place = ESTIMATORS[kind](**params).fit(X, y, sample_weight=weights)
    np.testing.assert_array_equal(X, X_before)  # read, never written
    monkeypatch.setattr(estimator_base, "clipped_design", _copying_design)
    copied = ESTIMATORS[kind](**params).fit(X, y, sample_weight=weights)
    assert in_place.epsilon_ == copied.epsilon_
    np.testing.assert_allclose(in_place.coef_, copied.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(in_place.intercept_, copied.intercept_, rtol=1e-7, atol=1e-9)


def test_the_design_shares_the_callers_memory():
    X = np.random.default_rng(0).normal(size=(50, 4)) * 10.0
    R = clipped_design(X, 2.0, 1.0, unit=2.0)
    assert isinstance(R, DenseRows) and np.shares_memory(R.values, X)
    assert R.weight.shape == R.scale.shape == (50,) and R.shape == (50, 5)
    X32 = X.astype(np.float32)  # read in place too (the kernels compute in float64)
    R = clipped_design(X32, 2.0, 1.0, unit=2.0)
    assert isinstance(R, DenseRows) and np.shares_memory(R.values, X32)
    # a Fortran-ordered X is copied once to rows in order, in its own dtype, no more
    for other in (np.asfortranarray(X), np.asfortranarray(X32)):
        R = clipped_design(other, 2.0, 1.0, unit=2.0)
        assert isinstance(R, DenseRows) and R.values.flags.c_contiguous
        assert R.values.dtype == other.dtype and not np.shares_memory(R.values, other)


def _frozen(a):
    out = a.copy()
    out.flags.writeable = False
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_read_only_and_writable_inputs_share_the_kernels(dtype):
    """The kernels only ever see read-only rows, so a caller's read-only X (a memmap, a Dask
    chunk, scikit-learn's read-only checks) or weights compile no second specialisation; and
    the rows of every design kind are read-only views."""
    from skdp.optimizers import _glm

    X, y = _data("binary")
    X = X.astype(dtype)
    w = np.random.default_rng(0).uniform(0.5, 1.0, X.shape[0])

    def fit(X, w):
        return DPLogisticRegression(epsilon=1.0, data_norm=20.0, optimizer="dp_gdws",
                                    random_state=0).fit(X, y, sample_weight=w)

    first = fit(X, w)
    compiled = set(_glm.block_gradient_sum.signatures)
    again = fit(_frozen(X), _frozen(w))
    assert set(_glm.block_gradient_sum.signatures) == compiled
    np.testing.assert_array_equal(first.coef_, again.coef_)
    for R in (clipped_design(X, 2.0, 1.0, unit=2.0), make_rows(X, w),
              make_rows(sp.csr_matrix(X), w)):
        arrays = [a for a in R if isinstance(a, np.ndarray)]
        assert len(arrays) >= 3 and not any(a.flags.writeable for a in arrays)
