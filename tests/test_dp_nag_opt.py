"""dp_nag_opt: allocation anchors of the spec (section 6.4), accounting, the kernel, estimators."""

import math

import numpy as np
import pytest

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.losses import get_loss
from skdp.optimizers import Budget, Problem
from skdp.optimizers._allocation import (
    bound_curve,
    budget_shares,
    calibrate_gaussian,
    calibrate_laplace,
    laplace_scale,
    log_weights,
    nag_schedule,
    select_n_steps,
)
from skdp.optimizers.dp_gdws import DPGDWS
from skdp.optimizers.dp_nag_opt import DPNAGOpt
from skdp.privacy import DEFAULT_ORDERS, GaussianEvent, PoissonLaplaceEvent, compute_epsilon

from ._helpers import breast_cancer, diabetes, iris, relative_objective_gap

# The paper's experiment (spec section 4.3): L, mu from the re-run, n = 1e5, d = 20, S1 = 40
# (replace-one L1 sensitivity of the paper), epsilon = 1, E0 = 10.
PAPER = dict(L=5.1028, mu=0.02, n=1e5, d=20, S1=40.0, eps=1.0, E0=10.0)


def _paper_T_star(c, T, noise_factor=1.0, E0_factor=1.0):
    P = PAPER
    coef = P["d"] * (P["S1"] / (P["n"] * P["eps"])) ** 2 * noise_factor
    sched = nag_schedule(T, P["L"], P["mu"], c)
    return select_n_steps(sched, P["L"], P["mu"], P["E0"] * E0_factor, coef, "laplace", "optimal")[0]


def _problem(X, y, clip=1.0, lam=None):
    n = X.shape[0]
    Xa = np.ascontiguousarray(np.hstack([X, np.ones((n, 1))]))
    Y = np.where(y == np.unique(y)[1], 1.0, -1.0)[:, None]
    R = math.sqrt(1.0 + 1.0)
    return Problem(
        X=Xa, Y=np.ascontiguousarray(Y), loss=get_loss("logistic"),
        lam=1.0 / n if lam is None else lam, row_norm_bound=R, clip=clip,
    )


# -- spec section 6.4 anchors -------------------------------------------------------------------
@pytest.mark.parametrize(
    "c, expected", [(1.0, [100, 106, 106, 106]), (0.1, [100, 200, 303, 303])]
)
def test_T_star_paper_formula(c, expected):
    # anchor 5: (P-32) as printed
    assert [_paper_T_star(c, T) for T in (100, 200, 500, 1000)] == expected


@pytest.mark.parametrize(
    "c, expected", [(1.0, [100, 136, 136, 136]), (0.1, [100, 200, 396, 396])]
)
def test_T_star_authors_code_variant(c, expected):
    # anchor 5, the authors' code: noise term halved (alpha/2 in a_{T,t}), a_{T,0} doubled
    got = [_paper_T_star(c, T, noise_factor=0.5, E0_factor=2.0) for T in (100, 200, 500, 1000)]
    assert got == expected


def test_constant_step_closed_form_allocation():
    # anchor 4: eps_t = eps q^(T-t) (1-q) / (1-q^T), q = (1 - sqrt(mu alpha))^(1/3)
    T, L, mu, c, eps = 73, 5.0, 0.02, 0.5, 0.7
    sched = nag_schedule(T, L, mu, c)
    log_a, log_a0 = log_weights(sched, T, L, mu)
    eps_t = eps * budget_shares(log_a, 1.0 / 3.0, "optimal")
    alpha = c / L
    qq = (1.0 - math.sqrt(mu * alpha)) ** (1.0 / 3.0)
    t = np.arange(1, T + 1)
    np.testing.assert_allclose(eps_t, eps * qq ** (T - t) * (1 - qq) / (1 - qq**T), rtol=1e-12)
    assert log_a0 == pytest.approx(T * math.log(1.0 - math.sqrt(mu * alpha)))
    assert np.all(np.diff(eps_t) > 0)  # later steps get more budget


