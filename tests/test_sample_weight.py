"""``sample_weight`` in fit: semantics, clipping to ``max_sample_weight``, privacy scaling, errors.

The record/replay test that a zero weight is the null record (sensitivity scaled by
``max_sample_weight``) is in ``test_replay_all.py``; the scikit-learn sample-weight checks
(integer weights = repeated rows, at epsilon=inf) are in ``test_sklearn_checks.py``.
"""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp._rows import make_rows
from skdp.losses import get_loss, objective
from skdp.optimizers import available_optimizers

from ._helpers import augmented, breast_cancer, diabetes, encoded, estimator_W

CLASSES = (DPLogisticRegression, DPLinearSVC, DPRidge)


def _data(cls, n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) / 2.0
    if cls is DPRidge:
        return X, np.tanh(X @ np.array([0.5, -0.3, 0.2, 0.0]))
    return X, np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, 0)


@pytest.mark.parametrize("name", available_optimizers())
@pytest.mark.parametrize("cls", CLASSES)
def test_weights_of_one_equal_no_weights(cls, name):
    X, y = _data(cls)
    a = cls(optimizer=name, random_state=3).fit(X, y)
    b = cls(optimizer=name, random_state=3).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.epsilon_ == b.epsilon_


@pytest.mark.parametrize("name", ["dp_gdws", "dp_scd", "dp_nsgd_tree"])
def test_weights_change_the_private_model(name):
    X, y = _data(DPLogisticRegression)
    w = np.random.default_rng(1).uniform(0, 1, len(y))
    a = DPLogisticRegression(optimizer=name, random_state=3).fit(X, y)
    b = DPLogisticRegression(optimizer=name, random_state=3).fit(X, y, sample_weight=w)
    assert not np.allclose(a.coef_, b.coef_)


def test_weights_are_clipped_to_max_sample_weight():
    X, y = _data(DPLogisticRegression)
    w = np.ones(len(y))
    w[:10] = 50.0
    big = DPLogisticRegression(random_state=0).fit(X, y, sample_weight=w)
    one = DPLogisticRegression(random_state=0).fit(X, y, sample_weight=np.minimum(w, 1.0))
    np.testing.assert_array_equal(big.coef_, one.coef_)
    assert w[0] == 50.0  # the caller's array is untouched


def test_weights_clipped_without_privacy_warn():
    """At epsilon=inf a clipped weight is silently another objective (the weighted fit of
    scikit-learn needs max_sample_weight at least the weights); a private fit says nothing
    (the warning would tell whether a weight exceeds the bound)."""
    import warnings

    X, y = _data(DPLogisticRegression)
    w = np.ones(len(y))
    w[:10] = 3.0
    with pytest.warns(UserWarning, match="max_sample_weight=1 .up to 3."):
        DPLogisticRegression(epsilon=np.inf).fit(X, y, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPLogisticRegression(epsilon=np.inf, max_sample_weight=3.0).fit(X, y, sample_weight=w)
        DPLogisticRegression(epsilon=1.0, data_norm=2.0, random_state=0).fit(
            X, y, sample_weight=w)


@pytest.mark.parametrize("cls", CLASSES)
def test_weights_are_validated_once_per_fit(cls):
    """DPRidge validates the weights for its target bounds and hands them on: the clipped-weight
    warning is raised once per fit, as for the classifiers."""
    import warnings

    X, y = _data(cls)
    w = np.ones(len(y))
    w[:10] = 3.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(epsilon=np.inf).fit(X, y, sample_weight=w)
    clipped = [c for c in caught if "max_sample_weight=1 " in str(c.message)]
    assert len(clipped) == 1, [str(c.message) for c in caught]


@pytest.mark.parametrize("name", available_optimizers())
def test_max_sample_weight_scales_the_sensitivity_not_the_epsilon(name):
    X, y = _data(DPLogisticRegression)
    one = DPLogisticRegression(optimizer=name, random_state=0).fit(X, y)
    four = DPLogisticRegression(optimizer=name, random_state=0, max_sample_weight=4.0).fit(X, y)
    assert four.privacy_record_.sensitivity == pytest.approx(
        4.0 * one.privacy_record_.sensitivity, rel=1e-12
    )
    assert four.epsilon_ <= 1.0 + 1e-12 and one.epsilon_ <= 1.0 + 1e-12


def _weighted_objective(kind, X, y, w, W, reg):
    n = X.shape[0]
    loss, Y = encoded(kind, y)
    lam = reg / n if kind == "ridge" else 1.0 / (n * reg)
    rows = make_rows(augmented(X), w)
    return objective(rows, Y, W, get_loss(loss).loss_id, lam, np.inf)


@pytest.mark.parametrize("name", available_optimizers())
def test_nonprivate_weighted_fit_matches_sklearn_logistic(name):
    X, y = breast_cancer()
    w = np.random.default_rng(0).uniform(0.0, 3.0, len(y))
    est = DPLogisticRegression(epsilon=np.inf, optimizer=name, max_sample_weight=3.0).fit(
        X, y, sample_weight=w
    )
    ref = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-12, max_iter=100000)
    ref.fit(augmented(X), y, sample_weight=w)
    f_est = _weighted_objective("logistic", X, y, w, estimator_W(est), 1.0)
    f_ref = _weighted_objective("logistic", X, y, w, np.ascontiguousarray(ref.coef_.T), 1.0)
    assert (f_est - f_ref) / abs(f_ref) < 1e-4


