"""Issue 15, session 40: a binary DPLogisticRegression's ``optimizer="auto"`` with a public row
bound, dp_gdws everywhere or dp_scd in a band of the signal-to-noise ratio.

The tenth held-out part (session 38, unseen when run) had dp_scd closer to the best of the six
optimizers than the default (dp_gdws) in the logistic cells with n >= 3000 and epsilon <= 0.3
(0.12 against 0.69 points from the best), and at n < 3000, epsilon <= 0.3 (0.47 against 1.03).
The classifiers' rule can run dp_scd only with a public row bound (a choice made before any
private release: :meth:`skdp.linear_model._base.DPLinearModel._dual_preferred`), so this
measures the switch at the defaults grid's public row bound (``data_norm=1``) on every looked-at
binary classification set (every part but the tenth and eleventh held-out ones, which are never
loaded), in the grid's cells with ``s = n sqrt(2 rho) / sqrt(p) < MAX_SNR`` (p: features and
intercept), seeds 0 to 9.

``report`` writes ``results/dev_rules_logistic_scd_band.md``: per band ``lo <= s < hi`` (dp_scd
inside it), the mean paired gain over the cells it moves and the cells more than a point (the
issue's tolerance) behind. The decision rule, fixed before the sweep ran: among the bands whose
switch gains on average with no cell more than a point behind, adopt the one that moves the
most cells (ties: the lower band); none: no change. An adopted band is then judged on the
eleventh held-out part before it lands.

    python benchmarks/dev_rules_logistic_scd_band.py sweep 0 2 &   # two shards of the sets,
    python benchmarks/dev_rules_logistic_scd_band.py sweep 1 2     # one per core
    python benchmarks/dev_rules_logistic_scd_band.py report
"""

import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from dev_rules_logistic_tree import accuracy, small_snr_cells, switch_row  # noqa: E402
from dev_rules_ridge_masg import cell_snr, looked_at_sets  # noqa: E402

OPTIMIZERS = ("dp_gdws", "dp_scd")
SEEDS = range(10)
MAX_SNR = 80.0
LOWER = (0, 5, 10, 15, 20)
UPPER = (10, 15, 20, 30, 40, 60, 80)
UNSEEN = ("heldout10", "heldout11")  # never loaded (the tenth was looked at, as a whole, in s38)
OUT = HERE / "results" / "dev_rules_logistic_scd_band.csv"


def looked_at_binary_sets():
    return looked_at_sets(UNSEEN, lambda task, y: task == "classification"
                          and np.unique(y).size == 2)


def shard(part, parts):
    return OUT.with_name(f"{OUT.stem}_{part}of{parts}.csv")


def sweep(part="0", parts="1"):
    part, parts = int(part), int(parts)
    names = looked_at_binary_sets()
    assert not set(names) & set(bd.HELDOUT10 + bd.HELDOUT11)
    with open(shard(part, parts), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "s", "seed", "optimizer", "score"])
        for name, n, eps, s in small_snr_cells(names[part::parts], MAX_SNR):
            for seed in SEEDS:
                _, X, y, X_te, y_te = bd.subsample(name, n, seed)
                for optimizer in OPTIMIZERS:
                    score = accuracy(optimizer, 1.0, X, y, X_te, y_te, eps, seed)
                    w.writerow([name, n, eps, f"{s:.3f}", seed, optimizer, f"{score:.5f}"])
            fh.flush()
            print(name, n, eps, f"s={s:.1f}", flush=True)


def gaps():
    """``[(s, dataset, n, eps, mean paired gain of dp_scd over dp_gdws in points, s.e.)]``,
    by increasing s, from every shard of the sweep."""
    cells = defaultdict(lambda: defaultdict(dict))
    for path in sorted(OUT.parent.glob(f"{OUT.stem}_*of*.csv")):
        with open(path) as fh:
            for r in csv.DictReader(fh):
                cells[(r["dataset"], int(r["n"]), float(r["eps"]))][r["optimizer"]][
                    int(r["seed"])] = float(r["score"])
    out = []
    for (name, n, eps), by in cells.items():
        seeds = sorted(set(by["dp_gdws"]) & set(by["dp_scd"]))
        g = 100 * np.array([by["dp_scd"][k] - by["dp_gdws"][k] for k in seeds])
        out.append((cell_snr(name, n, eps), name, n, eps, float(g.mean()),
                    float(g.std(ddof=1) / np.sqrt(len(g)))))
    return sorted(out)


def bands():
    return [(lo, hi) for lo in LOWER for hi in UPPER if lo < hi]


def decide(rows):
    """The decision rule of the docstring: ``(lo, hi)`` or None (no change)."""
    best = None
    for lo, hi in bands():
        g = [row[4] for row in rows if lo <= row[0] < hi]
        if not g or np.mean(g) <= 0 or min(g) < -1.0:
            continue
        if best is None or len(g) > best[0]:
            best = (len(g), (lo, hi))
    return None if best is None else best[1]


def report():
    rows = gaps()
    lines = ["# Binary DPLogisticRegression, public row bound: dp_scd against dp_gdws in a band "
             "of s\n",
             "`python benchmarks/dev_rules_logistic_scd_band.py` (its docstring has the decision "
             "rule, fixed before the sweep). Looked-at binary classification sets of every "
             "part but the tenth and eleventh held-out ones (never loaded); the defaults grid's "
             "public row bound. Gain: dp_scd's accuracy minus dp_gdws's in points, paired by "
             f"seed (seeds {SEEDS.start} to {SEEDS.stop - 1}), mean over a cell's seeds; per "
             "band, over the cells with lo <= s < hi.\n",
             "| band of s | cells switched | mean gain | cells behind by > 1 | worst cell | "
             "cells ahead by > 1 |", "|---|---|---|---|---|---|"]
    for lo, hi in bands():
        kept = [row for row in rows if lo <= row[0] < hi]
        if kept:
            lines.append(switch_row(f"[{lo}, {hi})", kept))
    chosen = decide(rows)
    lines.append("\n**Decision:** " + (
        "no band meets the rule: no change." if chosen is None else
        f"dp_scd for {chosen[0]} <= s < {chosen[1]}, to be judged on the eleventh held-out "
        "part."))
    lines += ["\n## Per cell\n", "| data | n | eps | s | gain | s.e. |", "|---|---|---|---|---|---|"]
    for s, name, n, eps, g, se in rows:
        lines.append(f"| {name} | {n} | {eps:g} | {s:.1f} | {g:+.2f} | {se:.2f} |")
    path = OUT.with_suffix(".md")
    path.write_text("\n".join(lines) + "\n")
    print("wrote", path, "decision:", chosen)


if __name__ == "__main__":
    {"sweep": sweep, "report": report}[sys.argv[1]](*sys.argv[2:])
