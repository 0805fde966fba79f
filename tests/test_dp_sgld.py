"""dp_sgld: the Langevin accountant (spec test vectors), calibration, the bounded privacy loss,
the noiseless iterates reaching the optimum, the noise scale, the trace contract, and the
scikit-learn checks for the three estimators."""

import math
import warnings

import numpy as np
import pytest

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.losses import get_loss, objective
from skdp.optimizers import Budget, Problem
from skdp.optimizers._heavy_ball import momentum_to_optimum
from skdp.optimizers.dp_sgld import DPSGLD, FULL, _sgld_kernel
from skdp.privacy import (
    GaussianEvent,
    PoissonGaussianEvent,
    SelfComposedEvent,
    compute_epsilon,
    epsilon_from_rdp,
)
from skdp.privacy.langevin import (
    LangevinEvent,
    epsilon_balle,
    epsilon_mironov,
    kappa,
    rho_composition,
    rho_for_epsilon,
    rho_full_batch,
    rho_langevin,
)

from ._helpers import breast_cancer, diabetes, iris, relative_objective_gap

DELTA = 1e-5


# -- spec section 9.1: accountant test vectors ------------------------------------------------
# (L, n, lam, sigma, eta, K, rho_L, rho_C, eps_mironov, alpha_mironov, eps_balle, alpha_balle,
#  rho_inf, full_batch). The papers' relation is replace-one: drift sensitivity S = 2 L / n.
# Rows 3-4 are the authors' mini-batch runs: the paper's bound alone, no composition minimum.
FORWARD = [
    (1, 1000, 0.01, 0.01, 1.0, 1000, 3.97305, 10, 17.4995, 2.702, 16.4406, 2.629, 4, True),
    (1, 30000, 1e-3, 0.01, 2.0, 5000, 0.044145, 0.111111, 1.46996, 17.15, 1.22206, 15.12,
     0.0444444, True),
    (15, 50000, 1e-3, 0.0022, 0.018, 30, 0.0200799, 0.0100413, 0.981701, 24.94, 0.796035, 21.51,
     74.3802, False),
    (15, 50000, 1e-3, 0.0022, 0.018, 11730, 7.45204, 3.92616, 25.9771, 2.243, 24.7254, 2.20,
     74.3802, False),
]


@pytest.mark.parametrize("row", FORWARD)
def test_spec_forward_vectors(row):
    L, n, lam, sigma, eta, K, rl, rc, em, am, eb, ab, rinf, full = row
    S, T = 2.0 * L / n, eta * K
    assert rho_langevin(S, sigma, lam, T) == pytest.approx(rl, rel=6e-6)
    assert rho_composition(S, sigma, T) == pytest.approx(rc, rel=6e-6)
    ev = LangevinEvent(sigma / S, lam, T, composition=full)
    assert ev.saturated_rho == pytest.approx(rinf, rel=6e-6)
    rho = rho_full_batch(S, sigma, lam, T) if full else rho_langevin(S, sigma, lam, T)
    assert ev.rho == pytest.approx(rho, rel=1e-12)
    e, a = epsilon_mironov(rho, DELTA)
    assert e == pytest.approx(em, rel=6e-6) and a == pytest.approx(am, rel=2e-3)
    e, a = epsilon_balle(rho, DELTA)
    assert e == pytest.approx(eb, rel=6e-6) and a == pytest.approx(ab, rel=3e-3)
    # the library accountant (grid + refinement, same conversion) agrees
    assert compute_epsilon(ev, DELTA) == pytest.approx(eb, rel=6e-6)


INVERSE = [
    (1, 1e-5, 1, 1000, 0.01, 1, 1000, "mironov", 0.0208199, 0.138141),
    (1, 1e-5, 1, 1000, 0.01, 1, 1000, "balle", 0.0305566, 0.114027),
    (1, 1e-5, 1, 30000, 1e-3, 2, 5000, "mironov", 0.0208199, 0.0145613),
    (1, 1e-5, 1, 30000, 1e-3, 2, 5000, "balle", 0.0305566, 0.0120195),
    (0.1, 1e-5, 1, 30000, 1e-2, 2, 5000, "mironov", 0.000216209, 0.045339),
    (0.1, 1e-5, 1, 30000, 1e-2, 2, 5000, "balle", 0.000432994, 0.0320382),
    (5, 1e-5, 1, 30000, 1e-2, 2, 5000, "mironov", 0.449623, 0.000994224),
    (5, 1e-5, 1, 30000, 1e-2, 2, 5000, "balle", 0.550973, 0.000898139),
]


