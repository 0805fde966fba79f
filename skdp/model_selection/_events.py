"""Privacy events of hyper-parameter search: random stopping and disjoint (parallel) parts.

* :class:`RepeatAndSelectEvent`: run a private mechanism a random number K of times on the
  same data and release only the best run (Papernot & Steinke, "Hyperparameter Tuning with
  Renyi Differential Privacy", ICLR 2022, arXiv 2110.03620, Theorems 2 and 6). K follows a
  truncated negative binomial distribution (shape eta in [0, inf): eta=0 logarithmic, eta=1
  geometric) or a Poisson distribution (shape=inf). Implemented from the paper, with the same
  conventions as dp-accounting's ``RepeatAndSelectDpEvent`` (the tests compare the two).
* :class:`MaxEvent`: the pointwise maximum of RDP curves. Valid (i) for mechanisms run on
  disjoint parts of the data set chosen independently of the data (parallel composition: a
  neighbouring record lies in one part, so only one mechanism's input changes), and (ii) for a
  mechanism chosen at random, independently of the data, among several (the Renyi divergence of
  a public mixture is at most the largest divergence of its components).
"""

from dataclasses import dataclass
import math

import numpy as np

from ..privacy import DEFAULT_ORDERS, DPEvent

__all__ = [
    "RepeatAndSelectEvent",
    "MaxEvent",
    "truncated_negative_binomial_mean",
    "tnb_gamma",
    "sample_repetitions",
]


def truncated_negative_binomial_mean(gamma, shape):
    """Mean of the truncated negative binomial D_{eta, gamma} (Papernot & Steinke, Def. 1).

    ``P[K = k] ∝ (1 - gamma)^k binom(k + eta - 1, k)`` for k >= 1; shape eta = 0 is the
    logarithmic distribution, eta = 1 the geometric (mean 1/gamma).
    """
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1]; got {gamma}")
    if gamma == 1:
        return 1.0
    if shape == 0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    if shape == 1:
        return 1.0 / gamma
    return shape * (1.0 / gamma - 1.0) / (-math.expm1(shape * math.log(gamma)))


def tnb_gamma(mean, shape):
    """The gamma of D_{eta, gamma} with the given mean (bisection; the smaller end, whose mean
    is >= ``mean``, is returned, as dp-accounting does)."""
    if not mean >= 1:
        raise ValueError(f"the mean number of runs must be >= 1; got {mean}")
    if mean == 1:
        return 1.0
    lo, hi = 1e-300, 1.0  # the mean decreases in gamma
    for _ in range(2000):
        mid = math.sqrt(lo * hi) if hi / lo > 4 else 0.5 * (lo + hi)
        if truncated_negative_binomial_mean(mid, shape) < mean:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo


def sample_repetitions(rng, mean, shape):
    """Draw the number of runs K from the distribution the privacy analysis assumes.

    Uses only ``rng`` (public randomness), never the data.
    """
    if math.isinf(shape):
        return int(rng.poisson(mean))
    gamma = tnb_gamma(mean, shape)
    if gamma >= 1.0:
        return 1
    if shape == 0:
        return int(rng.logseries(1.0 - gamma))  # P[k] ∝ (1 - gamma)^k / k, k >= 1
    while True:  # negative binomial conditioned on K >= 1
        k = int(rng.negative_binomial(shape, gamma))
        if k >= 1:
            return k


def _log_delta_from_rdp(orders, rdp, epsilons):
    """log delta of (epsilon, delta)-DP implied by an RDP curve (Canonne, Kamath, Steinke 2020,
    Prop. 12; and the KL bound for small orders), minimised over the orders, at each of
    ``epsilons`` (one row of the order-by-epsilon matrix each)."""
    orders, rdp = np.asarray(orders, dtype=float), np.asarray(rdp, dtype=float)
    epsilons = np.asarray(epsilons, dtype=float)
    keep = np.isfinite(rdp)
    a, r = orders[keep], rdp[keep]
    if np.any(r <= 0):
        return np.full(epsilons.shape, -np.inf)
    kl = 0.5 * np.log1p(-np.exp(-r))  # every order
    with np.errstate(invalid="ignore", divide="ignore"):
        tail = (a - 1) * (r - epsilons[..., None] + np.log1p(-1 / a)) - np.log(a)
    logdelta = np.where(a > 1.01, np.minimum(kl, tail), kl)
    return np.minimum(0.0, logdelta.min(axis=-1, initial=0.0))


