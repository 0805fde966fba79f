"""The record of DPLinearSVC's small-budget switch to dp_scd over every run part of the grid.

``optimizer="auto"`` of a binary DPLinearSVC runs dp_scd where ``s < SVC_DUAL_MAX_SNR`` with a
public row bound (``skdp.optimizers._defaults.prefers_dual``), dp_gdws elsewhere. This script
reads the grid's results (the files of ``defaults_summary.py``'s table, every part up to the
thirteenth), finds the cells where the default ran dp_scd (its score equals dp_scd's at the
same seed, and differs from dp_gdws's, in most seeds) and reports dp_scd minus dp_gdws there,
per part: what the switch gained against never switching. It reads results only; no fit.

Usage: ``python benchmarks/svc_switch_record.py [--out PATH]``
"""

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).resolve().parent / "results"
FILES = (
    "defaults_s35_10seeds.csv", "defaults_s36_svc_scd_s17b.csv", "defaults_s23_heldout4.csv",
    "defaults_s36_scd_heldout4.csv", "defaults_s31_heldout5_10seeds.csv",
    "defaults_s36_scd_heldout5.csv", "defaults_s32_heldout6_10seeds.csv",
    "defaults_s36_scd_heldout6.csv", "defaults_s35_heldout7_10seeds.csv",
    "defaults_s36_svc_scd_heldout7.csv", "defaults_s36_heldout8_10seeds.csv",
    "defaults_s37_heldout9_10seeds.csv", "defaults_s38_heldout10_10seeds.csv",
    "defaults_s42_heldout11_10seeds.csv", "defaults_s43_heldout12_10seeds.csv",
    "defaults_s45_heldout13_10seeds.csv",
)
KEY = ["part", "dataset", "n", "eps", "seed"]


def switched_cells(frame):
    """Per cell where the default ran dp_scd: the mean scores of dp_scd and dp_gdws."""
    svc = frame[frame.estimator == "svc"].drop_duplicates(KEY + ["method"], keep="last")
    piv = svc.pivot_table(index=KEY, columns="method", values="score")
    piv = piv.dropna(subset=["auto", "dp_scd", "dp_gdws"])
    piv["ran_scd"] = np.isclose(piv.auto, piv.dp_scd) & ~np.isclose(piv.dp_scd, piv.dp_gdws)
    cells = piv.groupby(KEY[:-1]).agg(
        ran_scd=("ran_scd", "mean"), scd=("dp_scd", "mean"), gdws=("dp_gdws", "mean"),
        seeds=("auto", "count"))
    cells = cells[cells.ran_scd > 0.5]
    return cells.assign(gain=100.0 * (cells.scd - cells.gdws))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "svc_switch_record.md")
    args = parser.parse_args()
    frame = pd.concat([pd.read_csv(RESULTS / f) for f in FILES])
    cells = switched_cells(frame)
    per_part = cells.groupby("part").gain.agg(["count", "mean", "min", "max"])
    per_part["ahead"] = cells.groupby("part").gain.apply(lambda g: int((g > 0).sum()))
    lines = [
        "# DPLinearSVC's small-budget switch to dp_scd, part by part", "",
        f"`python benchmarks/svc_switch_record.py` on {len(FILES)} result files. Cells where "
        "the default ran dp_scd (in most seeds); gain = dp_scd minus dp_gdws, points of "
        "accuracy, mean over the cell's seeds.", "",
        "| part | cells | mean gain | cells ahead | worst | best |", "|---|---:|---:|---:|---:|---:|",
    ]
    for part, r in per_part.iterrows():
        lines.append(f"| {part} | {int(r['count'])} | {r['mean']:+.2f} | {int(r['ahead'])} | "
                     f"{r['min']:+.2f} | {r['max']:+.2f} |")
    lines += ["", f"All: {len(cells)} cells, mean gain {cells.gain.mean():+.2f} points, "
              f"{int((cells.gain > 0).sum())} ahead, {int((cells.gain < -1).sum())} more than a "
              f"point behind; {int((per_part['mean'] > 0).sum())} of {len(per_part)} parts ahead "
              "on average."]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
