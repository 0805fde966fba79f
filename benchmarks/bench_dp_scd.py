"""dp_scd on UCI Adult: test accuracy against epsilon, and the cost of one epoch.

Run ``python benchmarks/bench_dp_scd.py`` (add ``--quick`` for 2 seeds). Needs ../shared/data
(UCI Adult); writes ``benchmarks/results/dp_scd_adult.md`` and ``dp_scd_adult.csv``.

Accuracy: DPLogisticRegression(optimizer="dp_scd") with its defaults at epsilon 0.1, 0.5, 1, 2
(delta 1e-5), mean and std over 5 seeds, at the estimator's default C = 1 and at the paper's
regularisation (lambda = 1e-5 on 24420 rows: Lambda = lambda n = 0.2442, i.e. C = 1 / 0.2442),
next to non-private scikit-learn and the figures of the spec (section 8.3; a different protocol:
81 features, 24420 training rows, delta 1e-3, C and L tuned on a validation split).

Speed: one epoch of the private kernel (logistic, default batch size and update clip) as a ratio
to one ``X @ w`` over the same (clipped, intercept-augmented) array, both single-threaded
(BLAS threads pinned to 1 before numpy loads), process CPU time, the minimum over repeats
measured in the same run;
the first call (numba compile or cache load) is reported separately.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from skdp import DPLogisticRegression  # noqa: E402
from skdp.datasets import find_data_dir, load_adult  # noqa: E402
from skdp.linear_model._base import clip_rows  # noqa: E402
from skdp.losses import get_loss  # noqa: E402
from skdp.optimizers import Problem  # noqa: E402
from skdp.optimizers._scd_kernels import dp_scd_kernel  # noqa: E402
from skdp.optimizers.dp_scd import DPSCD, _run_private  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 2.0)
DELTA = 1e-5
PAPER_C = 1.0 / 0.2442
# spec section 8.3 (logistic regression, test accuracy in %, median of 10 seeds)
SPEC_SECRET = {0.1: 83.35, 0.5: 83.82, 1.0: 84.08, 2.0: 84.08}
SPEC_PAPER = {0.1: 82.57, 0.5: 83.60, 1.0: 83.43, 2.0: 83.85}
SPEC_NONPRIVATE = 84.82
RESULTS = Path(__file__).resolve().parent / "results"


def accuracy_table(X, y, Xt, yt, seeds):
    rows = []
    configs = [
        ("default C=1, secret_dual", 1.0, "dp_scd"),
        ("paper Lambda (C=4.095), secret_dual", PAPER_C, "dp_scd"),
        ("paper Lambda (C=4.095), variant=paper", PAPER_C, DPSCD(variant="paper")),
        # picked by hand from a small sweep on this same test split (so optimistic): shows the
        # headroom left by the conservative auto value (2e-3 at C=1)
        ("default C=1, update_clip=1e-2", 1.0, DPSCD(update_clip=1e-2)),
    ]
    for label, C, opt in configs:
        sk = LogisticRegression(C=C, max_iter=5000).fit(X, y).score(Xt, yt)
        for eps in EPSILONS:
            accs, spent = [], []
            for s in seeds:
                est = DPLogisticRegression(
                    epsilon=eps, delta=DELTA, C=C, optimizer=opt, random_state=s
                ).fit(X, y)
                accs.append(est.score(Xt, yt))
                spent.append(est.epsilon_)
            rows.append({
                "config": label, "C": round(C, 4), "epsilon": eps, "delta": DELTA,
                "acc_mean": float(np.mean(accs)), "acc_std": float(np.std(accs)),
                "n_seeds": len(seeds), "epsilon_spent_max": float(max(spent)),
                "sklearn_nonprivate": sk,
                "noise_multiplier": est.noise_multiplier_, "n_steps": est.n_iter_,
            })
            print(f"{label:40s} eps={eps:<4} acc={np.mean(accs):.4f}±{np.std(accs):.4f} "
                  f"(sklearn {sk:.4f}) spent<={max(spent):.4f}", flush=True)
    return rows


def speed(X, y, repeats=15):
    Xc = clip_rows(X, 1.0, 1.0)
    n, p = Xc.shape
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    out = []
    for loss in ("logistic", "squared_hinge", "squared"):
        pr = Problem(X=Xc, Y=Y, loss=get_loss(loss), lam=1.0 / n, row_norm_bound=math.sqrt(2.0),
                     clip=2.0)
        L = round(math.sqrt(n))
        q = L / n
        steps = math.floor(n / L)  # one epoch
        alpha, v = np.zeros((n, 1)), np.zeros(p)

        def epoch():
            alpha[:] = 0.0
            v[:] = 0.0
            _run_private(pr, alpha, v, 1.0, L, 2e-3, steps, q, 1e-3, 0.0, 1,
                         np.random.default_rng(0), np.zeros((0, 2, 0)), np.zeros((0, 0)))

        t0 = time.perf_counter()
        epoch()
        first = time.perf_counter() - t0
        hits = sum(dp_scd_kernel.stats.cache_hits.values())
        w = np.zeros(p)
        te, tx = [], []
        # CPU time of this process (both are single-threaded): on a shared machine wall time
        # charges the longer epoch for preemptions the short X @ w rarely sees. Interleaved.
        for _ in range(repeats):
            t0 = time.process_time()
            Xc @ w
            tx.append(time.process_time() - t0)
            t0 = time.process_time()
            epoch()
            te.append(time.process_time() - t0)
        out.append({
            "loss": loss, "n": n, "p": p, "batch_size": L, "steps_per_epoch": steps,
            "epoch_s": min(te), "xw_s": min(tx), "ratio_min": min(te) / min(tx),
            "ratio_median": float(np.median(te) / np.median(tx)),
            "first_call_s": first, "numba_cache": "hit" if hits else "compiled",
        })
        print(out[-1], flush=True)
    return out


_COMPILE_SNIPPET = """
import time, numpy as np
t0 = time.perf_counter()
from skdp.losses import get_loss
from skdp.optimizers import Problem
from skdp.optimizers.dp_scd import _run_private
t1 = time.perf_counter()
X = np.ones((50, 3)) / 3.0; Y = np.ones((50, 1))
pr = Problem(X=X, Y=Y, loss=get_loss("logistic"), lam=0.02, row_norm_bound=1.0, clip=1.0)
_run_private(pr, np.zeros((50, 1)), np.zeros(3), 1.0, 5.0, 1e-2, 3, 0.1, 1e-3, 0.0, 1,
             np.random.default_rng(0), np.zeros((0, 2, 0)), np.zeros((0, 0)))
