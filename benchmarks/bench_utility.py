"""Utility against epsilon for every estimator and every available optimizer.

Run: ``python benchmarks/bench_utility.py [--data adult wine breast_cancer diabetes]
[--epsilons 0.05 0.1 0.5 1 2 5 inf] [--seeds 5] [--optimizers dp_gdws dp_scd ...]``.

Writes ``benchmarks/results/utility_<data>.csv`` (one row per estimator, optimizer, epsilon,
seed: test score, epsilon spent, fit time) and ``utility_<data>.md`` (mean and standard deviation
over seeds), plus ``utility_<data>.png`` when matplotlib is installed. Non-private scikit-learn
on the same data and preprocessing is the reference row.

Preprocessing (the same for every method): numeric features standardised and categoricals
one-hot encoded with training statistics, rows scaled to unit L2 norm; regression targets mapped
onto [-1, 1] with the public range of the score (wine quality 0..10, diabetes 25..346).
"""

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import Normalizer, StandardScaler

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.datasets import find_data_dir, load_adult, load_wine_quality
from skdp.optimizers import available_optimizers

RESULTS = Path(__file__).resolve().parent / "results"
DELTA = 1e-5


def _unit(X_tr, X_te):
    sc = StandardScaler().fit(X_tr)
    nz = Normalizer()
    return nz.transform(sc.transform(X_tr)), nz.transform(sc.transform(X_te))


def load(name):
    """(task, X_tr, y_tr, X_te, y_te, target range or None)."""
    if name == "adult":
        return ("classification",) + load_adult() + (None,)
    if name == "wine":
        return ("regression",) + load_wine_quality() + ((0.0, 10.0),)
    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
        A, B = _unit(X_tr, X_te)
        return ("classification", A, y_tr, B, y_te, None)
    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
        A, B = _unit(X_tr, X_te)
        return ("regression", A, y_tr, B, y_te, (25.0, 346.0))
    raise ValueError(name)


def _to_unit_target(y, rng):
    lo, hi = rng
    return (y - (lo + hi) / 2) / ((hi - lo) / 2)


def run(name, epsilons, seeds, optimizers):
    task, X_tr, y_tr, X_te, y_te, trange = load(name)
    rows = []
    if task == "classification":
        estimators = [("DPLogisticRegression", DPLogisticRegression), ("DPLinearSVC", DPLinearSVC)]
        ref = LogisticRegression(C=1.0, max_iter=2000).fit(X_tr, y_tr)
        rows.append(("sklearn LogisticRegression", "non-private", np.inf, 0, ref.score(X_te, y_te), np.inf, np.nan))
    else:
        estimators = [("DPRidge", DPRidge)]
        t_tr, t_te = _to_unit_target(y_tr, trange), _to_unit_target(y_te, trange)
        ref = Ridge(alpha=1.0).fit(X_tr, t_tr)
        rows.append(("sklearn Ridge", "non-private", np.inf, 0, r2_score(t_te, ref.predict(X_te)), np.inf, np.nan))
    for est_name, cls in estimators:
        for opt in optimizers:
            for eps in epsilons:
                for seed in range(seeds):
                    est = cls(epsilon=eps, delta=DELTA, optimizer=opt, random_state=seed)
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if task == "classification":
                            est.fit(X_tr, y_tr)
                            score = est.score(X_te, y_te)
                        else:
                            est.fit(X_tr, t_tr)
                            score = r2_score(t_te, est.predict(X_te))
                    dt = time.perf_counter() - t0
                    rows.append((est_name, opt, eps, seed, score, est.epsilon_, dt))
                    print(f"{name} {est_name} {opt} eps={eps} seed={seed}: {score:.4f} ({dt:.2f}s)", flush=True)
    return task, rows


def write(name, task, rows, epsilons):
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / f"utility_{name}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["estimator", "optimizer", "epsilon", "seed", "score", "epsilon_spent", "fit_seconds"])
        w.writerows(rows)
    metric = "accuracy" if task == "classification" else "R^2"
    lines = [f"# Utility on {name} (test {metric}, mean ± sd over seeds, delta = {DELTA})", ""]
    lines.append("| estimator | optimizer | " + " | ".join(f"eps={e:g}" for e in epsilons) + " |")
    lines.append("|---|---|" + "---|" * len(epsilons))
    keys = sorted({(r[0], r[1]) for r in rows if r[1] != "non-private"})
    for key in keys:
        cells = []
        for e in epsilons:
            s = [r[4] for r in rows if (r[0], r[1]) == key and r[2] == e]
            cells.append(f"{np.mean(s):.4f} ± {np.std(s):.4f}" if s else "")
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    for r in rows:
        if r[1] == "non-private":
            lines.append(f"| {r[0]} | non-private | " + " | ".join(f"{r[4]:.4f}" for _ in epsilons) + " |")
    (RESULTS / f"utility_{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, len({k[0] for k in keys}), figsize=(6 * len({k[0] for k in keys}), 4), squeeze=False)
    finite = [e for e in epsilons if np.isfinite(e)]
    for ax, est_name in zip(axes[0], sorted({k[0] for k in keys})):
        for (en, opt) in keys:
            if en != est_name:
                continue
            means = [np.mean([r[4] for r in rows if (r[0], r[1]) == (en, opt) and r[2] == e]) for e in finite]
            ax.plot(finite, means, marker="o", label=opt)
        for r in rows:
            if r[1] == "non-private":
                ax.axhline(r[4], color="k", ls="--", label=r[0])
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (delta = 1e-5)")
        ax.set_ylabel(metric)
        ax.set_title(f"{est_name} on {name}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / f"utility_{name}.png", dpi=100)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["adult", "wine", "breast_cancer", "diabetes"])
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.05, 0.1, 0.5, 1, 2, 5, np.inf])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--optimizers", nargs="+", default=None)
    args = p.parse_args(argv)
    optimizers = args.optimizers or available_optimizers()
    for name in args.data:
        if name in ("adult", "wine") and find_data_dir(required=("adult.data",) if name == "adult" else ("winequality-white.csv",)) is None:
            print(f"skipping {name}: data not found", file=sys.stderr)
            continue
        task, rows = run(name, args.epsilons, args.seeds, optimizers)
        write(name, task, rows, args.epsilons)


if __name__ == "__main__":
    main()
