"""Issue 15, session 36: dp_scd's squared-hinge update clip where DPLinearSVC's default runs it.

A binary DPLinearSVC with a public row bound runs dp_scd below ``s = 8``
(:data:`skdp.optimizers._defaults.SVC_DUAL_MAX_SNR`). Session 34 refitted the squared hinge's
multiple of the natural dual step to ``min(1, (n^0.75 / z / 100) ** 0.75)`` (from
``min(1, n^0.75 / z / 52)``), searched by counting cells more than a point below the Opacus
anchor. At the smallest budgets dp_scd is far above the anchor under either rule, so that count
did not see them, and session 35 found the new multiple cost the SVC default 0.21 points on
average over its 32 dp_scd cells of the docs' grid (5 cells by 0.6 to 1.7 points, all at
epsilon 0.1 and n <= 1000, where the new multiple is the larger).

Session 33's sweep (``dev_rules_scd_width.py svc``, seeds 0 to 2) stops at 1/16 of the natural
step, and at s < 8 its best factor is that smallest one in most cells: the optimum lies at or
below the edge. ``sweep`` extends it downwards (1/128, 1/64, 1/32, and 1/16 again to check that
it reproduces the earlier run) on the same looked-at sets, seeds and public bound 1, for the
cells with ``s < 8`` only (``s = n sqrt(2 rho) / sqrt(p)``, p the columns with the intercept, as
the default's rule reads it); ``report`` merges the two sweeps and asks which rule of the family
``min(1, (r / k) ** a)``, ``r = n^0.75 / z``, has the best mean score over those cells (scores
interpolated in log g). The eighth held-out part (``bench_defaults.HELDOUT8``) is never loaded.

``check 1`` and ``check auto`` then run the adopted rule (the smaller of the two:
:data:`skdp.optimizers.dp_scd.CLIP_LINEAR_SNR`) against session 34's alone directly, on fresh
seeds 3 to 5 of every looked-at cell where the two differ (``r < 7.3``), at the public bound 1
and at ``data_norm="auto"`` (where the default runs dp_gdws, but ``optimizer="dp_scd"`` runs
this rule).

The judgement is the eighth held-out part (``bench_defaults.HELDOUT8``, fixed in session 35
before any of its cells was run): ``bench_defaults.py --heldout heldout8`` at the new rule, and
``heldout8_before`` here, its SVC cells of dp_gdws and dp_scd (the default's two) at session 34's
rule alone (``defaults_report.py`` has the commands).

    python benchmarks/dev_rules_scd_svc_small_s.py sweep       # about 2 minutes
    python benchmarks/dev_rules_scd_svc_small_s.py check 1     # and auto; a minute each
    python benchmarks/dev_rules_scd_svc_small_s.py report      # -> results/...small_s.md
    python benchmarks/dev_rules_scd_svc_small_s.py heldout8_before   # a few minutes
"""

import csv
import math
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
import dev_rules_scd_width as width  # noqa: E402
from dev_rules_scd_clip import score_at_factor  # noqa: E402
from skdp.optimizers import dp_scd  # noqa: E402
from skdp.optimizers._defaults import SVC_DUAL_MAX_SNR, budget_rho, snr  # noqa: E402

FAMILY = "squared_hinge"
FACTORS = (1 / 128, 1 / 64, 1 / 32, 1 / 16)
OUT = HERE / "results" / "dev_rules_scd_svc_small_s.csv"
EARLIER = HERE / "results" / "dev_rules_scd_width_svc.csv"


def cell_snr(n, d, eps):
    """The default's s for a cell: p = d + 1 columns (the intercept's included)."""
    return snr(n, d + 1, budget_rho(eps, bd.DELTA))


def sweep():
    assert not set(width.DATASETS) & set(bd.HELDOUT8)
    keep = {key: getattr(dp_scd, key)[FAMILY] for key in ("CLIP_MAX", "CLIP_SNR", "CLIP_EXPONENT")}
    with open(OUT, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "d", "n", "eps", "seed", "g", "score", "anchor"])
        for name, n, eps, seed, X_tr, y_tr, X_te, y_te, anchor in width.anchored_cells("svc"):
            if cell_snr(n, X_tr.shape[1], eps) >= SVC_DUAL_MAX_SNR:
                continue
            for g in FACTORS:
                score = score_at_factor("svc", g, X_tr, y_tr, X_te, y_te, eps, seed)
                w.writerow([name, X_tr.shape[1], n, eps, seed, g, f"{score:.5f}", f"{anchor:.5f}"])
            fh.flush()
            print(name, n, eps, seed, flush=True)
    for key, v in keep.items():
        getattr(dp_scd, key)[FAMILY] = v


#: ``check``'s rules, by the k of the linear bound ``r / k`` (inf: none): session 34's alone, and
#: the smaller of it and session 13's (adopted)
CHECK_RULES = {"session 34 alone": math.inf, "the smaller of the two (adopted)": 52.0}
CHECK_SEEDS = range(3, 6)


