"""Jitted pieces of dp_scd: the dual coordinate updates and the private mini-batch kernel
(at ``epsilon = inf`` dp_scd runs the shared non-private solver, :mod:`._nonprivate`).

Notation (sklearn layout, examples are rows). The primal is
``F(W) = (1/n) sum_i loss(W.T x_i, y_i) + (lam/2) ||W||_F^2`` with ``W`` of shape (p, K); the
dual variable of example i is a K-vector ``alpha_i``; the shared vector is
``V = sum_i outer(x_i, alpha_i)`` (flat, length p*K, index j*K+k, like every skdp kernel) and the
primal point is ``W = V / Lam`` with ``Lam = lam * n``. Per-loss dual parameterisation
(``beta`` is the variable the conjugate is written in):

=============== ======================== ==================================================
loss            beta                     conjugate ``loss*(-alpha)`` and its domain
=============== ======================== ==================================================
squared         ``alpha``                ``alpha^2/2 - y alpha``;  ``|alpha| <= tau``
squared hinge   ``y * alpha`` (per k)    ``beta^2/4 - beta``;  ``beta >= 0``, ``||beta|| <= tau``
logistic (K=1)  ``y * alpha``            ``beta log beta + (1-beta) log(1-beta)``, ``[0, min(1,tau)]``
multinomial     ``y - alpha``            ``sum_k beta_k log beta_k``, beta in the simplex
=============== ======================== ==================================================

The bound ``tau`` is the problem's derivative clip (the dual of the Huberised loss is the
conjugate restricted to ``||alpha|| <= tau``), so the dual method minimises exactly the
objective of :class:`~skdp.optimizers.Problem`; ``tau = inf`` at ``epsilon = inf``.

The coordinate subproblem of example j with ``sigma'`` (``Lsub``), margins ``m = W.T x_j`` and
``s = ||x_j||^2``, ``c = Lsub * s / Lam``, minimises over the new dual block ``alpha'``::

    loss*(-alpha') + m . (alpha' - alpha) + (c / 2) ||alpha' - alpha||^2

(the CoCoA+ local subproblem of Ma et al. 2015 scaled by n; ``Lsub = 1`` is plain SDCA).

Example weights ``w_j`` (:mod:`skdp._rows`): the loss of example j is ``w_j loss_j``, the shared
vector is ``V = sum_j w_j outer(x_j, alpha_j)`` and the subproblem above holds with
``c = Lsub * w_j * s / Lam`` (divide the weighted subproblem by ``w_j``); the dual block still
lives in the unweighted domain. A private step adds ``w_j zeta_j x_j`` to V, with ``zeta_j``
clipped as before, so the sensitivity is ``max_sample_weight * update_clip * R``.
"""

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..losses import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE, clip_vector
from ..privacy.noise import add_gaussian_noise
from .._prefetch import PREFETCH_AHEAD, prefetch_entry, prefetch_row, prefetch_row_weight
from .._rows import (
    add_tail, axpy_stored, clip_limit, dot_stored, margins_and_sqnorm, row_weight, tail_dot,
)
from ._glm import add_outer_to_rows, add_rows_as_outputs, outputs_as_rows

__all__ = ["dp_scd_kernel", "poisson_sorted", "coordinate_update", "update_path"]

#: ``path`` tags of :func:`dp_scd_kernel`: their types (not values) pick the batch's update loop
#: when the kernel is compiled, so a K = 1 fit (binary logistic, squared hinge, ridge) never
#: compiles the vector updates (multinomial Newton, vector clipping), about half the kernel.
SCALAR_PATH = np.empty(0)
VECTOR_PATH = np.empty((0, 0))


def update_path(K, loss_id):
    """The ``path`` argument of :func:`dp_scd_kernel` for K outputs of loss ``loss_id``."""
    return SCALAR_PATH if K == 1 and loss_id != MULTINOMIAL else VECTOR_PATH

