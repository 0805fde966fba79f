"""Schedules, noise allocation and the choice of T for the accelerated optimizers.

Everything here is a function of public quantities only (n, p, K, the bounds, the budget, the
hyper-parameters): it decides *before* the data is touched how many steps to run, with which step
sizes and momenta, and how much noise each step gets.

References: Kuru, Birbil, Gürbüzbalaban, Yıldırım, *Differentially private accelerated
optimization algorithms* (SIAM J. Optim. 2022; [P] below), §4.1 (DP-NAG-opt, eqs. 29-32) and §4.2
(DP-MASG(-opt), eqs. 33-34); Aybat, Fallah, Gürbüzbalaban, Ozdaglar (NeurIPS 2019) for the stage
schedule. The Gaussian (zCDP / RDP) allocation ``rho_t ~ a_t^(1/2)`` is the Lagrange solution of
the same bound with Gaussian noise (not in [P]; see ``docs/optimizers/dp_nag_opt.rst``).

Conventions (library-wide): zero-out neighbours; the released quantity of a step is the *sum* of
clipped per-example gradients over a Poisson batch, whose L2 sensitivity is ``G`` and L1
sensitivity ``sqrt(p K) G``; the optimizer divides it by the public expected batch size ``q n``.
"""

from dataclasses import dataclass
import math

import numpy as np

from ..privacy import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonGaussianEvent,
    PoissonLaplaceEvent,
    PrivacyRecord,
    SelfComposedEvent,
    calibrate_noise_multiplier,
    compute_epsilon,
)
from ..privacy.rdp import (
    DEFAULT_ORDERS, EXTRA_ORDERS, epsilon_from_rdp, epsilon_over_orders,
    rdp_poisson_subsampled_gaussian,
)

__all__ = [
    "Schedule",
    "nag_schedule",
    "masg_stage_lengths",
    "masg_schedule",
    "log_weights",
    "bound_curve",
    "select_n_steps",
    "budget_shares",
    "laplace_scale",
    "calibrate_laplace",
    "calibrate_gaussian",
    "default_initial_gap",
    "make_record",
]

LN2 = math.log(2.0)


# -- step-size / momentum schedules -----------------------------------------------------------
@dataclass(frozen=True)
class Schedule:
    """Per-step step sizes, momenta, momentum resets and stage numbers (stages count from 1)."""

    alpha: np.ndarray
    beta: np.ndarray
    restart: np.ndarray
    stage: np.ndarray

    def __len__(self):
        return self.alpha.shape[0]

    def truncate(self, T):
        """The first ``T`` steps (a contiguous copy, ready for the kernel)."""
        return Schedule(
            np.ascontiguousarray(self.alpha[:T]), np.ascontiguousarray(self.beta[:T]),
            np.ascontiguousarray(self.restart[:T]), np.ascontiguousarray(self.stage[:T]),
        )


def _momentum(alpha, mu):
    """beta = (1 - sqrt(alpha mu)) / (1 + sqrt(alpha mu)), elementwise."""
    r = np.sqrt(mu * np.asarray(alpha, dtype=float))
    return (1.0 - r) / (1.0 + r)


def nag_schedule(T, L, mu, c=1.0):
    """Nesterov with constant step ``alpha = c / L`` and momentum from [P] Thm 4.1."""
    alpha = np.full(T, c / L)
    return Schedule(alpha, _momentum(alpha, mu), np.zeros(T, dtype=np.bool_), np.ones(T, np.int64))


def masg_stage_lengths(kappa, p=1, first_stage=None):
    """(n_1, unit) of [P] eq. 33: stage 1 has n_1 steps, stage k >= 2 has 2^k * unit steps.

    ``n_1 = ceil(2 sqrt(kappa) ln sqrt(kappa))`` (clamped to >= 1; the authors' code) unless
    ``first_stage`` is given, ``unit = ceil(sqrt(kappa) ln 2^(p+2))``.
    """
    sk = math.sqrt(kappa)
    if first_stage is None:
        n1 = max(1, int(math.ceil(2.0 * sk * math.log(sk)))) if sk > 1.0 else 1
    else:
        n1 = int(first_stage)
    unit = max(1, int(math.ceil(sk * (p + 2) * LN2)))
    return n1, unit


