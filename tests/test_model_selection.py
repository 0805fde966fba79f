"""Private hyper-parameter search (random stopping) and the cost of ordinary tuning."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from skdp import (
    BudgetExceededError,
    DPLogisticRegression,
    DPRidge,
    PrivacyLedger,
    compute_epsilon,
    tuning_cost,
)
from skdp._rows import design_array
from skdp.model_selection import MaxEvent, PrivateSearchCV, RepeatAndSelectEvent, plan_event
from skdp.model_selection._events import sample_repetitions, tnb_gamma
from skdp.optimizers.dp_gdws import DPGDWS
from skdp.preprocessing import PrivateRobustScaler
from skdp.privacy import ComposedEvent, GaussianEvent, PoissonGaussianEvent, SelfComposedEvent

from ._helpers import unit_row_classification

rdp_acc = pytest.importorskip("dp_accounting.rdp")
dp_event = pytest.importorskip("dp_accounting.dp_event")

DELTA = 1e-5


@pytest.fixture(scope="module")
def data():
    return unit_row_classification(1500, 4, seed=1)


def _dp_accounting_epsilon(event, delta=DELTA):
    acc = rdp_acc.RdpAccountant()
    acc.compose(event)
    return acc.get_epsilon(delta)


# -- the random-stopping event against dp-accounting ------------------------------------------
@pytest.mark.parametrize("mean,shape", [(10, 1.0), (10, 0.0), (5, 0.5), (3, 2.0), (10, np.inf)])
@pytest.mark.parametrize("base", [
    GaussianEvent(3.0),
    SelfComposedEvent(PoissonGaussianEvent(0.05, 1.2), 200),
])
def test_repeat_and_select_matches_dp_accounting(base, mean, shape):
    ours = compute_epsilon(RepeatAndSelectEvent(base, mean, shape), DELTA)
    theirs = _dp_accounting_epsilon(
        dp_event.RepeatAndSelectDpEvent(base.to_dp_accounting(), mean, shape))
    # Same theorem (Papernot & Steinke, Thms 2 and 6); the orders grids differ (skdp also
    # refines between grid orders), so the two valid bounds agree to a fraction of a percent.
    assert abs(ours - theirs) <= 2e-3 * theirs
    assert ours > compute_epsilon(base, DELTA)  # selection is not free


def test_repeat_and_select_of_a_real_fit_matches_dp_accounting(data):
    X, y = data
    fit = DPLogisticRegression(epsilon=1.0, delta=1e-6, random_state=0).fit(X, y)
    ours = compute_epsilon(RepeatAndSelectEvent(fit.dp_event_, 10, 1.0), DELTA)
    theirs = _dp_accounting_epsilon(
        dp_event.RepeatAndSelectDpEvent(fit.dp_event_.to_dp_accounting(), 10, 1.0))
    assert abs(ours - theirs) <= 2e-3 * theirs


def test_max_event():
    a, b = GaussianEvent(2.0), GaussianEvent(5.0)
    orders = np.array([1.5, 2.0, 10.0, 64.0])
    assert np.array_equal(MaxEvent((a, b)).rdp(orders), a.rdp(orders))
    assert MaxEvent((a, a)).to_dp_accounting() == a.to_dp_accounting()
    with pytest.raises(NotImplementedError):
        MaxEvent((a, b)).to_dp_accounting()


@pytest.mark.parametrize("mean,shape", [(10, 1.0), (10, 0.0), (4, 0.5), (6, np.inf)])
def test_number_of_runs_has_the_analysed_distribution(mean, shape):
    rng = np.random.default_rng(0)
    ks = np.array([sample_repetitions(rng, mean, shape) for _ in range(20000)])
    assert abs(ks.mean() - mean) < 4 * ks.std() / math.sqrt(ks.size)
    if math.isfinite(shape):
        assert ks.min() >= 1
    if shape == 1.0:  # geometric: P[K = 1] = gamma = 1 / mean
        gamma = tnb_gamma(mean, shape)
        assert abs(np.mean(ks == 1) - gamma) < 4 * math.sqrt(gamma * (1 - gamma) / ks.size)


# -- the search ---------------------------------------------------------------------------------
def test_search_guarantee_equals_repeat_and_select_of_the_fit(data):
    X, y = data
    # Every candidate has the same event (dp_gdws's noise does not depend on C) and the score
    # is given less budget than a fit, so the run's RDP curve is the fit's: the search must then
    # be exactly dp-accounting's RepeatAndSelectDpEvent of the fit.
    est = DPLogisticRegression(epsilon=1.0, delta=1e-6)
    search = PrivateSearchCV(est, {"C": [0.1, 1.0, 10.0]}, n_iter=5, shape=1.0,
                             score_epsilon=0.3, delta=DELTA, random_state=0).fit(X, y)
    fit_events = [e for e in search.dp_event_.event.events if not isinstance(e, GaussianEvent)]
    assert len(fit_events) == 1
    theirs = _dp_accounting_epsilon(
        dp_event.RepeatAndSelectDpEvent(fit_events[0].to_dp_accounting(), 5, 1.0))
    assert abs(search.epsilon_ - theirs) <= 2e-3 * theirs
    # the model released was fitted with exactly that event on the training part; selected
    # with the data, it carries the search's guarantee
    assert search.best_estimator_.privacy_record_.details["selected_fit"].event == fit_events[0]
    assert search.best_estimator_.dp_event_ == search.dp_event_
    assert search.n_train_ + search.n_validation_ == X.shape[0]


def test_search_guarantee_is_sandwiched_by_dp_accounting(data):
    X, y = data
    est = DPLogisticRegression(epsilon=0.5, delta=1e-6)
    grid = {"C": [0.1, 1.0], "optimizer": ["dp_gdws", "dp_scd"]}
    search = PrivateSearchCV(est, grid, n_iter=8, shape=0.5, delta=DELTA, random_state=0).fit(X, y)
    parts = search.dp_event_.event.events  # the distinct fit events and the score
    assert len(parts) >= 2
    # max <= each part composed sequentially; max >= each single part
    upper = _dp_accounting_epsilon(dp_event.RepeatAndSelectDpEvent(
        dp_event.ComposedDpEvent([p.to_dp_accounting() for p in parts]), 8, 0.5))
    lower = max(_dp_accounting_epsilon(
        dp_event.RepeatAndSelectDpEvent(p.to_dp_accounting(), 8, 0.5)) for p in parts)
    assert lower * (1 - 2e-3) <= search.epsilon_ <= upper * (1 + 2e-3)
    assert search.epsilon_ < upper  # parallel composition: the score is (almost) free


def test_search_charges_the_ledger_once(data):
    X, y = data
    est = DPLogisticRegression(epsilon=0.5, delta=1e-6)
    with PrivacyLedger() as ledger:
        search = PrivateSearchCV(est, {"C": [0.1, 1.0, 10.0]}, n_iter=6, random_state=0).fit(X, y)
    assert len(ledger) == 1 and ledger.entries[0].source == "PrivateSearchCV"
    assert ledger.entries[0].event == search.dp_event_
    assert math.isclose(ledger.spent(), compute_epsilon(search.dp_event_, 1e-5), rel_tol=1e-12)
    assert not hasattr(search, "cv_results_")  # the other runs stay secret

    tight = PrivacyLedger(epsilon=0.9 * search.epsilon_, delta=search.delta_)
    with pytest.raises(BudgetExceededError, match="exact event"):
        PrivateSearchCV(est, {"C": [0.1, 1.0, 10.0]}, n_iter=6, delta=search.delta_,
                        ledger=tight, random_state=0).fit(X, y)
    assert len(tight) == 0


def test_refit_and_max_epsilon(data):
    X, y = data
    est = DPLogisticRegression(epsilon=0.5, delta=1e-6)
    kw = dict(n_iter=4, delta=DELTA, random_state=0)
    plain = PrivateSearchCV(est, {"C": [0.1, 1.0]}, **kw).fit(X, y)
    refit = PrivateSearchCV(est, {"C": [0.1, 1.0]}, refit=True, **kw).fit(X, y)
    assert refit.epsilon_ > plain.epsilon_
    # the refit composes one more full-data fit onto the same random-stopping event
    assert refit.dp_event_.events[0] == plain.dp_event_
    selected_fit = refit.best_estimator_.privacy_record_.details["selected_fit"]
    assert refit.dp_event_.events[1].events == (selected_fit.event,)
    with pytest.raises(ValueError, match="max_epsilon"):
        PrivateSearchCV(est, {"C": [0.1, 1.0]}, max_epsilon=0.5 * plain.epsilon_, **kw).fit(X, y)


def test_search_is_reproducible_and_useful(data):
    X, y = data
    X_test, y_test = X[:500], y[:500]
    est = make_pipeline(Normalizer(), DPLogisticRegression(epsilon=1.0, delta=1e-6))
    grid = {"dplogisticregression__C": [0.1, 1.0, 10.0]}
    a = PrivateSearchCV(est, grid, n_iter=5, random_state=3).fit(X, y)
    b = PrivateSearchCV(est, grid, n_iter=5, random_state=3).fit(X, y)
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    majority = max(np.mean(y_test), 1 - np.mean(y_test))
    assert a.score(X_test, y_test) > majority + 0.2
    assert a.predict_proba(X_test).shape == (500, 2)


def test_regression_search(data):
    X, _ = data
    y = np.clip(0.9 * X[:, 0], -1, 1)
    search = PrivateSearchCV(DPRidge(epsilon=1.0, delta=1e-6, y_bounds=(-1.0, 1.0)),
                             {"alpha": [0.01, 1.0]},
                             n_iter=3, random_state=0).fit(X, y)
    assert search.best_score_ <= 0.5  # a noisy negative squared error, clipped to (2)^2
    assert search.score(X, y) > 0.3


def test_invalid_settings(data):
    X, y = data
    est = DPLogisticRegression(epsilon=1.0)
    with pytest.raises(ValueError, match="finite list"):
        PrivateSearchCV(est, {"C": stats.loguniform(0.1, 10)}).fit(X, y)
    with pytest.raises(ValueError, match="private"):
        PrivateSearchCV(est, {"epsilon": [1.0, np.inf]}).fit(X, y)
    with pytest.raises(ValueError, match="learns from the data(.|\n)*PrivatePipeline"):
        PrivateSearchCV(make_pipeline(StandardScaler(), est), {}).fit(X, y)
    # a private step in a plain Pipeline would spend outside the plan: pointed to PrivatePipeline
    with pytest.raises(ValueError, match="is private, but(.|\n)*outside the search's plan"
                                         "(.|\n)*PrivatePipeline"):
        PrivateSearchCV(make_pipeline(PrivateRobustScaler(), est), {}).fit(X, y)
    with pytest.raises(ValueError, match="n_iter"):
        PrivateSearchCV(est, {"C": [1.0]}, n_iter=0.5).fit(X, y)


def test_poisson_can_release_nothing(data):
    X, y = data
    n = X.shape[0]
    seed = next(s for s in range(100) if _poisson_runs(s, n) == 0)
    with pytest.warns(UserWarning, match="no candidate"):
        search = PrivateSearchCV(DPLogisticRegression(epsilon=1.0, delta=1e-6), {"C": [1.0]},
                                 n_iter=1, shape=np.inf, random_state=seed).fit(X, y)
    assert search.best_estimator_ is None and math.isfinite(search.epsilon_)


def _poisson_runs(seed, n):
    rng = np.random.default_rng(seed)
    rng.permutation(n)  # the search draws the split first
    return sample_repetitions(rng, 1.0, np.inf)


class LeakyGDWS(DPGDWS):
    """A deliberately broken optimizer whose budget depends on the data values."""

    def solve(self, problem, budget, rng, **kwargs):
        if design_array(problem.X)[:, 0].mean() > 0.05:
            budget = type(budget)(budget.epsilon * 2, budget.delta, budget.accountant)
        return super().solve(problem, budget, rng, **kwargs)


def test_data_dependent_event_is_caught(data):
    X, y = data
    X = X + np.array([0.3, 0, 0, 0])  # the synthetic plan data has mean ~0, these do not
    with pytest.raises(RuntimeError, match="privacy bug"):
        PrivateSearchCV(DPLogisticRegression(epsilon=1.0, optimizer=LeakyGDWS(), data_norm=1.0),
                        {"C": [1.0]},
                        n_iter=2, random_state=0).fit(X, y)


# -- the cost of an ordinary GridSearchCV ------------------------------------------------------
def test_tuning_cost_of_grid_search(data):
    X, y = data
    X, y = X[:600], y[:600]
    est = DPLogisticRegression(epsilon=0.5, delta=1e-7)  # fresh noise per fit
    grid = {"C": [0.1, 1.0, 10.0], "epsilon": [0.25, 0.5]}
    with PrivacyLedger(delta=1e-5) as ledger:
        search = GridSearchCV(est, grid, cv=KFold(3)).fit(X, y)
    exact = tuning_cost(search, X, y, delta=1e-5)
    assert exact.exact and exact.n_fits == 6 * 3 + 1 == len(ledger)
    # planned from synthetic data of the fold sizes == charged by the real fits
    assert math.isclose(exact.epsilon, ledger.spent(), rel_tol=1e-9)
    # one record is in the training part of 2 of the 3 folds: 6 x 2 fits + the refit
    assert exact.epsilon_per_record < exact.epsilon
    fold_events = []
    for params in search.cv_results_["params"]:
        for train, _ in list(KFold(3).split(X))[1:]:  # a record of the first fold
            fold_events.append(plan_event(clone(est).set_params(**params), len(train), 4).event)
    fold_events.append(search.best_estimator_.dp_event_)
    assert math.isclose(exact.epsilon_per_record,
                        compute_epsilon(ComposedEvent(tuple(fold_events)), 1e-5), rel_tol=1e-9)
    bound = tuning_cost(search, delta=1e-5)
    assert not bound.exact and bound.n_fits == 19
    assert bound.epsilon >= exact.epsilon
    assert bound.epsilon <= sum(bound.target_epsilons)



def test_tuning_cost_without_data_says_why_it_has_no_bound(data):
    # fits at the default delta (1e-5 each here) exhaust tuning_cost's default delta: the bound
    # from the targets is inf, and the user is told what to pass instead
    X, y = data
    X, y = X[:300], y[:300]
    search = GridSearchCV(DPLogisticRegression(), {"C": [0.5, 2.0]}, cv=KFold(3)).fit(X, y)
    with pytest.warns(UserWarning, match=r"deltas sum to 7e-05.*Pass the data"):
        cost = tuning_cost(search)
    assert cost.epsilon == math.inf and not cost.exact
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither remedy warns, and both are finite
        assert math.isfinite(tuning_cost(search, X, y).epsilon)
        assert math.isfinite(tuning_cost(search, delta=1e-4).epsilon)

def test_plan_event_matches_a_real_fit(data):
    X, y = data
    for est in [DPLogisticRegression(epsilon=0.7, delta=1e-6, optimizer="dp_scd"),
                DPRidge(epsilon=2.0, delta=1e-6)]:
        target = y if isinstance(est, DPLogisticRegression) else X[:, 0]
        real = est.fit(X, target).dp_event_
        assert plan_event(est, X.shape[0], X.shape[1], classes=[0, 1]).event == real


def test_ledger_records_nothing_for_plan(data):
    X, y = data
    with PrivacyLedger() as ledger:
        plan_event(DPLogisticRegression(), 100, 3)
    assert len(ledger) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(ledger) == 0
