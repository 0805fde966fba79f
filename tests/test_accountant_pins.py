"""Accountant pins (issue 7): every optimizer's reported epsilon against an independent computation.

For each available optimizer and a grid of settings (its privacy regimes x target epsilon x
accountant) the epsilon of the fit's record must

* never exceed the target (calibration never overshoots), and the estimator must report it;
* equal an independent computation: dp-accounting's RDP accountant (or PLD) on
  ``record.event.to_dp_accounting()``, a closed form for pure-DP (Laplace) events, or the
  spec's closed form for the Langevin event;
* describe the noise actually drawn: the recorded noise of each release, divided by the scale
  the event charges for (``noise_multiplier * sensitivity`` of each per-release Gaussian /
  Laplace mechanism; for the Langevin and tree events, their noise multiplier times the
  sensitivity derived from the problem's public constants), must be standard (Opacus
  ``test_noise_level``), for the logistic, squared and squared-hinge losses.

And the generic accountant: ``compute_epsilon`` against dp-accounting's ``RdpAccountant`` over a
grid of (q, sigma, steps, delta), and calibration that never overshoots and is not slack.
"""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from skdp import DPLogisticRegression
from skdp.audit import memoized_accounting
from skdp.audit._variants import optimizer_variants
from skdp.losses import get_loss
from skdp.optimizers import Budget, Problem, available_optimizers, get_optimizer_class
from skdp.privacy import (
    DEFAULT_ORDERS,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonGaussianEvent,
    PoissonLaplaceEvent,
    SelfComposedEvent,
    calibrate_noise_multiplier,
    compute_epsilon,
    rdp_epsilon_and_order,
)
from skdp.privacy.langevin import LangevinEvent
from skdp.privacy.tree import TreeAggregationEvent

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting import pld as dp_pld  # noqa: E402
from dp_accounting import rdp as dp_rdp  # noqa: E402

OPTIMIZERS = available_optimizers()
N = 40
DELTA = 1e-5


@pytest.fixture(scope="module", autouse=True)
def _fast_accounting():
    for name in OPTIMIZERS:
        get_optimizer_class(name)
    with memoized_accounting():
        yield


class UnsafePLD(Exception):
    """A PLD evaluation dp-accounting cannot do in bounded memory."""


# dp-accounting's PLD of a Gaussian with a tiny noise multiplier discretises a huge loss range:
# at z = 1e-3 it asks for terabytes (MemoryError here; on a machine with more memory it may
# succeed and swap). Refuse such calls before they allocate, so the test fails cleanly.
PLD_MIN_Z = 0.05


def _min_noise_multiplier(event):
    zs = [getattr(event, "noise_multiplier", math.inf)]
    for child in [getattr(event, "event", None), *getattr(event, "events", ())]:
        if child is not None:
            zs.append(_min_noise_multiplier(child))
    return min(zs)


@pytest.fixture(autouse=True)
def _guard_pld(monkeypatch):
    import skdp.privacy.accountant as acc

    original = acc._pld_epsilon

    def guarded(event, delta):
        z = _min_noise_multiplier(event)
        if z < PLD_MIN_Z:
            raise UnsafePLD(f"PLD evaluated at noise multiplier {z:.3g} < {PLD_MIN_Z}")
        return original(event, delta)

    monkeypatch.setattr(acc, "_pld_epsilon", guarded)
    from skdp.optimizers.dp_gdws import gaussian_multiplier

    gaussian_multiplier.cache_clear()  # every pinned fit calibrates under the guard
    acc.compute_epsilon.cache_clear()


