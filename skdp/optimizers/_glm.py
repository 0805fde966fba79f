"""Jitted building blocks shared by the optimizer kernels: batch sampling and clipped gradients.

Parameters are a flat vector ``w`` of length ``p * K`` (row-major view of the (p, K) matrix);
per-example work touches one row of X twice (margin, then gradient), which is the memory-friendly
order for row-major data. ``X`` is any design of :mod:`skdp._rows` (dense or sparse rows, with
example weights); the per-example gradient is the weight times the clipped gradient.
"""

from collections import namedtuple
import os
import threading

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .._prefetch import PREFETCH_AHEAD, prefetch_row
from .._rows import (
    DenseRows, SparseRows, add_example_gradient, add_tail, axpy_row, axpy_stored, design_kind,
    dot_row, dot_stored, margins, row_weight, tail_dot,
)
from ..losses import MULTINOMIAL, clip_vector, huber_value, loss_derivative, scalar_derivative

__all__ = [
    "poisson_batch", "clipped_gradient_sum", "block_gradient_sum", "gradient_workspace",
    "n_blocks", "threads_allowed", "thread_mode", "SERIAL", "THREADED", "value_and_gradient",
    "dot_row", "axpy_row", "add_example_gradient", "full_batch_oracle",
    "scalar_targets", "outputs_as_rows", "add_outer_to_rows", "add_rows_as_outputs",
]


@njit(cache=True, nogil=True)
def poisson_batch(rng, n, q, perm):
    """Draw a Poisson sample with rate q: its indices, increasing, end up in ``perm[:m]``;
    returns m.

    Every row is in the sample independently with probability q: the numbers of rows skipped
    between two sampled rows are independent Geometric(q) variables (failures before a
    success), drawn by inversion, ``floor(log(U) / log(1 - q))`` with U uniform on (0, 1]
    (``P(skip >= k) = P(U <= (1 - q)^k) = (1 - q)^k``). That is exactly Poisson sampling in
    distribution, and it needs uniforms only: numba's binomial and bounded-integer samplers
    took about 4 s to compile. ``perm`` (length n) is only the output buffer; the rows come out
    in increasing order, which reads memory forwards.
    """
    if q >= 1.0:
        return n
    log_keep = np.log1p(-q)
    m = 0
    last = -1  # the last sampled row
    while True:
        skip = np.floor(np.log(1.0 - rng.random()) / log_keep)
        if skip >= n - 1 - last:  # the next sampled row would be past the end
            return m
        last += 1 + int(skip)
        perm[m] = last
        m += 1


@njit(cache=True, nogil=True)
def clipped_gradient_sum(X, Y, w, idx, m, loss_id, tau, out, z, s):
    """out = sum over i in idx[:m] of the weighted clipped per-example gradients (no
    regulariser): ``w_i * clip(loss'_i) x_i``. One thread, rows in order (see
    :func:`block_gradient_sum` for the multi-core sum of the full-batch optimizers)."""
    for j in range(out.shape[0]):
        out[j] = 0.0
    # an int64 start, as the block loops pass: a literal 0 would compile the row loops again
    _add_clipped_gradients(X, Y, w, idx, np.int64(0), m, loss_id, tau, out, z, s)


@njit(cache=True, nogil=True)
def _add_clipped_gradients(X, Y, w, idx, start, stop, loss_id, tau, out, z, s):
    """out += the weighted clipped per-example gradients of the rows idx[start:stop], in order."""
    K = Y.shape[1]
    if K == 1 and loss_id != MULTINOMIAL:  # scalar fast path (vectorised dot and axpy)
        _add_scalar_gradients(X, Y, w, idx, start, stop, loss_id, tau, out)
        return
    _add_vector_gradients(X, Y, w, idx, start, stop, loss_id, tau, out, z, s)


