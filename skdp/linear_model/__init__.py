"""The scikit-learn estimators."""

from ._logistic import DPLogisticRegression
from ._ridge import DPRidge
from ._svc import DPLinearSVC

__all__ = ["DPLogisticRegression", "DPRidge", "DPLinearSVC"]
