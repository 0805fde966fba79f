"""The multi-core clipped gradient sum of the full-batch optimizers (``_glm.block_gradient_sum``).

Its blocks depend on the batch size and the model size only, so the sum is the same bits with
one thread, two threads, or the sequential fallback, and agrees with the one-thread
``clipped_gradient_sum`` up to the order of the floating-point additions.
"""

import os
import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from skdp import DPGDWS, DPMASG, DPNAGOpt, DPSGLD, DPLogisticRegression, DPRidge
from skdp._rows import make_rows
from skdp.losses import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from skdp.optimizers import _glm
from skdp.optimizers._glm import (
    BLOCK_ROWS,
    block_gradient_sum,
    clipped_gradient_sum,
    gradient_workspace,
    n_blocks,
    threads_allowed,
)

N = 5 * BLOCK_ROWS + 123  # five blocks
TWO_THREADS = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than two threads here"
)


def _design(kind, n, p, rng):
    X = rng.standard_normal((n, p))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    weight = rng.uniform(0.0, 1.0, n)
    if kind == "array":
        return X
    if kind == "sparse":
        X[rng.random((n, p)) < 0.7] = 0.0
        return make_rows(sp.csr_matrix(X), weight)
    return make_rows(X, weight)


def _targets(loss_id, n, K, rng):
    if loss_id == MULTINOMIAL:
        return np.eye(K)[rng.integers(0, K, n)]
    if loss_id == SQUARED:
        return rng.standard_normal((n, 1))
    return np.where(rng.random((n, 1)) < 0.5, -1.0, 1.0)


CASES = [("array", LOGISTIC, 1), ("dense", LOGISTIC, 1), ("sparse", LOGISTIC, 1),
         ("dense", SQUARED, 1), ("dense", MULTINOMIAL, 3), ("sparse", MULTINOMIAL, 3)]


# slow: about 10 s (compile and data) of the 5-minute default run; CI runs it
@pytest.mark.slow
@pytest.mark.parametrize("kind, loss_id, K", CASES)
def test_block_sum_is_the_clipped_sum_whatever_the_threads(kind, loss_id, K):
    rng = np.random.default_rng(0)
    p = 7
    X = _design(kind, N, p, rng)
    Y = _targets(loss_id, N, K, rng)
    w = rng.standard_normal(p * K)
    idx = rng.permutation(N)  # a scattered batch, as Poisson sampling gives
    m = N - 50
    assert n_blocks(m, p * K) == 5  # the case really has several blocks
    ref = np.zeros(p * K)
    clipped_gradient_sum(X, Y, w, idx, m, loss_id, 0.5, ref, np.zeros(K), np.zeros(K))
    partial = gradient_workspace(N, p * K)
    out = {}
    for name, threads in (("threaded", _glm.THREADED), ("serial", _glm.SERIAL), ("flag", True)):
        out[name] = np.full(p * K, np.nan)
        block_gradient_sum(X, Y, w, idx, m, loss_id, 0.5, out[name], partial, threads)
    np.testing.assert_array_equal(out["threaded"], out["serial"])  # the same bits
    np.testing.assert_array_equal(out["threaded"], out["flag"])
    np.testing.assert_allclose(out["serial"], ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def test_the_block_layout_depends_on_the_sizes_only():
    assert n_blocks(0, 10) == 1
    assert n_blocks(2 * BLOCK_ROWS - 1, 10) == 1  # small batches: one block, one thread
    assert n_blocks(10**9, 10) == 64
    assert n_blocks(10**9, 2**20) == 1  # wide models: the partials stay within the budget
    assert n_blocks(10**9, 2**15) * 2**15 <= 2**20


def _fits(threads):
    # short fits (the sums are what is compared), on N rows: several blocks
    rng = np.random.default_rng(1)
    X = rng.standard_normal((N, 6))
    y = (X[:, 0] + 0.5 * rng.standard_normal(N) > 0).astype(int)
    Xr = rng.standard_normal((N, 6))
    yr = Xr[:, 1] + 0.1 * rng.standard_normal(N)
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            coefs = []
            for opt in (DPGDWS(max_iter=5), DPNAGOpt(max_iter=5), DPSGLD(max_iter=5)):
                est = DPLogisticRegression(epsilon=1.0, optimizer=opt, random_state=0)
                coefs.append(est.fit(X, y).coef_.ravel())
            est = DPRidge(epsilon=1.0, optimizer=DPMASG(max_iter=5), random_state=0)
            coefs.append(est.fit(Xr, yr).coef_.ravel())
    finally:
        numba.set_num_threads(old)
    return coefs


@pytest.fixture
def idle_cores(monkeypatch):
    """The fits use their threads whatever the load of the machine running the tests."""
    monkeypatch.setattr(_glm, "_cores_busy", lambda: False)
    monkeypatch.setattr(_glm, "PARALLEL_MIN_WORK", 0)  # the small test fits use them too


@TWO_THREADS
def test_a_fit_does_not_depend_on_the_number_of_threads(idle_cores):
    assert threads_allowed()
    one, two = _fits(1), _fits(2)
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_fits_after_its_parent_used_the_threads(idle_cores):
    # GNU OpenMP kills a forked child that starts a parallel region after its parent did:
    # children run the same blocks on one thread (the same result).
    parent = _fits(numba.get_num_threads())
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            child = _fits(numba.get_num_threads())
            code = 0 if all(np.array_equal(a, b) for a, b in zip(parent, child)) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), f"the forked child was killed (status {status})"
    assert os.WEXITSTATUS(status) == 0
    assert threads_allowed()  # the parent itself keeps its threads


