"""Issue 13, items 3, 4, 6, 7 and 11 (row-wise steps): ledgers under every kind of worker pool,
one carrier of the open contexts, data-independent folds, charge-first private search."""

from concurrent.futures import ProcessPoolExecutor
import gc
import math
import multiprocessing
import os
import pickle

import numpy as np
import pytest
from joblib import Parallel, delayed
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    KFold,
    ShuffleSplit,
    StratifiedKFold,
    cross_val_score,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, Normalizer

from skdp import (
    BudgetExceededError,
    DPLogisticRegression,
    DPRidge,
    PrivacyLedger,
    compose,
    compute_epsilon,
    tuning_cost,
)
from skdp.ledger import LedgerCarrierMixin
from skdp.linear_model._base import DPLinearModel
from skdp.model_selection import PrivateSearchCV
from skdp.model_selection import _search as search_module
from skdp.privacy import SelfComposedEvent

# Tiny public-shape data: these tests are about who is charged, not about the models.
_rng = np.random.default_rng(0)
X = _rng.normal(size=(40, 3))
X /= np.linalg.norm(X, axis=1, keepdims=True)
Y = (X[:, 0] + 0.3 * _rng.normal(size=40) > 0).astype(int)

N_FITS, EPS, ROOM = 16, 0.5, 7  # 16 fits at epsilon 0.5 under a ceiling with room for 7


def _fit_event(est):
    """Fit on the tiny data in whatever process runs this; the event, or None if refused."""
    try:
        return est.fit(X, Y).dp_event_
    except BudgetExceededError:
        return None


def _run(kind, estimators):
    if kind in ("loky", "multiprocessing", "threading"):
        return Parallel(n_jobs=2, backend=kind)(delayed(_fit_event)(e) for e in estimators)
    context = multiprocessing.get_context(kind.split("-")[1])
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        return list(pool.map(_fit_event, estimators))


def _est(**kw):
    kw.setdefault("epsilon", EPS)
    kw.setdefault("delta", 1e-7)
    return DPLogisticRegression(**kw)


# -- item 3: every fit charged, the ceiling never passed, under every pool --------------------
@pytest.mark.parametrize(  # spawn-based futures: slow run (CI) only, for the default run's time
    "kind", ["loky", "multiprocessing", "threading", "futures-fork",
             pytest.param("futures-spawn", marks=pytest.mark.slow)]
)
def test_every_fit_is_charged_and_the_ceiling_holds_in_worker_pools(kind):
    one = _fit_event(_est(random_state=0))  # every fit has this event (public quantities only)
    ceiling = compute_epsilon(SelfComposedEvent(one, ROOM), 1e-5) * (1 + 1e-9)
    assert compute_epsilon(SelfComposedEvent(one, ROOM + 1), 1e-5) > ceiling
    # Fresh ledgers: none has a spool when the pool forks its workers.
    capped = PrivacyLedger(epsilon=ceiling, delta=1e-5, name="capped")
    uncapped = PrivacyLedger(delta=1e-5, name="uncapped")
    with PrivacyLedger(delta=1e-5, name="context") as context:
        # a seed per fit: the context is charged with every fit, and one seed twice would make
        # its total infinite (the fits would share their noise)
        events = _run(kind, [_est(random_state=s, ledger=capped) for s in range(N_FITS)]
                      + [_est(random_state=N_FITS + s, ledger=uncapped) for s in range(N_FITS)])
    released = [e for e in events[:N_FITS] if e is not None]
    assert all(e is not None for e in events[N_FITS:])  # nothing refuses the uncapped fits

    # every fit charged: each released fit once to its explicit ledger and to the context
    assert len(uncapped) == N_FITS and all(e == one for e in uncapped.events)
    assert len(capped) == len(released) and all(e == one for e in capped.events)
    assert len(context) == N_FITS + len(released) and math.isfinite(context.spent())
    # the ceiling never passed, and spent() is the true composition of what was released
    assert 1 <= len(released) <= ROOM
    assert math.isclose(capped.spent(), compute_epsilon(compose(released), 1e-5), rel_tol=1e-9)
    assert capped.spent() <= ceiling
    assert math.isclose(uncapped.spent(), compute_epsilon(SelfComposedEvent(one, N_FITS), 1e-5),
                        rel_tol=1e-9)
    if kind != "threading":
        assert {e.pid for e in context.entries} - {os.getpid()}  # charged in the workers


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_raw_fork_child_reaches_a_ledger_that_had_no_spool():
    # No pickling at all: the child uses the copies of the ledgers it inherited, explicit and
    # context, none of which had a spool before the fork.
    explicit = PrivacyLedger(delta=1e-5)
    with PrivacyLedger(delta=1e-5) as context:
        pid = os.fork()
        if pid == 0:  # the child: fit twice, then leave without running pytest's teardown
            code = 1
            try:
                _est(random_state=1, ledger=explicit).fit(X, Y)
                _est(random_state=2).fit(X, Y)
                del explicit  # the child's copy is collected: the parent's spool must stay
                gc.collect()
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert (len(explicit), len(context)) == (1, 2)
    assert {e.pid for e in context.entries} == {pid}
    _est(random_state=3, ledger=explicit).fit(X, Y)
    assert len(explicit) == 2 and os.path.isdir(explicit._spool)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_child_that_cannot_reach_the_ledger_refuses_to_fit(monkeypatch):
    # No spool can be made before the fork (an unwritable temporary directory): the child's
    # inherited copy cannot reach the parent, so the child's fit must fail, not charge a copy.
    def no_directory(*args, **kwargs):
        raise OSError("read-only file system")

    ledger = PrivacyLedger(delta=1e-5)
    monkeypatch.setattr("tempfile.mkdtemp", no_directory)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            try:
                _est(random_state=1, ledger=ledger).fit(X, Y)
                code = 2  # fitted: the charge went to a copy nobody reads
            except RuntimeError as exc:
                code = 0 if "forked process" in str(exc) else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    monkeypatch.undo()
    assert os.WEXITSTATUS(status) == 0
    assert len(ledger) == 0


