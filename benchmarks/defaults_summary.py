"""Which optimizer when, in one table per estimator: issue 15's grid summarised for the docs.

Run: ``python benchmarks/defaults_summary.py --grids a.csv b.csv ... [--judge c.csv ...]
[--exclude make_classification_hard] --out defaults_s36_summary``.

``--grids`` are pieces of ``bench_defaults.py`` runs at the current rules, merged as
``defaults_report.py`` merges them (a row per part, data set, estimator, method, n, epsilon and
seed; a later piece wins), with the default's column ``auto`` derived from the optimizer its
public rule runs in the cell (``bench_defaults.with_auto``). ``--judge`` are the pieces of a
held-out part that no rule has seen, summarised on their own.

For each estimator and each of four regimes of n and epsilon (n below or from 3000; epsilon up
to 0.3 or from 1), the mean over the regime's cells of each method's distance to the best of the
six optimizers in the cell (how far behind it, mean over seeds; points of accuracy, or R^2 for
ridge; 0 = the best in every cell), the number of cells, and how many cells have each method
more than the issue's tolerance (1 point, 0.02 of R^2) below the Opacus anchor. Writes ``results/<out>.md`` and
``results/<out>.rst`` (list-tables for the docs).

Session 36's tables (``results/defaults_s36_summary.*``, the docs' "Which optimizer when"): every
part at today's rules, the eighth held-out part as the judge; from the repository root::

    R=benchmarks/results
    python benchmarks/defaults_summary.py --grids $R/defaults_s35_10seeds.csv \
        $R/defaults_s36_svc_scd_s17b.csv $R/defaults_s23_heldout4.csv \
        $R/defaults_s36_scd_heldout4.csv $R/defaults_s31_heldout5_10seeds.csv \
        $R/defaults_s36_scd_heldout5.csv $R/defaults_s32_heldout6_10seeds.csv \
        $R/defaults_s36_scd_heldout6.csv $R/defaults_s35_heldout7_10seeds.csv \
        $R/defaults_s36_svc_scd_heldout7.csv --judge $R/defaults_s36_heldout8_10seeds.csv \
        --out defaults_s36_summary

Session 37's (``results/defaults_s37_summary.*``): the same pieces and the eighth part's as
looked-at grids, the ninth held-out part as the judge::

    python benchmarks/defaults_summary.py --grids (the ten pieces above) \
        $R/defaults_s36_heldout8_10seeds.csv --judge $R/defaults_s37_heldout9_10seeds.csv \
        --out defaults_s37_summary

Session 38's (``results/defaults_s38_summary.*``, the docs' tables since): the same pieces and
the ninth part's as looked-at grids, the tenth held-out part as the judge::

    python benchmarks/defaults_summary.py --grids (the eleven pieces above) \
        $R/defaults_s37_heldout9_10seeds.csv --judge $R/defaults_s38_heldout10_10seeds.csv \
        --out defaults_s38_summary

Session 43's (``results/defaults_s43_summary.*``, not yet in the docs): the same pieces and the
tenth and eleventh parts' as looked-at grids, the twelfth held-out part as the judge, with
``--exclude make_classification_hard``::

    python benchmarks/defaults_summary.py --grids (the twelve pieces above) \
        $R/defaults_s38_heldout10_10seeds.csv $R/defaults_s42_heldout11_10seeds.csv \
        --judge $R/defaults_s43_heldout12_10seeds.csv --exclude make_classification_hard \
        --out defaults_s43_summary

Session 45's (``results/defaults_s45_summary.*``, not in the docs): the same pieces and the
twelfth part's as looked-at grids, the thirteenth held-out part as the judge::

    python benchmarks/defaults_summary.py --grids (the fourteen pieces above) \
        $R/defaults_s43_heldout12_10seeds.csv --judge $R/defaults_s45_heldout13_10seeds.csv \
        --exclude make_classification_hard --out defaults_s45_summary

Session 51's (``results/defaults_s51_summary.*``, the docs' tables since): the same pieces, the
thirteenth part's and the fourteenth part's (run in full in session 51) as looked-at grids, with
the accelerated classifiers rerun at ``KAPPA_C`` 1.5 on every looked-at classification set
(``defaults_s51_nag_masg_all.csv``, last, so it wins), the fifteenth held-out part as the
judge::

    python benchmarks/defaults_summary.py --grids (the fifteen pieces above) \
        $R/defaults_s45_heldout13_10seeds.csv $R/defaults_s51_heldout14_10seeds.csv \
        $R/defaults_s51_nag_masg_all.csv --judge $R/defaults_s51_heldout15_10seeds.csv \
        --exclude make_classification_hard --out defaults_s51_summary

Session 52's (``results/defaults_s52_summary.*``): session 51's pieces, the fifteenth part
and the ridge accelerated rows at the squared loss's ``KAPPA_C`` 2
(``defaults_s52_ridge_nag_masg_all.csv``, last), all as looked-at grids (no part with every
optimizer is unseen)::

    python benchmarks/defaults_summary.py --grids (session 51's eighteen pieces) \
        $R/defaults_s51_heldout15_10seeds.csv $R/defaults_s52_ridge_nag_masg_all.csv \
        --exclude make_classification_hard --out defaults_s52_summary

The same pieces plus the eighth part's, given to ``defaults_report.py --after ... --changed
--exclude make_classification_hard --out defaults_s36_all``, give every part's criteria at
today's rules (``results/defaults_s36_all_criteria.md``; its 13 MB csv and figures are not kept).
"""

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
import defaults_report as dr  # noqa: E402

