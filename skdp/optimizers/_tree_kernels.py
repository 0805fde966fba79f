"""Jitted kernels of dp_nsgd_tree: the streaming noise-only tree and one NSGD-momentum epoch.

The released momentum is ``m_hat_t = m_t + noise_t``: the exact momentum ``m_t`` (ordinary
recursion) plus the noise the tree-aggregated node values carry, which only depends on the node
noises. ``noise_t`` is streamed (Tran & Cutkosky 2022, tree aggregation): with ``xi[l]`` the noise of the last completed
node at level l and ``k`` the number of trailing zeros of the step ``tau`` (the node completing at
``tau`` that enters the prefix is at level k, ``[tau - 2^k + 1, tau]``),

    Z_tau = dec Z_(tau-1) - sum_(l < k) dec^(2^l) xi[l] + xi_new,     xi[k] = xi_new,

which equals ``sum over the dyadic prefix nodes v of dec^(tau - end_v) xi_v`` exactly (tested
against explicit node sums). O(D log M) memory, amortised two D-vector operations per step.

The batch gradient prefetches rows ahead (an LLVM prefetch hint through a numba intrinsic): a
reshuffled batch reads scattered rows of X.
"""

import numpy as np
from numba import njit
from numba.extending import overload

from .._prefetch import PREFETCH_AHEAD, prefetch_row
from .._rows import add_tail, axpy_stored, dot_stored, row_weight, tail_dot
from ..losses import scalar_derivative
from ..privacy.noise import add_gaussian_noise
from ._glm import _add_vector_gradients, _n_outputs

__all__ = [
    "trailing_zeros", "tree_step", "batch_gradient", "nsgd_tree_epoch", "nsgd_tree_update",
    "N_STATE", "GRADIENT_ROW",
]


@njit(cache=True, nogil=True)
def trailing_zeros(t):
    """Number of trailing zero bits of the integer t >= 1 (the level of its top completing node)."""
    k = 0
    while (t & 1) == 0:
        t >>= 1
        k += 1
    return k


@njit(cache=True, nogil=True)
def _fresh_noise(rng, out, sigma):
    """out = N(0, sigma^2 I), drawn through the library's noise chokepoint."""
    for j in range(out.shape[0]):
        out[j] = 0.0
    add_gaussian_noise(rng, out, sigma)


@njit(cache=True, nogil=True)
def _trace_node(trace, row, exact, noise, replay):
    """Record a drawn node in ``trace[row]``; returns the next row.

    Recording: ``trace[row] = (exact, exact + noise)``. Replay: record this run's exact node value
    in ``trace[row, 0]`` and replace its freshly drawn noise by ``released - exact``, with
    ``released = trace[row, 1]`` the recorded run's node, so this run releases exactly that node.
    """
    for j in range(exact.shape[0]):
        trace[row, 0, j] = exact[j]
        if replay:
            noise[j] = trace[row, 1, j] - exact[j]
        else:
            trace[row, 1, j] = exact[j] + noise[j]
    return row + 1


@njit(cache=True, nogil=True)
def tree_step(
    rng, tau, Z, xi, decay, decpow, sigma, honaker, hon_a, cur, fresh,
    tracing, sx, leaf, scur, trace, row, replay=False,
):
    """Advance a noise-only tree by its step ``tau`` (1-based since its last reset).

    Draws the noise of the node(s) completing at ``tau`` and updates ``Z`` (the noise of the
    prefix ``[1, tau]`` with decay ``decay`` per step) and ``xi`` in place.

    Plain mode draws one node, the level-k node that enters the prefix (the right children
    completing at lower levels are never used, so they are never drawn; the accountant counts
    them anyway). Honaker mode draws every completing node, bottom-up, and replaces the level-l
    node's noise by its inverse-variance combination with its children's estimates (left child:
    ``xi[l-1]``, stored; right child: the estimate just computed), ``hon_a[l]`` being the weight.

    When ``tracing``, ``sx`` holds the exact (noise-free) node values in the same layout as
    ``xi``, ``leaf`` the exact value of the leaf completing at ``tau``, and every drawn node is
    written to ``trace[row]`` (exact, exact + its own fresh noise). Returns the next trace row.

    ``replay`` (record/replay tests only; needs ``tracing``): ``trace[row, 1]`` holds a recorded
    run's released node values. Every drawn node noise is drawn as usual (the random stream stays
    aligned) and then replaced by ``trace[row, 1] - exact``, so the node this run releases,
    ``exact + noise``, is the recorded run's (up to rounding). Everything downstream (the Honaker
    combinations, ``Z``, the released momentum ``exact momentum + Z``) is linear in the node
    values and their noises, so the released momentum is the recorded run's.
    """
    D = Z.shape[0]
    k = trailing_zeros(tau)
    if tracing:
        for j in range(D):
            scur[j] = leaf[j]
    if honaker:
        _fresh_noise(rng, cur, sigma)
        if tracing:
            row = _trace_node(trace, row, scur, cur, replay)
        for level in range(1, k + 1):
            dl = decpow[level - 1]
            if tracing:
                for j in range(D):
                    scur[j] = dl * sx[level - 1, j] + scur[j]
            _fresh_noise(rng, fresh, sigma)
            if tracing:
                row = _trace_node(trace, row, scur, fresh, replay)
            a = hon_a[level]
            for j in range(D):
                cur[j] = a * fresh[j] + (1.0 - a) * (dl * xi[level - 1, j] + cur[j])
    else:
        if tracing:
            for level in range(1, k + 1):
                dl = decpow[level - 1]
                for j in range(D):
                    scur[j] = dl * sx[level - 1, j] + scur[j]
        _fresh_noise(rng, cur, sigma)
        if tracing:
            row = _trace_node(trace, row, scur, cur, replay)
    if tracing:
        for j in range(D):
            sx[k, j] = scur[j]
    for j in range(D):
        Z[j] = decay * Z[j] + cur[j]
        xi[k, j] = cur[j]
    for level in range(k):
        dl = decpow[level]
        for j in range(D):
            Z[j] -= dl * xi[level, j]
    return row


