"""dp_nag_opt: Nesterov's accelerated gradient with an optimised division of the privacy budget.

Kuru, Birbil, Gürbüzbalaban, Yıldırım (2022), *Differentially private accelerated optimization
algorithms*, SIAM J. Optim., §4.1 (DP-NAG-opt). See ``docs/optimizers/dp_nag_opt.rst`` for the
derivation of the Gaussian allocation and the deviations from the paper.
"""

import math
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..privacy import (
    GaussianEvent,
    LaplaceEvent,
    PoissonGaussianEvent,
    PoissonLaplaceEvent,
    calibrate_noise_multiplier,
)
from ..losses import SQUARED
from ..privacy.noise import GAUSSIAN, LAPLACE
from ..progress import ProgressMonitor, prefix_epsilon, stepwise_curves
from ._allocation import (
    bound_curve,
    budget_shares,
    calibrate_gaussian,
    calibrate_laplace,
    default_initial_gap,
    log_weights,
    make_record,
    nag_schedule,
    select_n_steps,
)
from .._validation import AUTO, POSITIVE, POSITIVE_INT, RATE, TOLERANCE
from ._base import DPOptimizer, OptimizeResult, batch_fraction, trace_buffer
from ._loops import nesterov_full_batch, step_oracle
from ._nesterov import nesterov_kernel
from ._step_parts import batch_rate, noise_mode
from .._warnings import warn

__all__ = ["DPNAGOpt"]

#: The parameters dp_nag_opt and dp_masg share.
_COMMON_CONSTRAINTS = {
    "max_iter": [POSITIVE_INT, None],
    "batch_size": [None, POSITIVE_INT, RATE],
    "c": [AUTO, POSITIVE],
    "allocation": [StrOptions({"optimal", "uniform"})],
    "reselect_T": [AUTO, "boolean"],
    "kappa": [AUTO, Interval(Real, 1, None, closed="left"), None],
    "E0": [AUTO, POSITIVE],
    "mechanism": [StrOptions({"gaussian", "laplace"})],
    "tol": TOLERANCE,
}

_PRIVATE_MAX_ITER = 1000