@njit(cache=True, nogil=True)
def _add_vector_gradients(X, Y, w, idx, start, stop, loss_id, tau, out, z, s):
    """:func:`_add_clipped_gradients` for K > 1 outputs, one output at a time.

    The flat parameters interleave the outputs (``w[j * K + k]``), so a row's margins and its
    gradient in that layout are strided loops the compiler does not vectorise (about 1 us a row
    at d = 100, K = 3, against 60 ns for K = 1). Here the K columns of W are copied once per
    call into contiguous rows, each margin and each gradient update is the scalar path's
    contiguous dot and axpy (:func:`~skdp._rows.dot_stored`, :func:`~skdp._rows.axpy_stored`,
    the constant column once per call), and the sums are added back into ``out`` in its
    layout. The same sum, up to the order of the floating-point additions.
    """
    K = Y.shape[1]
    wt = outputs_as_rows(w, K)
    gt = np.zeros_like(wt)
    offset = np.empty(K)
    total = np.zeros(K)
    for k in range(K):
        offset[k] = tail_dot(X, wt[k])
    for r in range(start, stop):
        if r + PREFETCH_AHEAD < stop:  # a sampled batch's rows are scattered (a hint only)
            prefetch_row(X, idx[r + PREFETCH_AHEAD])
        i = idx[r]
        for k in range(K):
            z[k] = dot_stored(X, i, wt[k]) + offset[k]
        loss_derivative(loss_id, z, Y, i, K, s)
        clip_vector(s, K, tau)
        add_outer_to_rows(X, i, row_weight(X, i), s, gt, total)
    add_rows_as_outputs(X, gt, total, out)


@njit(cache=True, nogil=True)
def outputs_as_rows(w, K):
    """The (K, p) copy of the flat row-major (p, K) parameters ``w``: output k's coefficients
    contiguous in row k (the layout of the K > 1 hot loops, see :func:`_add_vector_gradients`)."""
    p = w.shape[0] // K
    wt = np.empty((K, p))
    for j in range(p):
        for k in range(K):
            wt[k, j] = w[j * K + k]
    return wt


@njit(cache=True, nogil=True)
def add_outer_to_rows(X, i, a, s, gt, total):
    """``gt[k] += a s[k] x_i`` over the stored values of row i, for each output k (layout of
    :func:`outputs_as_rows`); the constant column's coefficients are summed into ``total``
    (added once by :func:`add_rows_as_outputs`)."""
    for k in range(gt.shape[0]):
        u = a * s[k]
        if u != 0.0:  # a zero adds nothing (and 0 * inf would be NaN)
            axpy_stored(X, i, u, gt[k])
            total[k] += u


@njit(cache=True, nogil=True)
def add_rows_as_outputs(X, gt, total, out):
    """``out += gt`` from the (K, p) layout of :func:`outputs_as_rows` into the flat (p, K) one,
    after adding each output's constant-column part (``total``, see :func:`add_outer_to_rows`)."""
    K, p = gt.shape
    for k in range(K):
        add_tail(X, total[k], gt[k])
    for j in range(p):
        for k in range(K):
            out[j * K + k] += gt[k, j]


@njit(cache=True, nogil=True)
def _add_scalar_gradients(X, Y, w, idx, start, stop, loss_id, tau, out):
    """:func:`_add_clipped_gradients` for one output and a single-output loss (not
    multinomial): ``Y`` of shape (n, 1), or (n,) (see :func:`scalar_targets`)."""
    offset = tail_dot(X, w)  # the intercept column's margin, the same for every row
    total = 0.0
    for r in range(start, stop):
        if r + PREFETCH_AHEAD < stop:  # a sampled batch's rows are scattered (a hint only)
            prefetch_row(X, idx[r + PREFETCH_AHEAD])
        i = idx[r]
        m = dot_stored(X, i, w) + offset
        d = row_weight(X, i) * scalar_derivative(loss_id, m, _target(Y, i), tau)
        if d != 0.0:
            axpy_stored(X, i, d, out)
            total += d
    add_tail(X, total, out)


def _target(Y, i):
    raise NotImplementedError("jitted only")


@overload(_target)
def _target_impl(Y, i):
    if Y.ndim == 1:
        return lambda Y, i: Y[i]
    return lambda Y, i: Y[i, 0]


def _add_rows(X, Y, w, idx, start, stop, loss_id, tau, out, z, s):
    raise NotImplementedError("jitted only")


@overload(_add_rows)
def _add_rows_impl(X, Y, w, idx, start, stop, loss_id, tau, out, z, s):
    # 1-D targets (:func:`scalar_targets`) are typed to the scalar path alone: a binary or
    # regression fit compiles neither the vector losses nor the per-output loops.
    if Y.ndim == 1:
        def scalar(X, Y, w, idx, start, stop, loss_id, tau, out, z, s):
            _add_scalar_gradients(X, Y, w, idx, start, stop, loss_id, tau, out)
        return scalar

    def vector(X, Y, w, idx, start, stop, loss_id, tau, out, z, s):
        _add_clipped_gradients(X, Y, w, idx, start, stop, loss_id, tau, out, z, s)
    return vector


