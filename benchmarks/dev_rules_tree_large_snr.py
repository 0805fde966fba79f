"""Issue 15, session 16: dp_nsgd_tree's default batch from s = 200.

Until session 16, dp_nsgd_tree's ``batch_size="auto"`` was the full batch below s = 200 and
from it mini-batches of about 2000 rows (``M = min(16, max(4, round(n / 2000)))`` steps per
epoch, 20 epochs, momentum ``1 - 1/M``). The threshold 200 was set in session 10 for the squared
loss, whose full batch then had no momentum. This sweep compares, in every cell with s >= 200,
those mini-batches with the full batch for 40 and 80 epochs (the squared loss with the momentum
0.5 its full batch keeps since session 16; the classification losses without). The
classification cells with 40 <= s < 200 also compare the full batch's cap of 40 epochs with 80.

Data: the development part and the first held-out part (used as development data since session
16). The second held-out part had shown dp_nsgd_tree's classification cells at s = 207 (n 30000,
epsilon 0.3) 1.6 to 1.7 points below the anchor before this sweep was run; it is not loaded here,
and its figures for dp_nsgd_tree after the change are no longer an unbiased check. The grid's
preprocessing and public bounds, seeds 0..4, the cached Opacus anchors.

    python benchmarks/dev_rules_tree_large_snr.py

writes ``results/dev_rules_tree_large_snr.md``.
"""

import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

import skdp.optimizers._defaults as defaults  # noqa: E402
from skdp.optimizers.dp_nsgd_tree import DPNSGDTree  # noqa: E402

SEEDS = 5
GROUPS = {
    "classification, s >= 200": (("adult", "digits", "make_classification"),
                                 ("logistic", "svc"), 200.0, math.inf),
    "squared loss, s >= 200": (("wine", "make_regression", "adult_hours",
                                "make_regression_lowrank"), ("ridge",), 200.0, math.inf),
    "classification, 40 <= s < 200": (("adult", "digits", "breast_cancer", "make_classification"),
                                      ("logistic", "svc"), 40.0, 200.0),
}


def variants(n, s, est, high):
    """{label: DPNSGDTree keyword arguments} of the variants compared in a cell."""
    squared = {"momentum": 0.5} if est == "ridge" else {}
    if high:
        M = int(min(16, max(4, round(n / 2000))))
        return {"mini-batches (rule before)": {"batch_size": -(-n // M), "epochs": 20},
                "full batch, 40 epochs": {"batch_size": None, "epochs": 40, **squared},
                "full batch, 80 epochs": {"batch_size": None, "epochs": 80, **squared}}
    return {"full batch, round(s) in [2, 40]": {"batch_size": None, "epochs": min(40, round(s))},
            "full batch, round(s) in [2, 80]": {"batch_size": None, "epochs": min(80, round(s))}}


def main():
    lines = ["# dp_nsgd_tree's default batch from s = 200 (session 16)", "",
             f"Mean score (accuracy; R^2 for ridge) over {SEEDS} seeds per cell, development and "
             "first held-out parts; `benchmarks/dev_rules_tree_large_snr.py` docstring.", ""]
    for group, (datasets, estimators, lo, hi) in GROUPS.items():
        cells = {}
        for name, n, eps, seed, X, y, X_te, y_te, anchor in bd.anchored_cells(
                datasets, bd.N_GRID, bd.EPS_GRID, SEEDS):
            s = defaults.snr(n, X.shape[1] + 1, defaults.budget_rho(eps, bd.DELTA))
            if not lo <= s < hi:
                continue
            for est in estimators:
                c = cells.setdefault((est, name, n, eps, s), {"anchor": []})
                c["anchor"].append(anchor)
                for label, kw in variants(n, s, est, hi == math.inf).items():
                    score = bd.skdp_fit(est, DPNSGDTree(**kw), X, y, X_te, y_te, eps, seed)[0]
                    c.setdefault(label, []).append(score)
            print(group, name, n, eps, seed, flush=True)
        labels = [k for k in next(iter(cells.values())) if k != "anchor"]
        lines += [f"## {group}", "", "| estimator | data | n | eps | s | anchor | "
                  + " | ".join(labels) + " |", "|---" * (len(labels) + 6) + "|"]
        gains = {k: [] for k in labels[1:]}
        for (est, name, n, eps, s), c in sorted(cells.items()):
            base = np.mean(c[labels[0]])
            for k in labels[1:]:
                gains[k].append(np.mean(c[k]) - base)
            lines.append(f"| {est} | {name} | {n} | {eps:g} | {s:.0f} | {np.mean(c['anchor']):.4f} | "
                         + " | ".join(f"{np.mean(c[k]):.4f}" for k in labels) + " |")
        lines += ["", f"Against *{labels[0]}*:", "", "| variant | mean | worst | best | better cells |",
                  "|---|---|---|---|---|"]
        for k, g in gains.items():
            lines.append(f"| {k} | {np.mean(g):+.4f} | {min(g):+.4f} | {max(g):+.4f} | "
                         f"{sum(x > 0 for x in g)} of {len(g)} |")
        lines.append("")
    (HERE / "results" / "dev_rules_tree_large_snr.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
