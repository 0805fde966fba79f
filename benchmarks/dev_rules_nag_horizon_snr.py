"""Issue 15, session 41: the classifiers' horizon of dp_nag_opt and dp_masg from s instead of
n sqrt(2 rho).

The tenth held-out part's criterion-(b) misses beyond noise are DPLogisticRegression's
``"dp_nag_opt"`` and ``"dp_masg"`` at n 2000, epsilon 0.3 on white wine's residual sugar (4.4
to 5.0 points below the anchor) and Adult's relationship (1.8 to 1.9). Both run the rule's
horizon ``T = 1.5 sqrt(n sqrt(2 rho))`` (19 steps for both: the rule ignores d), and on wine's
set 38 steps gain about 6 points (a probe of session 41, 5 seeds). The rule's own derivation
(:func:`skdp.optimizers.dp_nag_opt.horizon_steps`: the time worth covering balances the
optimisation error against a noise floor ``~ d G^2 t / (rho n^2)``) puts d in that time, which
then grows like ``s = n sqrt(2 rho) / sqrt(p)``; Nesterov's method covers a time ``~ T^2``, so
``T ~ sqrt(s)``. The candidates are ``T = c sqrt(s)`` for c in CANDIDATES (within the rule's
floor 4 and cap 1000; p: features and intercept, as the other rules count them), against the
rule, on every looked-at classification set (every part but the tenth, whose misses prompted
this, and the eleventh, which judges it), both classifiers, both optimizers, every cell of the
defaults grid, three seeds, at the grid's public row bound.

The decision rule, written before the sweep ran: the candidate c with the fewest cells more
than a point below the Opacus anchor (over both estimators and both optimizers), among those
with a mean gain >= 0 over the rule in each estimator x optimizer and strictly fewer such cells
than the rule, goes to the eleventh held-out part (``judge``), where it is adopted only if it
gains on average there too and does not add cells more than a point below the anchor. None:
no change.

    python benchmarks/dev_rules_nag_horizon_snr.py sweep     # two shards in two processes
    python benchmarks/dev_rules_nag_horizon_snr.py report
    python benchmarks/dev_rules_nag_horizon_snr.py judge C   # the eleventh part, one candidate
"""

import csv
import math
import sys
import warnings
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from dev_rules_gdws_small_s_oracle import anchors  # noqa: E402
from dev_rules_ridge_masg import cell_snr, looked_at_sets  # noqa: E402

from skdp.optimizers import dp_nag_opt  # noqa: E402

CANDIDATES = (4.0, 5.5, 8.0)
ESTIMATORS = ("logistic", "svc")
OPTIMIZERS = ("dp_nag_opt", "dp_masg")
SEEDS = range(3)
UNSEEN = ("heldout10", "heldout11")
OUT = HERE / "results" / "dev_rules_nag_horizon_snr.csv"
BANDS = ((0, 10), (10, 30), (30, 100), (100, 300), (300, math.inf))
FIELDS = ["dataset", "estimator", "optimizer", "n", "eps", "s", "seed", "variant", "T", "score"]


def horizon(c, s):
    return int(min(dp_nag_opt._PRIVATE_MAX_ITER, max(dp_nag_opt.HORIZON_MIN, round(c * math.sqrt(s)))))


def _fit_with_horizon(T, est, opt, X, y, X_te, y_te, eps, seed):
    """The estimator's fit with the rule's horizon replaced by ``T`` (None: the rule)."""
    rule = dp_nag_opt.horizon_steps
    if T is not None:
        dp_nag_opt.horizon_steps = lambda n, rho, cap, loss_id=None: int(min(cap, T))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bd.skdp_fit(est, opt, X, y, X_te, y_te, eps, seed)[0]
    finally:
        dp_nag_opt.horizon_steps = rule


