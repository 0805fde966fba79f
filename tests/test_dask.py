"""Fits on Dask inputs (skdp._dask) on a real distributed.LocalCluster: the same fit as in memory.

Equality is up to the floating-point order of the gradient sum (per chunk, then the chunks added
in chunk order, where the in-memory kernel adds the rows one after the other): coefficients
within 1e-8, the privacy record (event, epsilon) identical.
"""

import math
import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge  # noqa: E402
from skdp.optimizers.dp_gdws import DPGDWS  # noqa: E402
from skdp.optimizers.dp_nag_opt import DPNAGOpt  # noqa: E402
from skdp.optimizers.dp_nsgd_tree import DPNSGDTree  # noqa: E402
from skdp.privacy import ComposedEvent  # noqa: E402
from skdp.privacy.noise import GAUSSIAN, LAPLACE, add_noise, add_noise_bulk  # noqa: E402

SUPPORTED = ["dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree"]
POISSON = ["dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld"]  # their mini-batches: Poisson samples
CHUNKS = (130, 47, 223)  # uneven row chunks
N = sum(CHUNKS)


@pytest.fixture(scope="module")
def client():
    # the worker processes import the skdp under test (this tree), wherever they start
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = root + ("" if old is None else os.pathsep + old)
    try:
        cluster = distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
        )
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _data(seed=0, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d)) * np.array([1.0, 2.0, 0.5, 3.0])[:d]
    y2 = (X[:, 0] - X[:, 1] + rng.normal(size=N) > 0).astype(int)
    y3 = np.digitize(X[:, 0] + 0.3 * rng.normal(size=N), [-0.5, 0.5])
    yr = X @ np.arange(1.0, d + 1) + 1.0 + rng.normal(size=N)
    return X, y2, y3, yr


def _lazy(v):
    if v.ndim == 2:
        return da.from_array(v, chunks=(CHUNKS, v.shape[1]))
    return da.from_array(v, chunks=(CHUNKS,))


def _estimators(y2, y3, yr):
    yield DPLogisticRegression, y2, {}
    yield DPLogisticRegression, y3, {}
    yield DPLinearSVC, y2, {}
    yield DPRidge, yr, {"y_bounds": (-20.0, 20.0)}


def _assert_same_fit(a, b):
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-8, atol=1e-8)
    assert b.dp_event_ == a.dp_event_
    assert b.epsilon_ == a.epsilon_ and b.delta_ == a.delta_
    assert b.n_iter_ == a.n_iter_


@pytest.mark.parametrize("mechanism", [GAUSSIAN, LAPLACE])
def test_bulk_noise_is_the_kernels_stream(mechanism):
    """The Python loops' noise (one vectorised draw) equals the kernels' draws one by one, and
    leaves the generator in the same state."""
    a, b = np.linspace(-1, 1, 11), np.linspace(-1, 1, 11)
    ra, rb = np.random.default_rng(5), np.random.default_rng(5)
    add_noise(ra, a, mechanism, 0.3)
    add_noise_bulk(rb, b, mechanism, 0.3)
    assert np.array_equal(a, b)
    assert ra.random() == rb.random()


# slow: about 10 s (compile and data) of the 5-minute default run; CI runs it
@pytest.mark.slow
def test_dask_fit_equals_memory_fit_and_keeps_rows_on_workers(client, monkeypatch):
    """Default run: dp_gdws on uneven chunks on the cluster gives the in-memory fit, and the
    rows never come to the client (no array conversion of a dask array, one gradient sum per
    step through the distributed design)."""
    import skdp._dask as skdp_dask

    X, y2, _, _ = _data()
    params = dict(epsilon=1.0, delta=1e-5, optimizer="dp_gdws", data_norm=4.0, random_state=3,
                  max_iter=20)
    a = DPLogisticRegression(**params).fit(X, y2)
    calls = []
    original = skdp_dask.DaskDesign.gradient_sum

    def counting(self, *args):
        calls.append(self.n_chunks)
        return original(self, *args)

    def refuse(self, *args, **kwargs):
        raise AssertionError("a dask array was converted to numpy on the client")

    monkeypatch.setattr(skdp_dask.DaskDesign, "gradient_sum", counting)
    monkeypatch.setattr(da.Array, "__array__", refuse)
    b = DPLogisticRegression(**params).fit(_lazy(X), _lazy(y2))
    _assert_same_fit(a, b)
    assert calls == [len(CHUNKS)] * 20
    assert b.n_features_in_ == X.shape[1]


# slow: about 10 s (compile and data) of the 5-minute default run; CI runs it
@pytest.mark.slow
def test_float32_chunks_are_read_in_place_as_in_memory(client):
    """A float32 dask array: each chunk is read in place on its worker (no float64 copy), with
    the kernels' float32 variants, so the fit is the in-memory float32 fit."""
    X, y2, _, _ = _data()
    X32 = X.astype(np.float32)
    params = dict(epsilon=1.0, delta=1e-5, optimizer="dp_gdws", data_norm=4.0, random_state=3,
                  max_iter=20)
    a = DPLogisticRegression(**params).fit(X32, y2)
    b = DPLogisticRegression(**params).fit(_lazy(X32), _lazy(y2))
    _assert_same_fit(a, b)
    # what a worker holds: the chunk itself (float32, the same memory) and a factor per row
    from skdp._dask import _prepare

    chunk = X32[:CHUNKS[0]]
    rows, _, _ = _prepare(chunk, y2[:CHUNKS[0], None].astype(float), None, chunk.shape, 4.0, 1.0,
                          4.0, 1.0)
    assert rows.values.dtype == np.float32 and np.shares_memory(rows.values, chunk)


