"""scikit-learn's estimator checks for every estimator with every available optimizer."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.optimizers import available_optimizers

ESTIMATORS = [
    cls(optimizer=name, random_state=0)
    for name in available_optimizers()
    for cls in (DPLogisticRegression, DPLinearSVC, DPRidge)
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
