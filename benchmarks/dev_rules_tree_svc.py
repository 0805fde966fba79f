"""Issue 15, session 17: dp_nsgd_tree's step and epochs for the squared hinge (DPLinearSVC).

dp_nsgd_tree was the weakest DPLinearSVC optimizer on all three held-out parts (third part: 9 of
its 17 cells more than a point below the Opacus anchor). Its classification step
``eta_0 = TREE_CLASSIFICATION_STEP / R`` (8, a travel of ``4 E / R``) and epochs ``round(s)``
were fitted on the logistic loss. This sweep compares, on every DPLinearSVC cell of the
development and first held-out parts (5 seeds, cached anchors; the second and third held-out
parts not loaded), the step factors 8 (the rule before this sweep; 4 since, the squared
hinge's ``TREE_SQUARED_HINGE_STEP``, which the sweep sets), 4 and 2, and 8 with half the
epochs.

    python benchmarks/dev_rules_tree_svc.py

writes ``results/dev_rules_tree_svc.md``.
"""

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
DATASETS = ("adult", "breast_cancer", "digits", "make_classification")
# step 8 was the rule when the sweep was run (4 since)
VARIANTS = {"step 8 (rule)": (8.0, 1.0), "step 4": (4.0, 1.0), "step 2": (2.0, 1.0),
            "step 8, half the epochs": (8.0, 0.5)}


def main():
    cells = {}
    for name, n, eps, seed, X, y, X_te, y_te, anchor in bd.anchored_cells(
            DATASETS, bd.N_GRID, bd.EPS_GRID, SEEDS):
        s = defaults.snr(n, X.shape[1] + 1, defaults.budget_rho(eps, bd.DELTA))
        E = defaults.tree_epochs(n, X.shape[1] + 1, defaults.budget_rho(eps, bd.DELTA))
        c = cells.setdefault((name, n, eps, round(s)), {"anchor": []})
        c["anchor"].append(anchor)
        for label, (step, scale) in VARIANTS.items():
            kept = defaults.TREE_SQUARED_HINGE_STEP  # read when the optimizer resolves eta_0
            defaults.TREE_SQUARED_HINGE_STEP = step
            try:
                opt = DPNSGDTree(epochs=max(2, round(scale * E)))
                score = bd.skdp_fit("svc", opt, X, y, X_te, y_te, eps, seed)[0]
            finally:
                defaults.TREE_SQUARED_HINGE_STEP = kept
            c.setdefault(label, []).append(score)
        print(name, n, eps, seed, flush=True)
    labels = list(VARIANTS)
    means = {k: {v: float(np.mean(x)) for v, x in c.items()} for k, c in sorted(cells.items())}
    lines = ["# dp_nsgd_tree's step and epochs for DPLinearSVC (session 17)", "",
             f"Mean accuracy over {SEEDS} seeds, every DPLinearSVC cell of the development and "
             "first held-out parts; `benchmarks/dev_rules_tree_svc.py` docstring.", ""]
    lines += bd.cell_table(("data", "n", "eps", "s"),
                           [((name, n, f"{eps:g}", s), m)
                            for (name, n, eps, s), m in means.items()], labels)
    lines += ["", f"Against *{labels[0]}* (points); *below anchor*: cells more than 1 point below "
              "the Opacus anchor:", ""]
    lines += bd.variant_table(list(means.values()), labels)
    (HERE / "results" / "dev_rules_tree_svc.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
