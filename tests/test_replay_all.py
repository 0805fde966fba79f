"""Record/replay sensitivity tests for every optimizer that supports replay (the generic suite).

Same seed, D versus its zero-out neighbour D' (one row replaced by the null record, an all-zero
row of ``Problem.X``, intercept column included). D runs with ``record_trace=True``; D' runs with
``replay=trace_D``: it computes its own noiseless quantity at every release (``trace[t, 0]``) and
releases D's value, so both runs follow the same released history. Then at EVERY release
``||trace_D[t, 0] - trace_D'[t, 0]|| <= sensitivity`` (L1 for Laplace records, L2 otherwise;
``record.sensitivity``, or ``result.extras["trace_sensitivity"]`` per row when present).

Checked for every optimizer with ``supports_replay``, in each of its privacy regimes found from
its parameters (full batch, Poisson mini-batch, Laplace, tree layouts), and for the logistic
(K=1), squared (small clip: clipping active; K=1 and, DPRidge's several targets, K=2) and
multinomial (K=3) losses:

(a) D' releases exactly D's releases;
(b) the distance is within the bound at every release;
(c) a saturated row (squared loss, huge target, norm R) attains a sizeable fraction of the
    bound: the bound is not vacuous;
(d) with clipping removed (``clip = 1e9``, targets scaled up, the differing row 10 R) the same
    replay exceeds the clipped problem's bound: the test would catch a missing clip.
"""

import math

import numpy as np
import pytest

from skdp.losses import get_loss
from skdp.optimizers import Budget, Problem, available_optimizers, get_optimizer_class

N, P = 60, 4  # rows, features (an intercept column is appended)
ROW = 7  # the row that differs between D and D'
BUDGET = Budget(epsilon=1.0, delta=1e-5)
SQUARED_CLIP = 0.5  # small: the squared loss's clipped derivative is active
RTOL = 1e-9  # rounding (the bound is attained exactly by a saturated row)

OPTIMIZERS = available_optimizers()

# Short runs (the checks hold at every step; a few steps see every code path). Parameters that an
# optimizer does not have are dropped, so a new optimizer runs with its defaults.
FAST = {"max_iter": 12, "epochs": 2, "reselect_T": False}
FAST_BY_NAME = {"dp_sgld": {"max_iter": 3}}


def _fast_params(name):
    params = get_optimizer_class(name)().get_params()
    fast = {**FAST, **FAST_BY_NAME.get(name, {})}
    return {k: v for k, v in fast.items() if k in params}


def _regimes(name):
    """``[(label, params)]``: the default regime and, from the parameters, the others."""
    params = get_optimizer_class(name)().get_params()
    base = _fast_params(name)
    out = [("default", base)]
    if "batch_size" in params:
        if params["batch_size"] is None:
            out.append(("minibatch", {**base, "batch_size": 10}))
        else:
            out.append(("fullbatch", {**base, "batch_size": None}))
    if "mechanism" in params and params["mechanism"] != "laplace":
        for label, p in list(out):
            out.append((f"laplace-{label}", {**p, "mechanism": "laplace"}))
    if "tree" in params and params["tree"] != "aligned":
        out.append(("aligned", {**base, "tree": "aligned", "epochs": 3}))
    if "honaker" in params:
        for label, p in [o for o in out if "tree" in params]:
            out.append((f"{label}-honaker{not params['honaker']}",
                        {**p, "honaker": not params["honaker"]}))
    return out


# the squared loss with K = 2: DPRidge's several targets, their residuals clipped jointly
LOSSES = [("logistic", 1), ("squared", 1), ("squared", 2), ("multinomial", 3)]


def _cases():
    for name in OPTIMIZERS:
        if not get_optimizer_class(name).supports_replay:
            continue
        for label, params in _regimes(name):
            # the default regime with every loss; the other regimes are orthogonal to the loss
            # and run with the saturated squared loss and the multi-output loss
            losses = LOSSES if label == "default" else LOSSES[1:]
            for loss_name, K in losses:
                yield pytest.param(name, params, loss_name, K, id=f"{name}-{label}-{loss_name}{K}")