@pytest.mark.parametrize("row", INVERSE)
def test_spec_inverse_vectors(row):
    eps, delta, L, n, lam, eta, K, conversion, rho_star, sigma = row
    rho = rho_for_epsilon(eps, delta, conversion)
    assert rho == pytest.approx(rho_star, rel=6e-6)
    S, T = 2.0 * L / n, eta * K
    # full batch: rho = S^2 min(kappa / lam, T / 4) / sigma^2
    s = S * math.sqrt(min(kappa(lam, T) / lam, T / 4.0) / rho)
    assert s == pytest.approx(sigma, rel=6e-6)
    # round trip: that sigma spends the target
    conv = epsilon_mironov if conversion == "mironov" else epsilon_balle
    assert conv(rho_full_batch(S, s, lam, T), delta)[0] == pytest.approx(eps, rel=1e-9)


def test_spec_decreasing_schedule_total_time():
    # beta = 0.26, lam = 0.01: logistic curvature 1/4, R = 1 -> beta = 0.25 + 0.01
    X = np.zeros((10, 2))
    X[:, 0] = 1.0
    problem = Problem(X, np.ones((10, 1)), get_loss("logistic"), 0.01, 1.0, 1.0)
    assert problem.smoothness == pytest.approx(0.26)
    etas = DPSGLD(max_iter=1000, schedule="decreasing")._etas(problem, 1)
    T = math.fsum(etas)
    assert T == pytest.approx(473.33335, rel=1e-7)
    assert kappa(0.01, T) == pytest.approx(0.906207, rel=1e-6)
    assert etas[0] == pytest.approx(1 / (2 * 0.26))
    assert etas[-1] == pytest.approx(1 / (0.52 + 0.005 * 999))


def test_spec_sgm_vector():
    # q = 1/391, z = 1.33, 11730 steps: eps = 0.997 (Balle, integer alpha in [2, 256], alpha = 18)
    ev = SelfComposedEvent(PoissonGaussianEvent(1 / 391, 1.33), 11730)
    orders = np.arange(2, 257)
    eps, a = epsilon_from_rdp(orders, ev.rdp(orders), DELTA)
    assert eps == pytest.approx(0.997, abs=5e-4) and a == 18
    assert compute_epsilon(ev, DELTA) <= eps + 1e-12  # more orders can only help


# -- the accountant's shape ---------------------------------------------------------------------
def test_rho_monotone_saturating_and_min_of_two_bounds():
    S, lam = 1e-3, 0.01
    T = 100.0 / lam
    assert rho_langevin(S, 0.1, lam, T) == pytest.approx(S**2 / (lam * 0.01), rel=1e-12)
    Ts = np.geomspace(1.0, 1e5, 40)
    rl = np.array([rho_langevin(S, 0.1, lam, t) for t in Ts])
    rc = np.array([rho_composition(S, 0.1, t) for t in Ts])
    rf = np.array([rho_full_batch(S, 0.1, lam, t) for t in Ts])
    assert np.all(np.diff(rl) >= 0) and np.all(np.diff(rf) >= 0)
    assert np.all(rl <= S**2 / (lam * 0.01) * (1 + 1e-12))
    np.testing.assert_allclose(rf, np.minimum(rl, rc))
    small, large = 0.5 / lam, 50.0 / lam  # lam T / 2 = 0.25 (composition wins), 25 (Langevin wins)
    assert rho_full_batch(S, 0.1, lam, small) == rho_composition(S, 0.1, small)
    assert rho_full_batch(S, 0.1, lam, large) == rho_langevin(S, 0.1, lam, large)
    eps = [compute_epsilon(LangevinEvent(z, lam, 300.0), DELTA) for z in (1.0, 2.0, 4.0, 8.0)]
    assert all(a > b for a, b in zip(eps, eps[1:]))


