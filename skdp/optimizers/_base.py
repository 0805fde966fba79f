"""The contract every skdp optimizer fulfils.

An optimizer is a small scikit-learn-style object (parameters stored unchanged in ``__init__``,
so ``clone``, ``get_params`` and nested grid search such as ``optimizer__max_iter`` work).
Given a :class:`Problem` (clipped data and public constants) and a :class:`Budget` it

1. decides its noise from public quantities only (n, d, the bounds, the budget, its own
   hyper-parameters), never from the data values;
2. runs its numba kernel on the clipped data with a seeded ``numpy.random.Generator``;
3. returns an :class:`OptimizeResult` holding the coefficients and the
   :class:`~skdp.privacy.PrivacyRecord` of what it released.

``epsilon = inf`` means no noise and no gradient clipping: every optimizer then minimises the
same objective with the shared non-private solver (:mod:`skdp.optimizers._nonprivate`, L-BFGS to
``tol`` within ``max_iter`` iterations, a ``ConvergenceWarning`` when it stops short), checked
against scikit-learn in the tests.

Parameters are declared in ``_parameter_constraints`` and validated, the scikit-learn way
(``InvalidParameterError``), at the start of every :meth:`DPOptimizer.solve`.
"""

from dataclasses import dataclass, field
from functools import cached_property
import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator

from ..losses import Loss
from ..privacy import NonPrivateEvent, PrivacyRecord
from ..progress import ProgressMonitor
from ._defaults import STEP_SMOOTHNESS_FLOOR, logistic_loss_clip, squared_loss_clip

__all__ = [
    "Problem", "Budget", "OptimizeResult", "DPOptimizer", "batch_fraction", "check_replay",
    "trace_buffer",
]


