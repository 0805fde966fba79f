"""Issue 15, session 13: the accelerated methods' least number of steps at small budgets.

``reselect_T="auto"`` runs ``max(HORIZON_MIN, round(1.5 sqrt(n sqrt(2 rho))))`` steps, with
``HORIZON_MIN = 8``; at n = 500 and epsilon 0.1 the rule gives 6, so the floor decides. On the
ten-seed grid the accelerated methods are the furthest from the best of the six there
(classification at n < 1000, epsilon 0.1: 3.7 to 5.9 points behind the best on average). This
sweep varies the floor on the development cells with a small budget (Adult, breast cancer,
digits for the classifiers; wine, diabetes, ``make_regression`` for ridge; n 331..2000; epsilon
0.1 and 0.3; 5 seeds; the grid's preprocessing, ``data_norm=1`` and for ridge ``y_bounds=(-1,
1)``), for the three estimators and both optimizers. The held-out part is never loaded.

    python benchmarks/dev_rules_nag_min_steps.py sweep
    python benchmarks/dev_rules_nag_min_steps.py report

writes ``results/dev_rules_nag_min_steps.csv`` / ``.md``.
"""

import csv
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

import skdp.optimizers.dp_nag_opt as nag_module  # noqa: E402

#: estimator -> its development data sets
DATASETS = {"logistic": ("adult", "breast_cancer", "digits"),
            "svc": ("adult", "breast_cancer", "digits"),
            "ridge": ("wine", "diabetes", "make_regression")}
N_GRID = (500, 1000, 2000)
EPS = (0.1, 0.3)
SEEDS = 5
FLOORS = (3, 4, 6, 8, 12)


def sweep():
    kept = nag_module.HORIZON_MIN
    with open(HERE / "results" / "dev_rules_nag_min_steps.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["estimator", "optimizer", "dataset", "n", "eps", "seed", "floor", "score",
                    "anchor"])
        for est, names in DATASETS.items():
            for name, n, eps, seed, X, y, X_te, y_te, anchor in bd.anchored_cells(
                    names, N_GRID, EPS, SEEDS):
                for opt in ("dp_nag_opt", "dp_masg"):
                    for floor in FLOORS:
                        nag_module.HORIZON_MIN = floor
                        try:
                            score = bd.skdp_fit(est, opt, X, y, X_te, y_te, eps, seed)[0]
                        finally:
                            nag_module.HORIZON_MIN = kept
                        w.writerow([est, opt, name, n, eps, seed, floor, f"{score:.5f}",
                                    f"{anchor:.5f}"])
                fh.flush()
                print(est, name, n, eps, seed, flush=True)


def report():
    cells = {}
    with open(HERE / "results" / "dev_rules_nag_min_steps.csv") as fh:
        for r in csv.DictReader(fh):
            key = (r["estimator"], r["optimizer"], r["dataset"], int(r["n"]), float(r["eps"]))
            c = cells.setdefault(key, {"anchor": {}})
            c.setdefault(int(r["floor"]), []).append(float(r["score"]))
            c["anchor"][r["seed"]] = float(r["anchor"])
    lines = ["# The accelerated methods' least number of steps (session 13, development)", "",
             "Mean accuracy (R^2 for ridge) over the small-budget development cells (5 seeds each) per floor; "
             "*below*: cells more than 1 point (0.02 of R^2) below the Opacus anchor; *worst vs 8*: the "
             "largest loss of a cell against the floor 8 (the rule before).", "",
             "| estimator | optimizer | " + " | ".join(f"floor {f}" for f in FLOORS)
             + " | below (per floor) | worst vs 8 (per floor) |", "|---" * (len(FLOORS) + 4) + "|"]
    groups = sorted({k[:2] for k in cells})
    for g in groups:
        ks = [k for k in cells if k[:2] == g]
        means = {f: np.mean([np.mean(cells[k][f]) for k in ks]) for f in FLOORS}
        tol = 0.02 if g[0] == "ridge" else 0.01
        below = {f: sum(np.mean(cells[k][f]) < np.mean(list(cells[k]["anchor"].values())) - tol
                        for k in ks) for f in FLOORS}
        worst = {f: min(np.mean(cells[k][f]) - np.mean(cells[k][8]) for k in ks) for f in FLOORS}
        lines.append(f"| {g[0]} | {g[1]} | " + " | ".join(f"{means[f]:.4f}" for f in FLOORS)
                     + " | " + " / ".join(str(below[f]) for f in FLOORS) + " | "
                     + " / ".join(f"{worst[f]:+.3f}" for f in FLOORS) + " |")
    lines += ["", "| estimator | optimizer | data | n | eps | " + " | ".join(map(str, FLOORS))
              + " | anchor |", "|---" * (len(FLOORS) + 6) + "|"]
    for k in sorted(cells):
        c = cells[k]
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]:g} | "
                     + " | ".join(f"{np.mean(c[f]):.3f}" for f in FLOORS)
                     + f" | {np.mean(list(c['anchor'].values())):.3f} |")
    (HERE / "results" / "dev_rules_nag_min_steps.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:12]))


if __name__ == "__main__":
    sweep() if sys.argv[1] == "sweep" else report()
