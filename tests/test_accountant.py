"""The built-in accountant against dp-accounting, and calibration that never overshoots."""

import math

import numpy as np
import pytest

from skdp.privacy import (
    DEFAULT_ORDERS,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonGaussianEvent,
    PoissonLaplaceEvent,
    SelfComposedEvent,
    ZCDPEvent,
    calibrate_noise_multiplier,
    compute_epsilon,
    epsilon_from_rdp,
    exact_gaussian_epsilon,
    rdp_epsilon_and_order,
    rdp_poisson_subsampled_gaussian,
    zcdp_rho_for_budget,
)

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting import rdp as dp_rdp  # noqa: E402

GRID = [
    (q, sigma, steps, delta)
    for q in (1e-3, 0.01, 0.1, 0.5, 1.0)
    for sigma in (0.6, 1.0, 2.5, 8.0)
    for steps in (1, 100, 5000)
    for delta in (1e-5, 1e-8)
]


def _dp_accounting_epsilon(event, delta, orders=DEFAULT_ORDERS):
    acc = dp_rdp.RdpAccountant(list(orders))
    acc.compose(event.to_dp_accounting())
    return acc.get_epsilon(delta), acc


@pytest.mark.parametrize("q,sigma,steps,delta", GRID)
def test_rdp_matches_dp_accounting(q, sigma, steps, delta):
    event = SelfComposedEvent(PoissonGaussianEvent(q, sigma), steps)
    eps_ref, acc = _dp_accounting_epsilon(event, delta)
    # the RDP curve itself, order by order
    mine = event.rdp(DEFAULT_ORDERS)
    ref = acc._rdp
    finite = np.isfinite(ref)
    assert np.array_equal(np.isfinite(mine), finite)
    # (atol: RDP values below 1e-12 are log(1 + x) at rounding level in either library)
    np.testing.assert_allclose(mine[finite], ref[finite], rtol=1e-6, atol=1e-12)
    # the converted epsilon on the same grid of orders
    eps_grid, _ = epsilon_from_rdp(DEFAULT_ORDERS, mine, delta)
    assert eps_grid == pytest.approx(eps_ref, rel=1e-6)
    # the reported epsilon refines between orders: never above the grid value (its validity at
    # the order it picks is checked in the next test)
    assert compute_epsilon(event, delta) <= eps_grid * (1 + 1e-12)


def test_refined_epsilon_is_a_valid_conversion_at_some_order():
    event = SelfComposedEvent(PoissonGaussianEvent(0.01, 1.1), 1000)
    eps = compute_epsilon(event, 1e-5)
    fine = np.linspace(1.5, 40, 20000)
    best, _ = epsilon_from_rdp(fine, event.rdp(fine), 1e-5)
    assert eps == pytest.approx(best, rel=1e-4)


def test_gaussian_rdp_closed_form_and_zcdp():
    # T Gaussian steps with multiplier z are rho = T / (2 z^2) zCDP: same epsilon both ways.
    z, T, delta = 3.0, 50, 1e-6
    e1 = compute_epsilon(SelfComposedEvent(GaussianEvent(z), T), delta)
    e2 = compute_epsilon(ZCDPEvent(T / (2 * z * z)), delta)
    assert e1 == pytest.approx(e2, rel=1e-9)
    # the tight conversion beats Bun & Steinke's rho + 2 sqrt(rho log 1/delta)
    rho = T / (2 * z * z)
    assert e1 < rho + 2 * math.sqrt(rho * math.log(1 / delta))


def test_unequal_gaussian_steps_compose_like_their_zcdp_sum():
    zs = [1.0, 2.0, 4.0, 8.0]
    event = ComposedEvent(tuple(GaussianEvent(z) for z in zs))
    rho = sum(1 / (2 * z * z) for z in zs)
    assert compute_epsilon(event, 1e-5) == pytest.approx(compute_epsilon(ZCDPEvent(rho), 1e-5))
    ref, _ = _dp_accounting_epsilon(event, 1e-5)
    assert compute_epsilon(event, 1e-5) <= ref * (1 + 1e-9)


def test_zcdp_budget_formula_is_within_target():
    for eps, delta in [(0.1, 1e-5), (1.0, 1e-6), (8.0, 1e-9)]:
        rho = zcdp_rho_for_budget(eps, delta)
        assert compute_epsilon(ZCDPEvent(rho), delta) <= eps


