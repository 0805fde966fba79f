"""Privacy events: what a fit released, in a form the accountant can compose.

Every event is normalised to unit sensitivity: ``noise_multiplier`` is the noise scale divided by
the sensitivity of the released quantity under the library's neighbouring relation
(:data:`NEIGHBOURING_RELATION`). Events are small frozen dataclasses so that they can be
stored on a fitted estimator, pickled, compared, and converted to dp-accounting's ``DpEvent``.
"""

from dataclasses import dataclass
import math

import numpy as np

from .rdp import rdp_gaussian, rdp_poisson_subsampled_gaussian

__all__ = [
    "NEIGHBOURING_RELATION",
    "PUBLIC_LABEL_SET",
    "DPEvent",
    "GaussianEvent",
    "PoissonGaussianEvent",
    "ZCDPEvent",
    "LaplaceEvent",
    "PoissonLaplaceEvent",
    "ExponentialMechanismEvent",
    "SelfComposedEvent",
    "ComposedEvent",
    "NonPrivateEvent",
]

#: The neighbouring relation used by every skdp mechanism. Two data sets of the same public size
#: n are neighbours when one record of one is replaced by a "null" record that contributes
#: nothing to any gradient or update (add/remove-one with n public; dp-accounting calls it
#: REPLACE_SPECIAL, and its Poisson-subsampled Gaussian RDP is the add/remove one).
NEIGHBOURING_RELATION = "zero-out (add/remove one record, n public)"

#: Appended to a classifier's relation when its label set was read from y (``classes=None``):
#: ``classes_`` lists the labels that occur, so the guarantee holds between data sets with the
#: same label set (whether a label occurs at all is not covered); see
#: :func:`skdp.privacy.record.with_public_labels`.
PUBLIC_LABEL_SET = "the label set read from y (classes_) public"


class DPEvent:
    """Base class. Subclasses implement :meth:`rdp` and may implement :meth:`pure_epsilon`."""

    def rdp(self, orders):  # pragma: no cover - interface
        """Rényi-DP curve of the event: the RDP epsilon at each order (inf where unbounded).

        Parameters
        ----------
        orders : array-like of float > 1
            Rényi orders alpha.

        Returns
        -------
        ndarray of the shape of ``orders``
        """
        raise NotImplementedError

    def pure_epsilon(self):
        """Pure-DP epsilon of the event, or None when it has no pure-DP guarantee."""
        return None

    def gaussian_mu(self):
        """``mu`` when the event is exactly one Gaussian mechanism of sensitivity / noise std
        ``mu`` (full-batch Gaussian releases composed: ``mu^2`` adds up, Dong, Roth & Su 2022),
        else None. Its exact (epsilon, delta) curve is then the analytic Gaussian one."""
        return None

    def to_dp_accounting(self):  # pragma: no cover - interface
        """The equivalent ``dp_accounting.DpEvent`` (needs ``pip install "skdp[accounting]"``).

        Raises NotImplementedError for events dp-accounting cannot express.
        """
        raise NotImplementedError(f"{type(self).__name__} has no dp-accounting equivalent")


@dataclass(frozen=True)
class NonPrivateEvent(DPEvent):
    """A release with no privacy guarantee (epsilon = inf)."""

    def rdp(self, orders):
        return np.full(np.shape(orders), np.inf)

    def pure_epsilon(self):
        return math.inf

    def to_dp_accounting(self):
        import dp_accounting

        return dp_accounting.NonPrivateDpEvent()


@dataclass(frozen=True)
class GaussianEvent(DPEvent):
    """One Gaussian mechanism; ``noise_multiplier`` = noise std / L2 sensitivity."""

    noise_multiplier: float

    def rdp(self, orders):
        return rdp_gaussian(self.noise_multiplier, orders)

    def gaussian_mu(self):
        z = float(self.noise_multiplier)
        return math.inf if z <= 0 else 1.0 / z

    def to_dp_accounting(self):
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.noise_multiplier)


@dataclass(frozen=True)
class PoissonGaussianEvent(DPEvent):
    """One Gaussian mechanism on a Poisson sample with rate ``sampling_rate``."""

    sampling_rate: float
    noise_multiplier: float

    def rdp(self, orders):
        return rdp_poisson_subsampled_gaussian(self.sampling_rate, self.noise_multiplier, orders)

    def to_dp_accounting(self):
        import dp_accounting

        return dp_accounting.PoissonSampledDpEvent(
            self.sampling_rate, dp_accounting.GaussianDpEvent(self.noise_multiplier)
        )


@dataclass(frozen=True)
class ZCDPEvent(DPEvent):
    """A rho-zCDP release (RDP ``rho * alpha`` at every order)."""

    rho: float

    def rdp(self, orders):
        return self.rho * np.asarray(orders, dtype=float)

    def to_dp_accounting(self):
        import dp_accounting

        return dp_accounting.ZCDpEvent(self.rho)


