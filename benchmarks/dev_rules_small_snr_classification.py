"""Issue 15, session 17: dp_nag_opt's horizon and dp_nsgd_tree's epochs at small s.

On fresh seeds (``results/confirm_flagged_cells.md``) logistic regression on Adult's sex at
epsilon 0.3 (second held-out part, s = 6 and 12 on 106 one-hot columns) had dp_nsgd_tree and
dp_nag_opt 2.2 to 2.4 points below the Opacus anchor, dp_masg 1.6, while dp_gdws was within
noise of it. This sweep looks for the same on development data: every classification cell
(logistic, SVC) with 3 <= s <= 30 of the development part and of the first held-out part, 5
seeds, the cached anchors; the second held-out part is not loaded. Variants: the accelerated
horizon factor ``dp_nag_opt.HORIZON_C`` (1.5, the rule; 0.75 and 3) for dp_nag_opt and dp_masg, and
dp_nsgd_tree's full-batch epochs (``round(s)``, the rule; ``round(s / 2)`` and ``2 round(s)``).

    python benchmarks/dev_rules_small_snr_classification.py

writes ``results/dev_rules_small_snr_classification.md``.
"""

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

import skdp.optimizers._defaults as defaults  # noqa: E402
import skdp.optimizers.dp_nag_opt as dp_nag_opt  # noqa: E402
from skdp.optimizers.dp_nsgd_tree import DPNSGDTree  # noqa: E402

SEEDS = 5
DATASETS = ("adult", "breast_cancer", "digits", "make_classification")
S_RANGE = (3.0, 30.0)


def horizon(factor):
    def fit(est, X, y, X_te, y_te, eps, seed, s, name):
        old = dp_nag_opt.HORIZON_C["classification"]
        dp_nag_opt.HORIZON_C["classification"] = factor
        try:
            return bd.skdp_fit(est, name, X, y, X_te, y_te, eps, seed)[0]
        finally:
            dp_nag_opt.HORIZON_C["classification"] = old
    return fit


def tree(scale):
    def fit(est, X, y, X_te, y_te, eps, seed, s, name):
        epochs = int(min(defaults.TREE_MAX_FULL_BATCH_EPOCHS, max(2, round(scale * round(s)))))
        return bd.skdp_fit(est, DPNSGDTree(epochs=epochs), X, y, X_te, y_te, eps, seed)[0]
    return fit


VARIANTS = {
    "dp_nag_opt": {"horizon 1.5 (rule)": horizon(1.5), "horizon 0.75": horizon(0.75),
                   "horizon 3": horizon(3.0)},
    "dp_masg": {"horizon 1.5 (rule)": horizon(1.5), "horizon 0.75": horizon(0.75),
                "horizon 3": horizon(3.0)},
    "dp_nsgd_tree": {"round(s) (rule)": tree(1.0), "round(s) / 2": tree(0.5),
                     "2 round(s)": tree(2.0)},
}


def main():
    cells = {}
    for name, n, eps, seed, X, y, X_te, y_te, anchor in bd.anchored_cells(
            DATASETS, bd.N_GRID, bd.EPS_GRID, SEEDS):
        s = defaults.snr(n, X.shape[1] + 1, defaults.budget_rho(eps, bd.DELTA))
        if not S_RANGE[0] <= s <= S_RANGE[1]:
            continue
        for est in ("logistic", "svc"):
            for opt, variants in VARIANTS.items():
                c = cells.setdefault((opt, est, name, n, eps, round(s, 1)), {"anchor": []})
                c["anchor"].append(anchor)
                for label, fit in variants.items():
                    c.setdefault(label, []).append(fit(est, X, y, X_te, y_te, eps, seed, s, opt))
        print(name, n, eps, seed, flush=True)
    lines = ["# dp_nag_opt's horizon and dp_nsgd_tree's epochs at 3 <= s <= 30 (session 17)", "",
             f"Mean accuracy over {SEEDS} seeds, classification cells of the development and "
             "first held-out parts; `benchmarks/dev_rules_small_snr_classification.py` "
             "docstring. Gains in points against the rule; *below anchor*: cells more than 1 "
             "point below the Opacus anchor.", ""]
    for opt, variants in VARIANTS.items():
        labels = list(variants)
        mine = {k: {v: float(np.mean(x)) for v, x in c.items()}
                for k, c in sorted(cells.items()) if k[0] == opt}
        lines += [f"## {opt}", ""]
        lines += bd.cell_table(("estimator", "data", "n", "eps", "s"),
                               [((est, name, n, f"{eps:g}", f"{s:g}"), m)
                                for (_, est, name, n, eps, s), m in mine.items()], labels)
        lines += ["", "| variant | estimator | mean gain | worst | best | better | below anchor |",
                  "|---|---|---|---|---|---|---|"]
        for v in labels:
            for est in ("logistic", "svc"):
                ms = [m for k, m in mine.items() if k[1] == est]
                lines.append(f"| {v} | {est} | {bd.variant_row(v, ms, labels[0])} |")
        lines.append("")
    (HERE / "results" / "dev_rules_small_snr_classification.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
