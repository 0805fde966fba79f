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


# -- declared chunk sizes that do not describe the blocks -----------------------------------------
@pytest.mark.parametrize("which", ["X", "y", "sample_weight"])
@pytest.mark.parametrize("batch_size", [None, 0.2], ids=["full batch", "poisson"])
def test_chunk_sizes_that_do_not_describe_the_blocks_are_refused_before_any_release(
        which, batch_size, releases, monkeypatch):
    """An input whose blocks are not of the declared chunk sizes (a map_blocks that drops rows)
    is refused with what to do where its blocks are first computed, before the private row
    bound is released (or anything charged) and before the chunks are prepared for the
    kernels: the fit's n, Poisson samples and kernel bounds are the declared sizes (without
    the check the kernels read past the chunks: NaN coefficients under a finite epsilon_)."""
    import skdp._dask as skdp_dask

    prepared = []  # the chunks prepared for the kernels (the last check, after the releases)
    prepare = skdp_dask._prepare
    monkeypatch.setattr(skdp_dask, "_prepare", lambda *a: prepared.append(1) or prepare(*a))
    X, y = _data()
    w = np.abs(X[:, 0]) + 0.5
    inputs = {"X": _lazy(X), "y": _lazy(y), "sample_weight": _lazy(w)}
    if which == "X":
        inputs["X"] = _filtered(X)
    else:  # the column filtered on X's first column
        column = {"y": y, "sample_weight": w}[which]
        inputs[which] = _filtered(np.column_stack([X[:, 0], column]))[:, 1]
        inputs["y"] = inputs["y"].astype(int)
    est = DPLogisticRegression(epsilon=1.0, delta=1e-6, data_norm="auto", classes=[0, 1],
                               optimizer=DPGDWS(batch_size=batch_size, max_iter=5),
                               random_state=0)
    with pytest.raises(ValueError, match=rf"^{which}: .*declares.*compute_chunk_sizes\(\)"):
        est.fit(inputs["X"], inputs["y"], sample_weight=inputs["sample_weight"])
    assert prepared == [] and releases == [] and not hasattr(est, "data_norm_")


def test_chunk_sizes_computed_by_the_caller_fit_as_the_same_rows():
    """The refused inputs fit once their sizes are computed: the in-memory fit of those rows."""
    X, y = _data()
    Z = _filtered(np.column_stack([X, y])).compute_chunk_sizes()
    rows = X[:, 0] > 0
    params = dict(epsilon=1.0, delta=1e-6, data_norm="auto", classes=[0, 1], random_state=0,
                  optimizer=DPGDWS(batch_size=0.2, max_iter=5))
    a = DPLogisticRegression(**params).fit(X[rows], y[rows])
    b = DPLogisticRegression(**params).fit(Z[:, :3], Z[:, 3].astype(int))
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-8, atol=1e-8)
    assert b.dp_event_ == a.dp_event_


@pytest.mark.parametrize(
    "case", ["stale y", "stale weights", "stale X", "stale X, weights in memory", "other rows"])
def test_a_row_count_mismatch_names_its_cause(case, releases):
    """A user trial: X filtered by a map_blocks with its sizes computed, y filtered alike but not
    (its chunk sizes still those of the 600 rows), was refused with "y has 600 entries but X has
    K rows", as if y held other rows. The real sizes are now computed (counts only, before any
    release): the error names the array whose declared chunk sizes are stale and what to do;
    "has ... entries but X has ... rows" is left for inputs that do hold other rows."""
    X, y = _data()
    columns = np.column_stack([X, y, np.abs(X[:, 0]) + 0.5])
    Z = _filtered(columns)  # blocks of fewer rows, declared of 150
    kept = _filtered(columns).compute_chunk_sizes()  # (which sets them on its array)
    k = int(kept.shape[0])
    inputs = {"X": kept[:, :3], "y": kept[:, 3].astype(int), "sample_weight": kept[:, 4]}
    if case == "stale y":
        inputs["y"], match = Z[:, 3].astype(int), rf"^y: the chunk sizes of the dask array " \
            rf"declare {N} entries but its blocks hold {k} \(X has {k} rows\).*" \
            r"call y\.compute_chunk_sizes\(\)"
    elif case == "stale weights":
        inputs["sample_weight"], match = Z[:, 4], rf"^sample_weight: .* declare {N} entries " \
            rf"but its blocks hold {k} \(X has {k} rows\).*sample_weight\.compute_chunk_sizes"
    elif case == "stale X":  # (y in memory, of the kept rows)
        inputs["X"], inputs["y"] = Z[:, :3], inputs["y"].compute()
        match = r"^X: a block of the dask array .* declares.*call X\.compute_chunk_sizes\(\)"
    elif case == "stale X, weights in memory":  # (of the kept rows; y of X's declared rows)
        inputs["X"], inputs["y"] = Z[:, :3], y
        inputs["sample_weight"] = inputs["sample_weight"].compute()
        match = r"^X: a block of the dask array .* declares.*call X\.compute_chunk_sizes\(\)"
    else:  # y of all the rows: the mismatch is real
        inputs["y"] = _lazy(y)
        match = rf"^y has {N} entries but X has {k} rows \(real sizes, not stale chunk"
    est = DPLogisticRegression(epsilon=1.0, delta=1e-6, data_norm="auto", classes=[0, 1],
                               optimizer="dp_gdws", random_state=0)
    with pytest.raises(ValueError, match=match):
        est.fit(inputs["X"], inputs["y"], sample_weight=inputs["sample_weight"])
    assert releases == [] and not hasattr(est, "data_norm_")