def check_path(data_norm):
    return HERE / "results" / f"dev_rules_scd_svc_small_s_check{width.bound_tag(data_norm)}.csv"


def check(data_norm):
    """:data:`CHECK_RULES` run directly on seeds 3 to 5 of the looked-at cells where they
    differ, at ``data_norm`` (1 or "auto")."""
    kept = dict(dp_scd.CLIP_LINEAR_SNR)
    with open(check_path(data_norm), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "d", "n", "eps", "seed", "rule", "score", "anchor"])
        for name, n, eps, seed, X_tr, y_tr, X_te, y_te, anchor in width.anchored_cells(
                "svc", CHECK_SEEDS):
            if multiple(n, eps, 52.0, 1.0) >= multiple(n, eps, 100.0, 0.75):
                continue  # the two rules agree here
            for label, k in CHECK_RULES.items():
                dp_scd.CLIP_LINEAR_SNR.pop(FAMILY, None)
                if math.isfinite(k):
                    dp_scd.CLIP_LINEAR_SNR[FAMILY] = k
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    score = bd.skdp_fit("svc", "dp_scd", X_tr, y_tr, X_te, y_te, eps, seed,
                                        data_norm)[0]
                w.writerow([name, X_tr.shape[1], n, eps, seed, label, f"{score:.5f}",
                            f"{anchor:.5f}"])
            fh.flush()
            print(name, n, eps, seed, flush=True)
    dp_scd.CLIP_LINEAR_SNR.clear()
    dp_scd.CLIP_LINEAR_SNR.update(kept)


def check_report():
    """Markdown lines: each checked rule's mean over the cells, against session 34's alone."""
    lines = []
    for data_norm in (1.0, "auto"):
        path = check_path(data_norm)
        if not path.exists():
            continue
        by = {}
        with open(path) as fh:
            for r in csv.DictReader(fh):
                key = (r["dataset"], int(r["n"]), float(r["eps"]))
                c = by.setdefault(key, {"anchor": [], **{lab: [] for lab in CHECK_RULES}})
                c[r["rule"]].append(float(r["score"]))
                if r["rule"] == next(iter(CHECK_RULES)):
                    c["anchor"].append(float(r["anchor"]))
        base, new = (np.array([np.mean(c[lab]) for c in by.values()]) for lab in CHECK_RULES)
        anchor = np.array([np.mean(c["anchor"]) for c in by.values()])
        gain = new - base
        bound = "the public bound 1" if data_norm == 1.0 else '`data_norm="auto"`'
        lines += ["", f"## Run directly on fresh seeds 3 to 5, at {bound}", "",
                  f"{len(by)} cells (every looked-at cell where the rules differ). Mean "
                  f"{base.mean():.4f} -> {new.mean():.4f} ({100 * gain.mean():+.2f} points; "
                  f"standard error over cells {100 * gain.std(ddof=1) / len(gain) ** 0.5:.2f}); "
                  f"better by > 0.5 point in {int(np.sum(gain > 0.005))}, worse by > 0.5 in "
                  f"{int(np.sum(gain < -0.005))}, worst {100 * gain.min():+.2f}; cells more than "
                  f"1 point below the anchor {int(np.sum(base - anchor < -0.01))} -> "
                  f"{int(np.sum(new - anchor < -0.01))}.", "",
                  "| data | n | eps | session 34 alone | the smaller of the two | anchor |",
                  "|---|---|---|---|---|---|"]
        for (name, n, eps), c in sorted(by.items()):
            vals = [np.mean(c[lab]) for lab in CHECK_RULES]
            lines.append(f"| {name} | {n} | {eps:g} | {vals[0]:.4f} | {vals[1]:.4f} | "
                         f"{np.mean(c['anchor']):.4f} |")
    return lines


def read(path, cells):
    """Add ``path``'s rows to ``cells``: (dataset, d, n, eps) -> {g: {seed: score}}, anchors."""
    with open(path) as fh:
        for r in csv.DictReader(fh):
            key = (r["dataset"], int(r["d"]), int(r["n"]), float(r["eps"]))
            if cell_snr(key[2], key[1], key[3]) >= SVC_DUAL_MAX_SNR:
                continue
            c = cells.setdefault(key, {"scores": {}, "anchor": {}})
            c["scores"].setdefault(float(r["g"]), {})[r["seed"]] = float(r["score"])
            c["anchor"][r["seed"]] = float(r["anchor"])
    return cells


def ratio(n, eps):
    """``r = n^0.75 / z``, the quantity the squared hinge's multiple is a function of."""
    return n ** dp_scd.CLIP_N_EXPONENT[FAMILY] / dp_scd._gaussian_multiplier(eps, bd.DELTA)


def multiple(n, eps, k, a, cap=1.0):
    return min(cap, (ratio(n, eps) / k) ** a)


def mean_score(c, g):
    """The cell's mean score at factor g, interpolated in log g over the factors swept."""
    gs = np.array(sorted(c["scores"]))
    means = [np.mean(list(c["scores"][x].values())) for x in gs]
    return float(np.interp(math.log(g), np.log(gs), means))