@njit(cache=True, nogil=True)
def batch_gradient(X, Y, w, perm, start, stop, loss_id, clip, g, z, s):
    """g = sum over i in perm[start:stop] of the clipped per-example gradients.

    The same sum as ``_glm.clipped_gradient_sum`` (built from the same shared pieces), with the
    rows ``PREFETCH_AHEAD`` positions ahead prefetched: a reshuffled batch reads scattered rows,
    and without the hint every row waits for memory (2.5x slower on Adult). 1-D targets
    (``_glm.scalar_targets``: one output, not multinomial) compile the scalar loop alone.
    """
    for j in range(g.shape[0]):
        g[j] = 0.0
    _add_batch_rows(X, Y, w, perm, start, stop, loss_id, clip, g, z, s)


def _add_batch_rows(X, Y, w, perm, start, stop, loss_id, clip, g, z, s):
    raise NotImplementedError("jitted only")


@overload(_add_batch_rows)
def _add_batch_rows_impl(X, Y, w, perm, start, stop, loss_id, clip, g, z, s):
    if Y.ndim == 1:
        def scalar(X, Y, w, perm, start, stop, loss_id, clip, g, z, s):
            offset = tail_dot(X, w)  # the intercept column, once per batch (see _glm)
            total = 0.0
            for r in range(start, stop):
                if r + PREFETCH_AHEAD < stop:
                    prefetch_row(X, perm[r + PREFETCH_AHEAD])
                i = perm[r]
                m = dot_stored(X, i, w) + offset
                d = row_weight(X, i) * scalar_derivative(loss_id, m, Y[i], clip)
                if d != 0.0:
                    axpy_stored(X, i, d, g)
                    total += d
            add_tail(X, total, g)
        return scalar

    def vector(X, Y, w, perm, start, stop, loss_id, clip, g, z, s):
        _add_vector_gradients(X, Y, w, perm, start, stop, loss_id, clip, g, z, s)
    return vector


# Rows of the per-fit ``state`` matrix (D-vectors that persist across epochs).
_G, _Q, _MH, _ZIN, _ZEP, _CARRY, _CUR, _FRESH, _LEAF, _PIN, _SCUR = range(11)
N_STATE = 11
#: The row of ``state`` that holds a step's batch gradient (written by the caller on Dask).
GRADIENT_ROW = _G


