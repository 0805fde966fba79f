"""Fault injection for checking the power of an audit: the noise drawn, scaled, the claim kept.

An audit that cannot tell a mechanism with half its noise from the real one proves nothing
about the real one. :func:`noise_scaled` multiplies the noise every skdp optimizer draws by a
factor while its privacy record (the claim) stays what the real calibration reported: an audit
that is strong enough reports a violation under ``noise_scaled(0.5)`` and none without it.
"""

from contextlib import contextmanager

import numpy as np

from ..optimizers import available_optimizers, get_optimizer_class

__all__ = ["noise_scaled", "active_noise_factor", "NOISE_DECISIONS"]

#: Per registered optimizer: the method that decides the noise (from public quantities, before
#: the data is touched) and the positions, in what it returns, of the noise scales the kernel
#: draws with. The privacy record it returns (or the event the record is built from) is left
#: unchanged. A new optimizer must be added here (the tests check that every registered
#: optimizer is).
NOISE_DECISIONS = {
    "dp_gdws": ("_calibrate", (0,)),  # (noise scale, record)
    "dp_scd": ("_calibrate", (0, 1)),  # (std on V, std on alpha, record)
    "dp_nag_opt": ("_plan", (1,)),  # (schedule, per-step scales, record)
    "dp_masg": ("_plan", (1,)),
    "dp_sgld": ("_calibrate", (0,)),  # (sigma, details, event, accountant, analysis)
    "dp_nsgd_tree": ("_calibrate", (0,)),  # (node noise std, record)
}


def _scaled(method, positions, factor):
    def wrapper(self, *args, **kwargs):
        out = list(method(self, *args, **kwargs))
        for k in positions:
            out[k] = np.asarray(out[k], dtype=float) * factor if np.ndim(out[k]) else out[k] * factor
        return tuple(out)

    wrapper.__wrapped__ = method
    wrapper._skdp_noise_factor = factor
    return wrapper


@contextmanager
def noise_scaled(factor):
    """Inside the block every skdp optimizer draws ``factor`` times the noise it calibrated.

    The records, hence ``epsilon_`` and what ledgers are charged, are the real ones: with
    ``factor < 1`` the claims are false, by a known amount. Use it to check that an audit is
    strong enough to catch an error of that size (``factor=0.5``: the noise of a sensitivity
    underestimated by a factor of 2). For tests and audits only; not thread-safe.

    Parameters
    ----------
    factor : float > 0

    Yields
    ------
    None
    """
    if not factor > 0:
        raise ValueError(f"factor must be > 0, got {factor}")
    names = available_optimizers()
    missing = sorted(set(names) - set(NOISE_DECISIONS))
    if missing:
        raise NotImplementedError(f"noise_scaled does not know how {missing} decide their noise")
    patched = []
    try:
        for name in names:
            cls = get_optimizer_class(name)
            attr, positions = NOISE_DECISIONS[name]
            original = getattr(cls, attr)
            if hasattr(original, "_skdp_noise_factor"):
                continue  # inherited from a class patched already (or a nested block): scale once
            own = attr in cls.__dict__
            setattr(cls, attr, _scaled(original, positions, factor))
            patched.append((cls, attr, original, own))
        yield
    finally:
        for cls, attr, original, own in reversed(patched):
            if own:
                setattr(cls, attr, original)
            else:
                delattr(cls, attr)


def active_noise_factor():
    """The factor of the :func:`noise_scaled` block open in this process (1.0 outside one).

    A block patches this process's classes only; an audit that fits in worker processes passes
    this factor to each job, which opens a block of its own.

    Returns
    -------
    float
    """
    name = next(iter(NOISE_DECISIONS))  # every class is patched alike: read the first
    method = getattr(get_optimizer_class(name), NOISE_DECISIONS[name][0])
    return getattr(method, "_skdp_noise_factor", 1.0)
