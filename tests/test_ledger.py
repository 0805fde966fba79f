"""The privacy ledger: identity under clone/pickle, GridSearchCV accounting, ceilings, n_jobs."""

import copy
import math
import os
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, cross_validate
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import (
    BudgetExceededError,
    DPLogisticRegression,
    DPRidge,
    PrivacyLedger,
    compose,
    compute_epsilon,
)
from skdp.ledger import active_ledgers
from skdp.optimizers.dp_gdws import DPGDWS
from skdp.privacy import ComposedEvent

from ._helpers import PRIVATE_ONLY_FAILURES, unit_row_classification

GRID = {"C": [0.1, 1.0, 10.0, 100.0], "epsilon": [0.25, 0.5, 1.0]}  # 12 candidates


@pytest.fixture(scope="module")
def data():
    return unit_row_classification(300, 4)


def _est(**kw):
    kw.setdefault("delta", 1e-7)
    kw.setdefault("data_norm", 1.0)  # the public bound of the unit rows of `data`
    kw.setdefault("random_state", None)  # fresh noise per fit: one seed shared is refused
    return DPLogisticRegression(**kw)


class CountingGDWS(DPGDWS):
    """dp_gdws that counts how often its kernel path (solve) runs."""

    calls = 0

    def solve(self, *args, **kwargs):
        type(self).calls += 1
        return super().solve(*args, **kwargs)


# -- identity -----------------------------------------------------------------------------------
def test_identity_under_copy_clone_and_pickle():
    ledger = PrivacyLedger(epsilon=5.0)
    assert copy.copy(ledger) is ledger
    assert copy.deepcopy(ledger) is ledger
    est = _est(ledger=ledger)
    assert clone(est).ledger is ledger
    assert clone(clone(est)).get_params()["ledger"] is ledger
    assert pickle.loads(pickle.dumps(ledger)) is ledger  # same process: the object itself
    assert pickle.loads(pickle.dumps(est)).ledger is ledger


def test_explicit_ledger_and_context(data):
    X, y = data
    ledger = PrivacyLedger()
    est = _est(ledger=ledger).fit(X, y)
    assert len(ledger) == 1 and ledger.entries[0].event == est.dp_event_
    assert math.isclose(ledger.spent(), compute_epsilon(est.dp_event_, 1e-5), rel_tol=1e-12)
    with PrivacyLedger() as outer, PrivacyLedger() as inner:
        assert active_ledgers() == [outer, inner]
        _est(ledger=ledger).fit(X, y)  # explicit + both contexts, each once
        _est().fit(X, y)
    assert (len(ledger), len(outer), len(inner)) == (2, 2, 2)
    assert active_ledgers() == []
    _est().fit(X, y)  # outside every context: nobody charged
    assert (len(outer), len(inner)) == (2, 2)


def test_pickled_inside_context_is_charged_once(data):
    X, y = data
    with PrivacyLedger() as ledger:
        est = pickle.loads(pickle.dumps(_est()))  # carries the open ledger
        est.fit(X, y)
    assert len(ledger) == 1


# -- GridSearchCV: 12 candidates x 3 folds ------------------------------------------------------
def test_grid_search_36_fits_plus_refit(data):
    X, y = data
    cv = KFold(3)
    with PrivacyLedger(delta=1e-5) as ledger:
        search = GridSearchCV(_est(), GRID, cv=cv).fit(X, y)
    # 12 candidates x 3 folds = 36 fits, plus the refit of the best candidate on all the data
    assert len(ledger) == 37
    assert all(e.source == "DPLogisticRegression" for e in ledger.entries)

    # The same events, collected independently from the fitted fold models.
    events = []
    for params in search.cv_results_["params"]:
        res = cross_validate(_est(**params), X, y, cv=cv, return_estimator=True)
        events += [m.dp_event_ for m in res["estimator"]]
    events.append(search.best_estimator_.dp_event_)
    expected = compute_epsilon(ComposedEvent(tuple(events)), 1e-5)
    assert math.isclose(ledger.spent(), expected, rel_tol=1e-9)
    per_fit = [e.epsilon for e in ledger.entries]
    assert max(per_fit) < ledger.spent() < sum(per_fit)  # composition beats the naive sum
    assert math.isclose(compute_epsilon(compose([ledger]), 1e-5), expected, rel_tol=1e-9)

    with PrivacyLedger() as ledger_norefit:
        GridSearchCV(_est(), GRID, cv=cv, refit=False).fit(X, y)
    assert len(ledger_norefit) == 36


