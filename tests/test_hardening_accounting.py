"""Issue 13, items 2, 8, 10 and 11 (a)-(c): claims the library must not make, and bounds that
must hold in floating point.

* item 2: dp_sgld's ``accountant="ryffel2022"`` reported epsilon 1 for a mechanism whose true
  epsilon is above 40 (shown exactly below); the option is refused now;
* item 8: the Langevin bound for one-vs-rest logistic needs the clip to be inactive, which
  depends on the number of outputs K;
* item 10: small epsilons (1e-3 at delta 1e-5) are reachable, and an unreachable one is named;
* item 11 (a)-(c): sparse clipping never trusts scipy's cached format flags, every clip holds
  for the exact norm of the stored floats, and a result holding pre-noise values is not private.
"""

from fractions import Fraction
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import log_ndtr

from skdp import DPLogisticRegression, DPRidge, DPSGLD
from skdp.linear_model._base import clip_rows
from skdp.losses import clip_vector, get_loss, loss_derivative
from skdp.optimizers import Budget, Problem, available_optimizers, get_optimizer_class
from skdp.optimizers._scd_kernels import clip_update
from skdp.privacy import (
    GaussianEvent,
    NonPrivateEvent,
    PoissonGaussianEvent,
    SelfComposedEvent,
    calibrate_noise_multiplier,
    compute_epsilon,
)
from skdp.privacy.langevin import LangevinEvent

DELTA = 1e-5


