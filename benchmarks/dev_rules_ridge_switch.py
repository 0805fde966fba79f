"""DPRidge's ``optimizer="auto"``: dp_scd everywhere, or dp_nag_opt from a signal-to-noise ratio
(session 15).

On the ten-seed defaults grid (``results/defaults_s13c_10seeds.csv``, public bounds) dp_nag_opt
is above DPRidge's default dp_scd (or within 0.001) in every development cell from ``s = n
sqrt(2 rho) / sqrt(p) = 29`` (p: features + intercept), by up to 0.045 of R^2, and below it in
most cells under ``s = 28`` (make_regression by up to 0.18). Result (session 15): at all
defaults a switch at s >= 28 gains 0.0075 on average over the 16 cells it moves, two cells
behind by 0.014 and 0.017 (median gaps); not adopted. This script checks the same comparison
where a user runs it: every parameter at its default (``data_norm="auto"``,
``y_bounds="auto"``), on the development sets only (wine, diabetes, make_regression) at the
sizes and seeds of session 14's sweep (``dev_rules_step_private_bound.py``, whose dp_nag_opt
rows at floor 0.8 are the current code: they are read, not rerun), and prints the gap per cell
ordered by s.

Run: ``python benchmarks/dev_rules_ridge_switch.py sweep`` (dp_scd's fits, about a minute),
then ``python benchmarks/dev_rules_ridge_switch.py report``; writes
``results/dev_rules_ridge_switch.csv`` and ``.md``. ``sweep dp_gdws`` then ``dask_fallback``
append the comparison of dp_gdws (what ``optimizer="auto"`` runs on Dask) with dp_nag_opt.
"""

import csv
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402
from dev_rules_step_private_bound import DATASETS, EPS, N_GRID, SEEDS  # noqa: E402

from skdp import DPRidge  # noqa: E402
from skdp.optimizers._defaults import budget_rho, snr  # noqa: E402

OUT = HERE / "results" / "dev_rules_ridge_switch.csv"
NAG = HERE / "results" / "dev_rules_step_private_bound_ridge.csv"
GRID = HERE / "results" / "defaults_s13c_10seeds.csv"


