"""Releases that share a random stream are never composed (session 20).

Composition assumes fresh randomness in every fit. Two fits that start from one generator state
(the same integer ``random_state`` twice, or copies of one ``RandomState`` or ``Generator``, as
``GridSearchCV``'s clones are) draw the same noise, and their releases can cancel it: two fits of
one seed on the same data at epsilon 0.5 and 1 combine into the noiseless model. Before this
change a ledger charged with both reported their composition (1.14 at delta 1e-5), and the
end-to-end audit below measured a lower bound of 2.75 against it. Now:

* a ledger charged twice from one stream reports an infinite total (with a warning), and a ledger
  with a ceiling refuses the second fit before it runs;
* a warm-start chain whose fits share a stream has ``epsilon_ = inf`` (with a warning);
* :func:`skdp.tuning_cost` (and ``PrivacyLedger.fit_search``) refuse a search whose estimator
  has a ``random_state``: every fold fit and the refit of a candidate would share it;
* :func:`skdp.compose` of releases that share a stream is a non-private event (with a warning).

Session 58: ``PrivacyLedger.record`` compared its items with each other only, not with the
ledger's earlier charges (keyed by the ledger's own secret): a fit charged to a ledger and a model
of the same seed recorded afterwards were composed (0.73 for two fits at epsilon 0.5, where the
models were bit-identical); and :func:`skdp.compose` and ``record`` did not compare models fitted
in another Python session (unpickled) with this session's at all (0.73 again, the two sessions'
models bit-identical). Now every charge keeps its object's tags (``LedgerEntry.object_streams``),
compared with ``record``'s items, and two releases both fitted with a ``random_state`` whose tags
cannot be compared (made under different sessions' keys) are not private; fresh streams
(``random_state=None``) are marked as such in their tags and need no comparison.
"""

import copy
import math
import pickle
import uuid
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from skdp import (
    DPGDWS,
    BudgetExceededError,
    DPLogisticRegression,
    DPRidge,
    PrivacyLedger,
    compose,
    compute_epsilon,
    tuning_cost,
)
from skdp._streams import ATTRIBUTE, KEY_ID, released_streams, stream_state, stream_tags
from skdp._validation import make_generator
from skdp.ledger import LedgerEntry
from skdp.audit import audit_estimator, make_canary, memoized_accounting
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import PrivateRobustScaler

from ._helpers import unit_row_classification

DELTA = 1e-5
SHARED = "same random stream"
ANOTHER_SESSION = "another Python session"


@pytest.fixture(scope="module")
def data():
    return unit_row_classification(300, 4)


def _est(**kw):
    return DPLogisticRegression(**{"epsilon": 0.5, "delta": DELTA, "data_norm": 1.0,
                                   "classes": [0, 1], "optimizer": "dp_gdws", **kw})


# -- the stream of a generator ---------------------------------------------------------------
def test_stream_state_tells_which_generators_draw_the_same_numbers():
    state = lambda seed: stream_state(make_generator(seed))  # noqa: E731
    assert state(0) == state(0) and state(0) != state(1)
    gen = np.random.default_rng(3)
    assert stream_state(make_generator(copy.deepcopy(gen))) == stream_state(make_generator(gen))
    gen.normal()  # a generator that has drawn is at another state
    assert stream_state(gen) != stream_state(np.random.default_rng(3))
    rs = np.random.RandomState(5)  # each use draws a new seed from it; its copies repeat it
    twin = copy.deepcopy(rs)
    first = state(rs)
    assert state(rs) != first and state(twin) == first
    assert state(None) != state(None)  # fresh entropy every time
    # the stored tags are keyed: another key, other tags; the raw state never appears in them
    s = state(0)
    a, b = stream_tags(s, b"k" * 32), stream_tags(s, b"l" * 32)
    assert a and b and not a & b and s.hex()[:32] not in a


def test_secure_generators_of_one_seed_share_a_stream():
    pytest.importorskip("randomgen")
    state = lambda seed: stream_state(make_generator(seed, secure=True))  # noqa: E731
    assert state(0) == state(0) and state(0) != state(1)
    assert state(0) != stream_state(make_generator(0))  # ChaCha20, not PCG64


# -- ledgers -------------------------------------------------------------------------------------
def test_a_ledger_with_a_ceiling_refuses_a_second_fit_of_one_seed(data):
    X, y = data
    ledger = PrivacyLedger(epsilon=100.0, delta=DELTA)
    _est(random_state=0, ledger=ledger).fit(X, y)
    second = _est(random_state=0, ledger=ledger, epsilon=1.0)
    with pytest.raises(BudgetExceededError, match="refused before fitting.*" + SHARED):
        second.fit(X[:150], y[:150])  # other data, other epsilon: the attack's two releases
    assert not hasattr(second, "coef_") and len(ledger) == 1
    _est(random_state=1, ledger=ledger, epsilon=1.0).fit(X[:150], y[:150])  # its own seed: fine
    assert len(ledger) == 2 and math.isfinite(ledger.spent())


def test_a_ledger_without_ceiling_reports_infinity_for_one_seed_twice(data):
    X, y = data
    with PrivacyLedger(delta=DELTA) as ledger:
        _est(random_state=0).fit(X, y)
        _est(random_state=1).fit(X, y)
        assert ledger.spent() == pytest.approx(compute_epsilon(compose(ledger.events), DELTA))
        with pytest.warns(UserWarning, match="was charged to.*" + SHARED):
            _est(random_state=0, epsilon=1.0).fit(X, y)
    assert len(ledger) == 3 and ledger.spent() == math.inf


@pytest.mark.parametrize("seed", [np.random.default_rng(7), np.random.RandomState(7)],
                         ids=["Generator", "RandomState"])
