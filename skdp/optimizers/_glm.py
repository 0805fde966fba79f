"""Jitted building blocks shared by the optimizer kernels: batch sampling and clipped gradients.

Parameters are a flat vector ``w`` of length ``p * K`` (row-major view of the (p, K) matrix);
per-example work touches one row of X twice (margin, then gradient), which is the memory-friendly
order for row-major data. ``X`` is any design of :mod:`skdp._rows` (dense or sparse rows, with
example weights); the per-example gradient is the weight times the clipped gradient.
"""

import numpy as np
from numba import njit

from .._rows import add_example_gradient, axpy_row, dot_row, margins, row_weight
from ..losses import MULTINOMIAL, clip_vector, huber_value, loss_derivative, scalar_derivative

__all__ = [
    "poisson_batch", "clipped_gradient_sum", "value_and_gradient", "example_derivative",
    "dot_row", "axpy_row", "add_example_gradient",
]


@njit(cache=True, nogil=True)
def poisson_batch(rng, n, q, perm):
    """Draw a Poisson sample with rate q: its indices end up in ``perm[:m]``; returns m.

    The size is Binomial(n, q) and, given the size, the subset is uniform (partial Fisher-Yates on
    the persistent permutation ``perm``), which is exactly Poisson sampling in distribution.
    """
    if q >= 1.0:
        return n
    m = rng.binomial(n, q)
    for j in range(m):
        k = j + rng.integers(0, n - j)
        tmp = perm[j]
        perm[j] = perm[k]
        perm[k] = tmp
    # rows in increasing order read memory forwards (the subset, hence its law, is unchanged)
    perm[:m].sort()
    return m


@njit(cache=True, nogil=True, inline="always")
def example_derivative(X, Y, w, i, loss_id, tau, z, s):
    """Margins of example i into z, its clipped loss derivative into s (both length K)."""
    K = Y.shape[1]
    margins(X, w, i, K, z)
    loss_derivative(loss_id, z, Y, i, K, s)
    clip_vector(s, K, tau)


@njit(cache=True, nogil=True)
def clipped_gradient_sum(X, Y, w, idx, m, loss_id, tau, out, z, s):
    """out = sum over i in idx[:m] of the weighted clipped per-example gradients (no
    regulariser): ``w_i * clip(loss'_i) x_i``."""
    K = Y.shape[1]
    for j in range(out.shape[0]):
        out[j] = 0.0
    if K == 1 and loss_id != MULTINOMIAL:  # scalar fast path (vectorised dot and axpy)
        for r in range(m):
            i = idx[r]
            d = row_weight(X, i) * scalar_derivative(loss_id, dot_row(X, i, w), Y[i, 0], tau)
            if d != 0.0:
                axpy_row(X, i, d, out)
        return
    for r in range(m):
        i = idx[r]
        example_derivative(X, Y, w, i, loss_id, tau, z, s)
        add_example_gradient(X, i, s, K, row_weight(X, i), out)


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
        for i in range(n):
            wi = row_weight(X, i)
            if wi == 0.0:
                continue
            z[0] = dot_row(X, i, w)
            s[0] = scalar_derivative(loss_id, z[0], Y[i, 0], np.inf)
            total += wi * huber_value(loss_id, z, Y, i, 1, s, tau)
            d = min(max(s[0], -tau), tau)
            if d != 0.0:
                axpy_row(X, i, wi * d * inv_n, out)
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