@pytest.mark.parametrize("batch_size", [None, 50])
def test_dp_scd_is_refused_with_the_list_of_what_runs(batch_size):
    """dp_scd (a dual variable per row, one row at a time) is refused before any work, with the
    list of what runs on Dask."""
    from skdp.optimizers import get_optimizer_class

    X, y2, _, _ = _data()
    opt = get_optimizer_class("dp_scd")(batch_size=batch_size)
    with pytest.raises(ValueError, match="dp_gdws, dp_nag_opt, dp_masg, dp_sgld, dp_nsgd_tree, "
                       "in full batch or with their mini-batches"):
        DPLogisticRegression(optimizer=opt, data_norm=4.0).fit(_lazy(X), _lazy(y2))


@pytest.mark.parametrize("opt", [
    {}, {"batch_size": 50}, {"batch_size": None, "epochs": 3},
    {"batch_size": 64, "tree": "aligned", "honaker": False, "epochs": 3},
], ids=["auto", "b50", "full", "aligned-plain"])
def test_dp_nsgd_tree_on_dask_walks_the_epochs_order_and_equals_memory_fit(client, monkeypatch,
                                                                          opt):
    """dp_nsgd_tree on the cluster: the client draws each epoch's permutation from the fit's
    generator (as in memory), each step sends the chunks the sorted positions of its slice of
    b rows, every row is in exactly one batch per epoch, and the fit (coefficients, tree event)
    is the in-memory fit of the same seed."""
    import skdp._dask as skdp_dask
    from skdp.optimizers.dp_nsgd_tree import DPNSGDTree
    from skdp.privacy.tree import TreeAggregationEvent

    X, y2, _, _ = _data(5)
    params = dict(epsilon=0.8, delta=1e-6, data_norm=5.0, random_state=4,
                  optimizer=DPNSGDTree(**opt))
    a = DPLogisticRegression(**params).fit(X, y2)
    seen = []
    original = skdp_dask.DaskDesign.gradient_sum

    def recording(self, w, loss_id, tau, index=None):
        seen.append(np.arange(N) if index is None else np.array(index))
        return original(self, w, loss_id, tau, index)

    monkeypatch.setattr(skdp_dask.DaskDesign, "gradient_sum", recording)
    b = DPLogisticRegression(**params).fit(_lazy(X), _lazy(y2))
    _assert_same_fit(a, b)
    assert isinstance(b.dp_event_, TreeAggregationEvent)
    steps = b.privacy_record_.details["steps_per_epoch"]
    size = b.privacy_record_.details["batch_size"]
    assert len(seen) == b.n_iter_ and b.n_iter_ % steps == 0
    for e in range(b.n_iter_ // steps):
        batches = seen[e * steps:(e + 1) * steps]
        assert all(np.array_equal(i, np.sort(i)) and i.size <= size for i in batches)
        assert np.array_equal(np.sort(np.concatenate(batches)), np.arange(N))
    if steps > 1:  # a reshuffled order: the first batches of two epochs differ
        assert not np.array_equal(seen[0], seen[steps])


@pytest.mark.parametrize("epsilon", [0.05, 2.0], ids=["no momentum", "momentum 0.5"])
def test_dp_ridge_dp_nsgd_tree_defaults_on_dask_equal_memory_fit(client, epsilon):
    """DPRidge's dp_nsgd_tree at its defaults on the cluster: the squared loss's full batch,
    with the momentum rule of ``_defaults.tree_alpha`` (0.5 from s = 10, none below), is the
    in-memory fit of the same seed, momentum, node sensitivity and tree event included."""
    X, _, _, yr = _data(6)
    params = dict(epsilon=epsilon, delta=1e-6, data_norm=5.0, y_bounds=(-20.0, 20.0),
                  random_state=2, optimizer="dp_nsgd_tree")
    a = DPRidge(**params).fit(X, yr)
    b = DPRidge(**params).fit(_lazy(X), _lazy(yr))
    _assert_same_fit(a, b)
    details = b.privacy_record_.details
    assert details == a.privacy_record_.details and b.hyperparameters_ == a.hyperparameters_
    assert details["batch_size"] == N and details["steps_per_epoch"] == 1
    assert details["alpha"] == (0.5 if epsilon > 1 else 1.0)


@pytest.mark.parametrize("epsilon", [1.0, math.inf])
def test_dp_ridge_several_targets_on_dask_equal_memory_fit(client, epsilon):
    """DPRidge with a y of three columns at its defaults on the cluster (dp_gdws, both bounds
    released, each column's bounds from its per-chunk counts): the in-memory fit of the same
    seed, with the same nine target releases and record; at epsilon=inf the same optimum."""
    X, _, _, yr = _data(8)
    Y = np.column_stack([yr, 100.0 * X[:, 1] - 3.0, np.where(X[:, 2] > 0, 1.0, 0.0)])
    params = dict(epsilon=epsilon, delta=1e-6, random_state=4, optimizer="dp_gdws")
    a = DPRidge(**params).fit(X, Y)
    b = DPRidge(**params).fit(_lazy(X), _lazy(Y))
    np.testing.assert_allclose(b.y_bounds_, a.y_bounds_, rtol=1e-12)
    assert b.coef_.shape == (3, X.shape[1]) and b.predict(X).shape == Y.shape
    if not math.isfinite(epsilon):  # as test_epsilon_inf_reaches_the_same_optimum
        np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-6, atol=1e-6)
    else:
        _assert_same_fit(a, b)
        assert b.privacy_record_.details == a.privacy_record_.details
        assert {f"y_median[{k}]" for k in range(3)} <= set(
            b.privacy_record_.details["private_bounds"])


