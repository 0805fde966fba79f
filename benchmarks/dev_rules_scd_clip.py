"""Development sweep for dp_scd's update clip at small n (session 12; development data only).

``auto_update_clip`` set the clip to ``g * natural`` with ``g = min(CLIP_MAX, n sqrt(2 rho) /
CLIP_SNR)`` before session 12, fitted on n 1000..5000 at epsilon <= 1 (``dev_rules_h17.py``).
At n = 500 it made dp_scd flat in epsilon (digits: 0.800 at epsilon 1, 0.803 at 3): the noise on
the shared vector V is ``z * clip * R`` per step and never decays, and g grew faster in epsilon
than the multiplier z fell. This sweep fixes g in {1/16, 1/8, 1/4, 1/2, 1, 2, 3} (1 is the
natural size of one dual step) on Adult, breast cancer and digits, n 426..10000, epsilon
0.1..3, 3 seeds, for the
logistic loss and the squared hinge, and writes every score with the cell's public
signal-to-noise ratio ``s = snr(n, p, rho)``.

``python benchmarks/dev_rules_scd_clip.py logistic|svc [data_norm]`` ->
results/dev_rules_scd_clip_<est>[_norm<data_norm>].csv. The grid's public bound is
``data_norm=1``; users run ``data_norm="auto"``, about 1.5 on these unit rows, and the natural
step ``Lam / (Lam + L R^2)`` shrinks with the bound while the rows do not, so the sweep runs at
1.5 too and the rule is chosen on both. ``python benchmarks/dev_rules_scd_clip.py report``
searches the rule family on both csv pairs and writes results/dev_rules_scd_clip.md.
Only cells whose Opacus anchor is cached (``bench_defaults.anchored_cells``) run; the anchor is
in the csv. ``rule_g`` is the rule's factor at the time of the run (informational). The
held-out part of the grid (make_classification, California, ...) is never loaded here.
"""

import csv
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from skdp.optimizers import dp_scd  # noqa: E402
from skdp.optimizers._defaults import budget_rho, snr  # noqa: E402

FACTORS = {"logistic": (1 / 16, 1 / 8, 0.25, 0.5, 1.0, 2.0, 3.0),
           "svc": (1 / 16, 1 / 8, 0.25, 0.5, 1.0, 2.0)}
FAMILY = {"logistic": "logistic", "svc": "squared_hinge"}
DATASETS = ("adult", "breast_cancer", "digits")
N_GRID = (500, 1000, 2000, 5000, 10000)
SEEDS = 3


def score_at_factor(est, g, X_tr, y_tr, X_te, y_te, eps, seed, data_norm=1.0):
    """dp_scd's test score with its update clip at g times the natural dual step: the rule's
    constants set to the factor g itself (cap g, exponent 1, k -> 0, no linear bound); the
    caller restores the first three, the linear bound is restored here."""
    family = FAMILY[est]
    dp_scd.CLIP_MAX[family], dp_scd.CLIP_SNR[family] = g, 1e-300
    dp_scd.CLIP_EXPONENT[family] = 1.0
    linear = dp_scd.CLIP_LINEAR_SNR.pop(family, None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bd.skdp_fit(est, "dp_scd", X_tr, y_tr, X_te, y_te, eps, seed, data_norm)[0]
    finally:
        if linear is not None:
            dp_scd.CLIP_LINEAR_SNR[family] = linear


def sweep(est, data_norm=1.0):
    family = FAMILY[est]
    tag = "" if data_norm == 1.0 else f"_norm{data_norm:g}"
    out = HERE / "results" / f"dev_rules_scd_clip_{est}{tag}.csv"
    rule = (dp_scd.CLIP_MAX[family], dp_scd.CLIP_SNR[family], dp_scd.CLIP_EXPONENT[family])
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "seed", "s", "g", "rule_g", "score", "anchor"])
        for name, n, eps, seed, X_tr, y_tr, X_te, y_te, anchor in bd.anchored_cells(
                DATASETS, N_GRID, bd.EPS_GRID, SEEDS):
            z = dp_scd._gaussian_multiplier(eps, bd.DELTA)
            rule_g = min(rule[0], ((n / z) / rule[1]) ** rule[2])
            s = snr(n, X_tr.shape[1] + 1, budget_rho(eps, bd.DELTA))
            for g in FACTORS[est]:
                score = score_at_factor(est, g, X_tr, y_tr, X_te, y_te, eps, seed, data_norm)
                w.writerow([name, n, eps, seed, f"{s:.3f}", g, f"{rule_g:.3f}", f"{score:.5f}",
                            f"{anchor:.5f}"])
            fh.flush()
            print(name, n, eps, seed, flush=True)
    dp_scd.CLIP_MAX[family], dp_scd.CLIP_SNR[family], dp_scd.CLIP_EXPONENT[family] = rule


