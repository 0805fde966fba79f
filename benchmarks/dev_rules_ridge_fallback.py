"""Issue 15, session 53: which optimizer DPRidge's default runs where its rule's dp_scd cannot.

``optimizer="auto"`` of DPRidge runs dp_scd below s = 300 (``RIDGE_ACCELERATED_MIN_SNR``).
dp_scd keeps a dual variable per row: it does not run on Dask and does not warm-start, and there
the default runs ``FALLBACK`` (dp_gdws since the Dask support). That choice was never measured.
On the looked-at grid (public bounds) dp_gdws is 0.096 of R^2 from the best of the six at n < 3000
and epsilon <= 0.3 and 0.022 at n >= 3000 and epsilon <= 0.3, against dp_masg's 0.054 and 0.006
(``results/defaults_s52_summary.md``, every cell; not only those below s = 300).

The candidates are the optimizers that run on Dask and warm-start (``CANDIDATES``) against
dp_gdws, in the cells the fallback serves (s < 300), in three settings:

* ``public``: the grid's public bounds, the kept grids at today's rules
  (``defaults_summary.TODAY_PIECES``, ten seeds, parts up to the fifteenth, with their Opacus
  anchors); no new fit;
* ``every-default``: ``data_norm`` and ``y_bounds`` "auto" (private bounds inside the fit),
  every looked-at regression set (the sixteenth part's included), seeds 0 to 2, fitted here;
* ``pipeline``: the raw-data route of the docs (``dev_rules_ridge_masg._raw_regressions``:
  ``PrivateRobustScaler``, one-hot for Adult, then DPRidge), seeds 0 to 5, the cells with
  s < 300.

The decision rule, written before any of the three ran: a candidate qualifies if its mean gain
over dp_gdws (cells: means over their seeds, for the pipeline the paired per-seed gains) is >= 0
in each of the three settings, it has no more ``public`` cells more than 0.02 of R^2 below the
Opacus anchor than dp_gdws, and no band of s (0-10, 10-30, 30-100, 100-300) of
``every-default`` has a mean of the cells' median gains below -0.01. Of those, the one with the
largest mean gain at ``every-default`` (what the default's users get) goes to the seventeenth
held-out part's two regression sets (``judge``: public bounds with their anchors fitted, five
seeds; every default, three seeds; the cells with s < 300), where it is adopted only if its mean
gain over dp_gdws is >= 0 at both settings and it adds no cell below the anchor. None: no
change. (Those two sets are not quite unseen for dp_masg and dp_nag_opt: session 52's first
every-default run fitted them by mistake, and one table pooled with 21 other sets was read.)

The rule's outcome (``results/dev_rules_ridge_fallback.md``): no candidate with a gain.
dp_sgld "qualifies" with a gain of exactly 0 in every cell of the three settings: on DPRidge at
its defaults it runs dp_gdws's steps (composition accounting, the same step, time and noise
stream) and returns the same model, so adopting it would change nothing but the name; the rule
should have asked for a positive gain, and it is not sent to the judge. dp_masg and dp_nag_opt
gain in the public setting (+0.023, +0.024) and in every band of s from 10 at every default
(dp_masg +0.085, +0.001, +0.008), but below s = 10 private bounds and few steps fail badly
(a mean of the cells' medians of -9.6 and -6.4).

A second step, written after reading that table and committed before the judge ran: the
candidate ``SECOND_STEP``, dp_masg from s = 10 and dp_gdws below (dp_masg has the larger gain at
every default from s = 10 and in the pipeline), goes to the seventeenth part's two sets (its
cells with s < 300, public bounds with their anchors fitted, five seeds; every default, three
seeds), where it is adopted only if its mean gain over dp_gdws is >= 0 at both settings, it adds
no cell more than 0.02 below the anchor, and no band of s at every default has a mean of the
cells' median gains below -0.01.

    python benchmarks/dev_rules_ridge_fallback.py every-default   # two processes
    python benchmarks/dev_rules_ridge_fallback.py pipeline
    python benchmarks/dev_rules_ridge_fallback.py report
    python benchmarks/dev_rules_ridge_fallback.py judge   # the second step's candidate
"""

