"""The single place where skdp draws privacy noise.

Every optimizer kernel adds its noise through these jitted functions (and only these), so a test
can check one function for the noise distribution and scale, and the record/replay tests can
trace what each call received. The loops that run in Python around a gradient oracle (a fit on
Dask, :mod:`skdp._dask`) use :func:`add_noise_bulk`: the same draws as :func:`add_noise` from the
same generator state, drawn as one array.
"""

from numba import njit

__all__ = ["add_gaussian_noise", "add_laplace_noise", "add_noise", "add_noise_bulk"]

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


def add_noise_bulk(rng, values, mechanism, scale):
    """:func:`add_noise` without numba, the vector drawn in one call.

    numba's ``Generator`` support runs numpy's own samplers on the generator's bit generator,
    so from the same state both draw the same values in the same order and leave the same state
    (``values[j] += scale * z_j`` here as there; checked in ``tests/test_dask.py``): a fit's
    noise does not depend on which of the two a step used.
    """
    if scale > 0.0:
        if mechanism == LAPLACE:
            values += rng.laplace(0.0, scale, values.shape[0])
        else:
            values += scale * rng.standard_normal(values.shape[0])