def _cells(est):
    """Per cell and bound: the factors swept, their mean scores, the mean anchor, n / z."""
    cells = []
    for tag in ("", "_norm1.5"):
        groups = {}
        with open(HERE / "results" / f"dev_rules_scd_clip_{est}{tag}.csv") as fh:
            for r in csv.DictReader(fh):
                key = (r["dataset"], int(r["n"]), float(r["eps"]))
                groups.setdefault(key, {}).setdefault(float(r["g"]), []).append(float(r["score"]))
                groups[key].setdefault("anchor", {})[r["seed"]] = float(r["anchor"])
        for (name, n, eps), g in groups.items():
            anchor = np.mean(list(g.pop("anchor").values()))
            ks = np.array(sorted(g))
            cells.append({"bound": tag or "1", "nz": n / dp_scd._gaussian_multiplier(eps, bd.DELTA),
                          "log_g": np.log(ks), "scores": np.array([np.mean(g[k]) for k in ks]),
                          "anchor": anchor})
    return cells


def evaluate(cells, k, a, cap):
    """Per bound: (mean score, cells > 1 point below the anchor) of ``min(cap, (n/z / k)^a)``,
    each cell's score interpolated in the log of the factor between the factors swept."""
    out = {}
    for bound in ("1", "_norm1.5"):
        sel = [c for c in cells if c["bound"] == bound]
        scores = [np.interp(np.log(min(cap, (c["nz"] / k) ** a)), c["log_g"], c["scores"]) for c in sel]
        out[bound] = (float(np.mean(scores)),
                      sum(s < c["anchor"] - 0.01 for s, c in zip(scores, sel)))
    return out


def report():
    """The rule family ``min(cap, (n/z / k)^a)`` searched (k 40..960, a 0.4..1, cap 1..3), by
    the cells more than 1 point below the anchor summed over both bounds, then the mean."""
    lines = ["# dp_scd's update clip: the factor's rule (session 12)", "",
             "Rule ``min(cap, (n/z / k) ** a)`` times the natural dual step; per bound (the grid's "
             "public 1, and 1.5 as ``data_norm=\"auto\"`` gives): mean accuracy over the 36 "
             "development cells and cells more than 1 point below the Opacus anchor; scores "
             "interpolated in log(factor) between the factors swept.", ""]
    for est, rules, tags in (
            ("logistic", [(120, 1.0, 3.0), (100, 0.75, 2.0)], ("before", "adopted")),
            ("svc", [(240, 1.0, 1.0), (480, 0.75, 1.0)], ("kept", "not adopted"))):
        cells = _cells(est)
        grid = [(k, a, cap) for k in (40, 60, 80, 100, 120, 160, 200, 240, 320, 480, 640, 960)
                for a in (0.4, 0.5, 0.6, 0.75, 1.0) for cap in (1.0, 2.0, 3.0)]
        scored = sorted(((evaluate(cells, *r), r) for r in grid),
                        key=lambda x: (x[0]["1"][1] + x[0]["_norm1.5"][1],
                                       -(x[0]["1"][0] + x[0]["_norm1.5"][0])))
        lines += [f"## {est}", "", "| rule (k, a, cap) | bound 1: mean | below | bound 1.5: mean | below |",
                  "|---|---|---|---|---|"]
        named = [(evaluate(cells, *r), r, tag) for r, tag in zip(rules, tags)]
        for res, r, tag in named + [(res, r, "") for res, r in scored[:8]]:
            lines.append(f"| {r} {tag} | {res['1'][0]:.4f} | {res['1'][1]} | "
                         f"{res['_norm1.5'][0]:.4f} | {res['_norm1.5'][1]} |")
        lines.append("")
    (HERE / "results" / "dev_rules_scd_clip.md").write_text("\n".join(lines))
    print("\n".join(lines))