def test_clones_of_one_generator_share_a_stream(data, seed):
    """GridSearchCV fits clones: a clone deep-copies a Generator or RandomState, so the clones
    draw the same noise. One object reused by two fits draws on (no clone): not shared."""
    X, y = data
    est = _est(random_state=seed)
    with PrivacyLedger(delta=DELTA) as ledger, pytest.warns(UserWarning, match=SHARED):
        clone(est).fit(X, y)
        clone(est).fit(X, y)
    assert ledger.spent() == math.inf
    with PrivacyLedger(delta=DELTA) as ledger, warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est.fit(X, y)
        est.fit(X, y)
    assert math.isfinite(ledger.spent())


def test_ledger_summary_names_the_charges_that_share_a_stream(data):
    """The summary says why its total is infinite: which two charges drew one stream."""
    X, y = data
    with PrivacyLedger(delta=DELTA) as ledger, pytest.warns(UserWarning, match=SHARED):
        _est(random_state=1).fit(X, y)
        _est(random_state=0).fit(X, y)
        _est(random_state=2).fit(X, y)
        _est(random_state=0).fit(X, y)
    assert "epsilon=inf" in ledger.summary()
    assert "charges #1 and #3 drew their noise from one random stream" in ledger.summary()
    with PrivacyLedger(delta=DELTA) as fresh:
        _est(random_state=1).fit(X, y)
        _est(random_state=2).fit(X, y)
    assert "random stream" not in fresh.summary() and math.isfinite(fresh.spent())


def test_fits_in_worker_processes_are_compared_with_the_ledgers_key(data):
    """A GridSearchCV with a fixed seed in two worker processes: each worker tags its fits with
    the key its pickled copy of the ledger carries, so the parent sees the shared streams."""
    X, y = data
    cv = KFold(2, shuffle=True, random_state=0)
    with PrivacyLedger(delta=DELTA) as ledger:
        GridSearchCV(_est(random_state=0), {"C": [1.0]}, cv=cv, n_jobs=2).fit(X, y)
    assert len(ledger) == 3 and ledger.spent() == math.inf
    assert all(len(e.streams) == 1 for e in ledger.entries)
    with PrivacyLedger(delta=DELTA) as fresh:
        GridSearchCV(_est(), {"C": [1.0]}, cv=cv, n_jobs=2).fit(X, y)
    assert len(fresh) == 3 and math.isfinite(fresh.spent())
    assert pickle.loads(pickle.dumps(fresh)) is fresh  # the key travels with its copies


def _raw(n=4000):
    """Unscaled rows, enough of them for the scaler's private quantiles."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 3))
    return X * np.array([1.0, 10.0, 100.0]), (X[:, 0] > 0).astype(int)


def _fit_coef(args):
    est, X, y = args
    return est.fit(X, y).coef_


def test_unseeded_fits_in_forked_workers_draw_distinct_streams(data):
    """random_state=None in forked worker processes: each fit draws fresh entropy (no generator
    state inherited through the fork), so the charges' streams and the models all differ."""
    import multiprocessing

    X, y = data
    with PrivacyLedger(delta=DELTA) as ledger:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            coefs = pool.map(_fit_coef, [(_est(), X, y)] * 4)
    assert len(ledger) == 4 and math.isfinite(ledger.spent())
    assert len(set().union(*(e.streams for e in ledger.entries))) == 4
    assert len({c.tobytes() for c in coefs}) == 4


def test_a_private_pipeline_charges_its_steps_streams():
    raw, y = _raw()

    def pipe(seed):
        return make_private_pipeline(PrivateRobustScaler(random_state=seed),
                                     _est(random_state=seed), epsilon=1.0, delta=DELTA)

    with PrivacyLedger(delta=DELTA) as ledger, warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # one fit: its steps' streams are distinct
        pipe(0).fit(raw, y)
        pipe(1).fit(raw, y)
    assert len(ledger.entries[0].streams) == 2 and math.isfinite(ledger.spent())
    with pytest.warns(UserWarning, match=SHARED):
        with PrivacyLedger(delta=DELTA) as again:
            fitted = pipe(0).fit(raw, y)
            pipe(0).fit(raw[:3000], y[:3000])
    assert again.spent() == math.inf
    assert not any(hasattr(step, "_skdp_stream_state") for step in fitted)  # never kept


def test_a_standalone_step_and_an_estimator_of_one_seed_share_it():
    X, y = _raw()
    with PrivacyLedger(delta=DELTA) as ledger, pytest.warns(UserWarning, match=SHARED):
        scaler = PrivateRobustScaler(epsilon=1.0, delta=DELTA, random_state=0).fit(X)
        _est(random_state=0, data_norm="auto").fit(scaler.transform(X), y)
    assert ledger.spent() == math.inf
    assert not hasattr(scaler, "_skdp_stream_state")


