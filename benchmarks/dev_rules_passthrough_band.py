"""Issue 15, session 55: where PrivateRobustScaler should stop passing through, for the MAD band.

``PrivateRobustScaler(if_unreliable="passthrough")`` (the default) passes the features through
unscaled when its releases have less than ``PASSTHROUGH_EVIDENCE`` (0.5) of the evidence the
reliability rule asks for. The constant was fitted on 21 public cells with the two quartiles per
feature; session 54's ``spread="auto"`` releases a MAD band below the quartiles' reliability
(three medians per feature, about 1.65 times a quartile's evidence) and kept the constant,
applied to the band's own evidence, without refitting it. This script measures whether the band
should be released at lower evidence than 0.5.

The comparison: the documented raw-data pipeline at its defaults
(``dev_rules_ridge_masg.fit_raw_pipeline``: ``PrivateRobustScaler`` on the numeric columns,
one-hot with Adult's public categories, DPLogisticRegression or DPRidge at their defaults),
``if_unreliable="passthrough"`` (today's default) against ``if_unreliable="scale"`` (the band
released whatever its evidence), the same seed for both; only the cells whose band evidence
(public: n, d, the scaler's budget, the grids; recorded from the scaler's own computation) is in
[0.1, 0.5), where a lower threshold would change the decision; seeds 0 to 9; delta 1e-5.
A threshold ``t`` releases the band in the cells with evidence in [t, 0.5) and passes through
below ``t``: its gain in a cell is the measured gain there, zero elsewhere.

The decision rule, written before any cell ran:

1. The looked-at step (``sweep``): every case of ``dev_rules_scaler_spread`` (``CASES``,
   ``JUDGE_CASES``, ``JUDGE3_CASES``; all seen in session 54), epsilon 0.3, 1 and 3. A
   threshold ``t`` in (0.4, 0.3, 0.2, 0.1) passes if, on the cells with evidence in [t, 0.5),
   the mean paired gain is >= 0 for each task that has such cells, and no such cell loses more
   than 1 point of accuracy (0.02 of R^2) with its mean paired gap more than two standard errors
   below zero. The candidate is the lowest passing ``t``; if none passes, 0.5 stays and there is
   no second step.
2. The judge (``judge``): two fresh raw-like tables fixed here before any fit
   (``RAW_LIKE_COLUMNS_4``, other recipes and generator seeds 301 and 302), n 150, 300, 700 and
   1500, epsilon 0.3, 1 and 3 (the cells in [0.1, 0.5) only). The candidate becomes
   ``PASSTHROUGH_EVIDENCE`` if it passes the same test on the judge's cells in [t, 0.5);
   otherwise 0.5 stays.

    python benchmarks/dev_rules_passthrough_band.py sweep    # two processes
    python benchmarks/dev_rules_passthrough_band.py judge
    python benchmarks/dev_rules_passthrough_band.py report
"""

import csv
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import dev_rules_scaler_spread as spread_rules  # noqa: E402

EPS = (0.3, 1.0, 3.0)
SEEDS = range(10)
LOW, HIGH = 0.1, 0.5  # the evidence range where a lower threshold changes the decision
CANDIDATES = (0.4, 0.3, 0.2, 0.1)
TOL = spread_rules.TOL
OUT = HERE / "results" / "dev_rules_passthrough_band.csv"
JUDGE = OUT.with_name(f"{OUT.stem}_judge.csv")

#: the judge's recipes (fixed before any fit), one per column of a standard normal z
RAW_LIKE_COLUMNS_4 = (
    ("salary", lambda z: 3e4 * np.exp(0.5 * z)),
    ("height", lambda z: 170.0 + 10.0 * z),
    ("weight", lambda z: np.round(70.0 + 12.0 * z)),
    ("days", lambda z: np.floor(np.exp(2.0 + 0.5 * z))),
    ("probability", lambda z: 1.0 / (1.0 + np.exp(-2.0 * z))),
    ("elevation", lambda z: 500.0 + 300.0 * z),
    ("binary", lambda z: (z > 0.52).astype(float)),
    ("concentration", lambda z: 1e-3 * np.exp(0.3 * z)),
    ("score", lambda z: np.clip(np.round(50.0 + 15.0 * z), 0.0, 100.0)),
    ("standard", lambda z: z),
    ("debt", lambda z: -1e4 + 5e3 * z),
    ("rate", lambda z: 0.05 + 0.01 * z),
)

JUDGE_CASES = [
    ("raw-like 4 classification", "classification",
     spread_rules.raw_like("classification", RAW_LIKE_COLUMNS_4, (301, 302)),
     (150, 300, 700, 1500)),
    ("raw-like 4 regression", "regression",
     spread_rules.raw_like("regression", RAW_LIKE_COLUMNS_4, (301, 302)),
     (150, 300, 700, 1500)),
]
CASE_LISTS = {"cases": spread_rules.CASES + spread_rules.JUDGE_CASES + spread_rules.JUDGE3_CASES,
              "judge": JUDGE_CASES}