#: Margin of the dual box of the logistic losses for the private one-step update (the paper's
#: code uses 1e-4): the Newton step needs beta strictly inside (0, 1).
PRIVATE_BOX = 1e-4


@njit(cache=True, nogil=True)
def _logistic_newton_step(x, ym, c, lo, hi):
    """One safeguarded Newton step of :func:`_logistic_newton` (``n_newton = 1``, the private
    update) without data-dependent branches: the bracket and the bisection fallback are selects,
    and phi'(x) = logit(x) + ym takes one logarithm. The hot loop of dp_scd runs it once per
    sampled row, so a mispredicted branch or a second logarithm is a large part of a row's cost.
    """
    g = math.log(x / (1.0 - x)) + ym
    below = g < 0.0  # the root of phi' lies above x: bracket (x, hi); else (lo, x)
    a = x if below else lo
    bb = hi if below else x
    xx = x * (1.0 - x)
    xn = x - g * xx / (1.0 + c * xx)  # x - g / phi''(x), phi'' = 1 / (x (1 - x)) + c
    xn = xn if (xn >= a) & (xn <= bb) else 0.5 * (a + bb)
    # an empty bracket (x already at the box's edge) or g = 0: x stays
    return xn if (g != 0.0) & (a < bb) else x


@njit(cache=True, nogil=True)
def _logistic_newton(b0, ym, c, lo, hi, n_newton):
    """Minimise phi(b) = b log b + (1-b) log(1-b) + ym (b - b0) + (c/2) (b - b0)^2 on [lo, hi].

    Newton from ``b0`` (already inside the box) safeguarded by a bracket (rtsafe): the root of
    phi' is kept bracketed and a Newton point that leaves the bracket is replaced by bisection.
    ``n_newton = 1`` is the private "one safeguarded Newton step".
    """
    x = b0
    g = math.log(x) - math.log1p(-x) + ym
    if g < 0.0:
        a, bb = x, hi
        if hi <= x:
            return x
    elif g > 0.0:
        a, bb = lo, x
        if lo >= x:
            return x
    else:
        return x
    for it in range(n_newton):
        h = 1.0 / (x * (1.0 - x)) + c
        xn = x - g / h
        if not (a <= xn <= bb):  # (a Newton point that rounds to x itself is kept: x is the root)
            xn = 0.5 * (a + bb)
        if abs(xn - x) <= 1e-15 * max(1.0, abs(x)):
            x = xn
            break
        x = xn
        if it + 1 == n_newton:
            break
        g = math.log(x) - math.log1p(-x) + ym + c * (x - b0)
        if g < 0.0:
            a = x
        elif g > 0.0:
            bb = x
        else:
            break
    return x


@njit(cache=True, nogil=True)
def _multinomial_phi(beta, bst, m, c, K):
    """sum_k beta_k log beta_k - m . beta + (c/2) ||beta - bst||^2 (the subproblem in beta)."""
    f = 0.0
    for k in range(K):
        bk = beta[k]
        if bk > 0.0:
            f += bk * math.log(bk)
        d = bk - bst[k]
        f += -m[k] * bk + 0.5 * c * d * d
    return f


