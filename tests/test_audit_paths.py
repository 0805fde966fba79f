"""End-to-end audits of every non-default path a user can reach (issue 13).

Each path of :mod:`skdp.audit._paths` (Poisson batches, the Laplace mechanism, the optimizers'
accountant options, the PLD accountant, every loss, multiclass, sparse input, secure_mode; at
the optimizer and at the estimator level) is audited with a canary that is shown to be strong
enough to catch a noise error of a factor 2 (or, where the path's analysis is itself looser than
that for the last iterate, the factor the path states): the empirical epsilon lower bound stays
below the claim on the real code and exceeds it when every optimizer draws that fraction of its
noise (:func:`skdp.audit.noise_scaled`) while reporting the same claim.

The default run catches the fault on a few cheap paths (and test_audit.py audits each optimizer
x estimator at small size); ``pytest -m slow tests/test_audit_paths.py`` runs every path at
full size, real and faulty (the rows of the table in docs/audit.rst, with the same seeds). A
small audit of each path (the real path's seed, a tenth of its fits) ran in the slow run until
session 39: the full-size audit with a tenth of its power, for 400 s of CPU.
"""

import re
from pathlib import Path

import numpy as np
from sklearn.base import clone
import pytest

from ._helpers import fast_accounting  # noqa: F401 (autouse: memoised accounting for this module)

from skdp.audit._faults import NOISE_DECISIONS, noise_scaled
from skdp.audit._paths import (
    POWER_DELTA,
    POWER_EPSILON,
    OptimizerPath,
    estimator_paths,
    optimizer_paths,
    path_seeds,
    run_path,
)
from skdp.audit._variants import optimizer_variants
from skdp.optimizers import available_optimizers, get_optimizer_class

OPTIMIZERS = available_optimizers()
PATHS = optimizer_paths() + estimator_paths()


def _uses_pld(path):
    if isinstance(path, OptimizerPath):
        return path.accountant == "pld"
    return getattr(path.make(0), "accountant", "rdp") == "pld"


# -- the fault injector ----------------------------------------------------------------------------
def test_noise_scaled_knows_every_optimizer():
    assert set(NOISE_DECISIONS) >= set(OPTIMIZERS)


def _small_problem():
    return OptimizerPath("probe", "probe", "dp_gdws").canary()