# -- item 4: one carrier, and PrivateSearchCV in worker processes -----------------------------
def _search(**kw):
    est = DPLogisticRegression(epsilon=0.5, delta=1e-7, classes=[0, 1])
    return PrivateSearchCV(est, {"C": [0.1, 1.0]}, n_iter=2, delta=1e-5, random_state=0, **kw)


def test_one_carrier_for_everything_that_spends():
    with PrivacyLedger() as ledger:
        copy = pickle.loads(pickle.dumps(_search()))
    copy.fit(X, Y)  # outside the context: charged to the ledger it carried from the pickling
    assert len(ledger) == 1 and ledger.entries[0].source == "PrivateSearchCV"
    for cls in (DPLinearModel, PrivateSearchCV):  # the same mechanism, not a copy per class
        assert issubclass(cls, LedgerCarrierMixin)
        assert cls.__getstate__ is LedgerCarrierMixin.__getstate__
        assert cls.__sklearn_clone__ is LedgerCarrierMixin.__sklearn_clone__


def test_private_search_in_worker_processes_charges_the_context():
    with PrivacyLedger() as ledger:
        cross_val_score(_search(), X, Y, cv=KFold(3), n_jobs=2)
    assert len(ledger) == 3 and {e.source for e in ledger.entries} == {"PrivateSearchCV"}
    assert {e.pid for e in ledger.entries} - {os.getpid()}
    # the worker's check sees the context ledger: a ceiling below one search refuses them all
    with PrivacyLedger(epsilon=0.1) as tight:
        with pytest.raises(BudgetExceededError):
            cross_val_score(_search(), X, Y, cv=KFold(3), n_jobs=2, error_score="raise")
    assert len(tight) == 0


# -- item 7: a refused charge leaves no model behind ------------------------------------------
def test_a_late_refusal_of_the_search_leaves_no_model(monkeypatch):
    search_event = _search().fit(X, Y).dp_event_
    ledger = PrivacyLedger(epsilon=1.5 * compute_epsilon(search_event, 1e-5), delta=1e-5)
    real_precheck = search_module.precheck

    def precheck_then_someone_else_spends(ledgers, *args, **kwargs):
        real_precheck(ledgers, *args, **kwargs)  # passes: there is room for one search
        ledger.record(search_event, label="another process")  # ... which is taken meanwhile

    monkeypatch.setattr(search_module, "precheck", precheck_then_someone_else_spends)
    search = _search(ledger=ledger)
    with pytest.raises(BudgetExceededError) as refusal:
        search.fit(X, Y)
    for name in ("best_estimator_", "best_params_", "best_score_", "best_index_", "dp_event_",
                 "epsilon_"):
        assert not hasattr(search, name)
    assert [e.label for e in ledger.entries] == ["another process"]
    assert "refused before fitting" in str(refusal.value)  # charged first: nothing ran


