"""Development check (issue 15): the multinomial loss's default derivative clip.

A multiclass DPLogisticRegression clips the derivative vector ``softmax(z) - onehot`` of one
example. Its never-active bound is sqrt(2); at W = 0, where a private gradient method starts,
the vector has norm ``sqrt((K - 1) / K)``. This script fits every gradient method and dp_scd
on standardised, unit-norm multiclass data sets (digits K = 10, wine K = 3, iris K = 3; 75/25
stratified split; ``data_norm=1``) at epsilon 0.3, 1 and 3, 3 seeds, with the derivative clip
at sqrt(2), at the size at W = 0, at half of it, and at the "auto" rule
(:func:`skdp.optimizers._defaults.logistic_loss_clip`), and a large-n generated set
(``make_classification`` K = 5, 30000 rows) for the rule's opening to sqrt(2).

Run: ``python benchmarks/dev_rules_multinomial_clip.py``; writes
``benchmarks/results/dev_rules_multinomial_clip.md``.
"""

import math
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine, make_classification
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import bench_defaults as bd  # noqa: E402
from skdp import DPLogisticRegression  # noqa: E402

OPTIMIZERS = ("dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree", "dp_scd")
EPS = (0.3, 1.0, 3.0)
SEEDS = 3


def _prepared(X, y, test_size=0.25):
    """Standardised unit rows, as the defaults grid prepares its public sets."""
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, random_state=0,
                                              stratify=y)
    X_tr, X_te = bd._standardise(X_tr, X_te)
    return X_tr, y_tr, X_te, y_te


def datasets():
    X5, y5 = make_classification(n_samples=38000, n_features=20, n_informative=10,
                                 n_classes=5, random_state=5)
    return {
        "digits (K = 10)": _prepared(*load_digits(return_X_y=True)),
        "wine (K = 3)": _prepared(*load_wine(return_X_y=True)),
        "iris (K = 3)": _prepared(*load_iris(return_X_y=True)),
        "make_classification (K = 5)": _prepared(X5, y5, test_size=8000),
    }


def main():
    lines = ["# The multinomial loss's derivative clip (development check, issue 15)", "",
             "`python benchmarks/dev_rules_multinomial_clip.py`: test accuracy, mean over "
             f"{SEEDS} seeds, delta 1e-5, data_norm = 1. Columns: the clip at the never-active "
             "sqrt(2), at the derivative's size at W = 0 (sqrt((K-1)/K)), at half of that, and "
             "\"auto\" (the rule; its value in parentheses).", "",
             "| data | n | eps | optimizer | sqrt(2) | size at 0 | half | auto |",
             "|---|---|---|---|---|---|---|---|"]
    for name, (X_tr, y_tr, X_te, y_te) in datasets().items():
        K = len(np.unique(y_tr))
        at_zero = math.sqrt((K - 1) / K)
        for eps in EPS:
            for opt in OPTIMIZERS:
                cells = []
                for clip in (math.sqrt(2.0), at_zero, at_zero / 2, "auto"):
                    scores, used = [], None
                    for seed in range(SEEDS):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            m = DPLogisticRegression(epsilon=eps, delta=1e-5, data_norm=1.0,
                                                     optimizer=opt, derivative_clip=clip,
                                                     random_state=seed).fit(X_tr, y_tr)
                        scores.append(m.score(X_te, y_te))
                        used = m.derivative_clip_
                    cells.append(f"{np.mean(scores):.3f}" + (f" ({used:.2f})" if clip == "auto" else ""))
                lines.append(f"| {name} | {len(y_tr)} | {eps:g} | {opt} | " + " | ".join(cells) + " |")
                print(lines[-1], flush=True)
    (HERE / "results" / "dev_rules_multinomial_clip.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