def test_poisson_dp_gdws_on_dask_equals_memory_fit(client, monkeypatch):
    """A Poisson mini-batch dp_gdws fit on the cluster (uneven chunks) is the in-memory fit of
    the same seed: the client draws each step's sample from the fit's generator as the kernel
    does, each chunk's task gets only its sampled local positions."""
    import skdp._dask as skdp_dask
    from skdp.optimizers import get_optimizer_class
    from skdp.privacy import PoissonGaussianEvent

    X, y2, _, _ = _data(7)
    opt = get_optimizer_class("dp_gdws")(batch_size=60, max_iter=25)
    params = dict(epsilon=1.0, delta=1e-5, optimizer=opt, data_norm=4.0, random_state=9)
    a = DPLogisticRegression(**params).fit(X, y2)
    sent = []
    original = skdp_dask._chunk_gradient_at

    def recording(chunk, local, w, loss_id, tau):  # runs in the worker: its argument comes back
        return original(chunk, local, w, loss_id, tau), local

    monkeypatch.setattr(skdp_dask.DaskDesign, "_sample_sum", _recording_sample_sum(
        skdp_dask, recording, sent))
    b = DPLogisticRegression(**params).fit(_lazy(X), _lazy(y2))
    _assert_same_fit(a, b)
    assert isinstance(b.dp_event_.event, PoissonGaussianEvent)
    assert len(sent) == 25
    offsets = np.concatenate([[0], np.cumsum(CHUNKS)])
    sizes = []
    for index, got in sent:  # every chunk received exactly its own sampled rows, locally
        sizes.append(index.size)
        rebuilt = np.concatenate([loc + offsets[k] for k, loc in got]) if got else []
        assert np.array_equal(rebuilt, index)
        assert all(0 <= loc.min() and loc.max() < CHUNKS[k] for k, loc in got)
    assert 0 < np.mean(sizes) < N / 2  # samples of about 60 rows, not the full batch
    full = DPLogisticRegression(**dict(params, optimizer="dp_gdws", max_iter=25)).fit(X, y2)
    assert not np.allclose(full.coef_, b.coef_)


def _recording_sample_sum(skdp_dask, recording, sent):
    """DaskDesign._sample_sum with tasks that also return the local positions they received."""

    def sample_sum(self, w, loss_id, tau, index):
        w = np.ascontiguousarray(w, dtype=np.float64)
        parts = self.split_index(index)
        chunks = [self._chunks[k] for k, _ in parts]
        futures = self._client.map(recording, chunks, [loc for _, loc in parts], w=w,
                                   loss_id=int(loss_id), tau=float(tau), pure=False)
        out = self._client.gather(futures)
        sent.append((np.array(index), [(k, loc) for (k, _), (_, loc) in zip(parts, out)]))
        total = np.zeros(w.shape[0])
        for g, _ in out:
            total += g
        return total

    return sample_sum


@pytest.mark.parametrize("make", [
    lambda: DPGDWS(max_iter=15), lambda: DPGDWS(batch_size=0.2, max_iter=15),
    lambda: DPNAGOpt(max_iter=15), lambda: DPNSGDTree(batch_size=40, epochs=2),
], ids=["dp_gdws", "dp_gdws poisson", "dp_nag_opt", "dp_nsgd_tree"])
def test_local_scheduler_steps_run_in_process_and_equal_the_memory_fit(monkeypatch, make):
    """Without a distributed client (dask's local schedulers) the chunks are computed once and
    the steps call the chunk functions directly: fewer dask computations than steps (one task
    graph per step cost 4 ms of graph optimisation with dask 2026.8), and the fit is the
    in-memory fit."""
    import dask
    import dask.base

    import skdp._dask as skdp_dask

    monkeypatch.setattr(skdp_dask, "_client", lambda: None)  # even if a test client is alive
    calls = []
    original = dask.base.compute

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(dask.base, "compute", counting)
    monkeypatch.setattr(dask, "compute", counting)
    X, y2, _, _ = _data(2)
    params = dict(epsilon=0.8, delta=1e-6, data_norm=5.0, random_state=3)
    a = DPLogisticRegression(optimizer=make(), **params).fit(X, y2)
    calls.clear()
    b = DPLogisticRegression(optimizer=make(), **params).fit(_lazy(X), _lazy(y2))
    _assert_same_fit(a, b)
    assert b.n_iter_ >= 10 and len(calls) < b.n_iter_