@njit(cache=True, nogil=True)
def _multinomial_newton(Y, alpha, i, m, c, box, n_newton, work):
    """New beta' (into ``work[:K]``) for the multinomial dual block; beta = y - alpha.

    Starts from the stored block moved strictly inside the simplex (components >= box,
    renormalised); Newton steps on the simplex (diagonal Hessian ``1/beta + c``, the equality
    constraint by a Lagrange shift), each step limited so that no component more than halves,
    then Armijo backtracking on the subproblem objective: a descent method that stays strictly
    inside the simplex. ``work`` has length >= 4K.
    """
    K = Y.shape[1]
    beta = work[:K]
    bst = work[K : 2 * K]  # the stored block (centre of the proximal term)
    d = work[2 * K : 3 * K]
    trial = work[3 * K : 4 * K]
    tot = 0.0
    for k in range(K):
        bst[k] = Y[i, k] - alpha[i, k]
        bk = bst[k] if bst[k] > box else box
        beta[k] = bk
        tot += bk
    for k in range(K):
        beta[k] /= tot
    for _ in range(n_newton):
        num = 0.0
        den = 0.0
        for k in range(K):
            g = math.log(beta[k]) - m[k] + c * (beta[k] - bst[k])
            h = 1.0 / beta[k] + c
            d[k] = g
            num += g / h
            den += 1.0 / h
        nu = num / den
        slope = 0.0
        dmax = 0.0
        t = 1.0
        for k in range(K):
            g = d[k]
            d[k] = -(g - nu) / (1.0 / beta[k] + c)
            slope += g * d[k]
            dmax = max(dmax, abs(d[k]))
            if d[k] < 0.0:
                t = min(t, 0.5 * beta[k] / (-d[k]))
        if dmax <= 1e-15 or slope >= 0.0:
            break
        f0 = _multinomial_phi(beta, bst, m, c, K)
        accepted = False
        for _ls in range(60):
            for k in range(K):
                trial[k] = beta[k] + t * d[k]
            if _multinomial_phi(trial, bst, m, c, K) <= f0 + 1e-4 * t * slope:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        for k in range(K):
            beta[k] = trial[k]
        if t * dmax <= 1e-14:
            break


@njit(cache=True, nogil=True)
def scalar_update(loss_id, y, a, m, s, inv_lam, Lsub, tau, box, n_newton):
    """The K = 1 case of :func:`coordinate_update` (logistic, squared, squared hinge) on
    scalars: small enough for the compiler to inline into the kernels' hot loops."""
    c = Lsub * s * inv_lam
    if loss_id == SQUARED:
        na = a + (y - m - a) / (1.0 + c)
        return min(max(na, -tau), tau) - a
    if loss_id == SQUARED_HINGE:
        b = y * a
        nb = (1.0 - y * m + c * b) / (0.5 + c)
        return y * min(max(nb, 0.0), tau) - a
    # LOGISTIC
    hi = 1.0 - box
    if tau < hi:
        hi = max(tau, box)
    b = y * a
    b0 = min(max(b, box), hi)
    # Newton starts at b0 (the stored value moved into the box); the proximal term is centred
    # at the stored value b: c (x - b) = c (x - b0) + c (b0 - b).
    ym = y * m + c * (b0 - b)
    if n_newton == 1:
        return y * _logistic_newton_step(b0, ym, c, box, hi) - a
    return y * _logistic_newton(b0, ym, c, box, hi, n_newton) - a


