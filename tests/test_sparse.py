"""Sparse (CSR/CSC) input: the same model as dense input for the same seed, clipping on the
stored entries, and no densification."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg  # noqa: F401  (sp.linalg.norm)

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.linear_model._base import clip_rows
from skdp.optimizers import available_optimizers

from ._helpers import relative_objective_gap

CLASSES = (DPLogisticRegression, DPLinearSVC, DPRidge)


def _sparse_data(cls, n=150, d=30, density=0.2, seed=0, multiclass=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr") * 2.0
    X = sp.csr_matrix(X.multiply(1.0 / (1e-12 + sp.linalg.norm(X, axis=1)[:, None])))
    dense = X.toarray()
    score = dense[:, :5] @ rng.normal(size=5)
    if cls is DPRidge:
        return X, np.tanh(score)
    if multiclass:
        return X, np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    return X, (score > np.median(score)).astype(int)


@pytest.mark.parametrize("name", available_optimizers())
@pytest.mark.parametrize("cls", CLASSES)
def test_sparse_and_dense_give_the_same_model(cls, name):
    X, y = _sparse_data(cls)
    w = np.random.default_rng(1).uniform(0.0, 1.0, X.shape[0])
    dense = cls(optimizer=name, random_state=7).fit(X.toarray(), y, sample_weight=w)
    for container in (sp.csr_matrix, sp.csc_matrix, sp.csr_array):
        model = cls(optimizer=name, random_state=7).fit(container(X), y, sample_weight=w)
        np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(model.intercept_, dense.intercept_, rtol=1e-9, atol=1e-12)
        assert model.epsilon_ == dense.epsilon_
        scores = "predict" if cls is DPRidge else "decision_function"
        np.testing.assert_allclose(
            getattr(model, scores)(X), getattr(dense, scores)(X.toarray()), rtol=1e-9, atol=1e-12
        )


@pytest.mark.parametrize("name", ["dp_gdws", "dp_scd", "dp_nsgd_tree"])
def test_sparse_multiclass_matches_dense(name):
    X, y = _sparse_data(DPLogisticRegression, multiclass=True)
    dense = DPLogisticRegression(optimizer=name, random_state=2).fit(X.toarray(), y)
    model = DPLogisticRegression(optimizer=name, random_state=2).fit(X, y)
    np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", available_optimizers())
def test_sparse_nonprivate_fit_reaches_the_sklearn_optimum(name):
    X, y = _sparse_data(DPLogisticRegression, n=200)
    Xd = X.toarray()
    assert np.linalg.norm(Xd, axis=1).max() <= 1.0  # no row clipping: the plain objective
    model = DPLogisticRegression(epsilon=np.inf, optimizer=name).fit(X, y)
    assert relative_objective_gap("logistic", model, Xd, y) < 1e-6


def test_sparse_clipping_equals_dense_clipping_and_leaves_the_input_alone():
    rng = np.random.default_rng(0)
    X = sp.random(40, 12, density=0.3, random_state=1, format="coo") * 5.0
    # duplicate entries: a COO matrix may store (i, j) twice; the row norm must count their sum
    X = sp.coo_matrix(
        (np.r_[X.data, [3.0, 4.0]], (np.r_[X.row, [2, 2]], np.r_[X.col, [5, 5]])), shape=X.shape
    )
    before = X.copy()
    for fmt in ("csr", "csc", "coo"):
        Xf = X.asformat(fmt)
        clipped = clip_rows(Xf, 1.5, 2.0)
        assert sp.issparse(clipped)
        np.testing.assert_allclose(clipped.toarray(), clip_rows(X.toarray(), 1.5, 2.0))
        norms = np.linalg.norm(clipped.toarray()[:, :-1], axis=1)
        assert norms.max() <= 1.5 * (1 + 1e-12) and norms.max() > 1.4
        np.testing.assert_array_equal(Xf.toarray(), before.toarray())
    assert rng is not None


@pytest.mark.parametrize("block", [7, 1 << 16])
def test_blocked_sparse_clip_and_norms_equal_the_dense_ones(block, monkeypatch):
    """The clip and the row norms run over blocks of rows (``_CLIP_BLOCK`` stored entries): with
    blocks of 7 entries (many blocks, rows of up to 12 entries never split) they equal the dense
    computation, duplicate entries summed, empty rows and rows past the overflow of a sum of
    squares included."""
    import skdp._rows as rows
    from skdp.linear_model._bounds import _row_norms

    monkeypatch.setattr(rows, "_CLIP_BLOCK", block)
    # np.linalg.norm overflows past 1e154; the scaled reference does not
    X = sp.random(60, 12, density=0.4, random_state=3, format="coo") * 5.0
    X = sp.coo_matrix(
        (np.r_[X.data, [3.0, 4.0, 1e200]], (np.r_[X.row, [2, 2, 9]], np.r_[X.col, [5, 5, 0]])),
        shape=X.shape,
    ).tocsr()
    X = sp.csr_matrix(X.multiply((np.arange(60) % 5 != 0)[:, None]))  # empty rows
    assert len(rows._row_blocks(X.indptr)) > (20 if block == 7 else 0)
    dense = X.toarray()
    scale = np.abs(dense).max(axis=1, keepdims=True)
    reference = np.linalg.norm(dense / np.where(scale > 0, scale, 1.0), axis=1) * scale.ravel()
    np.testing.assert_allclose(_row_norms(X), reference, rtol=1e-14)
    for intercept in (None, 2.0):
        clipped = clip_rows(X, 1.5, intercept)
        np.testing.assert_allclose(clipped.toarray(), clip_rows(dense, 1.5, intercept),
                                   rtol=1e-14)
        norms = sp.linalg.norm(clipped[:, :12], axis=1)
        assert norms.max() <= 1.5 and norms.max() > 1.4  # the clip bounds every row


def test_sparse_clip_writes_one_copy(monkeypatch):
    """Clipping a CSR matrix allocates its clipped copy and little else (the temporaries are
    per block, here blocks of 4096 entries, a fiftieth of the matrix): the peak traced
    allocation is at most 1.2 times the copy's bytes (it was 1.8 times with full-size
    temporaries)."""
    import skdp._rows as rows
    from skdp._rows import clip_sparse_rows

    monkeypatch.setattr(rows, "_CLIP_BLOCK", 1 << 12)
    X = sp.random(20000, 500, density=0.02, random_state=0, format="csr")
    tracemalloc.start()
    out = clip_sparse_rows(X, 0.5, 1.0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    copy = out.data.nbytes + out.indices.nbytes + out.indptr.nbytes
    assert peak <= 1.2 * copy


@pytest.mark.parametrize("intercept", [None, 1.0])
def test_sparse_clip_with_the_norms_given_is_the_same(monkeypatch, intercept):
    """The norms data_norm="auto" computed (sparse_row_norms) are reused by the clip, not
    computed again: the same bits as the clip computing them, over several blocks and with
    duplicate entries; rows above the bound are clipped (the norms reach the factors)."""
    import skdp._rows as rows
    from skdp._rows import clip_sparse_rows, sparse_row_norms

    monkeypatch.setattr(rows, "_CLIP_BLOCK", 1 << 10)
    X = sp.random(3000, 200, density=0.03, random_state=1, format="coo")
    X = sp.csr_matrix((np.concatenate([X.data, X.data[:50]]),
                       (np.concatenate([X.row, X.row[:50]]), np.concatenate([X.col, X.col[:50]]))),
                      shape=X.shape)  # duplicates stored as such, summed by the clip
    norms = sparse_row_norms(X)
    bound = float(np.median(norms))
    given = clip_sparse_rows(X, bound, intercept, norms=norms)
    own = clip_sparse_rows(X, bound, intercept)
    np.testing.assert_array_equal(given.data, own.data)
    np.testing.assert_array_equal(given.indices, own.indices)
    np.testing.assert_array_equal(given.indptr, own.indptr)
    rows_out = np.sqrt(np.asarray(given[:, :200].multiply(given[:, :200]).sum(axis=1)).ravel())
    assert rows_out.max() <= bound and np.sum(norms > bound) > 1000


def test_sparse_fit_computes_the_row_norms_once(monkeypatch):
    """A private sparse fit with data_norm="auto" reads each row's norm once: the clip reuses
    the norms of the private median."""
    import skdp._rows as rows
    from skdp import DPLogisticRegression

    calls = []
    stored = rows._stored_row_norms
    monkeypatch.setattr(rows, "_stored_row_norms",
                        lambda *a: calls.append(a[2].shape[0]) or stored(*a))
    X = sp.random(500, 40, density=0.1, random_state=2, format="csr")
    y = np.arange(500) % 2
    DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    assert sum(calls) == 500


# The default optimizer in the default run; the others in the slow run (CI), for time.
@pytest.mark.parametrize("name", [
    n if n == "dp_gdws" else pytest.param(n, marks=pytest.mark.slow) for n in available_optimizers()
])
def test_wide_sparse_fit_does_not_densify(name):
    n, d = 400, 50_000  # dense float64 would be 160 MB
    X = sp.random(n, d, density=2e-4, random_state=0, format="csr")
    y = np.arange(n) % 2
    model = DPLogisticRegression(optimizer=name, random_state=0)
    model.fit(X[:50], y[:50])  # compile outside the measurement
    tracemalloc.start()
    model.fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert model.coef_.shape == (1, d)
    assert peak < 40e6, f"peak {peak / 1e6:.1f} MB: something densified a {n}x{d} matrix"


def test_sparse_predict_on_wrong_width_raises():
    X, y = _sparse_data(DPLogisticRegression)
    model = DPLogisticRegression(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(sp.csr_matrix((3, X.shape[1] + 1)))