@pytest.mark.parametrize("n_chunks", [1, 2, 20])
def test_candidate_counts_over_chunks_are_the_in_memory_counts(n_chunks):
    """The counts the private bounds and the scaler take per chunk, added in a tree of tasks
    (20 chunks: two levels of at most 8), are the counts of the whole array."""
    from skdp._dask import chunk_counts, column_counts

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(400, 3)), 1)  # ties at the candidates
    cand = np.linspace(-2.0, 2.0, 41)
    Xd = da.from_array(X, chunks=(-(-400 // n_chunks), 3))
    assert Xd.numblocks[0] == n_chunks
    below, upto, n = chunk_counts(Xd[:, 0], cand)
    xs = np.sort(X[:, 0])
    np.testing.assert_array_equal(below, np.searchsorted(xs, cand, side="left"))
    np.testing.assert_array_equal(upto, np.searchsorted(xs, cand, side="right"))
    assert n == 400
    for j, counts in enumerate(column_counts(Xd, cand)):
        xs = np.sort(X[:, j])
        np.testing.assert_array_equal(counts.below, np.searchsorted(xs, cand, side="left"))
        np.testing.assert_array_equal(counts.upto, np.searchsorted(xs, cand, side="right"))
        assert counts.n == 400


def test_local_fits_compute_in_this_thread_unless_a_scheduler_is_configured(monkeypatch):
    """Without a Client, a fit's computations (prepared chunks, counts of the private bounds,
    label set) run in the calling thread, on dask's synchronous scheduler; a scheduler the user
    configured is used as configured. The fit is the same either way."""
    import threading

    import dask

    import skdp._dask as skdp_dask

    monkeypatch.setattr(skdp_dask, "_client", lambda: None)  # even if a test client is alive
    threads = set()
    prepare = skdp_dask._prepare

    def recording(*args):
        threads.add(threading.get_ident())
        return prepare(*args)

    monkeypatch.setattr(skdp_dask, "_prepare", recording)
    X, y2, _, _ = _data(2)
    Xd, yd = _lazy(X), _lazy(y2)
    params = dict(epsilon=0.8, delta=1e-6, data_norm="auto", random_state=3)
    with dask.config.set(scheduler=None):  # as without a client (a test client sets one)
        here = DPLogisticRegression(optimizer=DPGDWS(max_iter=15), **params).fit(Xd, yd)
    assert threads == {threading.get_ident()}
    threads.clear()
    with dask.config.set(scheduler="threads"):
        pool = DPLogisticRegression(optimizer=DPGDWS(max_iter=15), **params).fit(Xd, yd)
    assert threads and threading.get_ident() not in threads
    _assert_same_fit(here, pool)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", SUPPORTED)
def test_every_supported_optimizer_and_estimator(client, optimizer):
    X, y2, y3, yr = _data(1)
    for est, y, extra in _estimators(y2, y3, yr):
        params = dict(epsilon=0.8, delta=1e-6, optimizer=optimizer, data_norm=5.0,
                      random_state=11, max_iter=15, **extra)  # few steps: a round trip each
        a = est(**params).fit(X, y)
        b = est(**params).fit(_lazy(X), _lazy(y))
        _assert_same_fit(a, b)
        assert b.epsilon_ <= 0.8


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", POISSON)
def test_every_supported_optimizer_with_poisson_batches(client, optimizer):
    """The Poisson mini-batch mode of every supported optimizer (Gaussian, and dp_gdws's
    Laplace): the in-memory fit of the same seed, every estimator."""
    from skdp.optimizers import get_optimizer_class

    X, y2, y3, yr = _data(8)
    configs = [{"batch_size": 70, "max_iter": 3 if optimizer == "dp_sgld" else 12}]
    if optimizer == "dp_gdws":
        configs.append({"batch_size": 0.4, "max_iter": 12, "mechanism": "laplace"})
    for config in configs:
        for est, y, extra in _estimators(y2, y3, yr):
            params = dict(epsilon=0.8, delta=1e-6, data_norm=5.0, random_state=13, **extra)
            opt = get_optimizer_class(optimizer)(**config)
            a = est(optimizer=opt, **params).fit(X, y)
            b = est(optimizer=opt, **params).fit(_lazy(X), _lazy(y))
            _assert_same_fit(a, b)
            assert "poisson" in b.privacy_record_.sampling


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ["dp_gdws", "dp_sgld"])
def test_private_bounds_weights_and_dataframes(client, optimizer):
    """data_norm / y_bounds = "auto" (exponential mechanism on per-chunk counts), example
    weights, a dask DataFrame and Series: the same releases and record as in memory."""
    import dask.dataframe as dd
    import pandas as pd

    X, y2, _, yr = _data(2)
    sw = np.random.default_rng(4).uniform(0.0, 2.0, N)
    params = dict(epsilon=1.0, delta=1e-6, optimizer=optimizer, random_state=5,
                  max_sample_weight=1.5, max_iter=15)
    a = DPRidge(**params).fit(X, yr, sample_weight=sw)
    b = DPRidge(**params).fit(_lazy(X), _lazy(yr), sample_weight=_lazy(sw))
    assert b.data_norm_ == a.data_norm_ and b.y_bounds_ == a.y_bounds_
    _assert_same_fit(a, b)
    frame = pd.DataFrame(X, columns=list("abcd"))
    Xf = dd.from_pandas(frame, npartitions=3)
    yf = dd.from_pandas(pd.Series(y2), npartitions=3)
    a = DPLogisticRegression(**params).fit(X, y2)
    b = DPLogisticRegression(**params).fit(Xf, yf)
    assert b.data_norm_ == a.data_norm_
    _assert_same_fit(a, b)


@pytest.mark.slow
def test_epsilon_inf_reaches_the_same_optimum(client):
    X, _, y3, yr = _data(3)
    a = DPLogisticRegression(epsilon=math.inf, optimizer="dp_nag_opt", C=0.1).fit(X, y3)
    b = DPLogisticRegression(epsilon=math.inf, optimizer="dp_nag_opt", C=0.1).fit(
        _lazy(X), _lazy(y3))
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-6, atol=1e-6)
    assert b.data_norm_ == a.data_norm_ and b.epsilon_ == math.inf
    a = DPRidge(epsilon=math.inf, optimizer="dp_scd").fit(X, yr)
    with pytest.raises(ValueError, match="cannot run on Dask"):  # dp_scd at inf: refused
        DPRidge(epsilon=math.inf, optimizer="dp_scd").fit(_lazy(X), _lazy(yr))
    # the default, optimizer="auto", runs dp_gdws on Dask and reaches the same optimum
    b = DPRidge(epsilon=math.inf).fit(_lazy(X), _lazy(yr))
    assert b.optimizer_.name == "dp_gdws"
    assert DPRidge(epsilon=math.inf).fit(X, yr).optimizer_.name == "dp_scd"
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-6, atol=1e-6)


