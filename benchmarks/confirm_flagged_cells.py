"""Issue 15, session 17: fresh seeds for the cells the ten-seed grid flagged beyond its noise.

The ten-seed grid (``results/defaults_s16b_10seeds_criteria.md``) left three gaps beyond two
standard errors of the paired per-seed gap: on the second held-out part, ``make_classification_wide``
at n 1000, epsilon 1, dp_scd's logistic cell (2.5 points below the Opacus anchor) and
dp_nsgd_tree's SVC cell (2.2 points); on the first held-out part, the logistic default
(dp_gdws) on ``make_classification`` at n 30000, epsilon 0.3 (0.2 points). Cells picked for
looking bad look worse than they are (the selection picks the seeds' bad draws too), so their
size is measured again on seeds the grid did not use (10 .. 39): an unbiased estimate of each
flagged gap. No rule was changed between the grid and this run.

    python benchmarks/confirm_flagged_cells.py          # runs the cells (about 5 minutes), then
    python benchmarks/confirm_flagged_cells.py --report # rebuilds the report from the csv files

writes ``results/confirm_s17_wide.csv``, ``results/confirm_s17_mc30000.csv`` (bench_defaults.py's
rows) and ``results/confirm_flagged_cells.md``.
"""

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

FIRST_SEED, SEEDS = 10, 30
RUNS = {  # out stem: (data set, n, epsilon, estimators, the flagged (estimator, method) pairs)
    "confirm_s17_wide": ("make_classification_wide", 1000, 1.0, ("logistic", "svc"),
                         (("logistic", "dp_scd"), ("svc", "dp_nsgd_tree"))),
    "confirm_s17_mc30000": ("make_classification", 30000, 0.3, ("logistic",),
                            (("logistic", "auto"),)),
}
GRID = bd.RESULTS / "defaults_s16b_10seeds.csv"


def gaps(rows, dataset, n, eps, est):
    """``{method: per-seed score - anchor}`` (points) of one cell's rows."""
    cell = [r for r in rows if r["dataset"] == dataset and r["n"] == n and r["eps"] == eps
            and r["estimator"] == est]
    anchor = {r["seed"]: r["score"] for r in cell if r["method"] == "opacus"}
    out = {}
    for r in cell:
        if r["method"] != "opacus":
            out.setdefault(r["method"], {})[r["seed"]] = 100 * (r["score"] - anchor[r["seed"]])
    return {m: np.array([v[s] for s in sorted(v)]) for m, v in out.items()}


def _fmt(g):
    return f"{g.mean():+.2f} ({g.std(ddof=1) / np.sqrt(g.size):.2f})"


def report():
    grid = bd.with_auto(bd.read_csv(GRID))
    lines = ["# Fresh seeds for the cells the ten-seed grid flagged (session 17)", "",
             "`python benchmarks/confirm_flagged_cells.py` (see its docstring). Gap to the Opacus "
             "anchor in points of accuracy, mean over seeds (standard error of the paired "
             f"per-seed gap); *fresh*: seeds {FIRST_SEED} to {FIRST_SEED + SEEDS - 1}, which the "
             "grid did not use; *grid*: seeds 0 to 9 (`defaults_s16b_10seeds.csv`). Issue 15's "
             "tolerances: an optimizer within 1 point of the anchor, the default at or above it.", "",
             "| data | n | eps | estimator | optimizer | grid (10 seeds) | fresh (30 seeds) | "
             "fresh mean within the tolerance |", "|---|---|---|---|---|---|---|---|"]
    for stem, (dataset, n, eps, ests, flagged) in RUNS.items():
        fresh = bd.with_auto(bd.read_csv(bd.RESULTS / f"{stem}.csv"))
        for est, method in flagged:
            g10 = gaps(grid, dataset, n, eps, est)[method]
            g30 = gaps(fresh, dataset, n, eps, est)[method]
            limit = 0.0 if method == "auto" else -1.0
            lines.append(f"| {dataset} | {n} | {eps:g} | {est} | {method} | {_fmt(g10)} | "
                         f"{_fmt(g30)} | {'yes' if g30.mean() >= limit else 'no'} |")
    lines += ["", "The other optimizers of the same cells, fresh seeds:", "",
              "| data | n | eps | estimator | " + " | ".join(bd.OPTIMIZERS) + " | default |",
              "|---" * (len(bd.OPTIMIZERS) + 5) + "|"]
    for stem, (dataset, n, eps, ests, _) in RUNS.items():
        fresh = bd.with_auto(bd.read_csv(bd.RESULTS / f"{stem}.csv"))
        for est in ests:
            g = gaps(fresh, dataset, n, eps, est)
            lines.append(f"| {dataset} | {n} | {eps:g} | {est} | "
                         + " | ".join(_fmt(g[m]) for m in list(bd.OPTIMIZERS) + ["auto"]) + " |")
    path = bd.RESULTS / "confirm_flagged_cells.md"
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--report" not in argv:
        for stem, (dataset, n, eps, ests, _) in RUNS.items():
            bd.main(["--datasets", dataset, "--n", str(n), "--eps", str(eps), "--estimators",
                     *ests, "--seeds", str(SEEDS), "--first-seed", str(FIRST_SEED), "--out", stem])
    report()


if __name__ == "__main__":
    main()