@njit(cache=True, nogil=True)
def coordinate_update(loss_id, Y, alpha, i, m, s, inv_lam, Lsub, tau, box, n_newton, zeta, work):
    """The dual update ``zeta = alpha'_i - alpha_i`` (length K) of example i, not yet clipped.

    ``alpha[i]`` is the stored dual block (not modified), ``m`` the margins, ``s = ||x_i||^2``;
    ``work`` is scratch of length >= 4K. Depends on this example and the shared state only (the
    privacy argument needs exactly that). Rows are indexed, not sliced (cheaper in numba).
    """
    K = Y.shape[1]
    if K == 1 and loss_id != MULTINOMIAL:
        zeta[0] = scalar_update(loss_id, Y[i, 0], alpha[i, 0], m[0], s, inv_lam, Lsub, tau, box, n_newton)
        return
    c = Lsub * s * inv_lam
    finite = c < math.inf
    for k in range(K):
        finite = finite and abs(m[k]) < math.inf
    if not finite:  # a non-finite row (never from the estimators): no update
        for k in range(K):
            zeta[k] = 0.0
        return
    if loss_id == SQUARED:
        for k in range(K):
            a = alpha[i, k]
            zeta[k] = a + (Y[i, k] - m[k] - a) / (1.0 + c)  # alpha'
        clip_vector(zeta, K, tau)  # isotropic quadratic: projection is the exact minimiser
        for k in range(K):
            zeta[k] -= alpha[i, k]
    elif loss_id == SQUARED_HINGE:
        for k in range(K):
            yk = Y[i, k]
            b = yk * alpha[i, k]
            nb = (1.0 - yk * m[k] + c * b) / (0.5 + c)
            zeta[k] = nb if nb > 0.0 else 0.0  # beta'
        clip_vector(zeta, K, tau)  # exact: isotropic quadratic on (orthant cap ball)
        for k in range(K):
            zeta[k] = Y[i, k] * zeta[k] - alpha[i, k]
    elif loss_id == LOGISTIC:
        hi = 1.0 - box
        if tau < hi:
            hi = max(tau, box)
        for k in range(K):  # K == 1 (one-vs-rest logistic would be separable in k too)
            yk = Y[i, k]
            b = yk * alpha[i, k]
            b0 = min(max(b, box), hi)
            # Newton starts at b0 (the stored value moved into the box); the proximal term is
            # centred at the stored value b: c (x - b) = c (x - b0) + c (b0 - b).
            nb = _logistic_newton(b0, yk * m[k] + c * (b0 - b), c, box, hi, n_newton)
            zeta[k] = yk * nb - alpha[i, k]
    else:  # MULTINOMIAL
        _multinomial_newton(Y, alpha, i, m, c, box, n_newton, work)
        for k in range(K):
            zeta[k] = Y[i, k] - work[k]  # alpha'
        clip_vector(zeta, K, tau)  # feasible (not exact) for tau < sqrt(2); inactive by default
        for k in range(K):
            zeta[k] -= alpha[i, k]


@njit(cache=True, nogil=True)
def _update_bound(uclip, s, R):
    """Bound on ||zeta|| so that ||zeta|| ||x|| <= uclip * R (s = ||x||^2; NaN s gives NaN)."""
    if s <= R * R:
        return uclip
    return uclip * R / math.sqrt(s)


@njit(cache=True, nogil=True)
def clip_scalar(u, uclip, s, R):
    """The K = 1 update clipped so that |u| ||x|| <= uclip * R; 0 for non-finite input (a NaN or
    infinite row or update contributes nothing rather than poisoning V)."""
    bound = _update_bound(uclip, s, R)
    if not (bound >= 0.0):
        return 0.0
    if u > bound:
        return bound
    if u < -bound:
        return -bound
    return u if u == u else 0.0


@njit(cache=True, nogil=True)
def clip_update(zeta, K, uclip, s, R):
    """Clip the update so that ``||zeta|| ||x|| <= uclip * R`` (``||zeta|| <= uclip`` when the
    row respects its bound R; rows longer than R are handled too, so the bound never relies on
    the caller's row clipping). Non-finite input gives zeta = 0; returns whether zeta != 0."""
    bound = _update_bound(uclip, s, R)
    nrm = 0.0
    for k in range(K):
        nrm += zeta[k] * zeta[k]
    nrm = math.sqrt(nrm)
    if not (bound >= 0.0 and nrm < math.inf):  # NaN or inf somewhere
        for k in range(K):
            zeta[k] = 0.0
        return False
    limit = clip_limit(bound, K)  # exact in floating point (a few ulps below the bound)
    if nrm > limit:
        f = limit / nrm
        for k in range(K):
            zeta[k] *= f
    return nrm > 0.0 and bound > 0.0


@njit(cache=True, nogil=True)
def poisson_sorted(rng, n, q, idx):
    """Poisson sampling with rate q by geometric skipping: the sampled indices, increasing, into
    ``idx[:m]``; returns m.

    The gaps between successive sampled indices are i.i.d. Geometric(q), which is exactly
    "each index independently with probability q"; O(m) work, one uniform per sampled index,
    and the rows are then read in increasing order (friendlier to the memory than a random
    order). Data-independent: a function of (rng, n, q) only.
    """
    if q >= 1.0:
        for j in range(n):
            idx[j] = j
        return n
    log1mq = math.log1p(-q)
    m = 0
    i = -1
    while True:
        u = 1.0 - rng.random()  # in (0, 1]
        gap = math.floor(math.log(u) / log1mq)  # Geometric(q) - 1, as a float
        if i + 1.0 + gap >= n:  # compared as floats: no integer overflow for tiny q or u
            break
        i += 1 + int(gap)
        idx[m] = i
        m += 1
    return m