#: The horizon rule of ``reselect_T="auto"``: ``T = HORIZON_C * sqrt(n sqrt(2 rho))`` steps,
#: at least ``HORIZON_MIN``. Fitted on public development data (docs/optimizers/dp_nag_opt.rst).
#: The squared loss's factor was 1 from round h17 to session 12; session 13
#: (``benchmarks/dev_rules_nag_horizon.py``: factors 1 to 4 on every development regression
#: cell, wine, diabetes and make_regression, n 331 to 10000, epsilon 0.1 to 3, 3 seeds) moved it
#: to 1.5, the factor with the best mean R^2 for both optimizers among those that lose at most
#: 0.05 in any cell against 1: dp_nag_opt 0.365 -> 0.406 (worst cell -0.041), dp_masg 0.379 ->
#: 0.410 (-0.038); dp_nag_opt gained up to 0.24 on make_regression. Factor 2 had the
#: better dp_nag_opt mean (0.417) but lost 0.065 and 0.117 in single cells of wine and diabetes,
#: whose weak signal wants fewer steps.
HORIZON_C = {"classification": 1.5, "squared": 1.5}
#: The floor was 8 until session 13 (``benchmarks/dev_rules_nag_min_steps.py``: floors 3 to 12
#: on the small-budget development cells, n 331..2000, epsilon 0.1 and 0.3, 5 seeds, all three
#: estimators). The floor binds only where ``1.5 sqrt(n sqrt(2 rho)) < 8`` (n < ~950 at
#: epsilon 0.1); there the rule's own 5 or 6 steps beat 8: +1.4 to +5.7 points on Adult n 500
#: and breast cancer at epsilon 0.1, -0.4 to -1.8 on digits n 500 (noise), ridge R^2 +0.5 on
#: wine n 500 (-0.82 -> -0.32 for dp_nag_opt); means over the cells +0.25 to +0.5 points and
#: +0.04 of R^2, no cell worse by more than 1.8 points. 4 keeps the schedule's momentum
#: (``kappa >= 4``) meaningful.
HORIZON_MIN = 4
#: ``c="auto"``: the step multiplier, per loss family. The squared loss's was 0.25 from round h17
#: (fitted with the residual clip of twice the targets' half-range) to session 10, when it was
#: refitted with the clip (``SQUARED_CLIP_FACTOR``) and the horizon factor
#: (``benchmarks/dev_rules_nag_squared.py``, candidate A: clip a quarter of the half-range,
#: c = 1, horizon factor 1): on the development part (wine, diabetes, make_regression, 44
#: cells, 3 seeds) better than the old rule in 44 of 44 cells for dp_nag_opt and 43 of 44 for
#: dp_masg, by +0.13 of R^2 on average (worst -0.002), and no cell more than 0.02 below the
#: Opacus anchor (3 before). A horizon factor 2 was ahead on make_regression but behind on
#: wine and diabetes (worst -0.06): not taken.
STEP_C = {"classification": 1.0, "squared": 1.0}
#: The budget share below which (relative to the largest) a step is starved: a warning, since
#: its noise multiplier is then more than 100 times the last step's (``kappa="auto"`` keeps the
#: ratio above ``exp(-KAPPA_C / 2)``-ish; ``kappa=4`` explicit over 80 steps gave 1e-12 and R^2
#: -5e5 on ``make_regression``).
STARVED_SHARE = 1e-4
#: ``kappa="auto"``: the schedule assumes the condition number ``min(L / mu, (T / KAPPA_C)^2)``,
#: so the momentum damps within the T steps run (see :func:`horizon_kappa`), per loss family.
#: 3 for every loss from the first dev grid (2 seeds) to session 49; session 49
#: (``benchmarks/dev_rules_nag_momentum.py``: KAPPA_C 1.5 and 1 against 3 on every looked-at
#: classification set, 38 sets, every grid cell, both classifiers, 3 seeds, decision rule written
#: before the run) moved the classification losses to 1.5: mean gain +0.17 / +0.14 points
#: (logistic dp_nag_opt / dp_masg), +0.06 / +0.04 (linear SVC), cells more than a point below
#: the Opacus anchor 45 -> 21 of 760 per pair; judged on the fourteenth held-out part's
#: classification sets, +0.04 mean, 4 -> 4 cells below. Session 52
#: (``benchmarks/dev_rules_ridge_momentum.py``: 2, 1.5, 1 against 3 on every looked-at
#: regression set, 21 sets, 5 seeds) moved the squared loss to 2: +0.0086 / +0.0073 of R^2
#: (dp_nag_opt / dp_masg), cells more than 0.02 below the anchor 3 -> 0 of 936, the ridge
#: default (dp_masg from s = 300) -0.0004, so the sweep's own rule (the default must not lose)
#: said no change; a second step written before the judge ran (the default may lose 0.002)
#: sent 2 to the sixteenth held-out part's regression set: +0.0121, 0 -> 0 cells below, the
#: default -0.0007, adopted (docs: defaults log, session 52).
KAPPA_C = {"classification": 1.5, "squared": 2.0}


def loss_family(loss_id):
    """The key of the per-family constants (:data:`HORIZON_C`, :data:`STEP_C`,
    :data:`KAPPA_C`): ``"squared"`` for the squared loss, ``"classification"`` for the others
    (logistic, multinomial, squared hinge)."""
    return "squared" if loss_id == SQUARED else "classification"


def horizon_steps(n, rho, cap, loss_id=None):
    """The number of noisy steps of ``reselect_T="auto"``: a function of n and rho only.

    Nesterov's method covers a gradient-flow time ``~ alpha T^2`` in T steps, and the time worth
    covering before the accumulated noise costs more than it gains grows like ``n sqrt(rho)``
    (the noise floor of full-batch Gaussian noise over a time t is ``~ d G^2 t / (rho n^2)``,
    against an optimisation error falling like ``1 / t``); hence ``T ~ sqrt(n sqrt(rho))``, with
    the constant fitted on public data per loss family (:data:`HORIZON_C`; the two
    families' fits agree, 1.5), at least :data:`HORIZON_MIN`.
    """
    c = HORIZON_C[loss_family(loss_id)]
    T = int(round(c * math.sqrt(n * math.sqrt(2.0 * rho))))
    return int(min(cap, max(HORIZON_MIN, T)))


