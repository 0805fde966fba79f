"""The record of DPLinearSVC's small-budget switch to dp_scd over every run part of the grid.

``optimizer="auto"`` of a binary DPLinearSVC runs dp_scd where ``s < SVC_DUAL_MAX_SNR`` with a
public row bound (``skdp.optimizers._defaults.prefers_dual``), dp_gdws elsewhere. This script
reads the grid's results (the files of ``defaults_summary.py``'s session-45 table, every part up
to the thirteenth; since session 52 the fourteenth and fifteenth too), takes the cells where the rule picks dp_scd (``bench_defaults.auto_choice``,
on the cell's public quantities) and reports dp_scd minus dp_gdws there, per part: what the
switch gained against never switching. It refits nothing (it loads the data sets for their
column counts).

Usage: ``python benchmarks/svc_switch_record.py [--out PATH]``
"""

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
import defaults_report as dr  # noqa: E402

FILES = (
    "defaults_s35_10seeds.csv", "defaults_s36_svc_scd_s17b.csv", "defaults_s23_heldout4.csv",
    "defaults_s36_scd_heldout4.csv", "defaults_s31_heldout5_10seeds.csv",
    "defaults_s36_scd_heldout5.csv", "defaults_s32_heldout6_10seeds.csv",
    "defaults_s36_scd_heldout6.csv", "defaults_s35_heldout7_10seeds.csv",
    "defaults_s36_svc_scd_heldout7.csv", "defaults_s36_heldout8_10seeds.csv",
    "defaults_s37_heldout9_10seeds.csv", "defaults_s38_heldout10_10seeds.csv",
    "defaults_s42_heldout11_10seeds.csv", "defaults_s43_heldout12_10seeds.csv",
    "defaults_s45_heldout13_10seeds.csv", "defaults_s51_heldout14_10seeds.csv",
    "defaults_s51_heldout15_10seeds.csv",
)


def switch_gains(rows):
    """{part: [points dp_scd minus dp_gdws, per cell where the SVC's rule runs dp_scd]}."""
    gains = {}
    for (part, est), cells in bd.summarise(rows).items():
        if est != "svc":
            continue
        for (ds, n, eps), c in cells.items():
            if "dp_scd" in c and "dp_gdws" in c and bd.auto_choice(est, ds, n, eps) == "dp_scd":
                gains.setdefault(part, []).append(100.0 * (c["dp_scd"] - c["dp_gdws"]))
    return gains


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=bd.RESULTS / "svc_switch_record.md")
    args = parser.parse_args()
    rows = [r for r in dr._load([bd.RESULTS / f for f in FILES]).values() if r["estimator"] == "svc"]
    gains = switch_gains(rows)
    lines = [
        "# DPLinearSVC's small-budget switch to dp_scd, part by part", "",
        f"`python benchmarks/svc_switch_record.py` on {len(FILES)} result files. Cells where "
        "the rule runs dp_scd; gain = dp_scd minus dp_gdws, points of accuracy, mean over the "
        "cell's seeds.", "",
        "| part | cells | mean gain | cells ahead | worst | best |", "|---|---:|---:|---:|---:|---:|",
    ]
    for part, g in sorted(gains.items()):
        g = np.array(g)
        lines.append(f"| {part} | {g.size} | {g.mean():+.2f} | {int((g > 0).sum())} | "
                     f"{g.min():+.2f} | {g.max():+.2f} |")
    every = np.concatenate([np.array(g) for g in gains.values()])
    ahead_parts = sum(np.mean(g) > 0 for g in gains.values())
    lines += ["", f"All: {every.size} cells, mean gain {every.mean():+.2f} points, "
              f"{int((every > 0).sum())} ahead, {int((every < -1).sum())} more than a point "
              f"behind; {ahead_parts} of {len(gains)} parts ahead on average."]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