def test_ceiling_stops_the_search_before_the_kernel(data):
    X, y = data
    ceiling = 2.0
    with PrivacyLedger(epsilon=ceiling, delta=1e-5) as ledger:
        with pytest.raises(BudgetExceededError, match="ceiling"):
            GridSearchCV(_est(), GRID, cv=3, error_score="raise").fit(X, y)
    assert 0 < len(ledger) < 36
    assert ledger.spent() <= ceiling

    # Default error_score: refused folds score nan, and the refit is refused at the end. One
    # epsilon for every candidate: once a fit is refused, so is every later fit and the refit,
    # whichever candidate the (fresh, hence random) scores pick.
    with PrivacyLedger(epsilon=ceiling, delta=1e-5) as ledger:
        with pytest.raises(BudgetExceededError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            GridSearchCV(_est(epsilon=1.0), {"C": GRID["C"]}, cv=3).fit(X, y)
    assert 0 < len(ledger) < 12 and ledger.spent() <= ceiling

    # The refusal happens before the optimizer runs, and leaves the estimator unfitted.
    ledger = PrivacyLedger(epsilon=1.2, delta=1e-5)
    _est(epsilon=1.0, ledger=ledger).fit(X, y)
    CountingGDWS.calls = 0
    est = _est(epsilon=1.0, optimizer=CountingGDWS(), ledger=ledger)
    with pytest.raises(BudgetExceededError, match="before fitting"):
        est.fit(X, y)
    assert CountingGDWS.calls == 0 and not hasattr(est, "coef_") and len(ledger) == 1
    assert not ledger.can_afford(1.0, 1e-7) and ledger.can_afford(0.01, 1e-7)


def test_worst_case_precheck_bounds_the_exact_total(data):
    X, y = data
    ledger = PrivacyLedger(delta=1e-5)
    for eps in [0.3, 1.0, 0.5, 2.0]:
        bound = ledger._worst_case(ledger.entries, eps, 1e-7)
        _est(epsilon=eps, ledger=ledger).fit(X, y)
        assert ledger.spent() <= bound


def test_exact_check_when_the_fit_delta_is_not_below_the_ledger_delta(data):
    X, y = data
    # delta_t >= the ledger's delta: the pre-check cannot bound the fit, the exact event decides
    # after the kernel and the model is discarded.
    one = _est(epsilon=1.0, delta=1e-5).fit(X, y)
    exact = compute_epsilon(one.dp_event_, 1e-6)
    ledger = PrivacyLedger(epsilon=0.9 * exact, delta=1e-6)
    CountingGDWS.calls = 0
    est = _est(epsilon=1.0, delta=1e-5, optimizer=CountingGDWS(), ledger=ledger)
    with pytest.raises(BudgetExceededError, match="discarded"):
        est.fit(X, y)
    assert CountingGDWS.calls == 1 and not hasattr(est, "coef_") and len(ledger) == 0
    ok = PrivacyLedger(epsilon=1.1 * exact, delta=1e-6)
    _est(epsilon=1.0, delta=1e-5, ledger=ok).fit(X, y)
    assert len(ok) == 1 and ok.spent() <= ok.epsilon


def test_non_private_fit_is_refused_under_a_ceiling(data):
    X, y = data
    with PrivacyLedger(epsilon=10.0):
        with pytest.raises(BudgetExceededError, match="not private"):
            _est(epsilon=np.inf).fit(X, y)
    with PrivacyLedger() as ledger:  # no ceiling: recorded, and the total is infinite
        _est(epsilon=np.inf).fit(X, y)
    assert ledger.spent() == math.inf


def test_record_and_compose(data):
    X, y = data
    models = [_est(random_state=s).fit(X, y) for s in range(3)]
    ledger = PrivacyLedger(epsilon=100.0)
    ledger.record(models, label="offline")
    assert len(ledger) == 3 and ledger.entries[0].label == "offline"
    assert math.isclose(ledger.spent(), compute_epsilon(compose(models), 1e-5), rel_tol=1e-12)
    tight = PrivacyLedger(epsilon=0.9 * ledger.spent())
    with pytest.raises(BudgetExceededError):
        tight.record(models)
    assert len(tight) == 0  # all or nothing


def test_summary_columns_line_up_with_long_sources(data):
    """A user trial: a source longer than 22 characters ("PrivatePipeline (failed fit)")
    pushed that line's epsilon and delta to the right of the header's; the source column is now
    as wide as the longest source, and every line's columns end where the header's do."""
    import re

    from skdp.ledger import charge

    X, y = data
    ledger = PrivacyLedger()
    ledger.record(_est().fit(X, y), label="short")
    for source in ("PrivatePipeline (failed fit)", "DPLogisticRegression (failed fit)"):
        record = _est().fit(X, y).privacy_record_
        charge([ledger], record, source, record.epsilon, record.delta, label="long")
    lines = ledger.summary().splitlines()
    header, rows = lines[1], lines[2:2 + len(ledger)]

    def ends(line, source):  # where the epsilon and delta fields end (right-aligned numbers)
        match = re.compile(r" +(\S+) +(\S+)").match(line, line.index(source) + len(source))
        return match.end(1), match.end(2)

    columns = ends(header, "source")
    assert columns == (header.index("epsilon") + len("epsilon"),
                       header.index("delta") + len("delta"))
    for row, entry in zip(rows, ledger.entries):
        assert ends(row, entry.source) == columns, ledger.summary()


def test_pld_accountant_matches_dp_accounting(data):
    pld = pytest.importorskip("dp_accounting.pld")
    X, y = data
    ledger = PrivacyLedger(accountant="pld", delta=1e-5)
    # public data_norm: the private "auto" bound has no PLD form in dp-accounting
    models = [_est(epsilon=e, ledger=ledger, data_norm=1.0).fit(X, y) for e in (0.5, 1.0)]
    acc = pld.PLDAccountant()
    for m in models:
        acc.compose(m.dp_event_.to_dp_accounting())
    assert math.isclose(ledger.spent(), acc.get_epsilon(1e-5), rel_tol=1e-6)


def test_verbose_levels(data, capsys):
    X, y = data
    ledger = PrivacyLedger(epsilon=10.0)
    _est(ledger=ledger).fit(X, y)
    assert capsys.readouterr().out == ""  # silent by default
    _est(ledger=ledger, verbose=2).fit(X, y)
    out = capsys.readouterr().out
    assert "epsilon spent" in out and "2 charges" in out and "relation" in out


# -- worker processes ---------------------------------------------------------------------------
def test_n_jobs_2_context_and_ceiling(data):
    X, y = data
    grid = {"C": [0.1, 1.0, 10.0, 100.0]}
    with PrivacyLedger() as serial:
        GridSearchCV(_est(), grid, cv=3).fit(X, y)
    with PrivacyLedger() as parallel:
        GridSearchCV(_est(), grid, cv=3, n_jobs=2).fit(X, y)
    assert len(parallel) == len(serial) == 13
    assert {e.pid for e in parallel.entries} - {os.getpid()}  # charged in the workers
    assert math.isclose(parallel.spent(), serial.spent(), rel_tol=1e-9)

    # Explicit ledger, cross_val_score in two workers, a ceiling of about two of three folds.
    ledger = PrivacyLedger(epsilon=1.6, delta=1e-5)
    with pytest.raises(BudgetExceededError):
        cross_val_score(_est(epsilon=1.0, ledger=ledger), X, y, cv=3, n_jobs=2,
                        error_score="raise")
    assert 1 <= len(ledger) <= 2 and ledger.spent() <= 1.6


# -- scikit-learn's checks with a ledger set ---------------------------------------------------
# In the slow run (CI), as the other optimizers' checks (test_sklearn_checks.py): the default
# run keeps the ledger's own tests above and every estimator's checks without a ledger.
@pytest.mark.slow
@parametrize_with_checks(
    [
        DPLogisticRegression(random_state=0, ledger=PrivacyLedger()),
        DPRidge(random_state=0, ledger=PrivacyLedger()),
    ],
    expected_failed_checks=lambda est: PRIVATE_ONLY_FAILURES,
)
def test_sklearn_checks_with_a_ledger(estimator, check):
    check(estimator)
