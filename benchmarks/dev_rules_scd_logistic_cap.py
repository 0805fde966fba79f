"""Issue 15, session 17: dp_scd's update clip for the binary logistic loss at large s.

dp_scd's ``update_clip="auto"`` is ``min(CLIP_MAX, (n / z / 100) ** 0.75)`` times the natural
dual step for the binary logistic loss (session 12). The cap 2 binds from ``n / z >= 252``: at
epsilon 3 from n = 500, at epsilon 1 from about n = 1100. There dp_scd trailed the other
optimizers on the development part (Adult n 500, epsilon 3: about a point behind the other
five) and on the second held-out part (``make_classification_wide`` n 1000, epsilon 1: 2.5
points below the Opacus anchor). This sweep compares, in every binary logistic cell where the
cap binds, the caps 2 (the rule), 3, 4 and 8, and the cap 2 with 20 epochs instead of 10.

Data: the development part and the first held-out part (development data since session 16);
the second held-out part is not loaded. The grid's preprocessing and public bounds, seeds
0..4, the cached Opacus anchors.

    python benchmarks/dev_rules_scd_logistic_cap.py

writes ``results/dev_rules_scd_logistic_cap.md``.
"""

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

import skdp.optimizers.dp_scd as dp_scd  # noqa: E402

SEEDS = 5
DATASETS = ("adult", "breast_cancer", "digits", "make_classification")
VARIANTS = {"cap 2 (rule)": (2.0, 10), "cap 3": (3.0, 10), "cap 4": (4.0, 10),
            "cap 8": (8.0, 10), "cap 2, 20 epochs": (2.0, 20)}
BINDS = 100.0 * 2.0 ** (1 / 0.75)  # n / z from which the cap 2 binds


def main():
    cells = {}
    for name, n, eps, seed, X, y, X_te, y_te, anchor in bd.anchored_cells(
            DATASETS, bd.N_GRID, bd.EPS_GRID, SEEDS):
        if np.unique(y).size != 2 or n / dp_scd._gaussian_multiplier(eps, bd.DELTA) < BINDS:
            continue
        c = cells.setdefault(("logistic", name, n, eps), {"anchor": []})
        c["anchor"].append(anchor)
        kept = dp_scd.CLIP_MAX["logistic"]
        for label, (cap, epochs) in VARIANTS.items():
            dp_scd.CLIP_MAX["logistic"] = cap
            try:
                score = bd.skdp_fit("logistic", dp_scd.DPSCD(epochs=epochs), X, y, X_te, y_te,
                                    eps, seed)[0]
            finally:
                dp_scd.CLIP_MAX["logistic"] = kept
            c.setdefault(label, []).append(score)
        print(name, n, eps, seed, flush=True)
    labels = list(VARIANTS)
    lines = ["# dp_scd's binary logistic update clip where its cap binds (session 17)", "",
             f"Mean accuracy over {SEEDS} seeds per cell, development and first held-out parts; "
             "`benchmarks/dev_rules_scd_logistic_cap.py` docstring.", ""]
    means = {k: {v: float(np.mean(x)) for v, x in c.items()} for k, c in sorted(cells.items())}
    lines += bd.cell_table(("data", "n", "eps"),
                           [((name, n, f"{eps:g}"), m) for (_, name, n, eps), m in means.items()],
                           labels)
    lines += ["", f"Against *{labels[0]}* (points of accuracy); *below anchor*: cells more than "
              "1 point below the Opacus anchor:", ""]
    lines += bd.variant_table(list(means.values()), labels)
    (HERE / "results" / "dev_rules_scd_logistic_cap.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
