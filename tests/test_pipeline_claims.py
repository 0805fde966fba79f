"""A fitted PrivatePipeline's privacy attributes describe the releases its fit made.

The pipeline's ``epsilon_``, ``delta_``, ``dp_event_`` and ``privacy_record_`` were set once, by
its fit; its steps stay reachable (``pipe[-1]``, ``pipe.named_steps``) and can be refitted on
their own, replaced, or have their coefficients changed. The pipeline then predicts with a
model its record does not describe (refitted at ``epsilon=np.inf``: with no privacy at all), so
those attributes read as not private, with a warning, and so do a composition and a ledger that
read them.
"""

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp import DPLogisticRegression, PrivacyLedger, compose, compute_epsilon
from skdp.ledger import BudgetExceededError
from skdp.model_selection import PrivateSearchCV
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import PrivateRobustScaler

STALE = "no longer describes its model"


def _data():
    return make_classification(1500, 4, n_informative=3, n_redundant=0, random_state=0)


def _pipe(X, y, epsilon=0.5):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_private_pipeline(PrivateRobustScaler(), DPLogisticRegression(classes=[0, 1]),
                                     epsilon=epsilon).fit(X, y)


def _claims(pipe):
    """The four attributes and whether reading them warned that they are stale."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = (pipe.epsilon_, pipe.delta_, pipe.dp_event_, pipe.privacy_record_)
    return values, any(STALE in str(w.message) for w in caught)


def _refit_final_without_privacy(pipe, X, y):
    pipe[-1].set_params(epsilon=np.inf).fit(pipe[:-1].transform(X), y)


def _refit_scaler(pipe, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe[0].set_params(epsilon=np.inf).fit(X)


def _change_coefficients(pipe, X, y):
    pipe[-1].coef_ = pipe[-1].coef_ * 3.0


def _replace_final(pipe, X, y):
    other = DPLogisticRegression(classes=[0, 1], epsilon=np.inf).fit(pipe[:-1].transform(X), y)
    pipe.set_params(dplogisticregression=other)


CHANGES = [_refit_final_without_privacy, _refit_scaler, _change_coefficients, _replace_final]


def test_an_untouched_pipeline_keeps_its_record():
    X, y = _data()
    pipe = _pipe(X, y)
    (eps, delta, event, record), stale = _claims(pipe)
    assert not stale and 0 < eps <= 0.5 and record.epsilon == eps and record.event is event
    (eps2, *_), stale = _claims(pickle.loads(pickle.dumps(pipe)))
    assert not stale and eps2 == eps


@pytest.mark.parametrize("change", CHANGES, ids=lambda f: f.__name__.strip("_"))
def test_a_step_changed_on_its_own_voids_the_pipelines_claim(change):
    X, y = _data()
    pipe = _pipe(X, y)
    claimed = pipe.epsilon_
    change(pipe, X, y)
    (eps, delta, event, record), stale = _claims(pipe)
    assert stale
    assert math.isinf(eps) and math.isinf(record.epsilon)
    assert math.isinf(compute_epsilon(event, 1e-5)) and math.isfinite(claimed)
    # what reads the pipeline's claims sees it too
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isinf(compute_epsilon(compose([pipe]), 1e-5))
        with pytest.raises(BudgetExceededError):
            PrivacyLedger(epsilon=5.0, delta=1e-5).record(pipe)
    # refitting the pipeline as a whole gives one guarantee again
    pipe = _pipe(X, y) if change is _replace_final else pipe
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe[-1].set_params(epsilon=1.0)
        pipe[0].set_params(epsilon=1.0)
        pipe.fit(X, y)
    (eps, *_), stale = _claims(pipe)
    assert not stale and eps <= 0.5


def test_the_selected_pipeline_of_a_search_keeps_the_searchs_record():
    X, y = _data()
    pipe = make_private_pipeline(PrivateRobustScaler(), DPLogisticRegression(classes=[0, 1]),
                                 epsilon=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = PrivateSearchCV(pipe, {"dplogisticregression__C": [0.1, 1.0]}, n_iter=3,
                                 random_state=0).fit(X, y)
    (eps, *_), stale = _claims(search.best_estimator_)
    assert not stale and eps == search.epsilon_