def masg_schedule(T, L, mu, c=1.0, p=1, first_stage=None):
    """The multi-stage schedule of [P] eq. 33 truncated to ``T`` steps.

    Stage 1: ``n_1`` steps with ``alpha = c / L``; stage k >= 2: ``2^k unit`` steps with
    ``alpha = c / (4^k L)``; momentum ``beta_k`` from each stage's step; momentum reset at the
    first step of every stage k >= 2.
    """
    n1, unit = masg_stage_lengths(L / mu, p, first_stage)
    alpha = np.empty(T)
    stage = np.empty(T, np.int64)
    t1 = min(T, n1)
    alpha[:t1] = c / L
    stage[:t1] = 1
    t0, k = t1, 1
    while t0 < T:
        k += 1
        t1 = min(T, t0 + 2**k * unit)
        alpha[t0:t1] = c / (4.0**k * L)
        stage[t0:t1] = k
        t0 = t1
    restart = np.zeros(T, dtype=np.bool_)
    restart[1:] = stage[1:] != stage[:-1]
    return Schedule(alpha, _momentum(alpha, mu), restart, stage)


# -- the error bound ------------------------------------------------------------------------
def log_weights(schedule, T, L, mu):
    """``(log a_{T,t} for t = 1..T, log a_{T,0})`` of [P] eq. 29 (NAG) / eq. 34 (MASG).

    ``a_{T,t} = 2^(s_T - s_t) prod_{i=t+1..T} (1 - sqrt(mu alpha_i)) alpha_t (1 + alpha_t L)`` and
    ``a_{T,0} = 2^(s_T - 1) prod_{i=1..T} (1 - sqrt(mu alpha_i))``, where ``s_t`` is the stage of
    step t (constant for NAG, so the factors of 2 vanish).
    """
    alpha = schedule.alpha[:T]
    stage = schedule.stage[:T].astype(float)
    cs = np.concatenate([[0.0], np.cumsum(np.log1p(-np.sqrt(mu * alpha)))])
    log_a = (cs[T] - cs[1:]) + np.log(alpha * (1.0 + alpha * L)) + (stage[-1] - stage) * LN2
    log_a0 = cs[T] + (stage[-1] - 1.0) * LN2
    return log_a, log_a0


def _log_cumsum_exp(x):
    return np.logaddexp.accumulate(x)


def bound_curve(schedule, L, mu, E0, noise_coef, mechanism, allocation):
    """The bound on ``E F(x_T) - F*`` for every ``T = 1..len(schedule)`` (array of that length).

    ``B(T) = a_{T,0} E0 + noise(T)`` with, writing ``S_p(T) = sum_t a_{T,t}^p``:

    ========== ============================ =====================================
    mechanism  allocation="optimal"          allocation="uniform"
    ========== ============================ =====================================
    laplace    ``noise_coef S_{1/3}(T)^3``   ``noise_coef T^2 S_1(T)``
    gaussian   ``noise_coef S_{1/2}(T)^2``   ``noise_coef T S_1(T)``
    ========== ============================ =====================================

    ``noise_coef`` is ``d (S1 / (n eps))^2`` (Laplace; [P] eq. 32) or ``d Delta^2 / (4 rho)``
    (Gaussian full batch, ``Delta`` the L2 sensitivity of the mean gradient), with ``d = p K``.
    Computed in O(T) with prefix log-sum-exps (the T-dependent factors of ``a_{T,t}`` split off).
    """
    Tmax = len(schedule)
    alpha = schedule.alpha
    stage = schedule.stage.astype(float)
    cs = np.concatenate([[0.0], np.cumsum(np.log1p(-np.sqrt(mu * alpha)))])
    # log a_{T,t} = u(T) + v(t)
    u = cs[1:] + stage * LN2
    v = np.log(alpha * (1.0 + alpha * L)) - cs[1:] - stage * LN2
    Ts = np.arange(1, Tmax + 1, dtype=float)
    log_a0 = cs[1:] + (stage - 1.0) * LN2
    log_S1 = u + _log_cumsum_exp(v)
    if allocation == "optimal":
        power = 1.0 / 3.0 if mechanism == "laplace" else 0.5
        log_Sp = power * u + _log_cumsum_exp(power * v)
        log_noise = log_Sp / power  # S_p^(1/p): cube (Laplace) or square (Gaussian)
    elif mechanism == "laplace":
        log_noise = 2.0 * np.log(Ts) + log_S1
    else:
        log_noise = np.log(Ts) + log_S1
    return np.exp(log_a0) * E0 + noise_coef * np.exp(log_noise)


