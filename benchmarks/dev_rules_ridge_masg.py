"""Issue 15, session 37: DPRidge's ``optimizer="auto"``, dp_scd everywhere or dp_masg from a
signal-to-noise ratio.

On every looked-at part of the defaults grid at today's rules (public bounds ``data_norm=1``,
``y_bounds=(-1, 1)``, ten seeds; the pieces of ``defaults_summary.py``'s docstring) dp_masg is
at or above DPRidge's default dp_scd in every cell from ``s = n sqrt(2 rho) / sqrt(p) = 150``
(p: features + intercept) but a few within 0.012 of R^2, and ahead on average at every
threshold from 20 (``grid`` prints the table). Session 15 measured the same switch to
dp_nag_opt where a user runs it, every parameter at its default (``data_norm="auto"``,
``y_bounds="auto"``), on the three development sets only, and did not adopt it. ``sweep`` redoes
that measurement for dp_scd, dp_masg and dp_nag_opt on every looked-at regression set (the ninth
and tenth held-out parts are never loaded), the grid's subsamples, seeds 0 to 4, the cells with
``s >= 20``; ``report`` writes ``results/dev_rules_ridge_masg.md``: per threshold t, the mean
paired gain of the switch over the cells it moves, at both settings.

The threshold was first set at 150, the smallest tried with no cell more than the issue's
tolerance (0.02 of R^2) behind on the public-bound grid, and judged on the ninth held-out part
(``judge``: its regression set ``make_regression_wide`` at every default, the cells with
``s >= 150``, seeds 0 to 4, ``results/dev_rules_ridge_masg_heldout9.csv``; its public-bound
cells are the part's grid run, ``bench_defaults.py --heldout heldout9``): ahead in every cell.
``pipeline`` then measured the raw-data route of the docs (raw wine and Adult regression
targets, ``PrivateRobustScaler`` and one-hot, then DPRidge; ``results/...pipeline.csv``), where
the row bound is the scaler's looser public one: dp_masg lost in every cell between s = 150 and
230. The rule adopted (:data:`skdp.optimizers._defaults.RIDGE_ACCELERATED_MIN_SNR`) is the
stricter t = 300: the smallest threshold tried with no cell more than 0.02 behind at either
setting of ``sweep``; the pipeline's cells from s = 600 all gain.

    python benchmarks/dev_rules_ridge_masg.py sweep      # about 3 minutes
    python benchmarks/dev_rules_ridge_masg.py judge      # a minute
    python benchmarks/dev_rules_ridge_masg.py pipeline   # about 2 minutes
    python benchmarks/dev_rules_ridge_masg.py pipeline-s38   # the same, session 38's scaler
    python benchmarks/dev_rules_ridge_masg.py judge-heldout10   # session 38: 300 unseen
    python benchmarks/dev_rules_ridge_masg.py report
"""

import csv
import functools
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
import defaults_report as dr  # noqa: E402
from dev_rules_ridge_switch import defaults_r2  # noqa: E402

from skdp import DPRidge  # noqa: E402
from skdp.optimizers._defaults import RIDGE_ACCELERATED_MIN_SNR, budget_rho, snr  # noqa: E402

OPTIMIZERS = ("dp_scd", "dp_masg", "dp_nag_opt")
SEEDS = range(5)
MIN_SNR = 20.0
THRESHOLDS = (20, 30, 40, 60, 80, 100, 150, 200, 300)
OUT = HERE / "results" / "dev_rules_ridge_masg.csv"
# the unseen parts' judges: (sweep at every default, the part's grid run, the s it starts at)
JUDGES = {
    "heldout9": (HERE / "results" / "dev_rules_ridge_masg_heldout9.csv",
                 HERE / "results" / "defaults_s37_heldout9_10seeds.csv", 150.0),  # first chosen
    "heldout10": (HERE / "results" / "dev_rules_ridge_masg_heldout10.csv",
                  HERE / "results" / "defaults_s38_heldout10_10seeds.csv", 300.0),
}
# the parts no rule had seen when this one was chosen (the eleventh fixed in session 38)
UNSEEN = ("heldout9", "heldout10", "heldout11")
R = HERE / "results"
GRID = [R / f"{stem}.csv" for stem in (
    "defaults_s35_10seeds", "defaults_s23_heldout4", "defaults_s31_heldout5_10seeds",
    "defaults_s32_heldout6_10seeds", "defaults_s35_heldout7_10seeds",
    "defaults_s36_heldout8_10seeds")]  # ridge's cells at today's rules (no later piece has any)