@dataclass(frozen=True)
class Problem:
    """A regularised GLM problem on clipped data.

    The objective is ``F(W) = (1/n) sum_i s_i loss(W.T x_i, y_i) + (lam / 2) ||W||_F^2`` where
    the loss derivative is clipped to L2 norm ``clip`` (Huberised loss) when ``clip`` is finite
    and ``s_i`` in ``[0, max_sample_weight]`` are the example weights (ones by default). n, the
    number of rows, is public; a row of weight 0 is the null record of the zero-out relation.

    Every sensitivity is stated for weights in ``[0, max_sample_weight]``, so the weights the
    kernels really use are checked against that bound, the implicit ones included: without
    ``sample_weight`` every row has weight 1, which needs ``max_sample_weight >= 1`` (pass the
    weights explicitly otherwise; the estimators pass ones clipped to the bound).

    Attributes
    ----------
    X : ndarray of shape (n, p), float64, C-contiguous, or scipy sparse CSR matrix/array
        Rows clipped to ``data_norm`` and, when there is an intercept, augmented with the
        constant column ``intercept_scaling`` (last column).
    Y : ndarray of shape (n, K), float64, C-contiguous
        Targets, encoded for ``loss`` (see :mod:`skdp.losses`).
    loss : Loss
    lam : float > 0
        L2 regularisation strength (also the strong-convexity constant).
    row_norm_bound : float
        Public bound R on every row norm of ``X`` (intercept column included).
    clip : float
        Bound tau on the L2 norm of the per-example loss derivative (inf: no clipping).
    fit_intercept : bool
    sample_weight : ndarray of shape (n,) or None
        Example weights in ``[0, max_sample_weight]`` (None: ones, which needs
        ``max_sample_weight >= 1``).
    max_sample_weight : float
        Public bound on the weights actually used; the sensitivities scale with it.
    init : ndarray of shape (p, K) or None
        Starting point of the optimizer, taken as given: the noise and the record cover this
        run only (``warm_start``: the previous release in this parameterisation, whose event
        the estimator composes with this run's). None: zeros.
    typical_row_norm : float or None
        Public typical row norm (intercept column included), at most ``row_norm_bound``: the
        released median of ``data_norm="auto"``. None: the bound itself (a public bound says
        nothing about the typical row). Step sizes only (:attr:`step_smoothness`); never a
        sensitivity.
    """

    X: object
    Y: np.ndarray
    loss: Loss
    lam: float
    row_norm_bound: float
    clip: float
    fit_intercept: bool = True
    sample_weight: np.ndarray = None
    max_sample_weight: float = 1.0
    init: np.ndarray = None
    typical_row_norm: float = None

    def __post_init__(self):
        if self.init is not None:
            init = np.array(self.init, dtype=np.float64)  # a copy: the solvers update it in place
            if init.shape != (self.X.shape[1], self.Y.shape[1]):
                raise ValueError(
                    f"init must have shape {(self.X.shape[1], self.Y.shape[1])}; got {init.shape}"
                )
            if not np.all(np.isfinite(init)):
                raise ValueError("init must be finite")
            object.__setattr__(self, "init", init)
        M = self.max_sample_weight
        if isinstance(M, bool) or not isinstance(M, numbers.Real) or not 0 < M < math.inf:
            raise ValueError(f"max_sample_weight must be a finite real > 0; got {M!r}")
        w = self.sample_weight
        if w is None and M < 1.0:
            # the sensitivities below scale with M, but the kernels give every row weight 1
            raise ValueError(
                f"sample_weight=None means weights of one, above max_sample_weight={M}: the "
                "noise would be calibrated for weights the data does not respect; pass the "
                "weights explicitly (in [0, max_sample_weight]) or use max_sample_weight >= 1"
            )
        if w is not None and getattr(self.X, "is_distributed", False):
            pass  # weights on the workers, clipped to [0, max_sample_weight] where they live
        elif w is not None:
            w = np.asarray(w, dtype=np.float64)
            if w.shape != (self.X.shape[0],):
                raise ValueError(
                    f"sample_weight must have shape ({self.X.shape[0]},); got {w.shape}"
                )
            if not np.all((w >= 0.0) & (w <= self.max_sample_weight)):
                raise ValueError(
                    f"sample_weight must lie in [0, max_sample_weight={self.max_sample_weight}]"
                )

    @cached_property
    def rows(self):
        """The kernel view of ``X`` with the weights (see :mod:`skdp._rows`); a distributed
        design (:mod:`skdp._dask`) is its own view."""
        if getattr(self.X, "is_distributed", False):
            return self.X
        from .._rows import make_rows  # imports numba: on first use, not with skdp

        return make_rows(self.X, self.sample_weight)

    def start(self):
        """A new flat float64 vector of length ``p * K``: ``init`` raveled, or zeros."""
        if self.init is None:
            return np.zeros(self.dim)
        return np.ascontiguousarray(self.init, dtype=np.float64).ravel().copy()

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_params(self):
        return self.X.shape[1]

    @property
    def n_outputs(self):
        return self.Y.shape[1]

    @property
    def dim(self):
        """Number of scalar parameters, ``p * K``."""
        return self.X.shape[1] * self.Y.shape[1]

    @property
    def gradient_bound(self):
        """Public bound G on the L2 norm of a per-example weighted clipped loss gradient:
        tau * R * max_sample_weight."""
        return self.clip * self.row_norm_bound * self.max_sample_weight

    @property
    def smoothness(self):
        """Public smoothness constant L of F (data-free: curvature * R^2 * max_sample_weight +
        lam)."""
        return self.loss.curvature * self.row_norm_bound**2 * self.max_sample_weight + self.lam

    @property
    def step_smoothness(self):
        """The smoothness a step size assumes (public): :attr:`smoothness` with ``R^2`` replaced
        by ``max(typical^2, STEP_SMOOTHNESS_FLOOR R^2)``, ``typical`` the public
        :attr:`typical_row_norm` (equal to :attr:`smoothness` without one).

        The objective's true smoothness is at most ``curvature * lambda_max(X'X / n) + lam``
        with ``lambda_max`` at most the mean squared (clipped) row norm, hence at most ``R^2``:
        ``step_smoothness >= STEP_SMOOTHNESS_FLOOR * smoothness``, so a step
        ``c / step_smoothness`` with ``c <= 1`` is at most ``1.25`` over the true smoothness,
        inside the range where Nesterov's method is stable for any momentum (``< 4/3``),
        whatever the data. (With a bound of 1.5 private medians, at least half the rows have
        at most the median norm, so the mean squared norm is at most about ``0.81 R^2`` with
        an intercept column of the median's size, ``0.72 R^2`` without.) Not a privacy
        quantity: dp_sgld's analysis and every sensitivity use :attr:`smoothness` and R.
        """
        scale = self.step_row_norm
        return self.loss.curvature * scale * scale * self.max_sample_weight + self.lam

    @property
    def step_row_norm(self):
        """The row norm a step size assumes (public): ``sqrt(max(typical^2,
        STEP_SMOOTHNESS_FLOOR R^2))``, ``typical`` the public :attr:`typical_row_norm` (R
        without one). Step sizes only (:attr:`step_smoothness`, dp_scd's natural dual step),
        never a sensitivity."""
        R = self.row_norm_bound
        typical = R if self.typical_row_norm is None else min(float(self.typical_row_norm), R)
        return math.sqrt(max(typical * typical, STEP_SMOOTHNESS_FLOOR * R * R))

    @property
    def strong_convexity(self):
        """Strong-convexity constant mu of F (= lam)."""
        return self.lam


