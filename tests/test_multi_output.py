"""DPRidge with several target columns: one fit, one guarantee, each column in its own units.

The privacy of the joint fit is audited end to end by the audit paths "two targets"
(``skdp/audit/_paths.py``: public per-target bounds, private bounds, every default in memory and
on Dask) and by :func:`test_audit_weights_and_warm_starts_with_two_targets` below; the joint
residual clip by the replay suite (``tests/test_replay_all.py``, the squared loss with K = 2).
"""

import math

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV

from skdp import DPRidge
from skdp.linear_model._bounds import Y_BOUNDS_SHARE, Y_TAIL_SHARE, bound_share, tail_plan
from skdp.optimizers._defaults import SQUARED_CLIP_FACTOR
from skdp.privacy import compute_epsilon
from skdp.privacy.quantiles import em_epsilon, positive_grid, signed_grid
from skdp.privacy.split import zcdp_budget

OPTIMIZERS = ["dp_scd", "dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree"]


def _data(n=2000, K=3, seed=0):
    """Unscaled features and K targets in very different units and offsets."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1.0, 10.0, 0.1, 3.0]
    B = rng.normal(size=(4, K))
    Y = (X / [1.0, 10.0, 0.1, 3.0]) @ B + 0.3 * rng.normal(size=(n, K))
    Y = Y * np.geomspace(1.0, 1e3, K) + np.linspace(-5.0, 500.0, K)
    return X, Y


def test_epsilon_inf_fits_each_column_as_its_own_ridge():
    """Without noise the objective is a sum over the columns: the joint fit is the one-column
    fit of every column, and as good as scikit-learn's multi-output Ridge."""
    X, Y = _data()
    # (both solved to a tight tolerance: the joint stopping rule reads every column's gradient)
    joint = DPRidge(epsilon=np.inf, alpha=1.0, tol=1e-12).fit(X, Y)
    for k in range(Y.shape[1]):
        alone = DPRidge(epsilon=np.inf, alpha=1.0, tol=1e-12).fit(X, Y[:, k])
        np.testing.assert_allclose(joint.coef_[k], alone.coef_, rtol=1e-7,
                                   atol=1e-9 * np.abs(Y[:, k]).max())
        assert joint.intercept_[k] == pytest.approx(alone.intercept_, rel=1e-7)
        assert tuple(joint.y_bounds_[k]) == alone.y_bounds_
    reference = Ridge(alpha=1.0).fit(X, Y)
    assert joint.score(X, Y) == pytest.approx(reference.score(X, Y), abs=1e-3)


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_every_optimizer_fits_several_targets_in_one_budget(optimizer):
    """Each optimizer fits the K columns in one fit whose claim is the budget, with a model
    much better than predicting the centre, on raw features and targets in other units."""
    X, Y = _data()
    est = DPRidge(epsilon=1.0, optimizer=optimizer, random_state=0).fit(X, Y)
    assert est.coef_.shape == (3, 4) and est.intercept_.shape == (3,)
    assert est.predict(X).shape == Y.shape
    assert est.epsilon_ <= 1.0 * (1 + 1e-9)
    assert compute_epsilon(est.dp_event_, est.delta_) == pytest.approx(est.epsilon_, rel=1e-9)
    assert est.score(X, Y) > 0.5


def test_shapes_follow_y_as_in_scikit_learn():
    X, Y = _data(K=2)
    params = dict(epsilon=1.0, random_state=3, optimizer="dp_gdws")
    flat = DPRidge(**params).fit(X, Y[:, 0])
    column = DPRidge(**params).fit(X, Y[:, :1])
    both = DPRidge(**params).fit(X, Y)
    assert flat.coef_.shape == (4,) and isinstance(flat.intercept_, float)
    assert flat.predict(X).shape == (len(X),) and isinstance(flat.y_bounds_, tuple)
    assert isinstance(flat.derivative_clip_, float)
    assert column.coef_.shape == (1, 4) and column.intercept_.shape == (1,)
    assert column.predict(X).shape == (len(X), 1) and column.y_bounds_.shape == (1, 2)
    # a y of one column is the one-target fit, bit for bit
    np.testing.assert_array_equal(column.coef_[0], flat.coef_)
    assert column.intercept_[0] == flat.intercept_
    assert tuple(column.y_bounds_[0]) == flat.y_bounds_ and column.epsilon_ == flat.epsilon_
    assert both.coef_.shape == (2, 4) and both.y_bounds_.shape == (2, 2)
    assert both.derivative_clip_.shape == (2,)
    ref = Ridge().fit(X, Y)
    assert both.predict(X[:5]).shape == ref.predict(X[:5]).shape