def report():
    new = read(OUT, {})
    reproduced = []
    cells = read(EARLIER, {})
    for key, c in new.items():
        earlier = cells[key]["scores"].get(1 / 16, {})
        reproduced += [abs(earlier[s] - v) < 1e-5 for s, v in c["scores"][1 / 16].items()
                       if s in earlier]
        for g, by_seed in c["scores"].items():
            cells[key]["scores"].setdefault(g, {}).update(by_seed)
    keys = sorted(k for k in cells if k in new)
    lines = ["# dp_scd's squared-hinge update clip at s < 8 (session 36)", "",
             "Made by `benchmarks/dev_rules_scd_svc_small_s.py report` from "
             "`dev_rules_scd_svc_small_s.csv` (factors 1/128 to 1/16, this session) and "
             "`dev_rules_scd_width_svc.csv` (1/16 to 3, session 33): DPLinearSVC's dp_scd on every "
             "looked-at classification set, seeds 0 to 2, public row bound 1, the cells with "
             f"s < {SVC_DUAL_MAX_SNR:g} (where the default runs dp_scd); {len(keys)} cells. "
             f"The rerun of g = 1/16 reproduces session 33's scores in {sum(reproduced)} of "
             f"{len(reproduced)} fits.", ""]
    best_g = {k: max(cells[k]["scores"], key=lambda g: mean_score(cells[k], g)) for k in keys}
    lines += ["## Best factor swept per cell", "",
              "| data | d | n | eps | s | r = n^0.75/z | today's factor | best g | score at best | "
              "at today's | anchor |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in keys:
        name, d, n, eps = k
        today = dp_scd.clip_factor(FAMILY, n, eps, bd.DELTA)
        lines.append(f"| {name} | {d} | {n} | {eps:g} | {cell_snr(n, d, eps):.1f} | "
                     f"{ratio(n, eps):.2f} | {today:.3f} | {best_g[k]:.4g} | "
                     f"{mean_score(cells[k], best_g[k]):.4f} | {mean_score(cells[k], today):.4f} | "
                     f"{np.mean(list(cells[k]['anchor'].values())):.4f} |")
    rules = {"today (100, 0.75)": lambda n, e: multiple(n, e, 100.0, 0.75),
             "session 13 (52, 1)": lambda n, e: multiple(n, e, 52.0, 1.0),
             "min of the two": lambda n, e: min(multiple(n, e, 100.0, 0.75),
                                                multiple(n, e, 52.0, 1.0))}
    family = {(k_, a): (lambda k_, a: lambda n, e: multiple(n, e, k_, a))(k_, a)
              for k_ in (52.0, 75.0, 100.0, 150.0, 200.0, 300.0, 400.0, 600.0, 800.0)
              for a in (0.5, 0.75, 1.0, 1.25, 1.5)}

    def summary(f):
        scores = np.array([mean_score(cells[k], f(k[2], k[3])) for k in keys])
        base = np.array([mean_score(cells[k], rules["today (100, 0.75)"](k[2], k[3]))
                         for k in keys])
        return scores.mean(), (scores - base).min(), int(np.sum(scores - base > 0.005)), \
            int(np.sum(scores - base < -0.005))

    lines += ["", "## Rules: mean score over the cells, against today's", "",
              "| rule | mean | worst cell against today | cells better by > 0.5 point | "
              "worse by > 0.5 |", "|---|---|---|---|---|"]
    for label, f in rules.items():
        m, worst, up, down = summary(f)
        lines.append(f"| {label} | {m:.4f} | {100 * worst:+.2f} | {up} | {down} |")
    ranked = sorted(family.items(), key=lambda kv: -summary(kv[1])[0])
    lines += ["", "The family `min(1, (r / k) ** a)`, the ten best by mean:", "",
              "| (k, a) | mean | worst cell against today | better by > 0.5 | worse by > 0.5 |",
              "|---|---|---|---|---|"]
    for (k_, a), f in ranked[:10]:
        m, worst, up, down = summary(f)
        lines.append(f"| ({k_:g}, {a:g}) | {m:.4f} | {100 * worst:+.2f} | {up} | {down} |")
    lines += check_report()
    (HERE / "results" / "dev_rules_scd_svc_small_s.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def heldout8_before():
    """The eighth held-out part's SVC cells of dp_gdws and dp_scd at session 34's rule alone
    (the linear bound off) -> results/defaults_s36_heldout8_svc_before.csv."""
    dp_scd.CLIP_LINEAR_SNR.pop(FAMILY)
    bd.main(["--heldout", "heldout8", "--estimators", "svc", "--optimizers", "dp_gdws", "dp_scd",
             "--seeds", "10", "--cached-only", "--out", "defaults_s36_heldout8_svc_before"])


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check(1.0 if sys.argv[2] == "1" else "auto")
    else:
        {"sweep": sweep, "report": report, "heldout8_before": heldout8_before}[sys.argv[1]]()
