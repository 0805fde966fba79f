"""Rényi DP of noisy gradient Langevin dynamics when only the last iterate is released.

The mechanism is ``theta_{k+1} = Pi_C(theta_k - eta_k grad F_D(theta_k) + sqrt(2 eta_k) sigma Z_k)``
with ``Z_k ~ N(0, I)``, ``F_D`` lambda-strongly convex and beta-smooth, ``eta_k < 1 / beta`` and
``theta_0 ~ Pi_C(N(0, (2 sigma^2 / lambda) I))`` (data-independent). Everything is written in terms
of the **drift sensitivity** ``S = sup_theta ||grad F_D(theta) - grad F_D'(theta)||`` of the
neighbouring relation in use, and of the total Langevin time ``T = sum_k eta_k``.

Two valid RDP bounds, both linear in the order alpha (``eps_RDP(alpha) = alpha * rho``):

* **Langevin** (Chourasia, Ye, Shokri 2021, Thm 2; Ryffel, Bach, Pointcheval 2022, Thm 3.1 with
  gamma = 1/2): the tracing diffusion is ``lambda / (2 sigma^2)``-LSI throughout, which gives
  ``rho_L = S^2 (1 - exp(-lambda T / 2)) / (lambda sigma^2)``. It stays below
  ``S^2 / (lambda sigma^2)`` however many steps are taken: the hidden intermediate iterates are
  forgotten at rate lambda / 2.
* **Composition**: each step is a Gaussian mechanism on ``eta_k grad F`` (sensitivity
  ``eta_k S``, noise std ``sqrt(2 eta_k) sigma``, RDP ``alpha eta_k S^2 / (4 sigma^2)``); summed,
  ``rho_C = S^2 T / (4 sigma^2)``. It needs no hidden-state argument and is smaller while
  ``lambda T / 2`` is below about 1.59.

With the replace-one relation and L-Lipschitz losses (the papers' setting), ``S = 2 L / n`` and
``rho_L = 4 L^2 kappa / (lambda n^2 sigma^2)``, ``rho_C = L^2 T / (n^2 sigma^2)``. skdp uses the
zero-out relation: the null record contributes a zero gradient, so ``S = G / n`` with G the bound
on a per-example (clipped) gradient, a quarter of the replace-one rho at equal L = G.

:class:`LangevinEvent` holds the normalised quantities (``noise_multiplier = sigma / S``) and plugs
into the library accountant like any other :class:`~skdp.privacy.events.DPEvent`.
"""

from dataclasses import dataclass
import math

import numpy as np
from scipy import optimize

from .events import DPEvent

__all__ = [
    "LangevinEvent",
    "kappa",
    "rho_langevin",
    "rho_composition",
    "rho_full_batch",
    "epsilon_mironov",
    "epsilon_balle",
    "rho_for_epsilon",
]

def kappa(lam, total_time):
    """Saturation factor ``1 - exp(-lam T / 2)`` (computed as ``-expm1``), in [0, 1]."""
    return -math.expm1(-0.5 * lam * total_time)


def rho_langevin(sensitivity, sigma, lam, total_time):
    """RDP slope of the Langevin (hidden-state) bound: ``S^2 kappa / (lam sigma^2)``."""
    return sensitivity**2 * kappa(lam, total_time) / (lam * sigma**2)


def rho_composition(sensitivity, sigma, total_time):
    """RDP slope of the composition of the per-step Gaussian mechanisms: ``S^2 T / (4 sigma^2)``."""
    return sensitivity**2 * total_time / (4.0 * sigma**2)


def rho_full_batch(sensitivity, sigma, lam, total_time):
    """``min(rho_langevin, rho_composition)``: both are valid for full-batch noisy GD."""
    return min(
        rho_langevin(sensitivity, sigma, lam, total_time),
        rho_composition(sensitivity, sigma, total_time),
    )


