"""Searches over pipelines on raw DataFrames: their plans and their costs.

A pipeline's fits charge what its parts charge: a :class:`~skdp.pipeline.PrivatePipeline` one
event under its own budget, a plain ``Pipeline`` one per private step and one for its skdp
estimator. They are planned on synthetic data with the DataFrame's columns (a
``ColumnTransformer`` selects them by name). The planned cost must equal what a ledger charged
fit by fit (an independent path: the real fits charge as they run), a pipeline whose steps learn
non-private state has no cost to report, and :class:`~skdp.model_selection.PrivateSearchCV`
plans and runs a private pipeline on a DataFrame.
"""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdp import BudgetExceededError, DPLogisticRegression, PrivacyLedger, compose
from skdp.model_selection import PrivateSearchCV, plan_event, plan_search_fits, tuning_cost
from skdp.model_selection._cost import same_event
from skdp.pipeline import PrivatePipeline
from skdp.preprocessing import PrivateRobustScaler
from skdp.privacy import compute_epsilon

DELTA = 1e-5
JOBS = ["clerk", "nurse", "welder", "pilot"]


@pytest.fixture(scope="module")
def frame():
    """A raw table: unscaled numbers and strings, a Series of labels."""
    rng = np.random.default_rng(3)
    n = 450
    X = pd.DataFrame({
        "age": rng.integers(18, 80, n).astype(float),
        "hours": rng.integers(1, 80, n).astype(float),
        "job": rng.choice(JOBS, n),
    })
    y = pd.Series((X["age"] + rng.normal(0, 10, n) > 45).astype(int), name="high")
    return X, y


def _columns():
    return ColumnTransformer([
        ("num", PrivateRobustScaler(), ["age", "hours"]),
        ("cat", OneHotEncoder(categories=[JOBS], handle_unknown="ignore"), ["job"]),
    ], sparse_threshold=0)


def _private_pipeline_search(refit=True):
    pipe = PrivatePipeline([("prep", _columns()), ("clf", DPLogisticRegression())], epsilon=1.0)
    return GridSearchCV(pipe, {"epsilon": [0.5, 1.0]}, refit=refit,
                        cv=KFold(3, shuffle=True, random_state=0))


def test_private_pipeline_on_a_dataframe_costs_what_its_ledger_charged(frame):
    X, y = frame
    with PrivacyLedger(delta=DELTA) as ledger:
        search = _private_pipeline_search().fit(X, y)
    assert len(ledger) == 2 * 3 + 1
    cost = tuning_cost(search, X, y, delta=DELTA)
    assert cost.exact and cost.n_fits == 7
    assert math.isclose(cost.epsilon, ledger.spent(), rel_tol=1e-9)
    # the targets are the pipeline's budgets (the grid's epsilon), not its estimator's default
    best = search.best_params_["epsilon"]
    assert sorted(cost.target_epsilons) == sorted([0.5] * 3 + [1.0] * 3 + [best])
    # without the data: the bound from those targets, finite at a delta that covers the fits'
    bound = tuning_cost(search, delta=1e-3)
    assert not bound.exact and math.isfinite(bound.epsilon)
    assert bound.epsilon >= tuning_cost(search, X, y, delta=1e-3).epsilon
    # the caller's table is left as it was
    assert list(X.columns) == ["age", "hours", "job"] and X["age"].dtype == float


@pytest.mark.parametrize("scaler_epsilon, charges", [
    (3.0, 2 * (2 * 3 + 1)),  # the scaler and the estimator, every fit
    (0.22, 2 * 3 + 1 + 1),  # too few rows in a fold: the scaler passes through, charging nothing
])
def test_plain_pipeline_counts_its_private_steps_charges(frame, scaler_epsilon, charges):
    X, y = frame
    pipe = Pipeline([
        ("prep", ColumnTransformer([
            ("num", PrivateRobustScaler(epsilon=scaler_epsilon), ["age", "hours"]),
            ("cat", OneHotEncoder(categories=[JOBS], handle_unknown="ignore"), ["job"]),
        ], sparse_threshold=0)),
        ("clf", DPLogisticRegression(epsilon=0.5)),
    ])
    search = GridSearchCV(pipe, {"clf__C": [0.1, 1.0]}, cv=KFold(3, shuffle=True, random_state=1))
    with PrivacyLedger(delta=DELTA) as ledger:
        search.fit(X, y)
    assert len(ledger) == charges
    cost = tuning_cost(search, X, y, delta=DELTA)
    assert cost.n_fits == 7 and len(cost.target_epsilons) == 14
    assert math.isclose(cost.epsilon, ledger.spent(), rel_tol=1e-9)
    # more than the estimators' charges alone, which is all a plan of the final step counts:
    # the scaler's charges (every fit at epsilon 3, the refit's alone at 0.22) are counted
    scaler = [e for e in ledger.entries if e.source == "PrivateRobustScaler"]
    assert len(scaler) == charges - 7
    alone = compose([e.event for e in ledger.entries if e.source == "DPLogisticRegression"])
    assert cost.epsilon > compute_epsilon(alone, DELTA)