def test_laplace_is_pure_and_composes_linearly():
    event = SelfComposedEvent(LaplaceEvent(10.0), 7)
    assert compute_epsilon(event, 0.0) == pytest.approx(0.7, rel=1e-12)
    # with delta > 0 the RDP route may do better, never worse, and agrees with dp-accounting
    with_delta = compute_epsilon(event, 1e-5)
    assert with_delta <= 0.7
    ref, _ = _dp_accounting_epsilon(event, 1e-5)
    assert with_delta == pytest.approx(ref, rel=1e-4)
    sub = PoissonLaplaceEvent(0.1, 2.0)
    assert sub.pure_epsilon() == pytest.approx(math.log1p(0.1 * math.expm1(0.5)))


# The intermediate targets (about 1 s each with sampling) run with ``pytest -m slow``; the
# default run keeps both ends and the middle of the range for every sampling regime.
@pytest.mark.parametrize(
    "target", [0.05, pytest.param(0.3, marks=pytest.mark.slow), 1.0,
               pytest.param(4.0, marks=pytest.mark.slow), 20.0],
)
@pytest.mark.parametrize("q,steps", [(1.0, 1), (1.0, 200), (0.02, 1000), (0.3, 50)])
def test_calibration_never_overshoots(target, q, steps):
    def make(z):
        return SelfComposedEvent(PoissonGaussianEvent(q, z), steps)

    z, eps = calibrate_noise_multiplier(make, target, 1e-5)
    assert eps <= target
    assert compute_epsilon(make(z), 1e-5) <= target
    # and it is the smallest such noise, to a relative 1e-5
    assert compute_epsilon(make(z * (1 - 1e-4)), 1e-5) > target * (1 - 1e-3)
    # the independent library, at the Rényi order skdp's accountant used, agrees that the
    # target is met (the refinement may pick an order outside the default grid)
    _, order = rdp_epsilon_and_order(make(z), 1e-5)
    ref, _ = _dp_accounting_epsilon(make(z), 1e-5, [order])
    assert ref <= target * (1 + 1e-9)


def test_pld_accountant_is_available_and_tighter():
    event = SelfComposedEvent(PoissonGaussianEvent(0.01, 1.0), 1000)
    pld = compute_epsilon(event, 1e-5, accountant="pld")
    rdp = compute_epsilon(event, 1e-5)
    assert 0 < pld < rdp


def test_pld_answers_the_smaller_valid_bound_and_skips_huge_losses(monkeypatch):
    """``accountant="pld"`` answers min(PLD, RDP), both valid bounds. At delta 1e-30 PLD's
    truncated tail alone exceeds delta and it answers inf: before, the calibration then raised
    the noise a million-fold (epsilon_ 1e-4 asked 1, accuracy 0.56 against 0.90). Where RDP's
    epsilon exceeds PLD_MAX_RDP_EPSILON PLD is not consulted (its discretised loss took
    gigabytes and minutes at epsilon 100 to 1000, a MemoryError under a 3 GB cap). (Subsampled
    events: a composition of full-batch Gaussians takes the exact curve, not PLD.)"""
    from skdp.privacy import accountant as acc

    compute_epsilon.cache_clear()
    tiny = SelfComposedEvent(PoissonGaussianEvent(0.5, 10.0), 2)
    assert acc._pld_epsilon(tiny, 1e-30) == math.inf  # dp-accounting's own answer
    assert compute_epsilon(tiny, 1e-30, "pld") == compute_epsilon(tiny, 1e-30, "rdp") < 2.0

    def make(z):
        return SelfComposedEvent(PoissonGaussianEvent(0.5, z), 4)

    z, eps = calibrate_noise_multiplier(make, 1.0, 1e-30, accountant="pld")
    z_rdp, _ = calibrate_noise_multiplier(make, 1.0, 1e-30)
    assert z <= z_rdp and eps <= 1.0

    def refused(event, delta):
        raise AssertionError("PLD consulted above PLD_MAX_RDP_EPSILON")

    monkeypatch.setattr(acc, "_pld_epsilon", refused)
    compute_epsilon.cache_clear()
    huge = SelfComposedEvent(PoissonGaussianEvent(0.9, 0.3), 100)
    assert compute_epsilon(huge, 1e-5, "rdp") > acc.PLD_MAX_RDP_EPSILON
    assert compute_epsilon(huge, 1e-5, "pld") == compute_epsilon(huge, 1e-5, "rdp")
    compute_epsilon.cache_clear()


GAUSSIAN_COMPOSITIONS = [  # (noise multipliers and counts of full-batch releases, delta)
    (((40.0, 100),), 1e-5),
    (((5.0, 100),), 1e-5),
    (((1.0, 1),), 1e-5),
    (((100.0, 1000),), 1e-8),
    (((2.0, 3), (7.0, 20)), 1e-6),
    (((0.8, 1), (30.0, 250), (3.0, 1)), 1e-5),
]


