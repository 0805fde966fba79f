"""Mini-batch epochs against the memory-bandwidth yardstick (issue 16): steps only.

Issue 16 asks for "a mini-batch epoch within 3x of one ``X @ w`` plus one ``X.T @ r`` pass at
d >= 100". ``bench_speed.py``'s epoch table divides a whole fit by its epochs, so a short fit's
set-up (validation, row norms, the noise calibration) lands in its "epoch"; here the epoch is the
time of the noisy steps alone (``ProgressMonitor.run``, which every optimizer's steps go through,
as in ``bench_scaling.py``), per pass over the n rows, for the optimizers that step on
mini-batches: ``dp_scd`` (its default Poisson batches of dual coordinates), ``dp_nsgd_tree``
with 16 batches an epoch (``batch_size=ceil(n / 16)``: its default batches at these n until
session 16; its default is now the full batch, timed by ``bench_speed.py``) and ``dp_gdws`` with Poisson batches of 512 rows (the gradient sum that
dp_nag_opt, dp_masg and dp_sgld use with ``batch_size``).

The yardstick, measured in the same process just before: one numpy ``X @ w`` plus one
``X.T @ r`` on one BLAS thread (minimum of 10). float64 rows of unit norm, logistic labels,
epsilon 1, public ``data_norm=1``. Best of 3 fits after a warm-up fit.

A second table times multiclass fits (K = 3 and 10 classes, the multinomial loss) against the
same yardstick with K columns, ``X @ W`` plus ``X.T @ R`` (W of shape (d, K), R of (n, K)).

Usage: ``python benchmarks/bench_minibatch_epoch.py [--multiclass]`` (``--multiclass``: the
second table only); writes ``benchmarks/results/minibatch_epoch.md`` (or
``minibatch_epoch_multiclass.md``).
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))
from _timing import epochs_of, record_steps  # noqa: E402
SHAPES = [(100_000, 100), (1_000_000, 100), (100_000, 1000)]
MULTICLASS = [(100_000, 100, 3), (100_000, 100, 10)]  # (n, d, K)


def _data(n, d):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def _labels(X, K, seed=1):
    """K classes from the first K features plus noise (K > 2)."""
    rng = np.random.default_rng(seed)
    return np.argmax(X[:, :K] + 0.3 * rng.standard_normal((X.shape[0], K)), axis=1)


def _pair(X, K=1):
    from threadpoolctl import threadpool_limits

    w, r = np.ones((X.shape[1], K)) * 0.1, np.ones((X.shape[0], K))
    if K == 1:
        w, r = w[:, 0], r[:, 0]
    best = np.inf
    with threadpool_limits(limits=1):
        for _ in range(10):
            t0 = time.perf_counter()
            X @ w
            X.T @ r
            best = min(best, time.perf_counter() - t0)
    return best


def _optimizers(n):
    """label -> the optimizer, for n rows (2 epochs each)."""
    from skdp.optimizers.dp_gdws import DPGDWS
    from skdp.optimizers.dp_nsgd_tree import DPNSGDTree
    from skdp.optimizers.dp_scd import DPSCD

    return {
        "dp_scd (defaults, 2 epochs)": DPSCD(epochs=2),
        "dp_nsgd_tree (16 batches an epoch, 2 epochs)": DPNSGDTree(epochs=2,
                                                                    batch_size=-(-n // 16)),
        "dp_gdws (Poisson batches of 512, 2 epochs)": DPGDWS(batch_size=512,
                                                             max_iter=2 * n // 512),
    }


def main(argv=None):
    from skdp import DPLogisticRegression

    only_multiclass = "--multiclass" in (sys.argv[1:] if argv is None else argv)
    spent = record_steps()
    rows = []
    cases = ([] if only_multiclass else [(n, d, 2) for n, d in SHAPES]) + MULTICLASS
    for n, d, K in cases:
        X, y = _data(n, d)
        if K > 2:
            y = _labels(X, K)
        pair = _pair(X, 1 if K == 2 else K)
        for label, optimizer in _optimizers(n).items():
            est = DPLogisticRegression(epsilon=1.0, data_norm=1.0, optimizer=optimizer,
                                       random_state=0)
            best = np.inf
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for _ in range(4):  # the first is the warm-up
                    spent.clear()
                    est.fit(X, y)
                    best = min(best, sum(seconds for seconds, _ in spent))
            epoch = best / epochs_of(est, n)
            rows.append((n, d, K, label, pair, epoch))
            print(f"n={n} d={d} K={K} {label}: epoch {epoch * 1e3:.1f} ms, "
                  f"pair {pair * 1e3:.2f} ms, {epoch / pair:.2f}x", flush=True)
        del X, y
    lines = [
        "# Mini-batch epochs, steps only, against one `X @ w` plus one `X.T @ r`", "",
        "`python benchmarks/bench_minibatch_epoch.py` (see its docstring). One run on a shared "
        "2-core machine; the yardstick is measured in the same process just before. Target "
        "(issue 16): within 3x at d >= 100.", "",
        "| n | d | classes | optimizer | `X @ W` + `X.T @ R` (ms) | epoch, steps only (ms) | "
        "ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, d, K, label, pair, epoch in rows:
        lines.append(f"| {n:.0e} | {d} | {K} | {label} | {pair * 1e3:.2f} | {epoch * 1e3:.1f} | "
                     f"{epoch / pair:.2f}x |")
    RESULTS.mkdir(exist_ok=True)
    name = "minibatch_epoch_multiclass.md" if only_multiclass else "minibatch_epoch.md"
    (RESULTS / name).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