@dataclass(frozen=True)
class Budget:
    """The privacy budget of one fit (epsilon may be ``inf``: no noise)."""

    epsilon: float
    delta: float
    accountant: str = "rdp"

    @property
    def is_private(self):
        return math.isfinite(self.epsilon)


@dataclass
class OptimizeResult:
    """What an optimizer returns: ``coef`` of shape (p, K), iterations, the privacy record.

    ``record`` is the guarantee of everything the result holds. A result with a ``trace``
    (``solve(..., record_trace=True)`` or ``replay``: record/replay tests and audits) holds the
    pre-noise value of every release, which no noise protects: its ``record`` is non-private
    (epsilon = inf, a :class:`~skdp.privacy.NonPrivateEvent`). ``mechanism_record`` is the
    calibration of the noisy releases alone (what the same fit without a trace reports), for
    tests and audits to check; it is ``record`` itself when there is no trace.
    """

    coef: np.ndarray
    n_iter: int
    record: PrivacyRecord
    trace: np.ndarray = None
    extras: dict = field(default_factory=dict)
    mechanism_record: PrivacyRecord = None


#: The optimizers whose steps run on Dask inputs.
DISTRIBUTED_OPTIMIZERS = ("dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree")


def batch_fraction(batch_size, n):
    """Poisson sampling rate q from a public ``batch_size``: None (full batch), an int (expected
    batch size) or a float in (0, 1] (the rate itself)."""
    if batch_size is None:
        return 1.0
    if isinstance(batch_size, (int, np.integer)) and not isinstance(batch_size, bool):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        return min(1.0, batch_size / n)
    if isinstance(batch_size, float) and 0.0 < batch_size <= 1.0:
        return float(batch_size)
    raise ValueError(
        "batch_size must be None (full batch), an int >= 1 (expected batch size) or a float in "
        f"(0, 1] (sampling rate); got {batch_size!r}"
    )


def nonprivate_record(n_steps, sampling="full batch", details=None):
    """The record of a fit that released its result without noise (epsilon = inf)."""
    return PrivacyRecord(
        event=NonPrivateEvent(),
        epsilon=math.inf,
        delta=0.0,
        accountant="none",
        mechanism="none",
        noise_multiplier=0.0,
        sensitivity=math.inf,
        n_steps=int(n_steps),
        sampling=sampling,
        details={} if details is None else dict(details),
    )