print(t1 - t0, time.perf_counter() - t1)
"""


def compile_time():
    """Seconds to compile the private kernel (and everything it calls) with an empty cache."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=tmp)
        out = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
    return float(out[1])


def write(acc_rows, speed_rows):
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "dp_scd_adult.csv", "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=list(acc_rows[0]))
        wr.writeheader()
        wr.writerows(acc_rows)
    lines = ["# dp_scd on UCI Adult", "",
             f"Test accuracy (%), mean ± std over {acc_rows[0]['n_seeds']} seeds, delta = {DELTA}. "
             "Spec figures: section 8.3 (different protocol: 81 features, 24420 training rows, "
             "delta 1e-3, C and L tuned on validation, median of 10 seeds).", "",
             "| config | " + " | ".join(f"eps={e}" for e in EPSILONS) + " | sklearn (non-private) |",
             "|---|" + "---|" * (len(EPSILONS) + 1)]
    for label in dict.fromkeys(r["config"] for r in acc_rows):
        rs = [r for r in acc_rows if r["config"] == label]
        cells = [f"{100 * r['acc_mean']:.2f} ± {100 * r['acc_std']:.2f}" for r in rs]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {100 * rs[0]['sklearn_nonprivate']:.2f} |")
    lines.append("| spec 8.3, LR secret (tuned) | " + " | ".join(f"{SPEC_SECRET[e]:.2f}" for e in EPSILONS) + f" | {SPEC_NONPRIVATE:.2f} (SCD) |")
    lines.append("| spec 8.3, LR paper (tuned) | " + " | ".join(f"{SPEC_PAPER[e]:.2f}" for e in EPSILONS) + f" | {SPEC_NONPRIVATE:.2f} (SCD) |")
    lines += ["", "Epoch time of the private kernel as a ratio to one `X @ w` pass (single thread, "
              "CPU time, min over interleaved repeats, same run).", "",
              "| loss | n x p | batch | epoch (ms) | X @ w (ms) | ratio (min) | ratio (median) | first call (s) |",
              "|---|---|---|---|---|---|---|---|"]
    for r in speed_rows:
        lines.append(f"| {r['loss']} | {r['n']} x {r['p']} | {r['batch_size']} | {1e3 * r['epoch_s']:.2f} | "
                     f"{1e3 * r['xw_s']:.3f} | {r['ratio_min']:.1f} | {r['ratio_median']:.1f} | "
                     f"{r['first_call_s']:.2f} ({r['numba_cache']}) |")
    lines += ["", f"Compile time of the private kernel with an empty numba cache: "
              f"{speed_rows[0]['compile_s']:.1f} s (once per machine; cached afterwards)."]
    (RESULTS / "dp_scd_adult.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2 seeds instead of 5")
    args = ap.parse_args()
    if find_data_dir() is None:
        raise SystemExit("UCI Adult not found (../shared/data or SKDP_DATA_DIR)")
    X, y, Xt, yt = load_adult()
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    speed_rows = speed(X, y)
    speed_rows[0]["compile_s"] = compile_time()
    print("compile (empty cache):", speed_rows[0]["compile_s"], flush=True)
    acc_rows = accuracy_table(X, y, Xt, yt, range(2 if args.quick else 5))
    write(acc_rows, speed_rows)


if __name__ == "__main__":
    main()
