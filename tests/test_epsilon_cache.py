"""The per-process cache of the accountant's answers (``skdp.privacy._epsilon_cache``).

It may only ever return what the accountant computes for the same question: the same value for
equal parameters of equal types, a fresh computation for anything it cannot describe exactly,
and nothing kept from a question that raised.
"""

from dataclasses import dataclass

import numpy as np
import pytest

import skdp.privacy.accountant as acc
from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.privacy import (
    ComposedEvent,
    DPEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonGaussianEvent,
    SelfComposedEvent,
    ZCDPEvent,
    _epsilon_cache,
    calibrate_noise_multiplier,
    compute_epsilon,
)
from skdp.privacy.langevin import LangevinEvent
from skdp.privacy.tree import TreeAggregationEvent

DELTA = 1e-5
ACCOUNTANT = acc._compute_epsilon  # the computation itself, taken before any test counts it

EVENTS = [
    GaussianEvent(1.3),
    GaussianEvent(np.float64(1.3)),
    SelfComposedEvent(GaussianEvent(4.0), 100),
    SelfComposedEvent(PoissonGaussianEvent(0.02, 1.1), 500),
    ComposedEvent((ZCDPEvent(0.01), SelfComposedEvent(GaussianEvent(9.0), 20), LaplaceEvent(0.1))),
    LangevinEvent(2.0, 0.01, 30.0),
    TreeAggregationEvent(3.0, 8, 4),
]


@pytest.fixture
def counted(monkeypatch):
    """The accountant's computations, counted; the cache starts empty."""
    calls = []

    def counting(event, delta, accountant):
        calls.append(event)
        return ACCOUNTANT(event, delta, accountant)

    monkeypatch.setattr(acc, "_compute_epsilon", counting)
    compute_epsilon.cache_clear()
    yield calls
    compute_epsilon.cache_clear()


def _uncached(event, delta=DELTA, accountant="rdp"):
    return ACCOUNTANT(event, delta, accountant)


@pytest.mark.parametrize("event", EVENTS, ids=repr)
def test_a_kept_answer_is_the_computed_one(counted, event):
    first = compute_epsilon(event, DELTA)
    again = compute_epsilon(event, DELTA)
    assert first == again == _uncached(event)
    assert len(counted) == 1  # the second question was answered from the table


def test_questions_that_differ_in_any_part_are_computed_apart(counted):
    base = SelfComposedEvent(PoissonGaussianEvent(0.02, 1.1), 500)
    variants = [
        (base, DELTA, "rdp"),
        (SelfComposedEvent(PoissonGaussianEvent(0.02, 1.1), 501), DELTA, "rdp"),
        (SelfComposedEvent(PoissonGaussianEvent(0.021, 1.1), 500), DELTA, "rdp"),
        (SelfComposedEvent(PoissonGaussianEvent(0.02, 1.2), 500), DELTA, "rdp"),
        (base, 1e-6, "rdp"),
        (SelfComposedEvent(GaussianEvent(1.1), 500), DELTA, "rdp"),  # another class, same numbers
    ]
    values = [compute_epsilon(*v) for v in variants]
    assert len(counted) == len(variants)
    assert values == [_uncached(*v) for v in variants]
    assert len(set(values)) == len(values)


def test_the_accountant_is_part_of_the_question(counted):
    pytest.importorskip("dp_accounting")
    event = SelfComposedEvent(GaussianEvent(3.0), 10)
    rdp, pld = compute_epsilon(event, DELTA, "rdp"), compute_epsilon(event, DELTA, "pld")
    assert (rdp, pld) == (_uncached(event), _uncached(event, accountant="pld"))
    assert pld < rdp and len(counted) == 2


def test_a_question_it_cannot_describe_exactly_is_computed_every_time(counted):
    @dataclass  # not frozen: its parameters may change after a first question
    class Mutable(DPEvent):
        noise_multiplier: float

        def rdp(self, orders):
            return GaussianEvent(self.noise_multiplier).rdp(orders)

    event = Mutable(1.0)
    first = compute_epsilon(event, DELTA)
    event.noise_multiplier = 4.0
    assert compute_epsilon(event, DELTA) == _uncached(GaussianEvent(4.0)) < first
    inside = ComposedEvent((GaussianEvent(2.0), event))  # frozen, with a mutable part inside
    compute_epsilon(inside, DELTA)
    compute_epsilon(inside, DELTA)
    assert len(counted) == 4 and _epsilon_cache.size() == 0