#: session 52's pieces (the command above, in order: a later piece wins): every looked-at part
#: at today's rules
TODAY_PIECES = tuple(f"defaults_{stem}.csv" for stem in (
    "s35_10seeds", "s36_svc_scd_s17b", "s23_heldout4", "s36_scd_heldout4",
    "s31_heldout5_10seeds", "s36_scd_heldout5", "s32_heldout6_10seeds", "s36_scd_heldout6",
    "s35_heldout7_10seeds", "s36_svc_scd_heldout7", "s36_heldout8_10seeds",
    "s37_heldout9_10seeds", "s38_heldout10_10seeds", "s42_heldout11_10seeds",
    "s43_heldout12_10seeds", "s45_heldout13_10seeds", "s51_heldout14_10seeds",
    "s51_nag_masg_all", "s51_heldout15_10seeds", "s52_ridge_nag_masg_all"))

METHODS = ("auto", *bd.OPTIMIZERS)
REGIMES = (("n < 3000, eps <= 0.3", lambda n, e: n < 3000 and e <= 0.3),
           ("n < 3000, eps >= 1", lambda n, e: n < 3000 and e >= 1),
           ("n >= 3000, eps <= 0.3", lambda n, e: n >= 3000 and e <= 0.3),
           ("n >= 3000, eps >= 1", lambda n, e: n >= 3000 and e >= 1))


def load(paths, exclude):
    rows = [r for r in dr._load(paths).values() if r["dataset"] not in exclude]
    return bd.with_auto(rows)


def summary(rows):
    """{estimator: {regime: {"cells": k, method: (mean distance to the best, cells beyond the
    tolerance below the anchor)}}}, regimes including "all"."""
    out = {}
    for (part, est), cells in bd.summarise(rows).items():
        tol = 0.01 if bd.ESTIMATORS[est][1] == "classification" else 0.02
        for (ds, n, eps), c in cells.items():
            if not all(m in c for m in METHODS):
                continue
            best = max(c[m] for m in bd.OPTIMIZERS)
            names = [name for name, inside in REGIMES if inside(n, eps)] + ["all"]
            for name in names:
                r = out.setdefault(est, {}).setdefault(name, {"cells": 0})
                r["cells"] += 1
                for m in METHODS:
                    dist, below = r.get(m, (0.0, 0))
                    anchor = c.get("opacus", math.nan)
                    r[m] = (dist + best - c[m], below + (c[m] < anchor - tol))
    for regimes in out.values():
        for r in regimes.values():
            for m in METHODS:
                r[m] = (r[m][0] / r["cells"], r[m][1])
    return out


def _unit(est):
    return (100.0, "points") if bd.ESTIMATORS[est][1] == "classification" else (1.0, "R^2")


def markdown(title, table):
    lines = [f"## {title}", ""]
    for est, regimes in sorted(table.items()):
        scale, unit = _unit(est)
        lines += [f"### {est}: mean distance to the best of the six ({unit}); in brackets, cells "
                  "more than the tolerance below the anchor", "",
                  "| regime | cells | " + " | ".join(METHODS) + " |",
                  "|---|---|" + "---|" * len(METHODS)]
        for name in [n for n, _ in REGIMES] + ["all"]:
            if name not in regimes:
                continue
            r = regimes[name]
            lines.append(f"| {name} | {r['cells']} | " + " | ".join(
                f"{scale * r[m][0]:.{2 if scale > 1 else 3}f} ({r[m][1]})" for m in METHODS) + " |")
        lines.append("")
    return lines


def rst(title, table):
    """One list-table per estimator; the closest optimizer of each regime in bold."""
    out = []
    for est, regimes in sorted(table.items()):
        scale, unit = _unit(est)
        digits = 2 if scale > 1 else 3
        out += [f".. list-table:: {title}, {bd.ESTIMATORS[est][0].__name__}: mean distance to the "
                f"best of the six ({unit}; 0 = the best in every cell)",
                "   :header-rows: 1", "",
                "   * - n, epsilon", "     - cells", "     - default"]
        out += [f"     - {m}" for m in bd.OPTIMIZERS]
        for name in [n for n, _ in REGIMES] + ["all"]:
            if name not in regimes:
                continue
            r = regimes[name]
            closest = min(bd.OPTIMIZERS, key=lambda m: r[m][0])
            out += [f"   * - {name}", f"     - {r['cells']}"]
            for m in METHODS:
                cell = f"{scale * r[m][0]:.{digits}f}"
                out.append(f"     - **{cell}**" if m == closest else f"     - {cell}")
        out.append("")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--grids", nargs="+", required=True)
    p.add_argument("--judge", nargs="*", default=[])
    p.add_argument("--exclude", nargs="*", default=["make_classification_hard"])
    p.add_argument("--out", default="defaults_summary")
    args = p.parse_args(argv)
    parts = [("the looked-at parts", args.grids)]
    if args.judge:
        parts.append(("the unseen held-out part", args.judge))
    md, tables = ["# Which optimizer when: issue 15's grid in one table per estimator", "",
                  f"Made by `benchmarks/defaults_summary.py` from {', '.join(args.grids)}"
                  + (f"; judged on {', '.join(args.judge)}" if args.judge else "") + ".", ""], []
    for title, paths in parts:
        table = summary(load(paths, args.exclude))
        md += markdown(title, table)
        tables += rst(title, table)
    (bd.RESULTS / f"{args.out}.md").write_text("\n".join(md) + "\n")
    (bd.RESULTS / f"{args.out}.rst").write_text("\n".join(tables) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
