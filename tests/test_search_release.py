"""What PrivateSearchCV releases: no secret randomness on the selected model or the search, the
search's guarantee on the selected model, every ledger a plain fit would charge, and the labels
checked before the charge."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skdp import BudgetExceededError, DPLogisticRegression, PrivacyLedger, compute_epsilon
from skdp._streams import released_streams
from skdp.ledger import compose
from skdp.model_selection import PrivateSearchCV
from skdp.model_selection import _search
from skdp.pipeline import PrivatePipeline
from skdp.preprocessing import PrivateRobustScaler
from skdp.privacy import ComposedEvent

from ._helpers import unit_row_classification

DELTA = 1e-5


@pytest.fixture(scope="module")
def neighbours():
    """(X, y) and a neighbour differing in its last record."""
    X, y = unit_row_classification(600, 3, seed=4)
    X2, y2 = X.copy(), y.copy()
    X2[-1], y2[-1] = 0.0, 1 - y[-1]
    return (X, y), (X2, y2)


def _logistic(**kw):
    return DPLogisticRegression(epsilon=0.5, delta=1e-6, classes=[0, 1], data_norm=1.0,
                                optimizer="dp_gdws", max_iter=20, **kw)


def _pipeline(scaler_seed=None, final_seed=None, **kw):
    return PrivatePipeline(
        [("sc", PrivateRobustScaler(random_state=scaler_seed)),
         ("final", DPLogisticRegression(classes=[0, 1], optimizer="dp_gdws", max_iter=20,
                                        random_state=final_seed))],
        epsilon=1.0, delta=1e-6, weights={"sc": 1.0, "final": 1.0}, **kw)  # a private scaler


def _grid(est):
    return {("final__C" if hasattr(est, "steps") else "C"): [0.3, 3.0]}


def _seeds_of(est):
    return {k: v for k, v in est.get_params(deep=True).items()
            if k == "random_state" or k.endswith("__random_state")}


def _final(model):
    return model[-1] if hasattr(model, "steps") else model


# -- the runs' seeds and the split stay secret -------------------------------------------------
@pytest.mark.parametrize("make", [lambda: _logistic(), lambda: _logistic(random_state=7),
                                  lambda: _pipeline(), lambda: _pipeline(None, 7)],
                         ids=["unseeded", "seeded", "pipeline", "pipeline-seeded"])
def test_refitting_the_released_model_does_not_recognise_the_data(neighbours, make):
    """The attack: refit a clone of the released model (from its pickle) on D and on its
    neighbour D'. Had the model kept the seeds the search drew for it, the refit on the true
    data set would reproduce its coefficients bit for bit (a perfect distinguisher)."""
    (X, y), (X2, y2) = neighbours
    est = make()
    search = PrivateSearchCV(est, _grid(est), n_iter=2, refit=True, delta=DELTA,
                             random_state=0).fit(X, y)
    released = pickle.loads(pickle.dumps(search.best_estimator_))
    for Xd, yd in ((X, y), (X2, y2)):
        refit = clone(released).fit(Xd, yd)
        assert not np.array_equal(_final(refit).coef_, _final(released).coef_)


@pytest.mark.parametrize("refit", [False, True])
@pytest.mark.parametrize("make", [lambda: _logistic(), lambda: _logistic(random_state=7),
                                  lambda: _pipeline(), lambda: _pipeline(None, 7),
                                  lambda: _pipeline(3, 7)],
                         ids=["unseeded", "seeded", "pipeline", "pipeline-seeded",
                              "pipeline-both-seeded"])
def test_released_model_keeps_the_users_random_state(neighbours, make, refit):
    (X, y), _ = neighbours
    est = make()
    search = PrivateSearchCV(est, _grid(est), n_iter=2, refit=refit, delta=DELTA,
                             random_state=1).fit(X, y)
    assert _seeds_of(search.best_estimator_) == _seeds_of(est)
    assert _seeds_of(search) == {"random_state": 1, **{
        f"estimator__{k}": v for k, v in _seeds_of(est).items()}}


@pytest.mark.parametrize("make", [lambda: _logistic(random_state=7), lambda: _pipeline()],
                         ids=["estimator", "pipeline"])
@pytest.mark.parametrize("refit", [False, True])
def test_fitted_search_holds_no_seed_and_no_split(neighbours, monkeypatch, make, refit):
    """Neither the generators drawn for the runs (seeded with 128 bits: an integer seed could
    be searched exhaustively) nor the validation / training rows are reachable from the fitted
    search: its pickle holds no generator and none of the rows' bytes."""
    drawn, splits = [], []

    def fresh_seeds(est, rng):
        seeds = fresh_seeds.original(est, rng)
        drawn.extend(seeds.values())
        return seeds

    def split(rng, n, m):
        parts = split.original(rng, n, m)
        splits.extend(parts)
        return parts

    fresh_seeds.original, split.original = _search._fresh_seeds, _search._split
    monkeypatch.setattr(_search, "_fresh_seeds", fresh_seeds)
    monkeypatch.setattr(_search, "_split", split)
    (X, y), _ = neighbours
    est = make()
    search = PrivateSearchCV(est, _grid(est), n_iter=3, refit=refit, delta=DELTA,
                             random_state=2).fit(X, y)
    assert drawn and len(splits) == 2
    blob = pickle.dumps(search)
    assert all(isinstance(g, np.random.Generator) for g in drawn)
    assert b"generator_ctor" not in blob  # (how numpy pickles a Generator or bit generator)
    for rows in splits:
        assert np.asarray(rows, dtype=np.int64).tobytes() not in blob
    assert not hasattr(search, "cv_results_")
    assert set(search.best_params_) == set(_grid(est))


