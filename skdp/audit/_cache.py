"""Memoised accounting for the many identical fits of an audit.

Every ``optimizer.solve`` calibrates its noise (a bisection over the accountant), which for a
Poisson-subsampled mechanism costs about a second, far more than the fit itself. An audit fits
the same (public) configuration hundreds of times, so the calibration repeats exactly the same
calls of the accountant. :func:`~skdp.privacy.compute_epsilon` keeps its answers for the
process (``skdp.privacy._epsilon_cache``); :func:`memoized_accounting` also caches the RDP
curves that are asked for outside it (the prefix epsilons of a fit's progress, a horizon's
selection) for the duration of a ``with`` block. Results are bit-for-bit the same as without it.
"""

from contextlib import contextmanager
import functools
import sys

import numpy as np

__all__ = ["memoized_accounting"]

_ACTIVE = []


def _cached_rdp_curve(original, cache):
    @functools.wraps(original)
    def cached(sampling_rate, noise_multiplier, orders=None):
        if orders is None:
            return original(sampling_rate, noise_multiplier)
        arr = np.asarray(orders, dtype=float)
        key = ("rdp", float(sampling_rate), float(noise_multiplier), arr.shape, arr.tobytes())
        value = cache.get(key)
        if value is None:
            value = original(sampling_rate, noise_multiplier, arr)
            cache[key] = value
        return np.array(value, copy=True)

    return cached


@contextmanager
def memoized_accounting():
    """Cache the subsampled-Gaussian RDP curves inside the block (not thread-safe).

    :func:`skdp.privacy.rdp_poisson_subsampled_gaussian` is a pure function of
    ``(q, z, orders)``. Every ``skdp`` module that imported it by name sees the cached version
    until the block exits; results are the same values as without the cache. Nested blocks share
    the outer cache. (:func:`skdp.privacy.compute_epsilon` caches its own answers, always.)

    Yields
    ------
    dict
        The cache, for inspection.
    """
    if _ACTIVE:
        yield _ACTIVE[-1]
        return
    from ..privacy import rdp as _rdp

    cache = {}
    replacements = {
        id(_rdp.rdp_poisson_subsampled_gaussian): (
            _rdp.rdp_poisson_subsampled_gaussian,
            _cached_rdp_curve(_rdp.rdp_poisson_subsampled_gaussian, cache),
        ),
    }
    patched = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "skdp" or name.startswith("skdp.")):
            continue
        for attr, value in list(vars(module).items()):
            hit = replacements.get(id(value))
            if hit is not None and value is hit[0]:
                setattr(module, attr, hit[1])
                patched.append((module, attr, value))
    _ACTIVE.append(cache)
    try:
        yield cache
    finally:
        _ACTIVE.pop()
        for module, attr, value in patched:
            setattr(module, attr, value)