# -- item 6: folds that depend on the data ----------------------------------------------------
def _grid(cv, groups=None):
    return GridSearchCV(_est(), {"C": [0.1, 1.0]}, cv=cv).fit(X, Y, groups=groups)


def test_tuning_cost_refuses_label_and_group_dependent_folds():
    integer_cv = _grid(3)  # a classifier with cv=3: scikit-learn uses StratifiedKFold
    with pytest.raises(ValueError, match="StratifiedKFold"):
        tuning_cost(integer_cv, X, Y)
    with pytest.raises(ValueError, match="StratifiedKFold"):
        tuning_cost(integer_cv)  # the bound from the targets needs independent folds too
    with pytest.raises(ValueError, match="independently of the data"):
        tuning_cost(_grid(StratifiedKFold(3, shuffle=True, random_state=0)), X, Y)
    groups = np.arange(40) % 4
    with pytest.raises(ValueError, match="GroupKFold"):
        tuning_cost(_grid(GroupKFold(2), groups=groups), X, Y, groups)
    splits = list(KFold(2).split(X))
    with pytest.raises(ValueError, match="fixed list of splits"):
        tuning_cost(_grid(splits), X, Y)
    # data-independent folds are accounted as before
    ok = tuning_cost(_grid(KFold(3, shuffle=True, random_state=0)), X, Y)
    assert ok.exact and ok.n_fits == 2 * 3 + 1 and ok.epsilon_per_record < ok.epsilon
    y_reg = np.clip(X[:, 0], -1, 1)
    ridge = DPRidge(epsilon=0.5, delta=1e-7, optimizer="dp_gdws", random_state=None)
    ridge = GridSearchCV(ridge, {"alpha": [1.0, 2.0]}, cv=3).fit(X, y_reg)
    assert tuning_cost(ridge, X, y_reg).exact  # a regressor's cv=3 is KFold(3)


def test_tuning_cost_does_not_redraw_unseeded_shuffled_splits():
    # ShuffleSplit(random_state=None) drew its splits from numpy's global state: a new draw in
    # tuning_cost would be another split. With two halves of 8 records, a redraw whose second
    # training half is the complement of the first puts no record in both training parts, and
    # would claim one fold fit per record where the search may have given some record two.
    X8, y8 = X[:8], np.clip(X[:8, 0], -1, 1)
    cv = ShuffleSplit(n_splits=2, train_size=0.5, test_size=0.5, random_state=None)
    ridge = DPRidge(epsilon=0.5, delta=1e-7, optimizer="dp_gdws", random_state=None)
    search = GridSearchCV(ridge, {"alpha": [1.0]}, cv=cv).fit(X8, y8)
    disjoint = next(
        t for t in range(10_000)
        if _redraw_is_disjoint(t, cv)
    )
    results = []
    for state in (disjoint, disjoint + 1):
        np.random.seed(state)
        results.append(tuning_cost(search, X8, y8, delta=1e-5))
    for cost in results:
        # any record may be in both training parts: per record, every fit
        assert math.isclose(cost.epsilon_per_record, cost.epsilon, rel_tol=1e-12)
    assert results[0].epsilon == results[1].epsilon


def _redraw_is_disjoint(state, cv):
    np.random.seed(state)
    (a, _), (b, _) = cv.split(np.zeros((8, 1)))
    return not set(a) & set(b)


def test_tuning_cost_of_unseeded_kfold_uses_its_permutation_free_patterns():
    X60 = np.vstack([X, X[:20]])
    y60 = np.concatenate([Y, Y[:20]])
    est = DPLogisticRegression(epsilon=0.5, delta=1e-7, random_state=None)
    costs = []
    for rs in (None, 0):
        search = GridSearchCV(est, {"C": [1.0]}, cv=KFold(3, shuffle=True, random_state=rs))
        costs.append(tuning_cost(search.fit(X60, y60), X60, y60, delta=1e-5))
    assert math.isclose(costs[0].epsilon_per_record, costs[1].epsilon_per_record, rel_tol=1e-12)
    assert costs[0].epsilon_per_record < costs[0].epsilon


