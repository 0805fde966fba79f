"""dp_nsgd_tree: the streaming tree against explicit node sums, the sensitivity S^2 by brute
force, the accountant against dp-accounting, epsilon=inf against scikit-learn, sklearn checks."""

import itertools
import math

import numpy as np
import pytest

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.losses import LOGISTIC, MULTINOMIAL, SQUARED, get_loss
from skdp.optimizers import Budget, Problem
from skdp.optimizers._tree_kernels import tree_step
from skdp.optimizers.dp_nsgd_tree import DPNSGDTree
from skdp.privacy import compute_epsilon
from skdp.privacy.record import zcdp_rho_for_budget
from skdp.privacy.tree import (
    TreeAggregationEvent,
    epoch_tree_weights,
    gaussian_noise_multiplier_exact,
    honaker_weights,
    sensitivity_squared,
    tree_depth,
)

from ._helpers import (
    adult_subset,
    breast_cancer,
    diabetes,
    iris,
    needs_shared_data,
    relative_objective_gap,
)

KINDS = {"logistic": DPLogisticRegression, "svc": DPLinearSVC, "ridge": DPRidge}


# ---------------------------------------------------------------------------------------------
# An independent reference: Algorithm 1 with explicit dyadic node sums and COMPOSE (plain numpy)
# ---------------------------------------------------------------------------------------------
def tz(t):
    return (t & -t).bit_length() - 1


def compose_prefix(t):
    """COMPOSE(1, t): the dyadic nodes (level, start, end) of the set bits of t, high to low."""
    out, start = [], 1
    for level in range(t.bit_length() - 1, -1, -1):
        if t >> level & 1:
            out.append((level, start, start + 2**level - 1))
            start += 2**level
    return out


