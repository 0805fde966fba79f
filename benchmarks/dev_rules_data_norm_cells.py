"""Session 19: the private row-norm median of ``data_norm="auto"`` scored by cells, not points.

``data_norm="auto"`` is ``DATA_NORM_FACTOR`` times a private median row norm, the exponential
mechanism over a grid of ratio sqrt(2) (:mod:`skdp.privacy.quantiles`). Scored as points, a
candidate's utility is minus the distance from n/2 to its rank. Row norms concentrate
(standardised rows have norms near sqrt(d)), and when they sit between two candidates no
candidate ranks near n/2: the dozens of candidates outside the data then outweigh the two
around it, and the release lands anywhere on the grid, even where the reliability rule counts
the median as reliable (so the fit does not warn). Scored by cells (``cells=True``, as the
target bounds have been since session 10), the candidate whose cell holds the median scores 0.

Both scorings use the same grid, so a fit draws the same random numbers under either: where the
released candidate is the same, so is the model (rows of one norm, such as the defaults grid's
unit rows, always give the same release, which is why ``bench_defaults`` and
``bench_utility`` do not move). This sweep runs the estimators at *all* their defaults on
development data whose row norms vary as a user's do: the classifiers on the sets of
``dev_rules_data_norm_factor.py`` (Adult standardised and one-hot, breast cancer and digits
standardised, raw breast cancer), DPRidge on diabetes as scikit-learn ships it and with its
features as measured (``scaled=False``), and white wine raw and standardised (75/25 split,
``random_state=0``); 10 seeds (the subsample and the fit), delta 1e-5.

    python benchmarks/dev_rules_data_norm_cells.py sweep logistic|svc|ridge
    python benchmarks/dev_rules_data_norm_cells.py report
    python benchmarks/dev_rules_data_norm_cells.py splits

write ``results/dev_rules_data_norm_cells_<estimator>.csv`` and
``results/dev_rules_data_norm_cells.md``; ``splits`` writes
``results/dev_rules_data_norm_cells_splits.md``: raw breast cancer (the cost of cells, whose
median row norm sits near the edge of two cells) on 40 train/test splits, stratified and not,
``DPLogisticRegression()`` at all its defaults, the split's seed also the fit's.
"""

import csv
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402
import dev_rules_data_norm_factor as factor_sweep  # noqa: E402

from skdp.datasets import load_wine_frame  # noqa: E402

EPS = factor_sweep.EPS  # and its n grid (factor_sweep.subsamples)
SEEDS = 10
VARIANTS = {"points (before)": False, "cells (rule)": True}


def _standardised(X_tr, X_te):
    sc = StandardScaler().fit(X_tr)
    return sc.transform(X_tr), sc.transform(X_te)


def _regression_sets():
    out = {}
    X, y = load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    out["diabetes"] = (X_tr, y_tr, X_te, y_te)
    X, y = load_diabetes(return_X_y=True, scaled=False)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    out["diabetes_raw"] = (X_tr, y_tr, X_te, y_te)
    X_tr, y_tr, X_te, y_te = load_wine_frame()
    X_tr, X_te = np.asarray(X_tr, dtype=float), np.asarray(X_te, dtype=float)
    out["wine_raw"] = (X_tr, np.asarray(y_tr, float), X_te, np.asarray(y_te, float))
    A, B = _standardised(X_tr, X_te)
    out["wine"] = (A, out["wine_raw"][1], B, out["wine_raw"][3])
    return out


def _sets(est):
    return _regression_sets() if est == "ridge" else factor_sweep._sets()


def sweep(est):
    cls = bd.ESTIMATORS[est][0]
    with open(HERE / "results" / f"dev_rules_data_norm_cells_{est}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["estimator", "dataset", "n", "eps", "seed", "variant", "data_norm", "score",
                    "majority"])
        for name, (X_tr, y_tr, X_te, y_te) in _sets(est).items():
            majority = (np.mean(y_te == np.bincount(y_tr.astype(int)).argmax())
                        if est != "ridge" else 0.0)
            for n, seed, X, y in factor_sweep.subsamples(X_tr, y_tr, SEEDS):
                for eps in EPS:
                    for label, cells in VARIANTS.items():
                        m = factor_sweep.fit_with_constant(cls, "DATA_NORM_CELLS", cells, X, y,
                                                           eps, seed)
                        w.writerow([est, name, n, eps, seed, label, f"{m.data_norm_:.6g}",
                                    f"{m.score(X_te, y_te):.5f}", f"{majority:.5f}"])
                fh.flush()
                print(est, name, n, seed, flush=True)


