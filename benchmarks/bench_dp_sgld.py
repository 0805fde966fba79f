"""dp_sgld benchmark: bounded privacy loss, speed, and UCI Adult accuracy next to the other optimizers.

Run ``python benchmarks/bench_dp_sgld.py`` (``--quick`` for 2 seeds and two epsilons). Writes

* ``benchmarks/results/dp_sgld_privacy_vs_steps.md``: epsilon at a fixed sigma as the number of
  full-batch steps grows (Langevin + composition, composition alone) and for Poisson mini-batches;
* ``benchmarks/results/dp_sgld_speed.md``: one epoch of the kernel divided by one ``X @ w`` pass
  over the same array, in the same run; first-call (compile or cache load) time separately;
* ``benchmarks/results/dp_sgld_adult.csv`` (every fit) and ``dp_sgld_adult.md`` (mean and std
  of the test accuracy over seeds).

Regularisation: ``C = 1`` (the estimators' default) and ``C = 1 / (n lam*)`` with the public
heuristic ``lam* = G sqrt(d / rho*) / (n R)`` (``R = 5`` a guess of ||theta*||, rho* the RDP slope of
the target epsilon): the minimiser of ``lam R^2 / 2 + d sigma^2 / 2`` for the Langevin noise floor
at stationarity. It uses n, d, epsilon, delta only, so choosing it costs no privacy.
"""

import argparse
import csv
import math
import os
import sys
import time
import traceback

import numpy as np

from skdp import DPLogisticRegression
from skdp._validation import default_delta
from skdp.datasets import load_adult
from skdp.optimizers import available_optimizers
from skdp.optimizers.dp_sgld import DPSGLD, FULL, POISSON, _sgld_kernel
from skdp.privacy import GaussianEvent, PoissonGaussianEvent, SelfComposedEvent, compute_epsilon
from skdp.privacy.langevin import LangevinEvent, rho_for_epsilon

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def lam_heuristic(epsilon, delta, n, d, G=math.sqrt(2.0), R=5.0):
    rho = rho_for_epsilon(epsilon, delta, "balle")
    return G * math.sqrt(d / rho) / (n * R)


