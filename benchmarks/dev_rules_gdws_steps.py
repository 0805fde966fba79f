"""Issue 15, session 9: dp_gdws's step count for the classification losses, at every s.

Session 6 fixed the count at 100 for every classification fit (``GDWS_MIN_CLASSIFICATION`` and
``GDWS_MAX_CLASSIFICATION``, the cap chosen for speed from cells where the old rule asked for
more than 100). This script sweeps the count over every cell of ``bench_defaults.py``'s grid
of one part, for DPLogisticRegression and DPLinearSVC, with dp_gdws otherwise at its defaults
(the same preprocessing, ``data_norm=1`` and delta as the grid; 3 seeds), and reports the mean
test accuracy per cell and count, and the mean gain of each count over 100 by band of the
signal-to-noise ratio ``s`` (:func:`skdp.optimizers._defaults.snr`, public). The rule is chosen
on the development part (``--part dev``: Adult, breast cancer, digits >= 5, and standardised
10-class digits as a multiclass check); ``--part heldout`` (make_classification) runs once the
rule is fixed, to validate it.

Outcome (session 9): on the development part 300 steps beat 100 in 18 of 20 cells at s 16 to
100 for each estimator (+0.6 points on average) and were flat from s = 300; the candidate rule
"300 steps, 100 from s = 300" then lost to 100 steps in 20 of 22 held-out cells of s >= 5 for
each estimator (up to 0.8 / 1.5 points, logistic / svc), so it was not adopted and the default
stays at 100 (the held-out files' *rule* column is that candidate).

    python benchmarks/dev_rules_gdws_steps.py --part dev [--estimators logistic svc]
    python benchmarks/dev_rules_gdws_steps.py --part heldout --counts 100 rule

Writes ``results/dev_rules_gdws_steps_<part>[_<estimator>].md``.
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as B  # noqa: E402

from skdp import DPGDWS, DPLinearSVC, DPLogisticRegression  # noqa: E402
from skdp.optimizers._defaults import budget_rho, gdws_steps, snr  # noqa: E402

PARTS = {"dev": ("adult", "breast_cancer", "digits", "digits10"),
         "heldout": ("make_classification",)}
ESTIMATORS = {"logistic": DPLogisticRegression, "svc": DPLinearSVC}
BANDS = ((0, 5), (5, 16), (16, 100), (100, 300), (300, np.inf))
SEEDS = (0, 1, 2)


def _digits10():
    """Standardised 10-class digits (a multiclass check of the rule; same split and row map as
    the grid's binarised digits)."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X_tr, X_te, y_tr, y_te = B._split(X, y, True)
    X_tr, X_te = B._standardise(X_tr, X_te)
    return ("classification", np.ascontiguousarray(X_tr), y_tr, np.ascontiguousarray(X_te), y_te)


def _subsample(name, n, seed):
    if name == "digits10" and name not in B._DATA:
        B._DATA[name] = _digits10()
    return B.subsample(name, n, seed)


def _sizes(name):
    if name == "digits10" and name not in B._DATA:
        B._DATA[name] = _digits10()
    return B.sizes(name, B.N_GRID)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--part", choices=list(PARTS), default="dev")
    p.add_argument("--estimators", nargs="+", choices=list(ESTIMATORS), default=list(ESTIMATORS))
    p.add_argument("--counts", nargs="+", default=["100", "200", "300", "600"],
                   help="step counts to force; 'rule': the library's current default")
    args = p.parse_args(argv)
    counts = [c if c == "rule" else int(c) for c in args.counts]
    ref = counts[0]
    for est in args.estimators:
        cls = ESTIMATORS[est]
        lines = [f"# dp_gdws step count, {est}, {args.part} part\n",
                 f"`python benchmarks/dev_rules_gdws_steps.py --part {args.part} --estimators {est} "
                 f"--counts {' '.join(args.counts)}`. Mean test accuracy over {len(SEEDS)} seeds "
                 "(bench_defaults.py's data, data_norm 1, delta 1e-5); s is the public "
                 "signal-to-noise ratio n sqrt(2 rho) / sqrt(p). *rule*: the count the library's "
                 "default gives.\n",
                 "| data | n | eps | s | rule T | " + " | ".join(f"T={c}" for c in counts) + " |",
                 "|---|---|---|---|---|" + "---|" * len(counts)]
        gains = {band: {c: [] for c in counts[1:]} for band in BANDS}
        for name in PARTS[args.part]:
            for n in _sizes(name):
                for eps in B.EPS_GRID:
                    _, X, y, _, _ = _subsample(name, n, 0)
                    p_cols = X.shape[1] + 1
                    rho = budget_rho(eps, B.DELTA)
                    s = snr(X.shape[0], p_cols, rho)
                    t_rule = gdws_steps("logistic", X.shape[0], p_cols, rho)
                    means = {}
                    for c in counts:
                        scores = []
                        for seed in SEEDS:
                            _, X, y, X_te, y_te = _subsample(name, n, seed)
                            opt = DPGDWS(max_iter=None if c == "rule" else c)
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                m = cls(epsilon=eps, delta=B.DELTA, optimizer=opt, data_norm=1.0,
                                        random_state=seed).fit(X, y)
                            scores.append(m.score(X_te, y_te))
                        means[c] = float(np.mean(scores))
                    band = next(b for b in BANDS if b[0] <= s < b[1])
                    for c in counts[1:]:
                        gains[band][c].append(means[c] - means[ref])
                    lines.append(f"| {name} | {n} | {eps:g} | {s:.1f} | {t_rule} | " + " | ".join(
                        f"{means[c]:.4f}" for c in counts) + " |")
                    print(est, lines[-1], flush=True)
        lines += ["", f"Gain over T={ref} by band of s: mean (cells where better / cells):", "",
                  "| s | " + " | ".join(f"T={c}" for c in counts[1:]) + " |",
                  "|---|" + "---|" * (len(counts) - 1)]
        for band, g in gains.items():
            if any(g.values()):
                lines.append(f"| {band[0]:g} to {band[1]:g} | " + " | ".join(
                    f"{np.mean(v):+.4f} ({sum(x > 0 for x in v)}/{len(v)})" for v in g.values()) + " |")
        out = HERE / "results" / f"dev_rules_gdws_steps_{args.part}_{est}.md"
        out.write_text("\n".join(lines) + "\n")
        print("\n".join(lines[-8:]))
        print("wrote", out)


if __name__ == "__main__":
    main()
