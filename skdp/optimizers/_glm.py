"""Jitted building blocks shared by the optimizer kernels: batch sampling and clipped gradients.

Parameters are a flat vector ``w`` of length ``p * K`` (row-major view of the (p, K) matrix);
per-example work touches one row of X twice (margin, then gradient), which is the memory-friendly
order for row-major data.
"""

import numpy as np
from numba import njit

from ..losses import clip_vector, huber_value, loss_derivative

__all__ = ["poisson_batch", "clipped_gradient_sum", "value_and_gradient"]


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
    return m


@njit(cache=True, nogil=True)
def margins(X, w, i, K, z):
    """z = W.T @ X[i] for the flat parameter vector w."""
    p = X.shape[1]
    for k in range(K):
        z[k] = 0.0
    for j in range(p):
        xij = X[i, j]
        for k in range(K):
            z[k] += xij * w[j * K + k]


@njit(cache=True, nogil=True)
def example_derivative(X, Y, w, i, loss_id, tau, z, s):
    """Margins of example i into z, its clipped loss derivative into s (both length K)."""
    K = Y.shape[1]
    margins(X, w, i, K, z)
    loss_derivative(loss_id, z, Y[i], K, s)
    clip_vector(s, K, tau)


@njit(cache=True, nogil=True)
def add_example_gradient(X, i, s, K, scale, out):
    """out += scale * outer(X[i], s) (flattened)."""
    p = X.shape[1]
    for j in range(p):
        xij = X[i, j] * scale
        for k in range(K):
            out[j * K + k] += xij * s[k]


@njit(cache=True, nogil=True)
def clipped_gradient_sum(X, Y, w, idx, m, loss_id, tau, out, z, s):
    """out = sum over i in idx[:m] of the clipped per-example gradients (no regulariser)."""
    K = Y.shape[1]
    for j in range(out.shape[0]):
        out[j] = 0.0
    for r in range(m):
        i = idx[r]
        example_derivative(X, Y, w, i, loss_id, tau, z, s)
        add_example_gradient(X, i, s, K, 1.0, out)


@njit(cache=True, nogil=True)
def value_and_gradient(X, Y, w, loss_id, tau, lam, out, z, s):
    """Full objective F(w) (mean Huberised loss + lam/2 ||w||^2) and its gradient into ``out``."""
    n = X.shape[0]
    K = Y.shape[1]
    for j in range(out.shape[0]):
        out[j] = 0.0
    total = 0.0
    inv_n = 1.0 / n
    for i in range(n):
        margins(X, w, i, K, z)
        loss_derivative(loss_id, z, Y[i], K, s)
        total += huber_value(loss_id, z, Y[i], K, s, tau)
        clip_vector(s, K, tau)
        add_example_gradient(X, i, s, K, inv_n, out)
    reg = 0.0
    for j in range(out.shape[0]):
        out[j] += lam * w[j]
        reg += w[j] * w[j]
    return total * inv_n + 0.5 * lam * reg
