"""skdp: differentially private linear models for scikit-learn.

>>> from skdp import DPLogisticRegression
>>> clf = DPLogisticRegression(epsilon=1.0, optimizer="dp_gdws")
"""

from .ledger import BudgetExceededError, PrivacyLedger, compose
from .linear_model import DPLinearSVC, DPLogisticRegression, DPRidge
from .optimizers import DPOptimizer, available_optimizers
from .privacy import PrivacyRecord, compute_epsilon
from .progress import FitProgress

__version__ = "0.1.0.dev0"

__all__ = [
    "DPLogisticRegression",
    "DPRidge",
    "DPLinearSVC",
    "DPOptimizer",
    "DPGDWS",
    "PrivacyRecord",
    "FitProgress",
    "PrivacyLedger",
    "BudgetExceededError",
    "compose",
    "tuning_cost",
    "available_optimizers",
    "compute_epsilon",
    "__version__",
]


def __getattr__(name):
    # Lazy: the optimizer modules hold the numba kernels (``import skdp`` does not import numba).
    if name == "tuning_cost":  # lazy: skdp.model_selection imports the estimators
        from .model_selection import tuning_cost

        return tuning_cost
    # Optimizer classes added by later modules are importable from the top level when present.
    from . import optimizers

    for key in optimizers.OPTIMIZER_NAMES:
        module, cls = optimizers._REGISTRY[key]
        if cls == name:
            return optimizers.get_optimizer_class(key)
    raise AttributeError(f"module 'skdp' has no attribute {name!r}")