def sweep_cells(names, out, variant_scores, with_anchor=False):
    """The fits of ``names`` into ``out``, every cell of the grid and seed; ``variant_scores(est,
    opt, X, y, X_te, y_te, eps, seed, s, rule_T)`` gives the ``(label, T, score)`` of each variant
    of one estimator x optimizer; ``with_anchor``: the Opacus anchor of each cell and seed too (a
    part whose grid was never run), as rows of variant "opacus"."""
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(FIELDS)
        for name in names:
            for n in bd.sizes(name, bd.N_GRID):
                for eps in bd.EPS_GRID:
                    s = cell_snr(name, n, eps)
                    rule_T = dp_nag_opt.horizon_steps(
                        n, bd_rho(eps), dp_nag_opt._PRIVATE_MAX_ITER)
                    for seed in SEEDS:
                        task, X, y, X_te, y_te = bd.subsample(name, n, seed)
                        if with_anchor:
                            score = bd.opacus_score(task, X, y, X_te, y_te, eps, seed)[0]
                            w.writerow([name, "anchor", "opacus", n, eps, f"{s:.3f}", seed,
                                        "opacus", 0, f"{score:.6f}"])
                        for est in ESTIMATORS:
                            for opt in OPTIMIZERS:
                                for label, T, score in variant_scores(
                                        est, opt, X, y, X_te, y_te, eps, seed, s, rule_T):
                                    w.writerow([name, est, opt, n, eps, f"{s:.3f}", seed, label,
                                                T, f"{score:.6f}"])
                        fh.flush()
            print("done", name, flush=True)


def _horizon_variants(est, opt, X, y, X_te, y_te, eps, seed, s, rule_T):
    """The rule and each candidate horizon ``c sqrt(s)`` (one fit per distinct horizon)."""
    variants = {"rule": (None, rule_T)}
    variants.update({f"c={c:g}": (horizon(c, s),) * 2 for c in CANDIDATES})
    done = {}
    for label, (T, shown) in variants.items():
        if shown not in done:  # the same horizon: the same fit
            done[shown] = _fit_with_horizon(T, est, opt, X, y, X_te, y_te, eps, seed)
        yield label, shown, done[shown]


def sweep_sets(names, out, with_anchor=False):
    sweep_cells(names, out, _horizon_variants, with_anchor)


def bd_rho(eps):
    from skdp.optimizers._defaults import budget_rho

    return budget_rho(eps, bd.DELTA)


def _shard(args):
    names, out = args
    sweep_sets(names, out)


def sweep():
    names = looked_at_sets(UNSEEN, lambda task, y: task == "classification")
    assert not set(names) & set(bd.HELDOUT10 + bd.HELDOUT11)
    shards = [(names[k::2], OUT.with_name(f"{OUT.stem}_{k}of2.csv")) for k in range(2)]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_shard, shards))


def read(paths):
    rows = []
    for path in paths:
        with open(path) as fh:
            for r in csv.DictReader(fh):
                r["n"], r["seed"], r["T"] = int(r["n"]), int(r["seed"]), int(r["T"])
                r["eps"], r["s"], r["score"] = float(r["eps"]), float(r["s"]), float(r["score"])
                rows.append(r)
    return rows


def summarise(rows):
    """Per (estimator, optimizer, variant): mean gain over the rule (points), cells more than a
    point below the anchor, and the cells."""
    anchor = anchors()
    anchor.update({(r["dataset"], r["n"], r["eps"], r["seed"]): r["score"]
                   for r in rows if r["variant"] == "opacus"})
    cells = defaultdict(lambda: defaultdict(list))
    snr = defaultdict(list)
    for r in rows:
        if r["variant"] == "opacus":
            continue
        snr[(r["dataset"], r["n"], r["eps"])].append(r["s"])
        key = (r["dataset"], r["estimator"], r["optimizer"], r["n"], r["eps"])
        cells[key][r["variant"]].append((r["seed"], r["score"], r["T"]))
    table = defaultdict(lambda: {"gain": [], "below": 0, "cells": 0, "s": []})
    for (ds, est, opt, n, eps), by_variant in cells.items():
        seeds = sorted(s for s, _, _ in by_variant["rule"])
        ref = [anchor.get((ds, n, eps, s)) for s in seeds]
        if any(a is None for a in ref):
            continue
        rule = np.mean([sc for _, sc, _ in by_variant["rule"]])
        for variant, fits in by_variant.items():
            mean = np.mean([sc for _, sc, _ in fits])
            t = table[(est, opt, variant)]
            t["gain"].append(100 * (mean - rule))
            t["below"] += int(100 * (mean - np.mean(ref)) < -1.0)
            t["cells"] += 1
            t["s"].append(float(np.mean([r for r in snr[(ds, n, eps)]])))
    return table


