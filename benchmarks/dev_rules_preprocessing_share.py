"""Issue 15, session 55: the private preprocessing's share of a pipeline's budget.

``make_private_pipeline`` gives its private preprocessing steps ``DEFAULT_PREPROCESSING_SHARE``
(10%) of the budget's rho, the final estimator the rest. The constant was set when the pipeline
was built, never measured. On the raw-data route the scaler's share decides whether its
releases are reliable (the band's and the quartiles' evidence grows as the square root of the
share) and the model's noise grows as the share is taken from it; where the scaler passes
through it spends nothing and the model gets the whole budget whatever the share.

The comparison: the documented raw-data pipeline at its defaults
(``dev_rules_ridge_masg.fit_raw_pipeline``: ``PrivateRobustScaler`` on the numeric columns,
one-hot with Adult's public categories, DPLogisticRegression or DPRidge at their defaults) with
the share 0.1 (today) against 0.2 and 0.3, the same seed for all; every cell; delta 1e-5.

The decision rule, written before any cell ran:

1. The looked-at step (``sweep``): every case of ``dev_rules_scaler_spread`` (``CASES``,
   ``JUDGE_CASES``, ``JUDGE3_CASES``) and of ``dev_rules_passthrough_band.JUDGE_CASES`` (all
   seen before), epsilon 0.3, 1 and 3, seeds 0 to 4. A candidate passes if its mean paired gain
   over 0.1 (cells: means over the seeds) is >= 0 for each task and no cell loses more than 1
   point of accuracy (0.02 of R^2) with its mean paired gap more than two standard errors below
   zero. The candidate is the passing share with the larger mean gain (the mean of the two
   tasks' means); if neither passes, 0.1 stays and there is no second step.
2. The judge (``judge``): two fresh raw-like tables fixed here before any fit
   (``RAW_LIKE_COLUMNS_5``, other recipes, generator seeds 501 and 502), n 300, 1000 and 3000,
   epsilon 0.3, 1 and 3, seeds 0 to 4. The candidate becomes the default if it passes the same
   test there; otherwise 0.1 stays.

    python benchmarks/dev_rules_preprocessing_share.py sweep    # two processes
    python benchmarks/dev_rules_preprocessing_share.py judge
    python benchmarks/dev_rules_preprocessing_share.py report
"""

import csv
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import dev_rules_passthrough_band as band_rules  # noqa: E402
import dev_rules_scaler_spread as spread_rules  # noqa: E402

EPS = (0.3, 1.0, 3.0)
SEEDS = range(5)
BASE, CANDIDATES = 0.1, (0.2, 0.3)
TOL = spread_rules.TOL
OUT = HERE / "results" / "dev_rules_preprocessing_share.csv"
JUDGE = OUT.with_name(f"{OUT.stem}_judge.csv")

#: the judge's recipes (fixed before any fit), one per column of a standard normal z
RAW_LIKE_COLUMNS_5 = (
    ("rent", lambda z: 1200.0 * np.exp(0.4 * z)),
    ("blood pressure", lambda z: np.round(120.0 + 15.0 * z)),
    ("years employed", lambda z: np.floor(np.exp(1.5 + 0.8 * z))),
    ("share", lambda z: 1.0 / (1.0 + np.exp(-0.5 * z))),
    ("longitude", lambda z: -122.3 + 0.05 * z),
    ("two-valued", lambda z: np.where(z > -0.3, 10.0, 0.0)),
    ("voltage", lambda z: 230.0 + 2.0 * z),
    ("standard", lambda z: z),
    ("cubed", lambda z: z ** 3),
    ("millions", lambda z: 3e6 + 4e5 * z),
)

JUDGE_CASES = [
    ("raw-like 5 classification", "classification",
     spread_rules.raw_like("classification", RAW_LIKE_COLUMNS_5, (501, 502)), (300, 1000, 3000)),
    ("raw-like 5 regression", "regression",
     spread_rules.raw_like("regression", RAW_LIKE_COLUMNS_5, (501, 502)), (300, 1000, 3000)),
]
CASE_LISTS = {"cases": spread_rules.CASES + spread_rules.JUDGE_CASES + spread_rules.JUDGE3_CASES
              + band_rules.JUDGE_CASES, "judge": JUDGE_CASES}


def fit_score(task, X_tr, y_tr, X_te, y_te, num, cat, share, eps, seed):
    """The raw-data pipeline's test score with the preprocessing share ``share``."""
    from dev_rules_ridge_masg import fit_raw_pipeline

    import skdp.pipeline as pipeline_module
    from skdp import DPLogisticRegression, DPRidge

    default = pipeline_module.DEFAULT_PREPROCESSING_SHARE
    pipeline_module.DEFAULT_PREPROCESSING_SHARE = share
    try:
        est = DPLogisticRegression if task == "classification" else DPRidge
        pipe = fit_raw_pipeline(X_tr, y_tr, num, cat, "auto", eps, seed, estimator=est)
    finally:
        pipeline_module.DEFAULT_PREPROCESSING_SHARE = default
    return float(pipe.score(X_te, y_te))


