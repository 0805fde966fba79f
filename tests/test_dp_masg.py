"""dp_masg: the stage schedule (eq. 33), the Figure 2 allocation, T*, the kernel, estimators."""

import math

import numpy as np
import pytest

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.losses import get_loss
from skdp.optimizers import Budget, Problem
from skdp.optimizers._allocation import (
    budget_shares,
    calibrate_gaussian,
    calibrate_laplace,
    log_weights,
    masg_schedule,
    masg_stage_lengths,
    select_n_steps,
)
from skdp.optimizers._base import empty_trace
from skdp.optimizers._nesterov import nesterov_kernel
from skdp.optimizers.dp_masg import DPMASG
from skdp.privacy import compute_epsilon
from skdp.privacy.noise import GAUSSIAN

from ._helpers import breast_cancer, diabetes, iris, relative_objective_gap

PAPER = dict(L=5.1028, mu=0.02, n=1e5, d=20, S1=40.0, eps=1.0, E0=10.0)


def test_stage_lengths_of_the_paper_setting():
    # spec section 4.3: kappa = 255.14 -> n1 = 89, unit 34; T = 1000 -> 89, 136, 272, 503
    P = PAPER
    assert masg_stage_lengths(P["L"] / P["mu"]) == (89, 34)
    sched = masg_schedule(1000, P["L"], P["mu"], 1.0)
    assert list(np.bincount(sched.stage)[1:]) == [89, 136, 272, 503]
    sched = masg_schedule(500, P["L"], P["mu"], 1.0)
    assert list(np.bincount(sched.stage)[1:]) == [89, 136, 272, 3]


def test_schedule_steps_momenta_restarts():
    L, mu, c = 5.0, 0.02, 0.5
    sched = masg_schedule(700, L, mu, c)
    for k in np.unique(sched.stage):
        idx = np.where(sched.stage == k)[0]
        alpha = c / L if k == 1 else c / (4.0**k * L)
        assert np.all(sched.alpha[idx] == alpha)
        r = math.sqrt(mu * alpha)
        np.testing.assert_allclose(sched.beta[idx], (1 - r) / (1 + r), rtol=1e-14)
        # momentum reset at the first step of every stage k >= 2, nowhere else
        assert bool(sched.restart[idx[0]]) == (k >= 2)
        assert not np.any(sched.restart[idx[1:]])


@pytest.mark.parametrize("K, T", [(2, 53), (3, 133), (4, 293), (5, 613)])
def test_figure_2_optimal_laplace_scales(K, T):
    # anchor 3: kappa = 20, L = 20, p = 1, c = 1 (n1 = 13 as in the authors' figure script):
    # b_t n eps / S1 = sum_j a_j^(1/3) / a_t^(1/3) at stage starts and ends
    table = {
        2: ([65.3, 91.2], [23.7, 43.2], 0.01532, 0.02315),
        3: ([154.7, 216.2, 205.8], [56.2, 102.3, 97.6], 0.00646, 0.01025),
        4: ([343.4, 479.9, 456.9, 432.8], [124.8, 227.2, 216.6, 205.3], 0.00291, 0.00487),
        5: ([741.8, 1036.4, 986.8, 934.7, 885.5], [269.5, 490.6, 467.8, 443.3, 420.1],
            0.00135, 0.00238),
    }
    starts, ends, e_first, e_last = table[K]
    L, mu = 20.0, 1.0
    sched = masg_schedule(T, L, mu, 1.0, p=1, first_stage=13)
    assert list(np.bincount(sched.stage)[1:]) == [13] + [10 * 2**k for k in range(2, K + 1)]
    log_a, _ = log_weights(sched, T, L, mu)
    shares = budget_shares(log_a, 1.0 / 3.0, "optimal")
    b = 1.0 / shares  # b_t n eps / S1 for m = n
    got_starts = [b[np.where(sched.stage == k)[0][0]] for k in range(1, K + 1)]
    got_ends = [b[np.where(sched.stage == k)[0][-1]] for k in range(1, K + 1)]
    np.testing.assert_allclose(got_starts, starts, atol=0.051)
    np.testing.assert_allclose(got_ends, ends, atol=0.051)
    assert shares[0] == pytest.approx(e_first, abs=5e-6)
    assert shares[-1] == pytest.approx(e_last, abs=5e-6)
    # and the Laplace budgets of that schedule sum to epsilon exactly
    _, event, spent = calibrate_laplace(shares, 1.0, 1.0, 1.0)
    assert math.fsum(spent) <= 1.0 and math.fsum(spent) == pytest.approx(1.0, rel=1e-12)
    assert event.pure_epsilon() <= 1.0


@pytest.mark.parametrize("c", [0.1, 1.0])
@pytest.mark.parametrize("noise_factor, E0_factor", [(1.0, 1.0), (0.5, 2.0)])
def test_T_star_stops_at_end_of_stage_one(c, noise_factor, E0_factor):
    # anchor 5: DP-MASG-opt T* = 89 (= n1) for every T >= 89, both c, either formula
    P = PAPER
    coef = P["d"] * (P["S1"] / (P["n"] * P["eps"])) ** 2 * noise_factor
    for T in (100, 200, 500, 1000):
        sched = masg_schedule(T, P["L"], P["mu"], c)
        T_star, _ = select_n_steps(sched, P["L"], P["mu"], P["E0"] * E0_factor, coef, "laplace",
                                   "optimal")
        assert T_star == 89