# -- item 2: the ryffel2022 mini-batch claim ------------------------------------------------------
# The instance: n = 1000 rows, row 0 is (x = 1, y = -1), all others are 0; the neighbour
# zeroes row 0 (the null record). DPRidge(alpha=1e4) gives lam = alpha / n = 10; the squared
# loss's derivative w + 1 is clipped to tau = 0.01, so row 0's gradient is exactly 0.01 while
# w > -0.99 (G = tau R = 0.01, R = data_norm = 1, no intercept); beta = R^2 + lam = 11 and the
# default step is eta = 1 / (2 beta); batches of m = 10 rows, 100 steps per epoch, 50 epochs.
RY_N, RY_LAM, RY_TAU, RY_M, RY_EPOCHS = 1000, 10.0, 0.01, 10, 50
RY_ETA = 1.0 / (2.0 * (1.0 + RY_LAM))
RY_STEPS = RY_EPOCHS * (RY_N // RY_M)


def _ryffel_data():
    X = np.zeros((RY_N, 1))
    y = np.zeros(RY_N)
    X[0, 0], y[0] = 1.0, -1.0
    return X, y


def _ridge(optimizer):
    return DPRidge(
        epsilon=1.0, delta=DELTA, alpha=RY_LAM * RY_N, fit_intercept=False, data_norm=1.0,
        derivative_clip=RY_TAU, optimizer=optimizer, random_state=0,
    )


def _epsilon_lower_bound(sigma, q):
    """A lower bound on the true epsilon at DELTA of the last iterate, for Langevin temperature
    ``sigma`` and row 0 in each step's batch with probability q, independently across steps.

    The last iterate is w_K = c w_{K-1} - a g_{K-1} + N(0, 2 eta sigma^2), c = 1 - eta lam,
    a = eta / m, started at N(0, 2 sigma^2 / lam). Without row 0 (the neighbour) every gradient
    is 0: w_K ~ N(0, V) exactly. With row 0, couple the two runs on the same noise: every
    inclusion of row 0 moves w by -a tau c^(steps after it) <= 0 (while w > -0.99, i.e. always
    but with probability below K Phi(-0.98 / sd) ~ exp(-10^9)), so on the event B that row 0 is
    in the last batch, w_K <= w_K(neighbour) - a tau. For E = {w_K < -t}:
    P(E) >= q Phi((a tau - t) / sd) and Q(E) = Phi(-t / sd); epsilon >= log((P(E) - delta) / Q(E)).
    """
    c = 1.0 - RY_ETA * RY_LAM
    step_var = 2.0 * RY_ETA * sigma**2
    init_var = 2.0 * sigma**2 / RY_LAM
    var = c ** (2 * RY_STEPS) * init_var + step_var * (1.0 - c ** (2 * RY_STEPS)) / (1.0 - c * c)
    sd = math.sqrt(var)
    shift = RY_ETA / RY_M * RY_TAU
    bad = RY_STEPS * math.exp(log_ndtr(-0.98 / max(sd, math.sqrt(init_var))))  # P(w <= -0.99)
    best = -math.inf
    for u in np.linspace(0.0, shift / sd + 12.0, 4001):  # t = u sd
        p = q * math.exp(log_ndtr(shift / sd - u)) - DELTA - bad
        if p > 0:
            best = max(best, math.log(p) - float(log_ndtr(-u)))
    return best


def test_ryffel2022_claim_is_violated_and_the_option_is_refused():
    # What accountant="ryffel2022" reported: the full-batch Langevin bound (no composition
    # minimum) with drift sensitivity S = G / n, calibrated to epsilon 1.
    G, T = RY_TAU * 1.0, RY_STEPS * RY_ETA
    S = G / RY_N

    def claimed(z):
        return LangevinEvent(z, RY_LAM, T, composition=False)

    z, claimed_eps = calibrate_noise_multiplier(claimed, 1.0, DELTA)
    assert claimed_eps <= 1.0
    sigma, q = z * S, RY_M / RY_N
    true_eps = _epsilon_lower_bound(sigma, q)
    assert true_eps > 40.0, true_eps  # the claim of 1 is violated forty-fold
    # consistent with a proven upper bound at that noise: each step as a Poisson-subsampled
    # Gaussian on the gradient sum (std m sigma sqrt(2 / eta), sensitivity G), composed
    z_step = RY_M * sigma * math.sqrt(2.0 / RY_ETA) / G
    proven = compute_epsilon(SelfComposedEvent(PoissonGaussianEvent(q, z_step), RY_STEPS), DELTA)
    assert true_eps <= proven
    # the option is gone from the public API, with a message naming the proven analysis
    X, y = _ryffel_data()
    for params in ({"batch_size": RY_M}, {"batch_size": None}, {"batch_size": 0.1}):
        opt = DPSGLD(accountant="ryffel2022", max_iter=RY_EPOCHS, **params)
        with pytest.raises(ValueError, match=r"\('auto',\).*ryffel2022.*not proven"):
            _ridge(opt).fit(X, y)
    with pytest.raises(TypeError):
        LangevinEvent(z, RY_LAM, T, analysis="ryffel2022")  # no such analysis to stand for


# -- item 8: one-vs-rest logistic and the Langevin bound ------------------------------------------
def test_logistic_clip_is_inactive_only_at_sqrt_K():
    logistic = get_loss("logistic")
    K = 3
    # margins far on the wrong side: each one-vs-rest derivative is close to 1 in size
    Y = np.ones((1, K))
    s = np.zeros(K)
    loss_derivative(logistic.loss_id, np.full(K, -30.0), Y, 0, K, s)
    assert np.linalg.norm(s) > 1.7  # ~ sqrt(3): a clip at 1 is active
    clipped = s.copy()
    clip_vector(clipped, K, 1.0)
    assert not np.allclose(clipped, s)
    assert not logistic.is_bounded(1.0, K)
    assert logistic.is_bounded(math.sqrt(K), K) and logistic.is_bounded(1.0, 1)
    assert logistic.default_clip(K) == pytest.approx(math.sqrt(K))
    multinomial = get_loss("multinomial")
    assert multinomial.is_bounded(math.sqrt(2.0), 7) and not multinomial.is_bounded(1.0, 7)
    assert not get_loss("squared").is_bounded(1e6, 1)


@pytest.mark.parametrize("clip,analysis", [(1.0, "composition"),
                                            (math.sqrt(3.0), "langevin+composition")])
def test_dp_sgld_grants_the_langevin_bound_to_ovr_logistic_only_with_an_inactive_clip(
    clip, analysis
):
    rng = np.random.default_rng(0)
    n, K = 60, 3
    X = rng.normal(size=(n, 2))
    X = np.hstack([X / np.linalg.norm(X, axis=1, keepdims=True), np.ones((n, 1))])
    Y = np.where(rng.random((n, K)) < 0.5, -1.0, 1.0)
    problem = Problem(X=np.ascontiguousarray(X), Y=Y, loss=get_loss("logistic"), lam=0.05,
                      row_norm_bound=math.sqrt(2.0), clip=clip)
    res = DPSGLD(max_iter=20).solve(problem, Budget(1.0, DELTA), np.random.default_rng(0))
    assert res.record.details["analysis"] == analysis
    assert isinstance(res.record.event, LangevinEvent) == (analysis != "composition")
    assert res.record.epsilon <= 1.0


# -- item 10: small epsilon ------------------------------------------------------------------------
@pytest.mark.parametrize("name", available_optimizers())
def test_small_epsilon_fits_with_every_optimizer(name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(int)
    est = DPLogisticRegression(epsilon=1e-3, delta=DELTA, optimizer=name, random_state=0).fit(X, y)
    assert 0.99e-3 <= est.epsilon_ <= 1e-3  # reached, never overshot, not slack
    assert est.epsilon_ == pytest.approx(
        compute_epsilon(est.dp_event_, est.delta_, est.privacy_record_.accountant), rel=1e-12
    )


def test_small_epsilon_calibration_and_the_orders_it_needs():
    def make(z):
        return SelfComposedEvent(PoissonGaussianEvent(0.02, z), 500)

    z, eps = calibrate_noise_multiplier(make, 1e-3, DELTA)
    assert 0.999e-3 <= eps <= 1e-3
    assert compute_epsilon(make(z * 0.999), DELTA) > 1e-3  # tight
    # the largest default order (1024) alone cannot certify it, whatever the noise
    from skdp.privacy.rdp import DEFAULT_ORDERS, epsilon_from_rdp

    assert epsilon_from_rdp(DEFAULT_ORDERS, make(1e9).rdp(DEFAULT_ORDERS), DELTA)[0] > 3e-3


def test_unreachable_epsilon_names_the_smallest_reachable_one():
    # delta = 1e-10: the conversion's log(1 / delta) / (alpha - 1) term keeps the epsilon of
    # the largest orders (~2^20) above 1e-6 for any noise
    with pytest.raises(ValueError, match="smallest epsilon") as info:
        calibrate_noise_multiplier(GaussianEvent, 1e-6, 1e-10)
    named = float(re.search(r"is about ([0-9.e+-]+)", str(info.value)).group(1))
    assert 1e-6 < named < 1e-5
    assert compute_epsilon(GaussianEvent(1e13), 1e-10) == pytest.approx(named, rel=1e-2)


# -- item 11 (a): sparse clipping never trusts cached format flags ---------------------------------
def _stale_duplicates():
    """A CSR matrix whose cached flags say canonical after its arrays got a duplicate column."""
    X = sp.csr_matrix(np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.5], [1.0, 2.0, 3.0]]))
    assert X.has_canonical_format and X.has_sorted_indices  # computed and cached now
    X.indices[1] = 0  # row 0 stores column 0 twice: its true row is (7, 0, 0), norm 7
    X.indices[3:6] = [1, 0, 1]  # row 2 unsorted with a duplicate: (2, 4, 0), norm sqrt(20)
    return X