@pytest.mark.parametrize("name", available_optimizers())
def test_nonprivate_weighted_fit_matches_sklearn_ridge(name):
    X, y = diabetes()
    w = np.random.default_rng(0).uniform(0.0, 2.0, len(y))
    est = DPRidge(epsilon=np.inf, optimizer=name, max_sample_weight=2.0).fit(
        X, y, sample_weight=w
    )
    ref = Ridge(alpha=1.0, fit_intercept=False, solver="cholesky").fit(
        augmented(X), y, sample_weight=w
    )
    f_est = _weighted_objective("ridge", X, y, w, estimator_W(est), 1.0)
    f_ref = _weighted_objective("ridge", X, y, w, ref.coef_[:, None], 1.0)
    assert (f_est - f_ref) / abs(f_ref) < 1e-4


def test_all_zero_weights_fit_privately_but_raise_without_privacy():
    X, y = _data(DPLogisticRegression)
    zeros = np.zeros(len(y))
    model = DPLogisticRegression(random_state=0).fit(X, y, sample_weight=zeros)
    assert np.all(np.isfinite(model.coef_))  # a private fit does not reveal "all zero"
    with pytest.raises(ValueError, match="non-zero"):
        DPLogisticRegression(epsilon=np.inf).fit(X, y, sample_weight=zeros)


@pytest.mark.parametrize(
    "weights, match",
    [
        (-np.ones(120), "(?i)negative"),
        (np.ones(119), "shape|samples"),
        (np.full(120, np.nan), "NaN"),
        (np.full(120, np.inf), "infinity"),
    ],
)
def test_bad_weights_raise(weights, match):
    X, y = _data(DPLogisticRegression)
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression().fit(X, y, sample_weight=weights)


@pytest.mark.parametrize("cls", CLASSES)
def test_a_negative_weight_is_refused_with_what_is_allowed(cls):
    """A user trial met scikit-learn's "Negative values in data passed to `sample_weight`",
    which does not say what is allowed. The error says it (the same text on Dask, see
    test_dask_inputs.py), and that a weight was negative, not which one or its value (the
    weights are private); a PrivatePipeline passing the weights to its last step says the same."""
    from skdp.pipeline import make_private_pipeline

    X, y = _data(cls)
    w = np.ones(len(y))
    w[17] = -3.25
    expected = (
        "sample_weight must be finite and non-negative (a weight of 0 is the null record; "
        "weights above max_sample_weight are clipped to it); got a negative weight"
    )
    with pytest.raises(ValueError) as alone:
        cls(data_norm=2.0).fit(X, y, sample_weight=w)
    pipe = make_private_pipeline(cls(data_norm=2.0), epsilon=1.0)
    with pytest.raises(ValueError) as in_pipeline:
        pipe.fit(X, y, **{f"{cls.__name__.lower()}__sample_weight": w})
    for raised in (alone, in_pipeline):
        assert str(raised.value) == expected
        assert "3.25" not in str(raised.value) and "17" not in str(raised.value)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan, "1"])
def test_bad_max_sample_weight_raises(bad):
    X, y = _data(DPLogisticRegression)
    with pytest.raises(ValueError, match="max_sample_weight"):
        DPLogisticRegression(max_sample_weight=bad).fit(X, y)


def test_problem_refuses_weights_outside_the_public_bound():
    from skdp.optimizers import Problem

    X, y = _data(DPLogisticRegression)
    with pytest.raises(ValueError, match="max_sample_weight"):
        Problem(X=X, Y=y[:, None].astype(float), loss=get_loss("logistic"), lam=0.1,
                row_norm_bound=1.0, clip=1.0, sample_weight=np.full(len(y), 2.0))


@pytest.mark.parametrize("routing", [False, True])
def test_bagging_members_get_their_bootstrap_counts_as_clipped_weights(routing, monkeypatch):
    """The budget guide's claim about BaggingClassifier: each member sees every row once, with
    its bootstrap count as a weight that the fit clips to ``max_sample_weight`` (with metadata
    routing, once the estimator requests the weights)."""
    import sklearn
    from sklearn.ensemble import BaggingClassifier

    from skdp.linear_model._base import DPLinearModel

    seen = []
    validate = DPLinearModel._validate_sample_weight

    def spy(self, sample_weight, X, private, y=None):
        clipped = validate(self, sample_weight, X, private, y)
        seen.append((X.shape[0], len(np.unique(X[:, 0])), np.max(sample_weight), np.max(clipped)))
        return clipped

    monkeypatch.setattr(DPLinearModel, "_validate_sample_weight", spy)
    X, y = _data(DPLogisticRegression, n=200)
    member = DPLogisticRegression(epsilon=1.0, random_state=0)
    with sklearn.config_context(enable_metadata_routing=routing):
        if routing:
            member = member.set_fit_request(sample_weight=True)
        BaggingClassifier(member, n_estimators=3, random_state=0).fit(X, y)
    assert len(seen) == 3
    for rows, distinct, drawn_most, used_most in seen:
        assert rows == distinct == 200  # no row repeated
        assert drawn_most >= 2 and used_most == 1.0  # a record drawn twice or more weighs one


def test_weight_checks_read_the_pipelines_budget_not_the_final_steps_own_epsilon():
    """In a PrivatePipeline the final step's own ``epsilon`` is not used, so it cannot switch
    on the non-private weight checks: an estimator left at epsilon=np.inf inside a private
    pipeline warned of clipped weights (and refused all-zero ones) depending on the private
    weights (session 56)."""
    import warnings

    from skdp.pipeline import make_private_pipeline

    X, y = _data(DPLogisticRegression)
    w = np.ones(len(y))
    w[0] = 7.0
    for weights in (w, np.zeros(len(y))):
        pipe = make_private_pipeline(DPLogisticRegression(epsilon=np.inf, data_norm=2.0),
                                     epsilon=1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pipe.fit(X, y, dplogisticregression__sample_weight=weights)
        assert pipe.epsilon_ <= 1.0
