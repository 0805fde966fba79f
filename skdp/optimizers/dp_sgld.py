"""dp_sgld: noisy (stochastic) gradient Langevin dynamics, releasing the last iterate only.

Ryffel, Bach, Pointcheval (2022), *Differential privacy guarantees for stochastic gradient
Langevin dynamics* (arXiv 2201.11980); Chourasia, Ye, Shokri (2021), *Differential privacy
dynamics of Langevin diffusion and noisy gradient descent*, NeurIPS. The privacy analysis lives
in :mod:`skdp.privacy.langevin`; see ``docs/optimizers/dp_sgld.rst`` for the deviations.
"""

from dataclasses import replace
import math

import numpy as np
from numba import njit
from sklearn.utils._param_validation import InvalidParameterError, StrOptions

from ..privacy import (
    NEIGHBOURING_RELATION,
    GaussianEvent,
    PoissonGaussianEvent,
    PrivacyRecord,
    SelfComposedEvent,
    calibrate_noise_multiplier,
    compute_epsilon,
)
from ..privacy.langevin import LangevinEvent, kappa
from ..privacy.noise import add_gaussian_noise
from ..privacy.rdp import epsilon_over_orders
from .._validation import AUTO, POSITIVE, POSITIVE_INT, RATE, TOLERANCE
from ..progress import ProgressMonitor, prefix_epsilon, repeated_step_epsilon
from ._base import DPOptimizer, OptimizeResult, batch_fraction, trace_buffer
from ._defaults import (
    MAX_STEPS, MIN_STEPS, budget_rho, noisy_gd_step, noisy_gd_time, steps_for_time,
)
from ._glm import block_gradient_sum, gradient_workspace
from ._step_parts import batch_rate, draw_batch, release_step
from ._loops import step_oracle, sgld_full_batch

__all__ = ["DPSGLD"]

FULL = 0
POISSON = 1

#: The accountants of the ``accountant`` parameter: each reports an epsilon that is proven.
ACCOUNTANTS = ("auto",)

#: Cap on the default number of passes over the data when the Langevin bound is in play.
DEFAULT_MAX_EPOCHS = 1000
#: Langevin time target when the Langevin bound is in play: lam T >= 8, where the bound is
#: within 2% of its limit.
SATURATION = 8.0
#: ``step="auto"`` of a logistic or multinomial fit accounted by composition (the Langevin
#: bound not in play, every C near 1) whose rule asks for more than ``COMPOSITION_MAX_STEPS``
#: steps of 1 / (2 beta): the rule's Langevin time T in ``COMPOSITION_MAX_STEPS`` steps of
#: ``min(COMPOSITION_STEP / beta, T / COMPOSITION_MAX_STEPS)`` (issue 16: 1000 steps of
#: 1 / (2 beta) made the default fit on Adult 2.6x slower than scikit-learn's lbfgs).
#: Why it is sound: under composition the noise on the model after time T does not depend on the
#: number of steps, and gradient descent on a beta-smooth objective is stable below 2 / beta.
#: Its cost: the last iterate's noise grows like ``1 / (2 - eta h)`` in a direction of
#: curvature h. The logistic curvature reaches its bound only at zero margin; the squared
#: hinge's is its bound on every active example (scikit-learn's 200-row check data: DPLinearSVC
#: 0.825 against 0.925), so the squared hinge and the squared loss keep 1 / (2 beta).
#: Fitted on public data (``bench_defaults.py``'s preprocessing, 3 seeds; c / beta with a cap
#: against 1 / (2 beta) with 1000): Adult and make_classification at n 5000 / 30000, epsilon
#: 0.3 / 1 / 3, c = 1.5 with 300 steps: mean +0.04 points, worst -0.2; at n 426 to 2000 a longer
#: step everywhere lost 0.3 to 0.5 points on average on the held-out part, so fits that need at
#: most 300 steps are unchanged. On the defaults grid (29 logistic cells changed): development
#: +0.08 points on average (worst -2.1), held-out -0.13 (worst -0.6); generated data with 2 to
#: 50 features (n 2000, epsilon 1 and 3): -0.1 to -1.7 points.
COMPOSITION_STEP = 1.5
COMPOSITION_MAX_STEPS = 300