@pytest.mark.parametrize("q", [1.0, 0.01, 0.3])
def test_inverse_subsampling_round_trip(q):
    # anchor 1: eps(S1, laplace_scale(eps_t, S1, q), q) == eps_t
    S1 = 3.7
    eps_t = np.array([1e-4, 0.01, 0.3, 1.0, 2.5])
    b = laplace_scale(eps_t, S1, q)
    back = [PoissonLaplaceEvent(q, bi / S1).pure_epsilon() if q < 1 else S1 / bi for bi in b]
    np.testing.assert_allclose(back, eps_t, rtol=1e-12)


@pytest.mark.parametrize("allocation", ["optimal", "uniform"])
@pytest.mark.parametrize("q", [1.0, 0.01])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_laplace_budgets_sum_to_total_exactly(allocation, q, eps):
    T = 257
    sched = nag_schedule(T, 2.0, 1e-3, 1.0)
    log_a, _ = log_weights(sched, T, 2.0, 1e-3)
    shares = budget_shares(log_a, 1.0 / 3.0, allocation)
    scales, event, spent = calibrate_laplace(shares, eps, q, 2.0)
    assert math.fsum(spent) <= eps
    assert math.fsum(spent) == pytest.approx(eps, rel=1e-12, abs=0)
    assert event.pure_epsilon() <= eps
    assert event.pure_epsilon() == pytest.approx(eps, rel=1e-12, abs=0)
    assert compute_epsilon(event, 0.0) <= eps
    if allocation == "optimal":
        assert np.all(np.diff(scales) < 0)  # noise decreases along the run
    else:
        assert np.ptp(scales) == 0.0


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_gaussian_full_batch_rho_shares_compose_to_target(accountant):
    T, eps, delta = 120, 1.0, 1e-6
    sched = nag_schedule(T, 0.5, 1e-3, 1.0)
    log_a, _ = log_weights(sched, T, 0.5, 1e-3)
    shares = budget_shares(log_a, 0.5, "optimal")
    stds, event, spent, acc, mult = calibrate_gaussian(shares, 1.0, 2.0, Budget(eps, delta, accountant))
    np.testing.assert_allclose(stds, 2.0 * mult)
    rho_t = 1.0 / (2.0 * mult**2)
    # rho_t proportional to a_t^(1/2)
    np.testing.assert_allclose(rho_t / rho_t.sum(), np.exp(0.5 * log_a) / np.exp(0.5 * log_a).sum(), rtol=1e-10)
    # composed per-step events: within the target, and not wasteful
    assert spent <= eps
    assert spent > 0.999 * eps
    # the composition is exactly one Gaussian with z^-2 = sum z_t^-2
    z_eff = 1.0 / math.sqrt(np.sum(mult**-2.0))
    assert compute_epsilon(GaussianEvent(z_eff), delta, accountant) == pytest.approx(spent, rel=1e-9)
    if accountant == "rdp":
        eps_composed = compute_epsilon(event, delta, "rdp")
        assert eps_composed <= eps
        assert eps_composed == pytest.approx(spent, rel=1e-9)
    # the total rho is more than Bun-Steinke's conservative rho for the same budget
    ld = math.log(1.0 / delta)
    assert rho_t.sum() > (math.sqrt(eps + ld) - math.sqrt(ld)) ** 2


def test_gaussian_composition_agrees_with_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    T, eps, delta = 40, 0.5, 1e-5
    sched = nag_schedule(T, 0.5, 1e-2, 1.0)
    log_a, _ = log_weights(sched, T, 0.5, 1e-2)
    shares = budget_shares(log_a, 0.5, "optimal")
    _, event, spent, _, _ = calibrate_gaussian(shares, 1.0, 1.0, Budget(eps, delta))
    acc = rdp_privacy_accountant.RdpAccountant(
        orders=list(DEFAULT_ORDERS),
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL,
    )
    acc.compose(event.to_dp_accounting())
    # dp-accounting on the same grid; skdp refines between grid orders, which can only lower it
    assert acc.get_epsilon(delta) == pytest.approx(spent, rel=1e-4)
    assert spent <= acc.get_epsilon(delta) * (1 + 1e-12)


def test_gaussian_poisson_common_scale_on_accountant():
    T, eps, delta, q = 60, 1.0, 1e-5, 0.02
    sched = nag_schedule(T, 0.5, 1e-2, 1.0)
    log_a, _ = log_weights(sched, T, 0.5, 1e-2)
    shares = budget_shares(log_a, 0.5, "optimal")
    stds, event, spent, acc, mult = calibrate_gaussian(shares, q, 1.0, Budget(eps, delta))
    assert acc == "rdp"
    assert spent == pytest.approx(compute_epsilon(event, delta, "rdp"))
    assert 0.97 * eps < spent <= eps
    assert np.all(np.diff(mult) <= 0)  # same shape as the full-batch optimum: noise decreases
    assert mult[0] > mult[-1]