@pytest.mark.parametrize("which", ["X", "Y", "weight"])
@pytest.mark.parametrize("real", [100, 200])
def test_prepared_chunks_are_checked_against_the_declared_sizes(which, real):
    """The chunks the kernels run on are checked where they are prepared, whatever the inputs'
    graph says (here arrays that bypass the estimators' checks, blocks of 100 or 200 rows
    declared as 150): the kernels index them by the declared sizes and do not check."""
    from skdp._dask import DaskDesign

    rng = np.random.default_rng(0)

    def lying(d):
        shape = (real, d) if d else (real,)
        declared = (150, d) if d else (150,)
        return da.concatenate([
            da.from_delayed(dask.delayed(rng.normal)(size=shape), shape=declared, dtype=float)
            for _ in range(3)
        ])

    X = lying(3) if which == "X" else da.from_array(rng.normal(size=(450, 3)), chunks=(150, 3))
    Y = lying(1) if which == "Y" else da.ones((450, 1), chunks=(150, 1))
    w = lying(0) if which == "weight" else da.ones(450, chunks=150)
    with pytest.raises(ValueError, match=r"declares \(150.*compute_chunk_sizes"):
        DaskDesign(X, Y, w, 4.0, 1.0, 4.0, 1.0)


# -- bad values refused before any private release ------------------------------------------------
@pytest.mark.parametrize("bad", ["nan in X", "inf in X", "negative weight", "nan weight"])
@pytest.mark.parametrize("make", ["ridge", "logistic"])
def test_bad_values_are_refused_before_any_release_as_in_memory(bad, make, releases):
    """NaN or infinity in X, and a negative or non-finite weight, are refused with the
    in-memory error before DPRidge's y_bounds="auto" and data_norm="auto" are released (whose
    warnings print private values), as in memory: not once the chunks are prepared."""
    X, y = _data()
    w = np.ones(N)
    if bad == "nan in X":
        X[-1, 0] = np.nan
    elif bad == "inf in X":
        X[3, 2] = np.inf
    elif bad == "negative weight":
        w[-1] = -1.0
    else:
        w[200] = np.nan
    if make == "ridge":
        est = DPRidge(epsilon=0.5, delta=1e-6, data_norm="auto", y_bounds="auto",
                      optimizer="dp_gdws")
        y = 1000.0 + y
    else:
        est = DPLogisticRegression(epsilon=0.5, delta=1e-6, data_norm="auto", classes=[0, 1],
                                   optimizer="dp_gdws")
    with pytest.raises(ValueError) as in_memory:
        clone(est).fit(X, y, sample_weight=w)
    assert releases == []
    with pytest.raises(ValueError) as on_dask:
        est.fit(_lazy(X), _lazy(y), sample_weight=_lazy(w))
    assert releases == []
    words = {"nan in X": "Input X contains NaN", "inf in X": "Input X contains",
             "negative weight": "sample_weight must be finite and non-negative",
             "nan weight": "Input sample_weight contains NaN"}
    assert words[bad] in str(in_memory.value) and words[bad] in str(on_dask.value)