def looked_at_sets(unseen=UNSEEN, keep=lambda task, y: task == "regression"):
    """The data sets of every part but ``unseen`` (never loaded) that ``keep(task, y_train)``
    accepts and this machine has; never one of ``bench_defaults.UNSEEN_SETS``."""
    names = [name for part, names in bd.PARTS.items() if part not in unseen for name in names
             if name not in bd.UNSEEN_SETS]
    out = []
    for name in names:
        try:
            task, _, y, _, _ = bd.load(name)
        except OSError:  # not on this machine (California)
            continue
        if keep(task, y):
            out.append(name)
    return out


@functools.lru_cache(maxsize=None)
def columns(name):
    """p: the features and the intercept, as the default's rule counts them."""
    return bd.load(name)[1].shape[1] + 1


def cell_snr(name, n, eps):
    return snr(n, columns(name), budget_rho(eps, bd.DELTA))


def sweep(names=None, out=OUT, min_snr=MIN_SNR):
    if names is None:
        names = looked_at_sets()
        assert not set(names) & set(bd.HELDOUT9 + bd.HELDOUT10)
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "s", "seed", "optimizer", "score"])
        for name in names:
            for n in bd.sizes(name, bd.N_GRID):
                for eps in bd.EPS_GRID:
                    s = cell_snr(name, n, eps)
                    if s < min_snr:
                        continue
                    for seed in SEEDS:
                        _, X, y, X_te, y_te = bd.subsample(name, n, seed)
                        for optimizer in OPTIMIZERS:
                            score = defaults_r2(optimizer, X, y, X_te, y_te, eps, seed)
                            w.writerow([name, n, eps, f"{s:.2f}", seed, optimizer, f"{score:.5f}"])
                    fh.flush()
                    print(name, n, eps, flush=True)


def judge(part="heldout9"):
    """An unseen part's regression sets at every default, where the rule switches (the ninth
    from the threshold it judged, 150; the tenth, session 38, from the adopted 300)."""
    out, _, start = JUDGES[part]
    sweep([name for name in bd.PARTS[part] if bd.load(name)[0] == "regression"], out, start)


def _cells_auto(path=OUT):
    """{(dataset, n, eps): {optimizer: [score per seed]}} of the sweep (all defaults)."""
    cells = defaultdict(lambda: defaultdict(dict))
    with open(path) as fh:
        for r in csv.DictReader(fh):
            key = (r["dataset"], int(r["n"]), float(r["eps"]))
            cells[key][r["optimizer"]][int(r["seed"])] = float(r["score"])
    return cells


def _cells_grid(paths=GRID, part=None):
    """The same shape from the looked-at grid (public bounds, ten seeds), or (``part``) from
    one part's grid."""
    cells = defaultdict(lambda: defaultdict(dict))
    for r in dr._load([str(p) for p in paths]).values():
        if r["estimator"] == "ridge" and r["method"] in OPTIMIZERS and (
                r["part"] == part if part else r["part"] not in UNSEEN):
            cells[(r["dataset"], int(r["n"]), float(r["eps"]))][r["method"]][int(r["seed"])] = (
                float(r["score"]))
    return cells


def _gaps(cells, optimizer):
    """[(s, dataset, n, eps, mean paired gain of optimizer over dp_scd, its s.e., median)]."""
    out = []
    for (name, n, eps), by in cells.items():
        seeds = sorted(set(by["dp_scd"]) & set(by.get(optimizer, {})))
        if not seeds:
            continue
        g = np.array([by[optimizer][k] - by["dp_scd"][k] for k in seeds])
        se = float(g.std(ddof=1) / np.sqrt(len(g))) if len(g) > 1 else float("nan")
        out.append((cell_snr(name, n, eps), name, n, eps, float(g.mean()), se,
                    float(np.median(g))))
    return sorted(out)


def _threshold_table(gaps, title):
    lines = [f"\n{title}\n", "| t | cells switched | mean gain | median-of-cells gain | "
             "cells worse by > 0.02 | worst cell | cells better by > 0.02 |",
             "|---|---|---|---|---|---|---|"]
    for t in THRESHOLDS:
        g = [row[4] for row in gaps if row[0] >= t]
        if not g:
            continue
        worst = min(gaps, key=lambda row: row[4] if row[0] >= t else np.inf)
        lines.append(
            f"| {t} | {len(g)} | {np.mean(g):+.4f} | {np.median(g):+.4f} | "
            f"{sum(x < -0.02 for x in g)} | {worst[4]:+.3f} ({worst[1]} n {worst[2]} eps "
            f"{worst[3]:g}) | {sum(x > 0.02 for x in g)} |")
    return lines