def test_threads_only_for_steps_large_enough_to_pay_for_them(idle_cores, monkeypatch):
    monkeypatch.setattr(_glm, "PARALLEL_MIN_WORK", 1000)
    assert not threads_allowed(999)
    assert threads_allowed(1000) == threads_allowed()
    assert _glm.thread_mode(False) is _glm.SERIAL and _glm.thread_mode(True) is _glm.THREADED


def test_no_threads_when_numba_has_one_or_every_core_is_busy(monkeypatch, idle_cores):
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert not threads_allowed()
    finally:
        numba.set_num_threads(old)
    monkeypatch.undo()  # the real _cores_busy, on a faked load
    monkeypatch.setattr(_glm.os, "getloadavg", lambda: (os.cpu_count() + 5.0, 0.0, 0.0))
    assert _glm._cores_busy()
    assert not threads_allowed()
    monkeypatch.setattr(_glm.os, "getloadavg", lambda: (0.5, 0.0, 0.0))
    assert not _glm._cores_busy()


def test_logistic_derivative_is_the_two_sided_stable_formula_bit_for_bit():
    """The logistic derivative is computed with exp(-|t|) and a select (no branch on the sign
    of the margin, which mispredicts); it must be the stable two-branch formula exactly, so the
    sums, and the replay tests pinned on them, are unchanged."""
    import math

    from skdp._loss_kernels import scalar_derivative
    from skdp.losses import get_loss, loss_derivative

    lid = get_loss("logistic").loss_id
    rng = np.random.default_rng(0)
    zs = np.concatenate([rng.normal(size=2000) * 5, [0.0, -0.0, 1e-300, -1e-300, 30.0, -30.0,
                                                     745.0, -745.0, 1e6, -1e6]])
    for y in (1.0, -1.0):
        for z in zs:
            t = y * z
            if t >= 0:
                e = math.exp(-t)
                want = -y * e / (1.0 + e)
            else:
                want = -y / (1.0 + math.exp(t))
            assert scalar_derivative(lid, z, y, math.inf) == want, (y, z)
            s = np.empty(1)
            loss_derivative(lid, np.array([z]), np.array([[y]]), 0, 1, s)
            assert s[0] == want, (y, z)


def _explicit_design(kind, X, weight):
    """(kernel rows, the same rows as a plain float64 matrix, the weights) for a design kind."""
    n = X.shape[0]
    if kind == "array":
        return X, X, np.ones(n)
    if kind == "sparse":
        Xs = np.where(np.abs(X) > 0.8, X, 0.0)
        return make_rows(sp.csr_matrix(Xs), weight), Xs, weight
    if kind == "clipped with intercept":  # rows scaled on the fly, a constant column of 0.5
        from skdp._rows import clipped_dense_rows

        rows = make_rows(clipped_dense_rows(X, 2.0, 0.5), weight)
        factor = np.minimum(1.0, 2.0 / np.linalg.norm(X, axis=1))
        return rows, np.column_stack([X * factor[:, None], np.full(n, 0.5)]), weight
    if kind == "float32":  # read in place by the float32 kernels (a bound no row reaches)
        from skdp._rows import clipped_dense_rows

        X32 = X.astype(np.float32)
        rows = make_rows(clipped_dense_rows(X32, 1e6), weight)
        assert rows.values.dtype == np.float32
        return rows, X32.astype(np.float64), weight
    return make_rows(X, weight), X, weight


@pytest.mark.parametrize("loss_id", [MULTINOMIAL, LOGISTIC, SQUARED_HINGE])
@pytest.mark.parametrize("kind", ["array", "dense", "sparse", "clipped with intercept", "float32"])
def test_vector_sum_is_the_explicit_sum_of_clipped_outer_products(kind, loss_id):
    """K > 1 outputs (one output at a time over contiguous copies of W's columns): the sum is
    ``sum_i weight_i x_i clip(loss'(W' x_i))'``, computed here with numpy alone, for every design
    kind; the same for dp_nsgd_tree's batch kernel."""
    from skdp.optimizers._tree_kernels import batch_gradient

    rng = np.random.default_rng(3)
    n, d, K, tau = 200, 7, 4, 0.7
    X = rng.standard_normal((n, d)) * rng.uniform(0.2, 3.0, (n, 1))
    rows, dense, weight = _explicit_design(kind, X, rng.uniform(0.0, 2.0, n))
    if loss_id == MULTINOMIAL:
        Y = np.eye(K)[rng.integers(0, K, n)]
    else:
        Y = np.where(rng.random((n, K)) < 0.5, -1.0, 1.0)
    p = dense.shape[1]
    w = rng.standard_normal(p * K)
    idx = np.sort(rng.choice(n, 90, replace=False)).astype(np.int64)
    expected = np.zeros((p, K))
    for i in idx:
        z = dense[i] @ w.reshape(p, K)
        if loss_id == MULTINOMIAL:
            e = np.exp(z - z.max())
            s = e / e.sum() - Y[i]
        elif loss_id == LOGISTIC:
            s = -Y[i] / (1.0 + np.exp(Y[i] * z))
        else:
            s = -2.0 * Y[i] * np.maximum(0.0, 1.0 - Y[i] * z)
        norm = np.linalg.norm(s)
        s = s * (tau / norm) if norm > tau else s
        expected += weight[i] * np.outer(dense[i], s)
    tol = 1e-12 * np.abs(expected).max()
    out = np.full(p * K, np.nan)
    clipped_gradient_sum(rows, Y, w, idx, idx.size, loss_id, tau, out, np.zeros(K), np.zeros(K))
    np.testing.assert_allclose(out, expected.ravel(), rtol=1e-11, atol=tol)
    g = np.full(p * K, np.nan)
    batch_gradient(rows, Y, w, idx, 0, idx.size, loss_id, tau, g, np.zeros(K), np.zeros(K))
    np.testing.assert_allclose(g, expected.ravel(), rtol=1e-11, atol=tol)