def defaults_r2(optimizer, X, y, X_te, y_te, eps, seed):
    """Test R^2 of DPRidge with every parameter at its default but the optimizer (private row
    and target bounds), warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPRidge(epsilon=eps, delta=bd.DELTA, optimizer=optimizer,
                        random_state=seed).fit(X, y)
    return float(r2_score(y_te, model.predict(X_te)))


def sweep(optimizer="dp_scd"):
    out = OUT if optimizer == "dp_scd" else OUT.with_name(f"dev_rules_ridge_switch_{optimizer}.csv")
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "p", "eps", "seed", "score"])
        for name in DATASETS["ridge"]:
            for n in bd.sizes(name, N_GRID):
                for seed in range(SEEDS):
                    _, X, y, X_te, y_te = bd.subsample(name, n, seed)
                    for eps in EPS:
                        score = defaults_r2(optimizer, X, y, X_te, y_te, eps, seed)
                        w.writerow([name, n, X.shape[1] + 1, eps, seed, f"{score:.5f}"])
                fh.flush()
                print(name, n, flush=True)


def _gaps():
    scd = pd.read_csv(OUT)
    nag = pd.read_csv(NAG)
    nag = nag[(nag.optimizer == "dp_nag_opt") & (nag.floor == 0.8)]
    m = scd.merge(nag[["dataset", "n", "eps", "seed", "score"]], on=["dataset", "n", "eps", "seed"],
                  suffixes=("_scd", "_nag"))
    m["gap"] = m.score_nag - m.score_scd
    g = m.groupby(["dataset", "n", "p", "eps"]).agg(
        scd=("score_scd", "median"), nag=("score_nag", "median"), gap=("gap", "mean"),
        gap_median=("gap", "median"), se=("gap", lambda v: v.std(ddof=1) / np.sqrt(len(v))),
        seeds=("gap", "size")).reset_index()
    g["s"] = [snr(n, p, budget_rho(e, bd.DELTA)) for n, p, e in zip(g.n, g.p, g.eps)]
    grid = pd.read_csv(GRID)
    grid = grid[(grid.part == "dev") & (grid.estimator == "ridge")]
    pub = grid.groupby(["dataset", "n", "eps", "method"]).score.mean().unstack("method")
    pub = (pub.dp_nag_opt - pub.dp_scd).rename("public_gap").reset_index()
    g = g.merge(pub, on=["dataset", "n", "eps"], how="left")
    return g.sort_values("s")


def report():
    g = _gaps()
    lines = [
        "# DPRidge: dp_nag_opt against dp_scd, all defaults (private row and target bounds)",
        "",
        "Development sets only; 10 seeds (session 14's splits). `gap`: dp_nag_opt minus dp_scd, "
        "mean over seeds of the paired R^2 gap (`se` its standard error; `median gap` the median, "
        "robust to the seeds where private target bounds fail at n <= 500, eps 0.1); "
        "`public gap`: the same gap on the ten-seed grid with public bounds. Medians of R^2 "
        "per optimizer. Ordered by s = n sqrt(2 rho) / sqrt(p).",
        "",
        "| data | n | eps | s | dp_scd | dp_nag_opt | gap | se | median gap | public gap |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in g.itertuples():
        lines.append(f"| {r.dataset} | {r.n} | {r.eps:g} | {r.s:.1f} | {r.scd:.3f} | {r.nag:.3f} "
                     f"| {r.gap:+.3f} | {r.se:.3f} | {r.gap_median:+.3f} | {r.public_gap:+.3f} |")
    lines += ["", "Mean gain over the cells each threshold switches (dp_nag_opt from s >= t):", "",
              "| t | cells switched | mean gap (all defaults) | cells worse by > 0.02 | "
              "mean public gap |", "|---|---|---|---|---|"]
    for t in (10, 20, 28, 40, 60, 100):
        sw = g[g.s >= t]
        lines.append(f"| {t} | {len(sw)} | {sw.gap_median.mean():+.4f} | "
                     f"{int((sw.gap_median < -0.02).sum())} | {sw.public_gap.mean():+.4f} |")
    (HERE / "results" / "dev_rules_ridge_switch.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def dask_fallback():
    """DPRidge's ``optimizer="auto"`` on Dask runs dp_gdws (dp_scd cannot run there): dp_gdws
    against dp_nag_opt and dp_scd at all defaults on the same cells (needs ``sweep dp_gdws``)."""
    scd = pd.read_csv(OUT)
    gd = pd.read_csv(OUT.with_name("dev_rules_ridge_switch_dp_gdws.csv"))
    nag = pd.read_csv(NAG)
    nag = nag[(nag.optimizer == "dp_nag_opt") & (nag.floor == 0.8)]
    keys = ["dataset", "n", "eps", "seed"]
    m = scd.merge(gd[keys + ["score"]], on=keys, suffixes=("_scd", "_gdws")).merge(
        nag[keys + ["score"]].rename(columns={"score": "score_nag"}), on=keys)
    g = m.groupby(["dataset", "n", "p", "eps"]).median(numeric_only=True).reset_index()
    g["s"] = [snr(n, p, budget_rho(e, bd.DELTA)) for n, p, e in zip(g.n, g.p, g.eps)]
    g = g.sort_values("s")
    lines = ["", "## On Dask: dp_gdws (the fallback of optimizer='auto') against dp_nag_opt", "",
             "Medians over the seeds of R^2 at all defaults, development sets.", "",
             "| data | n | eps | s | dp_scd | dp_gdws | dp_nag_opt |",
             "|---|---|---|---|---|---|---|"]
    for r in g.itertuples():
        lines.append(f"| {r.dataset} | {r.n} | {r.eps:g} | {r.s:.1f} | {r.score_scd:.3f} | "
                     f"{r.score_gdws:.3f} | {r.score_nag:.3f} |")
    big = g[g.n >= 2000]
    lines += ["", f"n >= 2000 ({len(big)} cells): mean median R^2 dp_gdws "
              f"{big.score_gdws.mean():.4f}, dp_nag_opt {big.score_nag.mean():.4f}, "
              f"dp_scd {big.score_scd.mean():.4f}; "
              f"dp_nag_opt ahead of dp_gdws by more than 0.02 in "
              f"{int((big.score_nag - big.score_gdws > 0.02).sum())} cells, behind by more than "
              f"0.02 in {int((big.score_gdws - big.score_nag > 0.02).sum())}."]
    path = HERE / "results" / "dev_rules_ridge_switch.md"
    path.write_text(path.read_text() + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "sweep":
        sweep(*sys.argv[2:3])
    else:
        {"report": report, "dask_fallback": dask_fallback}[sys.argv[1]]()