def fit_score(task, X_tr, y_tr, X_te, y_te, num, cat, if_unreliable, eps, seed):
    """The raw-data pipeline's test score, and the evidence of the scaler's last release
    scheme (the band's below the quartiles' reliability), read from its own computation."""
    from dev_rules_ridge_masg import fit_raw_pipeline

    import skdp.preprocessing._scaler as scaler_module
    from skdp import DPLogisticRegression, DPRidge

    seen, evidence_ratio = [], scaler_module.evidence_ratio

    def recorded(*args, **kwargs):
        seen.append(evidence_ratio(*args, **kwargs))
        return seen[-1]

    scaler_module.evidence_ratio = recorded
    try:
        est = DPLogisticRegression if task == "classification" else DPRidge
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = fit_raw_pipeline(X_tr, y_tr, num, cat, "auto", eps, seed, estimator=est,
                                    if_unreliable=if_unreliable)
    finally:
        scaler_module.evidence_ratio = evidence_ratio
    return float(pipe.score(X_te, y_te)), seen[-1]


def _shard(args):
    indices, out, cases = args
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "task", "n", "eps", "evidence", "seed", "if_unreliable", "score"])
        for name, task, data, sizes in (CASE_LISTS[cases][i] for i in indices):
            for size in sizes:
                for eps in EPS:
                    for seed in SEEDS:
                        X_tr, y_tr, X_te, y_te, num, cat = data(size, seed)
                        score, evidence = fit_score(task, X_tr, y_tr, X_te, y_te, num, cat,
                                                    "passthrough", eps, seed)
                        if not LOW <= evidence < HIGH:
                            break  # public: the same for every seed of the cell
                        band, _ = fit_score(task, X_tr, y_tr, X_te, y_te, num, cat, "scale",
                                            eps, seed)
                        for arm, s in (("passthrough", score), ("scale", band)):
                            w.writerow([name, task, len(X_tr), eps, f"{evidence:.4f}", seed,
                                        arm, f"{s:.5f}"])
                    fh.flush()
                print("done", name, size, flush=True)


def sweep(out=OUT, cases="cases"):
    spread_rules.in_two_shards(_shard, len(CASE_LISTS[cases]), out, cases)


def cells(out):
    """``{(dataset, task, n, eps): (evidence, passthrough scores, gains per seed)}``."""
    scores = {}
    for path in sorted(out.parent.glob(f"{out.stem}_[0-9]of2.csv")):
        with open(path) as fh:
            for r in csv.DictReader(fh):
                key = (r["dataset"], r["task"], int(r["n"]), float(r["eps"]))
                by = scores.setdefault(key, {"evidence": float(r["evidence"])})
                by.setdefault(r["if_unreliable"], {})[int(r["seed"])] = float(r["score"])
    return {key: (by["evidence"], np.array([by["passthrough"][k] for k in sorted(by["scale"])]),
                  np.array([by["scale"][k] - by["passthrough"][k] for k in sorted(by["scale"])]))
            for key, by in scores.items()}


def passes(table, t):
    """Whether threshold ``t`` passes the rule on ``table``'s cells in [t, 0.5); the mean gain
    per task and the cells that lose beyond the tolerance and two standard errors."""
    return spread_rules.rule_outcome(
        {key: g for key, (evidence, _, g) in table.items() if evidence >= t})


def table_lines(table, title):
    lines = [title, "", "| data | n | eps | evidence | passthrough | band | gain | s.e. |",
             "|---|---|---|---|---|---|---|---|"]
    for key in sorted(table, key=lambda k: (k[1], -table[k][0])):
        evidence, base, g = table[key]
        lines.append(f"| {key[0]} | {key[2]} | {key[3]:g} | {evidence:.2f} | {base.mean():.4f} "
                     f"| {base.mean() + g.mean():.4f} | {g.mean():+.4f} | "
                     f"{g.std(ddof=1) / np.sqrt(len(g)):.4f} |")
    lines += ["", "| threshold | passes | mean gain per task (cells in [t, 0.5)) | losing cells |",
              "|---|---|---|---|"]
    for t in CANDIDATES:
        ok, mean, losses = passes(table, t)
        lines.append(f"| {t:g} | {'yes' if ok else 'no'} | "
                     + "; ".join(f"{task} {m:+.4f}" for task, m in mean.items())
                     + " | " + (", ".join(f"{k[0]} n {k[2]} eps {k[3]:g}" for k in losses)
                                or "none") + " |")
    return lines


def report():
    looked = cells(OUT)
    passing = [t for t in CANDIDATES if passes(looked, t)[0]]
    candidate = min(passing) if passing else None
    lines = ["# PrivateRobustScaler's passthrough threshold for the MAD band (session 55)", "",
             "`benchmarks/dev_rules_passthrough_band.py` (its docstring: the cases and the "
             "decision rule). The raw-data pipeline at its defaults, `if_unreliable="
             "\"passthrough\"` (threshold 0.5) against `\"scale\"` (the band released), means "
             "over seeds 0 to 9 and the paired gain, in the cells whose band evidence is in "
             "[0.1, 0.5).", ""]
    lines += table_lines(looked, "## The looked-at cases")
    lines += ["", "Candidate: " + (f"{candidate:g}" if candidate else
                                   "none (0.5 stays, no second step)") + "."]
    if candidate and any(JUDGE.parent.glob(f"{JUDGE.stem}_[0-9]of2.csv")):
        judged = cells(JUDGE)
        lines += [""] + table_lines(judged, "## The judge: two fresh raw-like tables")
        adopt = passes(judged, candidate)[0]
        lines += ["", "Decision: PASSTHROUGH_EVIDENCE "
                  + (f"becomes {candidate:g}" if adopt else "stays 0.5") + "."]
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "report"
    {"sweep": sweep, "judge": lambda: sweep(JUDGE, "judge"), "report": report}[command]()