class _RecordingLR(DPLogisticRegression):
    """Records the first feature of every row it is fitted on."""

    seen = []

    def fit(self, X, y, sample_weight=None):
        type(self).seen.append(frozenset(np.round(np.asarray(X)[:, 0], 12)))
        return super().fit(X, y, sample_weight=sample_weight)


def test_private_search_split_does_not_depend_on_the_labels():
    runs = []
    for labels in (Y, np.where(np.arange(40) == 5, 1 - Y, Y)):  # one label changed
        _RecordingLR.seen = []
        est = _RecordingLR(epsilon=0.5, delta=1e-7, classes=[0, 1])
        PrivateSearchCV(est, {"C": [1.0]}, n_iter=2, delta=1e-5, random_state=3).fit(X, labels)
        real = {s for s in _RecordingLR.seen if s <= set(np.round(X[:, 0], 12))}
        runs.append(real)
    assert len(runs[0]) == 1 and runs[0] == runs[1]  # the same training part for both


# -- item 11: non-final steps must be row-wise -------------------------------------------------
@pytest.mark.parametrize("func", [
    lambda Z: Z - Z.mean(axis=0),            # centres the batch
    lambda Z: Z / np.abs(Z).max(),           # scales by the batch maximum
    lambda Z: Z[np.argsort(Z[:, 0])],        # reorders the rows
])
def test_batch_dependent_function_transformer_is_refused(func):
    est = make_pipeline(FunctionTransformer(func), _est())
    with pytest.raises(ValueError, match="row-wise"):
        PrivateSearchCV(est, {"dplogisticregression__C": [1.0]}, n_iter=1).fit(X, Y)


def test_row_wise_steps_are_accepted():
    est = make_pipeline(FunctionTransformer(np.tanh), Normalizer(),
                        _est(classes=[0, 1], random_state=0))
    search = PrivateSearchCV(est, {"dplogisticregression__C": [1.0]}, n_iter=1, delta=1e-5,
                             random_state=0).fit(X, Y)
    assert search.best_estimator_ is not None


@pytest.mark.parametrize("func", [
    lambda Z: Z - Z.mean(axis=0),            # centres the batch
    lambda Z: Z / np.abs(Z).max(),           # scales by the batch maximum
    lambda Z: Z[np.argsort(Z[:, 0])],        # reorders the rows
])
def test_private_pipeline_refuses_a_batch_dependent_function_transformer(func):
    """A PrivatePipeline checks its FunctionTransformer steps on the rows they transform, at
    the top level, inside a ColumnTransformer and under PrivateSearchCV: refused before the
    estimator fits, nothing charged, the step's function restored."""
    from sklearn.compose import make_column_transformer

    from skdp.pipeline import make_private_pipeline

    for step in (FunctionTransformer(func),
                 make_column_transformer((FunctionTransformer(func), [0, 1]),
                                         remainder="passthrough", sparse_threshold=0)):
        ledger = PrivacyLedger(delta=1e-5)
        pipe = make_private_pipeline(step, _est(), epsilon=1.0, ledger=ledger)
        with pytest.raises(ValueError, match="row-wise"):
            pipe.fit(X, Y)
        assert len(ledger) == 0 and not hasattr(pipe[-1], "coef_")
        leaf = step if isinstance(step, FunctionTransformer) else step.transformers[0][1]
        assert leaf.func is func
    with pytest.raises(ValueError, match="row-wise"):
        PrivateSearchCV(make_private_pipeline(FunctionTransformer(func), _est()),
                        {"dplogisticregression__C": [1.0]}, n_iter=1).fit(X, Y)


def test_private_pipeline_accepts_row_wise_function_transformers():
    """Element-wise functions, and one that maps strings, pass; the fitted steps keep the
    user's function (the check wraps it only during the fit)."""
    import pandas as pd
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder

    from skdp.pipeline import make_private_pipeline

    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": np.where(X[:, 2] > 0, "p", "n")})
    upper = np.char.upper
    pre = make_column_transformer(
        (FunctionTransformer(np.tanh), ["a", "b"]),
        (make_pipeline(FunctionTransformer(lambda d: upper(np.asarray(d, dtype=str))),
                       OneHotEncoder(categories=[["P", "N"]], handle_unknown="ignore")), ["c"]),
        sparse_threshold=0)
    pipe = make_private_pipeline(pre, _est(random_state=0), epsilon=1.0).fit(frame, Y)
    assert pipe.predict(frame).shape == (len(Y),)
    assert pipe[0].transformers_[0][1].func is np.tanh and pre.transformers[0][1].func is np.tanh