def _gaussian_composition(parts):
    return ComposedEvent(tuple(SelfComposedEvent(GaussianEvent(z), k) for z, k in parts))


def _pld_bounds(parts, delta):
    """dp-accounting's PLD of the same releases, built release by release: its optimistic and
    pessimistic estimates of epsilon, which bracket the true curve."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    answers = []
    for pessimistic in (False, True):
        total = None
        for z, k in parts:
            one = pld.from_gaussian_mechanism(z, pessimistic_estimate=pessimistic,
                                              value_discretization_interval=1e-4)
            one = one.self_compose(k)
            total = one if total is None else total.compose(one)
        answers.append(total.get_epsilon_for_delta(delta))
    return answers


@pytest.mark.parametrize("parts, delta", GAUSSIAN_COMPOSITIONS)
def test_pld_of_full_batch_gaussians_is_the_exact_curve(parts, delta):
    """A composition of full-batch Gaussian releases is one Gaussian mechanism of
    mu = sqrt(sum k / z^2); accountant="pld" answers its exact curve, which lies between
    dp-accounting's optimistic and pessimistic PLD estimates (an independent computation that
    composes the releases one by one) and below RDP's conversion."""
    event = _gaussian_composition(parts)
    mu = math.sqrt(sum(k / z ** 2 for z, k in parts))
    assert math.isclose(event.gaussian_mu(), mu, rel_tol=1e-12)
    compute_epsilon.cache_clear()
    exact = compute_epsilon(event, delta, "pld")
    assert exact == exact_gaussian_epsilon(mu, delta)
    optimistic, pessimistic = _pld_bounds(parts, delta)
    assert optimistic * (1 - 1e-6) <= exact <= pessimistic * (1 + 1e-9)
    assert exact < compute_epsilon(event, delta, "rdp")


def test_only_full_batch_gaussian_events_take_the_exact_curve():
    from skdp.privacy.tree import TreeAggregationEvent

    assert SelfComposedEvent(PoissonGaussianEvent(0.1, 2.0), 10).gaussian_mu() is None
    assert ComposedEvent((GaussianEvent(3.0), LaplaceEvent(1.0))).gaussian_mu() is None
    assert ComposedEvent((GaussianEvent(3.0), ZCDPEvent(0.1))).gaussian_mu() is None
    tree = TreeAggregationEvent(noise_multiplier=20.0, steps_per_epoch=4, epochs=3)
    assert math.isclose(tree.gaussian_mu(), 1.0 / tree.effective_noise_multiplier)
    # the tree's PLD form (dp-accounting's Gaussian of its effective noise) gives the same
    from skdp.privacy import accountant as acc
    assert math.isclose(compute_epsilon(tree, 1e-5, "pld"), acc._pld_epsilon(tree, 1e-5),
                        rel_tol=1e-6)


def test_exact_gaussian_calibration_meets_the_target_tightly():
    def make(z):
        return SelfComposedEvent(GaussianEvent(z), 100)

    for target in (0.3, 1.0, 10.0):
        z, eps = calibrate_noise_multiplier(make, target, 1e-5, accountant="pld")
        assert eps <= target and eps > target * (1 - 1e-5)
        assert compute_epsilon(make(z * (1 - 1e-4)), 1e-5, "pld") > target
        z_rdp, _ = calibrate_noise_multiplier(make, target, 1e-5)
        assert 0.85 * z_rdp < z < z_rdp


def test_subsampled_rdp_is_monotone_in_q_and_sigma():
    o = DEFAULT_ORDERS
    a = rdp_poisson_subsampled_gaussian(0.01, 1.0, o)
    b = rdp_poisson_subsampled_gaussian(0.02, 1.0, o)
    c = rdp_poisson_subsampled_gaussian(0.01, 1.5, o)
    fin = np.isfinite(b)
    assert np.all(a[fin] <= b[fin]) and np.all(c[fin] <= a[fin])


@pytest.mark.slow  # ~17 s of PLD calibration (500 subsampled steps): run with -m slow
def test_pld_calibration_is_bracketed_and_never_overshoots():
    def make(z):
        return SelfComposedEvent(PoissonGaussianEvent(0.01, z), 500)

    z_pld, eps_pld = calibrate_noise_multiplier(make, 1.0, 1e-5, accountant="pld")
    z_rdp, _ = calibrate_noise_multiplier(make, 1.0, 1e-5)
    assert eps_pld <= 1.0
    assert z_pld <= z_rdp  # the tighter accountant needs no more noise
    assert compute_epsilon(make(z_pld * 0.99), 1e-5, accountant="pld") > 1.0 * 0.99