def test_uniform_allocation_matches_dp_gdws_calibration():
    X, y = breast_cancer()
    problem = _problem(X, y)
    budget = Budget(1.0, 1e-6)
    for mech in ("gaussian", "laplace"):
        nag = DPNAGOpt(max_iter=50, allocation="uniform", reselect_T=False, mechanism=mech)
        schedule, scales, record = nag._plan(problem, budget, 1.0)
        scale_gdws, record_gdws = DPGDWS(mechanism=mech)._calibrate(problem, budget, 50, 1.0)
        # both are bisections to a relative 1e-6 in z (one on z_eff, one on z_eff sqrt(T))
        np.testing.assert_allclose(scales, scale_gdws, rtol=1e-5)
        assert record.epsilon == pytest.approx(record_gdws.epsilon, rel=1e-5)
        assert record.epsilon <= 1.0


# -- the fit ------------------------------------------------------------------------------------
def test_plan_uses_public_quantities_only():
    X, y = breast_cancer()
    rng = np.random.default_rng(0)
    X2 = rng.normal(size=X.shape)
    X2 /= np.linalg.norm(X2, axis=1, keepdims=True)
    y2 = rng.permutation(y)
    budget = Budget(1.0, 1e-6)
    for opt in (DPNAGOpt(), DPNAGOpt(mechanism="laplace", batch_size=100)):
        s1, sc1, r1 = opt._plan(_problem(X, y), budget, 1.0)
        s2, sc2, r2 = opt._plan(_problem(X2, y2), budget, 1.0)
        np.testing.assert_array_equal(sc1, sc2)
        np.testing.assert_array_equal(s1.alpha, s2.alpha)
        assert r1.epsilon == r2.epsilon


@pytest.mark.parametrize("kappa", [None, "auto"])
def test_schedule_from_public_constants(kappa):
    X, y = breast_cancer()
    problem = _problem(X, y)
    res = DPNAGOpt(c=0.5, kappa=kappa).solve(problem, Budget(1.0, 1e-6), np.random.default_rng(0))
    L, mu = problem.smoothness, problem.strong_convexity
    sched = res.extras["schedule"]
    T = res.n_iter
    if kappa == "auto":
        # the momentum damps within the T steps run: kappa' = min(L/mu, max(4, (T/1.5)^2)), 1.5
        # the documented constant of the classification losses (logistic here)
        assert 4.0 < (T / 1.5) ** 2 < L / mu
        mu = L / (T / 1.5) ** 2
    alpha = 0.5 / L
    assert np.all(sched.alpha == alpha)
    np.testing.assert_allclose(
        sched.beta, (1 - math.sqrt(alpha * mu)) / (1 + math.sqrt(alpha * mu)), rtol=1e-14
    )
    assert res.n_iter == len(sched) <= 1000
    assert res.record.epsilon <= 1.0