def _shard(args):
    indices, out, cases = args
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "task", "n", "eps", "seed", "share", "score"])
        for name, task, data, sizes in (CASE_LISTS[cases][i] for i in indices):
            for size in sizes:
                for seed in SEEDS:
                    X_tr, y_tr, X_te, y_te, num, cat = data(size, seed)
                    for eps in EPS:
                        for share in (BASE,) + CANDIDATES:
                            score = fit_score(task, X_tr, y_tr, X_te, y_te, num, cat, share,
                                              eps, seed)
                            w.writerow([name, task, len(X_tr), eps, seed, share, f"{score:.5f}"])
                    fh.flush()
                print("done", name, size, flush=True)


def sweep(out=OUT, cases="cases"):
    spread_rules.in_two_shards(_shard, len(CASE_LISTS[cases]), out, cases)


def cells(out):
    """``{(dataset, task, n, eps): {share: {seed: score}}}``."""
    scores = {}
    for path in sorted(out.parent.glob(f"{out.stem}_[0-9]of2.csv")):
        with open(path) as fh:
            for r in csv.DictReader(fh):
                key = (r["dataset"], r["task"], int(r["n"]), float(r["eps"]))
                scores.setdefault(key, {}).setdefault(float(r["share"]), {})[int(r["seed"])] = (
                    float(r["score"]))
    return scores


def gains(scores, share):
    return {key: np.array([by[share][k] - by[BASE][k] for k in sorted(by[BASE])])
            for key, by in scores.items()}


def passes(scores, share):
    """(passes, mean gain per task, losing cells) of ``share`` against ``BASE``."""
    return spread_rules.rule_outcome(gains(scores, share))


def table_lines(scores, title):
    shares = (BASE,) + CANDIDATES
    lines = [title, "", "| data | n | eps | " + " | ".join(f"share {s:g}" for s in shares)
             + " | " + " | ".join(f"gain {s:g} (s.e.)" for s in CANDIDATES) + " |",
             "|---|---|---|" + "---|" * (len(shares) + len(CANDIDATES))]
    for key in sorted(scores, key=lambda k: (k[1], k[0], k[2], k[3])):
        by = scores[key]
        row = [f"{np.mean(list(by[s].values())):.4f}" for s in shares]
        for s in CANDIDATES:
            g = gains({key: by}, s)[key]
            row.append(f"{g.mean():+.4f} ({g.std(ddof=1) / np.sqrt(len(g)):.4f})")
        lines.append(f"| {key[0]} | {key[2]} | {key[3]:g} | " + " | ".join(row) + " |")
    lines += ["", "| share | passes | mean gain per task | losing cells |", "|---|---|---|---|"]
    for s in CANDIDATES:
        ok, mean, losses = passes(scores, s)
        lines.append(f"| {s:g} | {'yes' if ok else 'no'} | "
                     + "; ".join(f"{task} {m:+.4f}" for task, m in mean.items()) + " | "
                     + (", ".join(f"{k[0]} n {k[2]} eps {k[3]:g}" for k in losses) or "none")
                     + " |")
    return lines


def report():
    looked = cells(OUT)
    passing = [s for s in CANDIDATES if passes(looked, s)[0]]
    candidate = max(passing, key=lambda s: np.mean(list(passes(looked, s)[1].values())),
                    default=None)
    lines = ["# The private preprocessing's share of a pipeline's budget (session 55)", "",
             "`benchmarks/dev_rules_preprocessing_share.py` (its docstring: the cases and the "
             "decision rule). The raw-data pipeline at its defaults with the preprocessing's "
             "share of rho 0.1 (today), 0.2 and 0.3; means over seeds 0 to 4 and the paired "
             "gains over 0.1.", ""]
    lines += table_lines(looked, "## The looked-at cases")
    lines += ["", "Candidate: " + (f"{candidate:g}" if candidate else
                                   "none (0.1 stays, no second step)") + "."]
    if candidate and any(JUDGE.parent.glob(f"{JUDGE.stem}_[0-9]of2.csv")):
        judged = cells(JUDGE)
        lines += [""] + table_lines(judged, "## The judge: two fresh raw-like tables")
        adopt = passes(judged, candidate)[0]
        lines += ["", "Decision: DEFAULT_PREPROCESSING_SHARE "
                  + (f"becomes {candidate:g}" if adopt else "stays 0.1") + "."]
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "report"
    {"sweep": sweep, "judge": lambda: sweep(JUDGE, "judge"), "report": report}[command]()