def _problem(max_sample_weight=None, loss="logistic"):
    """The pinned problem; with ``max_sample_weight``, example weights uniform in [0, it].
    ``loss``: logistic or squared hinge (labels +-1), or squared (targets in [-1, 1]), each at
    its default derivative clip."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = np.hstack([X, np.ones((N, 1))])
    u = rng.random((N, 1))
    Y = 2.0 * u - 1.0 if loss == "squared" else np.where(u < 0.5, -1.0, 1.0)
    loss = get_loss(loss)
    weights = {}
    if max_sample_weight is not None:
        weights = {"sample_weight": rng.uniform(0.0, max_sample_weight, N),
                   "max_sample_weight": max_sample_weight}
    return Problem(X=np.ascontiguousarray(X), Y=Y, loss=loss, lam=1.0 / N,
                   row_norm_bound=math.sqrt(2.0), clip=loss.default_clip(1, 1.0),
                   fit_intercept=True, **weights)


# -- independent computations ---------------------------------------------------------------------
def _rdp_reference(dp_event, delta, extra_orders=()):
    orders = sorted(set(map(float, DEFAULT_ORDERS)) | set(map(float, extra_orders)))
    acc = dp_rdp.RdpAccountant(orders)
    acc.compose(dp_event)
    return acc.get_epsilon(delta)


def _pure_closed_form(event):
    """Pure epsilon by basic composition, written from the definitions (None if not pure)."""
    if isinstance(event, LaplaceEvent):
        return 1.0 / event.noise_multiplier
    if isinstance(event, PoissonLaplaceEvent):
        # amplification by Poisson sampling of a pure eps0 mechanism: log(1 + q (e^eps0 - 1))
        return math.log(1.0 + event.sampling_rate * (math.exp(1.0 / event.noise_multiplier) - 1.0))
    if isinstance(event, SelfComposedEvent):
        inner = _pure_closed_form(event.event)
        return None if inner is None else event.count * inner
    if isinstance(event, ComposedEvent):
        parts = [_pure_closed_form(e) for e in event.events]
        return None if any(p is None for p in parts) else sum(parts)
    return None


def _zcdp_closed_form_epsilon(rho, delta):
    """epsilon of rho * alpha RDP with the tight conversion, minimised over all real alpha > 1."""
    def f(a):
        return rho * a + math.log1p(-1.0 / a) - (math.log(delta) + math.log(a)) / (a - 1.0)

    res = optimize.minimize_scalar(f, bounds=(1.0 + 1e-9, 1e6), method="bounded",
                                   options={"xatol": 1e-10})
    return max(0.0, float(res.fun))


def _langevin_rho(event):
    """The spec's Langevin bound (Chourasia et al. 2021) with unit sensitivity, sigma = z."""
    z, lam, T = event.noise_multiplier, event.lam, event.total_time
    rho_l = (1.0 - math.exp(-lam * T / 2.0)) / (lam * z * z)
    rho_c = T / (4.0 * z * z)
    return min(rho_l, rho_c) if event.composition else rho_l


def independent_epsilon(record):
    """(epsilon, how) from a computation that does not use skdp's accountant."""
    event, delta = record.event, record.delta
    if delta == 0:
        pure = _pure_closed_form(event)
        if pure is None:
            pytest.skip(f"no closed form for the pure event {type(event).__name__}")
        return pure, "closed form (pure)"
    if type(event).__name__ == "LangevinEvent":
        rho = _langevin_rho(event)
        ref = _rdp_reference(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(2.0 * rho)), delta,
                             [rdp_epsilon_and_order(event, delta)[1]])
        return ref, "Langevin closed form -> dp-accounting RDP"
    try:
        dp_event = event.to_dp_accounting()
    except NotImplementedError as exc:
        pytest.skip(f"no independent computation for {type(event).__name__}: {exc}")
    if record.accountant == "pld":
        acc = dp_pld.PLDAccountant()
        acc.compose(dp_event)
        return float(acc.get_epsilon(delta)), "dp-accounting PLD"
    # skdp refines the best order between grid points: give dp-accounting that order too
    order = rdp_epsilon_and_order(event, delta)[1]
    return _rdp_reference(dp_event, delta, [order]), "dp-accounting RDP"


# -- per-optimizer pins ---------------------------------------------------------------------------
def _pin_cases():
    for name in OPTIMIZERS:
        for label, params in optimizer_variants(name):
            for eps in (0.5, 2.0):
                yield pytest.param(name, params, eps, "rdp", id=f"{name}-{label}-eps{eps}")
        # the PLD accountant on the default regime
        yield pytest.param(name, {}, 1.0, "pld", id=f"{name}-default-eps1.0-pld",
                           marks=pytest.mark.slow)  # seconds each: the slow run (CI)
        # a small epsilon: the best Renyi order lies beyond the default grid (issue 13, item 10)
        yield pytest.param(name, {}, 1e-3, "rdp", id=f"{name}-default-eps0.001")