def _seal(result, traced):
    """Set ``mechanism_record``; a result holding a trace gets a non-private ``record``."""
    mechanism = result.record
    result.mechanism_record = mechanism
    if traced or result.trace is not None:
        result.record = nonprivate_record(
            mechanism.n_steps, mechanism.sampling,
            details={
                "non_private": "the result holds a trace: the pre-noise value of every release",
                "mechanism_epsilon": mechanism.epsilon,
                "mechanism_delta": mechanism.delta,
            },
        )
    return result


class DPOptimizer(BaseEstimator):
    """Base class of the private optimizers.

    Subclasses set ``name``, declare their parameters in ``_parameter_constraints`` (every one
    of them, including ``max_iter`` and ``tol``, which all optimizers have) and implement
    ``_solve_private``; they list in ``required_problem_constants`` the public constants of
    :class:`Problem` their noise calibration or step sizes use, which :meth:`solve` checks are
    finite and positive. At ``epsilon = inf`` the shared :meth:`_solve_nonprivate` runs.
    """

    name = None
    _parameter_constraints: dict = {}
    required_problem_constants = ("gradient_bound", "smoothness", "strong_convexity")

    supports_replay = False
    #: Whether the privacy event (its kind, number of steps, allocation) may depend on the
    #: problem's constants (row bound, regularisation), not only on n, the budget and the
    #: hyper-parameters. With bounds estimated privately inside the fit, such an event depends
    #: on a released value, and only a zCDP event within the rho left can then be composed
    #: soundly (see :mod:`skdp.linear_model._bounds`).
    event_depends_on_problem = True

    def event_depends_on(self, problem):
        """Whether this fit's privacy event may depend on ``problem``'s constants (see
        :attr:`event_depends_on_problem`); an optimizer whose event reads them only for some
        problems says which."""
        return bool(self.event_depends_on_problem)

    #: Whether ``problem.init`` (a public starting point, the estimators' ``warm_start``) is used.
    supports_warm_start = True
    #: Whether the steps can run on rows that live on Dask workers (:mod:`skdp._dask`).
    supports_distributed = False
    #: Whether a mini-batch ``batch_size`` means Poisson sampling (:func:`batch_fraction`).
    poisson_batches = True

    def check_regularisation(self, lam_n_rows, loss=None):
        """Warn when the problem is too weakly regularised for this optimizer; nothing by
        default. ``lam_n_rows`` is ``lam n`` in units of rows of norm <= 1 (``1 / (C D^2)`` for
        a public row bound D), ``loss`` the problem's :class:`~skdp.losses.Loss` (None: not
        known), called by the estimators on private fits (public values)."""

    def default_squared_clip(self, y_bound):
        """The residual clip of the squared loss this optimizer gets from DPRidge's
        ``derivative_clip="auto"`` (:func:`skdp.optimizers._defaults.squared_loss_clip`)."""
        return squared_loss_clip(self.name, y_bound)

    def default_logistic_clip(self, signal_to_noise, n_classes=2):
        """The derivative clip of the logistic (binary) or multinomial loss this optimizer gets
        from DPLogisticRegression's ``derivative_clip="auto"`` at a public signal-to-noise
        ratio (:func:`skdp.optimizers._defaults.logistic_loss_clip`)."""
        return logistic_loss_clip(self.name, signal_to_noise, n_classes)

    def solve(
        self, problem, budget, rng, record_trace=False, replay=None, callback=None,
        callback_every=1,
    ):
        """Minimise ``problem`` privately within ``budget``.

        Parameters
        ----------
        problem : Problem
        budget : Budget
        rng : numpy.random.Generator
            The only source of randomness (batches and noise).
        record_trace : bool
            If True, the kernel records, at every noisy release, the released quantity before
            and after the noise (``result.trace``, shape (n_steps, 2, size)); for tests and
            audits. The pre-noise values are not private: such a result's ``record`` is
            non-private (epsilon = inf) and ``result.mechanism_record`` holds the calibration
            of the noisy releases (progress callbacks still report the latter).
        replay : ndarray or None
            The ``trace`` of an earlier run (record/replay tests): the kernel computes its own
            noiseless quantity at every release (recorded in ``result.trace[:, 0]``) but then
            releases ``replay[t, 1]`` instead of adding noise, so that a run on a neighbouring
            data set follows exactly the released history of the recorded run. Only for
            optimizers with ``supports_replay = True``. The result is non-private, as with
            ``record_trace``.
        callback : callable or None
            Called as ``callback(progress)`` with a :class:`skdp.FitProgress` every
            ``callback_every`` noisy steps of a private fit and after its last step (public,
            data-independent values only). Never called at ``epsilon = inf``.
        callback_every : int >= 1

        Returns
        -------
        OptimizeResult
        """
        self._check_params()
        progress = ProgressMonitor(callback, callback_every)
        if getattr(problem.X, "is_distributed", False):
            from ._loops import check_distributed

            check_distributed(self, problem.n_samples)
        if problem.init is not None and not self.supports_warm_start:
            raise ValueError(f"{type(self).__name__} cannot start from a given point (init)")
        if not budget.is_private:
            return _seal(self._solve_nonprivate(problem, rng), False)
        for name in self.required_problem_constants:
            value = getattr(problem, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(
                    f"{type(self).__name__} needs a finite positive {name}; got {value}"
                )
        if replay is not None:
            if not self.supports_replay:
                raise NotImplementedError(f"{type(self).__name__} does not support replay")
            return _seal(
                self._solve_private(problem, budget, rng, True, replay=replay, progress=progress),
                True,
            )
        return _seal(
            self._solve_private(problem, budget, rng, record_trace, progress=progress),
            bool(record_trace),
        )

    def _check_params(self):
        """Validate the parameters against ``_parameter_constraints`` (InvalidParameterError).

        Always run, whatever scikit-learn's ``skip_parameter_validation``: an estimator's fit
        skips the validation of nested objects, and an optimizer's parameters decide its noise.
        """
        self._validate_params()

    def _solve_private(
        self, problem, budget, rng, record_trace, replay=None, progress=None
    ):  # pragma: no cover
        raise NotImplementedError

    def _solve_nonprivate(self, problem, rng):
        """``epsilon = inf``: the optimum of the same objective, by the shared L-BFGS solver.

        Runs at most ``max_iter`` iterations (None: :data:`~._nonprivate.DEFAULT_MAX_ITER`) to
        the tolerance ``tol`` (None: :data:`~._nonprivate.DEFAULT_TOL`) and warns
        (``ConvergenceWarning``) when it stops before reaching it.
        """
        from ._nonprivate import minimize_objective  # imports the numba kernels

        w, n_iter = minimize_objective(
            problem, getattr(self, "max_iter", None), getattr(self, "tol", None),
            name=type(self).__name__,
        )
        return OptimizeResult(
            coef=w.reshape(problem.n_params, problem.n_outputs),
            n_iter=int(n_iter),
            record=nonprivate_record(0),
        )


def empty_trace():
    """The placeholder trace passed to kernels when no trace is recorded."""
    return np.zeros((0, 2, 0))


def check_replay(replay, n_rows, size):
    """A float64 copy of a recorded trace to replay, checked to have shape (n_rows, 2, size)."""
    trace = np.array(replay, dtype=np.float64, copy=True)
    if trace.shape != (n_rows, 2, size):
        raise ValueError(f"replay must have shape {(n_rows, 2, size)}; got {trace.shape}")
    return trace


def trace_buffer(n_rows, size, record_trace, replay=None):
    """The trace a kernel writes: the checked replay, a zeroed buffer, or the empty placeholder."""
    if replay is not None:
        return check_replay(replay, n_rows, size)
    return np.zeros((n_rows, 2, size)) if record_trace else empty_trace()