def _batch_updates(path, X, Y, alpha, v, loss_id, inv_lam, Lsub, tau, box, n_newton, uclip, R,
                   perm, m, zeta, dv, z, zk, work):
    """The clipped updates ``zeta[:m]`` of the batch ``perm[:m]`` and their sum into ``dv``."""
    raise NotImplementedError("jitted only")


@overload(_batch_updates)
def _batch_updates_impl(path, X, Y, alpha, v, loss_id, inv_lam, Lsub, tau, box, n_newton, uclip,
                        R, perm, m, zeta, dv, z, zk, work):
    if isinstance(path, types.Array) and path.ndim == 2:  # VECTOR_PATH
        # One output at a time over contiguous copies of V's columns (the flat layout's strided
        # loops cost about 1 us a row at d = 100, K = 3; see _glm._add_vector_gradients): every
        # update of the batch reads the same pre-batch V (Jacobi), so one copy serves the batch.
        def vector(path, X, Y, alpha, v, loss_id, inv_lam, Lsub, tau, box, n_newton, uclip, R,
                   perm, m, zeta, dv, z, zk, work):
            K = Y.shape[1]
            vt = outputs_as_rows(v, K)
            dvt = np.zeros_like(vt)
            total = np.zeros(K)
            one = np.empty(1)
            offset = np.empty(K)  # the constant column's part of each margin, once per batch
            for k in range(K):
                offset[k] = tail_dot(X, vt[k])
            for r in range(m):
                i = perm[r]
                if r + PREFETCH_AHEAD < m:
                    prefetch_row(X, perm[r + PREFETCH_AHEAD])
                # ||x_i||^2 with the first output's margin, the others as plain dot products
                # (the norm recomputed in every output's pass cost a quarter of the epoch, K = 10)
                s = margins_and_sqnorm(X, vt[0], i, 1, inv_lam, one)
                z[0] = one[0]
                for k in range(1, K):
                    z[k] = (dot_stored(X, i, vt[k]) + offset[k]) * inv_lam
                wi = row_weight(X, i)
                coordinate_update(
                    loss_id, Y, alpha, i, z, wi * s, inv_lam, Lsub, tau, box, n_newton, zk, work
                )
                nonzero = clip_update(zk, K, uclip, s, R)
                for k in range(K):
                    zeta[r, k] = zk[k]
                if nonzero:  # a zero update adds nothing (and 0 * inf would be NaN)
                    add_outer_to_rows(X, i, wi, zk, dvt, total)
            add_rows_as_outputs(X, dvt, total, dv)
        return vector

    # SCALAR_PATH (K = 1, not multinomial): scalars only in the hot loop, in three phases: the
    # independent row reads of phase 1 overlap in the memory system (with a prefetch hint a few
    # rows ahead: the batch's rows are scattered); phases 2 and 3 re-read the duals, targets,
    # weights and rows, which a batch of 1000 rows has pushed out of the nearest caches since:
    # their hints go ahead too. The three hints took an epoch at 1e6 x 100 from 187 to 95 ms
    # (benchmarks/bench_minibatch_epoch.py).
    def scalar(path, X, Y, alpha, v, loss_id, inv_lam, Lsub, tau, box, n_newton, uclip, R,
               perm, m, zeta, dv, z, zk, work):
        for r in range(m):
            if r + PREFETCH_AHEAD < m:
                ahead = perm[r + PREFETCH_AHEAD]
                prefetch_row(X, ahead)
                prefetch_entry(alpha, ahead, 0)  # the dual and the target: n-long arrays
                prefetch_entry(Y, ahead, 0)
            i = perm[r]
            zeta[r, 0] = margins_and_sqnorm(X, v, i, 1, inv_lam, z)  # ||x_i||^2 for now
            work[r] = z[0]
        for r in range(m):
            if r + PREFETCH_AHEAD < m:  # phase 1's hints were evicted by the batch's rows since
                ahead = perm[r + PREFETCH_AHEAD]
                prefetch_entry(alpha, ahead, 0)
                prefetch_entry(Y, ahead, 0)
                prefetch_row_weight(X, ahead)
            i = perm[r]
            s = zeta[r, 0]
            # weighted subproblem: the proximal constant scales with the weight
            u = scalar_update(loss_id, Y[i, 0], alpha[i, 0], work[r], row_weight(X, i) * s,
                              inv_lam, Lsub, tau, box, n_newton)
            zeta[r, 0] = clip_scalar(u, uclip, s, R)
        total = 0.0
        for r in range(m):
            if r + PREFETCH_AHEAD < m:
                prefetch_row(X, perm[r + PREFETCH_AHEAD])
            i = perm[r]
            u = row_weight(X, i) * zeta[r, 0]
            if u != 0.0:
                axpy_stored(X, i, u, dv)
                total += u
        add_tail(X, total, dv)  # the constant column once per batch, not once per row
    return scalar