@pytest.mark.parametrize("intercept", [None, 1.0])
def test_sparse_clip_sums_duplicates_hidden_by_stale_flags(intercept):
    X = _stale_duplicates()
    before = [a.copy() for a in (X.data, X.indices, X.indptr)]
    C = clip_rows(X, 1.0, intercept)
    rows = C.toarray()[:, :3]  # toarray adds duplicates up: the rows the kernels see
    assert np.all(np.linalg.norm(rows, axis=1) <= 1.0)
    np.testing.assert_allclose(rows[0], [1.0, 0.0, 0.0], rtol=1e-12)
    np.testing.assert_allclose(rows[2], np.array([2.0, 4.0, 0.0]) / math.sqrt(20.0), rtol=1e-12)
    np.testing.assert_allclose(rows[1], [0.0, 0.0, 0.5])
    for a, b in zip(before, (X.data, X.indices, X.indptr)):
        np.testing.assert_array_equal(a, b)  # the caller's matrix is untouched


def test_sparse_clip_refuses_a_corrupted_matrix():
    X = sp.csr_matrix(np.eye(3))
    X.indices[0] = 7  # outside [0, 3): would read or write out of bounds
    with pytest.raises(ValueError, match="corrupted"):
        clip_rows(X, 1.0)


# -- item 11 (b): clipped norms are <= the bound exactly ------------------------------------------
def _exact_sq_norm(v):
    return sum(Fraction(float(a)) ** 2 for a in np.ravel(v))


