"""Issue 15, session 14: the accelerated methods' step under a private row bound.

dp_nag_opt and dp_masg step ``c / L`` with ``L = curvature * R^2 + lam``, R the row bound. Their
rules were fitted on the defaults grid with a public bound that every row meets (``data_norm=1``
on unit rows), where ``1 / R^2`` is the typical row's own step. At the user's default
``data_norm="auto"`` R is 1.5 private medians, so the same rule steps 2.25 times shorter than the
typical row allows (session 13: DPRidge dp_nag_opt on ``make_regression`` n 5000 epsilon 0.1 fell
from R^2 0.674 with the public bound to 0.487 with the private one, dp_scd not at all).
:attr:`skdp.optimizers._base.Problem.step_smoothness` takes L from the public typical row (the
released median, with the intercept column) within a floor ``STEP_SMOOTHNESS_FLOOR * R^2`` that
keeps the step stable for any data; with a 1.5-median bound the floor decides. This sweep varies
the floor: 1 is the rule before (L from R), 0.8 the largest step stable whatever the data, 0.6
about the typical row with an intercept (unsafe: shown for scale).

Development data only, at *all* the estimators' defaults (``data_norm="auto"``, DPRidge also
``y_bounds="auto"``) but the optimizer; the grid's preprocessing (standardised unit rows); the
Opacus anchor is the ten-seed grid's mean (``results/defaults_s13c_10seeds.csv``). A second
table fits the raw arrays (no scaler: diabetes, wine quality, breast cancer, 75/25 splits), where
row norms vary and an uncentred design is close to rank one (the largest eigenvalue near the
mean squared norm: the case the floor guards).

    python benchmarks/dev_rules_step_private_bound.py sweep logistic|svc|ridge|raw
    python benchmarks/dev_rules_step_private_bound.py report
    python benchmarks/dev_rules_step_private_bound.py sweep heldout   # after the choice

writes ``results/dev_rules_step_private_bound_<part>.csv`` and
``results/dev_rules_step_private_bound.md``.
"""

import csv
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

import skdp.optimizers._base as base_module  # noqa: E402
from skdp import DPLogisticRegression, DPRidge  # noqa: E402
from skdp.datasets import load_wine_frame  # noqa: E402

DATASETS = {"logistic": ("adult", "breast_cancer", "digits"),
            "svc": ("adult", "breast_cancer", "digits"),
            "ridge": ("wine", "diabetes", "make_regression")}
HELDOUT = {"logistic": ("make_classification",), "svc": ("make_classification",),
           "ridge": ("adult_hours", "make_regression_lowrank")}
N_GRID = (500, 2000, 10000)
EPS = (0.1, 0.3, 1.0, 3.0)
SEEDS = 10
FLOORS = (1.0, 0.8, 0.6)
OPTIMIZERS = ("dp_nag_opt", "dp_masg")
GRID = HERE / "results" / "defaults_s13c_10seeds.csv"


def _fit_score(cls, task, kw, X, y, X_te, y_te, floor):
    kept = base_module.STEP_SMOOTHNESS_FLOOR
    base_module.STEP_SMOOTHNESS_FLOOR = floor
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(**kw).fit(X, y)
    finally:
        base_module.STEP_SMOOTHNESS_FLOOR = kept
    if task == "regression":
        return float(r2_score(y_te, model.predict(X_te)))
    return float(model.score(X_te, y_te))


def _raw_sets():
    Xw_tr, yw_tr, Xw_te, yw_te = load_wine_frame()
    wine = (np.vstack([np.asarray(Xw_tr, float), np.asarray(Xw_te, float)]),
            np.concatenate([np.asarray(yw_tr, float), np.asarray(yw_te, float)]))
    return {"diabetes": (DPRidge, "regression", load_diabetes(return_X_y=True, scaled=False)),
            "wine": (DPRidge, "regression", wine),
            "breast_cancer": (DPLogisticRegression, "classification",
                              load_breast_cancer(return_X_y=True))}


