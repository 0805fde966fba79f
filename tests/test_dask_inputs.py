"""Dask inputs are checked as the in-memory fit checks its inputs, before any private release.

Local scheduler only (no cluster): the checks run in the same chunk functions on a cluster.
"""

import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from skdp import DPLogisticRegression, DPRidge  # noqa: E402
from skdp.optimizers.dp_gdws import DPGDWS  # noqa: E402

CHUNKS = (150, 150, 150, 150)
N = sum(CHUNKS)


@pytest.fixture(autouse=True)
def local(monkeypatch):
    """Dask's local schedulers, even if another module's test client is alive."""
    import skdp._dask as skdp_dask

    monkeypatch.setattr(skdp_dask, "_client", lambda: None)
    with dask.config.set(scheduler=None):
        yield


@pytest.fixture
def releases(monkeypatch):
    """The private quantile releases a fit starts (data_norm="auto", y_bounds="auto")."""
    from skdp.linear_model._bounds import PrivateFit

    started = []
    quantile = PrivateFit.quantile

    def recording(self, values, *args, **kwargs):
        started.append(args)
        return quantile(self, values, *args, **kwargs)

    monkeypatch.setattr(PrivateFit, "quantile", recording)
    return started


def _data(seed=0, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    y = (X[:, 1] + 0.5 * rng.normal(size=N) > 0).astype(int)
    return X, y


def _lazy(v):
    return da.from_array(v, chunks=(CHUNKS,) + v.shape[1:])


def _filtered(a):
    """The rows of the 2-D ``a`` with a positive first column, filtered chunk by chunk with a
    map_blocks: dask keeps the declared chunk sizes (150 rows), the blocks hold fewer rows."""
    return _lazy(a).map_blocks(lambda b: b[b[:, 0] > 0], dtype=a.dtype)


# -- integer and float16 chunks -------------------------------------------------------------------
@pytest.mark.parametrize("dtype,scale", [(np.int8, 50.0), (np.int16, 10000.0),
                                         (np.float16, 200.0)])
def test_integer_and_float16_chunks_give_the_in_memory_model(dtype, scale):
    """The private row bound reads the rows' norms in float64, as in memory: int8, int16 and
    float16 chunks whose squares overflow in their own dtype (int8 wraps, float16 gives inf)
    give the in-memory bound and model."""
    X, y = _data(1, d=4)
    info = np.iinfo(dtype) if np.dtype(dtype).kind == "i" else np.finfo(dtype)
    X = np.clip(X * scale, -float(info.max), float(info.max)).astype(dtype)
    params = dict(epsilon=2.0, delta=1e-6, data_norm="auto", classes=[0, 1], random_state=0,
                  optimizer=DPGDWS(max_iter=10))
    a = DPLogisticRegression(**params).fit(X, y)
    b = DPLogisticRegression(**params).fit(_lazy(X), _lazy(y))
    assert b.data_norm_ == a.data_norm_
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-8, atol=1e-8)
    assert b.dp_event_ == a.dp_event_