def test_bad_inputs_are_refused_with_the_in_memory_errors():
    X, y2, _, _ = _data()
    bad = X.copy()
    bad[200, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0).fit(_lazy(bad), _lazy(y2))
    with pytest.raises(ValueError, match="rows"):
        DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0).fit(_lazy(X), y2[:-1])
    sw = np.ones(N)
    sw[300] = -1.0
    with pytest.raises(ValueError, match="must be finite and non-negative"):
        DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0).fit(
            _lazy(X), _lazy(y2), sample_weight=_lazy(sw))
    yr = np.array(y2, dtype=float)
    yr[5] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        DPRidge(optimizer="dp_gdws", data_norm=4.0, y_bounds=(-1, 1)).fit(_lazy(X), _lazy(yr))
    with pytest.raises(ValueError, match="not in classes"):
        DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0, classes=[0, 5]).fit(
            _lazy(X), _lazy(y2)
        )


# -- search on the cluster: the client's ledger ----------------------------------------------------
def test_grid_search_on_the_dask_backend_charges_every_fit_to_the_ledger(client):
    """joblib's "dask" backend runs the fits in the cluster's worker processes: each is charged
    to the client's ledger (the spool, on this machine), and the ceiling holds."""
    import joblib
    from sklearn.model_selection import GridSearchCV

    from skdp import BudgetExceededError, PrivacyLedger, compute_epsilon

    X, y2, _, _ = _data(5)
    est = DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0, delta=1e-6, random_state=None,
                               max_iter=10)
    grid = {"epsilon": [0.5, 1.0]}
    with joblib.parallel_backend("dask"):
        with PrivacyLedger(delta=1e-5) as ledger:
            search = GridSearchCV(est, grid, cv=2).fit(X, y2)
    assert len(ledger) == 2 * 2 + 1  # every fold of every candidate, and the refit
    assert {e.pid for e in ledger.entries} - {os.getpid()}  # fitted in the workers
    assert ledger.entries[-1].event == search.best_estimator_.dp_event_

    ceiling = 1.6
    ledger = PrivacyLedger(epsilon=ceiling, delta=1e-5)
    with joblib.parallel_backend("dask"), pytest.raises(BudgetExceededError):
        GridSearchCV(est.set_params(ledger=ledger), grid, cv=2, error_score="raise").fit(X, y2)
    assert 1 <= len(ledger) < 5
    assert ledger.spent() <= ceiling
    assert math.isclose(
        ledger.spent(), compute_epsilon(ComposedEvent(tuple(ledger.events)), 1e-5), rel_tol=1e-9
    )


def test_a_ledger_sent_to_another_machine_refuses_to_charge():
    """A copy unpickled where its spool cannot be reached (another host of a cluster) refuses
    every fit with a clear error: a charge is never lost."""
    from skdp import PrivacyLedger

    X, y2, _, _ = _data()
    owner = PrivacyLedger(epsilon=10.0)
    rebuild, (uid, spool, config, base, host, _) = owner.__reduce__()
    remote = rebuild(uid + "-elsewhere", spool + "-not-here", config, base, host + "-other")
    with pytest.raises(RuntimeError, match="another machine"):
        DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0, ledger=remote).fit(X, y2)
    assert len(owner) == 0 and len(remote) == 0
    # same machine, owner gone: the documented detached copy (it still charges itself)
    detached = rebuild(uid + "-gone", spool + "-not-here", config, base, host)
    DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0, ledger=detached).fit(X, y2)
    assert len(detached) == 1


def _independent_search_epsilon(est, grid, cv, X, y, search, delta):
    """Every fold fit of every candidate made again by hand, plus the search's refit, composed."""
    from sklearn.base import clone
    from sklearn.model_selection import ParameterGrid

    from skdp import compute_epsilon
    from skdp.ledger import compose

    fits = [clone(est).set_params(ledger=None, **p).fit(X[train], y[train])
            for p in ParameterGrid(grid) for train, _ in cv.split(X, y)]
    return compute_epsilon(compose(fits + [search.best_estimator_]), delta), len(fits) + 1


