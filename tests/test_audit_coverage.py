"""Every parameter of every public estimator is classified, and its privacy audited end to end.

The optimizers' options are classified in ``tests/test_audit_paths.py`` (``OPTIONS``). Here:
the estimators, the private pipeline and scaler, and the private search. A parameter is one of

* ``("path", words)``: an option that selects another analysis or release, audited by the
  end-to-end audit path (``skdp/audit/_paths.py``) whose label contains ``words``;
* ``("test", "file.py::name")``: audited end to end by that test (a neighbour pair of data sets,
  many fits, a lower bound against the claim);
* ``("public", why)``: a public constant of the analysis (a bound, a budget, a step count, a
  grid), which holds for every value, or a parameter that releases nothing.

A new parameter fails ``test_every_parameter_is_classified`` until it is classified here, and an
audit that is renamed or removed fails ``test_every_reference_resolves``.
"""

import ast
from pathlib import Path

import pytest

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.audit._paths import estimator_paths, optimizer_paths
from skdp.model_selection import PrivateSearchCV
from skdp.pipeline import PrivatePipeline
from skdp.preprocessing import PrivateRobustScaler

TESTS = Path(__file__).parent
NO_RELEASE = ("public", "releases nothing and changes no release (progress, printing, "
              "charging, caching, metadata routing)")
SAME_BITS = ("test", "test_progress.py::test_callback_gives_the_same_bits_and_valid_progress")

LINEAR = {
    "epsilon": ("public", "the budget: every path audits its claim"),
    "delta": ("public", "the budget: every path audits its claim"),
    "optimizer": ("test", "test_audit_paths.py::"
                  "test_every_optimizer_option_is_mapped_and_its_analyses_audited"),
    "fit_intercept": ("test", "test_audit.py::test_small_estimator_audit"),
    "intercept_scaling": ("public", "the intercept column's value: a public constant, or under "
                          "'auto' the row bound or its released median"),
    "data_norm": ("path", "data_norm='auto'"),
    "derivative_clip": ("path", "DPLogisticRegression defaults (binary"),
    "accountant": ("path", "accountant=pld"),
    "random_state": ("test", "test_shared_streams.py::test_audit_two_fits_of_one_seed"),
    "secure_mode": ("path", "secure_mode"),
    "max_sample_weight": ("test", "test_hardening_weights_warmstart.py::test_audit_weight_bound"),
    "warm_start": ("test", "test_hardening_weights_warmstart.py::"
                   "test_audit_chain_of_private_warm_starts"),
    "max_iter": ("public", "a step count of the optimizer's schedule, or used at epsilon=inf"),
    "tol": ("public", "used at epsilon=inf only"),
    "verbose": NO_RELEASE,
    # the ledger's own claim (its total) when fits fail under its ceiling
    "ledger": ("test", "test_failed_fits.py::test_audit_failed_fits_under_a_ceiling"),
    "callback": SAME_BITS,
    "callback_every": SAME_BITS,
}

OPTIONS = {
    DPLogisticRegression: {**LINEAR, "C": ("public", "the regularisation"),
                           "classes": ("path", "DPLogisticRegression K=3 (multinomial)")},
    DPLinearSVC: {**LINEAR, "C": ("public", "the regularisation"),
                  "classes": ("path", "DPLinearSVC K=3 (one-vs-rest)"),
                  "loss": ("path", "DPLinearSVC (squared hinge)")},
    DPRidge: {**LINEAR, "alpha": ("public", "the regularisation"),
              "y_bounds": ("path", "y_bounds='auto'")},
    PrivatePipeline: {
        "steps": ("test", "test_private_pipeline.py::test_audit_pipeline_with_released_bounds"),
        "epsilon": ("path", "over a PrivatePipeline"),
        "delta": ("path", "over a PrivatePipeline"),
        "weights": ("public", "the shares of the budget, public constants of the split"),
        "ledger": NO_RELEASE, "memory": NO_RELEASE, "verbose": NO_RELEASE,
        "transform_input": NO_RELEASE,
    },
    PrivateRobustScaler: {
        "epsilon": ("test", "test_private_pipeline.py::test_audit_pipeline_with_released_bounds"),
        "delta": ("public", "the budget (the quantiles are pure epsilon-DP)"),
        "if_unreliable": ("test", "test_private_pipeline.py::test_audit_pipeline_passthrough"),
        "secure_mode": ("test", "test_private_pipeline.py::"
                        "test_audit_pipeline_with_released_bounds_secure_mode"),
        "random_state": ("test", "test_shared_streams.py::"
                         "test_a_standalone_step_and_an_estimator_of_one_seed_share_it"),
        "bounds": ("public", "public bounds: nothing is released from the data"),
        # None: centres then quartiles around them; a user's grid: the quartiles on it directly
        "grid": ("test", "test_private_pipeline.py::"
                 "test_audit_pipeline_with_released_bounds_on_a_users_grid"),
        # "quantiles": the centres' and quartiles' audits above; "mad": its own path
        "spread": ("test", "test_private_pipeline.py::test_audit_pipeline_with_released_bounds_mad"),
        "quantile_range": ("public", "which quantiles: public constants"),
        "fence": ("public", "the clip around the released quartiles: a public constant"),
        "ledger": NO_RELEASE,
    },
    PrivateSearchCV: {
        "estimator": ("path", "PrivateSearchCV over"),
        "param_grid": ("public", "the candidates, public; each candidate's event is planned"),
        "n_iter": ("public", "E[K], a public constant of the repeat-and-select bound"),
        "shape": ("path", "Poisson K"),
        "scoring": ("path", "PrivateSearchCV over DPRidge"),
        "refit": ("path", "PrivateSearchCV over DPLogisticRegression, refit"),
        "validation_fraction": ("public", "the public size of the validation part"),
        "score_epsilon": ("public", "the score's budget"),
        "delta": ("public", "the budget: every search path audits its claim"),
        "max_epsilon": ("public", "a ceiling checked before the data is read"),
        "random_state": ("public", "seeds the search's own generator; a known seed voids the "
                         "guarantee (docs: guarantees)"),
        "ledger": NO_RELEASE, "verbose": NO_RELEASE,
    },
}

#: shape has a second distribution, audited by its own path
EXTRA_PATHS = ["logarithmic K"]


def _labels():
    return [p.label for p in optimizer_paths() + estimator_paths()]


def _test_exists(ref):
    file, name = ref.split("::")
    tree = ast.parse((TESTS / file).read_text())
    return any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body)


@pytest.mark.parametrize("cls", list(OPTIONS), ids=lambda c: c.__name__)
def test_every_parameter_is_classified(cls):
    params = set(cls._get_param_names())
    classified = set(OPTIONS[cls])
    assert params <= classified, f"classify (and audit) {sorted(params - classified)}"
    assert classified <= params, f"stale entries: {sorted(classified - params)}"


def test_every_reference_resolves():
    labels = _labels()
    refs = {ref for options in OPTIONS.values() for ref in options.values()}
    refs |= {("path", words) for words in EXTRA_PATHS}
    for kind, what in refs:
        assert kind in {"path", "test", "public"}, kind
        if kind == "path":
            assert any(what in label for label in labels), f"no audit path says {what!r}"
        elif kind == "test":
            assert _test_exists(what), f"no test {what}"
        else:
            assert len(what) > 10, "say why a public parameter needs no audit of its own"
