"""dp_nsgd_tree on UCI Adult: test accuracy against the other optimizers, and speed.

Run ``python benchmarks/bench_dp_nsgd_tree.py`` (about seven minutes, most of it the other
optimizers and the PLD calibrations; ``--quick`` for a
smoke run). Writes ``benchmarks/results/dp_nsgd_tree_adult.md`` and ``.csv``.

* Accuracy: DPLogisticRegression (C=1, delta=1e-6, rows of unit norm + intercept column) at
  epsilon in {0.1, 0.5, 1, 2}, mean and std over 5 seeds, for dp_nsgd_tree's variants and every
  other optimizer available in this build at its defaults, next to non-private scikit-learn.
* Speed: the time of one epoch of the private kernel divided by the time of one ``X @ w`` pass
  over the same (n, p) float64 array, measured in the same run (minimum over repeats, warm
  numba cache); the compile time of a cold numba cache is measured in a subprocess.
"""

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from skdp import DPLogisticRegression
from skdp.datasets import load_adult
from skdp.linear_model._base import clip_rows
from skdp.losses import get_loss
from skdp.optimizers import Problem, available_optimizers
from skdp.optimizers.dp_nsgd_tree import DPNSGDTree

RESULTS = Path(__file__).resolve().parent / "results"
DELTA = 1e-6


def variants():
    out = {
        "dp_nsgd_tree (default: restart, honaker)": DPNSGDTree(),
        "dp_nsgd_tree restart, plain": DPNSGDTree(honaker=False),
        "dp_nsgd_tree aligned, honaker": DPNSGDTree(tree="aligned"),
        "dp_nsgd_tree aligned, plain": DPNSGDTree(tree="aligned", honaker=False),
    }
    for name in available_optimizers():
        if name != "dp_nsgd_tree":
            out[f"{name} (defaults)"] = name
    return out


def accuracy_table(X, y, Xt, yt, epsilons, seeds, pld):
    from sklearn.linear_model import LogisticRegression

    ref = LogisticRegression(C=1.0, max_iter=5000, intercept_scaling=1.0).fit(X, y).score(Xt, yt)
    rows = []
    vs = variants()
    if pld:
        vs["dp_nsgd_tree (default) + PLD accountant"] = (DPNSGDTree(), "pld")
    for label, opt in vs.items():
        accountant = "rdp"
        if isinstance(opt, tuple):
            opt, accountant = opt
        row = {"optimizer": label}
        for eps in epsilons:
            accs, spent, secs = [], [], []
            for s in seeds:
                est = DPLogisticRegression(
                    epsilon=eps, delta=DELTA, optimizer=opt, accountant=accountant, random_state=s
                )
                t0 = time.perf_counter()
                try:
                    est.fit(X, y)
                except Exception as exc:  # another engineer's optimizer may be unfinished
                    print(f"  {label} eps={eps}: {type(exc).__name__}: {exc}", flush=True)
                    accs = []
                    break
                secs.append(time.perf_counter() - t0)
                accs.append(est.score(Xt, yt))
                spent.append(est.epsilon_)
            if accs:
                row[f"eps={eps}"] = (np.mean(accs), np.std(accs), max(spent), np.median(secs))
            else:
                row[f"eps={eps}"] = None
        rows.append(row)
        print(label, {k: v for k, v in row.items() if k != "optimizer"}, flush=True)
    return rows, ref


def _best_time(fn, repeats, clock=time.perf_counter):
    best = math.inf
    for _ in range(repeats):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def speed_table(X, y, repeats):
    """Epoch time over X @ w time. Two clocks: wall time against X @ w with the BLAS threads as
    configured, and the thread's CPU time (robust on a loaded machine) against a single-thread
    X @ w (the kernel is single-threaded)."""
    from threadpoolctl import threadpool_limits

    from skdp.optimizers._glm import clipped_gradient_sum

    Xc = clip_rows(X, 1.0, 1.0)
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    n, p = Xc.shape
    problem = Problem(X=Xc, Y=Y, loss=get_loss("logistic"), lam=1.0 / n,
                      row_norm_bound=math.sqrt(2.0), clip=1.0)
    w = np.random.default_rng(0).normal(size=p) * 0.1
    t_pass = _best_time(lambda: Xc @ w, 20 * repeats)
    with threadpool_limits(1):
        t_pass_cpu = _best_time(lambda: Xc @ w, 20 * repeats, time.thread_time)
    g, zz, ss, ar = np.zeros(p), np.zeros(1), np.zeros(1), np.arange(n)
    clipped_gradient_sum(Xc, Y, w, ar, n, 0, 1.0, g, zz, ss)
    t_grad_cpu = _best_time(lambda: clipped_gradient_sum(Xc, Y, w, ar, n, 0, 1.0, g, zz, ss),
                            5 * repeats, time.thread_time)
    rows = [{"config": "reference: sequential clipped-gradient pass (_glm)", "epoch_ms": float("nan"),
             "ratio": float("nan"), "epoch_cpu_ms": 1e3 * t_grad_cpu,
             "ratio_cpu": t_grad_cpu / t_pass_cpu}]
    configs = [
        ("default (b=n/16, restart, honaker)", DPNSGDTree(), 0.01),
        ("restart, plain", DPNSGDTree(honaker=False), 0.01),
        ("aligned, honaker", DPNSGDTree(tree="aligned"), 0.01),
        ("default, sigma=0 (no noise work)", DPNSGDTree(), 0.0),
        ("b=256 (128 steps/epoch)", DPNSGDTree(batch_size=256), 0.01),
        ("b=1 (the paper's setting), 2 epochs", DPNSGDTree(batch_size=1, epochs=2), 0.01),
    ]
    for label, opt, sigma in configs:
        opt._run(problem, sigma, np.random.default_rng(0))  # warm (compile or cache load)
        E = opt.epochs

        def fit():
            opt._run(problem, sigma, np.random.default_rng(1))

        t = _best_time(fit, repeats)
        t_cpu = _best_time(fit, repeats, time.thread_time)
        rows.append({"config": label, "epoch_ms": 1e3 * t / E, "ratio": t / E / t_pass,
                     "epoch_cpu_ms": 1e3 * t_cpu / E, "ratio_cpu": t_cpu / E / t_pass_cpu})
        print(rows[-1], flush=True)
    return rows, (t_pass, t_pass_cpu), (n, p)