def select_n_steps(schedule, L, mu, E0, noise_coef, mechanism, allocation):
    """T* = the smallest minimiser over ``T = 1..len(schedule)`` of :func:`bound_curve`."""
    b = bound_curve(schedule, L, mu, E0, noise_coef, mechanism, allocation)
    k = int(np.argmin(b))
    return k + 1, float(b[k])


def budget_shares(log_a, power, allocation):
    """Per-step shares of the budget, summing to 1: ``a_t^power / sum_j a_j^power`` or 1/T."""
    T = log_a.shape[0]
    if allocation == "uniform":
        return np.full(T, 1.0 / T)
    x = power * log_a
    x = np.exp(x - x.max())
    shares = x / x.sum()
    if not (np.all(np.isfinite(shares)) and np.all(shares > 0.0)):
        # no calibration from invalid shares: a NaN epsilon passes every "spent > target" check
        raise ValueError("the allocation weights are not finite and positive; the schedule's "
                         "step and strong convexity must satisfy mu * alpha < 1")
    return shares


def default_initial_gap(loss, n_outputs, clip):
    """A data-free guess of ``F(0) - F*`` (the paper's E0), used only to choose T.

    ``F* >= 0`` for every loss, and ``F(0)`` is data-free for the classification losses:
    logistic ``K ln 2``, multinomial ``ln K``, squared hinge ``K``. For the squared loss ``F(0)`` is
    the mean of ``y^2 / 2`` (Huberised): bounded by ``B^2 / 2`` with ``B`` the target half-range,
    which the default clipping ``clip = 2 B`` makes ``clip^2 / 8``.
    """
    from ..losses import LOGISTIC, MULTINOMIAL, SQUARED_HINGE

    if loss.loss_id == LOGISTIC:
        return n_outputs * LN2
    if loss.loss_id == MULTINOMIAL:
        return math.log(n_outputs)
    if loss.loss_id == SQUARED_HINGE:
        return float(n_outputs)
    return clip * clip / 8.0 if math.isfinite(clip) else 1.0


# -- turning shares into noise ----------------------------------------------------------------
def _grouped(make_event, values):
    """The composition of ``make_event(v)`` over ``values``, equal values self-composed."""
    uniq, counts = np.unique(np.asarray(values), return_counts=True)
    parts = [
        SelfComposedEvent(make_event(float(v)), int(c)) if c > 1 else make_event(float(v))
        for v, c in zip(uniq, counts)
    ]
    if len(parts) == 1:
        part = parts[0]
        return part if isinstance(part, SelfComposedEvent) else SelfComposedEvent(part, 1)
    return ComposedEvent(tuple(parts))


def laplace_scale(eps_t, S1, q):
    """Laplace scale b on the released sum for a per-step pure budget ``eps_t`` ([P] eq. 12-13).

    The mechanism on a Poisson sample with rate q is ``log(1 + q (e^eps0 - 1))``-DP (Balle et al.
    2018); to spend ``eps_t`` the sum gets ``eps0 = log(1 + (e^eps_t - 1) / q)`` and ``b = S1/eps0``
    (with q = m/n, ``b / m`` is the paper's scale on the batch mean).
    """
    eps_t = np.asarray(eps_t, dtype=float)
    eps0 = eps_t if q >= 1.0 else np.log1p(np.expm1(eps_t) / q)
    return S1 / eps0


def _laplace_event(q):
    if q >= 1.0:
        return LaplaceEvent
    return lambda nm: PoissonLaplaceEvent(q, nm)