def test_langevin_event_rejects_bad_inputs():
    with pytest.raises(ValueError, match="lam > 0"):
        LangevinEvent(1.0, 0.0, 10.0)
    with pytest.raises(ValueError, match="total_time"):
        LangevinEvent(1.0, 0.1, -1.0)


# -- helpers ------------------------------------------------------------------------------------
def _problem(X, y, loss="logistic", lam=0.01, clip=1.0, K=1):
    Xa = np.ascontiguousarray(np.hstack([X, np.ones((X.shape[0], 1))]))
    if K == 1:
        Y = np.where(y == np.unique(y)[-1], 1.0, -1.0)[:, None] if loss != "squared" else y[:, None]
    else:
        Y = np.eye(K)[np.searchsorted(np.unique(y), y)]
    Y = np.ascontiguousarray(Y, dtype=float)
    return Problem(Xa, Y, get_loss(loss), lam, math.sqrt(2.0), clip)


def _run_kernel(problem, etas, sigma=0.0, init_std=0.0, radius=0.0, seed=0, trace=None, w=None):
    n = problem.n_samples
    w = np.zeros(problem.dim) if w is None else w
    trace = np.zeros((0, 2, 0)) if trace is None else trace
    _sgld_kernel(
        problem.X, problem.Y, w, problem.loss.loss_id, problem.clip, problem.lam, etas, FULL,
        1.0, 1.0 / n, sigma, init_std, radius, np.random.default_rng(seed),
        np.arange(n, dtype=np.int64), trace,
    )
    return w


# -- private fits: calibration and fitted information -------------------------------------------
@pytest.mark.parametrize(
    "epsilon, batch_size", [(0.1, None), (1.0, None), (4.0, None), (1.0, 64)]
)
def test_calibrated_epsilon_never_overshoots(epsilon, batch_size):
    X, y = breast_cancer()
    est = DPLogisticRegression(
            data_norm=1.0,  # the public bound of unit rows
        epsilon=epsilon, C=0.5, optimizer=DPSGLD(batch_size=batch_size, max_iter=20), random_state=0
    ).fit(X, y)
    assert est.epsilon_ <= epsilon
    assert est.epsilon_ >= epsilon * (1 - 1e-5)
    d = est.privacy_record_.details
    for key in ("sigma", "rho", "n_steps", "epsilon", "delta", "relation", "analysis"):
        assert key in d
    assert d["epsilon"] == est.epsilon_ and d["delta"] == est.delta_
    assert d["relation"].startswith("zero-out")
    assert d["analysis"] == ("langevin+composition" if batch_size is None else "sgm")
    if batch_size is None:
        # rho is the min of the two bounds, computed at the calibrated sigma and S = G / n
        S = d["lipschitz"] / X.shape[0]
        assert d["drift_sensitivity"] == pytest.approx(S)
        assert d["rho"] == pytest.approx(
            rho_full_batch(S, d["sigma"], d["lam"], d["total_time"]), rel=1e-12
        )
        assert isinstance(est.privacy_record_.event, LangevinEvent)
    else:
        assert isinstance(est.privacy_record_.event.event, PoissonGaussianEvent)
        assert est.privacy_record_.sampling.startswith("poisson")


