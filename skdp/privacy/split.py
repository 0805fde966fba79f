"""Splitting one (epsilon, delta) budget between mechanisms that run one after the other.

skdp splits a budget on the zCDP scale, where sequential composition adds up: a budget
(epsilon, delta) is worth the ``rho`` whose zCDP guarantee the accountant converts to exactly
epsilon at delta (:func:`zcdp_budget`), and a step given a public share ``s`` of it may spend
``s * rho``. The last mechanism (an optimizer, whose event may be of any kind) gets what the
earlier ones left: :func:`remaining_epsilon` is the epsilon it is calibrated to, and the caller
verifies the composition with the accountant afterwards (see
:mod:`skdp.linear_model._bounds`). Everything here is a function of public quantities.
"""

import functools
import math

from .accountant import compute_epsilon
from .events import ComposedEvent, ZCDPEvent

__all__ = ["zcdp_budget", "remaining_rho", "remaining_epsilon"]


def _bisect_largest(ok, hi):
    """The largest x in (0, hi] with ok(x) (ok monotone: true below some point), to 1e-10."""
    if ok(hi):
        return hi
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-10 * hi:
            break
    return lo


@functools.lru_cache(maxsize=512)
def zcdp_budget(epsilon, delta):
    """The largest ``rho`` whose rho-zCDP guarantee spends at most ``epsilon`` at ``delta``
    (skdp's RDP accountant with the tight conversion)."""
    epsilon, delta = float(epsilon), float(delta)
    if not (epsilon > 0 and math.isfinite(epsilon) and 0 < delta < 1):
        raise ValueError(f"need a finite epsilon > 0 and delta in (0, 1); got {epsilon}, {delta}")
    hi = epsilon  # rho = epsilon spends more than epsilon (epsilon >= rho + 2 sqrt(rho ln(1/delta)))
    return _bisect_largest(lambda r: compute_epsilon(ZCDPEvent(r), delta, "rdp") <= epsilon, hi)


@functools.lru_cache(maxsize=512)
def remaining_rho(prior, epsilon, delta):
    """The largest rho such that ``prior`` composed with any rho-zCDP mechanism stays within
    ``epsilon`` at ``delta`` (RDP composition, which holds for adaptively chosen mechanisms:
    every mechanism that is rho-zCDP *whatever* the earlier releases were).

    Raises ValueError when ``prior`` alone spends the whole budget.
    """
    epsilon, delta = float(epsilon), float(delta)
    spent = compute_epsilon(prior, delta, "rdp")
    if not spent < epsilon:
        raise ValueError(
            f"the private bounds and preprocessing already spend epsilon={spent:.4g} of the "
            f"budget epsilon={epsilon:.4g}; nothing is left for the model (give public bounds "
            "or a larger epsilon)"
        )
    rho_total = zcdp_budget(epsilon, delta)

    def ok(rho):
        return compute_epsilon(ComposedEvent((prior, ZCDPEvent(rho))), delta, "rdp") <= epsilon

    rho = _bisect_largest(ok, rho_total)
    if not rho > 0:
        raise ValueError(f"no budget left for the model after epsilon={spent:.4g}")
    return rho


@functools.lru_cache(maxsize=512)
def remaining_epsilon(prior, epsilon, delta):
    """The epsilon at ``delta`` left for one more mechanism after ``prior`` within ``epsilon``.

    Computed for a zCDP mechanism (RDP linear in the order, as the full-batch Gaussian
    optimizers): the epsilon of :func:`remaining_rho`'s rho. For such a mechanism the
    composition is within ``epsilon`` exactly; for others (subsampled or Laplace noise) the
    caller must verify the composition.

    Parameters
    ----------
    prior : DPEvent or None
        What was already released in this fit (None: nothing, the whole epsilon is left).
    epsilon : float > 0
    delta : float in (0, 1)

    Returns
    -------
    float > 0

    Raises
    ------
    ValueError
        When ``prior`` alone spends the whole budget, or when what is left converts to
        epsilon 0 at ``delta`` (a delta far too large for the budget).
    """
    epsilon, delta = float(epsilon), float(delta)
    if prior is None:
        return epsilon
    rho = remaining_rho(prior, epsilon, delta)
    left = min(epsilon, compute_epsilon(ZCDPEvent(rho), delta, "rdp"))
    if not left > 0:
        # the conversion at such a delta gives the model's share epsilon 0: no noise can be
        # calibrated to it (with a delta far above 1/n even no noise at all would pass)
        raise ValueError(
            f"epsilon={epsilon:.4g} at delta={delta:.4g}: after the private bounds, the "
            f"model's share of the budget (rho={rho:.3g}) converts to epsilon 0 at this delta, "
            "so no noise can be calibrated to it; delta is far too large for this epsilon. Use "
            "a delta well below 1/n_samples (delta=None gives min(1e-5, 0.1/n)), or public "
            "bounds"
        )
    return left