def test_grid_search_on_a_multi_host_cluster_charges_every_fit_through_fit_search(
        client, monkeypatch):
    """A multi-host cluster, simulated: the client's host name differs from the workers', so
    every copy of the ledger sent to a worker is a remote copy that cannot reach the spool.
    Without ``fit_search`` each fold fit is refused; with ``ledger.fit_search(search, X, y)``
    the folds are charged on the client before they run and take their planned events on the
    workers, and the ledger ends with exactly every fit of the search; a second search is
    charged again in full (the plan of the first one does not outlive its call)."""
    import joblib
    from sklearn.model_selection import GridSearchCV, KFold

    import skdp.ledger as ledger_module
    from skdp import PrivacyLedger

    X, y2, _, _ = _data(5)
    est = DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0, delta=1e-6, random_state=None,
                               max_iter=10)
    grid, cv = {"epsilon": [0.5, 1.0, 2.0]}, KFold(2, shuffle=True, random_state=0)
    monkeypatch.setattr(ledger_module, "_HOST", "client-host-of-a-simulated-cluster")

    refused = PrivacyLedger(epsilon=20.0, delta=1e-5)
    with joblib.parallel_backend("dask"), pytest.raises(RuntimeError, match="another machine"):
        GridSearchCV(est.set_params(ledger=refused), grid, cv=cv, error_score="raise").fit(X, y2)
    assert len(refused) == 0

    ledger = PrivacyLedger(epsilon=20.0, delta=1e-5)
    search = GridSearchCV(est.set_params(ledger=ledger), grid, cv=cv, error_score="raise")
    with joblib.parallel_backend("dask"):
        assert ledger.fit_search(search, X, y2) is search
    expected, n_fits = _independent_search_epsilon(est, grid, cv, X, y2, search, 1e-5)
    assert len(ledger) == n_fits == 3 * 2 + 1  # the folds once each, and the refit
    assert ledger.entries[-1].event == search.best_estimator_.dp_event_
    assert math.isclose(ledger.spent(), expected, rel_tol=1e-9)
    assert ledger._reservation is None
    with joblib.parallel_backend("dask"):  # the same search again: every fit charged again
        ledger.fit_search(search, X, y2)
    assert len(ledger) == 2 * n_fits
    with joblib.parallel_backend("dask"), pytest.raises(RuntimeError, match="another machine"):
        search.fit(X, y2)  # outside fit_search: no plan, the worker copies refuse
    assert len(ledger) == 2 * n_fits


def test_fit_search_charges_before_the_search_and_holds_the_ceiling():
    """A plan that would pass the ceiling charges nothing and runs nothing; a remote copy made
    while the plan is open takes each planned event once and refuses any fit beyond it."""
    import pickle

    from sklearn.model_selection import GridSearchCV, KFold

    import skdp.ledger as ledger_module
    from skdp import BudgetExceededError, PrivacyLedger

    X, y2, _, _ = _data()
    est = DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0, delta=1e-6, random_state=None,
                               max_iter=10)
    cv = KFold(2, shuffle=True, random_state=0)
    small = PrivacyLedger(epsilon=0.6, delta=1e-5)
    search = GridSearchCV(est.set_params(ledger=small), {"epsilon": [0.5, 1.0]}, cv=cv)
    with pytest.raises(BudgetExceededError, match="Nothing was run"):
        small.fit_search(search, X, y2)
    assert len(small) == 0 and small._reservation is None
    assert not hasattr(search, "cv_results_")  # the search never started

    owner = PrivacyLedger(epsilon=20.0, delta=1e-5)
    search = GridSearchCV(est.set_params(ledger=owner), {"epsilon": [1.0]}, cv=cv)
    train = next(cv.split(X, y2))[0]
    with ledger_module._ReservedSearch(owner, search, X, y2, None, None):  # fit_search's plan
        real_host = ledger_module._HOST
        ledger_module._HOST = "client-host-of-a-simulated-cluster"
        try:
            blob = pickle.dumps(owner)  # as sent to a worker of another host
        finally:
            ledger_module._HOST = real_host
    registry = dict(ledger_module._REGISTRY)
    ledger_module._REGISTRY.clear()  # unpickled in a fresh process, not the owner's
    try:
        remote = pickle.loads(blob)
    finally:
        ledger_module._REGISTRY.clear()
        ledger_module._REGISTRY.update(registry)
    assert remote is not owner and remote._remote
    fold = est.set_params(ledger=remote, epsilon=1.0)
    fold.fit(X[train], y2[train])  # a planned fold: takes its event
    fold.fit(X[train], y2[train])  # planned twice (two folds of one size), once left
    with pytest.raises(RuntimeError, match="another machine"):
        fold.fit(X[train], y2[train])  # beyond the plan: refused, never free
    with pytest.raises(RuntimeError, match="another machine"):
        est.set_params(ledger=remote, epsilon=2.0).fit(X[train], y2[train])  # not planned
    assert len(owner) == 2


@pytest.mark.slow
def test_private_search_on_dask_inputs_equals_the_search_in_memory(client, monkeypatch):
    """PrivateSearchCV on Dask inputs: charged once on the client, the runs on the cluster, the
    validation scores as reductions; the same selection, model and record as in memory."""
    from skdp import PrivacyLedger
    from skdp.model_selection import PrivateSearchCV

    X, y2, _, _ = _data(6)
    est = DPLogisticRegression(optimizer="dp_gdws", data_norm=4.0, classes=[0, 1], max_iter=10,
                               delta=1e-6)
    grid = {"epsilon": [0.5, 1.0], "C": [0.1, 1.0]}
    a = PrivateSearchCV(est, grid, n_iter=3, random_state=2).fit(X, y2)

    def refuse(self, *args, **kwargs):
        raise AssertionError("a dask array was converted to numpy on the client")

    monkeypatch.setattr(da.Array, "__array__", refuse)
    with PrivacyLedger(delta=1e-5) as ledger:
        b = PrivateSearchCV(est, grid, n_iter=3, random_state=2).fit(_lazy(X), _lazy(y2))
    assert len(ledger) == 1 and ledger.entries[0].event == b.dp_event_ == a.dp_event_
    assert b.best_params_ == a.best_params_ and b.epsilon_ == a.epsilon_
    assert math.isclose(b.best_score_, a.best_score_, rel_tol=1e-9)
    _assert_same_fit(a.best_estimator_, b.best_estimator_)


