"""dp_masg: the multi-stage accelerated (restarted Nesterov) method with DP noise.

Kuru, Birbil, Gürbüzbalaban, Yıldırım (2022), *Differentially private accelerated optimization
algorithms*, SIAM J. Optim., §4.2 (DP-MASG, DP-MASG-opt), after Aybat, Fallah, Gürbüzbalaban,
Ozdaglar (NeurIPS 2019). See ``docs/optimizers/dp_masg.rst``.
"""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from .._validation import POSITIVE_INT
from ._allocation import masg_schedule
from .dp_nag_opt import _COMMON_CONSTRAINTS, _AcceleratedDPOptimizer

__all__ = ["DPMASG"]

#: ``reselect_T="auto"``: the fit runs this many times dp_nag_opt's horizon T_1, stage 1 being
#: T_1 steps (fitted on public development data, docs/optimizers/dp_masg.rst).
STAGES_FACTOR = 2


class DPMASG(_AcceleratedDPOptimizer):
    """Differentially private multi-stage accelerated gradient (restarted Nesterov).

    The Nesterov steps of :class:`~skdp.optimizers.dp_nag_opt.DPNAGOpt`, run in stages ([P] eq.
    33): stage 1 has ``n_1 = ceil(2 sqrt(kappa) ln sqrt(kappa))`` steps with ``alpha = c / L``;
    stage ``k >= 2`` has ``2^k ceil(sqrt(kappa) ln 2^(p+2))`` steps with ``alpha_k = c / (4^k L)``;
    every stage uses ``beta_k = (1 - sqrt(mu alpha_k)) / (1 + sqrt(mu alpha_k))`` and starts with
    the momentum reset (``x_{-1} = x_0`` = the last iterate of the previous stage); the last stage
    is truncated at T. ``kappa = L / mu`` with ``L = curvature R^2 + lam``, ``mu = lam`` (public;
    L as DPNAGOpt's, from the released typical row within a floor under ``data_norm="auto"``).

    The budget is divided as in DPNAGOpt with the weights of [P] eq. 34,
    ``a_{T,t} = 2^(s_T - s_t) prod_{i>t} (1 - sqrt(mu alpha_i)) alpha_t (1 + alpha_t L)``
    (``s_t`` the stage of step t): ``eps_t ~ a_t^(1/3)`` (Laplace), ``rho_t ~ a_t^(1/2)``
    (Gaussian), or equal shares (``allocation="uniform"``, plain DP-MASG); within a stage the
    noise decreases, at each stage start it jumps up.

    **Number of steps and stages (defaults).** ``reselect_T="auto"``: stage 1 is dp_nag_opt's run
    (``T_1`` steps from :func:`~skdp.optimizers.dp_nag_opt.horizon_steps`, momentum damped within
    them by ``kappa="auto"``), and the fit continues for as many steps again in the later stages
    (step ``c / (4^k L)``, momentum reset), where the smaller steps average the noise: ``2 T_1``
    steps in all, at most ``max_iter``. So dp_masg always differs from dp_nag_opt by its second
    stage. ``reselect_T=True`` chooses the number of steps T* <= max_iter that minimises the
    paper's bound with the paper's stage 1 (``ceil(2 sqrt(kappa) ln sqrt(kappa))``, longer than
    T* whenever the regularisation is weak: dp_masg is then dp_nag_opt).

    **Neighbouring relation and sensitivity.** Zero-out (add/remove one record, n public): the
    released gradient sum of a step moves by at most ``G = clip * R`` in L2 norm and
    ``sqrt(p K) G`` in L1 norm (the paper's replace-one sensitivities are twice these).

    **Accounting.** As DPNAGOpt: Gaussian full batch, per-step Gaussian events composing exactly
    to one Gaussian calibrated on the accountant (zCDP ``rho_t`` shares); Gaussian Poisson
    mini-batch, subsampled-Gaussian RDP with the same shape and a common scale found on the
    accountant; Laplace, pure epsilon with ``sum_t eps_t = epsilon`` and the subsampling
    amplification ``eps0 = log(1 + (e^eps_t - 1) / q)``.

    Parameters
    ----------
    max_iter : int >= 1 or None, default=None
        Private fit: the largest number of noisy steps (None: 1000). ``epsilon=inf``: the cap on
        the iterations of the non-private solver (None: 1000).
    batch_size : None, int or float, default=None
        None: full batch. An int: the expected Poisson batch size. A float in (0, 1]: the
        Poisson sampling rate.
    c : "auto" or float, default="auto"
        Step multiplier of every stage (``c <= 1`` for the theory). "auto": as dp_nag_opt's
        (1 for every loss).
    allocation : {"optimal", "uniform"}, default="optimal"
    reselect_T : "auto" or bool, default="auto"
        "auto": ``2 T_1`` steps, stage 1 of ``T_1`` (above); True: the bound's T* <= max_iter;
        False: ``max_iter`` steps.
    kappa : "auto", float >= 1 or None, default="auto"
        The condition number the schedule assumes (each stage's momentum, the stage lengths of
        eq. 33 and the allocation weights). "auto": ``min(L / mu, (T_1 / c_k)^2)`` (see DPNAGOpt;
        ``L / mu`` with ``reselect_T=True``); None: ``L / mu``; a number: ``min(kappa, L / mu)``.
        Must exceed ``c``; a number far below ``(T_1 / c_k)^2`` starves the first steps of budget
        (the fit warns), as for DPNAGOpt.
    E0 : "auto" or float, default="auto"
        Guess of ``F(x_0) - F*`` that chooses T*, and through T* each step's noise (see
        DPNAGOpt; "auto" is data-free).
    mechanism : {"gaussian", "laplace"}, default="gaussian"
    stage_p : float >= 1, default=1
        The paper's p >= 1 in the stage length ``2^k ceil(sqrt(kappa) ln 2^(p+2))``.
    first_stage : int or None, default=None
        Length n_1 of stage 1 (None: ``T_1`` under ``reselect_T="auto"``, else
        ``ceil(2 sqrt(kappa) ln sqrt(kappa))``, at least 1).
    tol : float > 0 or None, default=None
        Tolerance of the non-private fit (``epsilon=inf`` only; the stages are irrelevant
        without noise and the shared L-BFGS solver is used): the largest absolute gradient
        component at the solution (None: 1e-8).

    Notes
    -----
    ``max_iter``, ``c``, ``E0``, ``stage_p`` and ``first_stage`` set the schedule, T* and the
    allocation of the budget: they are public and must not be derived from the private data
    (their defaults are data-free; choosing them on the private data is a release).

    Deviations from the paper, and why: those of DPNAGOpt (Gaussian default, zero-out, data-free
    L, Laplace scale b, Poisson sampling, ``x_0 = 0``); the momentum ``beta_k`` and ``n_1``, which
    eq. 33 leaves open, are the authors' code's choices.
    """

    name = "dp_masg"
    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "stage_p": [Interval(Real, 1, np.inf, closed="left")],
        "first_stage": [POSITIVE_INT, None],
    }

    def __init__(
        self, max_iter=None, batch_size=None, c="auto", allocation="optimal", reselect_T="auto",
        kappa="auto", E0="auto", mechanism="gaussian", stage_p=1, first_stage=None, tol=None,
    ):
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.c = c
        self.allocation = allocation
        self.reselect_T = reselect_T
        self.kappa = kappa
        self.E0 = E0
        self.mechanism = mechanism
        self.stage_p = stage_p
        self.first_stage = first_stage
        self.tol = tol

    def _total_steps(self, horizon):
        # stage 1 is dp_nag_opt's horizon; the later stages (smaller steps, averaging the noise)
        # get as many steps again
        return STAGES_FACTOR * horizon

    def _schedule(self, L, mu, T, horizon=None, c=1.0):
        first = self.first_stage
        if first is None and horizon is not None:
            first = horizon  # reselect_T="auto": stage 1 is dp_nag_opt's run
        return masg_schedule(T, L, mu, c, float(self.stage_p), first)