def test_plan_search_fits_and_fit_search_replay_a_pipelines_folds(frame):
    X, y = frame
    search = _private_pipeline_search(refit=False)
    records = plan_search_fits(search, X, y)
    assert len(records) == 2 * 3
    with PrivacyLedger(delta=DELTA) as charged:
        clone(search).fit(X, y)
    planned = compute_epsilon(compose([r.event for r in records]), DELTA)
    assert math.isclose(planned, charged.spent(), rel_tol=1e-9)
    # fit_search charges that plan before the search runs, and refuses it over the ceiling
    ledger = PrivacyLedger(epsilon=100.0, delta=DELTA)
    assert hasattr(ledger.fit_search(clone(search), X, y), "cv_results_")
    # the fits run in this process, where fit_search's ledger is open as a context: each takes
    # its planned event (it was charged twice before), so the ledger holds the plan exactly
    assert len(ledger) == 6 and math.isclose(ledger.spent(), planned, rel_tol=1e-9)
    small = PrivacyLedger(epsilon=0.9 * planned, delta=DELTA)
    refused = clone(search)
    with pytest.raises(BudgetExceededError):
        small.fit_search(refused, X, y)
    assert len(small) == 0 and not hasattr(refused, "cv_results_")


def test_a_pipeline_step_that_learns_non_private_state_has_no_cost(frame):
    X, y = frame
    pipe = Pipeline([
        ("prep", ColumnTransformer([
            ("num", StandardScaler(), ["age", "hours"]),
            ("cat", OneHotEncoder(categories=[JOBS], handle_unknown="ignore"), ["job"]),
        ])),
        ("clf", DPLogisticRegression()),
    ])
    search = GridSearchCV(pipe, {"clf__epsilon": [0.5, 1.0]},
                          cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)
    for args in [(X, y), ()]:
        with pytest.raises(ValueError, match="StandardScaler.*private or stateless|private or "
                                             "stateless.*StandardScaler"):
            tuning_cost(search, *args)
    with pytest.raises(ValueError, match="private or stateless"):
        plan_search_fits(clone(search), X, y)
    with pytest.raises(ValueError, match="private or stateless"):
        PrivacyLedger(delta=DELTA).fit_search(clone(search), X, y)


def test_plan_event_of_a_private_pipeline_from_a_dataframes_columns(frame):
    X, y = frame
    pipe = PrivatePipeline([("prep", _columns()), ("clf", DPLogisticRegression(classes=[0, 1]))],
                           epsilon=2.0)
    with PrivacyLedger(delta=DELTA) as ledger:
        fitted = clone(pipe).fit(X, y)
    planned = plan_event(pipe, len(X), X.shape[1], schema=X.dtypes)
    assert same_event(planned.event, fitted.dp_event_)
    assert math.isclose(planned.epsilon, ledger.spent(), rel_tol=1e-9)
    with pytest.raises(ValueError, match="schema has 3 columns"):
        plan_event(pipe, len(X), 4, schema=X.dtypes)


def test_private_search_of_a_private_pipeline_on_a_dataframe(frame):
    X, y = frame
    pipe = PrivatePipeline([("prep", _columns()), ("clf", DPLogisticRegression(classes=[0, 1]))],
                           epsilon=1.0)
    search = PrivateSearchCV(pipe, {"clf__C": [0.1, 1.0]}, n_iter=2, random_state=None)
    with PrivacyLedger(delta=DELTA) as ledger:
        search.fit(X, y)  # every run's event is checked against the plan as it runs
    assert len(ledger) == 1 and math.isfinite(search.epsilon_)
    assert math.isclose(ledger.spent(), search.epsilon_, rel_tol=1e-9)
    assert search.predict(X.iloc[:5]).shape == (5,)


def test_private_search_scores_at_the_pipelines_budget(frame):
    """A PrivatePipeline's candidates are fitted under the pipeline's epsilon (its final
    estimator's own ``epsilon`` is not used inside it): the score's default budget and the
    check that every candidate is private read the pipeline's."""
    from skdp.privacy import GaussianEvent, calibrate_noise_multiplier

    X, y = frame
    clf = DPLogisticRegression(classes=[0, 1], epsilon=np.inf)  # unused inside the pipeline
    pipe = PrivatePipeline([("prep", _columns()), ("clf", clf)], epsilon=0.7)
    search = PrivateSearchCV(pipe, {"clf__C": [0.1, 1.0]}, n_iter=1).fit(X, y)
    z, _ = calibrate_noise_multiplier(GaussianEvent, 0.7, search.delta_)
    assert search.score_noise_multiplier_ == pytest.approx(z, rel=1e-12)
    with pytest.raises(ValueError, match="every candidate must be private"):
        PrivateSearchCV(clone(pipe).set_params(epsilon=np.inf), {"clf__C": [1.0]}).fit(X, y)
