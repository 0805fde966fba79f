"""Issue 14/15, session 10: which optimizer ``DPLogisticRegression(optimizer="auto")`` should run
on raw data, where the row bound is released privately (``data_norm="auto"``).

``optimizer="auto"`` is chosen before any private computation. With a public row bound it
follows :func:`skdp.optimizers._defaults.prefers_dual` (dp_scd or dp_gdws); with
``data_norm="auto"`` the regularisation in units of the rows is unknown, so it runs dp_gdws.
This script compares the primal optimizers at their defaults on raw classification data (no
scaler, no normalisation; everything at its default but ``optimizer``; delta 1e-5; seeds
0..4 fix the split and the fit):

* development part (chosen on): Adult with its numeric columns raw (``fnlwgt`` ~ 1e5 dominates
  the rows' norms) and its categoricals one-hot with the documented categories; digits raw
  (pixels 0..16, label "digit >= 5"); white wine raw (label "quality >= 6"); ``hetero``, a
  ``make_classification`` (20 features, 8 informative) whose columns are multiplied by public
  scales 10^U(-1, 3);
* held-out part (run once the choice is made): raw breast cancer (the issue's case,
  stratified and unstratified splits as ``bench_raw_data.py``) and ``hetero2`` (the generator
  with other seeds, 40 features, 10 informative).

n is subsampled from the training split (500, 2000, and the full set); epsilon 0.3, 1, 3.

    python benchmarks/dev_rules_raw_optimizer.py --part dev
    python benchmarks/dev_rules_raw_optimizer.py --part heldout

Writes ``results/dev_rules_raw_optimizer_<part>.md``.

Outcome (session 10): no change. On the development part dp_gdws, dp_nag_opt and dp_masg are
level (mean distance to the best of each cell -0.007, -0.007, -0.005; worst -0.036, -0.054,
-0.056; dp_nsgd_tree -0.012 with one seed 0.53 below the majority class, dp_scd -0.066), so the
default stays dp_gdws, the best worst case. Raw Adult (``fnlwgt`` dominates every row) and raw
wine stay at the majority class for every optimizer: such tables need the private scaler
(``PrivatePipeline(PrivateRobustScaler(), ...)``). The held-out part, run afterwards, has
dp_masg and dp_nag_opt ahead of dp_gdws by 0.008 and 0.007 on average (raw breast cancer at
epsilon 1: 0.912 / 0.912 / 0.901 stratified, 0.898 / 0.897 / 0.895 unstratified).
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from skdp import DPLogisticRegression  # noqa: E402
from skdp.datasets import (  # noqa: E402
    ADULT_CATEGORIES, ADULT_NUMERIC, load_adult_frame, load_wine_frame,
)

OPTIMIZERS = ("dp_gdws", "dp_nsgd_tree", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_scd")
SEEDS = range(5)
EPS = (0.3, 1.0, 3.0)
N = (500, 2000, None)
DELTA = 1e-5


def _hetero(seed, n_features, n_informative):
    X, y = make_classification(n_samples=12000, n_features=n_features,
                               n_informative=n_informative, flip_y=0.03, class_sep=0.8,
                               random_state=seed)
    scales = 10.0 ** np.random.default_rng(seed).uniform(-1, 3, n_features)
    X = X * scales + scales * np.random.default_rng(seed + 1).uniform(0, 3, n_features)
    return train_test_split(X, y, test_size=4000, random_state=0)


def _adult():
    X_tr, y_tr, X_te, y_te = load_adult_frame()
    num = list(ADULT_NUMERIC)
    cat = [c for c in X_tr.columns if c not in num]
    enc = OneHotEncoder(categories=[ADULT_CATEGORIES[c] for c in cat], handle_unknown="ignore",
                        sparse_output=False)
    enc.fit(X_tr[cat].iloc[:1])  # public categories: nothing is learned from the rows
    def design(X):
        return np.hstack([X[num].to_numpy(float), enc.transform(X[cat])])
    return design(X_tr), design(X_te), np.asarray(y_tr), np.asarray(y_te)


def load(name, seed):
    """(X_train, X_test, y_train, y_test) of one split (seed) of a raw data set."""
    if name == "adult":
        X_tr, X_te, y_tr, y_te = _adult()
        return X_tr, X_te, y_tr, y_te
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        return train_test_split(X, (y >= 5).astype(int), test_size=0.25, random_state=seed)
    if name == "wine":
        X_tr, y_tr, X_te, y_te = load_wine_frame(random_state=seed)
        return (np.asarray(X_tr, float), np.asarray(X_te, float), (np.asarray(y_tr) >= 6).astype(int),
                (np.asarray(y_te) >= 6).astype(int))
    if name == "hetero":
        return _hetero(3, 20, 8)
    if name == "hetero2":
        return _hetero(17, 40, 10)
    if name in ("breast_cancer", "breast_cancer_unstratified"):
        X, y = load_breast_cancer(return_X_y=True)
        return train_test_split(X, y, test_size=0.25, random_state=seed,
                                stratify=y if name == "breast_cancer" else None)
    raise ValueError(name)


PARTS = {"dev": ("adult", "digits", "wine", "hetero"),
         "heldout": ("breast_cancer", "breast_cancer_unstratified", "hetero2")}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=list(PARTS), default="dev")
    ap.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS))
    args = ap.parse_args(argv)
    opts = args.optimizers
    lines = [f"# DPLogisticRegression on raw data: optimizers at their defaults ({args.part} part)\n",
             f"`python benchmarks/dev_rules_raw_optimizer.py --part {args.part}`. Mean test "
             f"accuracy over {len(SEEDS)} seeds (split and fit), data_norm=\"auto\", delta 1e-5; "
             "*majority*: the majority class of the test split. Data: the module docstring.\n",
             "| data | n | eps | majority | " + " | ".join(opts) + " |",
             "|---|---|---|---|" + "---|" * len(opts)]
    dist = {o: [] for o in opts}
    worst = {o: [] for o in opts}
    for name in PARTS[args.part]:
        for n in N:
            for eps in EPS:
                scores = {o: [] for o in opts}
                majority = []
                for seed in SEEDS:
                    X_tr, X_te, y_tr, y_te = load(name, seed)
                    if n is not None:
                        if n >= X_tr.shape[0]:
                            break
                        idx = np.random.default_rng(100 + seed).choice(X_tr.shape[0], n,
                                                                       replace=False)
                        X_tr, y_tr = X_tr[idx], y_tr[idx]
                    majority.append(max(np.mean(y_te), 1 - np.mean(y_te)))
                    for o in opts:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            m = DPLogisticRegression(epsilon=eps, delta=DELTA, optimizer=o,
                                                     random_state=seed).fit(X_tr, y_tr)
                        scores[o].append(m.score(X_te, y_te))
                if not majority:
                    continue
                means = {o: float(np.mean(v)) for o, v in scores.items()}
                best = max(means.values())
                for o in opts:
                    dist[o].append(means[o] - best)
                    worst[o].append(min(scores[o]) - float(np.mean(majority)))
                n_rows = X_tr.shape[0]
                lines.append(f"| {name} | {n_rows} | {eps:g} | {np.mean(majority):.3f} | "
                             + " | ".join(f"**{means[o]:.3f}**" if means[o] == best
                                          else f"{means[o]:.3f}" for o in opts) + " |")
                print(lines[-1], flush=True)
    lines += ["", "| optimizer | mean distance to the best of the cell | worst distance | "
              "cells best | worst seed minus the majority class |", "|---|---|---|---|---|"]
    for o in opts:
        lines.append(f"| {o} | {np.mean(dist[o]):+.4f} | {min(dist[o]):+.4f} | "
                     f"{sum(d == 0 for d in dist[o])} / {len(dist[o])} | {min(worst[o]):+.3f} |")
    out = HERE / "results" / f"dev_rules_raw_optimizer_{args.part}.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-len(opts) - 2:]))
    print("wrote", out)


if __name__ == "__main__":
    main()
