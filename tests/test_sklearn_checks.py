"""scikit-learn's estimator checks for every estimator with every available optimizer.

Private fits (the default epsilon=1) run every check. Three sample-weight checks compare a fit
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
from skdp.optimizers import available_optimizers, resolve_optimizer

from ._helpers import PRIVATE_ONLY_FAILURES

CLASSES = (DPLogisticRegression, DPLinearSVC, DPRidge)

ESTIMATORS = [
    cls(optimizer=name, random_state=0) for name in available_optimizers() for cls in CLASSES
]



# With the defaults data_norm="auto" (a private median on sklearn's 200 to 300 rows, 10% of the
# budget) these two optimizers miss check_classifiers_train's fixed 0.83 accuracy on its
# 3-class blobs (0.78 to 0.81); with a public data_norm they pass (test below).
AUTO_BOUNDS_UTILITY = (
    ("DPLogisticRegression", "dp_sgld"), ("DPLogisticRegression", "dp_nsgd_tree"),
    ("DPLinearSVC", "dp_nsgd_tree"),
)


def _expected_failures(est):
    failures = dict(PRIVATE_ONLY_FAILURES)
    if (type(est).__name__, est.optimizer) in AUTO_BOUNDS_UTILITY:
        failures["check_classifiers_train"] = (
            "utility at epsilon=1 with data_norm='auto' on 300 rows; passes with a public "
            "data_norm (test_classifiers_train_with_public_bounds)"
        )
    return failures


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("cls_name, name", AUTO_BOUNDS_UTILITY)
def test_classifiers_train_with_public_bounds(cls_name, name):
    from sklearn.utils.estimator_checks import check_classifiers_train

    cls = {c.__name__: c for c in CLASSES}[cls_name]
    check_classifiers_train(cls_name, cls(optimizer=name, random_state=0, data_norm=1.0,
                                          intercept_scaling=1.0))


def _nonprivate(cls, name):
    # Tight solver tolerances: the equivalence checks compare predictions at rtol 1e-7. dp_scd's
    # tolerance is a relative duality gap, reached only at the round-off floor, so it runs its
    # (cheap, on 15 rows) maximum number of epochs.
    optimizer = resolve_optimizer(name).set_params(tol=0.0 if name == "dp_scd" else 1e-12)
    return cls(epsilon=np.inf, optimizer=optimizer, max_sample_weight=5.0, random_state=0)


def _check_name(check):
    return getattr(check, "func", check).__name__


NONPRIVATE_CHECKS = [
    pytest.param(est, check, id=f"{type(est).__name__}-{name}-{_check_name(check)}")
    for name in available_optimizers()
    for cls in CLASSES
    for est, check in estimator_checks_generator(_nonprivate(cls, name))
    if _check_name(check) in PRIVATE_ONLY_FAILURES
]


@pytest.mark.parametrize("estimator, check", NONPRIVATE_CHECKS)
def test_sample_weight_checks_without_noise(estimator, check):
    check(estimator)


def test_every_optimizer_and_estimator_runs_the_nonprivate_sample_weight_checks():
    ran = {(p.values[0].__class__.__name__, _check_name(p.values[1])) for p in NONPRIVATE_CHECKS}
    assert len(NONPRIVATE_CHECKS) == len(CLASSES) * len(available_optimizers()) * len(
        PRIVATE_ONLY_FAILURES
    )
    assert ran == {(c.__name__, name) for c in CLASSES for name in PRIVATE_ONLY_FAILURES}