@dataclass(frozen=True)
class RepeatAndSelectEvent(DPEvent):
    """Best of K independent runs of ``event``, K random with the given ``mean`` and ``shape``.

    Parameters
    ----------
    event : DPEvent
        The event of one run (of the candidate-and-score mechanism).
    mean : float >= 1
        E[K].
    shape : float >= 0 or inf
        0: logarithmic; 1: geometric; (0, inf): truncated negative binomial; inf: Poisson.

    Notes
    -----
    RDP at order lambda > 1 (Papernot & Steinke 2022):

    * truncated negative binomial (Thm 2): ``rdp(lambda) + log(mean) / (lambda - 1) + c`` with
      ``c = (1 + eta) * min_{lambda_hat} [(1 - 1/lambda_hat) rdp(lambda_hat) - log(gamma) /
      lambda_hat]``, the minimum taken over a fixed grid of orders (any lambda_hat is valid);
    * Poisson (Thm 6): ``rdp(lambda) + mean * delta_hat + log(mean) / (lambda - 1)`` where
      ``delta_hat`` is the delta of the single run at ``eps_hat = log(1 + 1/(lambda - 1))``;

    then made monotone in the order (RDP is non-decreasing in the order).
    """

    event: DPEvent
    mean: float
    shape: float

    def __post_init__(self):
        if not self.mean >= 1:
            raise ValueError(f"mean must be >= 1; got {self.mean}")
        if not self.shape >= 0:
            raise ValueError(f"shape must be >= 0 (or inf); got {self.shape}")

    def rdp(self, orders):
        orders = np.asarray(orders, dtype=float)
        grid = np.union1d(DEFAULT_ORDERS, orders[np.isfinite(orders)])
        base = np.asarray(self.event.rdp(grid), dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            if math.isinf(self.shape):
                out = np.full_like(grid, np.inf)
                run = (grid > 1) & np.isfinite(base)
                eps_hat = np.log1p(1.0 / (grid[run] - 1.0))
                delta_hat = np.exp(_log_delta_from_rdp(grid, base, eps_hat))
                out[run] = base[run] + self.mean * delta_hat + math.log(self.mean) / (grid[run] - 1.0)
            else:
                gamma = tnb_gamma(self.mean, self.shape)
                # the analysis uses the mean of the distribution actually sampled (>= self.mean)
                mean = max(self.mean, truncated_negative_binomial_mean(gamma, self.shape))
                terms = (1.0 - 1.0 / grid) * base - math.log(gamma) / grid
                c = (1.0 + self.shape) * np.min(np.where(np.isfinite(terms), terms, np.inf))
                out = np.where(grid > 1, base + math.log(mean) / (grid - 1.0) + c, np.inf)
        # monotone: rdp at lambda <= rdp at any larger order
        out = np.minimum.accumulate(out[::-1])[::-1]
        flat = orders.ravel()
        res = np.full(flat.shape, np.inf)
        finite = np.isfinite(flat)
        res[finite] = out[np.searchsorted(grid, flat[finite])]  # every finite order is in grid
        return res.reshape(orders.shape)

    def pure_epsilon(self):
        return None

    def to_dp_accounting(self):
        from dp_accounting import dp_event

        return dp_event.RepeatAndSelectDpEvent(self.event.to_dp_accounting(), self.mean, self.shape)


@dataclass(frozen=True)
class MaxEvent(DPEvent):
    """The pointwise maximum of the RDP curves of ``events`` (see the module docstring for when
    this is valid: disjoint data-independent parts, or a public random choice among them)."""

    events: tuple

    def rdp(self, orders):
        curves = [np.asarray(e.rdp(orders), dtype=float) for e in self.events]
        return np.max(np.stack(curves), axis=0)

    def pure_epsilon(self):
        eps = [e.pure_epsilon() for e in self.events]
        return None if any(v is None for v in eps) else float(max(eps))

    def to_dp_accounting(self):
        """dp-accounting has no maximum event; available when all parts are one event."""
        first = self.events[0]
        if all(e == first for e in self.events[1:]):
            return first.to_dp_accounting()
        raise NotImplementedError("dp-accounting has no event for the maximum of several events")