# -- the released model carries the search's guarantee ----------------------------------------
@pytest.mark.parametrize("make", [lambda: _logistic(), lambda: _pipeline()],
                         ids=["estimator", "pipeline"])
@pytest.mark.parametrize("refit", [False, True])
def test_warm_start_from_the_released_model_composes_the_search(neighbours, make, refit):
    """The released model was selected with the data: a warm start from it (here from its
    pickle, as it is published) must compose the whole search with the new fit, not only the
    selected run's fit."""
    (X, y), _ = neighbours
    est = make()
    search = PrivateSearchCV(est, _grid(est), n_iter=3, refit=refit, delta=DELTA,
                             random_state=0).fit(X, y)
    released = pickle.loads(pickle.dumps(search.best_estimator_))
    _final(released).set_params(warm_start=True)
    with PrivacyLedger() as ledger, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        released.fit(X, y)
    # the start counted as the private release it is (its digest matched, no shared stream)
    assert not [w for w in caught if "warm-started" in str(w.message)]
    chain = ComposedEvent((search.dp_event_, ledger.entries[-1].event))
    expected = compute_epsilon(chain, released.delta_, "rdp")
    assert released.epsilon_ >= expected * (1 - 1e-12) > search.epsilon_
    history = _final(released).privacy_record_.details["warm_start_history"]
    assert history[0].event == search.dp_event_ and len(history) == 2


@pytest.mark.parametrize("make", [lambda: _logistic(), lambda: _pipeline()],
                         ids=["estimator", "pipeline"])
@pytest.mark.parametrize("refit", [False, True])
def test_released_model_carries_the_search_record(neighbours, make, refit):
    (X, y), _ = neighbours
    est = make()
    search = PrivateSearchCV(est, _grid(est), n_iter=3, refit=refit, delta=DELTA,
                             random_state=0).fit(X, y)
    best = search.best_estimator_
    carriers = [best] + ([best[0], best[-1]] if hasattr(best, "steps") else [])
    for obj in carriers:
        assert obj.dp_event_ == search.dp_event_ == obj.privacy_record_.event
        assert (obj.epsilon_, obj.delta_) == (search.epsilon_, search.delta_)
        assert released_streams(search) <= released_streams(obj)
    # the selected fit's own record: the event planned for it (on the training part, or on
    # all the data for the refit)
    own = _final(best).privacy_record_.details["selected_fit"]
    planned = search.dp_event_.events[1].events if refit else search.dp_event_.event.events
    assert any(own.event == e for e in planned)
    assert compose([best]) == compose([search])