def sweep(part):
    out = HERE / "results" / f"dev_rules_step_private_bound_{part}.csv"
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["estimator", "optimizer", "dataset", "n", "eps", "seed", "floor", "score"])
        if part == "raw":
            for name, (cls, task, (X, y)) in _raw_sets().items():
                est = "ridge" if task == "regression" else "logistic"
                for seed in range(SEEDS):
                    X_tr, X_te, y_tr, y_te = train_test_split(
                        np.asarray(X, float), np.asarray(y), test_size=0.25, random_state=seed)
                    for eps in (0.3, 1.0, 3.0):
                        for opt in OPTIMIZERS:
                            kw = dict(epsilon=eps, delta=bd.DELTA, optimizer=opt, random_state=seed)
                            for floor in FLOORS:
                                s = _fit_score(cls, task, kw, X_tr, y_tr, X_te, y_te, floor)
                                w.writerow([est, opt, name, len(y_tr), eps, seed, floor, f"{s:.5f}"])
                    fh.flush()
                    print(name, seed, flush=True)
            return
        groups = HELDOUT if part == "heldout" else {part: DATASETS[part]}
        for est, names in groups.items():
            cls, task, _ = bd.ESTIMATORS[est]
            for name in names:
                for n in bd.sizes(name, N_GRID):
                    for seed in range(SEEDS):
                        _, X, y, X_te, y_te = bd.subsample(name, n, seed)
                        for eps in EPS:
                            for opt in OPTIMIZERS:
                                kw = dict(epsilon=eps, delta=bd.DELTA, optimizer=opt,
                                          random_state=seed)
                                floors = FLOORS if part != "heldout" else (1.0, 0.8)
                                for floor in floors:
                                    s = _fit_score(cls, task, kw, X, y, X_te, y_te, floor)
                                    w.writerow([est, opt, name, n, eps, seed, floor, f"{s:.5f}"])
                        fh.flush()
                        print(est, name, n, seed, flush=True)


def _cells(path):
    cells = {}
    with open(path) as fh:
        for r in csv.DictReader(fh):
            key = (r["estimator"], r["optimizer"], r["dataset"], int(r["n"]), float(r["eps"]))
            cells.setdefault(key, {}).setdefault(float(r["floor"]), []).append(float(r["score"]))
    return cells


def _table(cells, floors, anchors, title):
    lines = [f"## {title}", "",
             "| estimator | optimizer | cells | " + " | ".join(f"floor {f:g}" for f in floors)
             + " | better / worse than 1 by > 1 pt (0.02 R^2), per floor | worst vs 1 | below anchor (per floor) |",
             "|---" * (len(floors) + 6) + "|"]
    for g in sorted({k[:2] for k in cells}):
        ks = [k for k in cells if k[:2] == g]
        tol = 0.02 if g[0] == "ridge" else 0.01
        mean = {f: np.mean([np.mean(cells[k][f]) for k in ks]) for f in floors}
        diff = {f: [np.mean(cells[k][f]) - np.mean(cells[k][1.0]) for k in ks] for f in floors}
        anch = [k for k in ks if (k[2], k[0], k[3], k[4]) in anchors]
        below = {f: sum(np.mean(cells[k][f]) < anchors[(k[2], k[0], k[3], k[4])] - tol for k in anch)
                 for f in floors}
        lines.append(
            f"| {g[0]} | {g[1]} | {len(ks)} | " + " | ".join(f"{mean[f]:.4f}" for f in floors)
            + " | " + " / ".join(f"{sum(d > tol for d in diff[f])}-{sum(d < -tol for d in diff[f])}"
                                  for f in floors[1:])
            + " | " + " / ".join(f"{min(diff[f]):+.3f}" for f in floors[1:])
            + " | " + (" / ".join(str(below[f]) for f in floors) if anch else "-") + " |")
    lines += ["", "| estimator | optimizer | data | n | eps | " + " | ".join(f"{f:g}" for f in floors)
              + " | anchor |", "|---" * (len(floors) + 6) + "|"]
    for k in sorted(cells):
        a = anchors.get((k[2], k[0], k[3], k[4]))
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]:g} | "
                     + " | ".join(f"{np.mean(cells[k][f]):.3f}" for f in floors)
                     + f" | {'' if a is None else f'{a:.3f}'} |")
    return lines + [""]


def report():
    anchors = {(d, e, int(n), float(eps)): v for (d, e, n, eps), v in bd.anchor_means(GRID).items()}
    lines = ["# The accelerated methods' step under a private row bound (session 14)", "",
             "`python benchmarks/dev_rules_step_private_bound.py`. Mean test accuracy (R^2 for "
             "ridge) per floor of `STEP_SMOOTHNESS_FLOOR` (1: the rule before, L from the bound R; "
             "0.8: the rule now). The estimators at all their defaults but the optimizer (private "
             "row bound; DPRidge also private target bounds). Anchor: the ten-seed grid's Opacus "
             "mean, for the cells the grid has.", ""]
    results = HERE / "results"
    dev = {}
    for est in DATASETS:
        path = results / f"dev_rules_step_private_bound_{est}.csv"
        if path.exists():
            dev.update(_cells(path))
    if dev:
        lines += _table(dev, FLOORS, anchors, f"Development part ({SEEDS} seeds)")
    path = results / "dev_rules_step_private_bound_raw.csv"
    if path.exists():
        lines += _table(_cells(path), FLOORS, {}, f"Raw arrays, no scaler ({SEEDS} splits; development)")
    path = results / "dev_rules_step_private_bound_heldout.csv"
    if path.exists():
        lines += _table(_cells(path), (1.0, 0.8), anchors,
                        f"Held-out part, run once after the choice ({SEEDS} seeds)")
    (results / "dev_rules_step_private_bound.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:16]))


if __name__ == "__main__":
    sweep(sys.argv[2]) if sys.argv[1] == "sweep" else report()
