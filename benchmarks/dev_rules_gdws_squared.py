"""Issue 15, session 9: dp_gdws's defaults on the squared loss, old rule against dp_sgld's.

The old rule (round h17): plain noisy GD (smoothing 1), ``T = s / 5`` steps (5 to 1000) of the
thesis's noise-adaptive step, residual clip equal to the targets' half-range. The new one (the
library's default since session 9): the steps of ``1 / (2 beta)`` that cover dp_sgld's public
Langevin time ``0.01 s^2 / G^2`` (:func:`skdp.optimizers._defaults.noisy_gd_time`), residual
clip a quarter of the half-range: dp_sgld's default fit. Both at ``data_norm=1``,
``y_bounds=(-1, 1)`` and delta 1e-5, as ``bench_defaults.py``.

``--part dev``: the development regression cells of ``bench_defaults.py`` (wine, diabetes,
make_regression). ``--part fresh``: two held-out sets generated for this check, never fitted on
before the rule was chosen (dp_sgld's results on the grid's own held-out part had been seen):
``make_friedman1`` (10 features, 5 informative, noise sd 1; public target bounds 14.4 +- 15,
the generator's mean +- 3 sd) and ``sparse100`` (``make_regression`` with 100 features, 5
informative, Gaussian noise with the signal's sd; bounds +- 3 sd of y, known to the generator);
standardised features, rows of unit norm, 8000 test rows, n and epsilon as the grid.

    python benchmarks/dev_rules_gdws_squared.py --part dev --seeds 2
    python benchmarks/dev_rules_gdws_squared.py --part fresh --seeds 2

Writes ``results/dev_rules_gdws_squared_<part>.md``.
"""

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_friedman1, make_regression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as B  # noqa: E402

from skdp import DPGDWS, DPRidge  # noqa: E402
from skdp.optimizers._defaults import MAX_STEPS, MIN_STEPS, budget_rho, snr  # noqa: E402


class OldRuleGDWS(DPGDWS):
    """dp_gdws on the squared loss as before session 9: T = s / 5 (5 to 1000) steps of the
    noise-adaptive step, smoothing 1 (the clip, 1, is passed to the estimator)."""

    def __init__(self):
        super().__init__(smoothing=1.0, step="noise_adaptive")

    def _n_steps(self, private, problem=None, budget=None):
        s = snr(problem.n_samples, problem.dim, budget_rho(budget.epsilon, budget.delta))
        return int(min(MAX_STEPS, max(MIN_STEPS, round(s / 5.0))))


def _fresh(name):
    if name == "friedman1":
        X, y = make_friedman1(n_samples=40000, n_features=10, noise=1.0, random_state=31)
        centre, bound = 14.4, 15.0
    else:
        X, y, coef = make_regression(n_samples=40000, n_features=100, n_informative=5,
                                     noise=0.0, coef=True, random_state=37)
        sd = float(np.linalg.norm(coef))
        y = y + np.random.default_rng(37).normal(0, sd, size=y.shape)
        centre, bound = 0.0, 3.0 * sd * math.sqrt(2.0)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=8000, random_state=0)
    X_tr, X_te = B._standardise(X_tr, X_te)
    lo, hi = centre - bound, centre + bound
    return X_tr, B._to_unit(y_tr, lo, hi), X_te, B._to_unit(y_te, lo, hi)


def _cells(part):
    if part == "dev":
        for name in B.DEV:
            try:
                task, X_tr, _, _, _ = B.load(name)
            except OSError:
                continue
            if task != "regression":
                continue
            for n in B.sizes(name, B.N_GRID):
                yield name, n, (lambda n=n, name=name: lambda s: B.subsample(name, n, s)[1:])()
    else:
        for name in ("friedman1", "sparse100"):
            X_tr, y_tr, X_te, y_te = _fresh(name)
            for n in B.N_GRID:
                def sample(s, n=n, X_tr=X_tr, y_tr=y_tr, X_te=X_te, y_te=y_te):
                    idx = np.random.default_rng(1000 + s).choice(X_tr.shape[0], n, replace=False)
                    return X_tr[idx], y_tr[idx], X_te, y_te
                yield name, n, sample


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--part", choices=["dev", "fresh"], default="dev")
    p.add_argument("--seeds", type=int, default=2)
    args = p.parse_args(argv)
    rules = {"old rule": lambda: (OldRuleGDWS(), 1.0), "new (default)": lambda: ("dp_gdws", "auto")}
    lines = [f"# dp_gdws on the squared loss: old rule against dp_sgld's ({args.part})\n",
             f"`python benchmarks/dev_rules_gdws_squared.py --part {args.part} --seeds "
             f"{args.seeds}` (see its docstring). Test R^2, mean over the seeds.\n",
             "| data | n | eps | old rule | new (default) | gain |", "|---|---|---|---|---|---|"]
    per_set = {}
    for name, n, sample in _cells(args.part):
        for eps in B.EPS_GRID:
            means = {}
            for label, make in rules.items():
                scores = []
                for seed in range(args.seeds):
                    X, y, X_te, y_te = sample(seed)
                    opt, clip = make()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        m = DPRidge(epsilon=eps, delta=B.DELTA, optimizer=opt, derivative_clip=clip,
                                    data_norm=1.0, y_bounds=(-1.0, 1.0), random_state=seed).fit(X, y)
                    scores.append(r2_score(y_te, m.predict(X_te)))
                means[label] = float(np.mean(scores))
            gain = means["new (default)"] - means["old rule"]
            per_set.setdefault(name, []).append((gain, means))
            lines.append(f"| {name} | {n} | {eps:g} | {means['old rule']:.3f} | "
                         f"{means['new (default)']:.3f} | {gain:+.3f} |")
            print(lines[-1], flush=True)
    lines += ["", "| data | cells | new better | mean R^2 old -> new | mean gain | worst gain |",
              "|---|---|---|---|---|---|"]
    for name, rows in per_set.items():
        g = [r[0] for r in rows]
        old = np.mean([r[1]["old rule"] for r in rows])
        new = np.mean([r[1]["new (default)"] for r in rows])
        lines.append(f"| {name} | {len(g)} | {sum(x > 0 for x in g)} | {old:.3f} -> {new:.3f} | "
                     f"{np.mean(g):+.3f} | {min(g):+.3f} |")
    out = HERE / "results" / f"dev_rules_gdws_squared_{args.part}.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-(len(per_set) + 2):]))


if __name__ == "__main__":
    main()