# -- every ledger a plain fit would charge ------------------------------------------------------
def test_search_charges_the_pipeline_and_step_ledgers(neighbours):
    """A plain fit of a PrivatePipeline charges its own ledger and its steps' ledgers: the
    search over it charges each of them with the whole search, once."""
    (X, y), _ = neighbours
    own, pipe_ledger, scaler_ledger, final_ledger = (PrivacyLedger(name=n) for n in
                                                     ("search", "pipe", "scaler", "final"))
    pipe = _pipeline(ledger=pipe_ledger).set_params(sc__ledger=scaler_ledger,
                                                    final__ledger=final_ledger)
    search = PrivateSearchCV(pipe, _grid(pipe), n_iter=2, delta=DELTA, ledger=own,
                             random_state=0).fit(X, y)
    for ledger in (own, pipe_ledger, scaler_ledger, final_ledger):
        assert len(ledger) == 1, ledger.name
        assert ledger.entries[0].event == search.dp_event_
        assert ledger.entries[0].source == "PrivateSearchCV"


@pytest.mark.parametrize("where", ["ledger", "sc__ledger", "final__ledger"])
def test_search_enforces_the_ceiling_of_a_pipeline_ledger(neighbours, where):
    (X, y), _ = neighbours
    pipe = _pipeline()
    search = PrivateSearchCV(pipe, _grid(pipe), n_iter=2, delta=DELTA, random_state=0)
    cost = clone(search).fit(X, y).epsilon_
    capped = PrivacyLedger(epsilon=0.5 * cost, delta=DELTA)
    search.set_params(**{f"estimator__{where}": capped})
    with pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert len(capped) == 0 and not hasattr(search, "best_estimator_")


# -- labels are checked against the declared classes before the charge ------------------------
@pytest.mark.parametrize("seed", range(4))
def test_label_outside_the_declared_classes_is_refused_before_the_charge(neighbours, seed):
    """Whatever the secret split, the search raises the ValueError a plain fit raises, before
    any charge: the outcome does not depend on which part the record fell in."""
    (X, y), _ = neighbours
    y = y.copy()
    y[123] = 7
    with pytest.raises(ValueError, match="not in classes") as plain:
        _logistic().fit(X, y)
    ledger = PrivacyLedger()
    search = PrivateSearchCV(_logistic(), {"C": [1.0]}, n_iter=2, delta=DELTA, ledger=ledger,
                             random_state=seed)
    with pytest.raises(ValueError) as refused:
        search.fit(X, y)
    assert str(refused.value) == str(plain.value)
    assert len(ledger) == 0 and not hasattr(search, "best_estimator_")


# -- secure_mode reaches the search's own draws -------------------------------------------------
@pytest.mark.parametrize("secure", [False, True])
def test_the_search_draws_from_chacha_when_a_candidate_asks_for_secure_mode(neighbours, secure,
                                                                            monkeypatch):
    """The split, the number of runs, the choices and the runs' seeds came from PCG64 whatever
    the candidates' secure_mode (session 57's red-team pass); a candidate with
    secure_mode=True now makes them ChaCha20 draws too, as its own fit's."""
    pytest.importorskip("randomgen")
    (X, y), _ = neighbours
    kinds = []
    make = _search.make_generator

    def recording(random_state, secure=False):
        rng = make(random_state, secure=secure)
        kinds.append(type(rng.bit_generator).__name__)
        return rng

    est = _logistic(secure_mode=secure)
    monkeypatch.setattr(_search, "make_generator", recording)
    PrivateSearchCV(est, _grid(est), n_iter=2, delta=DELTA, random_state=0).fit(X, y)
    assert kinds == ["ChaCha" if secure else "PCG64"]