@pytest.mark.parametrize("name,params", [
    pytest.param(name, params, id=f"{name}-{label}")
    for name in OPTIMIZERS for label, params in optimizer_variants(name)
])
def test_noise_scaled_scales_exactly_the_noise_drawn(name, params):
    """Same seed, the noise of every release scaled by the factor, the claim (event, epsilon,
    delta, sensitivity) unchanged; and the optimizer is restored when the block exits."""
    from skdp.optimizers import Budget

    c = _small_problem()
    opt = get_optimizer_class(name)(**params)
    budget = Budget(1.0, 1e-5)

    def noise(result):
        return result.trace[:, 1] - result.trace[:, 0]

    real = opt.solve(c.problem, budget, np.random.default_rng(3), record_trace=True)
    with noise_scaled(0.5):
        half = opt.solve(c.problem, budget, np.random.default_rng(3), record_trace=True)
    again = opt.solve(c.problem, budget, np.random.default_rng(3), record_trace=True)
    claim = (real.record.event, real.record.epsilon, real.record.delta, real.record.sensitivity)
    assert (half.record.event, half.record.epsilon, half.record.delta,
            half.record.sensitivity) == claim
    assert noise(real).shape == noise(half).shape and np.abs(noise(real)).max() > 0
    np.testing.assert_allclose(noise(half), 0.5 * noise(real), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(noise(again), noise(real))
    np.testing.assert_array_equal(again.coef, real.coef)


def test_noise_scaled_rejects_a_bad_factor():
    with pytest.raises(ValueError, match="factor"):
        with noise_scaled(0.0):
            pass


# -- the catalogue covers every option -------------------------------------------------------------
#: Every parameter of every optimizer, classified (the map of docs/audit.rst). "analysis": it
#: selects another mechanism, sampling, accounting or allocation, and some path must set it to a
#: non-default value. "public": a public constant of the schedule, the sensitivity or the number
#: of steps (audited at the values of the paths; the privacy argument does not depend on which);
#: "nonprivate": used at epsilon = inf only; "unaudited": dp_sgld's accountant, whose only other
#: value, "ryffel2022", is an unproven analysis that issue 13 removes (every dp_sgld path audits
#: the default "auto").
OPTIONS = {
    # average: post-processing of the releases, but it changes what is released, so a path
    # sets it (dp_gdws average=1/2)
    "dp_gdws": {"analysis": {"batch_size", "mechanism", "average"},
                "public": {"max_iter", "smoothing", "step", "c"}, "nonprivate": {"tol"}},
    "dp_scd": {"analysis": {"batch_size", "variant"},
               "public": {"epochs", "update_clip", "newton_steps"},
               "nonprivate": {"tol", "max_iter"}},
    "dp_nag_opt": {"analysis": {"batch_size", "mechanism", "allocation", "reselect_T"},
                   "public": {"max_iter", "c", "E0", "kappa"}, "nonprivate": {"tol"}},
    "dp_masg": {"analysis": {"batch_size", "mechanism", "allocation", "reselect_T"},
                "public": {"max_iter", "c", "E0", "kappa", "stage_p", "first_stage"},
                "nonprivate": {"tol"}},
    "dp_sgld": {"analysis": {"batch_size", "step", "schedule", "sigma", "projection"},
                "public": {"max_iter"}, "nonprivate": {"tol"}, "unaudited": {"accountant"}},
    "dp_nsgd_tree": {"analysis": {"batch_size", "tree", "honaker"},
                     "public": {"epochs", "momentum", "learning_rate", "schedule"},
                     "nonprivate": {"tol", "max_iter"}},
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_every_optimizer_option_is_mapped_and_its_analyses_audited(name):
    params = get_optimizer_class(name)().get_params()
    assert name in OPTIONS, f"classify the options of {name} (and audit its analyses)"
    classified = set().union(*OPTIONS[name].values())
    assert set(params) <= classified, f"unclassified options: {set(params) - classified}"
    paths = [p for p in optimizer_paths() if p.optimizer == name]
    for option in OPTIONS[name]["analysis"]:
        assert any(option in p.params and p.params[option] != params[option] for p in paths), (
            f"{name}: no audit sets {option} to a non-default value"
        )
    groups = {p.group for p in paths}
    assert {"losses", "multiclass (K = 3)", "sparse input", "PLD accountant"} <= groups
    assert {(p.loss, p.n_outputs) for p in paths} >= {
        ("squared", 1), ("logistic", 1), ("squared_hinge", 1), ("multinomial", 3),
        ("squared_hinge", 3)}
    if params.get("mechanism") == "gaussian":
        assert {p.params.get("batch_size") is not None for p in paths
                if p.params.get("mechanism") == "laplace"} == {True, False}


def test_estimator_paths_cover_losses_multiclass_sparse_float32_secure_pld_workers():
    from skdp import DPLinearSVC, DPLogisticRegression, DPRidge

    paths = estimator_paths()

    def audited(path):  # the estimator fitted (a PrivateSearchCV's candidates, their last step)
        est = path.make(0)
        est = getattr(est, "estimator", est)
        return est.steps[-1][1] if hasattr(est, "steps") else est

    kinds = {(type(audited(p)), p.n_classes > 2) for p in paths}
    assert {(DPLogisticRegression, False), (DPLogisticRegression, True), (DPLinearSVC, False),
            (DPLinearSVC, True), (DPRidge, False)} <= kinds
    assert {p.sparse for p in paths} >= {"csr", "csc"}
    assert any(audited(p).secure_mode for p in paths)
    assert {type(audited(p)) for p in paths if p.dask} >= {DPLogisticRegression, DPRidge}
    # DPRidge's several targets (one fit, the residuals clipped jointly), in memory and on Dask
    assert {p.dask for p in paths if p.n_targets > 1} == {False, True}
    # every optimizer that runs on Dask has a Dask path (its oracle, its sampling on the client)
    from skdp.optimizers._base import DISTRIBUTED_OPTIMIZERS

    def optimizer_name(est):
        est = getattr(est, "estimator", est)
        est = est.steps[-1][1] if hasattr(est, "steps") else est
        return getattr(est.optimizer, "name", est.optimizer)

    on_dask = {optimizer_name(p.make(0)) for p in paths if p.dask}
    assert on_dask >= set(DISTRIBUTED_OPTIMIZERS)
    assert any(p.dask and getattr(p.make(0).optimizer, "batch_size", None) for p in paths
               if optimizer_name(p.make(0)) == "dp_nsgd_tree")  # its mini-batches on Dask
    # float32 X is read in place by kernels of its own (issue 16)
    assert {type(audited(p)) for p in paths if p.float32} >= {DPLogisticRegression, DPRidge}
    assert {type(audited(p)) for p in paths if _uses_pld(p)} >= {DPLogisticRegression, DPRidge}
    assert any(p.n_targets > 1 for p in paths if _uses_pld(p))
    # fits in worker processes (loky, unseeded): a classifier, and DPRidge with two targets
    workers = [p for p in paths if p.group == "worker processes"]
    assert {(type(audited(p)), p.n_targets) for p in workers} >= {(DPLogisticRegression, 1),
                                                                  (DPRidge, 2)}
    assert all(audited(p).random_state is None for p in workers)
    for p in paths:  # the audited estimators are the powered ones (a saturated canary)
        est = audited(p)
        if p.group == "model selection":  # (test_path_audit checks the claim's size)
            assert p.make(0).delta == POWER_DELTA
            assert (est.delta, est.fit_intercept) == (POWER_DELTA, False)
            continue
        assert (est.epsilon, est.delta, est.fit_intercept) == (POWER_EPSILON, POWER_DELTA, False)
    # PrivateSearchCV, releasing the selected run's model and refitting it, and over a pipeline
    searches = [p.make(0) for p in paths if p.group == "model selection"]
    assert {s.refit for s in searches} == {False, True}
    assert any(hasattr(s.estimator, "steps") for s in searches)


@pytest.mark.parametrize("label, param, optimizer, clip", [
    ("DPLogisticRegression defaults (binary: dp_gdws, clip 1/2)", "auto", "dp_gdws", 0.5),
    # the multinomial paths fit their powered audit's data: 7 to 11 s each (slow run)
    pytest.param("DPLogisticRegression K=3 optimizer='auto' (dp_scd)", "auto", "dp_scd", 0.1,
                 marks=pytest.mark.slow),
    pytest.param("DPLogisticRegression K=3 dp_gdws, clip sqrt(2/3)", "dp_gdws", "dp_gdws",
                 (2.0 / 3.0) ** 0.5, marks=pytest.mark.slow),
    ("DPLogisticRegression dp_scd defaults (binary, auto update clip)", "dp_scd", "dp_scd",
     0.1),
    ("DPLinearSVC defaults (binary: dp_gdws, opened step)", "auto", "dp_gdws", 2.0),
    ("DPLinearSVC K=3 optimizer='auto' (dp_nag_opt)", "auto", "dp_nag_opt", 2.0 * 3.0 ** 0.5),
    ("DPLinearSVC dp_sgld defaults (opened time)", "dp_sgld", "dp_sgld", 2.0),
    ("DPLinearSVC binary optimizer='auto', small budget (dp_scd)", "auto", "dp_scd", 2.0),
])
def test_default_paths_run_what_their_labels_say(label, param, optimizer, clip):
    """The paths that audit optimizer='auto' fit the optimizer the public rule picks on their
    data (and, binary, the clip of derivative_clip='auto'): a rule change that moves them to
    another optimizer fails here, not silently in the audit's coverage."""
    import warnings

    path, = [p for p in estimator_paths() if p.label == label]
    c, X = path.data(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = path.make(0).fit(X, c.y)
    assert est.optimizer_.name == optimizer
    assert est.optimizer == param
    assert est.derivative_clip_ == pytest.approx(clip, rel=1e-12)


def test_docs_table_has_one_caught_row_per_path():
    """docs/audit.rst's table of non-default paths (``benchmarks/bench_audit.py --update-docs``)
    lists every path of the map once, each without a violation and with its fault caught: a
    path added without its full-size run, or a table row left for a path since removed, fails
    here."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "audit.rst").read_text()
    table = text.split(".. begin paths table", 1)[1].split(".. end paths table", 1)[0]
    rows = re.findall(r"^   \* - .*\n     - (.*) \((?:optimizer|estimator), \d+ fits\)\n"
                      r"((?:     - .*\n){6})", table, flags=re.M)
    labels = [label for label, _ in rows]
    assert sorted(labels) == sorted(p.label for p in PATHS)
    for label, cells in rows:
        assert "**violation**" not in cells, label
        assert cells.rstrip().endswith("(caught)"), label


# The fault caught in the default run, on cheap paths of each kind of mechanism.
QUICK_FAULTS = ("dp_scd full batch", "dp_sgld composition (step >= 1/beta)", "dp_gdws laplace")


@pytest.mark.parametrize("label", QUICK_FAULTS)
def test_quick_fault_is_caught(label):
    path = next(p for p in PATHS if p.label == label)
    assert path.factor == 0.5
    _, fault_seed = path_seeds(path)
    res = run_path(path, path.fits, random_state=fault_seed, factor=path.factor)
    assert res.violated, res.summary()


# -- full size (slow) ---------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=[p.label for p in PATHS])
def test_path_audit(path):
    """The real code stays within its claim; the same audit with the noise scaled by the path's
    factor (0.5 unless the path says why not) reports a bound above the claim."""
    real_seed, fault_seed = path_seeds(path)
    real = run_path(path, path.fits, random_state=real_seed)
    assert real.n_fits == 2 * path.fits
    assert real.claimed_epsilon <= POWER_EPSILON * (1 + 1e-12)
    assert not real.violated, real.summary()
    fault = run_path(path, path.fits, random_state=fault_seed, factor=path.factor)
    assert fault.claimed_epsilon == real.claimed_epsilon
    assert fault.violated, f"noise x{path.factor} not caught: {fault.summary()}"


def test_private_bound_path_steps_from_the_released_median():
    """The data_norm='auto' dp_nag_opt path runs the step of session 14: the bound is 1.5
    released medians and the step assumes the floor 0.8 of its curvature (rows in units of the
    bound: curvature 1, plus the small ridge lam), not the bound's 1."""
    import warnings

    path, = [p for p in estimator_paths() if "released median" in p.label]
    c, X = path.data(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = path.make(0).fit(X, c.y)
    median = est.privacy_record_.details["private_bounds"]["data_norm"]["value"]
    assert est.optimizer_.name == "dp_nag_opt" and est.data_norm_ == 1.5 * median
    assert est.hyperparameters_["smoothness"] == pytest.approx(0.8, abs=0.01)


@pytest.mark.parametrize("dask", [False, True], ids=["memory", "dask"])
def test_zero_inflated_path_takes_the_tail_branch(dask):
    """The paths "zero-inflated targets" audit the tail branch of y_bounds="auto": in their
    fits the upper quartile of |y - median| is released at the grid's floor and the bounds
    come from the tail's median (drawn), not from the quartile; in memory and on Dask."""
    import warnings

    if dask:
        pytest.importorskip("dask.array")
    path, = [p for p in estimator_paths() if "zero-inflated" in p.label and p.dask == dask]
    for seed in range(5):
        c, X = path.data(seed)
        y = c.y
        assert np.mean(y == 0.0) > 0.8
        if dask:
            X, y, _ = path.dask_inputs(c, X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = path.make(seed).fit(X, y)
        bounds = est.privacy_record_.details["private_bounds"]
        assert bounds["y_spread"]["value"] == 0.0
        assert bounds["y_tail"]["value"] > 0.0
        assert est.y_bounds_[1] == pytest.approx(4.0 * bounds["y_tail"]["value"])


def test_gdws_default_steps_path_reports_the_zcdp_budget_left():
    """The path "dp_gdws default step count" runs the accounting of an event that reads the
    released bounds: the fit's last event is the zCDP budget left (the same for every release),
    not the Gaussian steps it took, and the claim is the fit's epsilon."""
    import warnings

    from skdp.privacy import ZCDPEvent

    path, = [p for p in estimator_paths() if "default step count" in p.label]
    c, X = path.data(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = path.make(0).fit(X, c.y)
    assert est.optimizer.max_iter is None
    assert isinstance(est.dp_event_.events[-1], ZCDPEvent)
    assert est.epsilon_ == pytest.approx(POWER_EPSILON, rel=1e-6)


@pytest.mark.parametrize("dask, optimizer, n_rows, n_targets", [
    (False, "dp_scd", 300, 1), (False, "dp_scd", 300, 2),
    (True, "dp_gdws", 18, 1), (True, "dp_gdws", 18, 2),
    (True, "dp_masg", 300, 1), (True, "dp_masg", 300, 2),
    (False, "dp_masg", 600, 1), (True, "dp_masg", 600, 1), (False, "dp_masg", 600, 2),
])
def test_ridge_defaults_paths_run_what_their_labels_say(dask, optimizer, n_rows, n_targets):
    """The paths "DPRidge defaults" (one target and two) fit with every default but the
    intercept: both bounds released (per column), optimizer="auto" picks dp_scd in memory below
    s = 300 (300 rows) and, on Dask, where dp_scd does not run, dp_gdws below s = 10 (18 rows)
    and dp_masg from it (300 rows); dp_masg in memory and on Dask from s = 300 (600 rows);
    dp_gdws at its own step count and dp_masg report zCDP events. Every such path of the list
    is one of these."""
    import warnings

    from skdp.privacy import ZCDPEvent

    if dask:
        pytest.importorskip("dask.array")
    defaults = [p for p in estimator_paths()
                if "defaults" in p.label and "data_norm and y_bounds 'auto'" in p.label]
    assert len(defaults) == 9
    path, = [p for p in defaults if f"({optimizer}" in p.label and p.dask == dask
             and p.n_targets == n_targets and p.n_rows == n_rows]
    assert f"({path.n_rows} rows)" in path.label
    assert ("two targets" in path.label) == (n_targets == 2)
    c, X = path.data(0)
    y = c.y
    if dask:
        X, y, _ = path.dask_inputs(c, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = path.make(0).fit(X, y)
    assert (est.data_norm, est.y_bounds, est.optimizer) == ("auto", "auto", "auto")
    names = (["y_median", "y_spread"] if n_targets == 1 else
             [f"{name}[{k}]" for name in ("y_median", "y_spread") for k in range(n_targets)])
    assert set(est.privacy_record_.details["private_bounds"]) >= {"data_norm", *names}
    assert np.shape(est.predict(np.asarray(c.x)[None, :])) == ((1,) if n_targets == 1
                                                               else (1, n_targets))
    assert est.optimizer_.name == optimizer
    # dp_scd's event is its Poisson-subsampled Gaussian steps; dp_gdws at its own step count and
    # dp_masg's stages by zCDP
    assert isinstance(est.dp_event_.events[-1], ZCDPEvent) == (optimizer != "dp_scd")


# -- fits in worker processes ----------------------------------------------------------------------
def test_active_noise_factor_is_the_open_blocks():
    from skdp.audit._faults import active_noise_factor

    assert active_noise_factor() == 1.0
    with noise_scaled(0.5):
        assert active_noise_factor() == 0.5
        with noise_scaled(0.25):  # a nested block patches nothing: the outer factor holds
            assert active_noise_factor() == 0.5
        assert active_noise_factor() == 0.5
    assert active_noise_factor() == 1.0


@pytest.mark.slow
def test_a_fault_reaches_the_fit_in_a_worker_process():
    """The worker paths' fault runs are meaningful only if the worker draws the scaled noise:
    a seeded fit in a worker under noise_scaled(0.5) equals the same fit in this process."""
    import warnings

    from skdp.audit._paths import _InWorkerProcess

    path, = [p for p in estimator_paths() if p.group == "worker processes" and p.n_targets == 1]
    c, X = path.data(0)
    seeded = path.make(0).estimator.set_params(random_state=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = _InWorkerProcess(seeded).fit(X, c.y).coef_
        with noise_scaled(0.5):
            faulty = _InWorkerProcess(seeded).fit(X, c.y).coef_
            here = clone(seeded).fit(X, c.y).coef_
    np.testing.assert_array_equal(faulty, here)
    assert not np.allclose(faulty, real)