def _langevin_pays(lam, T, steps_per_epoch):
    """Whether the Langevin bound is tighter than composition at Langevin time T (full batch:
    ``(1 - exp(-lam T / 2)) / lam < T / 4``, i.e. ``lam T > 3.19``; never with mini-batches)."""
    return steps_per_epoch == 1 and -math.expm1(-lam * T / 2.0) / lam < T / 4.0


@njit(cache=True, nogil=True)
def _project(w, radius):
    """Euclidean projection onto the ball of the given radius (no-op for radius <= 0)."""
    if radius <= 0.0:
        return
    nrm = 0.0
    for j in range(w.shape[0]):
        nrm += w[j] * w[j]
    nrm = math.sqrt(nrm)
    if nrm > radius:
        f = radius / nrm
        for j in range(w.shape[0]):
            w[j] *= f


@njit(cache=True, nogil=True)
def _sgld_kernel(
    X, Y, w, loss_id, tau, lam, etas, sampling, q, inv_batch, sigma, init_std, radius,
    rng, perm, trace, replay=False, initialise=True, threads=None,
):
    """theta_0 ~ Pi(N(w, init_std^2 I)) (w: zeros, or a warm start), then for each step k
    theta <- Pi(theta - eta_k (g_k / m + lam theta) + sqrt(2 eta_k) sigma Z).

    ``g_k`` is the sum of clipped per-example gradients over the step's batch (all rows, or a
    Poisson sample with rate q; ``q=None``, which ``FULL`` sampling passes, takes all rows and
    compiles no sampler) and ``m = 1 / inv_batch`` is the public batch size (n or q n).
    The Langevin noise is added to the gradient *sum* with std ``m sigma sqrt(2 / eta_k)``,
    which is exactly ``sqrt(2 eta_k) sigma`` on the parameters; the released quantity of step k
    (what ``trace`` records) is that noisy sum.
    With ``replay`` (record/replay tests only), ``trace[:, 1]`` holds a recorded run's releases:
    the kernel computes and records its own clipped sum, draws its noise as usual (the random
    stream stays aligned), then releases ``trace[k, 1]`` instead.
    ``initialise=False`` skips the initialisation: a fit run in chunks resumes from ``w`` with
    ``etas`` and ``trace`` sliced to the chunk's steps.
    ``threads``: the gradient sums may use several cores (same result, see ``_glm``).
    """
    n = X.shape[0]
    D = w.shape[0]
    g = np.zeros(D)
    partial = gradient_workspace(n, D)
    # Data-independent initialisation (the paper's N(0, 2 sigma^2 / lam I) around the public
    # start w, then projected).
    if initialise:
        add_gaussian_noise(rng, w, init_std)
        _project(w, radius)
    for t in range(etas.shape[0]):
        eta = etas[t]
        m = draw_batch(rng, n, q, perm)  # q = None (full batch): all n rows
        block_gradient_sum(X, Y, w, perm, m, loss_id, tau, g, partial, threads)
        # the Langevin noise on the sum (None: the Gaussian mechanism, see release_step)
        release_step(rng, g, None, sigma * math.sqrt(2.0 / eta) / inv_batch, trace, t, replay)
        a = eta * inv_batch
        shrink = 1.0 - eta * lam
        for j in range(D):
            w[j] = shrink * w[j] - a * g[j]
        _project(w, radius)
    return etas.shape[0]


