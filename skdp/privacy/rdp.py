"""Rényi-DP of the Gaussian and the Poisson-subsampled Gaussian, and the RDP -> (eps, delta) conversion.

Implemented from the papers, independently of dp-accounting (the tests compare the two):

* Mironov (2017), "Rényi Differential Privacy": the Gaussian mechanism with noise multiplier
  ``z`` (noise std / L2 sensitivity) has RDP ``alpha / (2 z^2)``.
* Mironov, Talwar, Zhang (2019), "Rényi Differential Privacy of the Sampled Gaussian Mechanism":
  exact integer-order binomial sum (Sec. 3.3, eq. for A_alpha) and the two-series formula for
  fractional orders, both computed in log space. Valid for the add/remove (zero-out) relation.
* Conversion to (eps, delta): Balle et al. (2020), "Hypothesis testing interpretations and Rényi
  differential privacy", Thm 21 (also Canonne, Kamath, Steinke 2020):
  ``eps = rdp(a) + log((a - 1) / a) - (log(delta) + log(a)) / (a - 1)``, minimised over orders.
  Any order a > 1 gives a valid bound, so the minimum over a finite grid is conservative.
"""

import math

import numpy as np
from scipy import special

__all__ = [
    "DEFAULT_ORDERS",
    "EXTRA_ORDERS",
    "rdp_gaussian",
    "rdp_poisson_subsampled_gaussian",
    "epsilon_from_rdp",
    "epsilon_over_orders",
]

#: Rényi orders used by default: dense where the optimum usually lies, sparse far out.
DEFAULT_ORDERS = np.concatenate(
    [
        1.0 + np.arange(1, 100) / 10.0,  # 1.1 .. 10.9
        np.arange(11.0, 64.0),
        np.array([80.0, 96.0, 128.0, 160.0, 192.0, 256.0, 384.0, 512.0, 768.0, 1024.0]),
    ]
)

#: Orders beyond :data:`DEFAULT_ORDERS` (integers, ratio about sqrt 2, up to 2^20), tried by the
#: accountant only when the largest default order is the best one. A small epsilon needs them:
#: the conversion's ``log(1/delta) / (alpha - 1)`` term alone is 0.011 at alpha = 1024 and
#: delta = 1e-5, so epsilon = 1e-3 needs orders above 10^4. Integer orders keep the
#: subsampled-Gaussian RDP on its exact series (cost linear in the order).
EXTRA_ORDERS = np.unique(np.round(1024.0 * 2.0 ** (np.arange(1, 21) / 2.0)))


def _log_erfc(x):
    """log(erfc(x)), vectorised and accurate in the tails."""
    return special.log_ndtr(-np.asarray(x) * math.sqrt(2.0)) + math.log(2.0)


def _log_a_int(q, sigma, alphas):
    """log A_alpha for integer orders ``alphas`` (binomial expansion, summed in log space).

    The terms ``k = 0 .. alpha`` of all orders lie end to end in one array, and each order's
    segment is summed as ``logsumexp`` does: its largest term ``m`` is factored out and the
    others are added as ``m + log1p(sum exp(t - m))`` (accurate when A_alpha is close to 1).
    """
    alphas = np.asarray(alphas, dtype=float)
    if not alphas.size:
        return np.empty(0)
    lengths = alphas.astype(np.int64) + 1
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    a = np.repeat(alphas, lengths)
    k = np.arange(lengths.sum(), dtype=float) - np.repeat(starts, lengths)
    log_coef = special.gammaln(a + 1) - special.gammaln(k + 1) - special.gammaln(a - k + 1)
    log_terms = log_coef + k * math.log(q) + (a - k) * math.log1p(-q) + (k * k - k) / (2.0 * sigma**2)
    top = np.maximum.reduceat(log_terms, starts)
    scaled = np.exp(log_terms - np.repeat(top, lengths))
    # the first largest term of each segment is the factored-out exp(0) = 1
    index = np.arange(log_terms.size)
    first_top = np.minimum.reduceat(
        np.where(log_terms == np.repeat(top, lengths), index, log_terms.size), starts
    )
    scaled[first_top] = 0.0
    return top + np.log1p(np.add.reduceat(scaled, starts))


_MAX_TERMS = 1000


