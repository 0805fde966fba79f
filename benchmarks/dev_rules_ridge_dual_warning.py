"""Whether dp_scd's weak-regularisation warning holds for DPRidge (session 30).

dp_scd warns when ``lam n`` in units of the row bound (``alpha / data_norm**2`` for DPRidge)
is below ``DUAL_MIN_REGULARISATION`` (1/16), a threshold measured on classifiers (raw breast
cancer: the majority class). For DPRidge it fired on every default fit of standardised data
with about 8 or more features (``data_norm="auto"`` releases a bound near ``sqrt(2 d)``). This
script compares dp_scd with dp_gdws (the primal method the warning names) at DPRidge's other
defaults on public data where the warning fires:

* make_regression (d 10 and 30, half informative, noise 20), rows scaled by 1, 3, 10, 30, 100
  (``lam n`` in row units from 0.056 down to 2e-6), n 1000 and 5000 (and as many test rows),
  epsilon 0.3, 1, 3, 3 seeds;
* raw breast cancer (mean radius from the other 29 columns; 70/30 split), epsilon 0.3 to 10,
  5 seeds;
* raw wine quality (white; 400 and 2000 training rows, the rest to test), 3 seeds (skipped
  without ``../shared/data``).

Run: ``python benchmarks/dev_rules_ridge_dual_warning.py`` (about a minute); writes
``results/dev_rules_ridge_dual_warning.md``.
"""

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, make_regression
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from skdp import DPRidge  # noqa: E402
from skdp.datasets import _read_wine  # noqa: E402

WINE = HERE.parent.parent / "shared" / "data" / "winequality-white.csv"
OPTIMIZERS = ("dp_scd", "dp_gdws")


def mean_scores(Xtr, ytr, Xte, yte, eps, seeds):
    """Mean test R^2 per optimizer, and lam n in units of the released row bound."""
    out = {}
    for opt in OPTIMIZERS:
        fits = [DPRidge(epsilon=eps, optimizer=opt, random_state=s).fit(Xtr, ytr)
                for s in range(seeds)]
        out[opt] = float(np.mean([m.score(Xte, yte) for m in fits]))
    out["lam_n_rows"] = float(np.mean([1.0 / m.data_norm_**2 for m in fits]))
    return out


def cells():
    for d in (10, 30):
        for scale in (1, 3, 10, 30, 100):
            for n in (1000, 5000):
                X, y = make_regression(n_samples=2 * n, n_features=d, n_informative=d // 2,
                                       noise=20, random_state=d + n)
                Xtr, Xte, ytr, yte = train_test_split(X * scale, y, test_size=0.5,
                                                      random_state=0)
                for eps in (0.3, 1.0, 3.0):
                    yield f"make_regression d={d} x{scale}", n, eps, (Xtr, ytr, Xte, yte), 3
    X, _ = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X[:, 1:], X[:, 0], test_size=0.3, random_state=0)
    for eps in (0.3, 1.0, 3.0, 10.0):
        yield "breast cancer raw (mean radius)", len(ytr), eps, (Xtr, ytr, Xte, yte), 5
    if WINE.exists():
        wine = _read_wine(WINE)
        for n in (400, 2000):
            Xtr, Xte, ytr, yte = train_test_split(wine[:, :11], wine[:, 11], train_size=n,
                                                  random_state=0)
            for eps in (0.3, 1.0, 3.0):
                yield "wine quality raw", n, eps, (Xtr, ytr, Xte, yte), 3


def main():
    warnings.simplefilter("ignore")
    lines = [
        "# dp_scd against dp_gdws where dp_scd's weak-regularisation warning fired on DPRidge",
        "",
        "Written by `benchmarks/dev_rules_ridge_dual_warning.py`: DPRidge at its defaults but "
        "the optimizer, mean test R^2; lam n rows = alpha / data_norm_^2 (the warning fired "
        "below 0.0625).",
        "",
        "| data | n | epsilon | lam n rows | dp_scd | dp_gdws | dp_scd - dp_gdws |",
        "|---|---|---|---|---|---|---|",
    ]
    gaps = []
    for name, n, eps, (Xtr, ytr, Xte, yte), seeds in cells():
        r = mean_scores(Xtr, ytr, Xte, yte, eps, seeds)
        gap = r["dp_scd"] - r["dp_gdws"]
        gaps.append(gap)
        lines.append(f"| {name} | {n} | {eps:g} | {r['lam_n_rows']:.2g} | {r['dp_scd']:.3f} | "
                     f"{r['dp_gdws']:.3f} | {gap:+.3f} |")
        print(lines[-1], flush=True)
    gaps = np.array(gaps)
    lines += [
        "",
        f"{gaps.size} cells: dp_scd ahead by more than 0.01 in {int(np.sum(gaps > 0.01))}, "
        f"within 0.01 in {int(np.sum(np.abs(gaps) <= 0.01))}, behind by more than 0.01 in "
        f"{int(np.sum(gaps < -0.01))}; largest lead {gaps.max():+.3f}, largest deficit "
        f"{gaps.min():+.3f}.",
    ]
    (HERE / "results" / "dev_rules_ridge_dual_warning.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
