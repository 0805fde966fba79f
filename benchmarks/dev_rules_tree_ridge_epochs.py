"""Issue 15, session 16: dp_nsgd_tree's full-batch steps, travel and momentum (squared loss).

dp_nsgd_tree is the one optimizer more than 0.02 of R^2 below the Opacus anchor beyond the seeds'
noise on the ten-seed grid (``make_regression_lowrank`` n 5000, epsilon 0.3: -0.061; epsilon 1:
-0.022), and the weakest of the six on ridge from n = 5000 (up to 0.1 behind the best). Its full
batch (s < 200) takes ``round(s)`` steps within [2, 40] and travels ``sqrt(s) / 2.5`` in [1, 4]
(in units of 1 / R). Session 13's sweep of the travel alone (``dev_rules_tree_ridge.py``) found
no rule better on every development set. This sweep varies the number of steps and the travel
together, and the momentum of the full batch (none by default: ``alpha = 1 / M`` with M = 1).

Data: the development regression sets and the first held-out part's (``adult_hours``,
``make_regression_lowrank``), which by now has informed three constants and is used here as
development data. The second held-out part (``bench_defaults.HELDOUT2``) is not loaded: it judges
the rule afterwards. Cells with s >= 200 are left out: the default took mini-batches there when
this ran (``dev_rules_tree_large_snr.py`` then made it the full batch). The grid's preprocessing
and public bounds (``data_norm=1``,
``y_bounds=(-1, 1)``), seeds 0..4, the cached Opacus anchors.

    python benchmarks/dev_rules_tree_ridge_epochs.py sweep
    python benchmarks/dev_rules_tree_ridge_epochs.py report
    python benchmarks/dev_rules_tree_ridge_epochs.py classification

``sweep`` writes ``results/dev_rules_tree_ridge_epochs.csv``; ``report`` writes
``results/dev_rules_tree_ridge_epochs.md``; ``classification`` checks the same full-batch
momentum on the classification losses (Adult, breast cancer, digits and the first held-out
part's ``make_classification``; cells with 5 <= s < 200, 3 seeds) and writes
``results/dev_rules_tree_momentum_classification.md``.
"""

import csv
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402
from dev_rules_tree_ridge import cell_means, cell_table  # noqa: E402

import skdp.optimizers._defaults as defaults  # noqa: E402
import skdp.optimizers.dp_nsgd_tree as tree_module  # noqa: E402
from skdp.optimizers.dp_nsgd_tree import DPNSGDTree  # noqa: E402

DATASETS = ("wine", "diabetes", "make_regression", "adult_hours", "make_regression_lowrank")
SEEDS = 5
CSV = HERE / "results" / "dev_rules_tree_ridge_epochs.csv"
#: variant -> (steps factor c, full-batch cap, travel bounds, travel scale, momentum): E =
#: round(c s) steps within [2, cap] below s = 200, travel sqrt(s) / scale within the bounds, the
#: classic momentum beta of the full batch ("auto": none, alpha = 1 / M = 1). The first is the
#: rule.
VARIANTS = {
    "rule: s, 40; (1, 4), 2.5": (1.0, 40, (1.0, 4.0), 2.5, "auto"),
    "2s, 80; (1, 4), 2.5": (2.0, 80, (1.0, 4.0), 2.5, "auto"),
    "4s, 160; (1, 4), 2.5": (4.0, 160, (1.0, 4.0), 2.5, "auto"),
    "s, 40; (1, 8), 2.5": (1.0, 40, (1.0, 8.0), 2.5, "auto"),
    "2s, 80; (1, 8), 2.5": (2.0, 80, (1.0, 8.0), 2.5, "auto"),
    "2s, 80; (1, 8), 1.75": (2.0, 80, (1.0, 8.0), 1.75, "auto"),
    "momentum 0.5": (1.0, 40, (1.0, 4.0), 2.5, 0.5),
    "momentum 0.75": (1.0, 40, (1.0, 4.0), 2.5, 0.75),
    "momentum 0.9": (1.0, 40, (1.0, 4.0), 2.5, 0.9),
    "momentum 0.75; 2s, 80": (2.0, 80, (1.0, 4.0), 2.5, 0.75),
    "momentum 0.75; (1, 4), 5": (1.0, 40, (1.0, 4.0), 5.0, 0.75),
}


def _patched(variant):
    c, cap, bounds, scale, _ = VARIANTS[variant]

    def epochs(n, dim, rho):
        s = defaults.snr(n, dim, rho)
        if s >= defaults.TREE_LONG_RUN_SNR:
            return defaults.tree_epochs(n, dim, rho)
        return int(min(cap, max(2, round(c * s))))

    def travel(n, dim, rho):
        return min(bounds[1], max(bounds[0], math.sqrt(defaults.snr(n, dim, rho)) / scale))

    return epochs, travel


def fit_score(variant, X, y, X_te, y_te, eps, seed):
    saved = tree_module.tree_epochs, tree_module.tree_regression_travel
    tree_module.tree_epochs, tree_module.tree_regression_travel = _patched(variant)
    try:
        optimizer = DPNSGDTree(momentum=VARIANTS[variant][4])
        return bd.skdp_fit("ridge", optimizer, X, y, X_te, y_te, eps, seed)[0]
    finally:
        tree_module.tree_epochs, tree_module.tree_regression_travel = saved