def _log_a_frac(q, sigma, alphas):
    """Upper bound on log A_alpha for fractional orders ``alphas`` (Mironov et al. 2019, Sec. 3.3).

    The two series over (-inf, z0] and [z0, inf) are summed with the absolute values of the
    generalised binomial coefficients: an upper bound on A_alpha (the signed sum can lose all
    precision to cancellation), hence a conservative RDP. The sum stops at the first term index
    where both series decrease and their terms are below exp(-30) times the running total; if
    that does not happen within 1000 terms the order gets no finite bound (inf). These are the
    rules dp-accounting uses, so both give the same numbers. All orders are summed at once, one
    row each (the same operations as order by order).
    """
    alphas = np.asarray(alphas, dtype=float)
    out = np.full(alphas.shape[0], np.inf)  # not converged: no finite bound (conservative)
    todo = np.arange(alphas.shape[0])
    z0 = sigma**2 * math.log(1.0 / q - 1.0) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    for n_terms in (64, _MAX_TERMS):  # most orders converge within a few dozen terms
        if not todo.size:
            break
        alpha = alphas[todo][:, None]
        i = np.arange(n_terms, dtype=float)[None, :]
        j = alpha - i
        log_coef = special.gammaln(alpha + 1) - special.gammaln(i + 1) - special.gammaln(j + 1)
        log_s0 = (
            log_coef + i * log_q + j * log_1mq + (i * i - i) / (2.0 * sigma**2)
            + math.log(0.5) + _log_erfc((i - z0) / (math.sqrt(2.0) * sigma))
        )
        log_s1 = (
            log_coef + j * log_q + i * log_1mq + (j * j - j) / (2.0 * sigma**2)
            + math.log(0.5) + _log_erfc((z0 - j) / (math.sqrt(2.0) * sigma))
        )
        total = np.logaddexp.accumulate(np.logaddexp(log_s0, log_s1), axis=1)
        first = np.full((todo.size, 1), -np.inf)
        prev0 = np.concatenate([first, log_s0[:, :-1]], axis=1)
        prev1 = np.concatenate([first, log_s1[:, :-1]], axis=1)
        stop = (log_s0 < prev0) & (log_s1 < prev1) & (np.maximum(log_s0, log_s1) < total - 30)
        hit = stop.any(axis=1)
        at = np.argmax(stop, axis=1)
        out[todo[hit]] = total[np.flatnonzero(hit), at[hit]]
        todo = todo[~hit]
    return out


def rdp_gaussian(noise_multiplier, orders=DEFAULT_ORDERS):
    """RDP of one Gaussian mechanism, ``alpha / (2 z^2)`` at each order."""
    orders = np.asarray(orders, dtype=float)
    if noise_multiplier == 0:
        return np.full_like(orders, np.inf)
    return orders / (2.0 * noise_multiplier**2)


def rdp_poisson_subsampled_gaussian(sampling_rate, noise_multiplier, orders=DEFAULT_ORDERS):
    """RDP of one step of the Poisson-subsampled Gaussian mechanism (add/remove or zero-out).

    Parameters
    ----------
    sampling_rate : float in [0, 1]
        Probability q that a given record is in the batch.
    noise_multiplier : float >= 0
        Noise standard deviation divided by the L2 sensitivity of the batch sum.
    orders : array-like of float > 1

    Returns
    -------
    ndarray of the RDP at each order.
    """
    orders = np.asarray(orders, dtype=float)
    q, z = float(sampling_rate), float(noise_multiplier)
    if q == 0:
        return np.zeros_like(orders)
    if z == 0:
        return np.full_like(orders, np.inf)
    if q == 1.0:
        return rdp_gaussian(z, orders)
    flat = orders.ravel()
    out = np.full(flat.shape, np.inf)
    integer = np.isfinite(flat) & (flat == np.round(flat))
    fractional = np.isfinite(flat) & ~integer
    out[integer] = _log_a_int(q, z, flat[integer]) / (flat[integer] - 1.0)
    out[fractional] = _log_a_frac(q, z, flat[fractional]) / (flat[fractional] - 1.0)
    return out.reshape(orders.shape)


def epsilons_per_order(orders, rdp, delta):
    """Epsilon at ``delta`` implied by each order (tight conversion); ``rdp`` may have leading
    axes (one RDP curve per row), the last axis runs over ``orders``. NaN becomes inf."""
    orders = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    with np.errstate(invalid="ignore", divide="ignore"):
        eps = rdp + np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)
    return np.where(np.isnan(eps), np.inf, eps)


def epsilon_from_rdp(orders, rdp, delta):
    """Smallest epsilon at ``delta`` over the given orders (tight conversion); returns (eps, order)."""
    eps = epsilons_per_order(orders, rdp, delta)
    k = int(np.argmin(eps))
    return max(0.0, float(eps[k])), float(np.asarray(orders, dtype=float)[k])


def epsilon_over_orders(rdp_of, delta, orders=DEFAULT_ORDERS):
    """Smallest epsilon at ``delta`` over ``orders``, extended to larger orders when needed.

    ``rdp_of(orders)`` gives the RDP curve at an array of orders. When the best of ``orders`` is
    the largest one, the larger :data:`EXTRA_ORDERS` are tried one by one while the epsilon keeps
    falling (every order gives a valid bound, so the minimum does too).

    Returns
    -------
    epsilon : float
    order : float
        The order that attains it.
    orders : ndarray
        The orders evaluated (``orders`` plus the extra ones tried), increasing.
    """
    orders = np.asarray(orders, dtype=float)
    eps, best = epsilon_from_rdp(orders, rdp_of(orders), delta)
    if np.isfinite(eps) and eps > 0 and best == orders[-1]:
        for a in EXTRA_ORDERS[EXTRA_ORDERS > best]:
            orders = np.append(orders, a)
            value = epsilon_from_rdp([a], rdp_of(np.array([a])), delta)[0]
            if not value < eps:
                break
            eps, best = value, float(a)
    return eps, best, orders