def _n_outputs(Y):
    raise NotImplementedError("jitted only")


@overload(_n_outputs)
def _n_outputs_impl(Y):
    if Y.ndim == 1:
        return lambda Y: 1
    return lambda Y: Y.shape[1]


def scalar_targets(Y, loss_id):
    """The targets as the gradient sums want them: a 1-D view of a one-output ``Y`` of a
    single-output loss (their scalar path, compiled alone), else ``Y`` as it is."""
    if Y.ndim == 2 and Y.shape[1] == 1 and loss_id != MULTINOMIAL:
        return Y.reshape(-1)
    return Y


# -- the multi-core sum ------------------------------------------------------------------------
# The rows idx[:m] are cut into a fixed layout of contiguous blocks that depends on (m, D) only,
# never on the number of threads: each block sums its rows in order into its own partial vector,
# and the partials are added in block order. The result is therefore the same bits whatever the
# number of threads (one, two, or the sequential fallback), and differs from the one-thread
# ``clipped_gradient_sum`` only in the order of the floating-point additions.
#
# Privacy is unaffected: the released quantity is still the sum of the same clipped per-example
# gradients, the same function of the data; each term is clipped exactly as before, so one
# record still moves the sum by at most G (the sensitivity the noise is calibrated to). Only
# the rounding of the sum changes, which the one-thread sum has too, in another order.

#: Fewest rows per block (fewer than 2 * BLOCK_ROWS rows: one block, one thread).
BLOCK_ROWS = 2048
#: Fewest rows x parameters of a step that uses the threads (see :func:`threads_allowed`).
PARALLEL_MIN_WORK = 1 << 21
#: Most blocks (enough for dynamic balance on a few cores, few partials to add).
MAX_BLOCKS = 64
#: Most doubles held by the partial vectors (n_blocks * D): wide models get fewer blocks.
PARTIAL_BUDGET = 1 << 20