CASES = list(_cases())


def _problems(loss_name, K, unclipped=False, seed=0):
    """(D, D'): n rows of norm R = sqrt 2 (unit features + intercept 1); row ROW saturates the
    loss derivative; in D' it is the null record (all zeros, intercept included)."""
    rng = np.random.default_rng(seed)
    loss = get_loss(loss_name)
    X = rng.normal(size=(N, P))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = np.hstack([X, np.ones((N, 1))])
    if loss_name == "squared":
        Y = rng.uniform(-1, 1, size=(N, K))
        Y[ROW] = 1e3  # residual far above the clip for the whole run: saturated
        clip = SQUARED_CLIP
    elif loss_name == "multinomial":
        Y = np.eye(K)[rng.integers(0, K, N)]
        clip = loss.default_clip(K)
    else:
        Y = np.where(rng.random((N, K)) < 0.5, -1.0, 1.0)
        clip = loss.default_clip(K)
    if unclipped:  # no clip: targets scaled up, the differing row beyond the declared bound R
        clip = 1e9
        if loss_name == "squared":
            Y = Y * 1e3
        X[ROW] *= 10.0
    X2 = X.copy()
    X2[ROW] = 0.0

    def make(X_):
        return Problem(X=np.ascontiguousarray(X_), Y=np.ascontiguousarray(Y, dtype=float),
                       loss=loss, lam=1.0 / N, row_norm_bound=math.sqrt(2.0), clip=clip,
                       fit_intercept=True)

    return make(X), make(X2)


def _record_and_replay(name, params, problem, neighbour, seed=11):
    opt = get_optimizer_class(name)(**params)
    try:
        res = opt.solve(problem, BUDGET, np.random.default_rng(seed), record_trace=True)
    except ValueError as exc:
        pytest.skip(f"not supported: {exc}")
    assert res.trace is not None and res.trace.shape[0] > 0
    res2 = opt.solve(neighbour, BUDGET, np.random.default_rng(seed), replay=res.trace)
    return res, res2


def _bounds(res):
    """(per-row sensitivity bound, norm order) of a recorded result."""
    per_row = res.extras.get("trace_sensitivity") if res.extras else None
    T = res.trace.shape[0]
    if per_row is None:
        per_row = np.full(T, float(res.mechanism_record.sensitivity))
    per_row = np.asarray(per_row, dtype=float)
    assert per_row.shape == (T,)
    assert np.all(np.isfinite(per_row)) and np.all(per_row > 0)
    order = 1 if res.mechanism_record.mechanism == "laplace" else 2
    return per_row, order


def _distances(res, res2, order):
    return np.linalg.norm(res.trace[:, 0] - res2.trace[:, 0], ord=order, axis=1)


def test_every_optimizer_supports_replay():
    """A new optimizer (or one that lost its replay path) gets flagged here."""
    missing = [n for n in OPTIMIZERS if not get_optimizer_class(n).supports_replay]
    assert not missing, f"optimizers without record/replay support: {missing}"


@pytest.mark.parametrize("name,params,loss_name,K", CASES)
def test_null_row_replay_within_sensitivity(name, params, loss_name, K):
    D, D2 = _problems(loss_name, K)
    res, res2 = _record_and_replay(name, params, D, D2)
    # (a) the neighbour released exactly what D released, with the same number of releases
    assert res2.trace.shape == res.trace.shape
    np.testing.assert_array_equal(res2.trace[:, 1], res.trace[:, 1])
    assert np.all(np.isfinite(res.trace)) and np.all(np.isfinite(res2.trace))
    # the shared history gives (nearly: rounding in the tree's streamed noise) the same model
    np.testing.assert_allclose(res2.coef, res.coef, rtol=1e-6, atol=1e-9)
    # (b) at every release, the noiseless inputs differ by at most the declared sensitivity
    bound, order = _bounds(res)
    dist = _distances(res, res2, order)
    ratio = dist / bound
    worst = int(np.argmax(ratio))
    assert ratio[worst] <= 1.0 + RTOL, (
        f"{name} {params} {loss_name} K={K}: release {worst} of {len(ratio)} moved by "
        f"{dist[worst]:.6g} (L{order}) > sensitivity {bound[worst]:.6g}"
    )
    assert dist.max() > 0.0  # the differing row was seen at least once
    # (c) a saturated row attains a sizeable fraction of the bound (it is not vacuous)
    if loss_name == "squared":
        # L2: the row's clipped gradient has norm exactly G; L1: at least G (and at most
        # sqrt(p K) G, the declared L1 bound)
        attainable = 1.0 if order == 2 else 1.0 / math.sqrt(D.dim)
        assert ratio.max() >= 0.5 * attainable, (
            f"{name} {params}: largest change {ratio.max():.3g} of the bound"
        )