def privacy_vs_steps(n, lam, delta, out):
    """Epsilon at a fixed sigma as K grows: Adult's public constants (G = sqrt 2, beta = 0.5 + lam)."""
    G = math.sqrt(2.0)
    beta = 0.25 * 2.0 + lam
    eta = 1.0 / (2.0 * beta)
    S = G / n
    sigma = 0.005
    q, m = 256 / n, 256.0
    lines = [
        f"# dp_sgld: epsilon at fixed sigma = {sigma} as the number of steps grows",
        "",
        f"Adult's public constants: n = {n}, G = sqrt(2), lam = {lam:g}, eta = 1/(2 beta) = {eta:.4f}, "
        f"delta = {delta:.3g}; zero-out relation (drift sensitivity G/n). Full batch: min(Langevin, "
        "composition) = what dp_sgld reports; composition alone for comparison. Mini-batch: Poisson "
        "q = 256/n, the same sigma (per-step noise multiplier m sigma sqrt(2/eta) / G), SGM accountant.",
        "",
        "| steps K | lam T | eps full batch (dp_sgld) | eps composition only | eps mini-batch SGM |",
        "|---|---|---|---|---|",
    ]
    for K in (10, 100, 1000, 4000, 16000, 64000, 256000, 1024000):
        T = K * eta
        full = compute_epsilon(LangevinEvent(sigma / S, lam, T), delta)
        comp = compute_epsilon(SelfComposedEvent(GaussianEvent(sigma * math.sqrt(2 / eta) / S), K), delta)
        z = m * sigma * math.sqrt(2 / eta) / G
        sgm = compute_epsilon(SelfComposedEvent(PoissonGaussianEvent(q, z), K), delta)
        lines.append(f"| {K} | {lam * T:.3g} | {full:.4g} | {comp:.4g} | {sgm:.4g} |")
    lim = compute_epsilon(LangevinEvent(sigma / S, lam, 1e30), delta)
    lines += ["", f"Limit K -> inf of the full-batch epsilon: {lim:.4g}.", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


def speed(X, y, out, reps=20):
    """One full-batch epoch and one mini-batch epoch of the kernel vs one X @ w pass."""
    n = X.shape[0]
    Xa = np.ascontiguousarray(np.hstack([X, np.ones((n, 1))]))
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    D = Xa.shape[1]
    w = np.zeros(D)
    perm = np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(0)
    empty = np.zeros((0, 2, 0))

    def run(etas, sampling, q, inv):
        _sgld_kernel(Xa, Y, w, 0, 1.0, 1e-3, etas, sampling, q, inv, 1e-3, 0.0, 0.0, rng, perm, empty)

    t0 = time.perf_counter()
    run(np.full(1, 0.9), FULL, 1.0, 1.0 / n)
    first = time.perf_counter() - t0
    timings = {}
    for _ in range(3):  # interleave to share the machine's noise between the two
        t0 = time.perf_counter()
        for _ in range(reps):
            Xa @ w
        timings.setdefault("matvec", []).append((time.perf_counter() - t0) / reps)
        t0 = time.perf_counter()
        run(np.full(reps, 0.9), FULL, 1.0, 1.0 / n)
        timings.setdefault("full", []).append((time.perf_counter() - t0) / reps)
        q = 256 / n
        steps = math.ceil(1 / q)
        t0 = time.perf_counter()
        run(np.full(steps * 2, 0.9), POISSON, q, 1.0 / 256)
        timings.setdefault("mini", []).append((time.perf_counter() - t0) / 2)
    mv, fb, mb = (min(timings[k]) for k in ("matvec", "full", "mini"))
    lines = [
        "# dp_sgld speed (same run, best of 3)",
        "",
        f"Adult train: {n} x {D} float64, binary logistic. Ratios to one `X @ w` pass "
        f"({mv * 1e3:.2f} ms).",
        "",
        "| what | time (ms) | / X @ w |",
        "|---|---|---|",
        f"| full-batch step = 1 epoch (clipped gradient sum + noise + update) | {fb * 1e3:.2f} | {fb / mv:.2f} |",
        f"| mini-batch epoch (Poisson q = 256/n, {math.ceil(n / 256)} steps) | {mb * 1e3:.2f} | {mb / mv:.2f} |",
        "",
        f"First call in this process (numba compile or cache load): {first:.2f} s.",
        "",
    ]
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


def adult_accuracy(X, y, Xt, yt, epsilons, seeds, out_csv, out_md):
    n, d = X.shape[0], X.shape[1] + 1
    delta = default_delta(n)
    configs = []  # (label, optimizer factory, C rule)
    for cname in ("C=1", "C=lam*"):
        configs.append(("dp_sgld full batch", lambda: DPSGLD(), cname))
        configs.append(("dp_sgld mini-batch 256 (SGM)", lambda: DPSGLD(batch_size=256), cname))
        for name in available_optimizers():
            if name != "dp_sgld":
                configs.append((name, (lambda nm=name: nm), cname))
    rows = []
    fields = ["optimizer", "C_rule", "C", "epsilon", "seed", "accuracy", "epsilon_spent", "n_steps", "seconds", "error"]
    with open(out_csv, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        for eps in epsilons:
            lam_star = lam_heuristic(eps, delta, n, d)
            for label, make, cname in configs:
                C = 1.0 if cname == "C=1" else 1.0 / (n * lam_star)
                for seed in seeds:
                    t0 = time.perf_counter()
                    row = dict(optimizer=label, C_rule=cname, C=C, epsilon=eps, seed=seed)
                    try:
                        est = DPLogisticRegression(epsilon=eps, C=C, optimizer=make(), random_state=seed)
                        est.fit(X, y)
                        row.update(
                            accuracy=est.score(Xt, yt), epsilon_spent=est.epsilon_,
                            n_steps=est.privacy_record_.n_steps, error="",
                        )
                    except Exception as exc:  # another optimizer may be unfinished: record, go on
                        row.update(accuracy=float("nan"), epsilon_spent=float("nan"), n_steps=0,
                                   error=f"{type(exc).__name__}: {exc}"[:200])
                        traceback.print_exc(limit=1)
                    row["seconds"] = time.perf_counter() - t0
                    wr.writerow(row)
                    f.flush()
                    rows.append(row)
                    print(f"{label:32s} {cname:7s} eps={eps:<4} seed={seed} acc={row['accuracy']:.4f} "
                          f"spent={row['epsilon_spent']:.4g} {row['seconds']:.1f}s {row['error']}", flush=True)
    adult_report(X, y, Xt, yt, epsilons, seeds, rows, out_md)


def adult_report(X, y, Xt, yt, epsilons, seeds, rows, out_md):
    n, d = X.shape[0], X.shape[1] + 1
    delta = default_delta(n)
    # reference points
    ref = {}
    for cname in ("C=1",) + tuple(f"C=lam*({e})" for e in epsilons):
        C = 1.0 if cname == "C=1" else 1.0 / (n * lam_heuristic(float(cname[7:-1]), delta, n, d))
        ref[cname] = DPLogisticRegression(epsilon=np.inf, C=C, optimizer="dp_gdws").fit(X, y).score(Xt, yt)
    majority = max(np.mean(yt == c) for c in np.unique(yt))
    lines = [
        "# UCI Adult, DPLogisticRegression: test accuracy, mean ± std over seeds",
        "",
        f"n = {n} train / {len(yt)} test, {d} parameters (rows unit norm + intercept, R = sqrt 2), "
        f"delta = {delta:.3g} (the default), seeds {list(seeds)}. Majority class {majority:.4f}.",
        "Non-private optimum (epsilon = inf): "
        + ", ".join(f"{k}: {v:.4f}" for k, v in ref.items()) + ".",
        "`C=lam*`: C = 1/(n lam*), lam* = sqrt(2) sqrt(d / rho*(eps)) / (5 n) "
        + ", ".join(f"(eps {e}: lam* = {lam_heuristic(e, delta, n, d):.3g})" for e in epsilons) + ".",
        "dp_sgld defaults: step 1/(2 beta), steps until lam T >= 8 capped at 1000 epochs; mini-batch "
        "Poisson with expected size 256 and the subsampled-Gaussian accountant. Other optimizers at "
        "their defaults.",
        "",
    ]
    for cname in ("C=1", "C=lam*"):
        lines += [f"## {cname}", "", "| optimizer | " + " | ".join(f"eps={e}" for e in epsilons) + " |",
                  "|---" * (len(epsilons) + 1) + "|"]
        for label in dict.fromkeys(r["optimizer"] for r in rows):
            cells = []
            for e in epsilons:
                acc = np.array([r["accuracy"] for r in rows
                                if r["optimizer"] == label and r["C_rule"] == cname and r["epsilon"] == e])
                if len(acc) == 0:
                    cells.append("")
                elif np.isnan(acc).any():
                    cells.append("error")
                else:
                    cells.append(f"{acc.mean():.4f} ± {acc.std():.4f}")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    secs = {}
    for r in rows:
        secs.setdefault(r["optimizer"], []).append(r["seconds"])
    lines += ["Mean seconds per fit: " + ", ".join(f"{k} {np.mean(v):.1f}" for k, v in secs.items()), ""]
    with open(out_md, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 seeds, epsilon 0.1 and 1")
    ap.add_argument("--skip-adult", action="store_true")
    ap.add_argument("--report-only", action="store_true", help="rebuild the Adult table from the CSV")
    args = ap.parse_args(argv)
    os.makedirs(RESULTS, exist_ok=True)
    X, y, Xt, yt = load_adult()
    n = X.shape[0]
    if args.report_only:
        with open(os.path.join(RESULTS, "dp_sgld_adult.csv")) as f:
            rows = [
                {k: (float(v) if k in ("epsilon", "accuracy", "seconds") else v) for k, v in r.items()}
                for r in csv.DictReader(f)
            ]
        epsilons = sorted({r["epsilon"] for r in rows})
        seeds = sorted({int(r["seed"]) for r in rows})
        adult_report(X, y, Xt, yt, epsilons, seeds, rows, os.path.join(RESULTS, "dp_sgld_adult.md"))
        return 0
    privacy_vs_steps(n, 1e-3, default_delta(n), os.path.join(RESULTS, "dp_sgld_privacy_vs_steps.md"))
    speed(X, y, os.path.join(RESULTS, "dp_sgld_speed.md"))
    if not args.skip_adult:
        eps = (0.1, 1.0) if args.quick else (0.1, 0.5, 1.0, 2.0)
        seeds = range(2) if args.quick else range(5)
        adult_accuracy(X, y, Xt, yt, eps, seeds, os.path.join(RESULTS, "dp_sgld_adult.csv"),
                       os.path.join(RESULTS, "dp_sgld_adult.md"))


if __name__ == "__main__":
    sys.exit(main())
