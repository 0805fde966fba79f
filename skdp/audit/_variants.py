"""The privacy-relevant variants of each registered optimizer, found from its parameters.

Used by the test suite and the audit benchmark so that every optimizer added to the registry is
covered without listing it: a ``batch_size`` parameter gives a full-batch and a mini-batch
variant, a ``mechanism`` parameter a Laplace variant.
"""

from ..optimizers import get_optimizer_class

__all__ = ["optimizer_variants"]


def optimizer_variants(name, batch_size=8, laplace=True):
    """``[(label, params), ...]`` for optimizer ``name``: its default and the other regimes.

    Parameters
    ----------
    name : str
        A registered optimizer name.
    batch_size : int, default=8
        Expected batch size of the mini-batch variant.
    laplace : bool, default=True
        Add Laplace variants when the optimizer has a ``mechanism`` parameter.
    """
    params = get_optimizer_class(name)().get_params()
    out = [("default", {})]
    if "batch_size" in params:
        if params["batch_size"] is None:
            out.append(("minibatch", {"batch_size": batch_size}))
        else:
            out.append(("fullbatch", {"batch_size": None}))
    if laplace and "mechanism" in params and params["mechanism"] != "laplace":
        for label, p in list(out):
            lab = "laplace" if label == "default" else f"laplace-{label}"
            out.append((lab, {**p, "mechanism": "laplace"}))
    return out
