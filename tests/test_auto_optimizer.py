"""optimizer="auto": a public rule picks the optimizer, and the fit is that optimizer's fit."""

import math

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_regression

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.optimizers._defaults import (
    DUAL_MAX_SNR, DUAL_MIN_REGULARISATION, RIDGE_ACCELERATED_MIN_SNR,
    RIDGE_FALLBACK_ACCELERATED_MIN_SNR, budget_rho, prefers_accelerated_ridge, prefers_dual,
    ridge_fallback,
)
from skdp.privacy.record import zcdp_rho_for_budget


def _unit_rows(n, d, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    score = X[:, 0] + 0.3 * rng.normal(size=n)
    y = (score > 0).astype(int) if classes == 2 else np.digitize(score, [-0.15, 0.15])
    return X, y


def test_prefers_dual_is_the_stated_rule():
    rho = zcdp_rho_for_budget(0.3, 1e-5)
    # s = n sqrt(2 rho) / sqrt(p), computed here independently of skdp's snr()
    for n, p in [(500, 65), (5000, 109), (426, 31), (30000, 109)]:
        s = n * math.sqrt(2 * rho) / math.sqrt(p)
        assert prefers_dual(n, p, rho, 1.0) == (s < 16.0)
    assert prefers_dual(500, 65, rho, 1.0) and not prefers_dual(30000, 109, rho, 1.0)
    # weakly regularised in units of unit rows (C * D^2 > 16): never the dual method
    assert prefers_dual(500, 65, rho, 1 / 16) and not prefers_dual(500, 65, rho, 1 / 16.5)
    assert not prefers_dual(500, 65, math.inf, 1.0)  # epsilon = inf
    assert (DUAL_MAX_SNR, DUAL_MIN_REGULARISATION) == (16.0, 1.0 / 16.0)
    for n, p in [(500, 65), (2000, 65), (426, 31)]:  # the binary SVC's threshold
        s = n * math.sqrt(2 * rho) / math.sqrt(p)
        assert prefers_dual(n, p, rho, 1.0, max_snr=8.0) == (s < 8.0)


@pytest.mark.parametrize("classes, name", [(3, "dp_scd"), (2, "dp_gdws")])
def test_auto_is_the_fit_of_the_optimizer_it_picks(classes, name):
    X, y = _unit_rows(400, 10, classes=classes)
    auto = DPLogisticRegression(epsilon=0.5, data_norm=1.0, random_state=3).fit(X, y)
    assert auto.optimizer == "auto" and auto.optimizer_.name == name
    named = DPLogisticRegression(epsilon=0.5, data_norm=1.0, random_state=3,
                                 optimizer=name).fit(X, y)
    np.testing.assert_array_equal(auto.coef_, named.coef_)
    np.testing.assert_array_equal(auto.intercept_, named.intercept_)
    assert auto.derivative_clip_ == named.derivative_clip_
    assert auto.epsilon_ == named.epsilon_ and auto.dp_event_ == named.dp_event_


@pytest.mark.parametrize("kw, expected", [
    ({"epsilon": 0.5, "data_norm": 1.0}, "dp_scd"),  # s ~ 4, C D^2 = 1
    ({"epsilon": 50.0, "data_norm": 1.0}, "dp_gdws"),  # s >= 16
    ({"epsilon": 0.5, "data_norm": 10.0}, "dp_gdws"),  # C D^2 = 100: weakly regularised
    ({"epsilon": 0.5, "data_norm": 10.0, "C": 0.01}, "dp_scd"),  # C D^2 = 1
    ({"epsilon": 0.5, "data_norm": "auto"}, "dp_gdws"),  # no public row bound
    ({"epsilon": 0.5, "data_norm": 1.0, "warm_start": True}, "dp_gdws"),
    ({"epsilon": np.inf, "data_norm": 1.0}, "dp_gdws"),
])
def test_auto_rule_on_public_quantities(kw, expected):
    """Multiclass: the rule of prefers_dual; binary: dp_gdws whatever the public quantities
    (with its derivative clip of 1/2 it was ahead of dp_scd where the rule picked dp_scd)."""
    X, y = _unit_rows(400, 10, classes=3)
    assert DPLogisticRegression(random_state=0, **kw).fit(X, y).optimizer_.name == expected
    X, y = _unit_rows(400, 10)
    assert DPLogisticRegression(random_state=0, **kw).fit(X, y).optimizer_.name == "dp_gdws"
    # a public label set counts as the classes (a binary y with three public classes)
    three = DPLogisticRegression(random_state=0, classes=[0, 1, 2], **kw).fit(X, y)
    assert three.optimizer_.name == expected


def test_auto_choice_never_reads_the_data():
    """Two data sets with the same public shape get the same optimizer, whatever their values
    (the rule runs before any private computation)."""
    X, y = _unit_rows(400, 10, classes=3)
    names = set()
    for scale in (1e-3, 1.0, 1e6):  # with data_norm="auto": a private bound, never read
        est = DPLogisticRegression(epsilon=0.5, random_state=0).fit(X * scale, y)
        names.add(est.optimizer_.name)
    for seed in range(3):  # a public bound: the same choice for any rows
        Xs, ys = _unit_rows(400, 10, seed, classes=3)
        names.add(("public", DPLogisticRegression(epsilon=0.5, data_norm=1.0, random_state=0)
                   .fit(Xs[::-1], 2 - ys).optimizer_.name))
    assert names == {"dp_gdws", ("public", "dp_scd")}


def test_auto_on_raw_data_keeps_dp_gdws():
    """Raw breast cancer (rows of norm ~900): the private bound is not public, so dp_gdws; a
    public bound of that size is weakly regularised in unit-row terms, so dp_gdws too."""
    X, y = load_breast_cancer(return_X_y=True)
    assert DPLogisticRegression(random_state=0).fit(X, y).optimizer_.name == "dp_gdws"
    assert DPLogisticRegression(data_norm=4000.0, random_state=0).fit(X, y).optimizer_.name \
        == "dp_gdws"


def _scd_warnings(est, X, y):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [w for w in caught if "weakly regularised for a dual method" in str(w.message)]


@pytest.mark.parametrize("cls", [DPLogisticRegression, DPLinearSVC])
def test_explicit_dp_scd_warns_where_its_dual_steps_vanish(cls):
    """An explicit dp_scd on raw breast cancer (rows of norm ~900, so lam n ~ 4e-7 in units of
    the row bound) learns the majority class; the fit says why, at the user's call site. The
    same threshold as the auto rule (lam n / D^2 against DUAL_MIN_REGULARISATION), and no
    warning where the rule would pick dp_scd, for the default optimizer, or at epsilon=inf."""
    X, y = load_breast_cancer(return_X_y=True)
    raw = _scd_warnings(cls(optimizer="dp_scd", random_state=0), X, y)
    assert len(raw) == 1 and raw[0].filename == __file__
    Xu, yu = _unit_rows(400, 10)
    assert not _scd_warnings(cls(optimizer="dp_scd", data_norm=1.0, random_state=0), Xu, yu)
    # C D^2 = 16 is the rule's boundary (dp_scd allowed); just past it, the warning
    assert not _scd_warnings(cls(optimizer="dp_scd", data_norm=2.0, C=4.0, random_state=0), Xu, yu)
    assert _scd_warnings(cls(optimizer="dp_scd", data_norm=2.0, C=4.5, random_state=0), Xu, yu)
    assert not _scd_warnings(cls(random_state=0), X, y)
    assert not _scd_warnings(cls(optimizer="dp_scd", epsilon=np.inf, max_iter=50), Xu, yu)


def test_dp_scd_of_ridge_moves_on_weakly_regularised_rows_and_does_not_warn():
    """The squared loss's dual step is a relaxed projection whose size does not vanish with
    lam n (benchmarks/dev_rules_ridge_dual_warning.py): on generated rows scaled by 100
    (lam n ~ 7e-6 in units of the released row bound, far below the classifiers' 1/16) DPRidge's
    dp_scd still fits (R^2 0.96 measured at epsilon 1, 3 seeds; dp_gdws 0.94) and warns
    nothing, as on standardised rows with 30 features and on raw breast cancer."""
    X, y = make_regression(n_samples=2000, n_features=10, n_informative=5, noise=20,
                           random_state=1010)
    Xtr, Xte, ytr, yte = X[:1000] * 100, X[1000:] * 100, y[:1000], y[1000:]
    fits = []
    for seed in range(3):
        model = DPRidge(epsilon=1.0, random_state=seed)
        assert not _scd_warnings(model, Xtr, ytr)
        fits.append(model)
    assert fits[0].optimizer_.name == "dp_scd"
    assert 1.0 / fits[0].data_norm_**2 < 1e-4
    assert np.mean([m.score(Xte, yte) for m in fits]) > 0.9
    X30, y30 = make_regression(n_samples=1000, n_features=30, noise=20, random_state=0)
    assert not _scd_warnings(DPRidge(optimizer="dp_scd", random_state=0), X30, y30)
    Xb, _ = load_breast_cancer(return_X_y=True)
    assert not _scd_warnings(DPRidge(optimizer="dp_scd", random_state=0), Xb[:, 1:], Xb[:, 0])


def test_auto_of_ridge_and_svc_and_their_fallbacks():
    X, y = _unit_rows(300, 5)
    assert DPRidge(random_state=0).fit(X, X[:, 0]).optimizer_.name == "dp_scd"
    # warm_start: dp_scd cannot warm-start, so the fallback rule runs (s = 300 sqrt(2 rho) /
    # sqrt(6) >= 10 at epsilon 1: dp_masg; at epsilon 0.05, below 10: dp_gdws)
    assert DPRidge(warm_start=True, random_state=0).fit(X, X[:, 0]).optimizer_.name == "dp_masg"
    with pytest.warns(UserWarning):  # private bounds of 300 rows at epsilon 0.05 are unreliable
        small = DPRidge(warm_start=True, epsilon=0.05, random_state=0).fit(X, X[:, 0])
    assert small.optimizer_.name == "dp_gdws"
    # DPLinearSVC: dp_gdws for binary problems, dp_nag_opt for multiclass ones (session 12)
    assert DPLinearSVC(random_state=0).fit(X, y).optimizer_.name == "dp_gdws"
    y3 = np.argmax(X[:, :3], axis=1)
    assert DPLinearSVC(random_state=0).fit(X, y3).optimizer_.name == "dp_nag_opt"
    # the classes are public when given: the rule reads them, not y
    svc = DPLinearSVC(classes=[0, 1, 2], random_state=0).fit(X, (y3 > 0).astype(int))
    assert svc.optimizer_.name == "dp_nag_opt"


def test_prefers_accelerated_ridge_is_the_stated_rule():
    rho = zcdp_rho_for_budget(1.0, 1e-5)
    # s = n sqrt(2 rho) / sqrt(p), computed here independently of skdp's snr()
    for n, p in [(500, 12), (2000, 12), (5000, 101), (30000, 101), (3673, 12), (1000, 9)]:
        s = n * math.sqrt(2 * rho) / math.sqrt(p)
        assert prefers_accelerated_ridge(n, p, rho) == (s >= 300.0)
    assert prefers_accelerated_ridge(30000, 12, rho) and not prefers_accelerated_ridge(500, 12, rho)
    assert not prefers_accelerated_ridge(10**9, 12, math.inf)  # epsilon = inf: not private
    assert RIDGE_ACCELERATED_MIN_SNR == 300.0
    # ... the threshold the docs state, in the rules table and "Which optimizer when"
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    table = " ".join((docs / "optimizers" / "index.rst").read_text().split())
    guide = " ".join((docs / "user_guide" / "choosing_an_optimizer.rst").read_text().split())
    t = f"{RIDGE_ACCELERATED_MIN_SNR:g}"
    assert f":class:`~skdp.DPRidge`: |dp_scd| when ``s < {t}``, |dp_masg| from ``s = {t}``" in table
    assert f'``"dp_masg"`` - ``s >= {t}``' in guide


def test_ridge_fallback_is_the_stated_rule():
    """Where dp_scd cannot run, DPRidge's "auto" runs dp_masg from s = 10 and dp_gdws below
    (s computed here independently of skdp's snr()), and the docs state it."""
    rho = zcdp_rho_for_budget(1.0, 1e-5)
    for n, p in [(20, 12), (40, 12), (100, 101), (200, 101), (3673, 12)]:
        s = n * math.sqrt(2 * rho) / math.sqrt(p)
        assert ridge_fallback(n, p, rho) == ("dp_masg" if s >= 10.0 else "dp_gdws")
    assert ridge_fallback(10**9, 12, math.inf) == "dp_gdws"  # epsilon = inf: not private
    assert RIDGE_FALLBACK_ACCELERATED_MIN_SNR == 10.0
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    dask = " ".join((docs / "dask.rst").read_text().split())
    assert "``dp_masg`` from ``s = 10`` and ``dp_gdws`` below" in dask


def _rows_at_snr(s, p, epsilon, delta=1e-5):
    """The n at which a design of p columns (features + intercept) has the ratio s."""
    return int(math.ceil(s * math.sqrt(p) / math.sqrt(2 * zcdp_rho_for_budget(epsilon, delta))))


@pytest.mark.parametrize("bounds", [{}, {"data_norm": 1.0, "y_bounds": (-1, 1)}],
                         ids=["private bounds", "public bounds"])
def test_auto_of_ridge_switches_to_dp_masg_at_its_threshold(bounds):
    """DPRidge's "auto": dp_scd below s = 300, dp_masg from it, with public or private bounds
    (the rule reads n, the columns and the budget only), and the fit is dp_masg's fit."""
    d, eps = 4, 1.0
    n = _rows_at_snr(300.0, d + 1, eps)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = X @ np.array([0.5, -0.3, 0.2, 0.0]) + 0.1 * rng.normal(size=n)
    kw = dict(epsilon=eps, delta=1e-5, random_state=0, **bounds)
    assert DPRidge(**kw).fit(X, y).optimizer_.name == "dp_masg"
    assert DPRidge(**kw).fit(X[:-1], y[:-1]).optimizer_.name == "dp_scd"  # just below
    # the columns count: one more and the same n is below the threshold
    X5 = np.column_stack([X, np.zeros(n)])
    assert DPRidge(**kw).fit(X5, y).optimizer_.name == "dp_scd"
    auto = DPRidge(**kw).fit(X, y)
    named = DPRidge(optimizer="dp_masg", **kw).fit(X, y)
    np.testing.assert_array_equal(auto.coef_, named.coef_)
    assert auto.intercept_ == named.intercept_
    assert auto.epsilon_ == named.epsilon_ and auto.dp_event_ == named.dp_event_
    # epsilon = inf is not a private fit: the rule keeps dp_scd (the shared exact solver)
    assert DPRidge(epsilon=np.inf).fit(X, y).optimizer_.name == "dp_scd"


def test_auto_on_dask_runs_a_distributed_optimizer():
    da = pytest.importorskip("dask.array")
    X, y = _unit_rows(400, 10)
    Xd, yd = da.from_array(X, chunks=150), da.from_array(y, chunks=150)
    est = DPLogisticRegression(epsilon=0.5, data_norm=1.0, random_state=0).fit(Xd, yd)
    assert est.optimizer_.name == "dp_gdws"  # dp_scd is not distributed
    # the binary SVC's small-budget rule (dp_scd) falls back the same way
    svc = DPLinearSVC(epsilon=0.1, data_norm=1.0, random_state=0).fit(Xd, yd)
    assert svc.optimizer_.name == "dp_gdws"
    assert DPLinearSVC(epsilon=0.1, data_norm=1.0, random_state=0).fit(X, y).optimizer_.name \
        == "dp_scd"
    # DPRidge's fallback: dp_masg from s = 10 (400 rows, 11 columns, epsilon 1), dp_gdws below
    ridge = DPRidge(data_norm=1.0, y_bounds=(-1, 1), random_state=0).fit(Xd, Xd[:, 0])
    assert ridge.optimizer_.name == "dp_masg"
    assert DPRidge(data_norm=1.0, y_bounds=(-1, 1), random_state=0).fit(X, X[:, 0]) \
        .optimizer_.name == "dp_scd"  # in memory: the rule's own choice
    tiny = DPRidge(epsilon=0.05, data_norm=1.0, y_bounds=(-1, 1), random_state=0)
    assert tiny.fit(Xd, Xd[:, 0]).optimizer_.name == "dp_gdws"
    # from s = 300 DPRidge's rule picks dp_masg, which runs on Dask: no fallback there
    big = DPRidge(epsilon=20.0, data_norm=1.0, y_bounds=(-1, 1), random_state=0)
    assert big.fit(Xd, Xd[:, 0]).optimizer_.name == "dp_masg"


@pytest.mark.parametrize("n, passthrough", [(4000, False), (300, True)])
def test_auto_in_a_pipeline_reads_the_pipelines_public_row_bound(n, passthrough, monkeypatch):
    """After a scaler that released its bounds, the row bound is public (sqrt(d)) and the rule
    reads it; after a passthrough (nothing released) there is none and the rule gets None."""
    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import PrivateRobustScaler

    seen = []
    rule = DPLogisticRegression._auto_optimizer

    def spy(self, n_samples, n_columns, fit, public_norm, lam, distributed):
        seen.append((n_samples, n_columns, public_norm, fit.epsilon))
        return rule(self, n_samples, n_columns, fit, public_norm, lam, distributed)

    monkeypatch.setattr(DPLogisticRegression, "_auto_optimizer", spy)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3)) * [1.0, 100.0, 1e4]
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes: the rule reads the bound
    pipe = make_private_pipeline(PrivateRobustScaler(random_state=0),
                                 DPLogisticRegression(random_state=0), epsilon=0.3).fit(X, y)
    est = pipe.steps[-1][1]
    assert pipe.steps[0][1].passthrough_ == passthrough
    (n_seen, p_seen, bound, eps_fit), = seen
    assert (n_seen, p_seen, eps_fit) == (n, 4, 0.3)  # the rule reads the pipeline's budget
    if passthrough:
        assert bound is None and est.optimizer_.name == "dp_gdws"
    else:
        assert bound == est.data_norm_ == pytest.approx(math.sqrt(3))
        s = n * math.sqrt(2 * budget_rho(eps_fit, est.delta_)) / 2
        assert est.optimizer_.name == ("dp_scd" if s < 16 else "dp_gdws")