def epsilon_mironov(rho, delta):
    """Mironov (2017) conversion of ``alpha * rho``-RDP: ``rho + 2 sqrt(rho log(1/delta))``.

    Returns ``(epsilon, alpha*)`` with ``alpha* = 1 + sqrt(log(1/delta) / rho)``.
    """
    ld = math.log(1.0 / delta)
    return rho + 2.0 * math.sqrt(rho * ld), 1.0 + math.sqrt(ld / rho)


def epsilon_balle(rho, delta):
    """Balle et al. (2020) conversion of ``alpha * rho``-RDP, minimised over alpha > 1.

    Returns ``(epsilon, alpha*)``. The same conversion as :func:`skdp.privacy.rdp.epsilon_from_rdp`,
    minimised continuously in ``u = log(alpha - 1)``.
    """
    ld = math.log(delta)

    def f(u):
        a = 1.0 + math.exp(u)
        return a * rho + math.log1p(-1.0 / a) - (ld + math.log(a)) / (a - 1.0)

    res = optimize.minimize_scalar(
        f, bounds=(-15.0, 15.0), method="bounded", options={"xatol": 1e-10}
    )
    return max(0.0, float(res.fun)), 1.0 + math.exp(res.x)


def rho_for_epsilon(epsilon, delta, conversion="balle"):
    """The largest RDP slope rho whose conversion gives at most ``epsilon`` at ``delta``."""
    if conversion == "mironov":
        ld = math.log(1.0 / delta)
        return (math.sqrt(ld + epsilon) - math.sqrt(ld)) ** 2
    if conversion != "balle":
        raise ValueError(f"conversion must be 'balle' or 'mironov', got {conversion!r}")
    return optimize.brentq(
        lambda r: epsilon_balle(r, delta)[0] - epsilon, 1e-14, max(epsilon, 1e-6),
        xtol=1e-16, rtol=1e-14,
    )


@dataclass(frozen=True)
class LangevinEvent(DPEvent):
    """The last iterate of noisy gradient Langevin dynamics (hidden intermediate iterates).

    Parameters
    ----------
    noise_multiplier : float
        ``sigma / S``: the temperature parameter sigma (per-step parameter noise
        ``sqrt(2 eta_k) sigma``) divided by the drift sensitivity S under the library's relation.
    lam : float > 0
        Strong-convexity constant of the objective (the L2 coefficient).
    total_time : float > 0
        ``T = sum_k eta_k`` over the steps actually taken.
    composition : bool, default=True
        Also use the composition bound (full batch only) and report the minimum.

    Notes
    -----
    Proven for full-batch noisy gradient descent only (Chourasia et al. 2021). Ryffel et al.
    (2022) claim the same formula for uniformly sampled mini-batches; the claim is not proven and
    fails (``docs/optimizers/dp_sgld.rst``, research note), so no skdp mechanism uses this event
    for mini-batches.
    """

    noise_multiplier: float
    lam: float
    total_time: float
    composition: bool = True

    def __post_init__(self):
        if not self.lam > 0:
            raise ValueError(f"the Langevin bound needs lam > 0, got {self.lam}")
        if not self.total_time >= 0:
            raise ValueError(f"total_time must be >= 0, got {self.total_time}")

    @property
    def rho_langevin(self):
        return rho_langevin(1.0, self.noise_multiplier, self.lam, self.total_time)

    @property
    def rho_composition(self):
        return rho_composition(1.0, self.noise_multiplier, self.total_time)

    @property
    def rho(self):
        """The RDP slope used: ``eps_RDP(alpha) = alpha * rho``."""
        if self.noise_multiplier == 0:
            return math.inf
        if self.composition:
            return min(self.rho_langevin, self.rho_composition)
        return self.rho_langevin

    @property
    def saturated_rho(self):
        """The limit of the Langevin bound as T -> inf: ``1 / (lam z^2)``."""
        return 1.0 / (self.lam * self.noise_multiplier**2)

    def rdp(self, orders):
        return self.rho * np.asarray(orders, dtype=float)