def _clipped_sums(X, Y, W, tau):
    """Per-example clipped logistic gradients summed (numpy reference)."""
    z = X @ W
    s = -Y / (1.0 + np.exp(Y * z))
    s = np.clip(s, -tau, tau)
    return X.T @ s


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_trace_replay_and_zero_out_sensitivity(mechanism):
    # The output is a function of the released noisy sums only, and at every released point the
    # clipped sum of a zero-out neighbour differs by at most the declared sensitivity.
    X, y = breast_cancer()
    problem = _problem(X, y)
    opt = DPNAGOpt(max_iter=40, reselect_T=False, mechanism=mechanism)
    res = opt.solve(problem, Budget(2.0, 1e-6), np.random.default_rng(1), record_trace=True)
    trace, sched = res.trace, res.extras["schedule"]
    n = problem.n_samples
    w = np.zeros(problem.dim)
    w_prev = w.copy()
    Xn = problem.X.copy()
    Xn[7] = 0.0  # the zero-out neighbour
    ord_ = 2 if mechanism == "gaussian" else 1
    worst = 0.0
    for t in range(len(sched)):
        yv = (1 + sched.beta[t]) * w - sched.beta[t] * w_prev
        ref = _clipped_sums(problem.X, problem.Y, yv[:, None], problem.clip).ravel()
        np.testing.assert_allclose(trace[t, 0], ref, rtol=1e-10, atol=1e-10)
        nb = _clipped_sums(Xn, problem.Y, yv[:, None], problem.clip).ravel()
        worst = max(worst, np.linalg.norm(ref - nb, ord_) / res.mechanism_record.sensitivity)
        w_prev = w
        w = yv - sched.alpha[t] * (trace[t, 1] / n + problem.lam * yv)
    np.testing.assert_allclose(w, res.coef.ravel(), rtol=1e-10, atol=1e-12)
    assert worst <= 1.0 + 1e-12
    # the noise has the declared scale: Gaussian std, Laplace scale b (E|noise| = b)
    u = (trace[:, 1] - trace[:, 0]) / res.extras["noise_scale"][:, None]
    if mechanism == "gaussian":
        assert np.std(u) == pytest.approx(1.0, abs=0.05)
    else:
        assert np.mean(np.abs(u)) == pytest.approx(1.0, abs=0.05)


def test_same_seed_same_model():
    X, y = breast_cancer()
    a = DPLogisticRegression(optimizer="dp_nag_opt", random_state=5).fit(X, y)
    b = DPLogisticRegression(optimizer="dp_nag_opt", random_state=5).fit(X, y)
    c = DPLogisticRegression(optimizer="dp_nag_opt", random_state=6).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)
    assert a.epsilon_ <= 1.0


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_minibatch_fit_spends_at_most_target(mechanism):
    X, y = breast_cancer()
    est = DPLogisticRegression(
        epsilon=2.0, optimizer=DPNAGOpt(mechanism=mechanism, batch_size=128, max_iter=30),
        random_state=0, data_norm=1.0,  # public: a subsampled event cannot follow private bounds
    ).fit(X, y)
    assert est.epsilon_ <= 2.0
    assert est.privacy_record_.sampling.startswith("poisson")
    assert est.score(X, y) > 0.6


@pytest.mark.parametrize(
    "kind, cls, data, reg",
    [
        ("logistic", DPLogisticRegression, breast_cancer, 1.0),
        ("ridge", DPRidge, diabetes, 1.0),
        ("svc", DPLinearSVC, iris, 1.0),
    ],
)
def test_epsilon_inf_reaches_sklearn_optimum(kind, cls, data, reg):
    X, y = data()
    param = "alpha" if kind == "ridge" else "C"
    est = cls(epsilon=np.inf, optimizer="dp_nag_opt", **{param: reg}).fit(X, y)
    assert est.epsilon_ == np.inf
    assert relative_objective_gap(kind, est, X, y, reg) < 1e-4


def test_more_budget_less_error():
    # statistical sanity of the whole private path: at a large budget the private model is close
    # to the non-private one, at a tiny budget it is not
    X, y = breast_cancer()
    ref = DPLogisticRegression(epsilon=np.inf, optimizer="dp_nag_opt").fit(X, y).coef_
    err = {}
    for eps in (0.05, 50.0):
        errs = [
            np.linalg.norm(
                DPLogisticRegression(epsilon=eps, optimizer="dp_nag_opt", random_state=s).fit(X, y).coef_
                - ref
            )
            for s in range(3)
        ]
        err[eps] = np.mean(errs)
    assert err[50.0] < 0.5 * err[0.05]


@pytest.mark.parametrize(
    "params",
    [
        {"mechanism": "exponential"},
        {"allocation": "best"},
        {"c": 0.0},
        {"c": "1"},
        {"max_iter": 0},
        {"max_iter": 2.5},
        {"reselect_T": "yes"},
        {"E0": -1.0},
        {"E0": "guess"},
        {"tol": 0.0},
        {"batch_size": 0},
    ],
)
def test_invalid_parameters_raise(params):
    X, y = breast_cancer()
    with pytest.raises(ValueError):
        DPLogisticRegression(optimizer=DPNAGOpt(**params)).fit(X, y)