def step_multiplier(c, loss_id):
    """The step multiplier ``c`` of ``alpha = c / L``: the parameter, or ("auto")
    :data:`STEP_C` of the loss family (public)."""
    if isinstance(c, str):
        return STEP_C[loss_family(loss_id)]
    return float(c)


def horizon_kappa(L, mu, T, loss_id=None):
    """The condition number the ``kappa="auto"`` schedule assumes:
    ``min(L / mu, max(4, (T / KAPPA_C)^2))``, ``KAPPA_C`` that of the loss family
    (:data:`KAPPA_C`: 1.5 for the classification losses, 2 for the squared loss).

    With a weak regularisation ``L / mu`` is huge and the momentum
    ``(sqrt(kappa) - 1) / (sqrt(kappa) + 1)`` is so close to 1 that the iterates still oscillate
    after T steps (the last iterate then depends on where in the oscillation T falls). The
    directions of curvature below ``L (KAPPA_C / T)^2`` cannot be fitted in T steps anyway;
    treating them as such makes the momentum damp within the horizon.
    """
    # at least 4 (momentum >= 0 and a contraction 1 - sqrt(alpha mu') >= 1/2 for c <= 1) for the
    # shortest runs, never above the problem's own L / mu
    kappa_c = KAPPA_C[loss_family(loss_id)]
    return min(L / mu, max(4.0, (T / kappa_c) ** 2))