def test_epsilon_does_not_grow_with_steps_at_fixed_sigma():
    """Full batch, Langevin regime: 10x the steps at the same sigma spends the same epsilon,
    while plain composition of the same steps would spend far more."""
    X, y = breast_cancer()
    n = X.shape[0]
    C = 1.0 / (n * 0.01)  # lam = 0.01; eta = 1/(2 beta) ~ 1: lam T ~ 50 after 5000 steps
    sigma = 0.02
    fits = []
    for K in (5000, 50000):
        est = DPLogisticRegression(
            data_norm=1.0,  # the public bound of unit rows
            epsilon=20.0, C=C, optimizer=DPSGLD(sigma=sigma, max_iter=K), random_state=0
        ).fit(X, y)
        d = est.privacy_record_.details
        assert d["sigma"] == pytest.approx(sigma, rel=1e-12) and d["n_steps"] == K
        assert d["lam_T"] > 40
        comp = compute_epsilon(
            LangevinEvent(sigma / d["drift_sensitivity"], d["lam"], d["total_time"]), est.delta_
        )
        z_step = sigma * math.sqrt(2 / d["step"]) / d["drift_sensitivity"]
        comp_only = compute_epsilon(SelfComposedEvent(GaussianEvent(z_step), K), est.delta_)
        assert comp == pytest.approx(est.epsilon_)
        fits.append((est.epsilon_, comp_only))
    (e1, c1), (e2, c2) = fits
    assert e2 == pytest.approx(e1, rel=1e-9)
    assert c2 > 3.0 * c1 and c1 > e1  # composition grows (~sqrt(10) in eps); Langevin does not


def test_fixed_sigma_that_overspends_raises():
    X, y = breast_cancer()
    with pytest.raises(ValueError, match="increase sigma"):
        DPLogisticRegression(epsilon=0.5, optimizer=DPSGLD(sigma=1e-4, max_iter=50)).fit(X, y)


def test_unproven_ryffel2022_accountant_is_refused():
    """The paper's mini-batch claim is not offered (tests/test_hardening_accounting.py shows it
    is violated); the refusal names the proven analyses, and the default never warns."""
    X, y = breast_cancer()
    for bs in (None, 64, 0.1):
        with pytest.raises(ValueError, match="'auto'.*ryffel2022.*not proven"):
            DPLogisticRegression(
                optimizer=DPSGLD(batch_size=bs, accountant="ryffel2022", max_iter=5),
                data_norm=1.0,
            ).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = DPLogisticRegression(
            epsilon=1.0, optimizer=DPSGLD(batch_size=64, max_iter=5), random_state=0,
            data_norm=1.0,  # public: a subsampled event cannot follow private bounds
        ).fit(X, y)
    d = est.privacy_record_.details
    assert d["analysis"] == "sgm" and d["proven"] is True
    assert est.privacy_record_.sampling.startswith("poisson")


def test_langevin_bound_only_where_its_conditions_hold():
    # public data_norm=1 (the unit rows): the step thresholds below are for R = sqrt(2)
    X, y = iris()
    lr = DPLogisticRegression(epsilon=1.0, data_norm=1.0, optimizer=DPSGLD(max_iter=20),
                              derivative_clip=np.sqrt(2.0), random_state=0).fit(X, y)
    # multinomial at the clip sqrt(2): the clip is never active, a gradient field
    assert lr.privacy_record_.details["analysis"] == "langevin+composition"
    # at its default clip (the derivative's size at W = 0, sqrt(2/3) here) the joint clip of
    # the 3 outputs is active: not a gradient field, so composition only
    auto = DPLogisticRegression(epsilon=1.0, data_norm=1.0, optimizer=DPSGLD(max_iter=20),
                                random_state=0).fit(X, y)
    assert auto.derivative_clip_ == pytest.approx(np.sqrt(2.0 / 3.0))
    assert auto.privacy_record_.details["analysis"] == "composition" and auto.epsilon_ <= 1.0
    svc = DPLinearSVC(epsilon=1.0, data_norm=1.0, optimizer=DPSGLD(max_iter=20), random_state=0).fit(X, y)
    assert svc.privacy_record_.details["analysis"] == "composition"  # joint clipping of 3 outputs
    assert svc.epsilon_ <= 1.0
    Xb, yb = breast_cancer()
    big = DPLogisticRegression(epsilon=1.0, data_norm=1.0, optimizer=DPSGLD(step=2.5, max_iter=20)).fit(Xb, yb)
    assert big.privacy_record_.details["analysis"] == "composition"  # step >= 1 / beta
    lr2 = DPLogisticRegression(epsilon=1.0, data_norm=1.0, optimizer=DPSGLD(step=1.5, max_iter=20)).fit(Xb, yb)
    assert lr2.privacy_record_.details["analysis"] == "langevin+composition"  # 1.5 < 1/beta ~ 1.99