#: Session 13's direct check of squared-hinge rules (no interpolation): (k, a, cap, b) of
#: ``min(cap, (n ** b / z / k) ** a)``; the first is the rule of session 12.
CHECK_RULES = {"kept (240, 1, 1, 1)": (240.0, 1.0, 1.0, 1.0),
               "(52, 1, 1, 0.75)": (52.0, 1.0, 1.0, 0.75),
               "(14.3, 0.75, 1, 0.5)": (14.3, 0.75, 1.0, 0.5)}


def check(data_norm):
    """The squared hinge's dp_scd at each of :data:`CHECK_RULES` on the sweep's cells, at one
    row bound -> results/dev_rules_scd_clip_check[_norm<b>].csv."""
    family = "squared_hinge"
    tag = "" if data_norm == 1.0 else f"_norm{data_norm:g}"
    keys = (dp_scd.CLIP_SNR, dp_scd.CLIP_EXPONENT, dp_scd.CLIP_MAX, dp_scd.CLIP_N_EXPONENT)
    kept = tuple(d[family] for d in keys)
    with open(HERE / "results" / f"dev_rules_scd_clip_check{tag}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "seed", "rule", "score", "anchor"])
        for name, n, eps, seed, X_tr, y_tr, X_te, y_te, anchor in bd.anchored_cells(
                DATASETS, N_GRID, bd.EPS_GRID, SEEDS):
            for label, rule in CHECK_RULES.items():
                for d, v in zip(keys, rule):
                    d[family] = v
                score = bd.skdp_fit("svc", "dp_scd", X_tr, y_tr, X_te, y_te, eps, seed,
                                    data_norm)[0]
                w.writerow([name, n, eps, seed, label, f"{score:.5f}", f"{anchor:.5f}"])
            fh.flush()
            print(name, n, eps, seed, flush=True)
    for d, v in zip(keys, kept):
        d[family] = v


def check_report():
    lines = ["# dp_scd's squared-hinge update clip: rules run directly (session 13)", "",
             "``min(cap, (n ** b / z / k) ** a)`` times the natural dual step, (k, a, cap, b); "
             "36 development cells (Adult, breast cancer, digits; n 426..10000; epsilon "
             "0.1..3; 3 seeds) at the grid's public row bound 1 and at 1.5 (what "
             "``data_norm=\"auto\"`` gives on these unit rows). *below*: cells more than 1 point "
             "below the Opacus anchor; *worst*: the largest loss of a cell against the kept rule.",
             "", "| rule | bound 1: mean | below | worst | bound 1.5: mean | below | worst |",
             "|---|---|---|---|---|---|---|"]
    tables = {}
    for tag in ("", "_norm1.5"):
        cells = {}
        with open(HERE / "results" / f"dev_rules_scd_clip_check{tag}.csv") as fh:
            for r in csv.DictReader(fh):
                c = cells.setdefault((r["dataset"], int(r["n"]), float(r["eps"])), {"anchor": []})
                c.setdefault(r["rule"], []).append(float(r["score"]))
                if r["rule"] == next(iter(CHECK_RULES)):
                    c["anchor"].append(float(r["anchor"]))
        tables[tag] = {k: {v: float(np.mean(x)) for v, x in c.items()} for k, c in cells.items()}
    kept = next(iter(CHECK_RULES))
    for label in CHECK_RULES:
        row = f"| {label} "
        for tag in ("", "_norm1.5"):
            t = tables[tag]
            row += (f"| {np.mean([c[label] for c in t.values()]):.4f} "
                    f"| {sum(c[label] < c['anchor'] - 0.01 for c in t.values())} "
                    f"| {min(c[label] - c[kept] for c in t.values()):+.3f} ")
        lines.append(row + "|")
    lines += ["", "| bound | data | n | eps | " + " | ".join(CHECK_RULES) + " | anchor |",
              "|---" * (len(CHECK_RULES) + 5) + "|"]
    for tag in ("", "_norm1.5"):
        for k, c in sorted(tables[tag].items()):
            lines.append(f"| {tag or '1'} | {k[0]} | {k[1]} | {k[2]:g} | "
                         + " | ".join(f"{c[v]:.3f}" for v in CHECK_RULES) + f" | {c['anchor']:.3f} |")
    (HERE / "results" / "dev_rules_scd_clip_check.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:10]))


if __name__ == "__main__":
    if sys.argv[1] == "report":
        report()
    elif sys.argv[1] == "check":
        check(float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
    elif sys.argv[1] == "check_report":
        check_report()
    else:
        sweep(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
