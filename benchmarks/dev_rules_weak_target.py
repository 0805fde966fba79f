"""Issue 15, session 32: two levers for the weak target below the majority class.

Session 31 found ``adult_private`` (Adult's workclass "Private", fifth held-out part, now
looked at) at n 1000, epsilon 0.3 under the majority class for every optimizer (criterion a).
DPLogisticRegression's default there is dp_gdws, whose noise-adaptive step leaves about the same
noise on every coordinate of the model whatever n and epsilon (about 1 per coordinate at 100
steps): on a target the features barely predict, that noise outweighs the intercept (logit of
the 69% majority: 0.8) and the model predicts the minority class at random. Two levers that
would let the intercept win there, each measured against today's default on the same seeds:

* **a shorter step**: dp_gdws's step times m in {1/4, 1/2} (the noise and the signal on the
  features shrink together, the intercept still converges in 100 steps);
* **a private recalibration** (a prototype, not a privacy claim): the default fit at
  a share 1 - f of the budget's zCDP rho, then DPLogisticRegression on the one feature
  ``z = clip(x.w / M, -1, 1)`` at the share f (each at delta / 2), the model's decision being
  the recalibrated ``a z + c`` (Platt scaling). ``M = 3 |w| / sqrt(d)`` (public: the released
  w and d), the typical size of a noise-bound margin; f = 5%.

The grid's data, data_norm and delta, seeds 10 to 29 (not the grid's), test accuracy minus the
majority class; cells of the development and looked-at held-out parts only (the sixth held-out
part, ``bench_defaults.HELDOUT6``, stays unseen). Writes ``results/dev_rules_weak_target.md``.

    python benchmarks/dev_rules_weak_target.py     # about 5 minutes
"""

import math
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

from skdp import DPGDWS, DPLogisticRegression  # noqa: E402
from skdp.privacy.langevin import epsilon_mironov  # noqa: E402
from skdp.privacy.record import zcdp_rho_for_budget  # noqa: E402

SEEDS = range(10, 30)
STEP_FACTORS = (0.25, 0.5)
RECAL_SHARE = 0.05
CELLS = [("adult_private", 1000, 0.3), ("adult_private", 2000, 0.3), ("adult_private", 1000, 1.0),
         ("adult", 1000, 0.3), ("adult", 10000, 0.3), ("adult_married", 1000, 0.3),
         ("make_classification_mid", 1000, 0.3), ("make_classification_skewed", 1000, 0.3),
         ("wine_good", 1000, 0.3)]


def _model(eps, delta, seed, **kw):
    return DPLogisticRegression(epsilon=eps, delta=delta, data_norm=1.0, random_state=seed, **kw)


def recalibrated_score(X, y, X_te, y_te, eps, seed, share=RECAL_SHARE):
    """Test accuracy of the default fit at (1 - share) rho recalibrated at share rho."""
    rho = zcdp_rho_for_budget(eps, bd.DELTA)
    half = bd.DELTA / 2
    # each share's epsilon by the same conversion rho + 2 sqrt(rho log(1/delta))
    fit = _model(epsilon_mironov((1 - share) * rho, half)[0], half, seed).fit(X, y)
    w = fit.coef_.ravel()
    scale = 3.0 * np.linalg.norm(w) / math.sqrt(X.shape[1])

    def feature(A):
        return np.clip(A @ w / scale, -1.0, 1.0)[:, None]

    platt = _model(epsilon_mironov(share * rho, half)[0], half, seed + 999).fit(feature(X), y)
    return platt.score(feature(X_te), y_te)


def cell(name, n, eps):
    """Per-seed accuracy minus the majority class: the default and each lever."""
    out = {"default": [], **{f"step x{m:g}": [] for m in STEP_FACTORS}, "recalibrated": []}
    for seed in SEEDS:
        _, X, y, X_te, y_te = bd.subsample(name, n, seed)
        base = bd.baseline_score("classification", y, y_te)
        default = _model(eps, bd.DELTA, seed).fit(X, y)
        out["default"].append(default.score(X_te, y_te) - base)
        step = default.hyperparameters_["step"]
        for m in STEP_FACTORS:
            shorter = _model(eps, bd.DELTA, seed, optimizer=DPGDWS(step=m * step)).fit(X, y)
            out[f"step x{m:g}"].append(shorter.score(X_te, y_te) - base)
        out["recalibrated"].append(recalibrated_score(X, y, X_te, y_te, eps, seed) - base)
    return {k: 100 * np.array(v) for k, v in out.items()}


def main():
    lines = ["# Weak targets: a shorter dp_gdws step, or a private recalibration\n",
             "`python benchmarks/dev_rules_weak_target.py` (see its docstring). "
             "DPLogisticRegression at its default (dp_gdws in every cell here); test accuracy "
             f"minus the majority class in points, mean over seeds {SEEDS.start} to "
             f"{SEEDS.stop - 1}; for each lever the paired per-seed change against the default "
             "(standard error).\n",
             "| data | n | eps | default | " + " | ".join(
                 f"step x{m:g}" for m in STEP_FACTORS) + f" | recalibrated (f {RECAL_SHARE:g}) |",
             "|---|---|---|---|" + "---|" * (len(STEP_FACTORS) + 1)]
    for name, n, eps in CELLS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = cell(name, n, eps)
        d = r["default"]
        changes = [f"{np.mean(v - d):+.2f} ({np.std(v - d, ddof=1) / math.sqrt(v.size):.2f})"
                   for k, v in r.items() if k != "default"]
        lines.append(f"| {name} | {n} | {eps:g} | {d.mean():+.2f} | " + " | ".join(changes) + " |")
        print(lines[-1], flush=True)
    out = bd.RESULTS / "dev_rules_weak_target.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