def _rows(rng, n, d):
    """Random rows over a wide range of scales, plus adversarial ones: equal entries (the
    computed norm of those rounds both ways) and rows a hair above typical bounds."""
    X = rng.normal(size=(n, d)) * rng.lognormal(0.0, 3.0, size=(n, 1))
    X[: n // 4] = np.sign(X[: n // 4]) * rng.lognormal(0.0, 2.0, size=(n // 4, 1))
    X[n // 4: n // 4 + 20] *= (1.0 + 1e-15) / np.linalg.norm(X[n // 4: n // 4 + 20], axis=1,
                                                               keepdims=True)
    return X


@pytest.mark.parametrize("d", [1, 2, 3, 7, 40])
def test_dense_and_sparse_clipped_rows_are_within_the_bound_exactly(d):
    rng = np.random.default_rng(d)
    X = _rows(rng, 4000, d)
    for bound in (1.0, 0.1, 3.7, 1e-3):
        dense = clip_rows(X, bound)
        sparse = clip_rows(sp.csr_matrix(X), bound).toarray()
        for C in (dense, sparse):
            assert np.linalg.norm(C, axis=1).max() <= bound
            assert np.sqrt(np.einsum("ij,ij->i", C, C)).max() <= bound
            clipped = np.flatnonzero(np.linalg.norm(X, axis=1) > 0.5 * bound)[:150]
            b2 = Fraction(bound) ** 2
            assert all(_exact_sq_norm(C[i]) <= b2 for i in clipped)
        # clipping only shrinks, and by no more than the shrink margin
        ratio = np.linalg.norm(dense, axis=1) / np.minimum(np.linalg.norm(X, axis=1), bound)
        assert np.all(ratio <= 1.0 + 1e-15) and np.all(ratio >= 1.0 - 1e-13)


@pytest.mark.parametrize("d", [1, 3, 40])
def test_clipped_rows_in_units_of_the_bound_are_within_one_exactly(d):
    """The fit's copy: rows clipped to ``bound`` and divided by ``unit = bound`` in one pass
    (the optimizer's sensitivity reads rows of norm <= 1 and an intercept column s / bound),
    with the row norms computed here or passed in as ``data_norm="auto"`` computed them."""
    from skdp._rows import row_norms

    rng = np.random.default_rng(100 + d)
    X = _rows(rng, 4000, d)
    for bound in (1.0, 0.1, 3.7, 1e-3, 890.0):
        C = clip_rows(X, bound, 2.5, unit=bound)
        np.testing.assert_array_equal(C, clip_rows(X, bound, 2.5, unit=bound, norms=row_norms(X)))
        assert np.all(C[:, d] == 2.5 / bound)
        rows = C[:, :d]
        assert np.linalg.norm(rows, axis=1).max() <= 1.0
        near = np.flatnonzero(np.linalg.norm(rows, axis=1) > 0.5)[:150]
        assert near.size > 0 and all(_exact_sq_norm(rows[i]) <= 1 for i in near)
        inside = np.linalg.norm(X, axis=1) < 0.5 * bound  # never clipped: x / bound exactly
        np.testing.assert_array_equal(rows[inside], X[inside] / bound)
        sparse = clip_rows(sp.csr_matrix(X), bound, 2.5, unit=bound).toarray()
        assert np.linalg.norm(sparse[:, :d], axis=1).max() <= 1.0


@pytest.mark.parametrize("d", [1, 3, 40])
def test_rows_read_in_place_are_within_one_exactly(d):
    """The fit's design without a copy (issue 16): row i is ``scale_i * x_i`` read from the
    caller's X; in exact arithmetic (the product never rounded) its norm is <= 1 in units of
    the bound, and it is the row :func:`clip_rows` writes, up to rounding."""
    from skdp._rows import clipped_dense_rows, design_array, row_norms

    rng = np.random.default_rng(200 + d)
    X = _rows(rng, 4000, d)
    before = X.copy()
    for bound in (1.0, 0.1, 3.7, 1e-3, 890.0):
        R = clipped_dense_rows(X, bound, 2.5, unit=bound, norms=row_norms(X))
        # X itself, behind a read-only view (no copy)
        assert R.values.base is X and not R.values.flags.writeable
        assert R.shape == (4000, d + 1) and R.tail == 2.5 / bound
        near = np.flatnonzero(np.linalg.norm(X, axis=1) * R.scale > 0.5)[:300]
        assert near.size > 0
        assert all(Fraction(float(R.scale[i])) ** 2 * _exact_sq_norm(X[i]) <= 1 for i in near)
        np.testing.assert_allclose(design_array(R), clip_rows(X, bound, 2.5, unit=bound),
                                   rtol=4e-16, atol=0)
    np.testing.assert_array_equal(X, before)  # read, never written


def test_rows_too_large_to_read_in_place_get_the_copy():
    """A kernel forms x . w before the row's factor: entries near 1e308 would overflow, so such
    a design is written out clipped (the same rows) instead of read in place."""
    from skdp._rows import IN_PLACE_LIMIT, clipped_dense_rows
    from skdp.linear_model._base import clipped_design

    X = np.ones((5, 3))
    X[2] = 1e300
    assert clipped_dense_rows(X, 1.0) is None
    assert clipped_dense_rows(np.ones((5, 3)), 1.0, unit=IN_PLACE_LIMIT * 2) is None
    C = clipped_design(X, 1.0, 1.0)
    assert isinstance(C, np.ndarray) and np.linalg.norm(C[:, :3], axis=1).max() <= 1.0
    y = np.array([0, 1, 0, 1, 1])
    for opt in available_optimizers():
        model = DPLogisticRegression(epsilon=1.0, optimizer=opt, data_norm=1.0, random_state=0)
        assert np.all(np.isfinite(model.fit(X, y).coef_))


@pytest.mark.parametrize("K", [2, 3, 5])
def test_per_example_clips_are_within_the_bound_exactly(K):
    rng = np.random.default_rng(K)
    taus = (1.0, math.sqrt(2.0), 0.3, 2.0 * math.sqrt(K))
    for _ in range(3000):
        s = rng.normal(size=K) * rng.lognormal(0.0, 2.0)
        tau = taus[rng.integers(len(taus))]
        v = s.copy()
        clip_vector(v, K, tau)
        assert _exact_sq_norm(v) <= Fraction(tau) ** 2
        # dp_scd's update clip: ||zeta|| <= uclip for a row within its bound R
        z = s.copy()
        clip_update(z, K, tau, 0.5, 1.0)
        assert _exact_sq_norm(z) <= Fraction(tau) ** 2


# -- item 11 (c): a result holding pre-noise values is not private ---------------------------------
def _small_problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X = np.hstack([X / np.linalg.norm(X, axis=1, keepdims=True), np.ones((40, 1))])
    Y = np.where(rng.random((40, 1)) < 0.5, -1.0, 1.0)
    return Problem(X=np.ascontiguousarray(X), Y=Y, loss=get_loss("logistic"), lam=1.0 / 40,
                   row_norm_bound=math.sqrt(2.0), clip=1.0)


@pytest.mark.parametrize("name", available_optimizers())
def test_traced_result_carries_a_non_private_record(name):
    opt = get_optimizer_class(name)()
    problem, budget = _small_problem(), Budget(1.0, DELTA)
    plain = opt.solve(problem, budget, np.random.default_rng(3))
    traced = opt.solve(problem, budget, np.random.default_rng(3), record_trace=True)
    assert plain.trace is None and plain.mechanism_record is plain.record
    assert plain.record.epsilon <= 1.0
    assert traced.trace is not None and traced.trace.shape[0] > 0
    rec = traced.record
    assert rec.epsilon == math.inf and isinstance(rec.event, NonPrivateEvent)
    assert compute_epsilon(rec.event, DELTA) == math.inf
    assert "trace" in rec.details["non_private"]
    # the calibration of the noisy releases is kept for tests and audits, and is the plain one
    assert traced.mechanism_record == plain.record
    assert rec.details["mechanism_epsilon"] == plain.record.epsilon
    np.testing.assert_array_equal(traced.coef, plain.coef)  # tracing changes nothing else
    if opt.supports_replay:
        replayed = opt.solve(problem, budget, np.random.default_rng(3), replay=traced.trace)
        assert replayed.record.epsilon == math.inf
        assert replayed.mechanism_record == plain.record
