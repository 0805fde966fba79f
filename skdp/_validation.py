"""Validation shared by every estimator, optimizer and search.

Parameters are declared in each class's ``_parameter_constraints`` (scikit-learn's
``sklearn.utils._param_validation``: a wrong type or range raises ``InvalidParameterError``, a
``ValueError`` and ``TypeError``, with scikit-learn's message); the constraints used by several
classes are defined once here. The ``check_*`` functions below turn a validated value into what
a fit uses (the default delta, a float) and keep the privacy-critical checks when scikit-learn's
validation is switched off (``sklearn.set_config(skip_parameter_validation=True)``).
"""

import math
import numbers
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from . import _warnings

__all__ = [
    "check_epsilon", "check_delta", "check_positive", "default_delta", "make_generator",
    "POSITIVE", "POSITIVE_OR_INF", "POSITIVE_INT", "OPEN_UNIT", "RATE",
    "RANDOM_STATE", "TOLERANCE", "AUTO", "NEGATIVE_SAMPLE_WEIGHT", "refuse_negative_weights",
]

#: A finite real > 0 (a bound, a regularisation strength, a step).
POSITIVE = Interval(Real, 0, np.inf, closed="neither")
#: A real > 0 or ``np.inf`` (epsilon: ``np.inf`` is no privacy).
POSITIVE_OR_INF = Interval(Real, 0, np.inf, closed="right")
#: An int >= 1 (iterations, steps, epochs).
POSITIVE_INT = Interval(Integral, 1, None, closed="left")
#: A real in (0, 1) (delta, a fraction).
OPEN_UNIT = Interval(Real, 0, 1, closed="neither")
#: A sampling rate: a float (not an int) in (0, 1].
RATE = Interval(RealNotInt, 0, 1, closed="right")
#: scikit-learn's random_state (None, an int in [0, 2**32 - 1], a RandomState) or a Generator.
RANDOM_STATE = ["random_state", np.random.Generator]
#: The tolerance of a non-private solve: a finite real > 0, or None for the solver's default.
TOLERANCE = [POSITIVE, None]
#: The string "auto" (a default computed from public quantities).
AUTO = StrOptions({"auto"})


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


def check_delta(delta, n_samples, warn=True):
    """delta must be None (the default :func:`default_delta`) or a real in (0, 1).

    A delta above ``1 / n_samples`` is accepted with a ``UserWarning``: a mechanism that
    publishes one whole record at random with probability ``n delta >= 1`` satisfies such a
    guarantee, so it protects nobody. ``warn=False`` validates only: a fit checks its
    parameters early and warns once, where its budget is set (``PrivateFit``).
    """
    if delta is None:
        return default_delta(n_samples)
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be None or a real number in (0, 1); got {delta!r}")
    if warn and delta > 1.0 / n_samples:
        _warnings.warn(
            f"delta={delta!r} is above 1/n_samples={1.0 / n_samples:.3g}: a mechanism that "
            "publishes a random record outright meets such a guarantee. Use delta much smaller "
            "than 1/n (None gives min(1e-5, 0.1/n)).",
            UserWarning,
        )
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


#: The error for a negative ``sample_weight``, in memory and on Dask (one text): what is allowed
#: and that a weight was negative, never which one or its value (the weights are private).
NEGATIVE_SAMPLE_WEIGHT = (
    "sample_weight must be finite and non-negative (a weight of 0 is the null record; weights "
    "above max_sample_weight are clipped to it); got a negative weight"
)


def refuse_negative_weights(sample_weight):
    """``sample_weight`` (an array), or :data:`NEGATIVE_SAMPLE_WEIGHT`'s ValueError if a weight
    is negative (scikit-learn's own text does not say what is allowed)."""
    if np.any(np.asarray(sample_weight) < 0):
        raise ValueError(NEGATIVE_SAMPLE_WEIGHT)
    return sample_weight


def _seed_of(words):
    """A 128-bit integer seed from two 64-bit words (one locked draw of the caller's generator)."""
    return (int(words[0]) << 64) | int(words[1])


def make_generator(random_state, secure=False):
    """A fresh ``numpy.random.Generator`` from a scikit-learn style ``random_state``.

    int -> seeded generator (the same model for the same seed); None -> fresh OS entropy;
    a RandomState or a Generator -> a generator seeded from one draw of 128 bits of it (the
    state size of PCG64: a seed of fewer bits could be searched exhaustively by whoever holds
    a model refitted from it).

    A Generator is not used as it is: the kernels draw from it without holding its lock (they
    run without the GIL), so two fits in two threads given one Generator would tear its state
    and draw overlapping noise. One draw of it (numpy takes the lock) seeds a generator of the
    fit's own. Two copies of one Generator still give the same seed, and so one stream, which
    the ledgers detect.

    With ``secure=True`` the bit generator is randomgen's ChaCha20 (a cryptographically secure
    stream cipher), seeded the same way; numba kernels draw from it unchanged.
    """
    if random_state is None:
        seed = None
    elif isinstance(random_state, np.random.Generator):
        seed = _seed_of(random_state.integers(0, 2**64, size=2, dtype=np.uint64))
    elif isinstance(random_state, np.random.RandomState):
        seed = _seed_of(random_state.randint(0, 2**64, size=2, dtype=np.uint64))
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


@contextmanager
def explained_data_errors(estimator, X):
    """Add to scikit-learn's errors for raw tables what to do, privately: name the text columns
    of a DataFrame (a column of numbers stored as objects still converts, as in scikit-learn),
    say how to fill missing values without reading the private data, and, for a classifier's y
    of several columns, name the one-fit-per-column wrapper and that its fits compose."""
    name = type(estimator).__name__
    try:
        yield
    except ValueError as exc:
        if "Input X contains NaN" in str(exc):
            raise ValueError(
                f"{exc}\n{name} needs values in every cell: fill the missing ones with a public "
                "constant, SimpleImputer(strategy='constant', fill_value=<public value>) (with "
                "MissingIndicator(features='all') to keep the information), in a "
                "skdp.pipeline.PrivatePipeline; a mean or median imputer would read the "
                "private data"
            ) from exc
        if "y should be a 1d array" in str(exc):  # a classifier (DPRidge fits several targets)
            raise ValueError(
                f"{exc}\n{name} fits one target column. For several targets, fit one model per "
                "column (sklearn.multioutput.MultiOutputClassifier does): every fit is a "
                "release, and their privacy losses compose (a skdp.PrivacyLedger totals them)"
            ) from exc
        dtypes = getattr(X, "dtypes", None)
        if dtypes is None or not hasattr(X, "columns"):
            raise
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        text = [str(c) for c, t in dtypes.items() if not (is_numeric_dtype(t) or is_bool_dtype(t))]
        if not text:
            raise
        raise ValueError(
            f"{name} needs numeric features, but the DataFrame's columns {text} are not numeric "
            f"({exc}). Encode them first, for example in "
            "skdp.pipeline.make_private_pipeline(make_column_transformer((OneHotEncoder("
            "categories=<public lists>, handle_unknown='ignore'), <those columns>), "
            "(PrivateRobustScaler(), <the numeric columns>), sparse_threshold=0), the "
            "estimator); an encoder "
            "with categories='auto' would read them from the private data"
        ) from exc