def sweep():
    with open(CSV, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "seed", "s", "variant", "score", "anchor"])
        for name, n, eps, seed, X, y, X_te, y_te, anchor in bd.anchored_cells(
                DATASETS, bd.N_GRID, bd.EPS_GRID, SEEDS):
            s = defaults.snr(n, X.shape[1] + 1, defaults.budget_rho(eps, bd.DELTA))
            if s >= defaults.TREE_LONG_RUN_SNR:
                continue  # mini-batches when this ran (see dev_rules_tree_large_snr.py since)
            for v in VARIANTS:
                w.writerow([name, n, eps, seed, f"{s:.1f}", v,
                            f"{fit_score(v, X, y, X_te, y_te, eps, seed):.5f}", f"{anchor:.5f}"])
            fh.flush()
            print(name, n, eps, seed, flush=True)


def report():
    t = cell_means(CSV)
    keys, variants = sorted(t), list(VARIANTS)
    names = [d for d in DATASETS if any(k[0] == d for k in keys)]
    base = variants[0]
    lines = ["# dp_nsgd_tree's full-batch steps, travel and momentum on the squared loss (session 16)", "",
             f"Mean R^2 over the full-batch regression cells (s < 200) of the development and "
             f"first held-out parts ({SEEDS} seeds each); variants as *steps factor c, cap; "
             "(travel bounds), scale*: E = round(c s) steps within [2, cap], travel = sqrt(s) / "
             "scale within the bounds. *below anchor*: cells more than 0.02 below the Opacus "
             "anchor; *worst / best vs rule*: the largest loss and gain of a cell against the "
             "rule.", "",
             "| variant | mean | " + " | ".join(names)
             + " | s >= 40 | below anchor | worst vs rule | best vs rule |",
             "|---" * (len(names) + 6) + "|"]
    for v in variants:
        per = [np.mean([t[k][v] for k in keys if k[0] == nm]) for nm in names]
        hi = np.mean([t[k][v] for k in keys if t[k]["s"] >= 40])
        d = [t[k][v] - t[k][base] for k in keys]
        lines.append(f"| {v} | {np.mean([t[k][v] for k in keys]):.4f} | "
                     + " | ".join(f"{x:.4f}" for x in per)
                     + f" | {hi:.4f} | {sum(t[k][v] < t[k]['anchor'] - 0.02 for k in keys)}"
                     f" | {min(d):+.3f} | {max(d):+.3f} |")
    lines += cell_table(t, variants)
    (HERE / "results" / "dev_rules_tree_ridge_epochs.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def classification():
    """The full-batch momentum (0.5, 0.75) on the classification losses, against none."""
    datasets = ("adult", "breast_cancer", "digits", "make_classification")
    momenta = ("auto", 0.5, 0.75)
    scores = {}
    for name, n, eps, seed, X, y, X_te, y_te, _ in bd.anchored_cells(
            datasets, bd.N_GRID, bd.EPS_GRID, 3):
        s = defaults.snr(n, X.shape[1] + 1, defaults.budget_rho(eps, bd.DELTA))
        if not 5 <= s < defaults.TREE_LONG_RUN_SNR:
            continue
        for est in ("logistic", "svc"):
            for m in momenta:
                score = bd.skdp_fit(est, DPNSGDTree(momentum=m), X, y, X_te, y_te, eps, seed)[0]
                scores.setdefault((est, name, n, eps, s), {}).setdefault(m, []).append(score)
    lines = ["# dp_nsgd_tree's full-batch momentum on the classification losses (session 16)", "",
             "Mean accuracy (3 seeds) at the rule's epochs and step, momentum none (the rule) "
             "and the gain of 0.5 and 0.75; cells with 5 <= s < 200 of Adult, breast cancer, "
             "digits and make_classification.", "",
             "| estimator | data | n | eps | s | none | 0.5 | 0.75 |", "|---|---|---|---|---|---|---|---|"]
    gains = {}
    for (est, name, n, eps, s), by in sorted(scores.items()):
        base = np.mean(by["auto"])
        d = [np.mean(by[m]) - base for m in momenta[1:]]
        for m, g in zip(momenta[1:], d):
            gains.setdefault((est, m), []).append(g)
        lines.append(f"| {est} | {name} | {n} | {eps:g} | {s:.0f} | {base:.3f} | {d[0]:+.3f} | "
                     f"{d[1]:+.3f} |")
    lines += ["", "| estimator | momentum | mean gain | worst | best |", "|---|---|---|---|---|"]
    for (est, m), g in sorted(gains.items(), key=str):
        lines.append(f"| {est} | {m} | {np.mean(g):+.4f} | {min(g):+.3f} | {max(g):+.3f} |")
    (HERE / "results" / "dev_rules_tree_momentum_classification.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-5:]))


if __name__ == "__main__":
    {"sweep": sweep, "report": report, "classification": classification}[sys.argv[1]]()
