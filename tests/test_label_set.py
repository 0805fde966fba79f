"""The label set of a classifier fitted with ``classes=None`` is read from y: the record says so.

``classes_`` then lists the labels that occur in the training data, and no noise covers it: a
label carried by one record is in ``classes_`` exactly when that record is (the first test shows
the leak). ``epsilon_`` holds between data sets with the same label set only, and the record's
relation states it (:data:`skdp.privacy.PUBLIC_LABEL_SET`) on every path that releases such a
``classes_``: the estimators, a pipeline, a warm-start chain and a private search.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.model_selection import PrivateSearchCV
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import PrivateRobustScaler
from skdp.privacy import NEIGHBOURING_RELATION, PUBLIC_LABEL_SET


def _data(n=300, seed=0):
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, random_state=seed)
    return X, y


def _labels_stated(est):
    return PUBLIC_LABEL_SET in est.privacy_record_.relation


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPLinearSVC])
def test_a_rare_label_is_released_without_noise(Est):
    """Neighbours: D has one record of label 2, D' has that record with a common label. Over
    seeds, classes_ tells them apart every time (no finite epsilon covers it); with the public
    label set it never does."""
    X, y = _data()
    y_rare = y.copy()
    y_rare[0] = 2
    for seed in range(3):
        with_rare = Est(epsilon=1.0, random_state=seed).fit(X, y_rare)
        without = Est(epsilon=1.0, random_state=seed + 100).fit(X, y)
        assert with_rare.classes_.tolist() == [0, 1, 2] and without.classes_.tolist() == [0, 1]
        public = [Est(epsilon=1.0, classes=[0, 1, 2], random_state=seed).fit(X, labels).classes_
                  for labels in (y_rare, y)]
        assert public[0].tolist() == public[1].tolist() == [0, 1, 2]


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("multiclass", [False, True])
def test_the_record_states_a_label_set_read_from_y(Est, multiclass):
    X, y = _data()
    if multiclass:
        y = y + (X[:, 0] > 0.5)
    read = Est(random_state=0).fit(X, y)
    assert _labels_stated(read)
    assert read.privacy_record_.relation.startswith(NEIGHBOURING_RELATION)
    declared = Est(classes=np.unique(y), random_state=0).fit(X, y)
    assert declared.privacy_record_.relation == NEIGHBOURING_RELATION
    # only the relation differs: the same noise, the same spend
    assert declared.epsilon_ == read.epsilon_


def test_a_regressor_has_no_label_set():
    X, y = _data()
    assert DPRidge(random_state=0).fit(X, y * 1.0).privacy_record_.relation == NEIGHBOURING_RELATION


def test_a_pipeline_states_its_classifiers_label_set():
    X, y = _data()
    read = make_private_pipeline(PrivateRobustScaler(), DPLogisticRegression()).fit(X, y)
    assert _labels_stated(read)
    declared = make_private_pipeline(PrivateRobustScaler(),
                                     DPLogisticRegression(classes=[0, 1])).fit(X, y)
    assert declared.privacy_record_.relation == NEIGHBOURING_RELATION


def test_a_warm_start_chain_keeps_a_label_set_read_by_an_earlier_fit():
    """The first fit released the labels that occur; declaring them later does not undo it."""
    X, y = _data()
    model = DPLogisticRegression(warm_start=True).fit(X, y)
    model.set_params(classes=[0, 1]).fit(X, y)
    assert len(model.privacy_record_.details["warm_start_history"]) == 2
    assert _labels_stated(model)
    declared = DPLogisticRegression(warm_start=True, classes=[0, 1]).fit(X, y).fit(X, y)
    assert declared.privacy_record_.relation == NEIGHBOURING_RELATION


def test_a_private_search_states_the_label_set_it_read():
    X, y = _data(600)
    search = PrivateSearchCV(DPLogisticRegression(), {"C": [0.1, 1.0]}, n_iter=3,
                             random_state=0).fit(X, y)
    assert _labels_stated(search)
    assert search.best_estimator_ is not None and _labels_stated(search.best_estimator_)
    declared = PrivateSearchCV(DPLogisticRegression(classes=[0, 1]), {"C": [0.1, 1.0]},
                               n_iter=3, random_state=0).fit(X, y)
    assert declared.privacy_record_.relation == NEIGHBOURING_RELATION