def test_pld_estimator_accountant_falls_back_to_rdp_for_the_langevin_curve():
    X, y = breast_cancer()
    est = DPLogisticRegression(
        epsilon=1.0, accountant="pld", optimizer=DPSGLD(max_iter=20), random_state=0
    ).fit(X, y)
    assert est.privacy_record_.accountant == "rdp" and est.epsilon_ <= 1.0


def test_default_step_count_reaches_saturation_when_affordable():
    X, y = breast_cancer()
    n = X.shape[0]
    # derivative_clip=1: the rule's time below 8 / lam (the default clip of 1/2 asks for more)
    est = DPLogisticRegression(epsilon=1.0, C=1 / (n * 0.05), optimizer="dp_sgld",
                               derivative_clip=1.0, random_state=0)
    d = est.fit(X, y).privacy_record_.details
    assert 8.0 <= d["lam_T"] < 8.0 + d["lam"] * d["step"] * 1.0001
    assert d["step"] == pytest.approx(1.0 / (2.0 * d["smoothness"]))
    assert d["initialisation"] == "langevin" and d["analysis"] == "langevin+composition"
    # weak regularisation: the Langevin bound cannot beat composition at the rule's time, so
    # the fit is plain noisy GD (composition, no Langevin initialisation), far below 1000 steps
    est = DPLogisticRegression(epsilon=1.0, C=10.0, optimizer="dp_sgld").fit(X, y)
    d = est.privacy_record_.details
    assert d["n_steps"] < 1000 and d["lam_T"] < 3.2
    assert d["initialisation"] == "none" and d["analysis"] == "composition"
    assert est.epsilon_ <= 1.0


def test_composition_plan_takes_the_rules_time_in_longer_steps():
    """Classification under composition: a time that needs more than 300 steps of 1 / (2 beta)
    is covered in 300 steps of at most 1.5 / beta; a shorter one keeps 1 / (2 beta); the
    squared loss keeps 1 / (2 beta) too."""
    from skdp.optimizers._defaults import budget_rho, noisy_gd_time
    from skdp.optimizers.dp_sgld import COMPOSITION_MAX_STEPS, COMPOSITION_STEP

    X, y = breast_cancer()
    n = X.shape[0]
    for eps in (0.3, 2.0, 20.0):
        est = DPLogisticRegression(epsilon=eps, data_norm=1.0, optimizer="dp_sgld",
                                   random_state=0).fit(X, y)
        d = est.privacy_record_.details
        beta = d["smoothness"]
        assert d["analysis"] == "composition" and d["initialisation"] == "none"
        G = est.derivative_clip_ * math.sqrt(2.0)  # rows and intercept column of norm 1
        time = noisy_gd_time("logistic", n, X.shape[1] + 1, budget_rho(eps, est.delta_),
                             G, math.sqrt(2.0))
        short = math.ceil(time * 2.0 * beta - 1e-9)  # steps of 1 / (2 beta)
        if short <= COMPOSITION_MAX_STEPS:
            assert eps == 0.3
            assert d["step"] == pytest.approx(1.0 / (2.0 * beta)) and d["n_steps"] == short
        else:
            step = min(COMPOSITION_STEP / beta, time / COMPOSITION_MAX_STEPS)
            assert d["n_steps"] == COMPOSITION_MAX_STEPS and d["step"] == pytest.approx(step)
            assert d["step"] < 2.0 / beta  # gradient descent stays stable
            assert (d["step"] == pytest.approx(COMPOSITION_STEP / beta)) == (eps == 20.0)
        assert est.epsilon_ <= eps
    ridge = DPRidge(epsilon=1.0, data_norm=1.0, y_bounds=(-1, 1), optimizer="dp_sgld",
                    random_state=0).fit(X, X[:, 0])
    d = ridge.privacy_record_.details
    assert d["step"] == pytest.approx(1.0 / (2.0 * d["smoothness"]))