def calibrate_laplace(shares, epsilon, q, S1):
    """Per-step Laplace scales for budget shares, and the composed pure-DP event.

    ``eps_t = epsilon * shares_t``; the total ``sum_t eps_t`` (as the accountant adds it, and as
    ``math.fsum`` adds it) is equal to ``epsilon`` up to rounding and never above it: the shares
    are shrunk by a few ulps when rounding would overshoot.

    Returns
    -------
    scales : ndarray (T,)
        Laplace scale b_t on the released sum (sensitivity ``S1`` in L1).
    event : DPEvent
    eps_t : ndarray (T,)
        Per-step budgets actually spent (after subsampling amplification).
    """
    make = _laplace_event(q)
    eps_t = epsilon * np.asarray(shares, dtype=float)
    for k in range(200):
        scales = laplace_scale(eps_t, S1, q)
        nms = scales / S1
        spent = np.array([make(float(nm)).pure_epsilon() for nm in nms])
        event = _grouped(make, nms)
        if event.pure_epsilon() <= epsilon and math.fsum(spent) <= epsilon:
            return scales, event, spent
        eps_t = eps_t * (1.0 - 2.0**-52 * 2 ** min(k, 40))
    raise RuntimeError("Laplace allocation could not be made to fit the budget")  # pragma: no cover


# Rényi orders used while searching the common scale of a non-uniform Poisson-Gaussian schedule
# (integer orders: the cheap exact series). Any subset of orders gives a valid, larger epsilon;
# the epsilon reported is computed on the accountant's full grid.
_SEARCH_ORDERS = np.concatenate(
    [np.arange(2.0, 17.0), [18.0, 20.0, 24.0, 28.0, 32.0, 40.0, 48.0, 56.0, 64.0, 80.0, 96.0,
                            128.0, 160.0, 192.0, 256.0, 384.0, 512.0]]
)


def _quantised_shape(shares, ratio_log2=0.5, max_log2=6.0):
    """Noise-multiplier shape ``c_t ~ shares_t^(-1/2)`` rounded to a grid of ratio
    ``2^ratio_log2`` and capped at ``2^max_log2`` times the smallest (few distinct values, so the
    Poisson-subsampled RDP is evaluated on few levels)."""
    c = np.sqrt(shares.max() / shares)
    k = np.minimum(np.round(np.log2(c) / ratio_log2) * ratio_log2, max_log2)
    return 2.0**k


