"""Privacy audits (issue 7): the auditor's statistics, small audits of every optimizer x
estimator, and the auditor catching deliberately broken mechanisms.

The audits assert that the empirical epsilon lower bound (95% confidence, threshold chosen on
half of the fits and evaluated on the other half) never exceeds the claimed epsilon. Larger
audits are marked ``slow`` (``pytest -m slow tests/test_audit.py``); the docs table comes from
``python benchmarks/bench_audit.py``.
"""

from dataclasses import replace
import math

import numpy as np
import pytest

from ._helpers import fast_accounting  # noqa: F401 (autouse: memoised accounting for this module)
from scipy import stats

import skdp.linear_model._base as estimator_base
from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.audit import (
    audit_estimator,
    audit_optimizer,
    canary_problem,
    clopper_pearson,
    epsilon_lower_bound,
    gaussian_epsilon,
    gaussian_mu,
    make_canary,
    memoized_accounting,
    null_neighbour,
    replay,
)
from skdp.audit._variants import optimizer_variants
from skdp.losses import get_loss
from skdp.optimizers import Budget, Problem, available_optimizers, get_optimizer_class
from skdp.optimizers.dp_gdws import DPGDWS

OPTIMIZERS = available_optimizers()
DELTA = 1e-5




# -- the statistics ---------------------------------------------------------------------------------
@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (57, 200), (1, 1000)])
def test_clopper_pearson_matches_scipy(k, n):
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    assert clopper_pearson(k, n, 0.05, "lower") == pytest.approx(ci.low, abs=1e-10)
    assert clopper_pearson(k, n, 0.05, "upper") == pytest.approx(ci.high, abs=1e-10)


def test_gaussian_reference_matches_dp_accounting():
    from dp_accounting.pld import privacy_loss_mechanism as plm

    for eps, delta in [(0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-5)]:
        mu = gaussian_mu(eps, delta)
        loss = plm.GaussianPrivacyLoss(standard_deviation=1.0 / mu, sensitivity=1.0)
        assert loss.get_delta_for_epsilon(eps) == pytest.approx(delta, rel=1e-6)
        assert gaussian_epsilon(mu, delta) == pytest.approx(eps, rel=1e-8)
    assert gaussian_epsilon(1e4, 1e-5) > 1e3  # no overflow for separated distributions


def _randomized_response(rng, eps, n):
    """Scores of the eps-DP randomized response on a canary bit: the threshold test is exact."""
    p = math.exp(eps) / (1.0 + math.exp(eps))
    return (rng.random(n) < p).astype(float), (rng.random(n) < 1.0 - p).astype(float)


def test_lower_bound_coverage_on_a_tight_mechanism():
    """Randomized response is exactly eps-DP and its threshold test attains eps, so the bound gets
    close to the truth; it may exceed it in at most ~5% of the repetitions (95% confidence)."""
    rng = np.random.default_rng(0)
    eps, reps = 1.0, 400
    bounds = np.array([
        epsilon_lower_bound(*_randomized_response(rng, eps, 1000), delta=0.0).epsilon
        for _ in range(reps)
    ])
    exceed = np.mean(bounds > eps)
    assert exceed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps), exceed
    assert np.median(bounds) > 0.6 * eps  # and it has power: it is not trivially 0


def test_lower_bound_detects_and_stays_below():
    rng = np.random.default_rng(1)
    same = epsilon_lower_bound(rng.normal(size=500), rng.normal(size=500), delta=DELTA)
    assert same.epsilon < 0.3
    far = epsilon_lower_bound(rng.normal(6.0, size=500), rng.normal(size=500), delta=DELTA)
    assert far.epsilon > 3.0 and far.epsilon < gaussian_epsilon(6.0, DELTA)
    # direction does not matter (the test is symmetric)
    flipped = epsilon_lower_bound(rng.normal(-6.0, size=500), rng.normal(size=500), delta=DELTA)
    assert flipped.epsilon > 3.0