COMPILE_SNIPPET = """
import time, math, numpy as np
t0 = time.perf_counter()
from skdp.optimizers import Problem
from skdp.optimizers.dp_nsgd_tree import DPNSGDTree
from skdp.losses import get_loss
rng = np.random.default_rng(0)
X = np.ascontiguousarray(rng.normal(size=(64, 5)) / 3); Y = np.sign(rng.normal(size=(64, 1)))
pb = Problem(X=X, Y=Y, loss=get_loss("logistic"), lam=0.01, row_norm_bound=3.0, clip=1.0)
t1 = time.perf_counter()
DPNSGDTree()._run(pb, 0.1, rng)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def compile_times():
    """(import, first kernel call) seconds with a cold numba cache, then with the warm cache."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold cache", "warm cache"):
            res = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env,
                                 capture_output=True, text=True, check=True)
            out[label] = tuple(float(v) for v in res.stdout.split())
    return out


def fmt_acc(cell):
    if cell is None:
        return "failed"
    m, s, spent, _ = cell
    return f"{m:.4f} ± {s:.4f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 seeds, 2 epsilons, few repeats")
    ap.add_argument("--no-pld", action="store_true", help="skip the PLD-accountant row")
    ap.add_argument("--speed-only", action="store_true",
                    help="only the speed table, printed (no files written)")
    args = ap.parse_args()
    epsilons = [0.5, 2.0] if args.quick else [0.1, 0.5, 1.0, 2.0]
    seeds = range(2) if args.quick else range(5)
    repeats = 3 if args.quick else 15

    X, y, Xt, yt = load_adult()
    if args.speed_only:
        rows, (t_pass, t_pass_cpu), _ = speed_table(X, y, repeats)
        print(f"X @ w: wall {1e3 * t_pass:.3f} ms, CPU (1 thread) {1e3 * t_pass_cpu:.3f} ms")
        return
    acc_rows, ref = accuracy_table(X, y, Xt, yt, epsilons, seeds, pld=not args.no_pld)
    speed_rows, (t_pass, t_pass_cpu), (n, p) = speed_table(X, y, repeats)
    comp = compile_times()

    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "dp_nsgd_tree_adult.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["table", "name", "epsilon", "mean_acc", "std_acc", "max_eps_spent",
                     "median_fit_s", "epoch_ms", "ratio_to_Xw", "epoch_cpu_ms",
                     "ratio_cpu_to_Xw_1thread"])
        for r in acc_rows:
            for eps in epsilons:
                c = r[f"eps={eps}"]
                wr.writerow(["accuracy", r["optimizer"], eps, *(c if c else [""] * 4),
                             "", "", "", ""])
        for r in speed_rows:
            wr.writerow(["speed", r["config"], "", "", "", "", "", r["epoch_ms"], r["ratio"],
                         r["epoch_cpu_ms"], r["ratio_cpu"]])

    lines = [
        "# dp_nsgd_tree on UCI Adult",
        "",
        f"DPLogisticRegression(C=1), delta={DELTA}, n={X.shape[0]} train / {Xt.shape[0]} test, "
        f"{X.shape[1]} features + intercept, rows of unit norm. Test accuracy, mean ± std over "
        f"{len(seeds)} seeds. Non-private scikit-learn: {ref:.4f}.",
        "",
        "| optimizer | " + " | ".join(f"ε={e:g}" for e in epsilons) + " |",
        "|---|" + "---|" * len(epsilons),
    ]
    for r in acc_rows:
        lines.append(f"| {r['optimizer']} | "
                     + " | ".join(fmt_acc(r[f'eps={e}']) for e in epsilons) + " |")
    lines += [
        "",
        f"Speed: one epoch of the kernel / one `X @ w` pass over the same ({n}, {p}) float64 "
        f"array, measured in the same run, warm cache, minimum of {repeats} repeats. Wall: "
        f"against `X @ w` with the BLAS threads as configured ({1e3 * t_pass:.3f} ms). CPU: the "
        f"thread's CPU time (robust when the machine is shared) against a single-thread "
        f"`X @ w` ({1e3 * t_pass_cpu:.3f} ms); the kernel is single-threaded.",
        "",
        "| configuration | epoch wall (ms) | wall / `X @ w` | epoch CPU (ms) | CPU / `X @ w` (1 thread) |",
        "|---|---|---|---|---|",
    ]
    for r in speed_rows:
        lines.append(f"| {r['config']} | {r['epoch_ms']:.3f} | {r['ratio']:.2f} | "
                     f"{r['epoch_cpu_ms']:.3f} | {r['ratio_cpu']:.2f} |")
    lines += ["", "Compile (first call, tiny problem) in a fresh process:", "",
              "| numba cache | import (s) | first fit (s) |", "|---|---|---|"]
    for k, (a, b) in comp.items():
        lines.append(f"| {k} | {a:.2f} | {b:.2f} |")
    (RESULTS / "dp_nsgd_tree_adult.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