def calibrate_gaussian(shares, q, G, budget):
    """Per-step Gaussian noise std on the released sum (L2 sensitivity ``G``), and the event.

    * full batch (q = 1): step t is a Gaussian mechanism with multiplier
      ``z_t = z / sqrt(shares_t)``, i.e. ``rho_t = shares_t / (2 z^2)``-zCDP; their composition
      is exactly one Gaussian mechanism with multiplier z (``sum_t z_t^-2 = z^-2``), so z is
      calibrated on that single Gaussian with the accountant's tight conversion.
    * Poisson (q < 1): ``z_t = s c_t`` with the shape ``c_t ~ shares_t^(-1/2)`` (rounded to a few
      levels); the common scale s is the smallest whose composed Poisson-subsampled-Gaussian RDP
      gives ``epsilon <= target`` on the accountant.

    Returns
    -------
    stds : ndarray (T,)
    event : DPEvent
    epsilon : float
        Spent epsilon at ``budget.delta`` (<= ``budget.epsilon``).
    accountant : str
        The accountant the epsilon comes from.
    multipliers : ndarray (T,)
    """
    shares = np.asarray(shares, dtype=float)
    eps, delta, acc = budget.epsilon, budget.delta, budget.accountant
    if q >= 1.0:
        z, _ = calibrate_noise_multiplier(GaussianEvent, eps, delta, "rdp")
        if acc != "rdp":  # bracket the search near the RDP answer (PLD of a tiny z is huge)
            z, _ = calibrate_noise_multiplier(GaussianEvent, eps, delta, acc, lower=z / 4.0)
        mult = z / np.sqrt(shares)
        event = _grouped(GaussianEvent, mult)
        if acc == "rdp":
            spent = compute_epsilon(event, delta, "rdp")
            while spent > eps:  # pragma: no cover - rounding guard
                mult = mult * (1.0 + 1e-9)
                event = _grouped(GaussianEvent, mult)
                spent = compute_epsilon(event, delta, "rdp")
        else:
            # the composition equals the single Gaussian with multiplier z exactly; dp-accounting
            # would compose T distinct PLDs one by one
            spent = compute_epsilon(GaussianEvent(z), delta, acc)
        return mult * G, event, spent, acc, mult

    shape = _quantised_shape(shares)
    levels, counts = np.unique(shape, return_counts=True)

    def make_group(s):
        return _grouped(lambda z: PoissonGaussianEvent(q, z), s * shape)

    def rdp_search(s, orders):
        rdp = np.zeros(orders.shape[0])
        for c, k in zip(levels, counts):
            rdp += k * rdp_poisson_subsampled_gaussian(q, s * c, orders)
        return rdp

    def eps_search(s):
        # a small epsilon wants orders above the search grid: extended as the accountant does
        return epsilon_over_orders(lambda o: rdp_search(s, o), delta, _SEARCH_ORDERS)[0]

    # 1. bisection on the integer search orders (cheap; a valid but slightly larger epsilon)
    hi = 1.0
    while eps_search(hi) > eps:
        hi *= 2.0
        if hi > 1e12:  # pragma: no cover
            raise ValueError("cannot reach the target epsilon with any finite noise")
    lo = hi / 2.0
    while eps_search(lo) <= eps and lo > 1e-6:
        hi, lo = lo, lo / 2.0
    while hi / lo > 1.0 + 1e-3:
        mid = math.sqrt(lo * hi)
        if eps_search(mid) <= eps:
            hi = mid
        else:
            lo = mid
    if len(levels) == 1:
        # 2a. one level (uniform shares): the accountant's own calibration, bracketed near the
        #     search answer (dp-accounting's PLD of a tiny noise multiplier does not fit in memory)
        def make(s):
            return make_group(s)

        s, spent = calibrate_noise_multiplier(make, eps, delta, "rdp", lower=hi / 2.0)
        if acc != "rdp":
            s, spent = calibrate_noise_multiplier(make, eps, delta, acc, lower=s / 2.0)
        return s * shape * G, make_group(s), spent, acc, s * shape

    # 2b. several levels: secant steps in log-log on the accountant's grid near the best order
    #     (fractional orders included; again a valid bound), keeping only scales it accepts
    best = epsilon_over_orders(lambda o: rdp_search(hi, o), delta, _SEARCH_ORDERS)[1]
    grid = np.concatenate([DEFAULT_ORDERS, EXTRA_ORDERS])
    near = grid[(grid >= best / 1.5) & (grid <= best * 1.5)]

    def eps_near(s):
        rdp = np.zeros(near.shape[0])
        for c, k in zip(levels, counts):
            rdp += k * rdp_poisson_subsampled_gaussian(q, s * c, near)
        return epsilon_from_rdp(near, rdp, delta)[0]

    spent = eps_near(hi)
    slope = math.log(eps_near(hi / 1.01) / spent) / math.log(1.01)
    for _ in range(6):
        if not (spent < eps * (1.0 - 1e-5) and slope > 0):
            break
        trial = hi * (spent / eps) ** (1.0 / slope)
        spent_trial = eps_near(trial)
        if spent_trial <= eps:
            hi, spent = trial, spent_trial
        else:
            slope *= 2.0  # overshoot: take shorter steps
    # 3. the epsilon reported: the accountant on its full grid (can only be lower). dp-accounting's
    #    PLD would need one subsampled-Gaussian PLD per level, so the RDP epsilon (a valid bound)
    #    is reported and the record says so.
    spent = compute_epsilon(make_group(hi), delta, "rdp")
    if spent > eps:  # pragma: no cover - cannot happen (subset of orders), kept as a guard
        raise RuntimeError("Gaussian calibration overshot the target epsilon")
    return hi * shape * G, make_group(hi), spent, "rdp", hi * shape


def make_record(event, spent, accountant, delta, mechanism, multipliers, sensitivity, q, details):
    """The :class:`~skdp.privacy.PrivacyRecord` of a fit with per-step multipliers."""
    sampling = "full batch" if q >= 1.0 else f"poisson(q={q:.6g})"
    return PrivacyRecord(
        event=event,
        epsilon=float(spent),
        delta=0.0 if mechanism == "laplace" else float(delta),
        accountant=accountant,
        mechanism=mechanism,
        noise_multiplier=float(np.min(multipliers)),
        sensitivity=float(sensitivity),
        n_steps=int(len(multipliers)),
        sampling=sampling,
        details=details,
    )