# -- preprocessing and the private pipeline on Dask ----------------------------------------------
def _raw(seed=9):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 4)) * np.array([1.0, 10.0, 100.0, 0.1]) + np.array([0, 5, -3, 1])
    return X, (X[:, 0] + 0.1 * X[:, 1] > 0.5).astype(int)


@pytest.mark.parametrize("spread", ["quantiles", "mad"])
def test_private_robust_scaler_on_dask_equals_memory(client, monkeypatch, spread):
    """The quantiles from per-chunk counts over the public grid (one pass per release), the
    mechanisms on the client: the same bounds and record as in memory; the transform stays
    lazy."""
    import dask.dataframe as dd
    import pandas as pd

    from skdp.preprocessing import PrivateRobustScaler

    X, _ = _raw()
    for eps in (0.5, math.inf):
        a = PrivateRobustScaler(epsilon=eps, random_state=4, if_unreliable="scale",
                                spread=spread).fit(X)
        with monkeypatch.context() as m:
            def refuse(self, *args, **kwargs):
                raise AssertionError("a dask array was converted to numpy on the client")

            if math.isfinite(eps):  # (epsilon = inf: exact quantiles gather a column each)
                m.setattr(da.Array, "__array__", refuse)
            b = PrivateRobustScaler(epsilon=eps, random_state=4, if_unreliable="scale",
                                    spread=spread).fit(_lazy(X))
            out = b.transform(_lazy(X))
        assert np.array_equal(b.bounds_, a.bounds_) and np.array_equal(b.quantiles_, a.quantiles_)
        assert (b.centres_ is None) == (a.centres_ is None) == (eps == math.inf)
        assert eps == math.inf or np.array_equal(b.centres_, a.centres_)
        assert b.dp_event_ == a.dp_event_ and b.epsilon_ == a.epsilon_
        assert isinstance(out, da.Array) and out.chunks[0] == CHUNKS
        assert np.array_equal(out.compute(), a.transform(X))
    # a user's grid: the quantiles released on it directly (no centres), in the same pass
    grid = np.linspace(-10.0, 10.0, 401)
    a = PrivateRobustScaler(epsilon=0.5, random_state=4, if_unreliable="scale", grid=grid).fit(X)
    b = PrivateRobustScaler(epsilon=0.5, random_state=4, if_unreliable="scale", grid=grid).fit(
        _lazy(X))
    assert a.centres_ is None and np.array_equal(b.quantiles_, a.quantiles_)
    assert b.dp_event_ == a.dp_event_
    frame = pd.DataFrame(X, columns=list("abcd"))
    c = PrivateRobustScaler(epsilon=0.5, random_state=4, if_unreliable="scale").fit(
        dd.from_pandas(frame, npartitions=3))
    assert list(c.feature_names_in_) == list("abcd")
    assert np.array_equal(c.bounds_, PrivateRobustScaler(
        epsilon=0.5, random_state=4, if_unreliable="scale").fit(frame).bounds_)
    bad = X.copy()
    bad[300, 2] = np.nan
    for mode in ("scale", "passthrough"):
        with pytest.raises(ValueError, match="NaN"):
            PrivateRobustScaler(epsilon=0.5, if_unreliable=mode).fit(_lazy(bad))
    # far too few rows for 8 quartiles at epsilon 0.2: the identity, lazy, releasing nothing
    with pytest.warns(UserWarning, match="pass through"):
        p = PrivateRobustScaler(epsilon=0.2).fit(_lazy(X))
    out = p.transform(_lazy(X))
    assert p.passthrough_ and p.epsilon_ == 0.0 and isinstance(out, da.Array)
    assert np.array_equal(out.compute(), X)
    with pytest.raises(ValueError, match="features"):
        c.transform(_lazy(X[:, :3]))


def test_private_pipeline_on_dask_equals_memory(client):
    """Scaler then estimator on Dask inputs: one budget, the same model and event as in memory;
    a ColumnTransformer (or any scikit-learn transformer) is refused, saying what runs."""
    from sklearn.compose import ColumnTransformer

    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import PrivateRobustScaler

    X, y = _raw(10)

    def pipe(*pre):
        return make_private_pipeline(
            *pre, DPLogisticRegression(optimizer="dp_gdws", classes=[0, 1], max_iter=15,
                                       random_state=6), epsilon=2.0, delta=1e-5)

    a = pipe(PrivateRobustScaler(random_state=6)).fit(X, y)
    b = pipe(PrivateRobustScaler(random_state=6)).fit(_lazy(X), _lazy(y))
    _assert_same_fit(a[-1], b[-1])
    assert np.array_equal(a[0].bounds_, b[0].bounds_)
    assert b.dp_event_ == a.dp_event_ and b.epsilon_ == a.epsilon_
    ct = ColumnTransformer([("num", PrivateRobustScaler(), [0, 1, 2, 3])])
    with pytest.raises(ValueError, match="ColumnTransformer.*cannot run on Dask inputs"):
        pipe(ct).fit(_lazy(X), _lazy(y))