import csv
import math
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
import defaults_summary  # noqa: E402
from dev_rules_ridge_masg import cell_snr, looked_at_sets  # noqa: E402
from dev_rules_ridge_momentum import read, write_grid  # noqa: E402

from skdp.optimizers._defaults import RIDGE_ACCELERATED_MIN_SNR, budget_rho, snr  # noqa: E402

FALLBACK = "dp_gdws"
#: the second step's candidate: dp_masg from this s, dp_gdws below (docstring)
SECOND_STEP = ("dp_masg", 10.0)
CANDIDATES = ("dp_masg", "dp_nag_opt", "dp_nsgd_tree", "dp_sgld")
METHODS = (FALLBACK,) + CANDIDATES
UNSEEN = ("heldout17",)
TOL = 0.02
BAND_SLACK = 0.01
BANDS = ((0, 10), (10, 30), (30, 100), (100, RIDGE_ACCELERATED_MIN_SNR))
R = HERE / "results"
EVERY_DEFAULT = R / "dev_rules_ridge_fallback_every_default.csv"
PIPELINE = R / "dev_rules_ridge_fallback_pipeline.csv"
JUDGE = R / "dev_rules_ridge_fallback_heldout17.csv"
OUT = R / "dev_rules_ridge_fallback.md"


def served(s):
    """The cells the fallback serves: where the rule runs dp_scd."""
    return s < RIDGE_ACCELERATED_MIN_SNR


# -- the three settings' scores ------------------------------------------------------------------
def public_cells(rows=None):
    """``{(dataset, n, eps): {method: {seed: score}}}`` of the kept grids' ridge cells with
    s < 300 (public bounds), the anchor as method "opacus"."""
    if rows is None:
        rows = defaults_summary.load([R / p for p in defaults_summary.TODAY_PIECES], ())
    cells = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if (r["estimator"] == "ridge" and r["method"] in METHODS + ("opacus",)
                and served(cell_snr(r["dataset"], r["n"], r["eps"]))):
            cells[(r["dataset"], r["n"], r["eps"])][r["method"]][r["seed"]] = r["score"]
    return cells


def _every_default_shard(args):
    from dev_rules_ridge_switch import defaults_r2

    names, out, seeds = args

    def fit_rows(name, n, eps, s, seed, task, X, y, X_te, y_te):
        if served(s):
            for opt in METHODS:
                yield opt, "default", defaults_r2(opt, X, y, X_te, y_te, eps, seed)

    write_grid(names, out, seeds, fit_rows)


def every_default(names=None, out=EVERY_DEFAULT, seeds=range(3)):
    if names is None:
        names = looked_at_sets(UNSEEN)
        assert not set(names) & set(bd.HELDOUT17)
    jobs = [(names[k::2], out.with_name(f"{out.stem}_{k}of2.csv"), seeds) for k in range(2)]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_every_default_shard, jobs))


def default_cells(path=EVERY_DEFAULT):
    cells = defaultdict(lambda: defaultdict(dict))
    for r in read(sorted(path.parent.glob(f"{path.stem}_[0-9]of2.csv"))):
        cells[(r["dataset"], r["n"], r["eps"], r["s"])][r["optimizer"]][r["seed"]] = r["score"]
    return cells


def pipeline(out=PIPELINE):
    """The raw-data route, every method, the cells with s < 300 (the s of the fitted design)."""
    from dev_rules_ridge_masg import PIPELINE_EPS, PIPELINE_SEEDS, _raw_regressions, fit_raw_pipeline

    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "s", "seed", "optimizer", "score"])
        for name, X_tr, y_tr, X_te, y_te, num, cat in _raw_regressions():
            for eps in PIPELINE_EPS:
                for seed in PIPELINE_SEEDS:
                    for opt in METHODS:
                        pipe = fit_raw_pipeline(X_tr, y_tr, num, cat, opt, eps, seed)
                        p = pipe.steps[-1][1].coef_.shape[-1] + 1
                        s = snr(len(X_tr), p, budget_rho(eps, bd.DELTA))
                        if not served(s):
                            break  # the rule runs dp_masg in this cell: no fallback
                        w.writerow([name, len(X_tr), eps, f"{s:.1f}", seed, opt,
                                    f"{pipe.score(X_te, y_te):.5f}"])
                    fh.flush()
                print(name, eps, flush=True)