def report():
    labels = list(VARIANTS)
    lines = ["# The row-norm median scored by cells (session 19)", "",
             f"`python benchmarks/dev_rules_data_norm_cells.py`: the estimators at all their "
             f"defaults, {SEEDS} seeds, delta 1e-5, development data whose row norms vary (see "
             "the script). Per cell: the mean score, the worst seed and the median released "
             "`data_norm_`. *Failed seeds*: fits below the majority class (classifiers) or "
             "with R^2 below -1 (DPRidge). *Better / worse*: cells more than 1 point (0.02 of "
             "R^2) better / worse than points.", ""]
    for est in ("logistic", "svc", "ridge"):
        rows = factor_sweep.read_sweep(
            HERE / "results" / f"dev_rules_data_norm_cells_{est}.csv", "variant")
        if rows is None:
            continue
        cells = {k: {v: [(float(r["score"]), float(r["data_norm"]), float(r["majority"]))
                         for r in rs] for v, rs in c.items()} for k, c in rows.items()}
        tol = 0.02 if est == "ridge" else 0.01
        failed = (lambda s, maj: s < -1.0) if est == "ridge" else (lambda s, maj: s < maj)
        lines += [f"## {est}", "",
                  "| variant | mean | failed seeds | better / worse than points | worst cell vs "
                  "points | best cell vs points |", "|---|---|---|---|---|---|"]
        mean = {k: {v: np.mean([x[0] for x in c[v]]) for v in labels} for k, c in cells.items()}
        for v in labels:
            d = [m[v] - m[labels[0]] for m in mean.values()]
            fails = sum(failed(s, maj) for c in cells.values() for s, _, maj in c[v])
            runs = sum(len(c[v]) for c in cells.values())
            lines.append(f"| {v} | {np.mean([m[v] for m in mean.values()]):.4f} "
                         f"| {fails} of {runs} | {sum(x > tol for x in d)} / "
                         f"{sum(x < -tol for x in d)} | {min(d):+.3f} | {max(d):+.3f} |")
        lines += ["", "| data | n | eps | " + " | ".join(
            f"{v}: mean / worst / median bound" for v in labels) + " |",
            "|---" * (len(labels) + 3) + "|"]
        for k in sorted(cells):
            parts = []
            for v in labels:
                s = [x[0] for x in cells[k][v]]
                parts.append(f"{mean[k][v]:.3f} / {min(s):.3f} / "
                             f"{np.median([x[1] for x in cells[k][v]]):.3g}")
            lines.append(f"| {k[0]} | {k[1]} | {k[2]:g} | " + " | ".join(parts) + " |")
        lines.append("")
    (HERE / "results" / "dev_rules_data_norm_cells.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def splits(n_splits=40):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    labels = list(VARIANTS)
    lines = ["# Raw breast cancer on 40 splits: the row-norm median by points and by cells", "",
             "`python benchmarks/dev_rules_data_norm_cells.py splits`: "
             "`DPLogisticRegression(epsilon, delta=1e-5, random_state=seed)` on the raw array, "
             "75/25 split with `random_state=seed`, seeds 0 to 39. Mean test accuracy; the "
             "difference is paired (the same split and generator).", "",
             "| split | eps | " + " | ".join(labels) + " | cells - points (s.e.) | "
             "splits where the bound differs |", "|---|---|---|---|---|---|"]
    for stratify in (False, True):
        for eps in (0.3, 1.0, 3.0):
            score = {v: [] for v in labels}
            bound = {v: [] for v in labels}
            for seed in range(n_splits):
                X_tr, X_te, y_tr, y_te = train_test_split(
                    X, y, test_size=0.25, random_state=seed, stratify=y if stratify else None)
                for v, cells in VARIANTS.items():
                    m = factor_sweep.fit_with_constant(bd.ESTIMATORS["logistic"][0],
                                                       "DATA_NORM_CELLS", cells, X_tr, y_tr,
                                                       eps, seed)
                    score[v].append(m.score(X_te, y_te))
                    bound[v].append(m.data_norm_)
            d = np.subtract(score[labels[1]], score[labels[0]])
            moved = int(np.sum(np.not_equal(bound[labels[1]], bound[labels[0]])))
            lines.append(f"| {'stratified' if stratify else 'unstratified'} | {eps:g} | "
                         + " | ".join(f"{np.mean(score[v]):.4f}" for v in labels)
                         + f" | {d.mean():+.4f} ({d.std(ddof=1) / np.sqrt(d.size):.4f}) | "
                         f"{moved} |")
    (HERE / "results" / "dev_rules_data_norm_cells_splits.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    {"sweep": lambda: sweep(sys.argv[2]), "report": report, "splits": splits}[sys.argv[1]]()
