"""A fit that raises leaves its estimators as they were before the call.

A fit computes things from the private data before it can fail: a private row bound or target
range, the class list, the fitted steps of a pipeline before its last step refuses. None of them
is charged to a ledger when the fit raises (nothing was released), so none may stay on the
estimator for the caller to read, publish or warm-start from. Restoring the state the call found
is one mechanism for every skdp estimator that fits (the linear models, the private pipeline, the
scaler, the private search).
"""

import copy
import functools

import numpy as np
from sklearn.base import BaseEstimator

__all__ = ["keeps_state_on_error", "restored_on_error"]


def _estimators_under(estimator):
    """``estimator`` and every estimator among its deep parameters (a pipeline's steps, a
    column transformer's transformers, a search's estimator), each once."""
    found = {id(estimator): estimator}
    get_params = getattr(estimator, "get_params", None)
    if get_params is not None:
        for value in get_params(deep=True).values():
            if isinstance(value, BaseEstimator):
                found.setdefault(id(value), value)
    return list(found.values())


def _saved(value):
    # a fit replaces most attributes, but a pipeline's ``steps`` list is assigned in place and an
    # array could be written into: both are copied, everything else is kept by reference
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, dict, set)):
        return copy.copy(value)
    return value


class restored_on_error:
    """Context manager: on an exception, every estimator under ``estimator`` gets back the
    attributes it had on entry (those added are removed); on success nothing changes.

    Ledgers and random generators are not estimators' state and are left as they are: a charge
    made before the failure stays (an over-statement, never an under-statement), and a generator
    that advanced is still fresh randomness.
    """

    def __init__(self, estimator):
        self._saved = [
            (est, {key: _saved(value) for key, value in vars(est).items()})
            for est in _estimators_under(estimator)
        ]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            for est, state in self._saved:
                attributes = vars(est)
                attributes.clear()
                attributes.update(state)
        return False


def keeps_state_on_error(fit):
    """Decorator of a ``fit`` method: a call that raises leaves the estimator (and the estimators
    it holds) as the call found it (:class:`restored_on_error`)."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        with restored_on_error(self):
            return fit(self, *args, **kwargs)

    return wrapper