@pytest.mark.parametrize("name,params,target,accountant", list(_pin_cases()))
def test_reported_epsilon_is_pinned(name, params, target, accountant):
    opt = get_optimizer_class(name)(**params)
    try:
        res = opt.solve(_problem(), Budget(target, DELTA, accountant), np.random.default_rng(0),
                        record_trace=True)
    except ValueError as exc:
        pytest.skip(f"not supported: {exc}")
    except UnsafePLD as exc:
        pytest.fail(
            f"{name}: calibrating with accountant='pld' evaluates dp-accounting's PLD where it needs "
            f"tens of GiB ({exc}); skdp.privacy.calibrate_noise_multiplier starts its bracket at "
            "z = 1e-3 (bug in the shared accountant, reported)"
        )
    rec = res.mechanism_record
    assert 0 < rec.epsilon <= target, f"calibration overshot: {rec.epsilon} > {target}"
    assert rec.delta <= DELTA
    ref, how = independent_epsilon(rec)
    assert rec.epsilon == pytest.approx(ref, rel=1e-6), (
        f"{name}: reported {rec.epsilon!r}, {how} gives {ref!r} for {rec.event!r}"
    )


def _flatten(event):
    """Per-release (kind, noise multiplier) of a composition of single mechanisms, else None."""
    if isinstance(event, (GaussianEvent, PoissonGaussianEvent)):
        return [("gaussian", event.noise_multiplier)]
    if isinstance(event, (LaplaceEvent, PoissonLaplaceEvent)):
        return [("laplace", event.noise_multiplier)]
    if isinstance(event, SelfComposedEvent):
        inner = _flatten(event.event)
        return None if inner is None else inner * event.count
    if isinstance(event, ComposedEvent):
        out = []
        for e in event.events:
            part = _flatten(e)
            if part is None:
                return None
            out += part
        return out
    return None


def _trailing_zeros(t):
    return (t & -t).bit_length() - 1