class DPSGLD(DPOptimizer):
    """Noisy (stochastic) gradient Langevin dynamics, last iterate released (DP-GLD / DP-SGLD).

    ``theta_{k+1} = Pi_C(theta_k - eta_k grad F_B(theta_k) + sqrt(2 eta_k) sigma Z_k)`` with
    ``Z_k ~ N(0, I)`` on every coordinate (intercept included), ``theta_0 ~ Pi_C(N(0, 2 sigma^2 /
    lam I))``, ``F_B`` the mean clipped-loss gradient over the step's batch plus ``lam theta``.
    Only the last iterate is released. With full batches (the default) the privacy loss of the
    last iterate stays bounded however many steps are taken (Chourasia et al. 2021).

    **Objective and constants** (public, from the :class:`~skdp.optimizers.Problem`): the
    per-example loss derivative is clipped to ``tau = problem.clip`` (for one output this is the
    derivative of a Huberised loss: Huber ridge, Huberised squared hinge; logistic and multinomial
    at the default ``tau`` are exact), rows to norm ``R``; so a per-example gradient is bounded by
    ``G = tau R`` (the Lipschitz constant), the objective is ``beta = curvature R^2 + lam`` smooth
    and ``lam`` strongly convex (the intercept is regularised too).

    **Neighbouring relation and sensitivity.** Zero-out (add/remove one record, n public; a null
    record is an all-zero row and contributes a zero gradient). One record moves the mean gradient
    (the Langevin drift) by at most ``S = G / n`` and the gradient sum of a step by at most ``G``.
    The papers state replace-one, ``S = 2 L / n``; their analysis holds for any S, so with
    zero-out every rho below is a quarter of the replace-one value at equal ``L = G``.

    **Accounting** (``sigma`` is the temperature: parameter noise ``sqrt(2 eta_k) sigma``;
    ``T = sum_k eta_k``, summed exactly):

    * full batch (default): ``eps_RDP(alpha) = alpha rho`` with ``rho = min(rho_L, rho_C)``,
      ``rho_L = S^2 (1 - exp(-lam T / 2)) / (lam sigma^2)`` (Langevin, last iterate only; needs
      ``eta_k < 1 / beta``, the Gaussian initialisation and a drift that is the gradient of a
      lam-strongly convex beta-smooth function, which holds for one output or a loss whose clip
      is inactive; otherwise only ``rho_C`` is used) and ``rho_C = S^2 T / (4 sigma^2)`` (plain
      composition of the per-step Gaussian mechanisms). ``rho_L <= S^2 / (lam sigma^2)`` for any
      number of steps. The estimator's ``accountant="pld"`` cannot express the Langevin curve:
      it is converted by the RDP route (the record says so).
    * mini-batch, ``accountant="auto"``: Poisson sampling with rate q, each step a
      Poisson-subsampled Gaussian mechanism on the gradient sum with noise multiplier
      ``z = m sigma sqrt(2 / eta_k) / G`` (m = q n), composed over the steps (Mironov et al.
      2019). Proven; the loss grows with the number of steps.

    The mini-batch claim of Ryffel et al. (2022) (the full-batch Langevin bound for uniform
    batches) is not offered: it is not proven, and it fails (``docs/optimizers/dp_sgld.rst``,
    research note: an instance calibrated by it to epsilon 1 has a true epsilon above 40).

    sigma is calibrated (bisection, never above the target) from public quantities only; no
    step count, batch distribution or stopping rule depends on the data in a private fit.

    Parameters
    ----------
    max_iter : int or None, default=None
        Number of passes over the data (epochs; a full-batch step is one pass; a mini-batch
        epoch is ``ceil(1 / q)`` steps). None: a public rule (:meth:`_plan`,
        :func:`skdp.optimizers._defaults.noisy_gd_time`): the Langevin time ``T = sum eta_k``
        is ``0.01 s^2 / G^2`` for the squared loss and ``16 s / (G R)`` for classification
        losses, ``s = n sqrt(2 rho) / sqrt(d)`` with rho the zCDP budget, covered by 5 to 1000
        steps (at most 300, of up to ``1.5 / beta``, for a logistic fit accounted by
        composition, see ``step``); where the Langevin bound is then no tighter than
        composition (every C near 1) the fit is accounted by composition and skips the
        Langevin initialisation, otherwise
        T is extended to ``lam T >= 8`` (at most 1000 steps). The resolved values are in
        ``hyperparameters`` of the result and in the record's details. At ``epsilon=inf``: the
        cap on the iterations of the non-private solver (None: 1000).
    batch_size : None, int or float, default=None
        None: full batch. An int: the (expected) batch size m. A float in (0, 1]: the Poisson
        sampling rate.
    step : "auto" or float, default="auto"
        Initial step eta_0. "auto": ``1 / (2 beta)``; for a logistic or multinomial loss whose
        default plan is accounted by composition alone and needs more than 300 such steps, the
        same Langevin time in 300 steps of at most ``1.5 / beta`` (``COMPOSITION_STEP``). The
        Langevin bound needs ``eta_0 < 1 / beta`` (a larger step falls back to the composition
        bound).
    schedule : {"constant", "decreasing"}, default="constant"
        "decreasing": ``eta_k = 1 / (1 / eta_0 + lam k / 2)`` (the paper's ``1 / (2 beta + lam k
        / 2)`` by default), used by the gradient step and by the noise alike.
    sigma : None or float > 0, default=None
        None: calibrate the temperature to the budget. A float: use it; the fit reports the
        epsilon it spends and raises if that exceeds the estimator's epsilon.
    accountant : {"auto"}, default="auto"
        The analysis: the proven bounds above (Langevin and composition for full batches, the
        Poisson-subsampled Gaussian for mini-batches). Any other value raises a ValueError
        (``"ryffel2022"``, the unproven mini-batch claim, was removed).
    projection : None, "auto" or float > 0, default=None
        Radius of the ball every iterate is projected onto. "auto": ``G / lam``, which contains
        the optimum (``lam theta* = -grad F_data(theta*)``), so it costs nothing at the optimum
        and keeps noisy iterates bounded. Data-independent.
    tol : float > 0 or None, default=None
        Tolerance of the non-private fit (``epsilon=inf`` only): the largest absolute gradient
        component at the solution (None: 1e-8).

    Notes
    -----
    At ``epsilon=inf`` there is no noise and no clipping: noiseless SGLD is gradient descent, and
    the fit runs the shared non-private solver instead (L-BFGS on the same objective,
    :mod:`skdp.optimizers._nonprivate`) to the optimum of the plain objective, with a
    ``ConvergenceWarning`` when ``max_iter`` iterations do not reach ``tol``. Noise comes from a floating-point Gaussian sampler (the usual side-channel
    caveat of Mironov 2012 applies). The fitted record (``privacy_record_``) holds ``sigma``,
    ``rho``, ``n_steps``, ``epsilon``, ``delta``, the relation and the analysis in ``details``.

    A warm start (``problem.init``, the previous release: public) centres the initial Gaussian
    on it, ``theta_0 ~ Pi_C(N(init, 2 sigma^2 / lam I))``, still data-independent, so the
    analysis is unchanged. A progress ``callback`` receives at step t the epsilon of stopping
    there: the bound above for the Langevin time of the first t steps (or their composition).
    """

    name = "dp_sgld"
    supports_replay = True
    supports_distributed = True  # full batch: the step is a sum over rows

    _parameter_constraints: dict = {
        "max_iter": [POSITIVE_INT, None],
        "batch_size": [None, POSITIVE_INT, RATE],
        "step": [AUTO, POSITIVE],
        "schedule": [StrOptions({"constant", "decreasing"})],
        "sigma": [None, POSITIVE],
        "accountant": [StrOptions({"auto"})],
        "projection": [None, AUTO, POSITIVE],
        "tol": TOLERANCE,
    }

    def __init__(
        self, max_iter=None, batch_size=None, step="auto", schedule="constant", sigma=None,
        accountant="auto", projection=None, tol=None,
    ):
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.step = step
        self.schedule = schedule
        self.sigma = sigma
        self.accountant = accountant
        self.projection = projection
        self.tol = tol

    # -- parameters ---------------------------------------------------------------------------
    def _check_params(self):
        if isinstance(self.accountant, str) and self.accountant == "ryffel2022":
            raise InvalidParameterError(
                f"The 'accountant' parameter of DPSGLD must be one of {ACCOUNTANTS} (the proven "
                "analyses: Langevin and composition for full batches, the Poisson-subsampled "
                "Gaussian for mini-batches); 'ryffel2022' was removed: its mini-batch bound is "
                "not proven and is violated (docs/optimizers/dp_sgld.rst, research note)"
            )
        super()._check_params()

    def _sampling(self, n):
        """(sampling mode, q, public batch size m, steps per epoch)."""
        q = batch_fraction(self.batch_size, n)
        if q >= 1.0:
            return FULL, 1.0, float(n), 1
        return POISSON, q, q * n, math.ceil(1.0 / q)

    def _plan(self, problem, budget, steps_per_epoch):
        """(step sizes, random initialisation?) of a private fit. Public inputs only.

        ``max_iter=None`` resolves by the public noisy-GD rule
        (:func:`~._defaults.noisy_gd_time`): the Langevin time ``T = sum_k eta_k`` that trades
        progress against noise, a function of n, d, rho, G, R and the loss only, covered by
        ``T / step`` steps (5 to 1000). When the
        Langevin bound is no tighter than plain composition at that T (full batch:
        ``(1 - exp(-lam T / 2)) / lam >= T / 4``, i.e. ``lam T <= 3.19``, which is the case for
        every C near 1; mini-batch: always) the fit is accounted by composition alone and
        starts at the public start point without the Langevin initialisation, whose variance
        ``2 sigma^2 / lam`` would otherwise swamp the model (its only role is the Langevin
        bound). When the Langevin bound is tighter (strong regularisation) the time is extended
        to ``lam T >= 8`` (at most 1000 steps), where the bound is within 2% of its limit, so
        the extra time is almost free. An explicit ``max_iter`` keeps the initialisation and
        the minimum of both bounds.
        """
        beta, lam = problem.smoothness, problem.lam
        eta0 = noisy_gd_step(beta) if self.step == "auto" else float(self.step)
        if self.max_iter is not None:
            n_steps = int(self.max_iter) * steps_per_epoch
            init = True
        else:
            rho = budget_rho(budget.epsilon, budget.delta)
            time = noisy_gd_time(problem.loss.name, problem.n_samples, problem.dim, rho,
                                 problem.gradient_bound, problem.row_norm_bound)
            n_steps = steps_for_time(time, eta0)
            if self.schedule == "decreasing":
                # sum_k 1/(1/eta0 + lam k/2) ~ (2/lam) log(1 + lam eta0 K / 2) >= time
                x = lam * time / 2.0
                need = 2.0 / (lam * eta0) * math.expm1(x) if x < 50 else math.inf
                n_steps = int(min(MAX_STEPS, max(MIN_STEPS, math.ceil(need))))
        if self.schedule == "constant":
            etas = np.full(n_steps, eta0)
        else:
            etas = 1.0 / (1.0 / eta0 + 0.5 * lam * np.arange(n_steps, dtype=np.float64))
        if self.max_iter is None:
            T = math.fsum(etas)
            init = _langevin_pays(lam, T, steps_per_epoch)
            if init and self.schedule == "constant" and lam * T < SATURATION:
                # the Langevin bound is in play: time up to lam T = 8 is (almost) free
                need = math.ceil(SATURATION / (lam * eta0))
                etas = np.full(int(min(max(n_steps, need), DEFAULT_MAX_EPOCHS)), eta0)
            elif (not init and self.step == "auto" and self.schedule == "constant"
                  and problem.loss.name in ("logistic", "multinomial")
                  and n_steps > COMPOSITION_MAX_STEPS):
                # composition only: the rule's time in at most COMPOSITION_MAX_STEPS steps,
                # each up to COMPOSITION_STEP / beta long
                eta0 = min(COMPOSITION_STEP / beta, time / COMPOSITION_MAX_STEPS)
                etas = np.full(COMPOSITION_MAX_STEPS, eta0)
        return etas, init

    def _etas(self, problem, steps_per_epoch, budget=None):
        """The step sizes of a private fit (public: beta, lam, the budget, the
        hyper-parameters); see :meth:`_plan`."""
        if budget is None:  # only an explicit max_iter needs no budget
            if self.max_iter is None:
                raise ValueError("max_iter=None resolves from the budget: pass it")
        return self._plan(problem, budget, steps_per_epoch)[0]

    def _projection_radius(self, problem):
        if self.projection is None:
            return 0.0
        if self.projection == "auto":
            return problem.gradient_bound / problem.lam
        return float(self.projection)

    @staticmethod
    def _langevin_conditions(problem, etas):
        """(ok, reason): whether the full-batch Langevin (hidden-state) bound applies."""
        if not float(np.max(etas)) < 1.0 / problem.smoothness:
            return False, "step >= 1/beta: Langevin bound not applicable, composition only"
        if problem.n_outputs > 1 and not problem.loss.is_bounded(problem.clip, problem.n_outputs):
            return False, (
                "joint clipping of a multi-output derivative is not the gradient of a convex "
                "function: Langevin bound not applicable, composition only"
            )
        return True, "Langevin bound (Chourasia et al. 2021) and composition, minimum"

    # -- private fit --------------------------------------------------------------------------
    def _calibrate(self, problem, budget, etas, sampling, q, m_pub, init=True):
        """(sigma, record details, event, accountant used, analysis). Public inputs only.
        ``init=False``: no Langevin initialisation, so composition only."""
        n, G, lam = problem.n_samples, problem.gradient_bound, problem.lam
        T = math.fsum(etas)
        eta_max = float(np.max(etas))
        n_steps = len(etas)
        S = G / n  # drift sensitivity under zero-out
        # z -> event, and the factor sigma = z * unit
        if sampling == FULL:
            ok, reason = self._langevin_conditions(problem, etas)
            if not init:
                ok, reason = False, (
                    "default plan: the Langevin bound is no tighter than composition at this "
                    "Langevin time, so no Langevin initialisation and composition only"
                )
            if ok:
                def make(z):
                    return LangevinEvent(z, lam, T, composition=True)
                unit, analysis = S, "langevin+composition"
            else:
                # per-step Gaussian on eta_k * mean gradient: z_k = sigma sqrt(2/eta_k) / S,
                # smallest at eta_max (a bound for a decreasing schedule, exact for a constant one)
                def make(z):
                    return SelfComposedEvent(GaussianEvent(z), n_steps)
                unit, analysis = S / math.sqrt(2.0 / eta_max), "composition"
        else:
            reason = "Poisson-subsampled Gaussian RDP (Mironov et al. 2019), composed"

            def make(z):
                return SelfComposedEvent(PoissonGaussianEvent(q, z), n_steps)
            unit, analysis = G / (m_pub * math.sqrt(2.0 / eta_max)), "sgm"
        # dp-accounting's PLD has no Langevin event: the Langevin curve goes by the RDP route.
        accountant = "rdp" if isinstance(make(1.0), LangevinEvent) else budget.accountant
        if self.sigma is None:
            z, _ = calibrate_noise_multiplier(make, budget.epsilon, budget.delta, accountant)
        else:
            z = float(self.sigma) / unit
            spent = compute_epsilon(make(z), budget.delta, accountant)
            if spent > budget.epsilon:
                raise ValueError(
                    f"sigma={self.sigma} spends epsilon={spent:.6g} > the target epsilon="
                    f"{budget.epsilon:.6g} at delta={budget.delta:.3g}; increase sigma or epsilon"
                )
        event = make(z)
        sigma = z * unit
        details = {
            "sigma": sigma,
            "n_steps": n_steps,
            "relation": NEIGHBOURING_RELATION,
            "analysis": analysis,
            "analysis_note": reason,
            "proven": True,
            "step": float(etas[0]),
            "schedule": self.schedule,
            "total_time": T,
            "lam": lam,
            "lam_T": lam * T,
            "kappa": kappa(lam, T),
            "smoothness": problem.smoothness,
            "lipschitz": G,
            "drift_sensitivity": S,
            "batch_size": m_pub,
            "sampling_rate": q,
            "rdp_accountant": accountant,
        }
        lang = LangevinEvent(sigma / S, lam, T, composition=False)
        details["rho_langevin"] = lang.rho_langevin
        details["rho_composition"] = lang.rho_composition
        details["rho_limit"] = lang.saturated_rho
        if isinstance(event, LangevinEvent):
            details["rho"] = event.rho
        else:
            # no linear RDP curve: the slope rdp(a*)/a* at the (grid) order that sets epsilon
            _, a, _ = epsilon_over_orders(event.rdp, budget.delta)
            details["rho"] = float(event.rdp(np.array([a]))[0] / a)
        return sigma, details, event, accountant, analysis

    @staticmethod
    def _prefix_epsilon(record, etas, stops):
        """Epsilon of stopping after ``stops`` steps: the Langevin bound for the Langevin time
        of those steps, or the composition of their per-step events."""
        event = record.event
        if not isinstance(event, LangevinEvent):
            return repeated_step_epsilon(record, stops)
        times = np.cumsum(etas)[np.asarray(stops) - 1]

        def rdp_at(stops, orders):
            rho = [replace(event, total_time=float(T)).rho for T in times]
            return np.asarray(rho)[:, None] * orders[None, :]

        return prefix_epsilon(stops, record.delta, record.epsilon, rdp_at)

    def _solve_private(self, problem, budget, rng, record_trace, replay=None, progress=None):
        self._check_params()
        n, G = problem.n_samples, problem.gradient_bound
        sampling, q, m_pub, per_epoch = self._sampling(n)
        etas, init = self._plan(problem, budget, per_epoch)
        sigma, details, event, accountant, analysis = self._calibrate(
            problem, budget, etas, sampling, q, m_pub, init
        )
        details["initialisation"] = "langevin" if init else "none"
        hyper = {"max_iter": math.ceil(len(etas) / per_epoch), "n_steps": len(etas),
                 "step": float(etas[0]), "sigma": sigma, "initialisation": details["initialisation"]}
        radius = self._projection_radius(problem)
        details["projection_radius"] = radius if radius > 0 else None
        n_steps = len(etas)
        # DP-SGD-equivalent noise multiplier of one step: std of the noise on the gradient sum / G
        z_step = m_pub * sigma * math.sqrt(2.0 / float(np.max(etas))) / G
        sampling_name = "full batch" if sampling == FULL else f"poisson(q={q:.6g})"
        record = PrivacyRecord.from_event(
            event, budget.delta, accountant,
            mechanism="langevin" if isinstance(event, LangevinEvent) else "gaussian",
            noise_multiplier=z_step, sensitivity=G, n_steps=n_steps, sampling=sampling_name,
            details=details,
        )
        details["epsilon"] = record.epsilon
        details["delta"] = record.delta
        w = problem.start()
        perm = np.arange(n, dtype=np.int64)
        trace = trace_buffer(n_steps, problem.dim, record_trace, replay)
        record_trace = record_trace or replay is not None
        oracle, threads, Y = step_oracle(problem, q, rng, perm, full_batch=sampling == FULL)

        def run_chunk(start, stop):
            if oracle is not None:  # steps in Python: full batch in memory, any batch on Dask
                sgld_full_batch(
                    oracle, w, problem.lam, etas[start:stop], 1.0 / m_pub, sigma,
                    sigma * math.sqrt(2.0 / problem.lam) if init else 0.0, radius, rng,
                    trace[start:stop],
                    replay is not None, start == 0,
                )
                return
            _sgld_kernel(
                problem.rows, Y, w, problem.loss.loss_id, problem.clip, problem.lam,
                etas[start:stop], sampling, batch_rate(q), 1.0 / m_pub, sigma,
                sigma * math.sqrt(2.0 / problem.lam) if init else 0.0, radius, rng, perm,
                trace[start:stop], replay is not None, start == 0, threads,
            )

        progress = progress or ProgressMonitor()
        progress.run(
            n_steps, run_chunk, lambda stops: self._prefix_epsilon(record, etas, stops),
            record.delta, q,
        )
        return OptimizeResult(
            coef=w.reshape(problem.n_params, problem.n_outputs),
            n_iter=math.ceil(n_steps / per_epoch),
            record=record,
            trace=trace if record_trace else None,
            extras=dict(details, hyperparameters=hyper),
        )