def test_a_question_that_raised_is_not_kept(counted):
    with pytest.raises(ValueError, match="accountant must be one of"):
        compute_epsilon(GaussianEvent(1.0), DELTA, "moments")
    with pytest.raises(ValueError, match="accountant must be one of"):
        compute_epsilon(GaussianEvent(1.0), DELTA, "moments")
    assert len(counted) == 2 and _epsilon_cache.size() == 0


def test_the_table_is_bounded_and_can_be_turned_off(counted, monkeypatch):
    monkeypatch.setattr(_epsilon_cache, "MAX_ENTRIES", 5)
    for z in range(1, 9):
        compute_epsilon(GaussianEvent(float(z)), DELTA)
    assert _epsilon_cache.size() == 5
    compute_epsilon(GaussianEvent(1.0), DELTA)  # the oldest was dropped
    assert len(counted) == 9
    monkeypatch.setattr(_epsilon_cache, "MAX_ENTRIES", 0)
    compute_epsilon(GaussianEvent(8.0), DELTA)
    assert len(counted) == 10


def test_a_calibration_with_the_cache_is_the_calibration_without(counted, monkeypatch):
    def make(z):
        return SelfComposedEvent(PoissonGaussianEvent(0.05, z), 200)

    first = calibrate_noise_multiplier(make, 0.5, DELTA)
    n_computed = len(counted)
    second = calibrate_noise_multiplier(make, 0.5, DELTA)
    assert len(counted) == n_computed > 10  # the second calibration asked nothing new
    monkeypatch.setattr(_epsilon_cache, "MAX_ENTRIES", 0)
    assert first == second == calibrate_noise_multiplier(make, 0.5, DELTA)
    assert len(counted) > n_computed


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPRidge(epsilon=1.0),
        lambda: DPRidge(epsilon=1.0, optimizer="dp_nag_opt"),
        lambda: DPLogisticRegression(epsilon=0.5, optimizer="dp_sgld"),
        lambda: DPLinearSVC(epsilon=0.5, optimizer="dp_nsgd_tree"),
    ],
    ids=["ridge defaults", "ridge dp_nag_opt", "logistic dp_sgld", "svc dp_nsgd_tree"],
)
def test_a_repeated_fit_asks_the_accountant_nothing_new_and_is_the_same_model(
        counted, monkeypatch, make):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4)) * [1.0, 10.0, 100.0, 0.1]
    y = X @ [1.0, 0.1, 0.01, 10.0] + rng.normal(size=200)
    if not isinstance(make(), DPRidge):
        y = (y > 0).astype(int)
    first = make().set_params(random_state=1).fit(X, y)
    n_computed = len(counted)
    second = make().set_params(random_state=1).fit(X, y)
    assert n_computed > 0 and len(counted) == n_computed
    monkeypatch.setattr(_epsilon_cache, "MAX_ENTRIES", 0)
    fresh = make().set_params(random_state=1).fit(X, y)
    assert len(counted) > n_computed
    for est in (second, fresh):
        np.testing.assert_array_equal(est.coef_, first.coef_)
        assert est.epsilon_ == first.epsilon_


def test_a_ledger_total_is_asked_once_and_is_the_composition(counted):
    from skdp.ledger import _composed_epsilon

    events = (SelfComposedEvent(GaussianEvent(5.0), 40), ZCDPEvent(0.002),
              SelfComposedEvent(PoissonGaussianEvent(0.05, 1.2), 100))
    first = _composed_epsilon(events, DELTA, "rdp")
    again = _composed_epsilon(events, DELTA, "rdp")
    assert len(counted) == 1
    assert first == again == pytest.approx(_uncached(ComposedEvent(events)), rel=1e-12)