def dyadic_nodes(length):
    """All complete dyadic nodes [i 2^l + 1, (i + 1) 2^l] inside [1, length]."""
    out, level = [], 0
    while 2**level <= length:
        out += [(i * 2**level + 1, (i + 1) * 2**level) for i in range(length // 2**level)]
        level += 1
    return out


def clipped_derivative(loss_id, z, y, clip):
    """d loss / d margin of one example (plain numpy, independent of skdp.losses), clipped."""
    if loss_id == LOGISTIC:
        d = -y / (1.0 + np.exp(y * z))
    elif loss_id == MULTINOMIAL:
        e = np.exp(z - z.max())
        d = e / e.sum() - y
    elif loss_id == SQUARED:
        d = z - y
    else:  # squared hinge
        d = -2.0 * y * np.maximum(0.0, 1.0 - y * z)
    nrm = np.linalg.norm(d)
    return d * (clip / nrm) if nrm > clip else d


def batch_gradient(X, Y, w, idx, loss_id, clip):
    """Sum over idx of the clipped per-example gradients, flattened (p, K) row-major."""
    p, K = X.shape[1], Y.shape[1]
    W = w.reshape(p, K)
    g = np.zeros(p * K)
    for i in idx:
        g += np.outer(X[i], clipped_derivative(loss_id, X[i] @ W, Y[i], clip)).ravel()
    return g


def reference_fit(problem, opt, sigma, rng, X_prime=None):
    """Algorithm 1 literally: explicit node values S_v, noisy nodes, m_hat by COMPOSE.

    Draws the node noise in the kernel's order. Returns the final w, the trace rows (exact,
    noisy) of the drawn nodes, and for every completing node (drawn or not) its exact value on
    D and, if ``X_prime`` is given, on D' = (X_prime, Y) at D's iterates.
    """
    X, Y = problem.X, problem.Y
    lid, clip, lam = problem.loss.loss_id, problem.clip, problem.lam
    b, M, E, alpha, eta0 = opt._settings(problem)
    n, Dm = X.shape[0], problem.dim
    T, dec = E * M, 1.0 - alpha
    gamma = dec**M
    aligned = opt.tree == "aligned"
    hon_in = honaker_weights(dec, 20)[0]
    hon_ep = honaker_weights(gamma, 20)[0]
    w = np.zeros(Dm)
    r = np.zeros(Dm)  # exact regulariser momentum
    carry = np.zeros(Dm)  # restart: (m_hat - r) at the end of the previous epoch
    grads, grads_p = {}, {}  # global step -> alpha * g_t (data only)
    est_in, est_ep = {}, {}  # (level, end) -> node estimate (noisy, Honaker-combined if on)
    trace, nodes = [], []
    t = 0

    def node_value(gr, a, bnd):  # within-epoch node over global steps a..bnd
        return sum(dec ** (bnd - i) * gr[i] for i in range(a, bnd + 1))

    def epoch_node_value(gr, e1, e2):
        return sum(dec ** (e2 * M - i) * gr[i] for i in range((e1 - 1) * M + 1, e2 * M + 1))

    def draw_and_estimate(levels, k, exact_fn, est, decay, hon, end):
        for level in levels:
            exact = exact_fn(level)
            xi = sigma * rng.standard_normal(Dm)
            trace.append((exact, exact + xi))
            if opt.honaker and level > 0:
                half = 2 ** (level - 1)
                children = decay**half * est[(level - 1, end - half)] + est[(level - 1, end)]
                est[(level, end)] = hon[level] * (exact + xi) + (1 - hon[level]) * children
            else:
                est[(level, end)] = exact + xi

    for e in range(1, E + 1):
        perm = rng.permutation(n) if M > 1 else np.arange(n)  # one batch: no order drawn
        base = (e - 1) * M
        for tau in range(1, M + 1):
            t += 1
            idx = perm[(tau - 1) * b : tau * b]
            grads[t] = alpha * batch_gradient(X, Y, w, idx, lid, clip) / b
            if X_prime is not None:
                grads_p[t] = alpha * batch_gradient(X_prime, Y, w, idx, lid, clip) / b
            r = dec * r + alpha * lam * w
            k = tz(tau)
            if not aligned or tau < M:
                # every completing within-epoch node, on D and D'
                for level in range(k + 1):
                    a = base + tau - 2**level + 1
                    nodes.append((
                        node_value(grads, a, base + tau),
                        node_value(grads_p, a, base + tau) if X_prime is not None else None,
                    ))
                levels = range(k + 1) if opt.honaker else [k]
                draw_and_estimate(
                    levels, k,
                    lambda lv: node_value(grads, base + tau - 2**lv + 1, base + tau),
                    est_in, dec, hon_in, base + tau,
                )
                within = sum(
                    dec ** (tau - end) * est_in[(lv, base + end)]
                    for lv, start, end in compose_prefix(tau)
                )
            if aligned:
                if tau == M:
                    ke = tz(e)
                    for level in range(ke + 1):
                        nodes.append((
                            epoch_node_value(grads, e - 2**level + 1, e),
                            epoch_node_value(grads_p, e - 2**level + 1, e)
                            if X_prime is not None else None,
                        ))
                    levels = range(ke + 1) if opt.honaker else [ke]
                    draw_and_estimate(
                        levels, ke, lambda lv: epoch_node_value(grads, e - 2**lv + 1, e),
                        est_ep, gamma, hon_ep, e,
                    )
                    carry = sum(
                        gamma ** (e - end) * est_ep[(lv, end)] for lv, _, end in compose_prefix(e)
                    )
                    m_hat = carry + r
                else:
                    prev = sum(
                        gamma ** (e - 1 - end) * est_ep[(lv, end)]
                        for lv, _, end in compose_prefix(e - 1)
                    ) if e > 1 else 0.0
                    m_hat = within + dec**tau * prev + r
            else:
                m_hat = within + dec**tau * carry + r
                if tau == M:
                    carry = m_hat - r
            nrm = np.linalg.norm(m_hat)
            eta = eta0 * (1 - t / (T + 1)) if opt.schedule == "linear" else eta0
            if nrm > 0:
                w = w - eta * m_hat / nrm
    return w, trace, nodes


def small_problem(n=13, p=3, seed=0, loss="logistic", K=1, clip=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    X = np.ascontiguousarray(np.hstack([X, np.ones((n, 1))]))
    if loss == "multinomial":
        Y = np.eye(K)[rng.integers(0, K, n)]
    else:
        Y = np.where(rng.random((n, 1)) < 0.5, -1.0, 1.0)
    return Problem(X=X, Y=Y, loss=get_loss(loss), lam=0.05, row_norm_bound=math.sqrt(2.0),
                   clip=clip, fit_intercept=True)


CONFIGS = [
    # (n, batch, epochs, tree, honaker): M = 13 (not a power of two), 4, 8, 1
    (13, 1, 3, "restart", False),
    (13, 1, 3, "aligned", False),
    (16, 4, 5, "restart", True),
    (16, 2, 5, "aligned", True),
    (13, 2, 4, "aligned", False),
    (12, 12, 6, "aligned", True),
    (12, 12, 6, "restart", True),  # the full batch with momentum (the squared loss's default)
]


@pytest.mark.parametrize("n,batch,epochs,tree,honaker", CONFIGS)
def test_kernel_equals_explicit_node_sums(n, batch, epochs, tree, honaker):
    problem = small_problem(n=n)
    opt = DPNSGDTree(epochs=epochs, batch_size=batch, momentum=0.7, learning_rate=0.3, tree=tree,
                     honaker=honaker)
    sigma = 0.05
    w_k, n_steps, trace, sens = opt._run(problem, sigma, np.random.default_rng(7), True)
    w_r, trace_r, _ = reference_fit(problem, opt, sigma, np.random.default_rng(7))
    M = -(-n // batch)
    assert n_steps == epochs * M
    np.testing.assert_allclose(w_k, w_r, rtol=1e-9, atol=1e-11)
    assert trace.shape[0] == len(trace_r) == sens.shape[0]
    np.testing.assert_allclose(trace[:, 0], [e for e, _ in trace_r], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trace[:, 1], [v for _, v in trace_r], rtol=1e-9, atol=1e-12)
    # trace[:, 1] - trace[:, 0] is the node's own fresh noise: N(0, sigma^2)
    noise = trace[:, 1] - trace[:, 0]
    assert 0.5 * sigma < noise.std() < 1.5 * sigma


def test_sigma_zero_is_exact_nsgd_momentum():
    """No noise: the kernel's trajectory is plain normalized SGD with momentum (numpy loop)."""
    problem = small_problem(n=11, loss="multinomial", K=3, clip=math.sqrt(2.0))
    opt = DPNSGDTree(epochs=4, batch_size=3, momentum=0.6, learning_rate=0.2)
    w_k, *_ = opt._run(problem, 0.0, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    b, M, E, alpha, eta0 = opt._settings(problem)
    w, m, t = np.zeros(problem.dim), np.zeros(problem.dim), 0
    for _ in range(E):
        perm = rng.permutation(problem.n_samples)
        for tau in range(M):
            t += 1
            g = batch_gradient(problem.X, problem.Y, w, perm[tau * b:(tau + 1) * b], MULTINOMIAL,
                               problem.clip) / b
            m = (1 - alpha) * m + alpha * (g + problem.lam * w)
            w = w - eta0 * (1 - t / (E * M + 1)) * m / np.linalg.norm(m)
    np.testing.assert_allclose(w_k, w, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# The streaming noise tree: explicit sums and variances
# ---------------------------------------------------------------------------------------------
def _run_tree(steps, D, alpha, honaker, seed, sigma=1.0):
    dec = 1.0 - alpha
    L = tree_depth(steps)
    decpow = np.array([dec ** (2**level) for level in range(L)])
    hon = honaker_weights(dec, L)[0]
    Z, xi = np.zeros(D), np.zeros((L, D))
    cur, fresh = np.zeros(D), np.zeros(D)
    empty2, empty3 = np.zeros((0, D)), np.zeros((0, 2, D))
    rng = np.random.default_rng(seed)
    out = np.zeros((steps, D))
    for tau in range(1, steps + 1):
        tree_step(rng, tau, Z, xi, dec, decpow, sigma, honaker, hon, cur, fresh, False, empty2,
                  cur, cur, empty3, 0)
        out[tau - 1] = Z
    return out


def test_streaming_tree_equals_explicit_prefix_sums():
    steps, D, alpha = 300, 4, 0.03
    Z = _run_tree(steps, D, alpha, False, seed=5)
    rng = np.random.default_rng(5)
    xi = {}
    for tau in range(1, steps + 1):  # plain mode: one draw per step, the level-tz node
        xi[(tz(tau), tau)] = rng.standard_normal(D)
    for tau in range(1, steps + 1):
        explicit = sum((1 - alpha) ** (tau - end) * xi[(lv, end)]
                       for lv, _, end in compose_prefix(tau))
        np.testing.assert_allclose(Z[tau - 1], explicit, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("honaker", [False, True])
def test_tree_noise_variance(honaker):
    """Per-coordinate variance of the prefix noise equals sigma^2 sum_v dec^(2(t - end_v)) V_v
    (V_v = 1 plain, the Honaker level variance otherwise); 40000 iid coordinates."""
    steps, D, alpha = 24, 40000, 0.1
    Z = _run_tree(steps, D, alpha, honaker, seed=11, sigma=2.0)
    V = honaker_weights(1 - alpha, tree_depth(steps))[1] if honaker else np.ones(8)
    for tau in (1, 2, 3, 7, 8, 15, 16, 24):
        expected = 4.0 * sum((1 - alpha) ** (2 * (tau - end)) * V[lv]
                             for lv, _, end in compose_prefix(tau))
        assert abs(Z[tau - 1].var() / expected - 1) < 0.03, (tau, Z[tau - 1].var(), expected)


def test_exact_gaussian_multiplier_matches_spec_table():
    # spec section 2.2, "analytic Gaussian" column
    for eps, delta, z in [(0.1, 1e-6, 36.31), (1.0, 1e-6, 4.23), (2.0, 1e-5, 1.99), (8, 1e-5, 0.60)]:
        assert gaussian_noise_multiplier_exact(eps, delta) == pytest.approx(z, abs=0.006)


def test_honaker_reduces_prefix_variance():
    M, alpha = 32, 1 / 32
    V = honaker_weights(1 - alpha, tree_depth(M))[1]
    plain = np.mean([sum((1 - alpha) ** (2 * (t - e)) for _, _, e in compose_prefix(t))
                     for t in range(1, M + 1)])
    hon = np.mean([sum((1 - alpha) ** (2 * (t - e)) * V[lv] for lv, _, e in compose_prefix(t))
                   for t in range(1, M + 1)])
    assert hon / plain < 0.7  # spec 5.3: 2.200 -> 1.428 at M = 32


# ---------------------------------------------------------------------------------------------
# Sensitivity: brute force over all example positions, and gray-box at the same iterates
# ---------------------------------------------------------------------------------------------
def worst_case_s2(tree, M, E, alpha):
    """max over the positions of one record in every epoch of sum_nodes (weight / Delta)^2.

    restart: dyadic nodes inside each epoch; aligned: within-epoch nodes inside [1, M-1] plus
    dyadic nodes over whole epochs; straddle: one dyadic tree over [1, E M] (the paper's tree).
    """
    dec = 1.0 - alpha
    within = dyadic_nodes(M if tree == "restart" else M - 1)
    best = 0.0
    for pos in itertools.product(range(1, M + 1), repeat=E):
        ts = [e * M + pos[e] for e in range(E)]  # global steps of the occurrences
        s2 = 0.0
        if tree in ("restart", "aligned"):
            for e in range(E):
                s2 += sum(dec ** (2 * (b - pos[e])) for a, b in within if a <= pos[e] <= b)
        if tree == "aligned":
            for e1, e2 in dyadic_nodes(E):
                s2 += sum(dec ** (e2 * M - ts[e - 1]) for e in range(e1, e2 + 1)) ** 2
        if tree == "straddle":
            for a, b in dyadic_nodes(E * M):
                s2 += sum(dec ** (b - t) for t in ts if a <= t <= b) ** 2
        best = max(best, s2)
    return best


def paper_style_s2(M, E, alpha):
    """The paper's bound K kappa^2 for one tree over [1, E M] (assumes occurrences >= M apart)."""
    T = E * M
    kappa = 1.0 / (1.0 - (1.0 - alpha) ** M)
    K = sum(min(E, T // 2**level) for level in range(T.bit_length()))
    return K * kappa**2


BRUTE = [(1, 3), (2, 3), (3, 3), (4, 3), (5, 2), (6, 3), (7, 2), (8, 2), (5, 4), (3, 5)]


@pytest.mark.parametrize("M,E", BRUTE)
def test_restart_s2_is_the_exact_worst_case(M, E):
    for alpha in (0.5 / M, 1.0 / M, 2.0 / M if M > 2 else 0.9, 0.01):
        assert worst_case_s2("restart", M, E, alpha) == pytest.approx(
            sensitivity_squared("restart", M, E, alpha), rel=1e-12
        )


@pytest.mark.parametrize("M,E", BRUTE)
def test_aligned_s2_bounds_the_worst_case(M, E):
    for alpha in (0.5 / M, 1.0 / M, 0.01):
        bf = worst_case_s2("aligned", M, E, alpha)
        assert bf <= sensitivity_squared("aligned", M, E, alpha) * (1 + 1e-12)


@pytest.mark.parametrize("M,E,alpha", [(7, 2, 2 / 7), (5, 4, 0.4), (3, 2, 2 / 3)])
def test_straddling_tree_exceeds_the_paper_bound(M, E, alpha):
    """With reshuffling, a node straddling an epoch boundary holds two occurrences one step
    apart: the true worst case of the paper's single tree exceeds its K kappa^2 bound."""
    assert worst_case_s2("straddle", M, E, alpha) > paper_style_s2(M, E, alpha) * 1.01
    # the same configurations are safe in our two layouts
    for tree in ("restart", "aligned"):
        assert worst_case_s2(tree, M, E, alpha) <= sensitivity_squared(tree, M, E, alpha) + 1e-9


@pytest.mark.parametrize("n,batch,epochs,tree,honaker", [
    (9, 1, 3, "restart", False), (9, 2, 3, "aligned", False), (8, 1, 4, "aligned", True),
    (8, 2, 4, "restart", True),
    (8, 8, 4, "restart", True),  # the full batch with momentum (the squared loss's default)
])
def test_graybox_sensitivity_every_row_zeroed(n, batch, epochs, tree, honaker):
    """Zero out each row in turn (the null record of the zero-out relation): at D's iterates the
    node values (every completing node, used or not) change by sum_v ||S_v(D) - S_v(D')||^2 <=
    Delta^2 S^2, for every row and the positions three seeds put it in."""
    problem = small_problem(n=n, seed=4)
    opt = DPNSGDTree(epochs=epochs, batch_size=batch, momentum=0.5, learning_rate=0.5, tree=tree,
                     honaker=honaker)
    b, M, E, alpha, _ = opt._settings(problem)
    delta_node = problem.gradient_bound * alpha / b
    bound = delta_node**2 * sensitivity_squared(tree, M, E, alpha)
    worst = 0.0
    for i in range(n):
        Xp = problem.X.copy()
        Xp[i] = 0.0
        for seed in range(3):
            _, _, nodes = reference_fit(problem, opt, 0.3, np.random.default_rng(seed), Xp)
            total = sum(float(np.sum((a - c) ** 2)) for a, c in nodes)
            assert total <= bound * (1 + 1e-9)
            worst = max(worst, total)
    assert worst > 0.05 * bound  # the check is not vacuous


# ---------------------------------------------------------------------------------------------
# Accounting
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("M,E", [(16, 20), (7, 3), (1, 5), (100, 2)])
def test_restart_event_matches_dp_accounting_tree_event(M, E):
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    orders = [1.5, 2.0, 3.0, 8.0, 32.0, 128.0]
    event = TreeAggregationEvent(3.7, M, E, "restart", 1.0 / M)
    acc = rdp_acc.RdpAccountant(orders, dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
    acc.compose(event.to_dp_accounting_tree())
    np.testing.assert_allclose(event.rdp(np.array(orders)), acc._rdp, rtol=1e-12)
    acc_g = rdp_acc.RdpAccountant(orders)
    acc_g.compose(event.to_dp_accounting())
    for delta in (1e-5, 1e-7):
        assert acc.get_epsilon(delta) == pytest.approx(acc_g.get_epsilon(delta), rel=1e-12)
        # the library's accountant refines the orders: never above dp-accounting's grid value
        ours = compute_epsilon(event, delta, "rdp")
        assert ours <= acc.get_epsilon(delta) * (1 + 1e-12)
        assert ours == pytest.approx(
            rdp_acc.RdpAccountant(orders=None).compose(event.to_dp_accounting()).get_epsilon(delta),
            rel=5e-3,
        )


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize("tree", ["restart", "aligned"])
def test_calibration_spends_at_most_the_budget(accountant, tree):
    problem = small_problem(n=200)
    opt = DPNSGDTree(epochs=7, batch_size=50, tree=tree)  # a tree of 4 steps per epoch
    for eps in (0.1, 1.0, 4.0) if accountant == "rdp" else (1.0,):
        res = opt.solve(problem, Budget(eps, 1e-6, accountant), np.random.default_rng(0))
        rec = res.record
        assert rec.epsilon <= eps and rec.epsilon > 0.97 * eps
        assert rec.mechanism == "tree"
        # the record's event is the node noise relative to Delta, composed over S^2
        d = rec.details
        b, M = d["batch_size"], d["steps_per_epoch"]
        assert (b, M) == (50, 4)
        assert d["node_sensitivity"] == pytest.approx(problem.gradient_bound * d["alpha"] / b)
        assert d["node_noise_std"] == pytest.approx(
            d["effective_noise_multiplier"] * d["node_sensitivity"]
            * math.sqrt(sensitivity_squared(tree, M, 7, d["alpha"]))
        )
        indep = compute_epsilon(rec.event, 1e-6, accountant)
        assert indep == pytest.approx(rec.epsilon, rel=1e-12)
        # one Gaussian mechanism: PLD is exact (analytic Gaussian), RDP a little above
        z_exact = gaussian_noise_multiplier_exact(eps, 1e-6)
        z = d["effective_noise_multiplier"]
        assert z_exact <= z * (1 + 1e-9)
        assert z / z_exact < (1.001 if accountant == "pld" else 1.2)


def test_noise_depends_on_public_quantities_only():
    X1, y1 = breast_cancer()
    rng = np.random.default_rng(0)
    X2 = rng.normal(size=X1.shape)
    X2 /= np.linalg.norm(X2, axis=1)[:, None]
    y2 = rng.integers(0, 2, X1.shape[0])
    a = DPLogisticRegression(optimizer="dp_nsgd_tree", random_state=0).fit(X1, y1)
    c = DPLogisticRegression(optimizer="dp_nsgd_tree", random_state=1).fit(X2, y2)
    assert a.privacy_record_.details == c.privacy_record_.details
    # the public rules, recomputed from their statement: s = n sqrt(2 rho) / sqrt(p) with rho
    # the zCDP budget of the optimizer's share (~20 for n = 569, p = 31, epsilon 1 less the
    # private data_norm's share) is below 200: the full batch, no momentum, round(s) epochs
    details = a.privacy_record_.details
    rho = zcdp_rho_for_budget(details["optimizer_target_epsilon"], a.delta_)
    s = 569 * math.sqrt(2 * rho) / math.sqrt(31)
    assert 10 < s < 40
    assert a.hyperparameters_ == c.hyperparameters_
    assert a.hyperparameters_["batch_size"] == 569 and a.hyperparameters_["momentum"] == 0.0
    assert a.n_iter_ == c.n_iter_ == a.hyperparameters_["epochs"] == round(s)
    assert a.epsilon_ == c.epsilon_ <= 1.0


def test_aligned_record_sensitivity_bounds_every_trace_row():
    problem = small_problem(n=24)
    opt = DPNSGDTree(epochs=6, batch_size=3, tree="aligned", honaker=True)
    res = opt.solve(problem, Budget(1.0, 1e-5), np.random.default_rng(0), record_trace=True)
    sens = res.extras["trace_sensitivity"]
    assert res.mechanism_record.sensitivity == pytest.approx(sens.max())
    kappa = epoch_tree_weights(res.extras["alpha"], 8, 6)
    assert sens.max() == pytest.approx(kappa[-1] * res.mechanism_record.details["node_sensitivity"])
    # every trace row carries fresh noise of the calibrated std
    noise = res.trace[:, 1] - res.trace[:, 0]
    assert abs(noise.std() / res.extras["noise_std"] - 1) < 0.15


# ---------------------------------------------------------------------------------------------
# The estimators
# ---------------------------------------------------------------------------------------------
def test_full_batch():
    problem = small_problem(n=30)
    opt = DPNSGDTree(batch_size=None, epochs=5)
    res = opt.solve(problem, Budget(1.0, 1e-5), np.random.default_rng(0), record_trace=True)
    d = res.mechanism_record.details
    assert (d["batch_size"], d["steps_per_epoch"], d["alpha"]) == (30, 1, 1.0)
    assert d["sensitivity_squared"] == 5.0 and res.n_iter == 5 and res.trace.shape[0] == 5


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_epsilon_inf_reaches_sklearn_optimum(kind):
    X, y = diabetes() if kind == "ridge" else breast_cancer()
    est = KINDS[kind](epsilon=np.inf, optimizer="dp_nsgd_tree").fit(X, y)
    assert est.epsilon_ == np.inf
    assert relative_objective_gap(kind, est, X, y, 1.0) < 1e-4


def test_epsilon_inf_multiclass():
    X, y = iris()
    est = DPLogisticRegression(epsilon=np.inf, optimizer="dp_nsgd_tree").fit(X, y)
    assert relative_objective_gap("logistic", est, X, y, 1.0) < 1e-4


@pytest.mark.parametrize("tree", ["restart", "aligned"])
@pytest.mark.parametrize("honaker", [False, True])
def test_private_fit_is_useful_and_deterministic(tree, honaker):
    X, y = breast_cancer()
    opt = DPNSGDTree(tree=tree, honaker=honaker)
    a = DPLogisticRegression(epsilon=2.0, optimizer=opt, random_state=3).fit(X, y)
    b = DPLogisticRegression(epsilon=2.0, optimizer=opt, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.score(X, y) > 0.85
    assert a.epsilon_ <= 2.0


def test_parameter_validation():
    X, y = breast_cancer()
    bad = [dict(epochs=0), dict(epochs=2.5), dict(batch_size=0), dict(batch_size="big"),
           dict(momentum=1.0), dict(momentum=-0.1), dict(momentum=None), dict(learning_rate=0.0),
           dict(learning_rate="fast"), dict(learning_rate=np.inf),
           dict(schedule="cosine"), dict(tree="single"), dict(honaker="yes"), dict(tol=-1.0)]
    for params in bad:
        with pytest.raises(ValueError):
            DPLogisticRegression(optimizer=DPNSGDTree(**params)).fit(X, y)


def test_params_not_modified_by_fit():
    opt = DPNSGDTree()
    X, y = breast_cancer()
    est = DPLogisticRegression(optimizer=opt, random_state=0).fit(X, y)
    assert est.optimizer_.get_params() == DPNSGDTree().get_params()
    assert opt.get_params() == DPNSGDTree().get_params()


@needs_shared_data
@pytest.mark.slow
def test_adult_accuracy_epsilon_1():
    X, y, Xt, yt = adult_subset()
    accs = [DPLogisticRegression(epsilon=1.0, delta=1e-6, optimizer="dp_nsgd_tree",
                                 random_state=s).fit(X, y).score(Xt, yt) for s in range(3)]
    assert np.mean(accs) > 0.83