def report():
    auto, grid = _cells_auto(), _cells_grid()
    lines = ["# DPRidge: dp_masg (or dp_nag_opt) against dp_scd, by s\n",
             "`python benchmarks/dev_rules_ridge_masg.py`. Looked-at regression sets of every "
             "part (the ninth held-out part never loaded). Gain: the optimizer's R^2 minus "
             "dp_scd's, paired by seed, mean over the seeds of a cell; per threshold t, over the "
             "cells with s >= t. *All defaults*: `data_norm=\"auto\"`, `y_bounds=\"auto\"` "
             f"(seeds {SEEDS.start} to {SEEDS.stop - 1}); *grid*: the defaults grid's public "
             "bounds (ten seeds)."]
    for optimizer in ("dp_masg", "dp_nag_opt"):
        lines += _threshold_table(_gaps(auto, optimizer), f"## {optimizer}, all defaults")
        lines += _threshold_table(_gaps(grid, optimizer), f"## {optimizer}, grid (public bounds)")
    lines += ["\n## Per cell, dp_masg minus dp_scd (all defaults; s >= 60)\n",
              "| data | n | eps | s | gain | s.e. | median |", "|---|---|---|---|---|---|---|"]
    for s, name, n, eps, g, se, med in _gaps(auto, "dp_masg"):
        if s >= 60:
            lines.append(f"| {name} | {n} | {eps:g} | {s:.0f} | {g:+.4f} | {se:.4f} | {med:+.4f} |")
    if PIPELINE.is_file():
        lines += _pipeline_lines()
    if PIPELINE_S38.is_file():
        lines += _pipeline_lines(PIPELINE_S38, "The same route with session 38's scaler "
                                 "(centred quartiles), the threshold unchanged")
    for part, (judged, part_grid, _) in JUDGES.items():
        if judged.is_file() and part_grid.is_file():
            lines += _judgement(part)
    path = OUT.with_suffix(".md")
    path.write_text("\n".join(lines) + "\n")
    print("wrote", path)


def _judgement(part):
    """An unseen part's cells where the rule switches, from the threshold the part was first to
    judge (and at the one adopted): dp_masg minus dp_scd at every default (``judge``) and at the
    part grid's public bounds."""
    judged, part_grid, start = JUDGES[part]
    cells = {"all defaults (5 seeds)": _cells_auto(judged),
             "public bounds (10 seeds)": _cells_grid([part_grid], part)}
    gaps = {label: _gaps(c, "dp_masg") for label, c in cells.items()}
    lines = [f"\n## The judge: held-out part {part}, where the switch moves cells\n",
             "| setting | s from | cells | mean gain | s.e. over the cells | "
             "cells behind by > 0.02 | worst cell | cells ahead by > 0.02 |",
             "|---|---|---|---|---|---|---|---|"]
    for t in sorted({start, RIDGE_ACCELERATED_MIN_SNR}):
        for label, rows in gaps.items():
            kept = [row for row in rows if row[0] >= t]
            g = np.array([row[4] for row in kept])
            worst = min(kept, key=lambda row: row[4])
            lines.append(f"| {label} | {t:g} | {len(g)} | {g.mean():+.4f} | "
                         f"{g.std(ddof=1) / np.sqrt(len(g)):.4f} | {int(np.sum(g < -0.02))} | "
                         f"{worst[4]:+.4f} ({worst[1]} n {worst[2]} eps {worst[3]:g}) | "
                         f"{int(np.sum(g > 0.02))} |")
    lines += ["\n| setting | data | n | eps | s | gain | s.e. |", "|---|---|---|---|---|---|---|"]
    for label, rows in gaps.items():
        for s, name, n, eps, g, se, _ in rows:
            if s >= start:
                lines.append(f"| {label} | {name} | {n} | {eps:g} | {s:.0f} | {g:+.4f} | "
                             f"{se:.4f} |")
    return lines


PIPELINE = HERE / "results" / "dev_rules_ridge_masg_pipeline.csv"
PIPELINE_S38 = HERE / "results" / "dev_rules_ridge_masg_pipeline_s38.csv"
PIPELINE_EPS = (0.3, 1.0, 3.0)
PIPELINE_SEEDS = range(6)


def _raw_regressions():
    """The raw tables of the looked-at regression targets, as a user has them: white wine's
    quality and its alcohol from the other measurements (arrays; the development and fourth
    held-out parts' sets), Adult's hours per week, age and years of education from the other
    columns (held-out parts 1 to 3); ``(name, X_tr, y_tr, X_te, y_te, numeric columns,
    categorical columns, None for an array)``, unscaled."""
    from skdp.datasets import ADULT_CATEGORIES, ADULT_NUMERIC, load_adult_frame, load_wine_frame

    X_tr, y_tr, X_te, y_te = load_wine_frame(random_state=0)  # arrays; alcohol the last column
    out = [("wine quality", X_tr, y_tr, X_te, y_te, None, None),
           ("wine alcohol", X_tr[:, :10], X_tr[:, 10], X_te[:, :10], X_te[:, 10], None, None)]
    A_tr, _, A_te, _ = load_adult_frame()
    for target, drop in (("hours-per-week", ()), ("age", ()),
                         ("education-num", ("education",))):
        keep = [c for c in A_tr.columns if c != target and c not in drop]
        num = [c for c in ADULT_NUMERIC if c in keep]
        cat = [c for c in ADULT_CATEGORIES if c in keep]
        out.append((f"adult {target}", A_tr[keep], A_tr[target].astype(float), A_te[keep],
                    A_te[target].astype(float), num, cat))
    return out