def pipeline_cells(path=PIPELINE):
    cells = defaultdict(lambda: defaultdict(dict))
    with open(path) as fh:
        for r in csv.DictReader(fh):
            cells[(r["dataset"], int(r["n"]), float(r["eps"]), float(r["s"]))][r["optimizer"]][
                int(r["seed"])] = float(r["score"])
    return cells


# -- measures -------------------------------------------------------------------------------------
def gains(cells, method, stat=np.mean):
    """Per cell (in the cells' order): ``stat`` over the seeds of the paired gain over dp_gdws."""
    out = []
    for by in cells.values():
        seeds = sorted(set(by[FALLBACK]) & set(by[method]))
        out.append(float(stat([by[method][k] - by[FALLBACK][k] for k in seeds])))
    return out


def below_anchor(cells, method):
    return sum(np.mean(list(by[method].values())) < np.mean(list(by["opacus"].values())) - TOL
               for by in cells.values())


def band_medians(cells, method):
    """``[(band, cells, mean of the cells' median gains)]`` (keys carry s last)."""
    med = gains(cells, method, np.median)
    out = []
    for lo, hi in BANDS:
        inside = [g for key, g in zip(cells, med) if lo <= key[-1] < hi]
        if inside:
            out.append(((lo, hi), len(inside), float(np.mean(inside))))
    return out


def measure(public, default, raw):
    m = {}
    for method in CANDIDATES:
        m[method] = {
            "public": float(np.mean(gains(public, method))),
            "below": below_anchor(public, method),
            "default": float(np.mean(gains(default, method))),
            "bands": band_medians(default, method),
            "pipeline": float(np.mean(gains(raw, method))) if raw else math.nan}
    m[FALLBACK] = {"below": below_anchor(public, FALLBACK)}
    return m


def qualifies(x, rule_below):
    return (x["public"] >= 0 and x["default"] >= 0 and x["pipeline"] >= 0
            and x["below"] <= rule_below
            and all(mean >= -BAND_SLACK for _, _, mean in x["bands"]))


def decide(m):
    ok = [c for c in CANDIDATES if qualifies(m[c], m[FALLBACK]["below"])]
    return max(ok, key=lambda c: m[c]["default"]) if ok else None


def report():
    public, default, raw = public_cells(), default_cells(), pipeline_cells()
    m = measure(public, default, raw)
    choice = decide(m)
    lines = ["# DPRidge's fallback where dp_scd cannot run (session 53)", "",
             "`benchmarks/dev_rules_ridge_fallback.py` (its docstring: settings, decision rule). "
             f"Mean gain in R^2 over {FALLBACK} (the fallback today) in the cells with s < "
             f"{RIDGE_ACCELERATED_MIN_SNR:g}: *public*, the kept grids ({len(public)} cells, ten "
             f"seeds); *every default*, private bounds ({len(default)} cells, three seeds); "
             f"*pipeline*, the raw-data route ({len(raw)} cells, six seeds). *Below*: public "
             f"cells more than {TOL} below the Opacus anchor ({FALLBACK}: "
             f"{m[FALLBACK]['below']}).", "",
             "| candidate | public | below | every default | pipeline | every default by band "
             "of s: mean of the cells' median gains | qualifies |", "|---|---|---|---|---|---|---|"]
    for c in CANDIDATES:
        x = m[c]
        bands = "; ".join(f"{lo:g}-{hi:g} ({k}): {mean:+.4f}" for (lo, hi), k, mean in x["bands"])
        lines.append(f"| {c} | {x['public']:+.4f} | {x['below']} | {x['default']:+.4f} | "
                     f"{x['pipeline']:+.4f} | {bands} | "
                     f"{'yes' if qualifies(x, m[FALLBACK]['below']) else 'no'} |")
    lines += ["", "The pipeline's cells (mean over seeds of the paired gain):", "",
              "| data | n | eps | s | " + " | ".join(CANDIDATES) + " |",
              "|---|---|---|---|" + "---|" * len(CANDIDATES)]
    per = {c: gains(raw, c) for c in CANDIDATES}
    for i, (ds, n, eps, s) in enumerate(raw):
        lines.append(f"| {ds} | {n} | {eps:g} | {s:g} | "
                     + " | ".join(f"{per[c][i]:+.4f}" for c in CANDIDATES) + " |")
    lines += ["", f"Decision: {choice + ' goes to the judge' if choice else 'no candidate qualifies (no change)'}."]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return choice