def test_tail_of_zero_inflated_targets_is_the_memory_release():
    """y_bounds="auto" on targets of which more than three quarters are 0: the tail's median
    (the records off the atom, selected chunk by chunk) gives the in-memory release, bounds
    and fit (local scheduler, or the module's cluster when it is running)."""
    X, _, _, yr = _data(7)
    y = np.where(yr > np.quantile(yr, 0.85), yr, 0.0)
    params = dict(epsilon=8.0, delta=1e-6, random_state=3, optimizer=DPGDWS(max_iter=5))
    with pytest.warns(UserWarning, match="three quarters"):
        a = DPRidge(**params).fit(X, y)
    with pytest.warns(UserWarning, match="three quarters"):
        b = DPRidge(**params).fit(_lazy(X), _lazy(y))
    tail = a.privacy_record_.details["private_bounds"]["y_tail"]["value"]
    assert tail is not None and tail > 0
    assert b.y_bounds_ == a.y_bounds_ and b.data_norm_ == a.data_norm_
    _assert_same_fit(a, b)


@pytest.mark.parametrize("where", ["local", "cluster"])
def test_unknown_chunk_sizes_are_computed_without_touching_the_callers_arrays(where, request,
                                                                               monkeypatch):
    """Dask arrays whose chunk sizes are unknown (a boolean selection of the rows) fit as the
    same rows with their sizes known, on the local scheduler and on a cluster, and the caller's
    arrays keep their unknown sizes (dask's own ``compute_chunk_sizes`` would write the sizes
    into them)."""
    import contextlib

    import dask

    import skdp._dask as skdp_dask

    if where == "cluster":
        cluster_client = request.getfixturevalue("client")
        monkeypatch.setattr(skdp_dask, "_client", lambda: cluster_client)
        scheduler = contextlib.nullcontext()
    else:
        monkeypatch.setattr(skdp_dask, "_client", lambda: None)
        scheduler = dask.config.set(scheduler=None)  # as without a client (a test client sets one)
    X, y2, _, _ = _data(4)
    Xd, yd = _lazy(X), _lazy(y2)
    keep = Xd[:, 0] > -1.0
    Xs, ys = Xd[keep], yd[keep]
    assert np.isnan(Xs.chunks[0][0]) and np.isnan(ys.chunks[0][0])
    params = dict(epsilon=0.8, delta=1e-6, data_norm="auto", random_state=3,
                  optimizer=DPGDWS(max_iter=15))
    with scheduler:
        selected = DPLogisticRegression(**params).fit(Xs, ys)
    assert all(np.isnan(c) for c in Xs.chunks[0]) and all(np.isnan(c) for c in ys.chunks[0])
    rows = X[:, 0] > -1.0
    known = [int(np.sum(rows[a:a + c])) for a, c in zip(np.cumsum((0,) + CHUNKS[:-1]), CHUNKS)]
    Xk = da.from_array(X[rows], chunks=(tuple(known), X.shape[1]))
    yk = da.from_array(y2[rows], chunks=(tuple(known),))
    _assert_same_fit(DPLogisticRegression(**params).fit(Xk, yk), selected)


def test_chunk_sizes_on_the_synchronous_scheduler_leave_other_threads_configuration(
        monkeypatch):
    """Without a Client, the chunk sizes are computed in the calling thread, and the
    configuration other threads read stays what it was (``dask.config.set`` would change it
    for the whole process while the sizes are computed)."""
    import threading

    import dask

    import skdp._dask as skdp_dask

    monkeypatch.setattr(skdp_dask, "_client", lambda: None)
    here = threading.get_ident()
    seen = []  # per block: (run in the calling thread, the scheduler another thread reads)

    def look(block):
        other = []
        reader = threading.Thread(target=lambda: other.append(dask.config.get("scheduler", None)))
        reader.start()
        reader.join()
        seen.append((threading.get_ident() == here, other[0]))
        return block[block[:, 0] > 0]

    a = da.from_array(np.arange(-20.0, 20.0).reshape(20, 2), chunks=(7, 2))
    with dask.config.set(scheduler=None):
        selected = a.map_blocks(look, chunks=((np.nan,) * 3, (2,)), dtype=float)
        sized = skdp_dask.compute_chunk_sizes(selected)
    assert sized.chunks == ((0, 3, 6), (2,))  # rows 11 to 19 have a first column > 0
    np.testing.assert_array_equal(sized.compute(scheduler="sync"),
                                  np.arange(-20.0, 20.0).reshape(20, 2)[11:])
    assert seen[:3] == [(True, None)] * 3


def test_fit_on_a_dask_dataframe_records_its_column_names():
    """A dask DataFrame's column names are kept as a pandas one's (``feature_names_in_``), so a
    frame with its columns in another order is refused at predict instead of mis-read."""
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd
    from sklearn.base import clone

    X, y2, _, _ = _data()
    frame = pd.DataFrame(X, columns=["age", "income", "score", "hours"])
    est = DPLogisticRegression(data_norm=4.0, classes=[0, 1], random_state=0)
    fitted = clone(est).fit(dd.from_pandas(frame, npartitions=3), y2)
    np.testing.assert_array_equal(fitted.feature_names_in_,
                                  clone(est).fit(frame, y2).feature_names_in_)
    with pytest.raises(ValueError, match="feature names"):
        fitted.predict(frame[["income", "age", "score", "hours"]])
    assert not hasattr(clone(est).fit(_lazy(X), y2), "feature_names_in_")