def fit_raw_pipeline(X_tr, y_tr, num, cat, optimizer, eps, seed, estimator=DPRidge,
                     **scaler_params):
    """The documented raw-data pipeline, fitted: PrivateRobustScaler (with ``scaler_params``) on
    the numeric columns ``num`` (all of X when ``cat`` is None), one-hot with Adult's public
    categories on ``cat``, then ``estimator`` at its defaults with ``optimizer`` (warnings
    silenced)."""
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder

    from skdp.datasets import ADULT_CATEGORIES
    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import PrivateRobustScaler

    scaler = PrivateRobustScaler(random_state=seed, **scaler_params)
    pre = scaler if cat is None else make_column_transformer(
        (scaler, num),
        (OneHotEncoder(categories=[ADULT_CATEGORIES[c] for c in cat], handle_unknown="ignore"),
         cat), sparse_threshold=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_private_pipeline(pre, estimator(optimizer=optimizer, random_state=seed),
                                     epsilon=eps, delta=bd.DELTA).fit(X_tr, y_tr)


def pipeline(out=None):
    """The raw-data route of the docs (PrivatePipeline: PrivateRobustScaler on the numeric
    columns, one-hot with Adult's public categories, then DPRidge at its defaults), where the
    scaler's public output bound is the row bound: dp_masg against dp_scd, the same seeds.
    ``PIPELINE`` was measured with session 37's scaler (quartiles on the 2^(1/4) grid
    directly); ``pipeline-s38`` writes ``PIPELINE_S38`` with session 38's centred quartiles."""
    with open(PIPELINE if out is None else out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "p", "eps", "s", "seed", "optimizer", "score"])
        for name, X_tr, y_tr, X_te, y_te, num, cat in _raw_regressions():
            for eps in PIPELINE_EPS:
                for seed in PIPELINE_SEEDS:
                    for optimizer in ("dp_scd", "dp_masg"):
                        pipe = fit_raw_pipeline(X_tr, y_tr, num, cat, optimizer, eps, seed)
                        p = pipe.steps[-1][1].coef_.shape[-1] + 1
                        s = snr(len(X_tr), p, budget_rho(eps, bd.DELTA))
                        w.writerow([name, len(X_tr), p, eps, f"{s:.1f}", seed, optimizer,
                                    f"{pipe.score(X_te, y_te):.5f}"])
                fh.flush()
                print(name, eps, flush=True)


def _pipeline_lines(path=None, title="The raw-data route: PrivateRobustScaler (and one-hot) "
                                      "then DPRidge"):
    rows = defaultdict(lambda: defaultdict(dict))
    info = {}
    with open(PIPELINE if path is None else path) as fh:
        for r in csv.DictReader(fh):
            key = (r["dataset"], float(r["eps"]))
            rows[key][r["optimizer"]][int(r["seed"])] = float(r["score"])
            info[key] = (int(r["n"]), float(r["s"]))
    lines = [f"\n## {title}\n",
             "`pipeline`: raw wine and Adult tables, the documented pipeline, "
             f"seeds {PIPELINE_SEEDS.start} to {PIPELINE_SEEDS.stop - 1}. The row bound is the "
             "scaler's public output bound (sqrt of the numeric columns, plus 1 for a one-hot "
             "block), looser than the grid's.\n",
             "| data | n | eps | s | dp_scd | dp_masg - dp_scd | s.e. |",
             "|---|---|---|---|---|---|---|"]
    for key in sorted(rows, key=lambda k: info[k][1]):
        by = rows[key]
        seeds = sorted(set(by["dp_scd"]) & set(by["dp_masg"]))
        g = np.array([by["dp_masg"][k] - by["dp_scd"][k] for k in seeds])
        scd = np.mean([by["dp_scd"][k] for k in seeds])
        lines.append(f"| {key[0]} | {info[key][0]} | {key[1]:g} | {info[key][1]:.0f} | "
                     f"{scd:.4f} | {g.mean():+.4f} | {g.std(ddof=1) / np.sqrt(len(g)):.4f} |")
    return lines


def grid():
    for optimizer in ("dp_masg", "dp_nag_opt"):
        print("\n".join(_threshold_table(_gaps(_cells_grid(), optimizer), optimizer)))


if __name__ == "__main__":
    {"sweep": sweep, "judge": judge, "pipeline": pipeline, "report": report, "grid": grid,
     "pipeline-s38": functools.partial(pipeline, PIPELINE_S38),
     "judge-heldout10": functools.partial(judge, "heldout10")}[sys.argv[1]]()