class _AcceleratedDPOptimizer(DPOptimizer):
    """What dp_nag_opt and dp_masg share: calibration, allocation, T*, the kernel call.

    Subclasses implement ``_schedule(L, mu, T)`` (a :class:`~._allocation.Schedule`) and
    declare their parameters (at least those in :data:`_COMMON_CONSTRAINTS`).
    """

    # -- parameters ---------------------------------------------------------------------------
    def _n_steps(self, private):
        """The largest number of noisy steps of a private fit (``max_iter``, default 1000)."""
        if self.max_iter is not None:
            return int(self.max_iter)
        return _PRIVATE_MAX_ITER

    def _schedule(self, L, mu, T, horizon=None, c=1.0):  # pragma: no cover - interface
        """The schedule of T steps; ``horizon`` is the rule's T_1 under ``reselect_T="auto"``,
        ``c`` the resolved step multiplier."""
        raise NotImplementedError

    def _total_steps(self, horizon):
        """Steps run under ``reselect_T="auto"`` for the rule's horizon T_1."""
        return horizon

    # -- private fit --------------------------------------------------------------------------
    def _plan(self, problem, budget, q):
        """Everything decided before the data is touched: T*, the schedule, the noise.

        Only public quantities enter: n, p, K, L, mu, G (hence the bounds and the clip), the
        budget and the hyper-parameters.
        """
        n, D = problem.n_samples, problem.dim
        # the smoothness the step c / L and the schedule assume (the typical row's where it is
        # public, within a floor that keeps the step stable for any data); G for the noise
        L, mu, G = problem.step_smoothness, problem.strong_convexity, problem.gradient_bound
        T_max = self._n_steps(private=True)
        # total zCDP rho a full-batch Gaussian schedule may spend: rho = 1 / (2 z^2) for the
        # single Gaussian z that meets (epsilon, delta) with the tight RDP conversion
        z, _ = calibrate_noise_multiplier(GaussianEvent, budget.epsilon, budget.delta, "rdp")
        rho = 1.0 / (2.0 * z * z)
        reselect = self.reselect_T if isinstance(self.reselect_T, str) else bool(self.reselect_T)
        horizon = None
        if reselect == "auto":
            horizon = horizon_steps(n, rho, T_max, problem.loss.loss_id)
            T_max = min(T_max, self._total_steps(horizon))
        if self.kappa is None or (isinstance(self.kappa, str) and reselect is True):
            kappa = L / mu  # the paper's schedule (also "auto" when T* comes from the bound)
        elif isinstance(self.kappa, str):
            kappa = horizon_kappa(
                L, mu, T_max if horizon is None else horizon, problem.loss.loss_id
            )
        else:
            kappa = min(float(self.kappa), L / mu)
        mu = L / kappa  # the schedule's (and the bound's) strong convexity
        c = step_multiplier(self.c, problem.loss.loss_id)
        if c >= kappa:
            # the contraction 1 - sqrt(mu alpha) of the schedule and its allocation weights need
            # mu alpha = c / kappa < 1 (at c / kappa = 1 the weights are log(0))
            raise ValueError(
                f"{self.name}: the step multiplier c={c:g} must be smaller than the condition "
                f"number the schedule assumes, kappa={kappa:g} (min of the kappa parameter and "
                f"the problem's L / mu = {L / problem.strong_convexity:.6g}); use a smaller c, "
                "a larger kappa, or a weaker regularisation."
            )
        full = self._schedule(L, mu, T_max, horizon, c)
        E0 = (
            default_initial_gap(problem.loss, problem.n_outputs, problem.clip)
            if isinstance(self.E0, str) else float(self.E0)
        )
        if self.mechanism == "laplace":
            power = 1.0 / 3.0
            S1 = math.sqrt(D) * G  # L1 sensitivity of the released sum (zero-out)
            noise_coef = D * (S1 / (n * budget.epsilon)) ** 2
        else:
            power = 0.5
            noise_coef = D * (G / n) ** 2 / (4.0 * rho)
        curve_args = (L, mu, E0, noise_coef, self.mechanism, self.allocation)
        if reselect is True:
            T, bound = select_n_steps(full, *curve_args)
        else:
            T, bound = T_max, float(bound_curve(full, *curve_args)[-1])
        schedule = full.truncate(T)
        log_a, _ = log_weights(schedule, T, L, mu)
        shares = budget_shares(log_a, power, self.allocation)
        if shares.min() < STARVED_SHARE * shares.max():
            # public: the schedule's shares; an overstated strong convexity (a small explicit
            # kappa) leaves the first steps almost no budget, and their noise is never damped
            warn(
                f"{self.name}: the allocation gives the first steps {shares.min() / shares.max():.1e} "
                f"of the last step's budget share (kappa={kappa:g} assumed over {T} steps), so "
                "their noise is far larger and the schedule's contraction will not remove it "
                "unless the problem really is that well conditioned; the model may be far from "
                "the optimum. Leave kappa='auto' or use allocation='uniform'.",
                UserWarning,
            )
        details = {
            "allocation": self.allocation,
            "reselect_T": reselect,
            "max_iter": T_max,
            "kappa": kappa,
            "smoothness": L,
            "bound": bound,
            "E0": E0,
            "c": c,
        }
        if self.mechanism == "laplace":
            scales, event, eps_t = calibrate_laplace(shares, budget.epsilon, q, S1)
            multipliers = scales / S1
            spent, accountant = event.pure_epsilon(), budget.accountant
            details["per_step_epsilon"] = eps_t
            sensitivity = S1
        else:
            scales, event, spent, accountant, multipliers = calibrate_gaussian(
                shares, q, G, budget
            )
            if q >= 1.0:
                details["per_step_rho"] = 1.0 / (2.0 * multipliers**2)
            sensitivity = G
        details["per_step_noise_multiplier"] = multipliers
        details["stage_lengths"] = np.bincount(schedule.stage)[1:]
        record = make_record(
            event, spent, accountant, budget.delta, self.mechanism, multipliers, sensitivity, q,
            details,
        )
        if record.epsilon > budget.epsilon:  # pragma: no cover - guarded in _allocation
            raise RuntimeError("calibration overshot the target epsilon")
        return schedule, scales, record

    supports_replay = True
    supports_distributed = True  # full batch: the step is a sum over rows

    def _solve_private(self, problem, budget, rng, record_trace, replay=None, progress=None):
        return self._fit_private(
            problem, budget, rng, record_trace, replay=replay, progress=progress
        )

    @staticmethod
    def _prefix_epsilon(record, q, stops):
        """Epsilon of the first ``stops`` steps, from the per-step noise multipliers in order."""
        multipliers = record.details["per_step_noise_multiplier"]
        if record.mechanism == "laplace":
            make = LaplaceEvent if q >= 1.0 else (lambda nm: PoissonLaplaceEvent(q, nm))
        else:
            make = GaussianEvent if q >= 1.0 else (lambda z: PoissonGaussianEvent(q, z))
        rdp_at, pure_at = stepwise_curves(make, multipliers)
        return prefix_epsilon(stops, record.delta, record.epsilon, rdp_at, pure_at)

    def _fit_private(
        self, problem, budget, rng, record_trace=False, w0=None, replay=None, progress=None
    ):
        """The private fit from ``w0`` (a public starting point; default ``problem.init``, else
        0); ``replay`` (a recorded ``trace``, tests only) is released instead of the noisy sums."""
        self._check_params()
        q = batch_fraction(self.batch_size, problem.n_samples)
        schedule, scales, record = self._plan(problem, budget, q)
        T = len(schedule)
        w = problem.start() if w0 is None else np.array(w0, dtype=np.float64).ravel()
        w_prev = w.copy()
        perm = np.arange(problem.n_samples, dtype=np.int64)
        trace = trace_buffer(T, problem.dim, record_trace, replay)
        record_trace = record_trace or replay is not None
        mech = LAPLACE if self.mechanism == "laplace" else GAUSSIAN
        scales = np.ascontiguousarray(scales, dtype=np.float64)
        oracle, threads, Y = step_oracle(problem, q, rng, perm, full_batch=q >= 1.0)

        def run_chunk(start, stop):
            if oracle is not None:  # steps in Python: full batch in memory, any batch on Dask
                nesterov_full_batch(
                    oracle, w, problem.lam, 1.0 / (q * problem.n_samples),
                    schedule.alpha[start:stop],
                    schedule.beta[start:stop], schedule.restart[start:stop], mech,
                    scales[start:stop], rng, trace[start:stop], replay is not None, w_prev,
                )
                return
            nesterov_kernel(
                problem.rows, Y, w, problem.loss.loss_id, problem.clip, problem.lam,
                batch_rate(q), 1.0 / (q * problem.n_samples), schedule.alpha[start:stop],
                schedule.beta[start:stop], schedule.restart[start:stop], noise_mode(mech),
                scales[start:stop], rng, perm, trace[start:stop], replay is not None, w_prev,
                threads,
            )

        progress = progress or ProgressMonitor()
        progress.run(
            T, run_chunk, lambda stops: self._prefix_epsilon(record, q, stops), record.delta, q
        )
        return OptimizeResult(
            coef=w.reshape(problem.n_params, problem.n_outputs),
            n_iter=T,
            record=record,
            trace=trace if record_trace else None,
            extras={
                "schedule": schedule, "noise_scale": scales, "bound": record.details["bound"],
                # the "auto" defaults as the public rules resolved them (issue 15)
                "hyperparameters": {
                    "max_iter": T, "kappa": record.details["kappa"],
                    "smoothness": record.details["smoothness"],
                    "stage_lengths": [int(k) for k in record.details["stage_lengths"]],
                },
            },
        )


