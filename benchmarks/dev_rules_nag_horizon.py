"""Issue 15, session 13: the accelerated methods' horizon on the squared loss (development data).

``reselect_T="auto"`` runs ``T = HORIZON_C * sqrt(n sqrt(2 rho))`` steps (at least 8 when this
sweep ran; 4 since ``dev_rules_nag_min_steps.py`` later in the session). The
squared loss's factor was 1 (session 10, ``dev_rules_nag_squared.py``: factor 2 was ahead on
``make_regression`` but behind on wine and diabetes). On the ten-seed grid of session 12 the
accelerated methods were far behind dp_gdws on ridge at mid signal-to-noise (development
``make_regression`` n 2000, epsilon 0.3: dp_nag_opt 0.48, dp_gdws 0.73; held-out
``make_regression_lowrank`` n 5000, epsilon 0.3: 0.09 of R^2 below the Opacus anchor). This
sweep varies the factor, and tries the uniform allocation, on every regression cell of the
development part of ``bench_defaults.py``'s grid (wine, diabetes, make_regression; its
preprocessing, ``data_norm=1``, ``y_bounds=(-1, 1)``, delta 1e-5, seeds 0..2), for dp_nag_opt and
dp_masg, with dp_gdws at its defaults as a reference. The held-out part is never loaded here.

    python benchmarks/dev_rules_nag_horizon.py sweep dp_nag_opt
    python benchmarks/dev_rules_nag_horizon.py sweep dp_masg
    python benchmarks/dev_rules_nag_horizon.py report

``sweep`` writes ``results/dev_rules_nag_horizon_<optimizer>.csv``; ``report`` writes
``results/dev_rules_nag_horizon.md`` (per variant: mean R^2 over the cells, per data set, cells
more than 0.02 below the Opacus anchor, more than 0.05 below the best variant of the cell, and
the worst cell against the factor 1).
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
from skdp.optimizers import get_optimizer_class  # noqa: E402

DATASETS = ("make_regression", "wine", "diabetes")
N_GRID = (500, 1000, 2000, 5000, 10000)
SEEDS = 3
#: variant -> (horizon factor, optimizer parameters); "dp_gdws": the reference at its defaults
VARIANTS = {"h1": (1.0, {}), "h1.5": (1.5, {}), "h2": (2.0, {}), "h3": (3.0, {}),
            "h4": (4.0, {}), "h1 uniform": (1.0, {"allocation": "uniform"}), "dp_gdws": None}


def fit_score(optimizer, variant, X, y, X_te, y_te, eps, seed):
    spec = VARIANTS[variant]
    saved = dict(nag_module.HORIZON_C)
    if spec is None:
        optimizer = "dp_gdws"
    else:
        nag_module.HORIZON_C["squared"] = spec[0]
        optimizer = get_optimizer_class(optimizer)(**spec[1]) if spec[1] else optimizer
    try:  # the grid's ridge fit: data_norm=1, y_bounds=(-1, 1), R^2 on the test split
        return bd.skdp_fit("ridge", optimizer, X, y, X_te, y_te, eps, seed)[0]
    finally:
        nag_module.HORIZON_C.clear()
        nag_module.HORIZON_C.update(saved)


def sweep(optimizer):
    out = HERE / "results" / f"dev_rules_nag_horizon_{optimizer}.csv"
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "seed", "variant", "score", "anchor"])
        for name, n, eps, seed, X, y, X_te, y_te, anchor in bd.anchored_cells(
                DATASETS, N_GRID, bd.EPS_GRID, SEEDS):
            for v in VARIANTS:
                w.writerow([name, n, eps, seed, v,
                            f"{fit_score(optimizer, v, X, y, X_te, y_te, eps, seed):.5f}",
                            f"{anchor:.5f}"])
            fh.flush()
            print(optimizer, name, n, eps, seed, flush=True)


def _table(optimizer):
    cells = {}
    with open(HERE / "results" / f"dev_rules_nag_horizon_{optimizer}.csv") as fh:
        for r in csv.DictReader(fh):
            c = cells.setdefault((r["dataset"], int(r["n"]), float(r["eps"])), {"anchor": {}})
            c.setdefault(r["variant"], []).append(float(r["score"]))
            c["anchor"][r["seed"]] = float(r["anchor"])
    return {k: {v: float(np.mean(s if v != "anchor" else list(s.values()))) for v, s in c.items()}
            for k, c in cells.items()}


def report():
    lines = ["# The accelerated methods' horizon on the squared loss (session 13, development)", "",
             "Mean R^2 over the development regression cells (3 seeds each); *below anchor*: "
             "cells more than 0.02 below the Opacus anchor; *far from best*: more than 0.05 "
             "below the best variant of the cell; *worst vs h1*: the largest loss of a cell "
             "against the factor 1 (the rule before). `dp_gdws` is the reference at its "
             "defaults.", ""]
    for optimizer in ("dp_nag_opt", "dp_masg"):
        t = _table(optimizer)
        keys = sorted(t)
        variants = list(VARIANTS)
        best = {k: max(t[k][v] for v in variants) for k in keys}
        names = sorted({k[0] for k in keys})
        lines += [f"## {optimizer}", "",
                  "| variant | mean | " + " | ".join(names) + " | below anchor | far from best "
                  "| worst vs h1 |", "|---" * (len(names) + 5) + "|"]
        for v in variants:
            per = [np.mean([t[k][v] for k in keys if k[0] == nm]) for nm in names]
            lines.append(
                f"| {v} | {np.mean([t[k][v] for k in keys]):.4f} | "
                + " | ".join(f"{x:.4f}" for x in per)
                + f" | {sum(t[k][v] < t[k]['anchor'] - 0.02 for k in keys)}"
                f" | {sum(t[k][v] < best[k] - 0.05 for k in keys)}"
                f" | {min(t[k][v] - t[k]['h1'] for k in keys):+.3f} |")
        lines += ["", f"Per cell ({optimizer}):", "", "| data | n | eps | " + " | ".join(variants)
                  + " | anchor |", "|---" * (len(variants) + 4) + "|"]
        for k in keys:
            lines.append(f"| {k[0]} | {k[1]} | {k[2]:g} | "
                         + " | ".join(f"{t[k][v]:.3f}" for v in variants)
                         + f" | {t[k]['anchor']:.3f} |")
        lines.append("")
    (HERE / "results" / "dev_rules_nag_horizon.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "report":
        report()
    else:
        sweep(sys.argv[2])