def test_bound_curve_uniform_is_worse_than_optimal():
    sched = nag_schedule(300, 0.5, 1e-3, 1.0)
    for mech in ("laplace", "gaussian"):
        opt = bound_curve(sched, 0.5, 1e-3, 1.0, 1e-6, mech, "optimal")
        uni = bound_curve(sched, 0.5, 1e-3, 1.0, 1e-6, mech, "uniform")
        assert np.all(opt <= uni * (1 + 1e-12))
        assert opt[-1] < uni[-1]


@pytest.mark.parametrize("name", ["dp_nag_opt", "dp_masg"])
@pytest.mark.parametrize("params, alpha", [({"kappa": 1.0}, 1.0), ({"c": 1.5}, 1e6)])
def test_step_at_or_above_the_assumed_curvature_is_refused_not_hung(name, params, alpha):
    """``c >= kappa`` (here ``kappa=1`` with c = 1, or c = 1.5 on a ridge so regularised that
    L / mu ~ 1) makes the schedule's contraction ``1 - sqrt(c / kappa)`` zero or negative: the
    allocation weights were NaN and the calibration looped for ever. Now a clear ValueError."""
    from skdp.optimizers import get_optimizer_class

    X, y = diabetes()
    optimizer = get_optimizer_class(name)(**params)
    with pytest.raises(ValueError, match="must be smaller than the condition number"):
        DPRidge(epsilon=1.0, delta=1e-5, alpha=alpha, optimizer=optimizer, data_norm=3.0,
                y_bounds=(-3.0, 3.0), random_state=0).fit(X, y)


def test_budget_shares_refuse_invalid_weights():
    from skdp.optimizers._allocation import budget_shares

    with pytest.raises(ValueError, match="not finite and positive"):
        budget_shares(np.array([0.0, np.nan, -1.0]), 0.5, "optimal")
    shares = budget_shares(np.array([0.0, -1.0, -2.0]), 0.5, "optimal")
    assert np.isclose(shares.sum(), 1.0) and np.all(shares > 0)


@pytest.mark.parametrize("name", ["dp_nag_opt", "dp_masg"])
def test_an_overstated_kappa_that_starves_the_first_steps_warns(name):
    """kappa=4 over ~100 steps gives the first steps 1e-19 of the last one's share: their noise
    is never damped (R^2 about -5e11 here). The fit warns; the default kappa and the uniform
    allocation do not."""
    import warnings

    from sklearn.datasets import make_regression

    from skdp.optimizers import get_optimizer_class

    X, y = make_regression(10000, 20, noise=10.0, random_state=0)
    X, y = X / np.linalg.norm(X, axis=1).max(), y / np.abs(y).max()
    cls = get_optimizer_class(name)

    def fit(**params):
        return DPRidge(epsilon=3.0, delta=1e-5, optimizer=cls(**params), data_norm=1.0,
                       y_bounds=(-1.0, 1.0), random_state=0).fit(X, y)

    with pytest.warns(UserWarning, match="of the last step's budget share"):
        starved = fit(kappa=4.0)
    assert starved.score(X, y) < 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fit().score(X, y) > 0.9
        assert fit(kappa=4.0, allocation="uniform").score(X, y) > 0.8


# -- the step from the typical row (session 14) ---------------------------------------------------
def test_step_smoothness_takes_the_typical_row_within_the_floor():
    """``step_smoothness`` replaces R^2 by ``max(typical^2, 0.8 R^2)`` (typical at most R, the
    bound without one); the sensitivity and the worst-case smoothness are untouched."""
    import dataclasses

    X, y = breast_cancer()
    p = _problem(X, y)
    R, lam, curvature = p.row_norm_bound, p.lam, 0.25  # the logistic loss's curvature
    assert p.step_smoothness == p.smoothness == pytest.approx(curvature * R * R + lam)
    for typical, scale2 in ((0.5 * R, 0.8 * R * R), (0.95 * R, (0.95 * R) ** 2), (2 * R, R * R)):
        q = dataclasses.replace(p, typical_row_norm=typical)
        assert q.step_smoothness == pytest.approx(curvature * scale2 + lam, rel=1e-12)
        assert (q.smoothness, q.gradient_bound) == (p.smoothness, p.gradient_bound)