class DPNAGOpt(_AcceleratedDPOptimizer):
    """Differentially private Nesterov accelerated gradient with optimised noise allocation.

    Runs ``T*`` steps of Nesterov's method on the regularised objective,
    ``y_t = (1 + beta) x_t - beta x_{t-1}``, ``x_{t+1} = y_t - alpha (g~_t / (q n) + lam y_t)``,
    where ``g~_t`` is the sum of per-example gradients at ``y_t`` over a Poisson batch, each
    clipped to ``G = clip * R``, plus noise. ``alpha = c / L`` and
    ``beta = (1 - sqrt(alpha mu)) / (1 + sqrt(alpha mu))`` with ``L = curvature R^2 + lam`` and
    ``mu = lam`` (public, never estimated from the data); with a released typical row norm
    (``data_norm="auto"``), ``R^2`` in L becomes ``max(typical^2, 0.8 R^2)``
    (``Problem.step_smoothness``: a step still stable for any data, while G keeps R). The
    privacy budget is divided among the steps to minimise the paper's bound
    ``E F(x_T) - F* <= a_{T,0} E0 + sum_t a_{T,t} E||noise_t||^2 / 2``, with
    ``a_{T,t} = (1 - sqrt(mu alpha))^(T-t) alpha (1 + alpha L)``: later steps, whose noise is not
    damped by further contraction, get more budget.

    **Neighbouring relation and sensitivity.** Zero-out (add/remove one record, n public): one
    record changes each released gradient sum by at most ``G`` in L2 norm (Gaussian) and
    ``sqrt(p K) G`` in L1 norm (Laplace). The paper states replace-one with twice these (its
    ``S1 = 2 sup ||u||_1``); a replace-one analysis translated to zero-out halves the sensitivity.

    **Accounting.** ``mechanism="gaussian"`` (default). Full batch: step t is
    ``rho_t``-zCDP with ``rho_t = rho a_t^(1/2) / sum_j a_j^(1/2)`` (the Lagrange optimum of the
    bound for Gaussian noise); per-step Gaussian events with multipliers
    ``z_t = z / sqrt(share_t)`` compose exactly to one Gaussian with multiplier z, calibrated to
    (epsilon, delta) on the accountant (tight RDP conversion, not Bun-Steinke's). Poisson
    mini-batch: Poisson-subsampled Gaussian steps with multipliers of the same shape
    (``z_t ~ a_t^(-1/4)``, rounded to a grid of ratio sqrt(2), at most 2^6 apart) and a common
    scale found by bisection on the RDP accountant. ``mechanism="laplace"``: pure epsilon-DP,
    ``eps_t = epsilon a_t^(1/3) / sum_j a_j^(1/3)`` ([P] eq. 31), summing to epsilon exactly
    (never above it); on a Poisson batch the sum gets ``eps0_t = log(1 + (e^eps_t - 1) / q)``
    (Balle et al. 2018, the paper's eq. 12-13), i.e. Laplace scale ``b_t = sqrt(p K) G / eps0_t``.
    ``allocation="uniform"`` spends the same total in equal shares (plain DP-NAG).

    **Number of steps and momentum (defaults).** ``reselect_T="auto"`` runs
    ``T = clip(round(c_T sqrt(n sqrt(2 rho))), 4, max_iter)`` steps (:func:`horizon_steps`;
    ``rho`` the zCDP of the Gaussian meeting (epsilon, delta), ``c_T`` 1.5 for every loss,
    fitted on public development data per loss family), and
    ``kappa="auto"`` builds the schedule (momentum, allocation weights) for the condition number
    ``min(L / mu, (T / c_k)^2)`` (:func:`horizon_kappa`; ``c_k`` 1.5 for the classification
    losses, 2 for the squared loss, fitted on public development data), so that the momentum
    damps within the T steps. Both are functions of public quantities only (n, epsilon, delta, the loss, L, mu).
    With ``reselect_T=True`` the fit runs the paper's ``T* = argmin_{T <= max_iter}`` of the
    bound (Remark 4.1 / eq. 32, its Gaussian analogue
    ``a_{T,0} E0 + d Delta^2 (sum_t a_t^(1/2))^2 / (4 rho)``, or the uniform-allocation bound)
    with the paper's momentum (``kappa = L / mu``): a worst-case bound that stops after a handful
    of steps at small n (T* = 1 to 5 on 1000-5000 Adult rows at epsilon <= 1). The whole budget is
    spread over the steps run.

    Parameters
    ----------
    max_iter : int >= 1 or None, default=None
        Private fit: the largest number of noisy steps (None: 1000); the fit runs fewer when
        ``reselect_T`` is "auto" or True. ``epsilon=inf``: the cap on the iterations of the
        non-private solver (None: 1000).
        Public: it sets T*, hence every step's share of the budget; never derive it from the
        private data.
    batch_size : None, int or float, default=None
        None: full batch. An int: the expected Poisson batch size. A float in (0, 1]: the
        Poisson sampling rate.
    c : "auto" or float, default="auto"
        Step multiplier: ``alpha = c / L`` (the theory needs ``c <= 1``). "auto": 1, the
        theory's largest step, for every loss (the squared loss's refitted on public development
        data with its residual clip, :data:`STEP_C`). Public: the schedule, T* and the
        allocation depend on it; never derive it from the private data.
    allocation : {"optimal", "uniform"}, default="optimal"
        How the budget is divided among the steps.
    reselect_T : "auto" or bool, default="auto"
        "auto": the public horizon rule above (at most ``max_iter`` steps); True: the number of
        steps T* <= max_iter that minimises the paper's bound; False: ``max_iter`` steps.
    kappa : "auto", float >= 1 or None, default="auto"
        The condition number the schedule assumes (momentum ``(1 - sqrt(alpha mu')) / (1 +
        sqrt(alpha mu'))`` with ``mu' = L / kappa``, and the allocation weights). "auto":
        ``min(L / mu, (T / c_k)^2)`` for the T steps run (``c_k`` 1.5 for the classification
        losses, 2 for the squared loss; the paper's ``L / mu`` with
        ``reselect_T=True``); None: ``L / mu``; a number: ``min(kappa, L / mu)``. Public.
        Must exceed the step multiplier ``c`` (ValueError otherwise). A number far below
        ``(T / c_k)^2`` overstates the contraction: the optimal allocation then gives the first
        steps almost none of the budget, their noise is never damped, and the fit warns.
    E0 : "auto" or float, default="auto"
        The guess of ``F(x_0) - F*`` that chooses T* (and so, through T*, each step's share of
        the budget and its noise). "auto": the data-free ``F(0)`` (``K ln 2`` logistic, ``ln K``
        multinomial, ``K`` squared hinge, ``clip^2 / 8`` squared). Public: a value read from the
        private data (its loss at 0, say) is a release that no record accounts for.
    mechanism : {"gaussian", "laplace"}, default="gaussian"
    tol : float > 0 or None, default=None
        Tolerance of the non-private fit (``epsilon=inf`` only): the largest absolute gradient
        component at the solution (None: 1e-8).

    Notes
    -----
    The released quantity of step t (what ``record_trace`` records) is the clipped gradient sum at
    ``y_t`` before and after its noise; ``record.sensitivity`` is G (L2) or ``sqrt(p K) G`` (L1).
    At ``epsilon=inf``: the shared non-private solver (L-BFGS on the same objective,
    :mod:`skdp.optimizers._nonprivate`) to ``tol``, with a ``ConvergenceWarning`` when
    ``max_iter`` iterations do not get there.

    Deviations from the paper, and why: Gaussian noise with zCDP/RDP accounting by default (the
    paper is pure epsilon-DP only); zero-out instead of replace-one neighbours; L is the data-free
    ``curvature R^2 + lam``, or the released typical row's within a floor (the paper's code
    computes L from the data, which leaks); Laplace noise
    is drawn with scale b (the paper's code used b as a standard deviation); Poisson sampling
    instead of fixed-size batches without replacement; ``x_0 = 0`` and the data-free E0.
    """

    name = "dp_nag_opt"
    _parameter_constraints: dict = dict(_COMMON_CONSTRAINTS)

    def __init__(
        self, max_iter=None, batch_size=None, c="auto", allocation="optimal", reselect_T="auto",
        kappa="auto", E0="auto", mechanism="gaussian", tol=None,
    ):
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.c = c
        self.allocation = allocation
        self.reselect_T = reselect_T
        self.kappa = kappa
        self.E0 = E0
        self.mechanism = mechanism
        self.tol = tol

    def _schedule(self, L, mu, T, horizon=None, c=1.0):
        return nag_schedule(T, L, mu, c)
