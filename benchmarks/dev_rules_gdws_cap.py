"""Issue 16 x 15: how many full-batch steps dp_gdws needs where its classification rule
(T = 4 s, 100..1000) asks for more than 100 (large n or epsilon).

For each cell of ``bench_defaults.py``'s grid where the rule gives T > 100 (development part:
Adult, digits; held-out part: make_classification), dp_gdws is fitted at its defaults with
``max_iter`` forced to each of the candidate counts, 3 seeds, the same preprocessing, data_norm
and delta as the grid. Writes ``results/dev_rules_gdws_cap.md`` (mean test accuracy per cell
and step count, and each count's mean gap to the rule's own count).

    python benchmarks/dev_rules_gdws_cap.py
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_defaults import DELTA, subsample  # noqa: E402

from skdp import DPLinearSVC, DPLogisticRegression  # noqa: E402
from skdp import DPGDWS  # noqa: E402
from skdp.optimizers._defaults import budget_rho, gdws_steps  # noqa: E402

COUNTS = (50, 70, 100, 200, None)  # None: the rule's own count
CELLS = {"dev": [("adult", n) for n in (2000, 5000, 30000)] + [("digits", 1347)],
         "held-out": [("make_classification", n) for n in (2000, 5000, 30000)]}
EPS = (0.1, 0.3, 1.0, 3.0)
SEEDS = (0, 1, 2)


def main():
    lines = ["# dp_gdws: step count where the classification rule asks for more than 100\n",
             "`python benchmarks/dev_rules_gdws_cap.py`. Mean test accuracy over 3 seeds "
             "(bench_defaults.py's data, data_norm 1, delta 1e-5); *rule* = T = 4 s within "
             "[100, 1000]; cells where the rule gives T <= 100 are left out.\n"]
    gaps = {est: {part: {c: [] for c in COUNTS[:-1]} for part in CELLS} for est in ("logistic", "svc")}
    for est_name, cls in (("logistic", DPLogisticRegression), ("svc", DPLinearSVC)):
        lines.append(f"\n## {est_name}\n")
        lines.append("| part | data | n | eps | rule T | " + " | ".join(
            f"T={c}" for c in COUNTS[:-1]) + " | rule | fit s (T=100 / rule) |")
        lines.append("|---|---|---|---|---|" + "---|" * (len(COUNTS) + 1))
        for part, cells in CELLS.items():
            for name, n in cells:
                for eps in EPS:
                    _, X, y, X_te, y_te = subsample(name, n, 0)
                    d = X.shape[1] + 1
                    T_rule = gdws_steps("logistic", X.shape[0], d, budget_rho(eps, DELTA))
                    if T_rule <= 100:
                        continue
                    means, times = {}, {}
                    for c in COUNTS:
                        scores, ts = [], []
                        for seed in SEEDS:
                            _, X, y, X_te, y_te = subsample(name, n, seed)
                            opt = DPGDWS(max_iter=c)
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                t0 = time.perf_counter()
                                m = cls(epsilon=eps, delta=DELTA, optimizer=opt, data_norm=1.0,
                                        random_state=seed).fit(X, y)
                                ts.append(time.perf_counter() - t0)
                            scores.append(m.score(X_te, y_te))
                        means[c], times[c] = float(np.mean(scores)), float(np.median(ts))
                    for c in COUNTS[:-1]:
                        gaps[est_name][part][c].append(means[c] - means[None])
                    lines.append(f"| {part} | {name} | {n} | {eps} | {T_rule} | " + " | ".join(
                        f"{means[c]:.4f}" for c in COUNTS) + f" | {times[100]:.3f} / {times[None]:.3f} |")
                    print(lines[-1], flush=True)
        lines.append("\nMean (worst) gap to the rule's count, per part:\n")
        for part in CELLS:
            lines.append(f"- {part}: " + "; ".join(
                f"T={c}: {np.mean(g):+.4f} ({min(g):+.4f})" for c, g in gaps[est_name][part].items() if g))
    out = HERE / "results" / "dev_rules_gdws_cap.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-4:]))


if __name__ == "__main__":
    main()