def _release_scales(rec, problem, opt, n_releases):
    """(kind, per-release noise scale) that the record's event charges for, or None.

    Compositions of per-release mechanisms give ``noise_multiplier_t * sensitivity``. The
    Langevin event is ``z = sigma / S`` with the zero-out drift sensitivity ``S = G / n``
    (G from the problem); a step adds ``N(0, 2 eta sigma^2)`` to the parameters, i.e. std
    ``n sigma sqrt(2 / eta) = z G sqrt(2 / eta)`` on the released gradient sum, with the public
    step ``eta = 1 / (2 beta)`` (constant schedule), and ``T = K eta``. The tree event is
    ``z = sigma / Delta`` per node, ``Delta = G alpha / b`` (b the batch size: the record's,
    checked against the event's steps per epoch).
    """
    event = rec.event
    G = problem.gradient_bound
    if isinstance(event, LangevinEvent):
        eta = 1.0 / (2.0 * problem.smoothness)
        assert event.total_time == pytest.approx(n_releases * eta, rel=1e-12), (
            "the event's Langevin time does not match the steps the kernel made"
        )
        return "gaussian", np.full(n_releases, event.noise_multiplier * G * math.sqrt(2.0 / eta))
    if isinstance(event, TreeAggregationEvent):
        b, M, E = rec.details["batch_size"], event.steps_per_epoch, event.epochs
        assert -(-problem.n_samples // b) == M
        if event.tree == "restart":  # nodes drawn: one per step, or every completing node
            per_epoch = sum(_trailing_zeros(t) + 1 for t in range(1, M + 1)) if opt.honaker else M
            assert n_releases == E * per_epoch, (n_releases, E, per_epoch)
        return "gaussian", np.full(n_releases, event.noise_multiplier * G * event.alpha / b)
    per_release = _flatten(event)
    if per_release is None:
        return None
    kinds = {k for k, _ in per_release}
    assert kinds == {rec.mechanism}
    assert len(per_release) == n_releases, (
        f"the event charges {len(per_release)} releases, the kernel made {n_releases}"
    )
    return rec.mechanism, np.array([z for _, z in per_release]) * rec.sensitivity


def _noise_pin_cases():
    for name in OPTIMIZERS:
        for label, params in optimizer_variants(name):
            yield pytest.param(name, params, None, "logistic", id=f"{name}-{label}-unweighted")
            yield pytest.param(name, params, 3.0, "logistic", id=f"{name}-{label}-weights<=3")
            for loss in ("squared", "squared_hinge"):
                yield pytest.param(name, params, None, loss, id=f"{name}-{label}-{loss}")


@pytest.mark.parametrize("name,params,max_sample_weight,loss", list(_noise_pin_cases()))
def test_event_describes_the_noise_drawn(name, params, max_sample_weight, loss):
    """The accountant is charged for the noise the kernel really adds: each release's recorded
    noise / the scale its event charges for is standard normal (or standard Laplace). With
    example weights the sensitivity is max_sample_weight times larger, and so must the noise be."""
    opt = get_optimizer_class(name)(**params)
    problem = _problem(max_sample_weight, loss)
    try:
        res = opt.solve(problem, Budget(1.0, DELTA), np.random.default_rng(1), record_trace=True)
    except ValueError as exc:
        pytest.skip(f"not supported: {exc}")
    rec = res.mechanism_record
    noise = res.trace[:, 1] - res.trace[:, 0]
    described = _release_scales(rec, problem, opt, noise.shape[0])
    if described is None:
        pytest.skip(f"{type(rec.event).__name__} does not describe per-release noise")
    kind, scale = described
    u = noise / scale[:, None]
    m = u.size
    if kind == "gaussian":
        # sum u^2 ~ chi2(m): outside its central 1 - 2e-7 mass the scale is wrong (exact for
        # few releases, where 5 sd of the normal approximation would miss a 2x error)
        lo, hi = stats.chi2.ppf(1e-7, m) / m, stats.chi2.isf(1e-7, m) / m
        assert lo < np.mean(u * u) < hi, (np.mean(u * u), lo, hi)
    else:
        # Laplace with scale b: E |u| = 1, var |u| = 1
        assert abs(np.mean(np.abs(u)) - 1.0) < 5.0 / math.sqrt(m), np.mean(np.abs(u))
    assert abs(np.mean(u)) < 5.0 * (math.sqrt(2.0) if kind == "laplace" else 1.0) / math.sqrt(m)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_estimator_reports_the_record(name):
    X = np.random.default_rng(0).normal(size=(N, 3))
    y = np.arange(N) % 2
    est = DPLogisticRegression(epsilon=0.7, delta=DELTA, optimizer=name, random_state=0).fit(X, y)
    rec = est.privacy_record_
    assert est.epsilon_ == rec.epsilon <= 0.7
    assert est.delta_ == rec.delta <= DELTA
    assert est.dp_event_ == rec.event
    ref, _ = independent_epsilon(rec)
    assert est.epsilon_ == pytest.approx(ref, rel=1e-6)


# -- the generic accountant -----------------------------------------------------------------------
GRID = [
    (q, sigma, steps, delta)
    for q in (0.004, 0.05, 1.0)
    for sigma in (0.7, 1.5, 5.0)
    for steps in (10, 2000)
    for delta in (1e-6,)
] + [(0.02, 1.1, 300, 1e-9), (0.3, 3.0, 50, 1e-3)] + [
    # small epsilons (~1e-3): the best order is beyond the default grid's largest, 1024
    (1.0, 3000.0, 1, 1e-5), (0.01, 400.0, 1000, 1e-5), (0.05, 2000.0, 200, 1e-8),
]


@pytest.mark.parametrize("q,sigma,steps,delta", GRID)
def test_compute_epsilon_matches_rdp_accountant(q, sigma, steps, delta):
    inner = GaussianEvent(sigma) if q == 1.0 else PoissonGaussianEvent(q, sigma)
    event = SelfComposedEvent(inner, steps)
    eps, order = rdp_epsilon_and_order(event, delta)
    assert compute_epsilon(event, delta) == eps
    # on the same orders (plus the refined one) dp-accounting gives the same epsilon
    ref = _rdp_reference(event.to_dp_accounting(), delta, [order])
    assert eps == pytest.approx(ref, rel=1e-6)
    # and the refinement only ever lowers dp-accounting's grid value
    assert eps <= _rdp_reference(event.to_dp_accounting(), delta) * (1 + 1e-9)


@pytest.mark.parametrize("target,q,steps", [
    (0.3, 1.0, 50), (1.0, 1.0, 50), (4.0, 1.0, 50), (0.3, 0.01, 1000), (4.0, 0.2, 100),
    (1e-3, 1.0, 50), (1e-3, 0.01, 1000),
])
def test_calibration_never_overshoots_and_is_tight(target, q, steps):
    def make(z):
        inner = GaussianEvent(z) if q == 1.0 else PoissonGaussianEvent(q, z)
        return SelfComposedEvent(inner, steps)

    z, eps = calibrate_noise_multiplier(make, target, DELTA)
    assert eps <= target
    # independently: dp-accounting at the calibrated z is within the target (up to 1e-6)
    order = rdp_epsilon_and_order(make(z), DELTA)[1]
    assert _rdp_reference(make(z).to_dp_accounting(), DELTA, [order]) <= target * (1 + 1e-6)
    # and not wastefully: 0.1% less noise would overshoot
    assert compute_epsilon(make(z * 0.999), DELTA) > target
