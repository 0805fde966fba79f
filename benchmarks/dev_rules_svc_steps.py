"""Development sweep: DPLinearSVC's step length for dp_gdws and dp_sgld (session 12).

The squared hinge's default derivative clip is its size at W = 0 (2 sqrt(K)), so unlike the
logistic loss's it cannot be lowered without bias (tried in session 11 and reverted). What is
left to set is how far the noisy descent travels: dp_gdws's noise-adaptive step (times a
multiplier m) and dp_sgld's Langevin time ``CLASSIFICATION_FACTOR s / (G R)`` (times m). The
factors were fitted with the logistic loss; this sweep asks whether the squared hinge wants
other ones. m in {1/4, 1/2, 1, 2, 4}; Adult, breast cancer, digits, n 426..10000, epsilon
0.1..3, 3 seeds; at the grid's public ``data_norm=1`` and at 1.5 (what ``"auto"`` gives on these
unit rows), against the rules as they were before (the opening this sweep led to is switched
off while it runs). Writes results/dev_rules_svc_steps[_norm1.5].csv, with the cached Opacus
anchor of each cell. The held-out part of the grid is never loaded here.

``python benchmarks/dev_rules_svc_steps.py [data_norm]``; ``... report`` summarises both csvs in
results/dev_rules_svc_steps.md.
"""

import csv
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from skdp.optimizers import _defaults  # noqa: E402
from skdp.optimizers.dp_gdws import DPGDWS  # noqa: E402
from skdp.optimizers._defaults import budget_rho, snr  # noqa: E402

MULTIPLIERS = (0.25, 0.5, 1.0, 2.0, 4.0)
DATASETS = ("adult", "breast_cancer", "digits")
N_GRID = (500, 1000, 2000, 5000, 10000)
SEEDS = 3


def sweep(data_norm=1.0):
    tag = "" if data_norm == 1.0 else f"_norm{data_norm:g}"
    out = HERE / "results" / f"dev_rules_svc_steps{tag}.csv"
    step, factor = DPGDWS._step_size, _defaults.CLASSIFICATION_FACTOR
    opening = _defaults.SQUARED_HINGE_OPENING_LOSSES
    # m times the rules as they were before session 12 (no opening for the squared hinge)
    _defaults.SQUARED_HINGE_OPENING_LOSSES = frozenset()
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "seed", "s", "optimizer", "m", "score", "anchor"])
        for name, n, eps, seed, X_tr, y_tr, X_te, y_te, anchor in bd.anchored_cells(
                DATASETS, N_GRID, bd.EPS_GRID, SEEDS):
            s = snr(n, X_tr.shape[1] + 1, budget_rho(eps, bd.DELTA))
            for m in MULTIPLIERS:
                DPGDWS._step_size = lambda self, *a, m=m: m * step(self, *a)
                _defaults.CLASSIFICATION_FACTOR = factor * m
                for opt in ("dp_gdws", "dp_sgld"):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        score = bd.skdp_fit("svc", opt, X_tr, y_tr, X_te, y_te, eps, seed,
                                            data_norm)[0]
                    w.writerow([name, n, eps, seed, f"{s:.3f}", opt, m, f"{score:.5f}",
                                f"{anchor:.5f}"])
            fh.flush()
            print(name, n, eps, seed, flush=True)
    DPGDWS._step_size, _defaults.CLASSIFICATION_FACTOR = step, factor
    _defaults.SQUARED_HINGE_OPENING_LOSSES = opening


def report():
    """Per optimizer and bound: the mean accuracy and the cells more than 1 point below the
    anchor for each fixed m, by ranges of s, and for the opening ``min(1, max(1/2, (s / full)^(1/3)))``
    with full in {100, 200, 400, 800} (scores interpolated in log m). Writes
    results/dev_rules_svc_steps.md."""
    buckets = ((0, 5), (5, 10), (10, 20), (20, 50), (50, 100), (100, 200), (200, 1e9))
    lines = ["# DPLinearSVC: dp_gdws's step and dp_sgld's time times m (session 12)", ""]
    for tag in ("", "_norm1.5"):
        cells = {}
        with open(HERE / "results" / f"dev_rules_svc_steps{tag}.csv") as fh:
            for r in csv.DictReader(fh):
                c = cells.setdefault((r["optimizer"], r["dataset"], int(r["n"]), float(r["eps"])),
                                     {"s": float(r["s"]), "m": {}, "anchor": {}})
                c["m"].setdefault(float(r["m"]), []).append(float(r["score"]))
                c["anchor"][r["seed"]] = float(r["anchor"])
        lines += [f"## row bound {'1.5' if tag else '1'}", ""]
        for opt in ("dp_gdws", "dp_sgld"):
            sel = [c for k, c in cells.items() if k[0] == opt]
            for c in sel:
                c["ms"] = np.array(sorted(c["m"]))
                c["mean"] = np.array([np.mean(c["m"][m]) for m in c["ms"]])
                c["a"] = np.mean(list(c["anchor"].values()))

            def at(c, m):
                return float(np.interp(np.log(m), np.log(c["ms"]), c["mean"]))

            rules = [(f"m = {m:g}", lambda s, m=m: m) for m in MULTIPLIERS]
            rules += [(f"opening to s = {f}", lambda s, f=f: min(1.0, max(0.5, (s / f) ** (1 / 3))))
                      for f in (100, 200, 400, 800)]
            lines += [f"### {opt}", "", "| rule | mean | cells > 1 point below the anchor | "
                      + " | ".join(f"s {lo:g}-{hi:g}" for lo, hi in buckets) + " |",
                      "|---" * (3 + len(buckets)) + "|"]
            for label, rule in rules:
                vals = [at(c, rule(c["s"])) for c in sel]
                below = sum(v < c["a"] - 0.01 for v, c in zip(vals, sel))
                by = [np.mean([v for v, c in zip(vals, sel) if lo < c["s"] <= hi] or [np.nan])
                      for lo, hi in buckets]
                lines.append(f"| {label} | {np.mean(vals):.4f} | {below} | "
                             + " | ".join(f"{b:.4f}" for b in by) + " |")
            lines.append("")
    (HERE / "results" / "dev_rules_svc_steps.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        report()
    else:
        sweep(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
