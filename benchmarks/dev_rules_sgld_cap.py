"""Issue 16 x 15: dp_sgld's step count where its classification rule (Langevin time
16 s / (G R) at step 1 / (2 beta), 5..1000 steps) asks for many steps (large n or epsilon).

The cap on the count (``_defaults.MAX_STEPS``, shared by the full-batch rules) is lowered to each
candidate for dp_sgld's fits only, in the large-s cells of ``bench_defaults.py``'s grid (dev:
Adult n 5000, 30000; held-out: make_classification n 5000, 30000; epsilon 0.3, 1, 3), 3 seeds,
the grid's preprocessing, data_norm and delta. Writes ``results/dev_rules_sgld_cap.md``.

    python benchmarks/dev_rules_sgld_cap.py
"""

import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_defaults import DELTA, subsample  # noqa: E402

import skdp.optimizers._defaults as rules  # noqa: E402
from skdp import DPLinearSVC, DPLogisticRegression  # noqa: E402

CAPS = (100, 200, 400, 1000)  # 1000: the current cap
CELLS = {"dev": [("adult", 5000), ("adult", 30000)],
         "held-out": [("make_classification", 5000), ("make_classification", 30000)]}


def main():
    lines = ["# dp_sgld: step cap in the large-s cells\n",
             "`python benchmarks/dev_rules_sgld_cap.py`. Mean test accuracy over 3 seeds; the "
             "resolved step count is min(cap, the rule's count).\n"]
    gaps = {}
    for est_name, cls in (("logistic", DPLogisticRegression), ("svc", DPLinearSVC)):
        lines += [f"\n## {est_name}\n", "| part | data | n | eps | steps at cap 1000 | " +
                  " | ".join(f"cap {c}" for c in CAPS) + " |", "|---|---|---|---|---|" + "---|" * len(CAPS)]
        for part, cells in CELLS.items():
            for name, n in cells:
                for eps in (0.3, 1.0, 3.0):
                    means, steps = {}, None
                    for cap in CAPS:
                        rules.MAX_STEPS = cap
                        scores = []
                        for seed in range(3):
                            _, X, y, X_te, y_te = subsample(name, n, seed)
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                m = cls(epsilon=eps, delta=DELTA, optimizer="dp_sgld",
                                        data_norm=1.0, random_state=seed).fit(X, y)
                            scores.append(m.score(X_te, y_te))
                            if cap == 1000:
                                steps = m.n_iter_
                        means[cap] = float(np.mean(scores))
                    rules.MAX_STEPS = 1000
                    for cap in CAPS[:-1]:
                        gaps.setdefault((est_name, part, cap), []).append(means[cap] - means[1000])
                    lines.append(f"| {part} | {name} | {n} | {eps} | {steps} | " +
                                 " | ".join(f"{means[c]:.4f}" for c in CAPS) + " |")
                    print(lines[-1], flush=True)
    lines.append("\nMean (worst) gap to cap 1000:\n")
    for (est_name, part, cap), g in gaps.items():
        lines.append(f"- {est_name}, {part}, cap {cap}: {np.mean(g):+.4f} ({min(g):+.4f})")
    (HERE / "results" / "dev_rules_sgld_cap.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-13:]))


if __name__ == "__main__":
    main()