def test_seed_determinism_and_projection():
    X, y = breast_cancer()
    mk = lambda seed, **kw: DPLogisticRegression(  # noqa: E731
        epsilon=0.5, data_norm=1.0, optimizer=DPSGLD(max_iter=50, **kw), random_state=seed
    ).fit(X, y)
    np.testing.assert_array_equal(mk(3).coef_, mk(3).coef_)
    assert not np.allclose(mk(3).coef_, mk(4).coef_)
    for proj in ("auto", 0.3):
        est = mk(0, projection=proj)
        W = np.hstack([est.coef_.ravel(), est.intercept_])
        radius = est.privacy_record_.details["projection_radius"]
        lam = est.privacy_record_.details["lam"]
        G = est.derivative_clip_ * math.sqrt(2)  # rows and intercept column of norm 1
        assert radius == (0.3 if proj == 0.3 else pytest.approx(G / lam))
        assert np.linalg.norm(W) <= radius * (1 + 1e-12)
    est = mk(0, projection=0.3)
    assert np.linalg.norm(np.hstack([est.coef_.ravel(), est.intercept_])) == pytest.approx(0.3)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"max_iter": 0}, "max_iter"),
        ({"step": -1.0}, "step"),
        ({"step": "big"}, "step"),
        ({"schedule": "cosine"}, "schedule"),
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": np.inf}, "sigma"),
        ({"accountant": "rdp"}, "accountant"),
        ({"projection": -2.0}, "projection"),
        ({"batch_size": 0}, "batch_size"),
        ({"tol": 0.0}, "tol"),
    ],
)
def test_bad_parameters_raise(params, match):
    X, y = breast_cancer()
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(optimizer=DPSGLD(**params)).fit(X, y)


# -- no noise: the optimum -------------------------------------------------------------------
@pytest.mark.parametrize(
    "kind, reg",
    # LinearSVC's own reference solve (liblinear to tol 1e-12) is slow: one C for it
    [("logistic", 0.1), ("logistic", 1.0), ("ridge", 0.1), ("ridge", 1.0), ("svc", 1.0)],
)
def test_epsilon_inf_reaches_sklearn_optimum(kind, reg):
    cls = {"logistic": DPLogisticRegression, "svc": DPLinearSVC, "ridge": DPRidge}[kind]
    X, y = diabetes() if kind == "ridge" else breast_cancer()
    est = cls(epsilon=np.inf, optimizer="dp_sgld", **{("alpha" if kind == "ridge" else "C"): reg})
    est.fit(X, y)
    assert est.epsilon_ == np.inf
    assert relative_objective_gap(kind, est, X, y, reg) < 1e-4


@pytest.mark.parametrize("kind", ["logistic", "svc"])
def test_epsilon_inf_reaches_sklearn_optimum_multiclass(kind):
    X, y = iris()
    cls = DPLogisticRegression if kind == "logistic" else DPLinearSVC
    est = cls(epsilon=np.inf, optimizer="dp_sgld").fit(X, y)
    assert relative_objective_gap(kind, est, X, y, 1.0) < 1e-4


# slow: about 10 s (compile and data) of the 5-minute default run; CI runs it
@pytest.mark.slow
@pytest.mark.parametrize(
    "loss, clip", [("logistic", 1.0), ("squared_hinge", 0.5), ("squared", 0.3)]
)
def test_noiseless_sgld_iterates_reach_the_huberised_optimum(loss, clip):
    """sigma = 0: the private kernel's own iterates converge to the optimum of the (Huberised,
    where the clip is active) objective; with the clip inactive, to scikit-learn's."""
    if loss == "squared":
        X, y = diabetes()
    else:
        X, y = breast_cancer()
    problem = _problem(X, y, loss=loss, lam=0.02, clip=clip)
    eta = 1.0 / (2.0 * problem.smoothness)
    K = int(40 / (problem.lam * eta))  # (1 - eta lam)^K ~ e^-40
    w = _run_kernel(problem, np.full(K, eta))
    ref = np.zeros(problem.dim)
    r = math.sqrt(problem.lam / problem.smoothness)
    momentum_to_optimum(problem.X, problem.Y, ref, problem.loss.loss_id, clip, problem.lam,
                        1 / problem.smoothness, (1 - r) / (1 + r), 1e-12, 200000)
    lid = problem.loss.loss_id
    f = objective(problem.X, problem.Y, w.reshape(-1, 1), lid, problem.lam, clip)
    f_ref = objective(problem.X, problem.Y, ref.reshape(-1, 1), lid, problem.lam, clip)
    assert (f - f_ref) / abs(f_ref) < 1e-10
    np.testing.assert_allclose(w, ref, atol=1e-6)
    if loss == "logistic":  # clip 1 is never active for the logistic loss: scikit-learn's optimum
        n = X.shape[0]
        est = DPLogisticRegression(epsilon=np.inf)
        est.coef_, est.intercept_ = w[None, :-1], w[-1:]
        assert relative_objective_gap("logistic", est, X, y, 1.0 / (n * problem.lam)) < 1e-4
    else:  # the Huberisation is active here: the plain optimum is different
        f_plain = objective(problem.X, problem.Y, w.reshape(-1, 1), lid, problem.lam, np.inf)
        assert f_plain != pytest.approx(f, rel=1e-6)