@njit(cache=True, nogil=True)
def nsgd_tree_epoch(
    X, Y, w, perm, e, t0, T, loss_id, clip, lam, batch, alpha, eta0, linear, aligned, sigma,
    honaker, decpow_in, hon_a_in, decpow_ep, hon_a_ep, rng, state, xi_in, xi_ep, sx_in, sx_ep,
    trace, row, replay=False,
):
    """One epoch (number ``e`` >= 1, permutation ``perm``) of NSGD with tree-aggregated momentum.

    Per step ``tau = 1..M``: ``g`` = sum of the clipped per-example gradients of the batch
    ``perm[(tau-1) b : tau b]``; exact momentum ``q = dec q + alpha (g / b + lam w)`` (the
    regulariser depends only on released iterates, so it stays outside the tree); the tree
    noise (restart: within-epoch tree plus the decayed noise carried from the last epoch end;
    aligned: within-epoch tree for ``tau < M`` plus the decayed epoch-tree prefix, the epoch tree
    itself at ``tau = M``); ``w -= eta_t m_hat / ||m_hat||`` with ``m_hat = q + noise``.

    ``state`` (N_STATE, D) and the node stores persist across epochs; ``t0`` is the global step
    before this epoch. ``sigma == 0`` and no trace: no noise work at all (the exact
    NSGD-momentum trajectory). Returns the next trace row. ``replay`` (tests only, with a
    trace preloaded with a recorded run's): release the recorded node values (see
    :func:`tree_step`).
    """
    n = X.shape[0]
    K = _n_outputs(Y)
    M = (n + batch - 1) // batch
    z = np.zeros(K)
    s = np.zeros(K)
    g = state[_G]
    for tau in range(1, M + 1):
        start = (tau - 1) * batch
        stop = min(start + batch, n)
        batch_gradient(X, Y, w, perm, start, stop, loss_id, clip, g, z, s)
        row = nsgd_tree_update(
            w, tau, e, t0 + tau, T, M, lam, batch, alpha, eta0, linear, aligned, sigma,
            honaker, decpow_in, hon_a_in, decpow_ep, hon_a_ep, rng, state, xi_in, xi_ep, sx_in,
            sx_ep, trace, row, replay,
        )
    return row


@njit(cache=True, nogil=True)
def nsgd_tree_update(
    w, tau, e, t, T, M, lam, batch, alpha, eta0, linear, aligned, sigma, honaker, decpow_in,
    hon_a_in, decpow_ep, hon_a_ep, rng, state, xi_in, xi_ep, sx_in, sx_ep, trace, row,
    replay=False,
):
    """Step ``tau`` (1..M) of epoch ``e`` (global step ``t``) after its batch gradient: the
    exact momentum, the tree noise, the normalised move of ``w``; returns the next trace row.

    ``state[_G]`` holds the batch's sum of clipped per-example gradients, computed by
    :func:`batch_gradient` in :func:`nsgd_tree_epoch` or, for rows on Dask workers, summed over
    the chunks by the client (:mod:`skdp._dask`): the same update either way, so a fit with the
    same seed releases the same nodes.
    """
    D = w.shape[0]
    dec = 1.0 - alpha
    inv_b = 1.0 / batch
    gamma = dec**M
    tracing = trace.shape[0] > 0
    noisy = sigma > 0.0 or tracing
    g = state[_G]
    q = state[_Q]
    mh = state[_MH]
    Zin = state[_ZIN]
    Zep = state[_ZEP]
    carry = state[_CARRY]
    cur = state[_CUR]
    fresh = state[_FRESH]
    leaf = state[_LEAF]
    pin = state[_PIN]
    scur = state[_SCUR]
    for j in range(D):
        q[j] = dec * q[j] + alpha * (g[j] * inv_b + lam * w[j])
    if noisy:
        if tau == 1:
            for j in range(D):
                Zin[j] = 0.0
                pin[j] = 0.0
        for j in range(D):
            carry[j] *= dec
        if tracing:
            for j in range(D):
                leaf[j] = alpha * g[j] * inv_b
                pin[j] = dec * pin[j] + leaf[j]
        if aligned and tau == M:
            # the epoch leaf is the epoch's exact within-epoch momentum
            row = tree_step(
                rng, e, Zep, xi_ep, gamma, decpow_ep, sigma, honaker, hon_a_ep, cur, fresh,
                tracing, sx_ep, pin, scur, trace, row, replay,
            )
            for j in range(D):
                carry[j] = Zep[j]
                mh[j] = q[j] + carry[j]
        else:
            row = tree_step(
                rng, tau, Zin, xi_in, dec, decpow_in, sigma, honaker, hon_a_in, cur, fresh,
                tracing, sx_in, leaf, scur, trace, row, replay,
            )
            for j in range(D):
                mh[j] = q[j] + Zin[j] + carry[j]
            if tau == M:  # restart: the epoch-end noise is carried (post-processing)
                for j in range(D):
                    carry[j] = Zin[j] + carry[j]
    else:
        for j in range(D):
            mh[j] = q[j]
    nrm = 0.0
    for j in range(D):
        nrm += mh[j] * mh[j]
    nrm = np.sqrt(nrm)
    if nrm > 0.0:
        eta = eta0 * (1.0 - t / (T + 1.0)) if linear else eta0
        f = eta / nrm
        for j in range(D):
            w[j] -= f * mh[j]
    return row
