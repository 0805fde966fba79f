"""Validation of the privacy parameters shared by every estimator (clear ValueErrors)."""

import math
import numbers

import numpy as np

__all__ = ["check_epsilon", "check_delta", "check_positive", "default_delta", "make_generator"]


def check_epsilon(epsilon):
    """epsilon must be a real > 0; ``np.inf`` means no privacy (no noise)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or math.isnan(epsilon):
        raise ValueError(f"epsilon must be a real number > 0 (or np.inf for no privacy); got {epsilon!r}")
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0 (or np.inf for no privacy); got {epsilon!r}")
    return float(epsilon)


def default_delta(n_samples):
    """The default delta: ``min(1e-5, 0.1 / n)``, a function of the public n only, <= 1/(10 n)."""
    return min(1e-5, 0.1 / n_samples)


def check_delta(delta, n_samples):
    """delta must be None (the default :func:`default_delta`) or a real in (0, 1)."""
    if delta is None:
        return default_delta(n_samples)
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be None or a real number in (0, 1); got {delta!r}")
    return float(delta)


def check_positive(value, name, allow_inf=False):
    """A finite (or, if allowed, infinite) real > 0."""
    ok = (
        not isinstance(value, bool)
        and isinstance(value, numbers.Real)
        and value > 0
        and (allow_inf or math.isfinite(value))
    )
    if not ok:
        raise ValueError(f"{name} must be a {'' if allow_inf else 'finite '}real number > 0; got {value!r}")
    return float(value)


def make_generator(random_state, secure=False):
    """A fresh ``numpy.random.Generator`` from a scikit-learn style ``random_state``.

    int -> seeded generator (the same model for the same seed); None -> fresh OS entropy;
    a RandomState -> a generator seeded from it; a Generator is used as it is.

    With ``secure=True`` the bit generator is randomgen's ChaCha20 (a cryptographically secure
    stream cipher), seeded the same way; numba kernels draw from it unchanged.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        seed = None
    elif isinstance(random_state, np.random.RandomState):
        seed = int(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    elif isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed = int(random_state)
    else:
        raise ValueError(
            f"random_state must be None, an int, a RandomState or a Generator; got {random_state!r}"
        )
    if not secure:
        return np.random.default_rng(seed)
    try:
        import randomgen
    except ImportError:
        raise ImportError(
            'secure_mode=True needs randomgen: pip install "skdp[secure]"'
        ) from None
    # seed=None draws the key from OS entropy (through numpy's SeedSequence)
    return np.random.Generator(randomgen.ChaCha(seed=seed, rounds=20))