@pytest.mark.parametrize("name", ["dp_nag_opt", "dp_masg"])
def test_schedule_steps_with_the_step_smoothness_and_spends_the_same_budget(name):
    import dataclasses

    from skdp.optimizers import get_optimizer_class

    X, y = breast_cancer()
    p = _problem(X, y)
    q = dataclasses.replace(p, typical_row_norm=0.1 * p.row_norm_bound)
    budget = Budget(1.0, 1e-6)
    opt = get_optimizer_class(name)()
    a = opt.solve(p, budget, np.random.default_rng(0))
    b = opt.solve(q, budget, np.random.default_rng(0))
    L_step = 0.25 * 0.8 * p.row_norm_bound ** 2 + p.lam  # the floor decides
    assert b.extras["hyperparameters"]["smoothness"] == pytest.approx(L_step, rel=1e-12)
    assert a.extras["hyperparameters"]["smoothness"] == pytest.approx(p.smoothness, rel=1e-12)
    alpha = b.extras["schedule"].alpha  # STEP_C = 1: 1 / L, dp_masg's later stages shorter
    assert alpha[0] == pytest.approx(1.0 / L_step, rel=1e-12) and alpha.max() <= alpha[0]
    assert a.n_iter == b.n_iter  # the horizon is a function of n and the budget only
    assert a.record.epsilon <= 1.0 and b.record.epsilon <= 1.0
    assert b.record.sensitivity == a.record.sensitivity == p.gradient_bound


@pytest.mark.parametrize("cls, curvature", [(DPRidge, 1.0), (DPLogisticRegression, 0.25)])
def test_estimator_steps_from_the_released_median_row(cls, curvature):
    """data_norm="auto": the step assumes the floor 0.8 R^2 (the typical row, the released
    median with the intercept column of the same size, is below it: (1 + 1) / (1.5^2 + 1) of
    R^2); the same fit with that bound and intercept scaling given as public numbers assumes R^2.
    The difference is computed here from the released values alone."""
    from sklearn.datasets import load_breast_cancer, load_diabetes

    load = load_diabetes if cls is DPRidge else load_breast_cancer
    X, y = load(return_X_y=True)
    kw = dict(epsilon=1.0, delta=1e-5, optimizer="dp_nag_opt", random_state=0)
    if cls is DPRidge:
        kw["y_bounds"] = (25.0, 346.0)
    auto = cls(**kw).fit(X, y)
    D, s = auto.data_norm_, auto.intercept_scaling_
    median = auto.privacy_record_.details["private_bounds"]["data_norm"]["value"]
    assert s == median and D == 1.5 * median
    public = cls(**kw, data_norm=D, intercept_scaling=s).fit(X, y)
    R2 = (D * D + s * s) / (D * D)  # in the optimizer's units (rows of norm <= 1)
    assert (median ** 2 + s ** 2) / D ** 2 < 0.8 * R2
    gap = public.hyperparameters_["smoothness"] - auto.hyperparameters_["smoothness"]
    assert gap == pytest.approx(curvature * 0.2 * R2, rel=1e-9)
    assert auto.epsilon_ <= 1.0 and public.epsilon_ <= 1.0


@pytest.mark.parametrize("floor, stable", [(0.8, True), (0.4, False)])
def test_the_floor_keeps_the_step_stable_where_every_row_sits_at_the_bound(monkeypatch, floor,
                                                                          stable):
    """The worst case a typical norm can hide: every row at the bound in one direction, so the
    objective's curvature is the bound's R^2 (a released median far below the rows would say so).
    With the floor 0.8 the step is 1.25 / L and Nesterov converges; with 0.4 it is 2.5 / L and
    the iterates run away (what the floor is there to prevent)."""
    import skdp.optimizers._base as base

    monkeypatch.setattr(base, "STEP_SMOOTHNESS_FLOOR", floor)
    n, lam = 400, 1e-3
    X = np.zeros((n, 2))
    X[:, 0] = 1.0
    problem = Problem(X=X, Y=np.full((n, 1), 0.5), loss=get_loss("squared"), lam=lam,
                      row_norm_bound=1.0, clip=10.0, fit_intercept=False,
                      typical_row_norm=0.01)
    res = DPNAGOpt(kappa=None).solve(problem, Budget(1e4, 1e-5), np.random.default_rng(0))
    error = abs(res.coef[0, 0] - 0.5 / (1.0 + lam))
    assert (error < 1e-2) if stable else not (error < 1.0)