@dataclass(frozen=True)
class LaplaceEvent(DPEvent):
    """One Laplace mechanism; ``noise_multiplier`` = Laplace scale b / L1 sensitivity."""

    noise_multiplier: float

    def pure_epsilon(self):
        return math.inf if self.noise_multiplier == 0 else 1.0 / self.noise_multiplier

    def rdp(self, orders):
        # Mironov (2017), Prop. 6: RDP of the Laplace mechanism with eps = 1/b.
        eps = self.pure_epsilon()
        orders = np.asarray(orders, dtype=float)
        with np.errstate(over="ignore"):
            a = orders
            val = (
                np.log(a / (2 * a - 1) * np.exp((a - 1) * eps) + (a - 1) / (2 * a - 1) * np.exp(-a * eps))
                / (a - 1)
            )
        return np.minimum(val, eps)

    def to_dp_accounting(self):
        import dp_accounting

        return dp_accounting.LaplaceDpEvent(self.noise_multiplier)


@dataclass(frozen=True)
class PoissonLaplaceEvent(DPEvent):
    """Laplace mechanism on a Poisson sample: pure eps' = log(1 + q (e^eps - 1)) (Li et al. 2012)."""

    sampling_rate: float
    noise_multiplier: float

    def pure_epsilon(self):
        eps = LaplaceEvent(self.noise_multiplier).pure_epsilon()
        return math.log1p(self.sampling_rate * math.expm1(eps))

    def rdp(self, orders):
        return np.full(np.shape(orders), self.pure_epsilon())

    def to_dp_accounting(self):
        import dp_accounting

        return dp_accounting.PoissonSampledDpEvent(
            self.sampling_rate, dp_accounting.LaplaceDpEvent(self.noise_multiplier)
        )


@dataclass(frozen=True)
class ExponentialMechanismEvent(DPEvent):
    """One exponential mechanism with parameter ``epsilon``: it samples y with probability
    proportional to ``exp(epsilon * u(D, y) / (2 * sensitivity))``.

    It is pure ``epsilon``-DP and ``epsilon``-bounded-range (Durfee & Rogers 2019), hence
    ``epsilon^2 / 8``-zCDP (Cesar & Rogers 2021, Lemma 3.2): its RDP at order alpha is
    ``min(alpha * epsilon^2 / 8, epsilon)``. Four times cheaper in zCDP than the generic
    ``epsilon^2 / 2`` of a pure epsilon-DP mechanism, which is what makes several private
    quantiles affordable inside one fit.
    """

    epsilon: float

    def pure_epsilon(self):
        return float(self.epsilon)

    def rdp(self, orders):
        orders = np.asarray(orders, dtype=float)
        eps = float(self.epsilon)
        return np.minimum(orders * eps * eps / 8.0, eps)

    def to_dp_accounting(self):
        # dp-accounting has no exponential-mechanism event, and its randomised-response event
        # means another neighbouring relation. The zCDP bound is exact in meaning under any
        # relation; dp-accounting's RDP accountant takes it, its PLD accountant does not (skdp
        # then accounts with RDP, see skdp.ledger and skdp.linear_model._bounds).
        import dp_accounting

        return dp_accounting.ZCDpEvent(float(self.epsilon) ** 2 / 8.0)


@dataclass(frozen=True)
class SelfComposedEvent(DPEvent):
    """``event`` repeated ``count`` times (adaptive composition)."""

    event: DPEvent
    count: int

    def rdp(self, orders):
        return self.count * self.event.rdp(orders)

    def pure_epsilon(self):
        e = self.event.pure_epsilon()
        return None if e is None else self.count * e

    def gaussian_mu(self):
        mu = self.event.gaussian_mu()
        return None if mu is None else math.sqrt(self.count) * mu

    def to_dp_accounting(self):
        import dp_accounting

        return dp_accounting.SelfComposedDpEvent(self.event.to_dp_accounting(), self.count)


@dataclass(frozen=True)
class ComposedEvent(DPEvent):
    """The adaptive composition of several events."""

    events: tuple

    def rdp(self, orders):
        total = np.zeros(np.shape(orders))
        for e in self.events:
            total = total + e.rdp(orders)
        return total

    def pure_epsilon(self):
        eps = [e.pure_epsilon() for e in self.events]
        return None if any(v is None for v in eps) else float(sum(eps))

    def gaussian_mu(self):
        mus = [e.gaussian_mu() for e in self.events]
        return None if not mus or any(m is None for m in mus) else math.sqrt(
            sum(m * m for m in mus))

    def to_dp_accounting(self):
        import dp_accounting

        return dp_accounting.ComposedDpEvent([e.to_dp_accounting() for e in self.events])
