"""The private optimizers and their registry.

``optimizer="dp_gdws"`` (a name) builds the default instance of the registered class; an
instance can be passed instead to set its parameters. Optimizers whose module is not present
in this build are simply not available (see :func:`available_optimizers`).
"""

import importlib
import importlib.util

from ._base import Budget, DPOptimizer, OptimizeResult, Problem

__all__ = [
    "Budget",
    "DPOptimizer",
    "OptimizeResult",
    "Problem",
    "OPTIMIZER_NAMES",
    "available_optimizers",
    "get_optimizer_class",
    "resolve_optimizer",
]

# name -> (module, class). The order is the order of the docs and the demo.
_REGISTRY = {
    "dp_gdws": ("dp_gdws", "DPGDWS"),
    "dp_scd": ("dp_scd", "DPSCD"),
    "dp_nag_opt": ("dp_nag_opt", "DPNAGOpt"),
    "dp_masg": ("dp_masg", "DPMASG"),
    "dp_sgld": ("dp_sgld", "DPSGLD"),
    "dp_nsgd_tree": ("dp_nsgd_tree", "DPNSGDTree"),
}

OPTIMIZER_NAMES = tuple(_REGISTRY)


def get_optimizer_class(name):
    """The optimizer class registered as ``name``; ValueError when unknown or unavailable."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown optimizer {name!r}; available: {available_optimizers()}")
    module, cls = _REGISTRY[name]
    try:
        mod = importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{module}":
            raise
        raise ValueError(
            f"optimizer {name!r} is not available in this build; available: "
            f"{available_optimizers()}"
        ) from None
    return getattr(mod, cls)


def available_optimizers():
    """Names of the optimizers present in this build, in registry order."""
    names = []
    for name, (module, _) in _REGISTRY.items():
        if importlib.util.find_spec(f"{__name__}.{module}") is not None:
            names.append(name)
    return names


def resolve_optimizer(optimizer):
    """A fresh optimizer instance from a name or an instance (instances are cloned)."""
    from sklearn.base import clone

    if isinstance(optimizer, str):
        return get_optimizer_class(optimizer)()
    if isinstance(optimizer, DPOptimizer):
        return clone(optimizer)
    raise ValueError(
        "optimizer must be one of the names "
        f"{available_optimizers()} or a DPOptimizer instance; got {optimizer!r}"
    )