@njit(cache=True, nogil=True)
def dp_scd_kernel(
    X, Y, alpha, v, loss_id, inv_lam, Lsub, tau, box, n_newton, uclip, R, n_steps, q,
    noise_v, noise_a, rng, perm, zeta, dv, z, zk, work, trace, replay, path,
):
    """T private mini-batch steps (Jacobi: every update of a batch reads the same pre-batch state).

    Step t: B_t ~ Poisson(q); for j in B_t, zeta_j = update(x_j, y_j, alpha_j, V) clipped to
    ``||zeta_j x_j|| <= uclip * R``; dV = sum_j outer(x_j, zeta_j) gets N(0, noise_v^2 I) (also
    when B_t is empty); alpha_j += zeta_j (plus N(0, noise_a^2) in the paper variant);
    V += noisy dV. ``trace[t, 0/1]`` = dV before / after the noise when ``trace`` is non-empty.
    ``replay`` (tests only; empty otherwise) replaces the noisy dV by a recorded one, which
    conditions a run on a given released prefix. Scratch: ``zeta`` (n, K), ``work`` of length
    >= max(4K, n), ``z`` and ``zk`` of length K. ``path``: :func:`update_path` (K = 1 losses
    other than the multinomial update on scalars; the others through :func:`coordinate_update`).
    """
    n = X.shape[0]
    K = Y.shape[1]
    D = v.shape[0]
    tracing = trace.shape[0] > 0
    replaying = replay.shape[0] > 0
    for t in range(n_steps):
        m = poisson_sorted(rng, n, q, perm)
        for j in range(D):
            dv[j] = 0.0
        _batch_updates(
            path, X, Y, alpha, v, loss_id, inv_lam, Lsub, tau, box, n_newton, uclip, R, perm, m,
            zeta, dv, z, zk, work,
        )
        if tracing:
            for j in range(dv.shape[0]):
                trace[t, 0, j] = dv[j]
        add_gaussian_noise(rng, dv, noise_v)
        if replaying:
            for j in range(D):
                dv[j] = replay[t, j]
        if tracing:
            for j in range(dv.shape[0]):
                trace[t, 1, j] = dv[j]
        for r in range(m):
            i = perm[r]
            for k in range(K):
                alpha[i, k] += zeta[r, k]
        if noise_a > 0.0:  # the paper variant: noise on the touched dual coordinates
            for r in range(m):
                add_gaussian_noise(rng, alpha[perm[r]], noise_a)
        for j in range(D):
            v[j] += dv[j]
    return n_steps
