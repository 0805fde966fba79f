"""dp_gdws: differentially private gradient descent with smoothing (a private heavy ball).

Kuru, Birbil, Gürbüzbalaban, Yıldırım (2022), *Differentially private accelerated optimization
algorithms*, SIAM J. Optim. (DP-SHB); N. Kuru, PhD thesis, Sabancı University (2019), ch. 4
(DP-GDwS, DP-SGDwS). See ``docs/optimizers/dp_gdws.rst`` for the deviations from the papers.
"""

import functools
import math
from numbers import Real

import numpy as np
from numba import njit
from sklearn.utils._param_validation import Interval, StrOptions

from ..privacy import (
    GaussianEvent,
    PoissonGaussianEvent,
    PrivacyRecord,
    SelfComposedEvent,
    calibrate_noise_multiplier,
)
from ..privacy.noise import GAUSSIAN, LAPLACE
from .._validation import AUTO, POSITIVE, POSITIVE_INT, RATE, TOLERANCE
from ..progress import ProgressMonitor, repeated_step_epsilon
from ._allocation import calibrate_laplace
from ._base import DPOptimizer, OptimizeResult, batch_fraction, trace_buffer
from ._defaults import budget_rho, gdws_smoothing, gdws_steps, noisy_gd_step, snr, step_share
from ._glm import block_gradient_sum, gradient_workspace
from ._step_parts import batch_rate, draw_batch, noise_mode, release_step
from ._loops import gdws_full_batch, step_oracle

__all__ = ["DPGDWS"]


@njit(cache=True, nogil=True)
def _dp_gdws_kernel(
    X, Y, w, loss_id, tau, lam, n_steps, q, inv_batch, step, smoothing, mechanism, noise_scale,
    rng, perm, trace, replay, u=None, t0=0, threads=None,
):
    """T steps of g~_t = (1-b) g~_{t-1} + b (noisy mean gradient), w -= step * g~_t.

    The released quantity of step t is the noisy *sum* of clipped per-example gradients over the
    Poisson batch; it is divided by the public expected batch size ``1 / inv_batch``.
    With ``replay``, ``trace[:, 1]`` holds a recorded run's releases and is released instead.
    ``u`` (the running average g~) and ``t0`` (the steps already done) resume a fit in chunks.
    ``threads``: the gradient sums may use several cores (same result, see ``_glm``).
    ``mechanism``: GAUSSIAN or LAPLACE, or None for Gaussian noise with no Laplace sampler
    compiled (see ``_step_parts.noise_mode``). ``Y`` may be 1-D (see ``_glm.scalar_targets``).
    """
    n = X.shape[0]
    D = w.shape[0]
    g = np.zeros(D)
    avg = np.zeros(D) if u is None else u
    partial = gradient_workspace(n, D)
    for t in range(n_steps):
        m = draw_batch(rng, n, q, perm)
        block_gradient_sum(X, Y, w, perm, m, loss_id, tau, g, partial, threads)
        release_step(rng, g, mechanism, noise_scale, trace, t, replay)
        for j in range(D):
            gj = g[j] * inv_batch + lam * w[j]
            if t0 + t == 0:
                avg[j] = smoothing * gj
            else:
                avg[j] = (1.0 - smoothing) * avg[j] + smoothing * gj
            w[j] -= step * avg[j]
    return n_steps


def _gaussian_steps(q, z, n_steps):
    """The event of ``n_steps`` Gaussian releases of multiplier z, Poisson-subsampled at rate
    q (q >= 1: full batch)."""
    if q >= 1.0:
        return SelfComposedEvent(GaussianEvent(z), n_steps)
    return SelfComposedEvent(PoissonGaussianEvent(q, z), n_steps)


@functools.lru_cache(maxsize=512)
def gaussian_multiplier(q, n_steps, epsilon, delta, accountant):
    """The smallest noise multiplier of :func:`_gaussian_steps` within (epsilon, delta).

    A pure function of public quantities, so it is cached: the folds and candidates of a search
    that share a budget and a step count (a full-batch event does not depend on n) calibrate
    once. Calibration is a bisection over the accountant (about 20 ms on a fit of 100 steps).
    """
    return calibrate_noise_multiplier(lambda z: _gaussian_steps(q, z, n_steps), epsilon, delta,
                                      accountant)[0]