@njit(cache=True, nogil=True, inline="always")
def n_blocks(m, D):
    """Blocks of the layout for m rows and D parameters (a function of m and D only)."""
    nb = m // BLOCK_ROWS
    return max(1, min(nb, MAX_BLOCKS, PARTIAL_BUDGET // max(D, 1)))


# A parallel loop cannot take a named tuple holding a tuple (the ``shape`` of the designs): it
# gets the arrays and sizes in a flat named tuple and rebuilds the design inside the loop.
_DenseFlat = namedtuple("_DenseFlat", ["values", "weight", "scale", "tail", "n", "p"])
_SparseFlat = namedtuple("_SparseFlat", ["data", "indices", "indptr", "weight", "n", "p"])


def _flat(X):
    raise NotImplementedError("jitted only")


@overload(_flat, inline="always")
def _flat_impl(X):
    kind = design_kind(X)
    if kind == "array":
        return lambda X: X
    if kind == "dense":
        return lambda X: _DenseFlat(X.values, X.weight, X.scale, X.tail, X.shape[0], X.shape[1])
    if kind == "sparse":
        return lambda X: _SparseFlat(
            X.data, X.indices, X.indptr, X.weight, X.shape[0], X.shape[1]
        )
    return None


def _unflat(F):
    raise NotImplementedError("jitted only")


@overload(_unflat, inline="always")
def _unflat_impl(F):
    if isinstance(F, types.Array):
        return lambda F: F
    if isinstance(F, types.BaseNamedTuple) and F.instance_class is _DenseFlat:
        return lambda F: DenseRows(F.values, F.weight, F.scale, F.tail, (F.n, F.p))
    if isinstance(F, types.BaseNamedTuple) and F.instance_class is _SparseFlat:
        return lambda F: SparseRows(F.data, F.indices, F.indptr, F.weight, (F.n, F.p))
    return None


@njit(cache=True, nogil=True)
def _block_sums_threaded(X, Y, w, idx, m, nb, loss_id, tau, partial):
    _block_sums_parallel(_flat(X), Y, w, idx, m, nb, loss_id, tau, partial)


@njit(cache=True, nogil=True, parallel=True)
def _block_sums_parallel(F, Y, w, idx, m, nb, loss_id, tau, partial):
    K = _n_outputs(Y)
    for b in prange(nb):
        X = _unflat(F)
        z = np.empty(K)
        s = np.empty(K)
        part = partial[b]
        part[:] = 0.0
        _add_rows(X, Y, w, idx, b * m // nb, (b + 1) * m // nb, loss_id, tau, part, z, s)


def _serial_block_sums(X, Y, w, idx, m, nb, loss_id, tau, partial):
    raise NotImplementedError("jitted only")


@overload(_serial_block_sums)
def _serial_block_sums_impl(X, Y, w, idx, m, nb, loss_id, tau, partial):
    if Y.ndim == 1:  # the scalar path called directly: fewer functions to compile
        def scalar(X, Y, w, idx, m, nb, loss_id, tau, partial):
            for b in range(nb):
                part = partial[b]
                part[:] = 0.0
                _add_scalar_gradients(X, Y, w, idx, b * m // nb, (b + 1) * m // nb, loss_id, tau,
                                      part)
        return scalar

    def impl(X, Y, w, idx, m, nb, loss_id, tau, partial):
        K = Y.shape[1]
        z = np.empty(K)
        s = np.empty(K)
        for b in range(nb):
            part = partial[b]
            part[:] = 0.0
            _add_clipped_gradients(
                X, Y, w, idx, b * m // nb, (b + 1) * m // nb, loss_id, tau, part, z, s
            )
    return impl


def _block_sums(threads, X, Y, w, idx, m, nb, loss_id, tau, partial):
    raise NotImplementedError("jitted only")


@overload(_block_sums)
def _block_sums_impl(threads, X, Y, w, idx, m, nb, loss_id, tau, partial):
    # The choice is made when the kernel is typed, from the type of ``threads`` (see
    # :func:`thread_mode`), so that a kernel compiles the parallel loop (several seconds of
    # compilation) only when it is given THREADED: small fits never pay for it.
    if isinstance(threads, types.Array) and threads.ndim == 2:  # THREADED
        def impl(threads, X, Y, w, idx, m, nb, loss_id, tau, partial):
            if nb > 1:
                _block_sums_threaded(X, Y, w, idx, m, nb, loss_id, tau, partial)
            else:
                _serial_block_sums(X, Y, w, idx, m, nb, loss_id, tau, partial)
        return impl
    if isinstance(threads, types.Boolean):  # a run-time flag: both loops are compiled
        def impl(threads, X, Y, w, idx, m, nb, loss_id, tau, partial):
            if threads and nb > 1:
                _block_sums_threaded(X, Y, w, idx, m, nb, loss_id, tau, partial)
            else:
                _serial_block_sums(X, Y, w, idx, m, nb, loss_id, tau, partial)
        return impl
    # SERIAL, None or an omitted argument: the blocks one after the other
    def impl(threads, X, Y, w, idx, m, nb, loss_id, tau, partial):
        _serial_block_sums(X, Y, w, idx, m, nb, loss_id, tau, partial)
    return impl


#: ``threads`` tags of the kernels: their types (not values) pick the loop at compile time.
SERIAL = np.empty(0)
THREADED = np.empty((0, 0))


def thread_mode(allowed):
    """The ``threads`` argument of the kernels: THREADED when ``allowed``, else SERIAL."""
    return THREADED if allowed else SERIAL


@njit(cache=True, nogil=True)
def block_gradient_sum(X, Y, w, idx, m, loss_id, tau, out, partial, threads):
    """``clipped_gradient_sum`` on the fixed block layout, on several cores when ``threads``.

    ``partial`` is a work array of shape at least ``(n_blocks(m, D), D)`` (allocate
    ``(n_blocks(n, D), D)`` once per fit). ``threads`` is :data:`THREADED` or :data:`SERIAL`
    (see :func:`thread_mode`; a bool also works and compiles both loops). The result is the
    same bits either way.
    """
    D = out.shape[0]
    nb = n_blocks(m, D)
    _block_sums(threads, X, Y, w, idx, m, nb, loss_id, tau, partial)
    for j in range(D):
        out[j] = partial[0, j]
    for b in range(1, nb):
        for j in range(D):
            out[j] += partial[b, j]


@njit(cache=True, nogil=True)
def gradient_workspace(n, D):
    """The ``partial`` work array of :func:`block_gradient_sum` for batches of up to n rows."""
    return np.empty((n_blocks(n, D), D))


def full_batch_oracle(problem, threads):
    """``w -> the sum over all rows of the weighted clipped per-example gradients at w`` of an
    in-memory problem: :func:`block_gradient_sum` on the rows in order (the sum the fused
    kernels compute at q = 1, the same bits), called from the Python loops of
    :mod:`skdp.optimizers._loops`.

    A full-batch fit then compiles this one kernel, not an optimizer loop with its noise and
    trace: the step's other work is a few vector operations on length ``p * K``, microseconds
    next to the pass over the rows. The returned vector is a buffer the next call overwrites.
    ``threads`` is :data:`THREADED` or :data:`SERIAL` (see :func:`thread_mode`).
    """
    X = problem.rows
    loss_id, tau = problem.loss.loss_id, float(problem.clip)
    Y = scalar_targets(problem.Y, loss_id)
    n, D = problem.n_samples, problem.dim
    idx = np.arange(n, dtype=np.int64)
    out = np.empty(D)
    partial = np.empty((n_blocks.py_func(n, D), D))  # gradient_workspace, nothing to compile

    def oracle(w):
        block_gradient_sum(X, Y, w, idx, n, loss_id, tau, out, partial, threads)
        return out

    return oracle


_FORKED = False


def _after_fork():
    global _FORKED
    _FORKED = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def threads_allowed(work=None):
    """Whether the kernels may run their parallel loops in this process and thread, now.

    Not when numba has one thread (``numba.set_num_threads(1)`` or ``NUMBA_NUM_THREADS=1``
    turn the threads off), not in a forked child (GNU OpenMP, numba's usual threading layer,
    kills a forked child that starts a parallel region after its parent did), not off the
    main thread when the layer is numba's "workqueue" (not thread-safe), and not while every
    core is busy (see :func:`_cores_busy`), and not for a step of fewer than
    :data:`PARALLEL_MIN_WORK` entries (``work`` = rows x parameters, when given): there a
    step takes about a millisecond, threads gain little, and compiling the parallel loop costs
    seconds on the first fit. The result is the same bits either way.
    """
    if work is not None and work < PARALLEL_MIN_WORK:
        return False
    if _FORKED or numba.get_num_threads() < 2 or _cores_busy():
        return False
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel function has run yet: load the layer to know it
        from numba.np.ufunc.parallel import _launch_threads

        _launch_threads()
        layer = numba.threading_layer()
    return layer != "workqueue" or threading.current_thread() is threading.main_thread()


def _cores_busy():
    """Whether the 1-minute load average exceeds the cores by one (this fit's own threads
    count in it: a fit on two threads of an idle 2-core machine keeps it near 2).

    A parallel sum waits for its slowest block: with every core taken by other work, the second
    thread waits for the scheduler and the fit gets slower, not faster (Adult, load average
    about 25 on 2 cores: dp_gdws 2.7 s on two threads against 1.3 s on one).
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return False
    return load >= (os.cpu_count() or 1) + 1.0


@njit(cache=True, nogil=True)
def value_and_gradient(X, Y, w, loss_id, tau, lam, out, z, s):
    """Full objective F(w) ((1/n) sum of weighted Huberised losses + lam/2 ||w||^2) and its
    gradient into ``out``."""
    n = X.shape[0]
    K = Y.shape[1]
    for j in range(out.shape[0]):
        out[j] = 0.0
    total = 0.0
    inv_n = 1.0 / n
    if K == 1 and loss_id != MULTINOMIAL:  # scalar fast path
        offset = tail_dot(X, w)  # the constant column: its margin and gradient once, not per row
        tail_total = 0.0
        for i in range(n):
            wi = row_weight(X, i)
            if wi == 0.0:
                continue
            z[0] = dot_stored(X, i, w) + offset
            s[0] = scalar_derivative(loss_id, z[0], Y[i, 0], np.inf)
            total += wi * huber_value(loss_id, z, Y, i, 1, s, tau)
            d = min(max(s[0], -tau), tau)
            if d != 0.0:
                axpy_stored(X, i, wi * d * inv_n, out)
                tail_total += wi * d * inv_n
        add_tail(X, tail_total, out)
        n = 0  # skip the generic loop
    for i in range(n):
        wi = row_weight(X, i)
        if wi == 0.0:
            continue
        margins(X, w, i, K, z)
        loss_derivative(loss_id, z, Y, i, K, s)
        total += wi * huber_value(loss_id, z, Y, i, K, s, tau)
        clip_vector(s, K, tau)
        add_example_gradient(X, i, s, K, wi * inv_n, out)
    reg = 0.0
    for j in range(out.shape[0]):
        out[j] += lam * w[j]
        reg += w[j] * w[j]
    return total * inv_n + 0.5 * lam * reg
