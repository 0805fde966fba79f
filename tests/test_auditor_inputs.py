"""What :func:`skdp.audit.audit_estimator` accepts as its estimator: how each fit is seeded.

An estimator with a ``random_state`` gets a fresh seed in it; a pipeline or a meta-estimator
without one gets fresh seeds in its nested ``..__random_state``; one without any is refused with
a pointer to the factory form. Tiny audits (the minimum ``n_fits``): the seeding is checked,
not the bound.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV

from ._helpers import fast_accounting  # noqa: F401 (autouse: memoised accounting for this module)
from skdp import DPLogisticRegression
from skdp.audit import audit_estimator, make_canary
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import PrivateRobustScaler

DELTA = 1e-5
MIN_FITS = 4  # audit_estimator's minimum


def _canary(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return make_canary(X, (X[:, 0] > 0).astype(int))


def _model(**params):
    return DPLogisticRegression(epsilon=1.0, delta=DELTA, fit_intercept=False, data_norm=1.0,
                                max_iter=20, **params)


def _recording(seen, *keys):
    """A statistic that records the fitted model's seeds under ``keys`` (nested parameters)."""
    def statistic(model):
        params = model.get_params(deep=True)
        seen.append(tuple(params[k] for k in keys))
        return 0.0
    return statistic


def test_audit_of_a_private_pipeline_seeds_every_step_afresh():
    c = _canary()
    pipe = make_private_pipeline(PrivateRobustScaler(random_state=0), _model(random_state=0),
                                 epsilon=1.0, delta=DELTA)
    keys = ("privaterobustscaler__random_state", "dplogisticregression__random_state")
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantiles of 40 rows are unreliable: not the point
        res = audit_estimator(pipe, c.X, c.y, c.index, n_fits=MIN_FITS,
                              statistic=_recording(seen, *keys))
    assert res.n_fits == 2 * MIN_FITS
    assert res.claimed_epsilon <= 1.0 and res.claimed_delta == DELTA  # the pipeline's claim
    seeds = np.array(seen)
    assert seeds.shape == (2 * MIN_FITS, 2)
    assert len(set(seeds.ravel().tolist())) == seeds.size  # distinct across fits and steps
    assert pipe.get_params()["dplogisticregression__random_state"] == 0  # the input untouched


def test_audit_of_a_meta_estimator_seeds_its_estimator():
    c = _canary()
    calibrated = CalibratedClassifierCV(_model(), cv=2)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = audit_estimator(calibrated, c.X, c.y, c.index, n_fits=MIN_FITS,
                              statistic=_recording(seen, "estimator__random_state"),
                              claimed_epsilon=2.0, claimed_delta=2 * DELTA)
    assert res.n_fits == 2 * MIN_FITS
    assert len(set(seen)) == 2 * MIN_FITS and None not in {s for (s,) in seen}


class _Unseeded(ClassifierMixin, BaseEstimator):
    """An estimator without a random_state anywhere."""

    def fit(self, X, y):
        return self


def test_estimator_without_any_random_state_points_to_the_factory_form():
    c = _canary()
    with pytest.raises(ValueError, match=r"_Unseeded: it has no random_state.*factory") as exc:
        audit_estimator(_Unseeded(), c.X, c.y, c.index, n_fits=MIN_FITS)
    assert "seed -> unfitted estimator" in str(exc.value)
    # the factory form seeds it as it likes
    calls = []

    def factory(seed):
        calls.append(seed)
        return _Unseeded()

    audit_estimator(factory, c.X, c.y, c.index, n_fits=MIN_FITS, statistic=lambda m: 0.0,
                    claimed_epsilon=1.0, claimed_delta=DELTA)
    assert len(set(calls[1:])) == 2 * MIN_FITS  # calls[0]: the probe of fit_intercept


def test_a_wrapped_estimator_with_an_intercept_needs_a_neighbour():
    """With an intercept an all-zero row is not a null record, inside a pipeline too: the
    auditor refuses it without an explicit neighbour, as it does for the estimator alone."""
    c = _canary()
    pipe = make_private_pipeline(PrivateRobustScaler(), _model().set_params(fit_intercept=True),
                                 epsilon=1.0, delta=DELTA)
    with pytest.raises(ValueError, match="not a null record"):
        audit_estimator(pipe, c.X, c.y, c.index, n_fits=MIN_FITS)