@pytest.mark.parametrize(
    "name,params,loss_name,K", [c for c in CASES if c.values[2] == "squared"]
)
def test_replay_catches_a_missing_clip(name, params, loss_name, K):
    """(d) The checker has teeth: unclipped gradients (clip 1e9, a row 10 R, huge targets) move
    the releases by more than the clipped problem's bound."""
    D, _ = _problems(loss_name, K)
    ref, _ = _record_and_replay(name, params, D, D)  # the bound of the clipped problem
    bound, order = _bounds(ref)
    U, U2 = _problems(loss_name, K, unclipped=True)
    with np.errstate(all="ignore"):
        res, res2 = _record_and_replay(name, params, U, U2)
        assert res.trace.shape == ref.trace.shape
        dist = _distances(res, res2, order)
    assert np.nanmax(dist / bound) > 1.0 + 1e-3, (
        f"{name} {params}: unclipped replay stayed within the clipped bound"
    )


WEIGHT_BOUND = 3.0  # max_sample_weight of the weighted cases


def _weighted_problems(loss_name, K, seed=0):
    """(D, D') with example weights in [0, 3]: row ROW has the largest weight 3 in D and weight 0
    (the null record) in D'; X and Y are the same in both."""
    D, _ = _problems(loss_name, K, seed=seed)
    w = np.random.default_rng(seed + 1).uniform(0.0, WEIGHT_BOUND, N)
    w[ROW] = WEIGHT_BOUND
    w2 = w.copy()
    w2[ROW] = 0.0

    def make(weights):
        return Problem(X=D.X, Y=D.Y, loss=D.loss, lam=D.lam, row_norm_bound=D.row_norm_bound,
                       clip=D.clip, fit_intercept=True, sample_weight=weights,
                       max_sample_weight=WEIGHT_BOUND)

    return make(w), make(w2)


@pytest.mark.parametrize(
    "name,params,loss_name,K",
    [c for c in CASES if c.values[2] in ("squared", "multinomial")],
)
def test_zero_weight_is_the_null_record_within_scaled_sensitivity(name, params, loss_name, K):
    """A weight of 0 is the null record: replaying D (row ROW at the maximal weight) on D' (its
    weight 0) moves every release by at most the declared sensitivity, which is
    max_sample_weight times the unweighted one; a saturated row attains it."""
    D, D2 = _weighted_problems(loss_name, K)
    res, res2 = _record_and_replay(name, params, D, D2)
    np.testing.assert_array_equal(res2.trace[:, 1], res.trace[:, 1])
    unweighted, _ = _record_and_replay(name, params, *_problems(loss_name, K))
    assert res.mechanism_record.sensitivity == pytest.approx(
        WEIGHT_BOUND * unweighted.mechanism_record.sensitivity, rel=1e-12
    )
    bound, order = _bounds(res)
    ratio = _distances(res, res2, order) / bound
    assert ratio.max() <= 1.0 + RTOL, f"{name} {params}: {ratio.max():.6g} of the bound"
    if loss_name == "squared" and order == 2:
        assert ratio.max() >= 0.5, f"{name} {params}: largest change {ratio.max():.3g}"