def with_second_step(cells):
    """Add the second step's candidate to every cell (keys carry s last): dp_masg's scores
    from ``SECOND_STEP``'s s, dp_gdws's below."""
    name, threshold = SECOND_STEP
    for key, by in cells.items():
        by["second_step"] = dict(by[name] if key[-1] >= threshold else by[FALLBACK])
    return cells


def judge(fit=True):
    """The seventeenth part's regression sets, the cells with s < 300: public bounds with the
    anchors fitted (five seeds) and every default (three seeds), dp_gdws against the second
    step's candidate."""
    names = [ds for ds in bd.HELDOUT17 if bd.load(ds)[0] == "regression"]
    if fit:
        def fit_rows(ds, n, eps, s, seed, task, X, y, X_te, y_te):
            from dev_rules_ridge_switch import defaults_r2
            if not served(s):
                return
            yield "opacus", "public", bd.opacus_score(task, X, y, X_te, y_te, eps, seed)[0]
            for opt in (FALLBACK, SECOND_STEP[0]):
                yield opt, "public", bd.skdp_fit("ridge", opt, X, y, X_te, y_te, eps, seed)[0]
                if seed < 3:
                    yield opt, "default", defaults_r2(opt, X, y, X_te, y_te, eps, seed)

        write_grid(names, JUDGE, range(5), fit_rows)
    public, default = (defaultdict(lambda: defaultdict(dict)) for _ in range(2))
    for r in read([JUDGE]):
        (public if r["variant"] == "public" else default)[
            (r["dataset"], r["n"], r["eps"], r["s"])][r["optimizer"]][r["seed"]] = r["score"]
    public, default = with_second_step(public), with_second_step(default)
    name = "second_step"
    g_public, g_default = float(np.mean(gains(public, name))), float(np.mean(gains(default, name)))
    b_rule, b_name = below_anchor(public, FALLBACK), below_anchor(public, name)
    bands = band_medians(default, name)
    verdict = ("adopt" if g_public >= 0 and g_default >= 0 and b_name <= b_rule
               and all(mean >= -BAND_SLACK for _, _, mean in bands) else "no change")
    lines = [f"# DPRidge's fallback, the seventeenth held-out part: {SECOND_STEP[0]} from s = "
             f"{SECOND_STEP[1]:g} against {FALLBACK}", "",
             f"Cells with s < {RIDGE_ACCELERATED_MIN_SNR:g} of {', '.join(names)}: public "
             f"bounds ({len(public)} cells, five seeds, anchors fitted) mean gain "
             f"{g_public:+.4f}, cells more than {TOL} below the anchor {b_name} against "
             f"{b_rule}; every default ({len(default)} cells, three seeds) {g_default:+.4f}, by "
             "band of s (mean of the cells' median gains): "
             + "; ".join(f"{lo:g}-{hi:g} ({k}): {mean:+.4f}" for (lo, hi), k, mean in bands)
             + ".", "", "| data | n | eps | s | public gain | every-default gain |",
             "|---|---|---|---|---|---|"]
    gp, gd = dict(zip(public, gains(public, name))), dict(zip(default, gains(default, name)))
    for key in public:
        lines.append(f"| {key[0]} | {key[1]} | {key[2]:g} | {key[3]:.1f} | {gp[key]:+.4f} | "
                     f"{gd.get(key, math.nan):+.4f} |")
    lines += ["", "Judge's rule (mean gain >= 0 at both settings, no added cell below the "
              f"anchor, no band at every default below -{BAND_SLACK}): {verdict}."]
    JUDGE.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    command, *args = sys.argv[1:] or ["report"]
    {"every-default": every_default, "pipeline": pipeline, "report": report,
     "judge": judge, "judge-report": lambda: judge(fit=False)}[command](*args)