def decide(table):
    variants = sorted({v for _, _, v in table if v != "rule"})
    below = {v: sum(table[(e, o, v)]["below"] for e in ESTIMATORS for o in OPTIMIZERS)
             for v in variants + ["rule"]}
    ok = [v for v in variants
          if all(np.mean(table[(e, o, v)]["gain"]) >= 0 for e in ESTIMATORS for o in OPTIMIZERS)
          and below[v] < below["rule"]]
    return (min(ok, key=lambda v: below[v]) if ok else None), below


def gain_table(table, variants):
    """The markdown rows of the mean gain over the rule and the cells below the anchor, per
    estimator x optimizer pair and variant (``summarise``'s table)."""
    lines = ["| estimator | optimizer | " + " | ".join(variants) + " |",
             "|---|---|" + "---|" * len(variants)]
    for e in ESTIMATORS:
        for o in OPTIMIZERS:
            cells = []
            for v in variants:
                t = table.get((e, o, v))
                cells.append("" if t is None else
                             f"{np.mean(t['gain']):+.2f}, below {t['below']} of {t['cells']}")
            lines.append(f"| {e} | {o} | " + " | ".join(cells) + " |")
    return lines


def report(paths=None, out=None, title="looked-at classification sets"):
    paths = paths or sorted(OUT.parent.glob(f"{OUT.stem}_*of2.csv"))
    out = out or OUT.with_suffix(".md")
    table = summarise(read(paths))
    choice, below = decide(table)
    variants = ["rule"] + sorted({v for _, _, v in table if v != "rule"})
    lines = [f"# dp_nag_opt / dp_masg horizon from s (session 41): {title}", "",
             "`benchmarks/dev_rules_nag_horizon_snr.py` (its docstring: candidates, decision "
             "rule). Mean gain over the rule in points (cells: each cell's mean over its seeds);"
             " *below*: cells more than a point below the Opacus anchor.", "",
             *gain_table(table, variants)]
    lines += ["", "By band of s (not part of the decision, read after it): mean gain over the "
              "rule in points, all four estimator x optimizer pairs.", "",
              "| s | cells | " + " | ".join(variants[1:]) + " |", "|---|---|" + "---|" * (len(variants) - 1)]
    for lo, hi in BANDS:
        gains = {v: [g for e in ESTIMATORS for o in OPTIMIZERS
                     for g, sv in zip(table[(e, o, v)]["gain"], table[(e, o, v)]["s"])
                     if lo <= sv < hi] for v in variants[1:]}
        count = len(gains[variants[1]])
        if count:
            lines.append(f"| {lo:g} to {hi:g} | {count} | "
                         + " | ".join(f"{np.mean(gains[v]):+.2f}" for v in variants[1:]) + " |")
    lines += ["", "Cells below the anchor by more than a point, all four: "
              + ", ".join(f"{v} {below[v]}" for v in variants) + ".", "",
              f"Decision: {choice if choice else 'no candidate qualifies (no change)'}."]
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return choice


def judge(c):
    out = OUT.with_name(f"{OUT.stem}_heldout11.csv")
    names = [name for name in bd.HELDOUT11
             if bd.load(name)[0] == "classification"]
    global CANDIDATES
    CANDIDATES = (c,)
    sweep_sets(names, out, with_anchor=True)
    report([out], OUT.with_name(f"{OUT.stem}_heldout11.md"), "eleventh held-out part")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "report"
    if command == "sweep":
        sweep()
    elif command == "judge":
        judge(float(sys.argv[2]))
    else:
        report()
