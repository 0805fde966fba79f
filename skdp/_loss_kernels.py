"""The numba-jitted per-example losses of :mod:`skdp.losses` (imported on first use: a fit
compiles or loads them; ``import skdp`` does not import numba)."""

import math

import numpy as np
from numba import njit

from ._rows import clip_limit, margins, row_weight
from .losses import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE

__all__ = [
    "loss_value", "loss_derivative", "scalar_derivative", "clip_vector", "huber_value",
    "objective",
]


@njit(cache=True, nogil=True)
def _log1pexp(t):
    """log(1 + exp(t)), stable."""
    if t > 0:
        return t + math.log1p(math.exp(-t))
    return math.log1p(math.exp(t))


@njit(cache=True, nogil=True)
def loss_value(loss_id, z, Y, i, K):
    """Loss of example i (targets ``Y[i]``), summed over the K outputs (multinomial: one
    cross-entropy). Rows are indexed rather than sliced: a slice per example costs more than
    the loss itself in numba."""
    v = 0.0
    if loss_id == MULTINOMIAL:
        zmax = z[0]
        for k in range(1, K):
            zmax = max(zmax, z[k])
        acc = 0.0
        zy = 0.0
        for k in range(K):
            acc += math.exp(z[k] - zmax)
            zy += Y[i, k] * z[k]
        return zmax + math.log(acc) - zy
    for k in range(K):
        if loss_id == LOGISTIC:
            v += _log1pexp(-Y[i, k] * z[k])
        elif loss_id == SQUARED:
            r = z[k] - Y[i, k]
            v += 0.5 * r * r
        else:
            h = max(0.0, 1.0 - Y[i, k] * z[k])
            v += h * h
    return v


@njit(cache=True, nogil=True, inline="always")
def loss_derivative(loss_id, z, Y, i, K, s):
    """Write d loss / d z of example i (targets ``Y[i]``) into ``s`` (length K)."""
    if loss_id == MULTINOMIAL:
        zmax = z[0]
        for k in range(1, K):
            zmax = max(zmax, z[k])
        acc = 0.0
        for k in range(K):
            s[k] = math.exp(z[k] - zmax)
            acc += s[k]
        for k in range(K):
            s[k] = s[k] / acc - Y[i, k]
        return
    for k in range(K):
        if loss_id == LOGISTIC:
            t = Y[i, k] * z[k]
            # -y * sigmoid(-t), stable on both sides, with a select (see scalar_derivative)
            e = math.exp(-abs(t))
            s[k] = -Y[i, k] * (e if t >= 0 else 1.0) / (1.0 + e)
        elif loss_id == SQUARED:
            s[k] = z[k] - Y[i, k]
        else:
            s[k] = -2.0 * Y[i, k] * max(0.0, 1.0 - Y[i, k] * z[k])


@njit(cache=True, nogil=True, inline="always")
def scalar_derivative(loss_id, z, y, tau):
    """Clipped derivative of a single-output loss (logistic, squared, squared hinge) at z."""
    if loss_id == LOGISTIC:
        # -y * sigmoid(-t), stable on both sides: exp(-|t|) then a select, not a branch (the
        # sign of the margins is data: a branch on it mispredicts); the same bits as
        # e / (1 + e) for t >= 0 and 1 / (1 + exp(t)) below
        t = y * z
        e = math.exp(-abs(t))
        d = -y * (e if t >= 0 else 1.0) / (1.0 + e)
    elif loss_id == SQUARED:
        d = z - y
    else:
        d = -2.0 * y * max(0.0, 1.0 - y * z)
    return min(max(d, -tau), tau)


@njit(cache=True, nogil=True, inline="always")
def clip_vector(s, K, tau):
    """Scale ``s`` in place so that its L2 norm is at most ``tau`` (no-op for tau = inf).

    Exact in floating point: the norm is compared with, and scaled to, ``clip_limit(tau, K)``,
    a few ulps below tau (scaling by ``tau / norm`` can land ulps above it)."""
    nrm = 0.0
    for k in range(K):
        nrm += s[k] * s[k]
    nrm = math.sqrt(nrm)
    limit = clip_limit(tau, K)
    if nrm > limit:
        f = limit / nrm
        for k in range(K):
            s[k] *= f


@njit(cache=True, nogil=True)
def huber_value(loss_id, z, Y, i, K, s, tau):
    """Loss of the Huberised objective whose gradient is the clipped derivative.

    ``s`` must hold the *unclipped* derivative at ``z``. Exact for K = 1 (scalar clipping); for
    K > 1 the jointly clipped field is not a gradient in general and the unclipped loss is
    returned (used for diagnostics and stopping only).
    """
    if K > 1 or not math.isfinite(tau) or abs(s[0]) <= tau:
        return loss_value(loss_id, z, Y, i, K)
    if loss_id == SQUARED:
        r = abs(z[0] - Y[i, 0])
        return tau * r - 0.5 * tau * tau
    if loss_id == SQUARED_HINGE:
        h = 1.0 - Y[i, 0] * z[0]  # > tau / 2 here
        return tau * h - tau * tau / 4.0
    return loss_value(loss_id, z, Y, i, K)


@njit(cache=True, nogil=True)
def objective(X, Y, W, loss_id, lam, tau):
    """(1/n) sum of the weighted (Huberised, if ``tau`` is finite) losses + lam/2 ||W||^2.

    ``X`` is any design of :mod:`skdp._rows` (a plain array: weights of one).
    """
    n = X.shape[0]
    p, K = W.shape
    w = np.ascontiguousarray(W).reshape(p * K)
    z = np.zeros(K)
    s = np.zeros(K)
    total = 0.0
    for i in range(n):
        wi = row_weight(X, i)
        if wi == 0.0:
            continue
        margins(X, w, i, K, z)
        loss_derivative(loss_id, z, Y, i, K, s)
        total += wi * huber_value(loss_id, z, Y, i, K, s, tau)
    reg = 0.0
    for j in range(p * K):
        reg += w[j] * w[j]
    return total / n + 0.5 * lam * reg
