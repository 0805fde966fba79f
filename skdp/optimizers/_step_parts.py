"""Jitted parts of a noisy step shared by the kernels, written to compile little.

Compile time is what a user waits for on the first fit, so these pieces avoid what numba
compiles expensively:

* :func:`draw_batch` is typed on ``q``: a kernel called with ``q=None`` (a full batch) never
  compiles the Poisson sampler, while ``q`` a float draws the Poisson batch of
  :func:`~skdp.optimizers._glm.poisson_batch`. Each fit compiles only the case it uses.

* :func:`add_step_noise` is typed on ``mechanism``: :func:`noise_mode` passes None for the
  Gaussian mechanism, so a Gaussian fit (the default) compiles no Laplace sampler.

The kernels also copy a step's release to or from the trace with plain loops: a slice
assignment (``trace[t, 1, :] = g``) compiles numba's shape-mismatch error path with its string
formatting (about 15 % of the same compile).
"""

from numba import njit, types
from numba.extending import overload

from ..privacy.noise import GAUSSIAN, add_gaussian_noise, add_noise
from ._glm import poisson_batch

__all__ = ["draw_batch", "batch_rate", "add_step_noise", "noise_mode", "release_step"]


def draw_batch(rng, n, q, perm):
    """Rows of the step's batch in ``perm[:m]``; returns m (``q=None``: all n rows, perm as is)."""
    raise NotImplementedError("jitted only")


@overload(draw_batch)
def _draw_batch(rng, n, q, perm):
    if isinstance(q, (types.NoneType, types.Omitted)):
        return lambda rng, n, q, perm: n
    return lambda rng, n, q, perm: poisson_batch(rng, n, q, perm)


def batch_rate(q):
    """The ``q`` argument of a kernel: None for a full batch (nothing to sample), else q."""
    return None if q >= 1.0 else float(q)


def add_step_noise(rng, values, mechanism, scale):
    """:func:`~skdp.privacy.noise.add_noise`, the mechanism chosen when the kernel is typed when
    ``mechanism`` is None (Gaussian); an int (GAUSSIAN or LAPLACE) is dispatched at run time."""
    raise NotImplementedError("jitted only")


@overload(add_step_noise)
def _add_step_noise(rng, values, mechanism, scale):
    if isinstance(mechanism, (types.NoneType, types.Omitted)):
        return lambda rng, values, mechanism, scale: add_gaussian_noise(rng, values, scale)
    return lambda rng, values, mechanism, scale: add_noise(rng, values, mechanism, scale)


def noise_mode(mechanism):
    """The ``mechanism`` argument of a kernel: None for GAUSSIAN (nothing else compiled), else
    the mechanism's id."""
    return None if mechanism == GAUSSIAN else mechanism


@njit(cache=True, nogil=True)
def release_step(rng, g, mechanism, scale, trace, t, replay):
    """The release of step t, in place in ``g`` (the step's clipped gradient sum): g plus the
    mechanism's noise of scale ``scale`` (:func:`add_step_noise`). When ``trace`` is not empty
    its row t records the sum before (``trace[t, 0]``) and the release (``trace[t, 1]``). With
    ``replay`` (record/replay tests only) ``trace[t, 1]`` holds a recorded run's release, and g
    becomes that instead: the noise is still drawn, so the random stream stays aligned."""
    tracing = trace.shape[0] > 0
    if tracing:
        for j in range(g.shape[0]):
            trace[t, 0, j] = g[j]
    add_step_noise(rng, g, mechanism, scale)
    if replay:
        for j in range(g.shape[0]):
            g[j] = trace[t, 1, j]
    elif tracing:
        for j in range(g.shape[0]):
            trace[t, 1, j] = g[j]
