"""The record of a fit's privacy spend, stored on the estimator as ``privacy_record_``."""

from dataclasses import dataclass, field, replace
import math

from .accountant import compute_epsilon
from .events import NEIGHBOURING_RELATION, PUBLIC_LABEL_SET, DPEvent

__all__ = ["PrivacyRecord", "with_public_labels", "zcdp_rho_for_budget"]


@dataclass(frozen=True)
class PrivacyRecord:
    """What one fit released and what it cost.

    Attributes
    ----------
    event : DPEvent
        The composed privacy event of the whole fit (what the accountant charged).
    epsilon, delta : float
        The spend reported by the accountant for ``event`` (epsilon <= the target).
    accountant : str
    mechanism : str
        ``"gaussian"``, ``"laplace"``, ``"langevin"``, ``"tree"`` or ``"none"``.
    noise_multiplier : float
        Noise scale divided by sensitivity (a representative value when it varies by step).
    sensitivity : float
        The sensitivity (L2 for Gaussian, L1 for Laplace) of one released quantity, in the units
        of the released quantity (for example the clipped gradient sum).
    n_steps : int
        How many noisy releases the fit made.
    sampling : str
        How the examples of a step were chosen (``"full batch"``, ``"poisson(q=...)"``, ...).
    relation : str
        The neighbouring relation the guarantee is stated for: :data:`NEIGHBOURING_RELATION`,
        and for a classifier whose label set was read from y (``classes=None``), with
        :data:`PUBLIC_LABEL_SET` (the released ``classes_`` lists the labels that occur).
    details : dict
        Optimizer-specific extras (per-step scales, rho, ...).
    """

    event: DPEvent
    epsilon: float
    delta: float
    accountant: str
    mechanism: str
    noise_multiplier: float
    sensitivity: float
    n_steps: int
    sampling: str
    relation: str = NEIGHBOURING_RELATION
    details: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_event(cls, event, delta, accountant="rdp", **kwargs):
        """Build a record, computing epsilon for ``event`` at ``delta`` with ``accountant``."""
        pure = event.pure_epsilon()
        eps = compute_epsilon(event, delta, accountant)
        spent_delta = 0.0 if (pure is not None and eps == pure and math.isfinite(eps)) else delta
        return cls(event=event, epsilon=eps, delta=spent_delta, accountant=accountant, **kwargs)


def with_public_labels(record, labels_from_y=True):
    """``record`` stating that the label set was read from y (``labels_from_y``): its relation
    gains :data:`PUBLIC_LABEL_SET` (once). The released ``classes_`` then lists the labels that
    occur in the training data, which no noise covers: the guarantee holds between neighbouring
    data sets with the same label set. ``record`` unchanged when ``labels_from_y`` is false."""
    if not labels_from_y or PUBLIC_LABEL_SET in record.relation:
        return record
    return replace(record, relation=f"{record.relation}; {PUBLIC_LABEL_SET}")


def zcdp_rho_for_budget(epsilon, delta):
    """The rho whose zCDP guarantee converts to exactly (epsilon, delta) with Bun & Steinke's bound.

    ``rho = (sqrt(eps + log(1/delta)) - sqrt(log(1/delta)))^2``. Conservative: the tight
    conversion used by the accountant reports an epsilon at most ``epsilon`` for this rho.
    """
    ld = math.log(1.0 / delta)
    return (math.sqrt(epsilon + ld) - math.sqrt(ld)) ** 2