def test_lower_bound_validation():
    with pytest.raises(ValueError, match="finite"):
        epsilon_lower_bound([0.0, np.nan, 1.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="method"):
        epsilon_lower_bound([0.0, 1.0], [0.0, 1.0], method="nope")


# -- small audits of every optimizer x estimator -----------------------------------------------------
def _estimator_data(task, seed=0, n=30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    if task == "classification":
        y = (X[:, 0] > 0).astype(int)
    else:
        y = np.clip(X[:, 0] + 0.1 * rng.normal(size=n), -1, 1)
    return X, y


ESTIMATORS = [
    # the canary's derivative is saturated by a small derivative_clip where the loss allows it;
    # public bounds (data_norm=1, the canary's norm; y_bounds=(-1, 1)), as make_canary assumes
    ("logistic", lambda opt: DPLogisticRegression(epsilon=2.0, delta=DELTA, optimizer=opt,
                                                  fit_intercept=False, data_norm=1.0),
     "classification"),
    ("svc", lambda opt: DPLinearSVC(epsilon=2.0, delta=DELTA, optimizer=opt, fit_intercept=False,
                                    data_norm=1.0), "classification"),
    ("ridge", lambda opt: DPRidge(epsilon=2.0, delta=DELTA, optimizer=opt, fit_intercept=False,
                                  derivative_clip=0.25, data_norm=1.0, y_bounds=(-1.0, 1.0)),
     "regression"),
]


@pytest.mark.parametrize("est_id,make,task", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_small_estimator_audit(name, est_id, make, task):
    X, y = _estimator_data(task)
    c = make_canary(X, y, task=task)
    res = audit_estimator(make(name), c.X, c.y, c.index, n_fits=100, random_state=1)
    assert res.claimed_epsilon <= 2.0
    assert res.n_fits == 200
    assert not res.violated, res.summary()


def _optimizer_problem(loss_name="squared", n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = np.hstack([X, np.ones((n, 1))])
    Y = rng.uniform(-1, 1, size=(n, 1)) if loss_name == "squared" else np.sign(X[:, :1] + 1e-9)
    loss = get_loss(loss_name)
    return Problem(X=np.ascontiguousarray(X), Y=np.ascontiguousarray(Y), loss=loss, lam=1.0 / n,
                   row_norm_bound=math.sqrt(2.0), clip=loss.default_clip(1, 1.0),
                   fit_intercept=True)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_small_optimizer_audit_saturated_canary(name):
    """The worst-case canary (own column, norm R, clipped derivative saturated at every step)."""
    c = canary_problem(_optimizer_problem())
    res = audit_optimizer(get_optimizer_class(name)(), c.problem, Budget(2.0, DELTA), c.index,
                          n_fits=150, random_state=2)
    assert not res.violated, res.summary()


# -- the auditor catches broken mechanisms -----------------------------------------------------------
class UnderNoisedGDWS(DPGDWS):
    """dp_gdws that draws 1/30 of the noise its record is charged for (test only)."""

    def _calibrate(self, problem, budget, n_steps, q):
        scale, record = super()._calibrate(problem, budget, n_steps, q)
        return scale / 30.0, record


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_small_optimizer_audit_weighted_canary(name):
    """Example weights: the canary carries the largest weight, max_sample_weight = 10 (the
    others are uniform in [0, 10]); its null record is the neighbour. The noise must scale with
    the bound: noise calibrated for unweighted data would spend far more than the claimed 1,
    which these 150 fits detect (checked by breaking the scaling)."""
    c = canary_problem(_optimizer_problem())
    w = np.random.default_rng(5).uniform(0.0, 10.0, c.problem.n_samples)
    w[c.index] = 10.0
    problem = replace(c.problem, sample_weight=w, max_sample_weight=10.0)
    res = audit_optimizer(get_optimizer_class(name)(), problem, Budget(1.0, DELTA), c.index,
                          n_fits=150, random_state=2)
    assert not res.violated, res.summary()


def test_auditor_catches_under_noised_mechanism():
    c = canary_problem(_optimizer_problem())
    res = audit_optimizer(UnderNoisedGDWS(), c.problem, Budget(1.0, DELTA), c.index, n_fits=100,
                          random_state=3)
    assert res.claimed_epsilon <= 1.0
    assert res.violated and res.epsilon_lower_bound > res.claimed_epsilon, res.summary()
    # the same audit of the honest optimizer does not fire
    ok = audit_optimizer(DPGDWS(), c.problem, Budget(1.0, DELTA), c.index, n_fits=100,
                         random_state=3)
    assert not ok.violated, ok.summary()


class _UnclippedDerivativeProblem(Problem):
    """Declares the clipped gradient bound tau = 2 while the kernels get tau = inf."""

    @property
    def gradient_bound(self):
        return 2.0 * self.row_norm_bound


def _skip_unless_broken(name, broken, c):
    """Only a mechanism that the broken input really breaks can be caught: optimizers that bound
    their releases by their own clipping (the record/replay check says so) are not broken."""
    try:
        report, _ = replay(get_optimizer_class(name)(), broken, null_neighbour(broken, c.index),
                           Budget(1.0, DELTA), seed=0, isolated_rows=[c.column])
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        pytest.skip(f"{name} refuses the broken input: {exc}")
    if report.ok:
        pytest.skip(f"{name} is not broken by it: its releases stay within the declared "
                    f"sensitivity ({report})")
    if not math.isfinite(report.bound):
        pytest.skip(f"{name} declares an infinite sensitivity for it (infinite noise, no leak)")


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_auditor_catches_unclipped_derivative(name):
    c = canary_problem(_optimizer_problem())
    p = c.problem
    broken = _UnclippedDerivativeProblem(X=p.X, Y=p.Y, loss=p.loss, lam=p.lam,
                                         row_norm_bound=p.row_norm_bound, clip=math.inf,
                                         fit_intercept=True)
    _skip_unless_broken(name, broken, c)
    res = audit_optimizer(get_optimizer_class(name)(), broken, Budget(1.0, DELTA), c.index,
                          n_fits=60, random_state=4)
    assert res.violated, res.summary()


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_auditor_catches_missing_row_clipping(monkeypatch, name):
    """The estimator with row clipping removed (test-only patch) and a canary of norm 100.

    A huge unclipped row is fitted almost exactly, so its coefficient barely moves while the
    noise on it is multiplied by 100 at prediction: the canary's loss (the classic
    membership-inference statistic) separates D from D'."""
    c0 = canary_problem(_optimizer_problem())
    X0 = c0.problem.X.copy()
    X0[c0.index] *= 100.0
    _skip_unless_broken(name, replace(c0.problem, X=X0), c0)
    monkeypatch.setattr(estimator_base, "clipped_design", _no_clip_rows)
    X, y = _estimator_data("regression")
    c = make_canary(X, y, task="regression", data_norm=100.0)
    # The statistic needs a fit that runs long enough to fit the huge row: the full-batch methods
    # get the long runs they had before their defaults became budget-dependent (issue 15; dp_masg
    # too since its horizon's floor went from 8 to 4 steps in session 13).
    optimizer = {
        "dp_gdws": lambda: get_optimizer_class(name)(max_iter=100),
        "dp_nag_opt": lambda: get_optimizer_class(name)(reselect_T=True, kappa=None),
        "dp_masg": lambda: get_optimizer_class(name)(reselect_T=True, kappa=None),
    }.get(name, lambda: name)()
    # derivative_clip=2 (the residual clip every optimizer had before session 8): the canary's
    # huge row is fitted fast enough for the statistic to see it; dp_nsgd_tree's default 1/4
    # clips the canary's residual too hard for 150 fits to separate D from D' (this test is
    # about the missing row clip, which the residual clip cannot stand in for: the row's norm
    # multiplies the released gradient whatever the residual clip)
    est = DPRidge(epsilon=1.0, delta=DELTA, optimizer=optimizer, fit_intercept=False,
                  data_norm=1.0, y_bounds=(-1.0, 1.0), derivative_clip=2.0)

    def canary_loss(model):
        # the linear score from the released coefficients (predict clips the canary's row to
        # data_norm_, which would undo the x100 this statistic reads; any function of the
        # release is a valid statistic)
        score = float(c.x @ np.ravel(model.coef_) + np.ravel(model.intercept_)[0])
        return -abs(score - c.label)

    res = audit_estimator(est, c.X, c.y, c.index, n_fits=150, statistic=canary_loss,
                          random_state=5)
    assert res.violated, res.summary()


def _no_clip_rows(X, data_norm, intercept_scaling=None, unit=1.0, norms=None):
    """What ``clipped_design`` would give without its clip: the rows as they are, in units."""
    out = np.array(X, dtype=np.float64, copy=True)
    if intercept_scaling is not None:
        out = np.hstack([out, np.full((out.shape[0], 1), intercept_scaling)])
    return np.ascontiguousarray(out / unit)


def test_estimator_audit_refuses_intercept_without_neighbour():
    X, y = _estimator_data("classification")
    c = make_canary(X, y)
    with pytest.raises(ValueError, match="null record"):
        audit_estimator(DPLogisticRegression(), c.X, c.y, c.index, n_fits=10)


# -- larger audits (slow) ---------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("eps", [1.0, 4.0])
@pytest.mark.parametrize("name,params", [
    pytest.param(name, params, id=f"{name}-{label}")
    for name in OPTIMIZERS for label, params in optimizer_variants(name)
])
def test_large_optimizer_audit(name, params, eps):
    c = canary_problem(_optimizer_problem())
    try:
        res = audit_optimizer(get_optimizer_class(name)(**params), c.problem, Budget(eps, DELTA),
                              c.index, n_fits=1000, random_state=6)
    except ValueError as exc:
        pytest.skip(f"not supported: {exc}")
    assert not res.violated, res.summary()


def test_memoized_accounting_is_transparent_and_restored():
    import skdp.privacy.accountant as acc
    import skdp.privacy.events as events
    from skdp.privacy import PoissonGaussianEvent, SelfComposedEvent, calibrate_noise_multiplier

    def make(z):
        return SelfComposedEvent(PoissonGaussianEvent(0.1, z), 50)

    before = (acc.compute_epsilon, events.rdp_poisson_subsampled_gaussian)
    plain = calibrate_noise_multiplier(make, 1.0, DELTA)
    with memoized_accounting() as cache:  # nested in this module's block: shares its cache
        first = calibrate_noise_multiplier(make, 1.0, DELTA)
        n = len(cache)
        second = calibrate_noise_multiplier(make, 1.0, DELTA)
        assert len(cache) == n > 0  # the second calibration is served from the cache
    assert first == second == plain
    assert (acc.compute_epsilon, events.rdp_poisson_subsampled_gaussian) == before
