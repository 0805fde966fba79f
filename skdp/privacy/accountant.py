"""The accountant: turns a privacy event into (epsilon, delta), and calibrates noise to a budget.

Two back-ends:

* ``"rdp"`` (default, built in): Rényi DP composed over a grid of orders, converted with the
  tight conversion, then refined between grid points (any order > 1 is valid, so refining can only
  lower a still-valid bound). When the best order is the grid's largest (a small epsilon, or a
  small delta, wants orders of thousands), the orders of :data:`~skdp.privacy.rdp.EXTRA_ORDERS`
  are tried in turn while the epsilon keeps falling: the default grid stays cheap, and epsilons
  down to about ``log(1/delta) / 2^20`` stay reachable. Events with a pure-DP guarantee (Laplace) are reported as pure
  epsilon with delta = 0 when that is smaller.
* ``"pld"``: dp-accounting's privacy-loss-distribution accountant (optional extra
  ``skdp[accounting]``), for events it supports.
"""

import math

import numpy as np
from scipy import optimize

from . import _epsilon_cache
from .events import NonPrivateEvent
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp, epsilon_over_orders

__all__ = ["compute_epsilon", "calibrate_noise_multiplier", "rdp_epsilon_and_order", "ACCOUNTANTS"]

ACCOUNTANTS = ("rdp", "pld")

#: ``accountant="pld"`` answers the smaller of the PLD and RDP bounds (both valid), and does not
#: consult PLD where RDP's is above this epsilon: PLD discretises the privacy loss, whose range
#: grows with it (gigabytes and minutes at epsilon 100 to 1000), where its tighter answer does
#: not matter. Below delta ~1e-20 PLD's truncated tail alone exceeds delta and it answers inf:
#: RDP's answer stands (before, the calibration then raised the noise a million-fold).
PLD_MAX_RDP_EPSILON = 30.0


def _epsilon_at(event, delta, order):
    return epsilon_from_rdp([order], event.rdp(np.array([order])), delta)[0]


def rdp_epsilon_and_order(event, delta, orders=DEFAULT_ORDERS):
    """(epsilon, order): the RDP-route epsilon and the Rényi order that attains it.

    The grid ``orders`` is extended by :func:`~skdp.privacy.rdp.epsilon_over_orders` when its
    largest order is the best, then the best order is refined between its grid neighbours.
    """
    eps, best, orders = epsilon_over_orders(event.rdp, delta, orders)
    if not np.isfinite(eps):
        return eps, best
    # Refine between the neighbouring grid orders: every order > 1 gives a valid bound.
    k = int(np.searchsorted(orders, best))
    lo = orders[k - 1] if k > 0 else 1.0 + 1e-6
    hi = orders[k + 1] if k + 1 < len(orders) else best * 2.0

    def f(a):
        value = _epsilon_at(event, delta, a)
        return value if np.isfinite(value) else 1e300  # orders with no finite bound lose

    res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    if res.success and res.fun < eps:
        eps, best = float(f(res.x)), float(res.x)  # recomputed at that order: exact
    return max(0.0, eps), best


def _rdp_epsilon(event, delta):
    return rdp_epsilon_and_order(event, delta)[0]


def _pld_epsilon(event, delta):
    try:
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'accountant="pld" needs dp-accounting: pip install "skdp[accounting]"'
        ) from exc
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(event.to_dp_accounting())
    return float(acc.get_epsilon(delta))


def compute_epsilon(event, delta, accountant="rdp"):
    """Epsilon spent by ``event`` at ``delta``.

    A pure function of the event's (public) parameters, delta and the accountant: its answers
    are kept for the process (``skdp.privacy._epsilon_cache``), so that the folds of a search
    and the refits of one configuration calibrate once; ``compute_epsilon.cache_clear()``
    forgets them. The values are the same with or without the cache.

    Parameters
    ----------
    event : DPEvent
    delta : float in [0, 1)
        With ``delta == 0`` only pure-DP events have a finite epsilon.
    accountant : {"rdp", "pld"}

    Returns
    -------
    epsilon : float
    """
    return _epsilon_cache.cached_answer(_compute_epsilon, event, delta, accountant)


compute_epsilon.cache_clear = _epsilon_cache.clear


def _compute_epsilon(event, delta, accountant):
    if isinstance(event, NonPrivateEvent):
        return math.inf
    pure = event.pure_epsilon()
    if delta == 0:
        return math.inf if pure is None else pure
    if accountant == "rdp":
        eps = _rdp_epsilon(event, delta)
    elif accountant == "pld":
        eps = _rdp_epsilon(event, delta)
        if eps <= PLD_MAX_RDP_EPSILON:
            eps = min(eps, _pld_epsilon(event, delta))
    else:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    if pure is not None:
        eps = min(eps, pure)
    return eps


def calibrate_noise_multiplier(make_event, target_epsilon, delta, accountant="rdp", lower=1e-3):
    """Smallest noise multiplier whose event spends at most ``target_epsilon`` at ``delta``.

    ``make_event(z)`` builds the event for noise multiplier ``z``; epsilon must decrease in ``z``.
    A bisection in log z; the returned value is on the feasible side and is checked once more
    after the search, so the calibrated epsilon never overshoots the target.

    Returns
    -------
    noise_multiplier : float
    epsilon : float
        The epsilon actually spent with that noise multiplier (<= target_epsilon).
    """
    if not target_epsilon > 0:
        raise ValueError(f"target_epsilon must be > 0, got {target_epsilon}")

    def eps_of(z):
        return compute_epsilon(make_event(z), delta, accountant)

    if accountant == "pld":
        # PLD at a tiny noise multiplier discretises an enormous privacy loss (tens of GiB):
        # bracket from the RDP answer instead, which PLD (the tighter accountant) always meets.
        hi, _ = calibrate_noise_multiplier(make_event, target_epsilon, delta, "rdp", lower)
        lower = hi / 2.0
        while lower > 1e-3 and eps_of(lower) <= target_epsilon:
            lower /= 2.0
    hi = max(lower, 1.0) if accountant != "pld" else hi
    while eps_of(hi) > target_epsilon:
        hi *= 2.0
        if hi > 1e12:
            raise ValueError(
                f"cannot reach the target epsilon={target_epsilon:.6g} at delta={delta:.3g} with "
                f"any finite noise: the smallest epsilon the {accountant!r} accountant certifies "
                f"for this mechanism at that delta is about {eps_of(hi):.3g} (its limit as the "
                "noise grows); increase epsilon or delta"
            )
    lo = lower
    if eps_of(lo) <= target_epsilon:
        hi = lo
    else:
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            if eps_of(mid) <= target_epsilon:
                hi = mid
            else:
                lo = mid
            if hi / lo < 1 + 1e-6:
                break
    eps = eps_of(hi)
    if eps > target_epsilon:  # pragma: no cover - guarded by the search invariant
        raise RuntimeError("calibration overshot the target epsilon")
    return hi, eps
