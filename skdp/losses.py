"""Per-example losses of the linear models, numba-jitted, with their public constants.

The jitted functions (``loss_value``, ``loss_derivative``, ``clip_vector``, ``objective``, ...)
live in :mod:`skdp._loss_kernels` and are imported from there on first access, so that
``import skdp`` does not import numba; ``from skdp.losses import objective`` works as before.

A model has ``K`` outputs (``K = 1`` for binary classification and regression). For an example
with features ``x`` (augmented with the intercept column) and target row ``y`` (length ``K``),
the margin is ``z = W.T @ x`` and the per-example gradient is ``outer(x, s)`` where ``s`` is the
derivative of the loss in ``z``. Clipping ``s`` to L2 norm ``tau`` bounds the per-example gradient
norm by ``tau * ||x||``; for the squared and squared-hinge losses this is the gradient of their
Huberised versions, which stay convex and smooth with the same constants.

Targets: logistic and squared hinge use ``y in {-1, +1}`` per output (one-vs-rest for K > 1),
multinomial uses a one-hot row, squared uses the real target.
"""

from dataclasses import dataclass
import math

__all__ = [
    "LOGISTIC",
    "SQUARED",
    "SQUARED_HINGE",
    "MULTINOMIAL",
    "Loss",
    "get_loss",
    "loss_derivative",
    "loss_value",
    "clip_vector",
    "objective",
]

LOGISTIC = 0
SQUARED = 1
SQUARED_HINGE = 2
MULTINOMIAL = 3


@dataclass(frozen=True)
class Loss:
    """Public constants of a loss.

    Attributes
    ----------
    name : str
    loss_id : int
        The id the numba kernels dispatch on.
    curvature : float
        Upper bound on the spectral norm of the Hessian of the loss in the margin vector z;
        the objective is ``curvature * R^2 + lam`` smooth for rows of norm <= R.
    """

    name: str
    loss_id: int
    curvature: float

    def default_clip(self, n_outputs, y_bound=None):
        """Default bound tau on the L2 norm of the derivative vector (public quantities only).

        Logistic: sqrt(K) (never active: each of the K one-vs-rest derivatives is below 1 in
        absolute value; 1 for the binary model); multinomial: sqrt(2) (never active); squared
        hinge: 2 sqrt(K) (the size of the derivative at W = 0); squared: ``2 * y_bound`` (the
        largest residual at W = 0 is y_bound; twice that leaves room while the model moves).
        DPLogisticRegression's ``derivative_clip="auto"`` takes its clip from the optimizer and
        the signal-to-noise ratio instead (:func:`skdp.optimizers._defaults.logistic_loss_clip`:
        for the gradient methods the derivative's size at W = 0, opening to these bounds as
        the budget grows), as DPRidge's ``derivative_clip="auto"`` takes the squared loss's clip
        from the optimizer (:func:`skdp.optimizers._defaults.squared_loss_clip`; 2 for dp_scd).
        """
        if self.loss_id == LOGISTIC:
            return math.sqrt(n_outputs)
        if self.loss_id == MULTINOMIAL:
            return math.sqrt(2.0)
        if self.loss_id == SQUARED_HINGE:
            return 2.0 * math.sqrt(n_outputs)
        return 2.0 * float(y_bound)

    def is_bounded(self, tau, n_outputs):
        """Whether clipping the derivative vector of ``n_outputs`` outputs at L2 norm ``tau``
        can never be active (so the clipped field is the loss's own gradient).

        Logistic (one-vs-rest for K > 1): each derivative is below 1 in absolute value, so the
        vector's norm stays below sqrt(K) and reaches any value under it (every margin very
        wrong): never active iff ``tau >= sqrt(K)``. Multinomial: ``softmax(z) - onehot`` has
        norm below sqrt(2) whatever K: never active iff ``tau >= sqrt(2)``. The squared and
        squared-hinge derivatives are unbounded: a finite clip can always be active.
        """
        if self.loss_id == LOGISTIC:
            return tau >= math.sqrt(n_outputs)
        if self.loss_id == MULTINOMIAL:
            return tau >= math.sqrt(2.0)
        return math.isinf(tau)


_LOSSES = {
    "logistic": Loss("logistic", LOGISTIC, 0.25),
    "squared": Loss("squared", SQUARED, 1.0),
    "squared_hinge": Loss("squared_hinge", SQUARED_HINGE, 2.0),
    "multinomial": Loss("multinomial", MULTINOMIAL, 0.5),
}


def get_loss(name):
    """The :class:`Loss` called ``name`` (logistic, squared, squared_hinge, multinomial)."""
    try:
        return _LOSSES[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}; available: {sorted(_LOSSES)}") from None


#: The jitted functions, defined in :mod:`skdp._loss_kernels` and imported on first use (so that
#: ``import skdp`` does not import numba).
_KERNELS = (
    "loss_value", "loss_derivative", "scalar_derivative", "clip_vector", "huber_value",
    "objective", "_log1pexp",
)


def __getattr__(name):
    if name in _KERNELS:
        from . import _loss_kernels

        return getattr(_loss_kernels, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