# -- the noise ----------------------------------------------------------------------------------
def test_noise_scales_of_the_initialisation_and_of_one_step():
    """Zero data, zero gradients: theta_0 has std sqrt(2/lam) sigma, a step adds sqrt(2 eta) sigma."""
    n, p = 4, 40000
    problem = Problem(np.zeros((n, p)), np.ones((n, 1)), get_loss("logistic"), 0.05, 1.0, 1.0)
    sigma, eta = 0.3, 0.7
    w = _run_kernel(problem, np.full(1, eta), sigma=sigma, init_std=0.0)
    assert np.std(w) == pytest.approx(math.sqrt(2 * eta) * sigma, rel=0.02)
    assert abs(np.mean(w)) < 4 * math.sqrt(2 * eta) * sigma / math.sqrt(p)
    init = _run_kernel(problem, np.zeros(0), sigma=sigma, init_std=math.sqrt(2 / 0.05) * sigma)
    assert np.std(init) == pytest.approx(math.sqrt(2 / 0.05) * sigma, rel=0.02)


def test_trace_contract_noise_and_zero_out_sensitivity():
    X, y = breast_cancer()
    Xc, yc = X[:200], y[:200]
    opt = DPSGLD(max_iter=30)
    lr_kwargs = dict(loss=get_loss("logistic"), lam=0.01, row_norm_bound=math.sqrt(2.0), clip=1.0)
    Xa = np.ascontiguousarray(np.hstack([Xc, np.ones((200, 1))]))
    Y = np.where(yc == 1, 1.0, -1.0)[:, None]
    Xz = Xa.copy()
    Xz[17] = 0.0  # the zero-out neighbour: record 17 replaced by the null record
    budget = Budget(1.0, DELTA)
    rd = opt.solve(Problem(Xa, Y, **lr_kwargs), budget, np.random.default_rng(5), record_trace=True)
    rz = opt.solve(Problem(Xz, Y, **lr_kwargs), budget, np.random.default_rng(5), record_trace=True)
    assert rd.trace.shape == (30, 2, Xa.shape[1])
    # released = pre-noise + N(0, (m sigma sqrt(2/eta))^2): m = n in full batch
    noise = rd.trace[:, 1] - rd.trace[:, 0]
    rec = rd.mechanism_record  # the traced result's own record is non-private
    assert rd.record.epsilon == math.inf and rec.epsilon <= 1.0
    d = rec.details
    expected = 200 * d["sigma"] * math.sqrt(2.0 / d["step"])
    assert np.std(noise) == pytest.approx(expected, rel=0.1)
    assert rec.noise_multiplier == pytest.approx(expected / rec.sensitivity)
    # same seed, same theta_0: the first released sums differ by at most the declared sensitivity
    diff = np.linalg.norm(rd.trace[0, 0] - rz.trace[0, 0])
    assert 0 < diff <= rec.sensitivity * (1 + 1e-12)
    assert rec.sensitivity == pytest.approx(math.sqrt(2.0))  # G = tau R


# -- scikit-learn compatibility -------------------------------------------------------------------