@pytest.mark.parametrize("kw, expected", [
    ({"epsilon": 0.1, "data_norm": 1.0}, "dp_scd"),  # s ~ 1.3 < 8, C D^2 = 1
    ({"epsilon": 0.5, "data_norm": 1.0}, "dp_gdws"),  # s ~ 8.7 >= 8
    ({"epsilon": 0.1, "data_norm": "auto"}, "dp_gdws"),  # no public row bound
    ({"epsilon": 0.1, "data_norm": 10.0}, "dp_gdws"),  # C D^2 = 100: weakly regularised
    ({"epsilon": 0.1, "data_norm": 1.0, "warm_start": True}, "dp_gdws"),  # dp_scd cannot
    ({"epsilon": np.inf, "data_norm": 1.0}, "dp_gdws"),
])
def test_binary_svc_auto_rule(kw, expected):
    """A binary DPLinearSVC runs dp_scd where s = n sqrt(2 rho) / sqrt(p) < 8 with a public,
    well-regularising row bound (session 13), dp_gdws otherwise; s computed here from zCDP."""
    X, y = _unit_rows(400, 10)
    if isinstance(kw.get("epsilon"), float) and math.isfinite(kw["epsilon"]):
        s = 400 * math.sqrt(2 * zcdp_rho_for_budget(kw["epsilon"], 1e-5)) / math.sqrt(11)
        assert (s < 8.0) == (kw["epsilon"] == 0.1)
    est = DPLinearSVC(delta=1e-5, random_state=0, **kw).fit(X, y)
    assert est.optimizer == "auto" and est.optimizer_.name == expected
    if expected == "dp_scd":  # the auto fit is the named optimizer's fit
        named = DPLinearSVC(delta=1e-5, random_state=0, optimizer="dp_scd", **kw).fit(X, y)
        np.testing.assert_array_equal(est.coef_, named.coef_)
        assert est.epsilon_ == named.epsilon_