# -- compose -------------------------------------------------------------------------------------
def test_compose_of_cross_validated_estimators_of_one_seed_is_not_private(data):
    from sklearn.model_selection import cross_validate

    X, y = data
    cv = KFold(3, shuffle=True, random_state=0)
    fixed = cross_validate(_est(random_state=0), X, y, cv=cv, return_estimator=True)
    with pytest.warns(UserWarning, match="compose: two of the items drew"):
        event = compose(fixed["estimator"])
    assert compute_epsilon(event, DELTA) == math.inf
    # fitted in worker processes (started from this one: they share its tag key)
    workers = cross_validate(_est(random_state=0), X, y, cv=cv, return_estimator=True, n_jobs=2)
    with pytest.warns(UserWarning, match="compose: two of the items drew"):
        assert compute_epsilon(compose(workers["estimator"]), DELTA) == math.inf
    fresh = cross_validate(_est(), X, y, cv=cv, return_estimator=True, n_jobs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert math.isfinite(compute_epsilon(compose(fresh["estimator"]), DELTA))
    # the entries of one ledger, and a ledger whose entries share a stream, count as well
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with PrivacyLedger(delta=DELTA) as ledger:
            _est(random_state=0).fit(X, y)
            _est(random_state=0).fit(X[:100], y[:100])
    for items in (ledger.entries, [ledger]):
        with pytest.warns(UserWarning, match="same random stream"):
            assert compute_epsilon(compose(items), DELTA) == math.inf


def test_every_fitted_spender_keeps_the_tags_of_its_streams():
    """Estimators, standalone steps, pipelines and private searches keep their streams' tags
    (this process's key), never the raw state; one seed gives one tag."""
    from skdp.model_selection import PrivateSearchCV
    from skdp._streams import released_streams

    raw, y = _raw()
    fitted = [
        _est(random_state=0, data_norm="auto").fit(raw, y),
        PrivateRobustScaler(epsilon=1.0, delta=DELTA, random_state=0).fit(raw),
        make_private_pipeline(PrivateRobustScaler(random_state=0), _est(random_state=0),
                              epsilon=1.0, delta=DELTA).fit(raw, y),
        PrivateSearchCV(_est(data_norm="auto"), {"C": [1.0]}, n_iter=1, delta=DELTA,
                        random_state=0).fit(raw, y),
    ]
    tags = [released_streams(f) for f in fitted]
    assert [len(t) for t in tags] == [1, 1, 2, 1]
    assert tags[0] == tags[1] == tags[3]  # one seed, one generator state, one tag
    assert tags[0] < tags[2]  # the pipeline's final estimator uses its seed as it is
    assert not any(hasattr(f, "_skdp_stream_state") for f in fitted)


# -- warm starts ---------------------------------------------------------------------------------
def test_a_warm_start_chain_of_one_seed_is_not_private(data):
    X, y = data
    est = _est(random_state=0, warm_start=True).fit(X, y)
    with pytest.warns(UserWarning, match="warm-started from a model fitted with the same random"):
        est.set_params(epsilon=1.0).fit(X, y)
    assert est.epsilon_ == math.inf and compute_epsilon(est.dp_event_, DELTA) == math.inf
    # fresh seeds compose; a seed of an earlier fit of the chain, not only the last, is caught
    est = _est(random_state=0, warm_start=True).fit(X, y)
    est.set_params(random_state=1).fit(X, y)
    assert math.isfinite(est.epsilon_)
    with pytest.warns(UserWarning, match="same random stream"):
        est.set_params(random_state=0).fit(X, y)
    assert est.epsilon_ == math.inf
    # a later link with a fresh seed continues from that non-private model: still not private
    # (before session 57 the shared stream was dropped from the chain at the next link: 0.91)
    est.set_params(random_state=2).fit(X, y)
    assert est.epsilon_ == math.inf
    # a cold start begins a new chain
    est.set_params(warm_start=False).fit(X, y)
    assert math.isfinite(est.epsilon_)


def test_a_warm_start_of_one_seed_is_charged_as_not_private(data):
    """The chain's first fit was not charged to the ledger, which cannot see by its own tags
    that the second draws the same noise; the fit knows it (one check, compare_streams, as for
    another session's chain) and charges a non-private event: a ceiling refuses it (before
    session 58 it was charged 1.0 while the model said inf)."""
    X, y = data
    est = _est(random_state=0, warm_start=True).fit(X, y)
    capped = PrivacyLedger(epsilon=100.0, delta=DELTA)
    with pytest.raises(BudgetExceededError, match="over the ceiling"):
        est.set_params(ledger=capped, epsilon=1.0).fit(X, y)
    assert len(capped) == 0 and est.epsilon_ < 0.5 + 1e-9  # the model as it was
    open_ended = PrivacyLedger(delta=DELTA)
    with pytest.warns(UserWarning, match="same random stream"):
        est.set_params(ledger=open_ended).fit(X, y)
    assert open_ended.spent() == math.inf and est.epsilon_ == math.inf


def test_a_pipeline_warm_start_chain_whose_scaler_repeats_its_seed_is_not_private():
    """A pipeline refitted with its final step warm-started continues a chain; its scaler, given
    an integer seed, draws the same noise in both fits (on other data: the quantiles' noise
    cancels between the two releases). Before the fix only the final step's own stream was
    checked, and the chained model reported epsilon 1.45 (session 57's red-team pass)."""
    X, y = unit_row_classification(1000, 3)  # (enough rows for the scaler to release)
    X2 = X[::-1] * 2.0 + 0.5

    def chain(scaler_seed):
        pipe = make_private_pipeline(
            PrivateRobustScaler(random_state=scaler_seed),
            _est(random_state=None, data_norm="auto"), epsilon=1.0, delta=DELTA).fit(X, y)
        pipe.set_params(dplogisticregression__warm_start=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pipe.fit(X2, y)
        return pipe, [str(w.message) for w in caught]

    pipe, messages = chain(7)
    assert hasattr(pipe[0], "dp_event_")  # the scaler released its quantiles
    assert pipe.epsilon_ == math.inf and pipe[-1].epsilon_ == math.inf
    assert any("same random stream" in m for m in messages)
    # a third fit of the chain still sees the first fit's stream
    pipe.set_params(privaterobustscaler__random_state=8).fit(X, y)
    pipe.set_params(privaterobustscaler__random_state=7)
    with pytest.warns(UserWarning, match="same random stream"):
        pipe.fit(X, y)
    assert pipe.epsilon_ == math.inf
    # fresh randomness for the scaler: the chain composes
    pipe, messages = chain(None)
    assert math.isfinite(pipe.epsilon_) and pipe.epsilon_ == pipe[-1].epsilon_
    assert not any("same random stream" in m for m in messages)


_FIT_IN_ANOTHER_SESSION = """
import pickle, sys
import numpy as np
from skdp import DPLogisticRegression
from tests._helpers import unit_row_classification
X, y = unit_row_classification(300, 4)
model = DPLogisticRegression(epsilon=0.5, delta=1e-5, data_norm=1.0, classes=[0, 1],
                             optimizer="dp_gdws", random_state=0).fit(X, y)
with open(sys.argv[1], "wb") as fh:
    pickle.dump(model, fh)
"""


def test_a_warm_start_from_another_sessions_model_with_a_seed_is_not_private(data, tmp_path):
    """Another Python session's tags are made under its own key (never saved with the model):
    this session cannot tell whether a seeded fit repeats one of the chain's streams (the same
    script run again). Before the fix the chain of one seed across two sessions reported 0.73
    (session 57's red-team pass); now a seeded warm start from such a model is not private, and
    one with fresh randomness composes."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from skdp._streams import KEY_VARIABLE

    X, y = data
    path = tmp_path / "model.pkl"
    env = {k: v for k, v in os.environ.items() if k != KEY_VARIABLE}  # a new session's key
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, "-c", _FIT_IN_ANOTHER_SESSION, str(path)], env=env,
                   check=True, cwd=root)

    def resume(**params):
        with open(path, "rb") as fh:
            model = pickle.load(fh)
        return model.set_params(warm_start=True, **params)

    with pytest.warns(UserWarning, match="another Python session"):
        model = resume().fit(X, y)  # random_state=0, as in the other session
    assert model.epsilon_ == math.inf
    # a ledger charged with that fit: infinite without a ceiling, a refusal under one (as for
    # a stream it sees twice); the refused model is not released
    ledger = PrivacyLedger(delta=DELTA)
    with pytest.warns(UserWarning, match="another Python session"):
        resume(ledger=ledger).fit(X, y)
    assert ledger.spent() == math.inf
    capped = PrivacyLedger(epsilon=5.0, delta=DELTA)
    refused = resume(ledger=capped)
    with pytest.raises(BudgetExceededError):
        refused.fit(X, y)
    assert len(capped) == 0 and refused.epsilon_ < 0.5 + 1e-9  # the loaded model, as it was
    model.set_params(random_state=None).fit(X, y)  # the chain stays not private
    assert model.epsilon_ == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fresh = resume(random_state=None).fit(X, y)
    assert math.isfinite(fresh.epsilon_) and fresh.epsilon_ > 0.5
    # the same chain within one session is compared as before: a fresh seed composes
    local = _est(random_state=0, warm_start=True).fit(X, y)
    local.set_params(random_state=1).fit(X, y)
    assert math.isfinite(local.epsilon_)


# -- record against the ledger's earlier charges (session 58) ----------------------------------
def test_record_is_compared_with_the_ledgers_earlier_charges(data):
    """A fit charged to a ledger and a model of the same seed recorded afterwards draw the same
    noise (on the same data the two models are bit-identical). Before the fix record compared
    its items with each other only, and the total was 0.73 (a ceiling accepted it)."""
    X, y = data
    ledger = PrivacyLedger(delta=DELTA)
    first = _est(random_state=0, ledger=ledger).fit(X, y)
    second = _est(random_state=0).fit(X, y)
    assert np.array_equal(first.coef_, second.coef_)  # one noise: the second release adds none
    with pytest.warns(UserWarning, match="was charged to.*" + SHARED):
        ledger.record(second)
    assert ledger.spent() == math.inf and compute_epsilon(ledger.event, DELTA) == math.inf
    assert ledger.entries[0].object_streams == released_streams(first)  # what it compares
    assert "charges #0 and #1 drew their noise from one random stream" in ledger.summary()
    capped = PrivacyLedger(epsilon=100.0, delta=DELTA)
    _est(random_state=0, ledger=capped).fit(X, y)
    with pytest.raises(BudgetExceededError, match="refused by.*" + SHARED):
        capped.record(second)
    assert len(capped) == 1  # nothing recorded
    with pytest.warns(UserWarning, match="compose: two of the items drew"):
        assert compute_epsilon(compose([capped, second]), DELTA) == math.inf
    # a recorded entry keeps its model's tags: a later record, or fit, of the seed is caught
    recorded = PrivacyLedger(epsilon=100.0, delta=DELTA)
    recorded.record(first)
    with pytest.raises(BudgetExceededError, match=SHARED):
        recorded.record([second])
    assert recorded.entries[0].object_streams == released_streams(first)
    late = _est(random_state=0, ledger=recorded)
    with pytest.raises(BudgetExceededError, match="refused before fitting.*" + SHARED):
        late.fit(X[:150], y[:150])
    assert len(recorded) == 1 and not hasattr(late, "coef_")
    # fresh randomness, or a seed of its own, composes as before
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        recorded.record(_est(random_state=1).fit(X, y), _est().fit(X, y))
        _est(random_state=2, ledger=recorded).fit(X, y)
        assert math.isfinite(compute_epsilon(compose([recorded, _est().fit(X, y)]), DELTA))
    assert len(recorded) == 4 and math.isfinite(recorded.spent())


def test_record_is_compared_with_charges_made_in_worker_processes(data):
    """Fits charged from worker processes keep object tags under the same key (the workers
    inherit it), so record compares a model fitted here with them."""
    import os

    from joblib import Parallel, delayed

    X, y = data
    with PrivacyLedger(epsilon=100.0, delta=DELTA) as ledger:
        Parallel(n_jobs=2)(delayed(_quiet_fit)(_est(random_state=s), X, y) for s in (3, 4))
    assert len(ledger) == 2 and any(e.pid != os.getpid() for e in ledger.entries)
    with pytest.raises(BudgetExceededError, match=SHARED):
        ledger.record(_est(random_state=4).fit(X, y))
    ledger.record(_est(random_state=5).fit(X, y))
    assert len(ledger) == 3 and math.isfinite(ledger.spent())


def test_an_entry_pickled_by_an_older_skdp_keeps_its_streams_unknown(data):
    """An entry pickled before ``object_streams`` existed has no object tags: its ledger tags
    stand for streams of an unknown key. A seeded model recorded with it cannot be compared
    (not private); an unseeded one can; fits are still compared by the ledger's own tags."""
    from skdp.ledger import _rebuild

    X, y = data
    ledger = PrivacyLedger(epsilon=100.0, delta=DELTA)
    _est(random_state=0, ledger=ledger).fit(X, y)
    state = dict(vars(ledger.entries[0]))
    del state["object_streams"]
    old = LedgerEntry.__new__(LedgerEntry)  # what unpickling an older entry makes
    old.__dict__.update(state)
    assert old.object_streams is None and pickle.loads(pickle.dumps(old)) == old

    def older():  # that ledger unpickled after its owner had gone: a detached copy
        config = dict(epsilon=100.0, delta=DELTA, accountant="rdp", name=None,
                      stream_key=ledger._stream_key)
        return _rebuild(uuid.uuid4().hex, None, config, (old,))

    with pytest.raises(BudgetExceededError, match=ANOTHER_SESSION):
        older().record(_est(random_state=1).fit(X, y))
    detached = older()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        detached.record(_est().fit(X, y))
        _est(random_state=1, ledger=detached).fit(X, y)  # the ledger's tags tell them apart
    with pytest.raises(BudgetExceededError, match="refused before fitting.*" + SHARED):
        _est(random_state=0, ledger=detached).fit(X, y)
    assert len(detached) == 3 and math.isfinite(detached.spent())


# -- models fitted in another Python session (session 58) ---------------------------------------
_FIT_SPENDERS_IN_ANOTHER_SESSION = """
import pickle, sys
import numpy as np
from skdp import DPLogisticRegression
from skdp.model_selection import PrivateSearchCV
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import PrivateRobustScaler
from tests._helpers import unit_row_classification
X, y = unit_row_classification(300, 4)
rng = np.random.default_rng(1)
R = rng.normal(size=(4000, 3))
yr, R = (R[:, 0] > 0).astype(int), R * np.array([1.0, 10.0, 100.0])
est = lambda **kw: DPLogisticRegression(**{"epsilon": 0.5, "delta": 1e-5, "data_norm": 1.0,
                                          "classes": [0, 1], "optimizer": "dp_gdws", **kw})
fitted = {"seeded": est(random_state=0).fit(X, y), "unseeded": est().fit(X, y)}
for name, seed in (("pipeline", 0), ("unseeded pipeline", None)):
    fitted[name] = make_private_pipeline(PrivateRobustScaler(random_state=seed), est(),
                                         epsilon=1.0, delta=1e-5).fit(R, yr)
for name, seed in (("search", 0), ("unseeded search", None)):
    fitted[name] = PrivateSearchCV(est(data_norm="auto"), {"C": [1.0]}, n_iter=1,
                                   delta=1e-5, random_state=seed).fit(R, yr)
with open(sys.argv[1], "wb") as fh:
    pickle.dump(fitted, fh)
"""


def _as_if_from_another_session(obj, key_id="0123456789ab"):
    """A copy of the fitted ``obj`` as a session of key name ``key_id`` would have made it: the
    same model, its streams' tags under that key (all that tells an unpickled model apart)."""
    obj = copy.deepcopy(obj)
    setattr(obj, ATTRIBUTE, frozenset(key_id + tag[len(KEY_ID):]
                                      for tag in released_streams(obj)))
    return obj


@pytest.fixture(scope="module")
def other_sessions(tmp_path_factory):
    """Spenders fitted in another Python session (with a key of its own) and unpickled here
    (a dict of fitted objects), and its seeded estimator as a third session would hold it
    (its tags re-keyed: a second subprocess costs seconds): ``(first, second)``."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from skdp._streams import KEY_VARIABLE

    env = {k: v for k, v in os.environ.items() if k != KEY_VARIABLE}  # a new session's key
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    path = tmp_path_factory.mktemp("session") / "fitted.pkl"
    subprocess.run([sys.executable, "-c", _FIT_SPENDERS_IN_ANOTHER_SESSION, str(path)],
                   env=env, check=True, cwd=root)
    with open(path, "rb") as fh:
        first = pickle.load(fh)
    assert not any(tag.startswith(KEY_ID) for obj in first.values()
                   for tag in released_streams(obj))
    return first, {"seeded": _as_if_from_another_session(first["seeded"])}


def test_compose_of_a_seeded_model_from_another_session_is_not_private(data, other_sessions):
    """The same seed gives the same noise in any session (the models are bit-identical), but
    another session's tags are keyed by its own secret: before the fix compose took them as
    distinct and reported 0.73. Now two items both fitted with a random_state whose streams
    cannot be compared are not private; an unseeded one on either side needs no comparison."""
    X, y = data
    first, second = other_sessions
    foreign = first["seeded"]
    local = _est(random_state=0).fit(X, y)
    assert np.array_equal(foreign.coef_, local.coef_)
    for items in ([foreign, local], [local, _est(random_state=1).fit(X, y), foreign],
                  [foreign, second["seeded"]],  # two other sessions
                  [_as_if_from_another_session(local), local],
                  [first["pipeline"], local],  # seeded through its scaler only
                  [first["search"], local], [[foreign], [local]]):
        with pytest.warns(UserWarning, match="compose: two of the items were fitted.*"
                                             + ANOTHER_SESSION):
            assert compute_epsilon(compose(items), DELTA) == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        for items in ([foreign], [foreign, _est().fit(X, y)], [first["unseeded"], local],
                      [first["unseeded pipeline"], local], [first["unseeded search"], local],
                      [foreign, first["unseeded"]]):
            assert math.isfinite(compute_epsilon(compose(items), DELTA))


def test_record_of_a_seeded_model_from_another_session_is_not_private(data, other_sessions):
    X, y = data
    foreign, unseeded = other_sessions[0]["seeded"], other_sessions[0]["unseeded"]
    local = _est(random_state=0).fit(X, y)
    capped = PrivacyLedger(epsilon=100.0, delta=DELTA)
    with pytest.raises(BudgetExceededError, match=ANOTHER_SESSION):
        capped.record(foreign, local)
    _est(random_state=1, ledger=capped).fit(X, y)  # against an earlier charge of a fit
    with pytest.raises(BudgetExceededError, match=ANOTHER_SESSION):
        capped.record(foreign)
    assert len(capped) == 1
    later = PrivacyLedger(epsilon=100.0, delta=DELTA)
    later.record(foreign)  # alone: nothing to compare it with
    with pytest.raises(BudgetExceededError, match="refused before fitting.*" + ANOTHER_SESSION):
        _est(random_state=2, ledger=later).fit(X, y)
    with warnings.catch_warnings():  # fresh randomness on either side
        warnings.simplefilter("error", UserWarning)
        _est(ledger=later).fit(X, y)
        later.record(_est().fit(X, y), unseeded)
        later.record(other_sessions[0]["unseeded search"])
    assert len(later) == 5 and math.isfinite(later.spent())
    open_ended = PrivacyLedger(delta=DELTA)
    with pytest.warns(UserWarning, match="was charged to.*" + ANOTHER_SESSION):
        open_ended.record(foreign, other_sessions[1]["seeded"])
    assert open_ended.spent() == math.inf
    assert "one of them in another Python session" in open_ended.summary()


def test_a_chain_from_another_sessions_seeded_model_keeps_its_streams_seeded(data, other_sessions):
    """A seeded model of another session, warm-started here with fresh randomness, composes
    (the new stream cannot repeat any); its chain still holds the other session's seeded stream,
    which compose compares per stream: the estimator's random_state (None now) does not tell."""
    X, y = data
    chained = copy.deepcopy(other_sessions[0]["seeded"]).set_params(warm_start=True,
                                                                    random_state=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        chained.fit(X, y)
    assert math.isfinite(chained.epsilon_)
    with pytest.warns(UserWarning, match=ANOTHER_SESSION):
        assert compute_epsilon(compose([chained, _est(random_state=0).fit(X, y)]),
                               DELTA) == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert math.isfinite(compute_epsilon(compose([chained, _est().fit(X, y)]), DELTA))


def test_a_seeded_warm_start_from_another_sessions_unseeded_model_composes(data, other_sessions):
    """The other session's fit drew fresh entropy (its tag says so): no seed here repeats it."""
    X, y = data
    model = copy.deepcopy(other_sessions[0]["unseeded"]).set_params(warm_start=True,
                                                                    random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model.fit(X, y)
    assert math.isfinite(model.epsilon_) and model.epsilon_ > 0.5


# -- searches ------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: _est(random_state=0),
    lambda: make_pipeline(Normalizer(), _est(random_state=np.random.RandomState(0))),
], ids=["estimator", "pipeline"])
def test_tuning_cost_refuses_a_search_whose_fits_share_a_seed(data, make):
    X, y = data
    search = GridSearchCV(make(), {}, cv=KFold(2, shuffle=True, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    with pytest.raises(ValueError, match="draw fresh noise.*random_state="):
        tuning_cost(search, X, y)
    with pytest.raises(ValueError, match="draw fresh noise"):
        PrivacyLedger(delta=DELTA).fit_search(clone(search), X, y)


def test_tuning_cost_accepts_a_grid_of_distinct_seeds_only_without_a_seed(data):
    """A grid over random_state still gives each candidate's folds and refit one seed."""
    X, y = data
    search = GridSearchCV(_est(), {"random_state": [1, 2]}, cv=KFold(2, shuffle=True,
                                                                      random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    with pytest.raises(ValueError, match="random_state=1"):
        tuning_cost(search, X, y)
    ok = GridSearchCV(_est(), {"C": [1.0]}, cv=KFold(2, shuffle=True, random_state=0)).fit(X, y)
    assert math.isfinite(tuning_cost(ok, X, y).epsilon)


# -- the end-to-end audit ------------------------------------------------------------------------
def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def _fit_in_fork(args):
    return _quiet_fit(*args)


class _TwoFits:
    """Fits at epsilon 0.5 and 1 on the same data (a GridSearchCV over epsilon's two fits of
    one fold), with one seed or two; ``epsilon_`` is the ledger's total for the two releases.

    ``workers``: the two fits unseeded (``random_state=None``), each in a worker process, as a
    search with ``n_jobs=2`` runs them: "loky" (joblib's default, what scikit-learn uses) or
    "fork" (a multiprocessing pool of forked processes, which inherit this process's state).

    ``recorded``: the second fit is made outside the ledger and given to its ``record``, as it
    is ("here") or as a model of another Python session ("another session")."""

    def __init__(self, seed, shared, workers=None, recorded=None):
        self.seed, self.shared, self.workers, self.recorded = seed, shared, workers, recorded

    def fit(self, X, y):
        kw = dict(delta=DELTA, optimizer=DPGDWS(step=0.5, max_iter=10), fit_intercept=False,
                  derivative_clip=1000.0, y_bounds=(-100.0, 100.0), data_norm=1.0)
        second = self.seed if self.shared else (self.seed + 1_000_003) % 2**32
        with PrivacyLedger(delta=DELTA) as ledger:
            if self.workers is None:
                self.a = _quiet_fit(DPRidge(epsilon=0.5, random_state=self.seed, **kw), X, y)
                if self.recorded is None:
                    self.b = _quiet_fit(DPRidge(epsilon=1.0, random_state=second, **kw), X, y)
            else:
                jobs = [(DPRidge(epsilon=eps, **kw), X, y) for eps in (0.5, 1.0)]
                self.a, self.b = _in_workers(self.workers, jobs)
        if self.recorded is not None:
            self.b = _quiet_fit(DPRidge(epsilon=1.0, random_state=second, **kw), X, y)
            if self.recorded == "another session":
                self.b = _as_if_from_another_session(self.b)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ledger.record(self.b)
        assert len(ledger) == 2  # both charges reached this process
        self.epsilon_, self.delta_ = ledger.spent(), DELTA
        return self


def _in_workers(backend, jobs):
    if backend == "loky":
        from joblib import Parallel, delayed

        return Parallel(n_jobs=2)(delayed(_quiet_fit)(*job) for job in jobs)
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(_fit_in_fork, jobs)


def _noiseless_combination(x):
    """With one seed, the combination of the two models that cancels their common noise (the
    squared loss, unclipped, fixed steps: each model is the noiseless one plus sigma N)."""
    def statistic(m):
        sa, sb = m.a.noise_multiplier_, m.b.noise_multiplier_
        pa, pb = m.a.predict(x[None])[0], m.b.predict(x[None])[0]
        return float((sb * pa - sa * pb) / (sb - sa))
    return statistic


def _canary():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X[:, 0] + 0.1 * rng.normal(size=30), -1, 1)
    return make_canary(X, y, task="regression", y_bounds=(-100.0, 100.0))


def _two_fit_audit(shared, workers=None, n_fits=150, recorded=None):
    c = _canary()
    with memoized_accounting():
        return audit_estimator(lambda seed: _TwoFits(seed, shared, workers, recorded), c.X, c.y,
                               c.index, n_fits=n_fits, statistic=_noiseless_combination(c.x),
                               random_state=1)


def test_audit_two_fits_of_one_seed():
    """The composition the ledger reported before (1.14) is refuted: the combination is a
    deterministic function of the data (lower bound 2.75 from 150 + 150 fits); the claim is now
    inf."""
    res = _two_fit_audit(shared=True)
    assert res.claimed_epsilon == math.inf and not res.violated
    c = _canary()
    composed = _TwoFits(11, shared=False).fit(c.X, c.y).epsilon_  # the two events' composition
    assert math.isfinite(composed) and res.epsilon_lower_bound > composed, res.summary()


@pytest.mark.parametrize("recorded", ["here", "another session"])
def test_audit_two_fits_of_one_seed_the_second_recorded(recorded):
    """The same two releases, the second fitted outside the ledger and given to its record
    (as it is, or as another session's model). Before session 58 the ledger composed them
    (1.14; the audit measures 2.75 against it): record compared its items only with each
    other, and another session's tags with nothing. The claim is now inf."""
    res = _two_fit_audit(shared=True, recorded=recorded)
    assert res.claimed_epsilon == math.inf and not res.violated, res.summary()
    c = _canary()
    composed = _TwoFits(11, shared=False).fit(c.X, c.y).epsilon_
    assert math.isfinite(composed) and res.epsilon_lower_bound > composed, res.summary()
    # a seed of its own, recorded here, composes; another session's cannot be compared
    apart = _TwoFits(11, shared=False, recorded=recorded).fit(c.X, c.y).epsilon_
    assert apart == (composed if recorded == "here" else math.inf)


def test_audit_two_fits_of_two_seeds():
    """With a seed each, the same releases stay within their composition."""
    res = _two_fit_audit(shared=False)
    assert math.isfinite(res.claimed_epsilon) and not res.violated, res.summary()


@pytest.mark.parametrize("workers, n_fits", [
    ("loky", 30),
    pytest.param("loky", 150, marks=pytest.mark.slow),
    pytest.param("fork", 150, marks=pytest.mark.slow),  # a pool forked per fit: ~20 s
])
def test_audit_two_unseeded_fits_in_worker_processes(workers, n_fits):
    """The same two releases, unseeded, each fitted in a worker process and charged to this
    process's ledger: they stay within the ledger's finite composition (1.14). Had the workers
    drawn one stream (a generator state inherited through the fork), this statistic would
    combine them into the noiseless model, which the one-seed audit above measures at 2.75."""
    res = _two_fit_audit(shared=False, workers=workers, n_fits=n_fits)
    c = _canary()
    composed = _TwoFits(11, shared=False).fit(c.X, c.y).epsilon_
    assert math.isclose(res.claimed_epsilon, composed, rel_tol=1e-9), res.summary()
    assert not res.violated, res.summary()


# -- one RandomState or Generator for the steps of a PrivatePipeline (session 56) ---------------
def _two_scaler_pipeline(state_a, state_b, estimator_state):
    """Two private scalers in a ColumnTransformer (which fits deep copies of them) and DPRidge."""
    from sklearn.compose import make_column_transformer

    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import PrivateRobustScaler

    scaler = {"if_unreliable": "scale", "grid": np.arange(-4.0, 5.0)}
    return make_private_pipeline(
        make_column_transformer((PrivateRobustScaler(random_state=state_a, **scaler), [0]),
                                (PrivateRobustScaler(random_state=state_b, **scaler), [1])),
        DPRidge(random_state=estimator_state, y_bounds=(-1.0, 1.0), fit_intercept=False,
                data_norm=1.0),
        epsilon=1.0, delta=1e-5,
        weights={"columntransformer__privaterobustscaler-1": 1,
                 "columntransformer__privaterobustscaler-2": 1, "dpridge": 0.1})


def _equal_columns(n=40, seed=0):
    """Two equal columns but the canary's cell (row 0: 3 in column 0, 0 in column 1), and the
    neighbour with the canary's cell zeroed."""
    col = np.random.default_rng(seed).uniform(0.5, 2.5, size=n)
    X = np.column_stack([col, col])
    X[0] = [3.0, 0.0]
    X_out = X.copy()
    X_out[0] = 0.0
    return X, X_out, np.zeros(n)


@pytest.mark.parametrize("kind", ["RandomState", "Generator"])
def test_pipeline_steps_sharing_a_generator_draw_from_streams_of_their_own(kind):
    """A ColumnTransformer fits deep copies of its steps, so one RandomState or Generator given
    to both scalers reached each in the same state: before session 56 they drew the same noise
    (the same stream tag), the pipeline kept one tag and reported a finite epsilon."""
    from skdp._streams import released_streams

    X, _, y = _equal_columns()
    shared = np.random.RandomState(7) if kind == "RandomState" else np.random.default_rng(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = _two_scaler_pipeline(shared, shared, shared).fit(X, y)
    a, b = (t for _, t, _ in pipe[0].transformers_)
    assert released_streams(a) and released_streams(b)
    assert not released_streams(a) & released_streams(b)
    assert math.isfinite(pipe.epsilon_)


def test_pipeline_refuses_two_releases_from_one_stream(monkeypatch):
    """The safety net behind the streams of their own: two steps whose releases still share a
    stream (here forced) make the fit refuse instead of dropping one tag. The quantiles drawn
    before the refusal are charged as a failed fit's (skdp._fit_state.charged_if_failed: an
    over-statement here, the refusal reads only the streams), never as the pipeline's fit."""
    from skdp._fit_state import FAILED_FIT
    from skdp._streams import stream_state
    from skdp._validation import make_generator
    from skdp.preprocessing._step import PrivateStepMixin

    def same_stream(self):
        rng = make_generator(0)
        self._skdp_stream_state = stream_state(rng)
        return rng

    monkeypatch.setattr(PrivateStepMixin, "_rng", same_stream)
    X, _, y = _equal_columns()
    ledger = PrivacyLedger()
    pipe = _two_scaler_pipeline(None, None, None).set_params(ledger=ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="one random stream"):
            pipe.fit(X, y)
    assert [FAILED_FIT in e.source for e in ledger.entries] == [True]
    assert not hasattr(pipe, "epsilon_")


@pytest.mark.slow
def test_audit_pipeline_steps_sharing_a_random_state():
    """Scaler B's input is the same on D and D', so with independent noise the pair of releases
    is as private as scaler A's alone (0.48 of the pipeline's 1). With the shared stream of
    before session 56 the releases were equal on D' (same noise, same input) and differed on D
    only through the canary: 1.87 measured against the claim 1 with 2000 + 2000 fits (about
    30 s on a quiet machine)."""
    from skdp.audit import audit_estimator

    X, X_out, y = _equal_columns()

    def factory(seed):
        shared = np.random.RandomState(seed)
        return _two_scaler_pipeline(shared, shared, shared)

    def differ(model):
        a, b = (t for _, t, _ in model[0].transformers_)
        return float(not np.array_equal(a.quantiles_, b.quantiles_))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        claim = factory(1).fit(X, y)
        res = audit_estimator(factory, X, y, 0, neighbour=(X_out, y), n_fits=2000,
                              statistic=differ, claimed_epsilon=claim.epsilon_,
                              claimed_delta=claim.delta_)
    assert not res.violated, res.summary()


# -- one Generator, fits in two threads (session 56) ---------------------------------------------
def test_fits_in_two_threads_from_one_generator_draw_independent_noise():
    """The kernels draw without the GIL and without the Generator's lock: two fits in two
    threads given one Generator tore its state and drew overlapping noise (the models matched
    neither fit made one after the other; the ledger still composed them). Each fit now seeds a
    generator of its own from one locked draw, so the two threaded fits are exactly the two
    sequential ones, in some order."""
    import threading

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 2000))
    y = (X[:, 0] > 0).astype(int)

    def fit(generator):
        return DPLogisticRegression(epsilon=1.0, data_norm=50.0, optimizer="dp_scd",
                                    random_state=generator).fit(X, y).coef_

    shared = np.random.default_rng(123)
    sequential = [fit(shared), fit(shared)]
    shared = np.random.default_rng(123)
    threaded, barrier = [None, None], threading.Barrier(2)

    def run(i):
        barrier.wait()
        threaded[i] = fit(shared)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    matches = sorted(next(j for j in range(2) if np.array_equal(c, sequential[j]))
                     for c in threaded)
    assert matches == [0, 1]


@pytest.mark.parametrize("kind", ["Generator", "RandomState"])
def test_a_generator_seeds_the_fit_with_128_bits(kind):
    """A Generator or RandomState given as random_state seeds the fit's generator with the 128
    bits of one draw of two 64-bit words, not one 63-bit word (session 57): a seed that a holder
    of the model could search exhaustively would undo the noise."""
    from skdp._validation import make_generator

    def source():
        return np.random.default_rng(5) if kind == "Generator" else np.random.RandomState(5)

    words = (source().integers(0, 2**64, size=2, dtype=np.uint64) if kind == "Generator"
             else source().randint(0, 2**64, size=2, dtype=np.uint64))
    seed = (int(words[0]) << 64) | int(words[1])
    assert seed >= 2**64  # (this draw's first word is not 0)
    np.testing.assert_array_equal(make_generator(source()).random(4),
                                  np.random.default_rng(seed).random(4))


def test_secure_mode_applies_to_a_generator_too():
    """A Generator given as random_state was used as it is, so secure_mode=True kept its PCG64
    silently; it now seeds the fit's own ChaCha20 stream, as an integer does."""
    pytest.importorskip("randomgen")
    from skdp._validation import make_generator

    rng = make_generator(np.random.default_rng(0), secure=True)
    assert type(rng.bit_generator).__name__ == "ChaCha"
