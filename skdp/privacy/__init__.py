"""Privacy accounting: events, the RDP/zCDP accountant, calibration, and the noise chokepoint."""

from .accountant import (
    ACCOUNTANTS, calibrate_noise_multiplier, compute_epsilon, exact_gaussian_epsilon,
    rdp_epsilon_and_order,
)
from .events import (
    NEIGHBOURING_RELATION,
    PUBLIC_LABEL_SET,
    ComposedEvent,
    DPEvent,
    ExponentialMechanismEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonGaussianEvent,
    PoissonLaplaceEvent,
    SelfComposedEvent,
    ZCDPEvent,
)
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp, rdp_gaussian, rdp_poisson_subsampled_gaussian
from .record import PrivacyRecord, with_public_labels, zcdp_rho_for_budget

__all__ = [
    "ACCOUNTANTS",
    "NEIGHBOURING_RELATION",
    "PUBLIC_LABEL_SET",
    "DEFAULT_ORDERS",
    "DPEvent",
    "ExponentialMechanismEvent",
    "ComposedEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "NonPrivateEvent",
    "PoissonGaussianEvent",
    "PoissonLaplaceEvent",
    "SelfComposedEvent",
    "ZCDPEvent",
    "PrivacyRecord",
    "calibrate_noise_multiplier",
    "compute_epsilon",
    "exact_gaussian_epsilon",
    "rdp_epsilon_and_order",
    "epsilon_from_rdp",
    "rdp_gaussian",
    "rdp_poisson_subsampled_gaussian",
    "zcdp_rho_for_budget",
]