def test_gaussian_shares_follow_stage_weights():
    L, mu = 20.0, 1.0
    T = 133
    sched = masg_schedule(T, L, mu, 1.0, first_stage=13)
    log_a, _ = log_weights(sched, T, L, mu)
    shares = budget_shares(log_a, 0.5, "optimal")
    _, event, spent, _, mult = calibrate_gaussian(shares, 1.0, 1.0, Budget(1.0, 1e-6))
    rho = 1.0 / (2.0 * mult**2)
    np.testing.assert_allclose(rho / rho.sum(), shares, rtol=1e-10)
    # sawtooth: the noise jumps up at each stage start, decreases within a stage
    starts = np.where(sched.restart)[0]
    assert np.all(mult[starts] > mult[starts - 1])
    assert spent <= 1.0 and compute_epsilon(event, 1e-6) <= 1.0


def _numpy_multistage(X, Y, lam, sched, inv_n):
    """Reference: restarted Nesterov without noise (logistic, clip inf), in numpy."""
    w = np.zeros(X.shape[1])
    w_prev = w.copy()
    for t in range(len(sched)):
        if sched.restart[t]:
            w_prev = w.copy()
        b = sched.beta[t]
        yv = (1 + b) * w - b * w_prev
        z = X @ yv
        g = X.T @ (-Y[:, 0] / (1 + np.exp(Y[:, 0] * z)))
        w_prev = w
        w = yv - sched.alpha[t] * (g * inv_n + lam * yv)
    return w


def test_kernel_matches_numpy_recursion_with_restarts():
    X, y = breast_cancer()
    n = X.shape[0]
    Xa = np.ascontiguousarray(np.hstack([X, np.ones((n, 1))]))
    Y = np.ascontiguousarray(np.where(y == 1, 1.0, -1.0)[:, None])
    L, mu = 0.5 + 1e-2, 1e-2
    sched = masg_schedule(150, L, mu, 1.0, first_stage=20)
    assert sched.restart.sum() >= 2
    w = np.zeros(Xa.shape[1])
    nesterov_kernel(Xa, Y, w, 0, math.inf, mu, 1.0, 1.0 / n, sched.alpha, sched.beta,
                    sched.restart, GAUSSIAN, np.zeros(len(sched)), np.random.default_rng(0),
                    np.arange(n, dtype=np.int64), empty_trace())
    np.testing.assert_allclose(w, _numpy_multistage(Xa, Y, mu, sched, 1.0 / n), rtol=1e-9,
                               atol=1e-12)


def test_private_fit_record_and_schedule():
    X, y = breast_cancer()
    n = X.shape[0]
    Xa = np.ascontiguousarray(np.hstack([X, np.ones((n, 1))]))
    Y = np.ascontiguousarray(np.where(y == 1, 1.0, -1.0)[:, None])
    problem = Problem(X=Xa, Y=Y, loss=get_loss("logistic"), lam=1e-2, row_norm_bound=math.sqrt(2),
                      clip=1.0)
    opt = DPMASG(max_iter=400, reselect_T=False, mechanism="laplace", first_stage=30)
    res = opt.solve(problem, Budget(1.0, 1e-6), np.random.default_rng(0), record_trace=True)
    sched = res.extras["schedule"]
    assert res.n_iter == 400 == len(sched) == res.trace.shape[0]
    assert res.mechanism_record.epsilon <= 1.0
    assert res.mechanism_record.epsilon == pytest.approx(1.0, rel=1e-12)
    assert res.mechanism_record.sensitivity == pytest.approx(math.sqrt(problem.dim) * problem.gradient_bound)
    assert list(res.mechanism_record.details["stage_lengths"][:1]) == [30]
    # the recorded noise has the Laplace scale b of each step (E|noise| = b)
    u = (res.trace[:, 1] - res.trace[:, 0]) / res.extras["noise_scale"][:, None]
    assert np.mean(np.abs(u)) == pytest.approx(1.0, abs=0.05)


def test_same_seed_same_model_and_budget():
    X, y = breast_cancer()
    a = DPLogisticRegression(optimizer="dp_masg", random_state=2).fit(X, y)
    b = DPLogisticRegression(optimizer="dp_masg", random_state=2).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.epsilon_ <= 1.0 and a.delta_ > 0


@pytest.mark.parametrize(
    "kind, cls, data, reg",
    [
        ("logistic", DPLogisticRegression, iris, 1.0),
        ("ridge", DPRidge, diabetes, 0.1),
        ("svc", DPLinearSVC, iris, 1.0),
    ],
)
def test_epsilon_inf_reaches_sklearn_optimum(kind, cls, data, reg):
    X, y = data()
    param = "alpha" if kind == "ridge" else "C"
    est = cls(epsilon=np.inf, optimizer="dp_masg", **{param: reg}).fit(X, y)
    assert est.epsilon_ == np.inf
    assert relative_objective_gap(kind, est, X, y, reg) < 1e-4


@pytest.mark.parametrize(
    "params",
    [{"stage_p": 0}, {"stage_p": "1"}, {"first_stage": 0}, {"first_stage": 1.5},
     {"allocation": "x"}, {"mechanism": "laplacian"}, {"c": -1.0}],
)
def test_invalid_parameters_raise(params):
    X, y = breast_cancer()
    with pytest.raises(ValueError):
        DPLogisticRegression(optimizer=DPMASG(**params)).fit(X, y)
