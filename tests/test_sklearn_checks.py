"""scikit-learn's estimator checks for every estimator with every available optimizer.

Private fits (the default epsilon=1) run every check, with the public list of the checks they
fail by design (:func:`skdp.estimator_checks.expected_failed_checks`, what users pass to
``check_estimator``). Three sample-weight checks compare a fit
with a fit on *different* data and ask for the same model; under differential privacy that is
impossible by design, so they are expected to fail there and are run instead on non-private
(epsilon=inf) instances, where each optimizer must reach the optimum of the weighted objective:

* ``check_sample_weight_equivalence_on_dense_data`` / ``..._on_sparse_data``: integer weights
  must equal repeated rows and weight 0 a removed row. A private fit's noise and batches depend
  on the public number of rows n, and a zero-weight row is exactly the null record of the
  zero-out neighbouring relation: the guarantee says the two fits are *close in distribution*,
  not equal.
* ``check_all_zero_sample_weights_error``: a private fit must not refuse all-zero weights (all
  null records is a valid neighbouring data set, and the error would reveal that no weight is
  positive); without privacy skdp raises like scikit-learn.
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.estimator_checks import AUTO_BOUNDS_UTILITY, PRIVATE_FIT_FAILURES, expected_failed_checks
from skdp.optimizers import available_optimizers, resolve_optimizer

CLASSES = (DPLogisticRegression, DPLinearSVC, DPRidge)

# The default run checks each estimator with its default optimizer; the other optimizers run
# the same checks in the slow run (CI), which keeps the default run within its time budget.
DEFAULT_ESTIMATORS = [cls(random_state=0) for cls in CLASSES]
OTHER_ESTIMATORS = [
    cls(optimizer=name, random_state=0)
    for name in available_optimizers()
    for cls in CLASSES
    if name != cls().optimizer
]


@parametrize_with_checks(DEFAULT_ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(OTHER_ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator_other_optimizers(estimator, check):
    check(estimator)


def test_every_estimator_optimizer_pair_is_checked():
    checked = {(type(e).__name__, e.optimizer) for e in DEFAULT_ESTIMATORS + OTHER_ESTIMATORS}
    expected = {(cls.__name__, name) for cls in CLASSES
                for name in available_optimizers() + ["auto"]}
    assert checked == expected


def test_expected_failures_are_the_sample_weight_checks_of_private_fits():
    for cls in CLASSES:
        assert set(expected_failed_checks(cls())) == set(PRIVATE_FIT_FAILURES)
        assert expected_failed_checks(cls(epsilon=np.inf)) == {}
        assert all(len(reason) > 40 for reason in expected_failed_checks(cls()).values())
    assert set(PRIVATE_FIT_FAILURES) == {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
        "check_all_zero_sample_weights_error",
    }


@pytest.mark.parametrize("cls_name, name", AUTO_BOUNDS_UTILITY)
def test_classifiers_train_with_public_bounds(cls_name, name):
    from sklearn.utils.estimator_checks import check_classifiers_train

    cls = {c.__name__: c for c in CLASSES}[cls_name]
    check_classifiers_train(cls_name, cls(optimizer=name, random_state=0, data_norm=1.0,
                                          intercept_scaling=1.0))


def _nonprivate(cls, name):
    # Tight solver tolerance: the equivalence checks compare predictions at rtol 1e-7.
    optimizer = resolve_optimizer(name).set_params(tol=1e-12)
    # Public bounds: the "auto" intercept column at epsilon=inf is the (unweighted) median row
    # norm, which differs between repeated rows and integer weights.
    return cls(epsilon=np.inf, optimizer=optimizer, max_sample_weight=5.0, random_state=0,
               data_norm=1.0, intercept_scaling=1.0)


def _check_name(check):
    return getattr(check, "func", check).__name__


NONPRIVATE_CHECKS = [
    pytest.param(est, check, id=f"{type(est).__name__}-{name}-{_check_name(check)}")
    for name in available_optimizers()
    for cls in CLASSES
    for est, check in estimator_checks_generator(_nonprivate(cls, name))
    if _check_name(check) in PRIVATE_FIT_FAILURES
]


@pytest.mark.parametrize("estimator, check", NONPRIVATE_CHECKS)
def test_sample_weight_checks_without_noise(estimator, check):
    check(estimator)


def test_every_optimizer_and_estimator_runs_the_nonprivate_sample_weight_checks():
    ran = {(p.values[0].__class__.__name__, _check_name(p.values[1])) for p in NONPRIVATE_CHECKS}
    assert len(NONPRIVATE_CHECKS) == len(CLASSES) * len(available_optimizers()) * len(
        PRIVATE_FIT_FAILURES
    )
    assert ran == {(c.__name__, name) for c in CLASSES for name in PRIVATE_FIT_FAILURES}
