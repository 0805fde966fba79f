"""Issue 15, session 14: the private row bound's factor on the median, for the classifiers.

``data_norm="auto"`` sets the bound to ``DATA_NORM_FACTOR`` (1.5) times a private median row norm:
rows up to 1.5 typical norms are kept whole. For a regression that matters (a clipped row shrinks
its features and biases the fit), but a classifier's row keeps its direction when clipped, and
the noise of every gradient method and of dp_scd scales with the bound. At all defaults the
private bound costs the classifiers 0.8 to 2.1 points against a public one
(``results/defaults_private_bound.md``). This sweep varies the factor for DPLogisticRegression and
DPLinearSVC at *all* their defaults (``optimizer="auto"``), on development data whose row norms
vary as a user's do: breast cancer and digits standardised with training statistics (no unit
rows), Adult's numeric columns standardised and its categoricals one-hot (no unit rows), and raw
breast cancer (no scaler at all). Test splits: the grid's (75/25, stratified; Adult's own test
file); the subsample of n rows and the fit's randomness per seed.

    python benchmarks/dev_rules_data_norm_factor.py sweep logistic|svc
    python benchmarks/dev_rules_data_norm_factor.py report

writes ``results/dev_rules_data_norm_factor_<estimator>.csv`` and
``results/dev_rules_data_norm_factor.md``.
"""

import csv
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

import skdp.linear_model._bounds as bounds_module  # noqa: E402
from skdp.datasets import load_adult  # noqa: E402

N_GRID = (500, 2000, 10000)
EPS = (0.1, 0.3, 1.0, 3.0)
SEEDS = 5
FACTORS = (1.5, 1.25, 1.0)


def _sets():
    out = {}
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    out["breast_cancer_raw"] = (X_tr, y_tr, X_te, y_te)
    sc = StandardScaler().fit(X_tr)
    out["breast_cancer"] = (sc.transform(X_tr), y_tr, sc.transform(X_te), y_te)
    X, y = load_digits(return_X_y=True)
    y = (y >= 5).astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    sc = StandardScaler().fit(X_tr)
    out["digits"] = (sc.transform(X_tr), y_tr, sc.transform(X_te), y_te)
    out["adult"] = load_adult(normalize_rows=False)
    return out


def subsamples(X_tr, y_tr, seeds):
    """``(n, seed, X, y)``: the sweep's subsample of ``n`` training rows for each n of
    ``N_GRID`` below the set's size (its full size when there is none) and each seed."""
    n_full = X_tr.shape[0]
    for n in [n for n in N_GRID if n < n_full] or [n_full]:
        for seed in range(seeds):
            idx = np.random.default_rng(1000 + seed).choice(n_full, n, replace=False)
            yield n, seed, np.ascontiguousarray(X_tr[idx]), y_tr[idx]


def fit_with_constant(cls, constant, value, X, y, eps, seed):
    """``cls(epsilon=eps, delta, random_state=seed)`` fitted at all its defaults with the bounds
    module's ``constant`` set to ``value`` for the fit (restored after it), warnings silenced."""
    kept = getattr(bounds_module, constant)
    setattr(bounds_module, constant, value)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cls(epsilon=eps, delta=bd.DELTA, random_state=seed).fit(X, y)
    finally:
        setattr(bounds_module, constant, kept)


def sweep(est):
    cls = bd.ESTIMATORS[est][0]
    with open(HERE / "results" / f"dev_rules_data_norm_factor_{est}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["estimator", "dataset", "n", "eps", "seed", "factor", "optimizer", "score"])
        for name, (X_tr, y_tr, X_te, y_te) in _sets().items():
            for n, seed, X, y in subsamples(X_tr, y_tr, SEEDS):
                for eps in EPS:
                    for factor in FACTORS:
                        m = fit_with_constant(cls, "DATA_NORM_FACTOR", factor, X, y, eps, seed)
                        w.writerow([est, name, n, eps, seed, factor, m.optimizer_.name,
                                    f"{m.score(X_te, y_te):.5f}"])
                fh.flush()
                print(est, name, n, seed, flush=True)


def read_sweep(path, variant):
    """``{(dataset, n, eps): {variant value: [csv row, ...]}}`` of a sweep's csv, or None when
    it has not been run (``variant``: the column that names the variant)."""
    if not path.exists():
        return None
    cells = {}
    with open(path) as fh:
        for r in csv.DictReader(fh):
            key = (r["dataset"], int(r["n"]), float(r["eps"]))
            cells.setdefault(key, {}).setdefault(r[variant], []).append(r)
    return cells


def report():
    lines = ["# The private row bound's factor on the median, classifiers (session 14)", "",
             f"`python benchmarks/dev_rules_data_norm_factor.py`: DPLogisticRegression and "
             f"DPLinearSVC at all their defaults, {SEEDS} seeds, delta 1e-5; development data "
             "with varying row norms (see the script). Mean test accuracy per factor; *better / "
             "worse*: cells more than 1 point better / worse than the factor 1.5.", ""]
    for est in ("logistic", "svc"):
        cells = read_sweep(HERE / "results" / f"dev_rules_data_norm_factor_{est}.csv", "factor")
        if cells is None:
            continue
        mean = {k: {float(f): np.mean([float(r["score"]) for r in v]) for f, v in c.items()}
                for k, c in cells.items()}
        lines += [f"## {est}", "", "| factor | mean | better / worse than 1.5 by > 1 pt | worst vs 1.5 |",
                  "|---|---|---|---|"]
        for f in FACTORS:
            d = [mean[k][f] - mean[k][1.5] for k in mean]
            lines.append(f"| {f:g} | {np.mean([mean[k][f] for k in mean]):.4f} | "
                         f"{sum(x > 0.01 for x in d)} / {sum(x < -0.01 for x in d)} | {min(d):+.3f} |")
        lines += ["", "| data | n | eps | " + " | ".join(f"{f:g}" for f in FACTORS) + " |",
                  "|---" * (len(FACTORS) + 3) + "|"]
        for k in sorted(mean):
            lines.append(f"| {k[0]} | {k[1]} | {k[2]:g} | "
                         + " | ".join(f"{mean[k][f]:.3f}" for f in FACTORS) + " |")
        lines.append("")
    (HERE / "results" / "dev_rules_data_norm_factor.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:30]))


if __name__ == "__main__":
    sweep(sys.argv[2]) if sys.argv[1] == "sweep" else report()