def test_fit_search_charges_the_refit_even_when_the_estimator_carries_no_ledger():
    """The refit is the model the search releases: fit_search charges it although the search's
    estimator has no ledger. The folds take their planned events, in worker processes and in
    this one, so the ledger holds exactly the search's fits (in this process they were charged
    twice before)."""
    grid = {"epsilon": [0.5, 1.0]}
    cv = KFold(2, shuffle=True, random_state=0)
    for n_jobs in (2, None):
        ledger = PrivacyLedger(delta=1e-5)
        search = GridSearchCV(_est(data_norm=1.0), grid, cv=cv, n_jobs=n_jobs)
        ledger.fit_search(search, X, Y)
        cost = tuning_cost(search, X, Y, delta=1e-5)
        assert ledger.entries[-1].event == search.best_estimator_.dp_event_
        assert len(ledger) == 2 * 2 + 1
        assert math.isclose(ledger.spent(), cost.epsilon, rel_tol=1e-9)


class _SearchTwice(GridSearchCV):
    """A search whose fit runs every fold fit twice in this process (beyond its plan)."""

    def fit(self, X, y=None, **params):
        super().fit(X, y, **params)
        return super().fit(X, y, **params)


class _SearchAfterACopy(GridSearchCV):
    """A search that sends a copy of its ledger away (pickles it) before fitting here."""

    ledger = None

    def fit(self, X, y=None, **params):
        pickle.dumps(self.ledger)
        return super().fit(X, y, **params)


def test_fit_search_in_this_process_never_makes_a_fit_beyond_the_plan_free():
    """In this process a fold fit takes a planned event once: fits beyond the plan (a search
    that fits every fold twice) are charged, and once a copy of the ledger went out (which may
    take the same planned events in a worker) every fit here is charged as usual."""
    grid = {"C": [0.5, 1.0]}
    cv = KFold(2, shuffle=True, random_state=0)
    ledger = PrivacyLedger(delta=1e-5)
    ledger.fit_search(_SearchTwice(_est(data_norm=1.0), grid, cv=cv), X, Y)
    # the plan (4, taken by the first pass), the second pass (4) and two refits
    assert len(ledger) == 4 + 4 + 2
    ledger = PrivacyLedger(delta=1e-5)
    search = _SearchAfterACopy(_est(data_norm=1.0), grid, cv=cv)
    search.ledger = ledger
    ledger.fit_search(search, X, Y)
    assert len(ledger) == 4 + 4 + 1


def test_record_of_models_that_share_a_stream_is_not_a_finite_charge():
    """Two models fitted with one integer random_state, recorded together: no composition
    bounds them, as compose says; a ledger with a ceiling refuses (nothing recorded), one
    without becomes infinite. Fresh seeds are recorded as usual."""
    a, b = (_est(random_state=7, data_norm=1.0).fit(X, Y) for _ in range(2))
    capped = PrivacyLedger(epsilon=10.0, delta=1e-5)
    with pytest.raises(BudgetExceededError, match="same random stream"):
        capped.record(a, b)
    assert len(capped) == 0
    open_ended = PrivacyLedger(delta=1e-5)
    with pytest.warns(UserWarning, match="same random stream"):
        open_ended.record([a, b])
    assert open_ended.spent() == math.inf
    fresh = [_est(data_norm=1.0).fit(X, Y) for _ in range(2)]
    capped.record(*fresh)
    assert len(capped) == 2 and math.isfinite(capped.spent())


def test_compose_takes_one_item_alone():
    """compose(ledger) and compose(model) are compose([ledger]) and compose([model])."""
    ledger = PrivacyLedger(delta=1e-5)
    with ledger:
        model = _est(data_norm=1.0).fit(X, Y)
    assert compose(ledger) == compose([ledger]) and compose(model) == compose([model])