@pytest.mark.parametrize("optimizer", ["dp_gdws", "dp_scd"])
def test_each_column_is_fitted_in_its_own_units(optimizer):
    """A column and its public bounds in other units (times 1000, shifted) give the same model
    of that column in those units, and leave the other column's model unchanged: the fit sees
    every column scaled to [-1, 1] by its own half-range."""
    X, Y = _data(K=2)
    bounds = np.array([[-40.0, 40.0], [-3000.0, 3500.0]])
    params = dict(epsilon=1.0, optimizer=optimizer, data_norm=40.0, random_state=5)
    a = DPRidge(**params, y_bounds=bounds).fit(X, Y)
    moved = Y.copy()
    moved[:, 1] = 1000.0 * Y[:, 1] - 7.0
    b = DPRidge(**params, y_bounds=bounds * [[1.0], [1000.0]] - [[0.0], [7.0]]).fit(X, moved)
    np.testing.assert_allclose(b.coef_[0], a.coef_[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.coef_[1], 1000.0 * a.coef_[1], rtol=1e-9, atol=1e-9)
    assert b.intercept_[1] == pytest.approx(1000.0 * a.intercept_[1] - 7.0, rel=1e-9)
    # the joint residual clip: the optimizer's factor times sqrt(K), per column in its units
    half = (bounds[:, 1] - bounds[:, 0]) / 2.0
    np.testing.assert_allclose(a.derivative_clip_, SQUARED_CLIP_FACTOR[optimizer]
                               * math.sqrt(2.0) * half, rtol=1e-12)


def test_public_pair_applies_to_every_column():
    X, Y = _data(K=3)
    est = DPRidge(epsilon=1.0, y_bounds=(-2000.0, 2000.0), random_state=0).fit(X, Y)
    np.testing.assert_array_equal(est.y_bounds_, [[-2000.0, 2000.0]] * 3)
    assert "private_bounds" not in est.privacy_record_.details or not any(
        name.startswith("y_") for name in est.privacy_record_.details["private_bounds"])


@pytest.mark.parametrize("K", [2, 4])
def test_private_bounds_of_all_columns_cost_what_one_columns_do(K):
    """``y_bounds="auto"`` releases a median, a spread and the tail reserve for every column,
    each at 1/K of the one-column shares: the zCDP cost of the medians and spreads (eps^2 / 8
    per exponential mechanism) sums to what one column's cost, the tails' to at most one
    column's cap; and each column's bounds are its own."""
    X, Y = _data(n=20000, K=K)
    est = DPRidge(epsilon=1.0, delta=1e-6, data_norm=100.0, random_state=1).fit(X, Y)
    released = est.privacy_record_.details["private_bounds"]
    rho = zcdp_budget(1.0, 1e-6)
    n = len(X)
    per_quantile = em_epsilon(bound_share(Y_BOUNDS_SHARE, n, 2 * K, signed_grid().size, rho)
                              * rho, 2 * K)
    assert bound_share(Y_BOUNDS_SHARE, n, 2 * K, positive_grid().size, rho, 0.75) == \
        Y_BOUNDS_SHARE  # large n: the base share, not raised
    tail = tail_plan(n, rho, positive_grid().size, K)
    for k in range(K):
        assert released[f"y_median[{k}]"]["epsilon"] == pytest.approx(per_quantile, rel=1e-12)
        assert released[f"y_spread[{k}]"]["epsilon"] == pytest.approx(per_quantile, rel=1e-12)
        assert released[f"y_tail[{k}]"]["epsilon"] == pytest.approx(tail, rel=1e-12)
    # the K columns' medians and spreads together cost one column's share; their tail
    # reserves together at most one column's cap
    spent = sum(released[f"{name}[{k}]"]["epsilon"] ** 2 / 8.0
                for name in ("y_median", "y_spread") for k in range(K))
    assert spent == pytest.approx(Y_BOUNDS_SHARE * rho, rel=1e-9)
    assert K * tail**2 / 8.0 <= Y_TAIL_SHARE * rho * (1 + 1e-9)
    # each column's released bounds hold most of its own targets, in its own units
    for k in range(K):
        low, high = est.y_bounds_[k]
        inside = np.mean((Y[:, k] >= low) & (Y[:, k] <= high))
        assert inside > 0.9 and high - low < 20 * np.ptp(Y[:, k])
    assert est.epsilon_ <= 1.0 * (1 + 1e-9)


def test_a_fit_never_mutates_the_callers_arrays():
    X, Y = _data(K=2)
    Y[:7] = 1e9  # clipped to the bounds inside the fit only
    X0, Y0 = X.copy(), Y.copy()
    DPRidge(epsilon=1.0, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Y, Y0)


def test_bad_multi_output_parameters_are_explained():
    X, Y = _data(K=2)
    with pytest.raises(ValueError, match="3 pairs but y has 2 target columns"):
        DPRidge(y_bounds=[(0, 1)] * 3).fit(X, Y)
    with pytest.raises(ValueError, match="low < high"):
        DPRidge(y_bounds=[(0, 1), (1, 0)]).fit(X, Y)
    with pytest.raises(ValueError, match="one pair per target"):
        DPRidge(y_bounds=[0, 1, 2]).fit(X, Y)
    with pytest.raises(ValueError, match="derivative_clip must be 'auto' for a y of several"):
        DPRidge(derivative_clip=1.0).fit(X, Y)
    # a warm start needs a model of the same number of targets
    est = DPRidge(warm_start=True, optimizer="dp_gdws", random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match=r"coef_ has shape \(2, 4\).*classes or targets"):
        est.fit(X, Y[:, 0])


def test_grid_search_over_epsilon_with_several_targets():
    X, Y = _data(n=1500, K=2)
    search = GridSearchCV(DPRidge(random_state=0, optimizer="dp_gdws"),
                          {"epsilon": [0.3, 3.0]}, cv=3).fit(X, Y)
    assert search.best_estimator_.coef_.shape == (2, 4)
    assert search.predict(X).shape == Y.shape


def test_warm_start_with_several_targets_composes_the_chain():
    X, Y = _data(K=2)
    est = DPRidge(epsilon=1.0, warm_start=True, optimizer="dp_gdws", data_norm=40.0,
                  y_bounds=[(-40.0, 40.0), (-3000.0, 3500.0)]).fit(X, Y)
    first = est.epsilon_
    est.fit(X, Y)
    assert len(est.privacy_record_.details["warm_start_history"]) == 2
    assert first < est.epsilon_ < 2.0 * first


# -- end-to-end audit of weights and a warm-start chain with two targets (slow) -------------------
@pytest.mark.slow  # 1000 + 1000 chains of two fits
def test_audit_weights_and_warm_starts_with_two_targets():
    """The audit path "two targets, y_bounds='auto'" with weights up to 10 (the canary's at 10)
    and each fit a chain: epsilon 32, then one small step at 0.25 from it, which releases the
    six target bounds again. The claim composes both fits with their bounds; the audit stays
    within it and refutes the last fit's epsilon alone."""
    from skdp.audit import audit_estimator
    from skdp.audit._paths import estimator_paths, offset_free_response

    path, = [p for p in estimator_paths()
             if p.label == "DPRidge two targets, y_bounds='auto' (dp_gdws, 300 rows)"]
    c, X = path.data()
    weights = np.random.default_rng(5).uniform(0.0, 10.0, size=len(c.y))
    weights[c.index] = 10.0

    def factory(seed):
        est = path.make(seed).set_params(max_sample_weight=10.0, warm_start=True)
        return _Chain(est, seed, weights)

    res = audit_estimator(factory, X, c.y, c.index, n_fits=1000, random_state=9,
                          statistic=offset_free_response(c.x))
    assert not res.violated, res.summary()
    assert res.claimed_epsilon > 32.0
    assert res.epsilon_lower_bound > 0.25, res.summary()


class _Chain:
    """Fit at epsilon 32, then one step at 0.25 from it (a fresh seed), with the weights."""

    def __init__(self, est, seed, weights):
        self.est, self.seed, self.weights = est, seed, weights

    def fit(self, X, y):
        from skdp.optimizers.dp_gdws import DPGDWS

        self.est.set_params(epsilon=32.0).fit(X, y, sample_weight=self.weights)
        self.est.set_params(epsilon=0.25, optimizer=DPGDWS(step=0.01, max_iter=1),
                            random_state=(self.seed + 1_000_003) % 2**32)
        self.est.fit(X, y, sample_weight=self.weights)
        return self

    def __getattr__(self, name):
        return getattr(self.est, name)


def test_private_search_scores_several_targets_within_its_sensitivity():
    """PrivateSearchCV over DPRidge with per-target public bounds: the validation score is the
    mean of each record's clipped squared errors over the columns, so one record moves it by at
    most mean_k (high_k - low_k)^2 / m, the sensitivity the search records (and a record at the
    far end of every column's bounds moves it by most of that)."""
    from skdp.model_selection import PrivateSearchCV
    from skdp.model_selection._search import _score

    X, Y = _data(n=3000, K=2)
    bounds = [(-40.0, 40.0), (-3000.0, 3500.0)]
    search = PrivateSearchCV(DPRidge(y_bounds=bounds, optimizer="dp_gdws"),
                             {"alpha": [0.5, 2.0]}, validation_fraction=0.2, random_state=0,
                             refit=True).fit(X, Y)
    m = 600
    widths = np.array([80.0, 6500.0])
    assert search.privacy_record_.sensitivity == pytest.approx(np.mean(widths**2) / m)
    assert search.best_estimator_.coef_.shape == (2, 4)
    assert search.predict(X).shape == Y.shape
    model, final = search.best_estimator_, search.estimator
    Xv, Yv = X[:m].copy(), Y[:m].copy()
    base = _score(model, Xv, Yv, "neg_mean_squared_error", final)
    pred = model.predict(Xv[:1])[0]
    far = np.where(pred > np.mean(bounds, axis=1), [b[0] for b in bounds], [b[1] for b in bounds])
    Yv[0] = far * 10.0  # beyond the bounds: clipped to the far end of each column
    moved = abs(_score(model, Xv, Yv, "neg_mean_squared_error", final) - base)
    assert moved <= search.privacy_record_.sensitivity * (1 + 1e-12)
    assert moved > 0.2 * search.privacy_record_.sensitivity


def test_tuning_cost_plans_the_fits_of_several_targets():
    """tuning_cost of a GridSearchCV over epsilon on a 2-D y plans each fit with the y's
    columns (each column's bound releases): it equals what a ledger charged the real fits, and
    the plan's events hold every column's releases."""
    from sklearn.model_selection import KFold

    from skdp import PrivacyLedger
    from skdp.model_selection import plan_event, tuning_cost

    X, Y = _data(n=900, K=3)
    with PrivacyLedger(delta=1e-5) as ledger:
        search = GridSearchCV(DPRidge(delta=1e-7, optimizer="dp_gdws"),
                              {"epsilon": [0.3, 1.0]}, cv=KFold(3)).fit(X, Y)
    cost = tuning_cost(search, X, Y, delta=1e-5)
    assert cost.exact and cost.n_fits == 2 * 3 + 1 == len(ledger)
    assert math.isclose(cost.epsilon, ledger.spent(), rel_tol=1e-9)
    planned = plan_event(DPRidge(epsilon=1.0, delta=1e-7, optimizer="dp_gdws"), 900, 4,
                         n_targets=3)
    assert {f"y_median[{k}]" for k in range(3)} <= set(planned.details["private_bounds"])


def test_private_pipeline_with_several_targets_is_one_budget():
    """A PrivatePipeline's scaler and DPRidge on a 2-D y: one budget, whose event composes the
    scaler's releases and every column's target releases with the model's."""
    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import PrivateRobustScaler

    X, Y = _data(n=3000, K=2)
    pipe = make_private_pipeline(PrivateRobustScaler(), DPRidge(random_state=0),
                                 epsilon=1.0, delta=1e-6).fit(X, Y)
    assert pipe.epsilon_ <= 1.0 * (1 + 1e-9)
    assert compute_epsilon(pipe.dp_event_, 1e-6) == pytest.approx(pipe.epsilon_, rel=1e-9)
    assert pipe.predict(X).shape == Y.shape and pipe.score(X, Y) > 0.5
    released = pipe[-1].privacy_record_.details["private_bounds"]
    assert {"y_median[0]", "y_median[1]", "y_spread[0]", "y_spread[1]"} <= set(released)
