"""Issue 15, session 22: would dp_gdws's classification cap of 100 steps be better at 200?

The default at n 30000 and epsilon 0.3 sits 0.1 to 0.3 points under the Opacus anchor on two
held-out sets, where every fit takes the capped 100 steps (``GDWS_MAX_CLASSIFICATION``, issue
16's speed cap). This script measures the development part only (Adult, n 10000 and 30000,
where the rule's ``4 s`` asks for more than 100 steps): dp_gdws at its defaults with
``max_iter`` forced to 100 (today's count), 200 and 400, the grid's data, data_norm and delta,
6 seeds. Writes ``results/dev_rules_gdws_cap200.md`` (mean accuracy at 100 steps, and the paired
per-seed gain of 200 and 400 steps with its standard error).

The first held-out part was measured for the same counts in session 16
(``results/dev_rules_gdws_cap.md``: 200 steps level with 100 on ``make_classification``), so a
new cap would need the fourth held-out part (``bench_defaults.py --heldout heldout4``) to judge it.

    python benchmarks/dev_rules_gdws_cap200.py
"""

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_defaults import skdp_fit, subsample  # noqa: E402

from skdp import DPGDWS  # noqa: E402

COUNTS = (100, 200, 400)
SEEDS = range(6)
CELLS = [(n, eps) for n in (10000, 30000) for eps in (0.3, 1.0, 3.0)]


def main():
    lines = ["# dp_gdws: 100, 200 or 400 steps where the classification rule is capped\n",
             "`python benchmarks/dev_rules_gdws_cap200.py`. Development part only (Adult); "
             "mean test accuracy at 100 steps over 6 seeds, and the paired per-seed gain of "
             "200 and 400 steps in points (standard error of the mean gain).\n",
             "| estimator | n | eps | 100 steps | 200 steps: gain | 400 steps: gain |",
             "|---|---|---|---|---|---|"]
    for est in ("logistic", "svc"):
        for n, eps in CELLS:
            scores = {T: [] for T in COUNTS}
            for seed in SEEDS:
                _, X, y, X_te, y_te = subsample("adult", n, seed)
                for T in COUNTS:
                    scores[T].append(skdp_fit(est, DPGDWS(max_iter=T), X, y, X_te, y_te, eps,
                                              seed)[0])
            base = np.array(scores[100])
            cells = []
            for T in COUNTS[1:]:
                gain = (np.array(scores[T]) - base) * 100
                cells.append(f"{gain.mean():+.2f} ({gain.std(ddof=1) / np.sqrt(len(gain)):.2f})")
            lines.append(f"| {est} | {n} | {eps:g} | {base.mean():.4f} | " + " | ".join(cells)
                         + " |")
            print(lines[-1], flush=True)
    out = HERE / "results" / "dev_rules_gdws_cap200.md"
    out.write_text("\n".join(lines) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
