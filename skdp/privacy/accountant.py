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
  ``skdp[accounting]``), for events it supports; for an event that is exactly one Gaussian
  mechanism (full-batch Gaussian releases composed, :meth:`~skdp.privacy.DPEvent.gaussian_mu`),
  the exact analytic Gaussian curve instead (:func:`exact_gaussian_epsilon`: what PLD
  approaches as its discretisation is refined, in microseconds instead of seconds).
"""

import math

import numpy as np
from scipy import optimize

from . import _epsilon_cache
from .events import NonPrivateEvent
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp, epsilon_over_orders

__all__ = ["compute_epsilon", "calibrate_noise_multiplier", "exact_gaussian_epsilon",
           "rdp_epsilon_and_order", "ACCOUNTANTS"]

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


def analytic_gaussian_log_delta(epsilon, mu):
    """log delta(epsilon) of one Gaussian mechanism of ``mu`` = sensitivity / noise std (Balle &
    Wang 2018): ``delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``, in log space. The
    one formula of the exact curve: :func:`exact_gaussian_epsilon` inverts it in epsilon,
    :func:`skdp.privacy.tree.gaussian_noise_multiplier_exact` in the noise."""
    from scipy.special import log_ndtr

    a = float(log_ndtr(-epsilon / mu + mu / 2.0))
    b = epsilon + float(log_ndtr(-epsilon / mu - mu / 2.0))
    if b >= a:  # rounding, where delta is below what float64 resolves: no privacy loss beyond
        return -math.inf
    return a + math.log(-math.expm1(b - a))


def exact_gaussian_epsilon(mu, delta):
    """The smallest epsilon at which one Gaussian mechanism of ``mu`` (sensitivity / noise std;
    ``sqrt(sum k_i / z_i^2)`` for ``k_i`` full-batch releases of noise multiplier ``z_i``
    composed) is (epsilon, delta)-DP: its exact privacy curve (Balle & Wang 2018; Dong, Roth &
    Su 2022), inverted by bisection to a relative 1e-12 and rounded up (the value returned
    meets delta). No accountant certifies a smaller epsilon for these releases."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if mu == 0.0:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    log_delta = math.log(delta)
    if analytic_gaussian_log_delta(0.0, mu) <= log_delta:
        return 0.0
    lo, hi = 0.0, max(1.0, mu * mu)
    while analytic_gaussian_log_delta(hi, mu) > log_delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if analytic_gaussian_log_delta(mid, mu) > log_delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi * (1.0 + 1e-12)


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
        mu = event.gaussian_mu()
        if mu is not None:  # one Gaussian mechanism: its exact curve, which PLD approaches
            eps = min(eps, exact_gaussian_epsilon(mu, delta))
        elif eps <= PLD_MAX_RDP_EPSILON:
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

    rtol = 1e-6
    if accountant == "pld":
        # PLD at a tiny noise multiplier discretises an enormous privacy loss (tens of GiB):
        # bracket from the RDP answer instead, which PLD (the tighter accountant) always meets
        # (it asks about 8% less noise at delta 1e-5). A PLD evaluation takes seconds, so the
        # bracket is tight and the noise is found to 0.1% (on the feasible side, as always);
        # the exact Gaussian curve takes microseconds and is solved as RDP is.
        hi, _ = calibrate_noise_multiplier(make_event, target_epsilon, delta, "rdp", lower)
        if make_event(hi).gaussian_mu() is None:
            rtol = 1e-3
        lower = 0.8 * hi
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
            if hi / lo < 1 + rtol:
                break
    eps = eps_of(hi)
    if eps > target_epsilon:  # pragma: no cover - guarded by the search invariant
        raise RuntimeError("calibration overshot the target epsilon")
    return hi, eps
