"""The progress callback (``callback`` / ``callback_every``) and ``warm_start`` of the estimators."""

import math

import numpy as np
import pytest
from sklearn.base import clone

import skdp
from skdp import DPLinearSVC, DPLogisticRegression, DPRidge, FitProgress, PrivacyLedger
from skdp.losses import get_loss
from skdp.optimizers import Budget, Problem, get_optimizer_class
from skdp.privacy import (
    GaussianEvent,
    PoissonGaussianEvent,
    SelfComposedEvent,
    compute_epsilon,
)
from skdp.privacy.langevin import LangevinEvent

# Small, quick configurations of every optimizer: (name, parameters). Full batch and Poisson
# mini-batches, the Laplace mechanism, both tree layouts.
CONFIGS = [
    ("dp_gdws", {"max_iter": 40}),
    ("dp_gdws", {"max_iter": 40, "batch_size": 50}),
    ("dp_gdws", {"max_iter": 40, "mechanism": "laplace", "batch_size": 50}),
    ("dp_nag_opt", {"max_iter": 30, "reselect_T": False}),
    ("dp_nag_opt", {"max_iter": 30, "reselect_T": False, "batch_size": 50}),
    ("dp_nag_opt", {"max_iter": 30, "reselect_T": False, "mechanism": "laplace"}),
    ("dp_masg", {"max_iter": 30, "reselect_T": False, "first_stage": 8}),
    ("dp_sgld", {"max_iter": 30}),
    ("dp_sgld", {"max_iter": 5, "batch_size": 50}),
    ("dp_scd", {"epochs": 3}),
    ("dp_nsgd_tree", {"epochs": 4}),
    ("dp_nsgd_tree", {"epochs": 5, "tree": "aligned", "honaker": False}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CONFIGS]
WARM_OPTIMIZERS = ["dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.2 * rng.normal(size=200) > 0).astype(int)
    return X, y


def _problem(X, y):
    Xa = np.ascontiguousarray(np.hstack([X, np.ones((X.shape[0], 1))]))
    Y = np.ascontiguousarray(np.where(y == 1, 1.0, -1.0)[:, None])
    return Problem(Xa, Y, get_loss("logistic"), 1e-2, math.sqrt(2.0), 1.0)


def _optimizer(name, kw):
    return get_optimizer_class(name)(**kw)


# -- the callback --------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kw", CONFIGS, ids=IDS)
def test_callback_gives_the_same_bits_and_valid_progress(data, name, kw):
    problem = _problem(*data)
    budget = Budget(1.0, 1e-5)
    opt = _optimizer(name, kw)
    plain = opt.solve(problem, budget, np.random.default_rng(4), record_trace=True)
    n_steps = plain.mechanism_record.n_steps
    for every in (1, 3):
        calls = []
        res = opt.solve(
            problem, budget, np.random.default_rng(4), record_trace=True, callback=calls.append,
            callback_every=every,
        )
        # bitwise: the iterate and every release, chunked or not
        assert res.coef.tobytes() == plain.coef.tobytes()
        assert res.trace.tobytes() == plain.trace.tobytes()
        assert all(isinstance(c, FitProgress) for c in calls)
        steps = [c.step for c in calls]
        assert steps[-1] == n_steps and np.all(np.diff(steps) > 0)
        if name == "dp_nsgd_tree":  # epoch ends only, the first at or after every k steps
            M = res.extras["steps_per_epoch"]
            assert all(s % M == 0 for s in steps)
            assert [c.epoch for c in calls] == [s // M for s in steps]
        else:
            assert steps == list(range(every, n_steps, every)) + [n_steps]
        assert all(c.n_steps == n_steps and c.delta == plain.mechanism_record.delta for c in calls)
        eps = np.array([c.epsilon for c in calls])
        assert np.all(np.diff(eps) >= 0) and np.all(eps > 0)
        final = plain.mechanism_record.epsilon
        assert eps[-1] <= final or math.isclose(eps[-1], final, rel_tol=1e-9)
        assert eps[-1] >= final * (1 - 1e-9)  # the last call reports the fit's epsilon


@pytest.mark.parametrize("name", ["dp_gdws", "dp_sgld", "dp_nsgd_tree", "dp_scd"])
def test_estimator_callback_same_model_and_last_epsilon(data, name):
    X, y = data
    kw = dict(CONFIGS[[n for n, _ in CONFIGS].index(name)][1])
    est = DPLogisticRegression(epsilon=0.7, optimizer=_optimizer(name, kw), random_state=2)
    plain = clone(est).fit(X, y)
    calls = []
    with_cb = clone(est).set_params(callback=calls.append, callback_every=2).fit(X, y)
    assert with_cb.coef_.tobytes() == plain.coef_.tobytes()
    assert with_cb.intercept_.tobytes() == plain.intercept_.tobytes()
    assert math.isclose(calls[-1].epsilon, plain.epsilon_, rel_tol=1e-9)
    assert calls[-1].delta == plain.delta_
    assert calls[-1].epoch > calls[0].epoch > 0


def test_prefix_epsilon_is_the_accountants_for_the_steps_done(data):
    """dp_gdws: the epsilon at step t is that of t copies of the step's event (up to the
    refinement of the order, which the cheap grid value skips: never below it)."""
    problem = _problem(*data)
    calls = []
    res = _optimizer("dp_gdws", {"max_iter": 40, "batch_size": 50}).solve(
        problem, Budget(1.0, 1e-5), np.random.default_rng(0), callback=calls.append,
        callback_every=10,
    )
    z, q = res.record.noise_multiplier, 50 / 200
    for c in calls[:-1]:
        exact = compute_epsilon(SelfComposedEvent(PoissonGaussianEvent(q, z), c.step), 1e-5)
        assert exact <= c.epsilon <= exact * 1.01
    # the first ten steps spend clearly less than the forty
    assert calls[0].epsilon < 0.75 * calls[-1].epsilon
    assert calls[1].epoch == pytest.approx(20 * q)


def test_laplace_prefix_is_pure_and_linear(data):
    problem = _problem(*data)
    calls = []
    res = _optimizer("dp_gdws", {"max_iter": 40, "mechanism": "laplace"}).solve(
        problem, Budget(0.8, 1e-5), np.random.default_rng(0), callback=calls.append,
        callback_every=10,
    )
    assert res.record.delta == 0.0 and all(c.delta == 0.0 for c in calls)
    np.testing.assert_allclose([c.epsilon for c in calls], 0.8 * np.arange(1, 5) / 4, rtol=1e-9)


def test_sgld_progress_uses_the_langevin_bound_of_the_steps_done(data):
    problem = _problem(*data)
    calls = []
    res = _optimizer("dp_sgld", {"max_iter": 200}).solve(
        problem, Budget(1.0, 1e-5), np.random.default_rng(0), callback=calls.append,
        callback_every=50,
    )
    event = res.record.event
    assert isinstance(event, LangevinEvent)
    eta = res.extras["step"]  # constant schedule
    for c in calls[:-1]:
        exact = compute_epsilon(
            LangevinEvent(event.noise_multiplier, event.lam, eta * c.step), 1e-5
        )
        assert exact * (1 - 1e-9) <= c.epsilon <= exact * 1.01
    assert calls[-1].epsilon == res.record.epsilon


def test_pld_accountant_last_call_is_the_fits_epsilon(data):
    pytest.importorskip("dp_accounting")
    problem = _problem(*data)
    calls = []
    res = _optimizer("dp_gdws", {"max_iter": 20}).solve(
        problem, Budget(1.0, 1e-5, "pld"), np.random.default_rng(0), callback=calls.append,
        callback_every=5,
    )
    eps = [c.epsilon for c in calls]
    assert eps[-1] == res.record.epsilon and np.all(np.diff(eps) >= 0)
    # the intermediate values are RDP bounds of the prefix
    z = res.record.noise_multiplier
    assert eps[0] >= compute_epsilon(SelfComposedEvent(GaussianEvent(z), 5), 1e-5) * (1 - 1e-9)


@pytest.mark.parametrize("name", ["dp_gdws", "dp_scd", "dp_nsgd_tree"])
def test_no_callback_at_epsilon_inf(data, name):
    calls = []
    est = DPLogisticRegression(epsilon=np.inf, optimizer=name, callback=calls.append).fit(*data)
    assert est.n_iter_ > 0 and calls == []


@pytest.mark.parametrize(
    "params, match",
    [
        ({"callback": 3}, "'callback' parameter .* must be a callable or None"),
        ({"callback": print, "callback_every": 0}, "'callback_every' parameter .* must be an int"),
        ({"callback": print, "callback_every": 2.0}, "'callback_every' parameter .* must be an int"),
        ({"callback": print, "callback_every": True}, "callback_every must be an int >= 1"),
        ({"callback_every": -1}, "'callback_every' parameter .* must be an int"),
    ],
)
def test_bad_callback_parameters_raise_in_fit(data, params, match):
    est = DPLogisticRegression(**params)  # stored unchanged, checked in fit
    assert est.get_params()["callback_every"] == params.get("callback_every", 1)
    with pytest.raises(ValueError, match=match):
        est.fit(*data)


def test_fit_progress_is_exported_and_frozen():
    assert skdp.FitProgress is FitProgress and "FitProgress" in skdp.__all__
    p = FitProgress(step=1, n_steps=2, epoch=0.5, epsilon=0.1, delta=1e-5)
    with pytest.raises(AttributeError):
        p.step = 2


# -- warm start ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", WARM_OPTIMIZERS)
def test_warm_start_at_epsilon_inf_reaches_the_optimum_faster(data, name):
    X, y = data
    est = DPLogisticRegression(epsilon=np.inf, optimizer=name, warm_start=True,
                               intercept_scaling=1.7).fit(X, y)
    coef, intercept, n_cold = est.coef_.copy(), est.intercept_.copy(), est.n_iter_
    est.fit(X, y)
    assert est.n_iter_ < n_cold
    np.testing.assert_allclose(est.coef_, coef, atol=1e-6)
    np.testing.assert_allclose(est.intercept_, intercept, atol=1e-6)
    # from a perturbed start too (the solver is still run to the optimum)
    est.coef_ = coef + 0.5
    est.fit(X, y)
    np.testing.assert_allclose(est.coef_, coef, atol=1e-3)


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPRidge(epsilon=np.inf, optimizer="dp_gdws", y_bounds=(0.0, 4.0),
                        intercept_scaling=2.5, warm_start=True),
        lambda: DPLinearSVC(epsilon=np.inf, optimizer="dp_nag_opt", intercept_scaling=0.3,
                            warm_start=True),
        lambda: DPLogisticRegression(epsilon=np.inf, optimizer="dp_gdws", fit_intercept=False,
                                     warm_start=True),
    ],
    ids=["ridge-centre", "svc-scaling", "no-intercept"],
)
def test_warm_point_is_the_fitted_model(data, make):
    """The warm point is the previous optimum in the clipped design's parameterisation
    (intercept scaling, DPRidge's target centre): the refit stops at its first gradient,
    before any iteration."""
    X, y = data
    target = 2.0 + X @ np.array([1.0, -0.5, 0.0, 0.3, 0.0]) if isinstance(make(), DPRidge) else y
    est = make().fit(X, target)
    coef = est.coef_.copy()
    est.fit(X, target)
    assert est.n_iter_ == 0
    np.testing.assert_allclose(est.coef_, coef, atol=1e-9)


def test_warm_start_multiclass(data):
    X, _ = data
    y3 = np.digitize(X[:, 1], [-0.3, 0.3])
    est = DPLogisticRegression(epsilon=np.inf, optimizer="dp_masg", warm_start=True).fit(X, y3)
    n_cold = est.n_iter_
    est.fit(X, y3)
    assert est.coef_.shape == (3, 5) and est.n_iter_ < n_cold


@pytest.mark.parametrize("name", WARM_OPTIMIZERS)
def test_private_warm_start_differs_from_a_cold_start(data, name):
    X, y = data
    kw = dict(CONFIGS[[n for n, _ in CONFIGS].index(name)][1])
    cold = DPLogisticRegression(optimizer=_optimizer(name, kw), random_state=5).fit(X, y)
    warm = clone(cold).set_params(warm_start=True).fit(X, y)
    assert warm.coef_.tobytes() == cold.coef_.tobytes()  # the first fit is a cold start
    warm.set_params(random_state=6).fit(X, y)  # a fit of a chain draws fresh noise
    assert not np.array_equal(warm.coef_, cold.coef_)
    # the released model composes its start: two fits of the same event
    assert warm.privacy_record_.details["warm_start_history"][-1].event == cold.dp_event_
    assert warm.epsilon_ == pytest.approx(
        compute_epsilon(skdp.compose([cold.dp_event_, cold.dp_event_]), cold.delta_), rel=1e-9
    )
    first = cold.coef_.copy()
    cold.fit(X, y)  # warm_start=False ignores the fitted model: the same seed, the same model
    assert cold.coef_.tobytes() == first.tobytes()


def test_sgld_warm_start_draws_its_initial_noise_around_the_warm_point(data):
    from skdp.optimizers.dp_sgld import FULL, _sgld_kernel

    problem = _problem(*data)
    w0 = np.linspace(-1.0, 1.0, problem.dim)
    draws = []
    for seed in range(200):
        w = w0.copy()
        _sgld_kernel(
            problem.rows, problem.Y, w, 0, 1.0, problem.lam, np.zeros(0), FULL, 1.0,
            1.0 / problem.n_samples, 0.0, 0.1, 0.0, np.random.default_rng(seed),
            np.arange(problem.n_samples, dtype=np.int64), np.zeros((0, 2, 0)), False, True,
        )
        draws.append(w)
    draws = np.array(draws)
    np.testing.assert_allclose(draws.mean(axis=0), w0, atol=0.03)
    np.testing.assert_allclose(draws.std(axis=0), 0.1, rtol=0.2)


def test_two_warm_started_fits_are_two_charges(data):
    X, y = data
    with PrivacyLedger(epsilon=10.0, delta=1e-5) as ledger:
        est = DPLogisticRegression(epsilon=1.0, delta=1e-5, optimizer="dp_gdws",
                                   warm_start=True, random_state=0)
        est.fit(X, y)
        first = est.dp_event_
        est.set_params(random_state=1).fit(X, y)  # fresh noise (a shared seed is refused)
    # each fit is charged its own event once; the model's epsilon_ is their composition
    assert len(ledger) == 2 and ledger.events == [first, first]
    composed = compute_epsilon(skdp.compose([first, first]), 1e-5)
    assert ledger.spent() == pytest.approx(composed, rel=1e-9)
    assert est.epsilon_ == pytest.approx(composed, rel=1e-9)
    assert ledger.spent() > 1.2 * ledger.entries[0].epsilon


def test_warm_start_shape_mismatch_raises(data):
    X, y = data
    est = DPLogisticRegression(epsilon=np.inf, optimizer="dp_gdws", warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="another number of features, classes or targets"):
        est.fit(X[:, :4], y)
    with pytest.raises(ValueError, match="another number of features, classes or targets"):
        est.fit(X, np.digitize(X[:, 1], [-0.3, 0.3]))
    # a cold start is always possible
    est.set_params(warm_start=False).fit(X[:, :4], y)
    assert est.coef_.shape == (1, 4)


def test_dp_scd_refuses_warm_start(data):
    X, y = data
    with pytest.raises(ValueError, match="warm_start=True is not supported by dp_scd"):
        DPRidge(optimizer="dp_scd", warm_start=True).fit(X, X[:, 0])
    # optimizer="auto" (the default) runs DPRidge's dp_scd, but its fallback under warm_start
    # (dp_masg here, s >= 10; test_auto_optimizer checks the rule)
    assert DPRidge(random_state=0).fit(X, X[:, 0]).optimizer_.name == "dp_scd"
    assert DPRidge(warm_start=True, random_state=0).fit(X, X[:, 0]).optimizer_.name == "dp_masg"
    problem = _problem(X, y)
    warm = Problem(problem.X, problem.Y, problem.loss, problem.lam, problem.row_norm_bound,
                   problem.clip, init=np.zeros((6, 1)))
    scd = get_optimizer_class("dp_scd")()
    with pytest.raises(ValueError, match="cannot start from a given point"):
        scd.solve(warm, Budget(1.0, 1e-5), np.random.default_rng(0))


def test_problem_init_is_checked_and_copied(data):
    problem = _problem(*data)
    with pytest.raises(ValueError, match="init must have shape"):
        Problem(problem.X, problem.Y, problem.loss, 1e-2, 1.0, 1.0, init=np.zeros(6))
    init = np.ones((6, 1))
    p = Problem(problem.X, problem.Y, problem.loss, 1e-2, 1.0, 1.0, init=init)
    w = p.start()
    w[:] = 5.0
    assert np.all(init == 1.0) and np.all(p.init == 1.0)


def test_callback_sees_no_release_before_the_fit_is_charged():
    """The private row bound and target bounds are set on the estimator only once the fit is
    charged: a callback reading them mid-fit, in a fit that then fails, would hold uncharged
    releases (session 56: 30 such fits under a ceiling that allowed one). The bounds drawn
    before the failure are charged as a failed fit's (session 57), not as a fit."""
    from sklearn.datasets import load_diabetes

    from skdp._fit_state import FAILED_FIT

    X, y = load_diabetes(return_X_y=True)
    ledger = PrivacyLedger(epsilon=2.0)
    seen = []
    est = DPRidge(epsilon=0.9, ledger=ledger, random_state=0)

    def peek(progress):
        seen.append((getattr(est, "y_bounds_", None), getattr(est, "data_norm_", None)))
        raise ZeroDivisionError("a callback that fails")

    est.set_params(callback=peek)
    with pytest.raises(ZeroDivisionError):
        est.fit(X, y)
    assert seen == [(None, None)]
    assert [FAILED_FIT in e.source for e in ledger.entries] == [True]
    # (a seed of its own: the failed fit's entry keeps its stream, and one seed twice would
    # be refused by the ceiling, tests/test_failed_fits.py)
    est.set_params(callback=None, random_state=1).fit(X, y)
    assert est.y_bounds_ is not None and est.data_norm_ > 0 and len(ledger) == 2


def test_a_callback_that_changes_a_parameter_discards_the_fit(data):
    """A parameter set during the fit mixed the old value (the fit) with the new one (the
    fitted attributes): a model with an intercept column and fit_intercept=False that no longer
    predicted. The fit is now discarded with a clear error."""
    X, y = data
    est = DPLogisticRegression(epsilon=1.0, callback_every=1)
    est.set_params(callback=lambda progress: est.set_params(fit_intercept=False))
    with pytest.raises(RuntimeError, match="changed during its fit"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