@pytest.mark.parametrize("lazy", [True, False], ids=["dask weights", "in-memory weights"])
def test_a_negative_weight_gets_the_in_memory_text_on_dask(lazy, releases):
    """A user trial met scikit-learn's text for a negative weight, which does not say what is
    allowed; skdp's (test_sample_weight.py) is given on Dask too, with dask or in-memory
    weights, before any release, naming no weight's value or row."""
    X, y = _data()
    w = np.ones(N)
    w[17] = -3.25
    est = DPLogisticRegression(epsilon=0.5, delta=1e-6, data_norm="auto", classes=[0, 1],
                               optimizer="dp_gdws")
    with pytest.raises(ValueError) as in_memory:
        clone(est).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError) as on_dask:
        est.fit(_lazy(X), _lazy(y), sample_weight=_lazy(w) if lazy else w)
    assert releases == []
    assert str(on_dask.value) == str(in_memory.value)
    assert str(on_dask.value).startswith("sample_weight must be finite and non-negative (a ")
    assert "3.25" not in str(on_dask.value) and "17" not in str(on_dask.value)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_bad_target_is_refused_before_any_release_as_in_memory(bad, releases):
    """A NaN or infinite target on Dask was found only when the chunks were prepared, after
    the private row bound (data_norm="auto", with public y_bounds): it is now checked in the
    same pass as X and the weights, before any release."""
    X, y = _data()
    y = 1000.0 + y
    y[17] = bad
    est = DPRidge(epsilon=0.5, delta=1e-6, data_norm="auto", y_bounds=(999.0, 1002.0),
                  optimizer="dp_gdws")
    with pytest.raises(ValueError, match="Input y contains"):
        clone(est).fit(X, y)
    assert releases == []
    with pytest.raises(ValueError, match="Input y contains"):
        est.fit(_lazy(X), _lazy(y))
    assert releases == []


def test_x_and_weights_are_checked_in_one_pass(monkeypatch):
    """X's and the weights' checks are one computation: the graph is read once (a weight column
    from X's own graph is not computed twice)."""
    import skdp._dask as skdp_dask

    X, _ = _data()
    computed = []

    def counting(block):
        computed.append(block.shape)
        return block

    Z = _lazy(np.column_stack([X, np.ones(N)])).map_blocks(counting, dtype=float)
    computed.clear()  # (dask's probe of the function on an empty block)
    calls = []
    original = skdp_dask.compute
    monkeypatch.setattr(skdp_dask, "compute", lambda *a: calls.append(a) or original(*a))
    w = skdp_dask.dask_sample_weight(Z[:, 3], skdp_dask.as_dask_inputs(Z[:, :3], np.zeros(N))[0],
                                     1.0)
    assert w is not None and len(calls) == 1 and len(computed) == len(CHUNKS)


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


# -- the weights scikit-learn accepts in memory ---------------------------------------------------
def test_scalar_weights_are_accepted_and_column_weights_refused_as_in_memory():
    """A scalar sample_weight is every row's weight on Dask as in memory; weights of shape
    (n, 1), in memory or on Dask, are refused with scikit-learn's message, as in memory."""
    X, y = _data()
    params = dict(epsilon=1.0, delta=1e-6, data_norm="auto", classes=[0, 1], random_state=5,
                  optimizer=DPGDWS(batch_size=0.2, max_iter=5), max_sample_weight=3.0)
    a = DPLogisticRegression(**params).fit(X, y, sample_weight=2.0)
    b = DPLogisticRegression(**params).fit(_lazy(X), _lazy(y), sample_weight=2.0)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-8, atol=1e-8)
    assert b.dp_event_ == a.dp_event_
    w = np.full((N, 1), 2.0)
    with pytest.raises(ValueError, match="Sample weights must be 1D array or scalar") as memory:
        DPLogisticRegression(**params).fit(X, y, sample_weight=w)
    for weights in [w, _lazy(w)]:
        with pytest.raises(ValueError) as dask_error:
            DPLogisticRegression(**params).fit(_lazy(X), _lazy(y), sample_weight=weights)
        assert str(dask_error.value) == str(memory.value)
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(599,\), expected \(600,\)"):
        DPLogisticRegression(**params).fit(_lazy(X), _lazy(y), sample_weight=da.from_array(w[1:, 0], chunks=150))