class DPGDWS(DPOptimizer):
    """Differentially private gradient descent with smoothing (private heavy ball).

    Each step releases the sum of per-example gradients, each clipped to the public bound
    ``G = clip * R`` (rows clipped to R, loss derivative to ``clip``), plus noise; the model
    moves along an exponential average of the noisy mean gradients (the thesis's DP-GDwS, which
    is Polyak's heavy ball with step ``step * smoothing`` and momentum ``1 - smoothing``).

    **Neighbouring relation and sensitivity.** Zero-out (add/remove one record, n public): one
    record changes the released gradient sum by at most ``G`` in L2 norm, and by at most
    ``sqrt(p K) G`` in L1 norm (Laplace mechanism).

    **Accounting.** ``mechanism="gaussian"``: full batch, T Gaussian mechanisms with noise
    multiplier z (RDP ``T alpha / (2 z^2)``, i.e. ``T / (2 z^2)``-zCDP); mini-batch, T
    Poisson-subsampled Gaussian mechanisms with rate q (Mironov et al. 2019). z is the smallest
    value whose epsilon at delta is within the target. ``mechanism="laplace"``: pure epsilon-DP
    as in the papers, epsilon / T per step by basic composition, amplified by Poisson sampling
    with ``eps' = log(1 + q (e^eps0 - 1))``.

    Parameters
    ----------
    max_iter : int >= 1 or None, default=None
        Number of noisy steps T of a private fit. None: a public rule of n, d, the budget and
        the loss (:func:`skdp.optimizers._defaults.gdws_steps`): with
        ``s = n sqrt(2 rho) / sqrt(d)`` (rho the zCDP budget), 100 for the classification
        losses (``4 s`` within [100, 100]: accuracy was flat beyond 100 steps in every
        measured cell); for the squared loss, the steps of ``1 / (2 beta)`` that cover
        dp_sgld's Langevin time ``0.01 s^2 / G^2`` (5 to 1000; the two fits then coincide,
        see :mod:`skdp.optimizers._defaults`, ``NOISY_GD_STEP``); the resolved
        count is ``n_iter_`` and ``hyperparameters["max_iter"]`` of the fit's result. At
        ``epsilon=inf`` the cap on the iterations of the non-private solver (None: 1000).
    batch_size : None, int or float, default=None
        None: full batch. An int: the expected Poisson batch size. A float in (0, 1]: the
        Poisson sampling rate.
    smoothing : float in (0, 1] or "auto", default="auto"
        Weight of the new gradient in the running average (the thesis's beta; 1 is plain DP-GD).
        "auto": 0.1 (the thesis's best value) for the classification losses, 1 (plain noisy
        GD) for the squared loss (:func:`skdp.optimizers._defaults.gdws_smoothing`). Unused at
        ``epsilon=inf``.
    step : "auto", "noise_adaptive", "c_over_L" or float, default="auto"
        "noise_adaptive": the thesis's rule (Th-4.21) in mean form, capped so that
        ``step * smoothing <= 1/L``; "c_over_L": ``c / (L * smoothing)`` (the paper's heavy-ball
        step c/L); a float: the step itself; "auto": "noise_adaptive" for the classification
        losses (for the squared hinge times :func:`skdp.optimizers._defaults.step_share`:
        half of it where the budget is small for the data, s <= 25, the whole from s = 200),
        ``1 / (2 L)`` for the squared loss (plain noisy GD under the time rule of
        ``max_iter``). Unused at ``epsilon=inf``.
    c : float, default=1.0
        Step multiplier of "c_over_L".
    mechanism : {"gaussian", "laplace"}, default="gaussian"
    average : float in [0, 1], default=0.0
        The model released is the mean of the last ``round(average * T)`` iterates (0: the
        last iterate). Averaging is post-processing of the released gradients: the fit's
        releases and its privacy record do not depend on it. Not a default: the mean of the
        last half gained a few tenths of a point where the last iterate is noise-bound
        (``make_classification``-like data, large s) and lost as much where the iterates are
        still travelling at step T (Adult's one-hot designs: -0.2 to -0.35 points on full
        Adult at every epsilon); see ``docs/optimizers/dp_gdws.rst``. Unused at ``epsilon=inf``.
    tol : float > 0 or None, default=None
        Tolerance of the non-private fit (``epsilon=inf`` only): the largest absolute gradient
        component at the solution (None: 1e-8).

    Notes
    -----
    At ``epsilon=inf`` there is nothing to protect: the fit runs the shared non-private solver
    (L-BFGS on the same objective, :mod:`skdp.optimizers._nonprivate`) to ``tol``, and warns
    (``ConvergenceWarning``) when ``max_iter`` iterations do not get there.

    Deviations from the papers, and why: Gaussian noise with RDP/zCDP accounting by default
    (the papers are pure epsilon-DP only); the smoothness constant L is data-free
    (``curvature * R^2 + lam``), never computed from the data as the paper's code does (that
    leaks); Laplace noise is drawn with scale b (the paper's code used b as a standard
    deviation, i.e. sqrt(2) too little noise); Poisson sampling instead of sampling without
    replacement, for the add/remove accountant.
    """

    name = "dp_gdws"
    # its event is a function of n, the budget and the hyper-parameters, and for the squared
    # loss at max_iter=None of the problem's constants too (see event_depends_on)
    event_depends_on_problem = False
    supports_replay = True
    supports_distributed = True  # full batch: the step is a sum over rows

    _parameter_constraints: dict = {
        "max_iter": [POSITIVE_INT, None],
        "batch_size": [None, POSITIVE_INT, RATE],
        "smoothing": [Interval(Real, 0, 1, closed="right"), AUTO],
        "step": [StrOptions({"auto", "noise_adaptive", "c_over_L"}), POSITIVE],
        "c": [POSITIVE],
        "mechanism": [StrOptions({"gaussian", "laplace"})],
        "average": [Interval(Real, 0, 1, closed="both")],
        "tol": TOLERANCE,
    }

    def __init__(
        self, max_iter=None, batch_size=None, smoothing="auto", step="auto", c=1.0,
        mechanism="gaussian", average=0.0, tol=None,
    ):
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.smoothing = smoothing
        self.step = step
        self.c = c
        self.mechanism = mechanism
        self.average = average
        self.tol = tol

    # -- parameters ---------------------------------------------------------------------------
    def event_depends_on(self, problem):
        """The squared loss's default step count (``max_iter=None``, :func:`~._defaults.
        gdws_steps`) reads the problem's G, R and beta, which come from the bounds released
        inside a fit with automatic bounds: the number of steps, hence the event, then depends
        on a release (the classification rule reads n, d and the budget only)."""
        return self.max_iter is None and problem.loss.name == "squared"

    def _n_steps(self, private, problem=None, budget=None):
        """Noisy steps of a private fit: ``max_iter``, or (None) the public rule
        :func:`~._defaults.gdws_steps` of n, d, the budget, the loss and the problem's public
        constants."""
        if self.max_iter is not None:
            return int(self.max_iter)
        rho = budget_rho(budget.epsilon, budget.delta)
        return gdws_steps(problem.loss.name, problem.n_samples, problem.dim, rho,
                          problem.gradient_bound, problem.row_norm_bound, problem.smoothness)

    # -- private fit --------------------------------------------------------------------------
    def _calibrate(self, problem, budget, n_steps, q):
        """Noise scale on the released gradient sum, and the privacy record. Public inputs only."""
        G = problem.gradient_bound
        sampling = "full batch" if q >= 1.0 else f"poisson(q={q:.6g})"
        if self.mechanism == "gaussian":
            z = gaussian_multiplier(float(q), int(n_steps), float(budget.epsilon),
                                    float(budget.delta), budget.accountant)
            record = PrivacyRecord.from_event(
                _gaussian_steps(q, z, n_steps), budget.delta, budget.accountant,
                mechanism="gaussian",
                noise_multiplier=z, sensitivity=G, n_steps=n_steps, sampling=sampling,
            )
            return z * G, record
        # Laplace: pure epsilon, basic composition, epsilon / T per step (the uniform case of the
        # accelerated optimizers' allocation, which also guards the rounding of the total).
        S1 = math.sqrt(problem.dim) * G
        scales, event, _ = calibrate_laplace(np.full(n_steps, 1.0 / n_steps), budget.epsilon, q, S1)
        nm = float(scales[0]) / S1
        record = PrivacyRecord.from_event(
            event, 0.0, budget.accountant, mechanism="laplace",
            noise_multiplier=nm, sensitivity=S1, n_steps=n_steps, sampling=sampling,
        )
        return float(scales[0]), record

    def _step_size(self, problem, n_steps, q, noise_scale, smoothing, budget):
        L = problem.smoothness
        if not isinstance(self.step, str):
            return float(self.step)
        if self.step == "auto" and problem.loss.name == "squared":
            return noisy_gd_step(L)  # plain noisy GD under the time rule (see max_iter)
        if self.step == "c_over_L":
            return self.c / (L * smoothing)
        n, D, G = problem.n_samples, problem.dim, problem.gradient_bound
        batch = q * n
        per_coord = noise_scale / batch
        v_noise = 2.0 * per_coord**2 if self.mechanism == "laplace" else per_coord**2
        v_samp = 0.0 if q >= 1.0 else G * G * (1.0 - q) / batch
        denom = math.sqrt((v_samp / D + v_noise) * smoothing / (2.0 - smoothing))
        step = 0.25 / math.sqrt(n_steps + 1) / denom if denom > 0 else math.inf
        step = min(step, 1.0 / (smoothing * L))
        if self.step == "auto":  # shorter steps while the noise dominates (squared hinge)
            s = snr(n, D, budget_rho(budget.epsilon, budget.delta))
            step *= step_share(problem.loss.name, s)
        return step

    def _solve_private(self, problem, budget, rng, record_trace, replay=None, progress=None):
        self._check_params()
        n_steps = self._n_steps(private=True, problem=problem, budget=budget)
        q = batch_fraction(self.batch_size, problem.n_samples)
        smoothing = (gdws_smoothing(problem.loss.name) if self.smoothing == "auto"
                     else float(self.smoothing))
        noise_scale, record = self._calibrate(problem, budget, n_steps, q)
        step = self._step_size(problem, n_steps, q, noise_scale, smoothing, budget)
        w = problem.start()
        u = np.zeros(problem.dim)
        perm = np.arange(problem.n_samples, dtype=np.int64)
        trace = trace_buffer(n_steps, problem.dim, record_trace, replay)
        mech = LAPLACE if self.mechanism == "laplace" else GAUSSIAN
        oracle, threads, Y = step_oracle(problem, q, rng, perm, full_batch=q >= 1.0)

        def run_steps(start, stop):
            if oracle is not None:  # steps in Python: full batch in memory, any batch on Dask
                gdws_full_batch(
                    oracle, w, problem.lam, stop - start, 1.0 / (q * problem.n_samples), step,
                    smoothing, mech, noise_scale, rng, trace[start:stop], replay is not None, u,
                    start,
                )
                return
            _dp_gdws_kernel(
                problem.rows, Y, w, problem.loss.loss_id, problem.clip, problem.lam,
                stop - start, batch_rate(q), 1.0 / (q * problem.n_samples), step, smoothing,
                noise_mode(mech),
                noise_scale, rng, perm, trace[start:stop], replay is not None, u, start, threads,
            )

        # the model released is the mean of the last ``tail`` iterates (post-processing)
        tail = int(round(float(self.average) * n_steps))
        tail_start = n_steps - tail
        w_sum = np.zeros_like(w)

        def run_chunk(start, stop):
            split = max(start, min(stop, tail_start))
            if split > start:
                run_steps(start, split)
            for t in range(split, stop):  # one step at a time: each iterate enters the average
                run_steps(t, t + 1)
                np.add(w_sum, w, out=w_sum)

        progress = progress or ProgressMonitor()
        progress.run(
            n_steps, run_chunk, lambda stops: repeated_step_epsilon(record, stops),
            record.delta, q,
        )
        if tail > 0:
            w[:] = w_sum / tail
        return OptimizeResult(
            coef=w.reshape(problem.n_params, problem.n_outputs),
            n_iter=n_steps,
            record=record,
            trace=trace if record_trace else None,
            extras={"step": step, "smoothing": smoothing, "noise_scale": noise_scale,
                    "hyperparameters": {"max_iter": n_steps, "step": step,
                                        "smoothing": smoothing, "average": tail / n_steps}},
        )
