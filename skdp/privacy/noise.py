"""The single place where skdp draws privacy noise.

Every optimizer kernel adds its noise through these jitted functions (and only these), so a test
can check one function for the noise distribution and scale, and the record/replay tests can
trace what each call received.
"""

from numba import njit

__all__ = ["add_gaussian_noise", "add_laplace_noise", "add_noise"]

GAUSSIAN = 0
LAPLACE = 1


@njit(cache=True, nogil=True)
def add_gaussian_noise(rng, values, std):
    """In place: ``values += N(0, std^2 I)``. ``std == 0`` adds nothing and draws nothing."""
    if std > 0.0:
        for j in range(values.shape[0]):
            values[j] += std * rng.standard_normal()


@njit(cache=True, nogil=True)
def add_laplace_noise(rng, values, scale):
    """In place: ``values += Lap(scale)`` i.i.d.; ``scale`` is the Laplace scale b (std = b sqrt 2)."""
    if scale > 0.0:
        for j in range(values.shape[0]):
            values[j] += rng.laplace(0.0, scale)


@njit(cache=True, nogil=True)
def add_noise(rng, values, mechanism, scale):
    """Dispatch on ``mechanism`` (GAUSSIAN: scale is the std; LAPLACE: scale is b)."""
    if mechanism == LAPLACE:
        add_laplace_noise(rng, values, scale)
    else:
        add_gaussian_noise(rng, values, scale)
