"""The targets' tail reserve of ``DPRidge(y_bounds="auto")`` (session 27): before and after.

Run: ``python benchmarks/dev_rules_y_tail.py [--seeds 5]``; writes
``benchmarks/results/dev_rules_y_tail.csv`` and ``.md``. The Adult and wine rows need the files
of ``SKDP_DATA_DIR`` or ``../shared/data`` and are skipped without them.

"before" is the rule of sessions 10 to 26 (no tail reserve: :func:`skdp.linear_model._bounds.
tail_plan` patched to plan nothing); "after" plans the reserve (``Y_TAIL_SHARE``, lowered to a
reliable median of ``Y_TAIL_MIN_FRACTION`` of the rows) and spends it on the median of the
non-zero ``|y - median|`` only when the upper quartile of ``|y - median|`` is released at the
grid's floor. Two kinds of rows:

* targets with an atom above three quarters, where the rule is for: a censored linear target
  (``100 max(0, z - q_p(z))``, z linear in 5 normal features plus noise; 80% and 90% zeros,
  5000 rows) and Adult's capital-gain (91.7% zeros) from the other columns with the README's
  private pipeline;
* targets without one, where the reserve is charged and not drawn (what it costs every other
  fit): wine quality with the README's pipeline, the first 1000 raw rows of wine, and
  ``make_regression`` (2000 rows, 10 features, noise 10).

Seed s fixes the split (75/25) and the fit's randomness; delta 1e-5; R^2 on the test split.
"""

import argparse
import csv
from pathlib import Path
import warnings

import numpy as np
from sklearn.compose import make_column_transformer
from sklearn.datasets import make_regression
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder

from skdp import DPRidge
from skdp.datasets import ADULT_CATEGORIES, ADULT_NUMERIC, find_data_dir, load_adult_frame, \
    load_wine_frame
from skdp.linear_model import _bounds
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import PrivateRobustScaler

RESULTS = Path(__file__).resolve().parent / "results"
DELTA = 1e-5


def censored(zero_share):
    def load(seed):
        rng = np.random.default_rng(1000 + seed)
        X = rng.normal(size=(5000, 5))
        z = X @ rng.normal(size=5) * 3 + rng.normal(size=5000)
        y = 100 * np.maximum(0.0, z - np.quantile(z, zero_share))
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
        return X_tr, y_tr, X_te, y_te, lambda eps: DPRidge(epsilon=eps, delta=DELTA,
                                                            random_state=seed)
    return load


def regression(seed):
    X, y = make_regression(n_samples=2000, n_features=10, noise=10.0, random_state=seed)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
    return X_tr, y_tr, X_te, y_te, lambda eps: DPRidge(epsilon=eps, delta=DELTA,
                                                        random_state=seed)


def adult_capital_gain(seed):
    X_tr, _, X_te, _ = load_adult_frame()
    y_tr, y_te = (X.pop("capital-gain").to_numpy(float) for X in (X_tr, X_te))
    num = [c for c in ADULT_NUMERIC if c != "capital-gain"]
    cat = list(ADULT_CATEGORIES)

    def make(eps):
        return make_private_pipeline(
            make_column_transformer(
                (PrivateRobustScaler(random_state=seed), num),
                (OneHotEncoder(categories=[ADULT_CATEGORIES[c] for c in cat],
                               handle_unknown="ignore"), cat),
                sparse_threshold=0,
            ),
            DPRidge(random_state=seed), epsilon=eps, delta=DELTA)
    return X_tr, y_tr, X_te, y_te, make


def wine_pipeline(seed):
    X_tr, y_tr, X_te, y_te = load_wine_frame(random_state=seed)
    return X_tr, y_tr, X_te, y_te, lambda eps: make_private_pipeline(
        PrivateRobustScaler(random_state=seed), DPRidge(random_state=seed),
        epsilon=eps, delta=DELTA)


def wine_small_raw(seed):
    X_tr, y_tr, X_te, y_te = load_wine_frame(random_state=seed)
    return X_tr[:1000], y_tr[:1000], X_te, y_te, lambda eps: DPRidge(
        epsilon=eps, delta=DELTA, random_state=seed)


CASES = [  # name, loader, epsilons, needs the shared files
    ("censored, 80% zeros", censored(0.8), (0.3, 1.0, 3.0), False),
    ("censored, 90% zeros", censored(0.9), (0.3, 1.0, 3.0), False),
    ("Adult capital-gain (91.7% zeros), pipeline", adult_capital_gain, (1.0, 3.0), True),
    ("make_regression, 2000 rows", regression, (0.3, 1.0), False),
    ("wine quality, pipeline", wine_pipeline, (0.3, 1.0), True),
    ("wine quality, 1000 raw rows", wine_small_raw, (0.3, 1.0), True),
]


def run(seeds):
    rows = []
    have_files = find_data_dir(None, ("adult.data", "winequality-white.csv")) is not None
    planned = _bounds.tail_plan
    for name, load, epsilons, needs in CASES:
        if needs and not have_files:
            print(f"skipped (no data files): {name}")
            continue
        for seed in range(seeds):
            X_tr, y_tr, X_te, y_te, make = load(seed)
            ridge = Ridge().fit(X_tr, y_tr) if not needs or "wine" in name else None
            for eps in epsilons:
                for rule in ("before", "after"):
                    _bounds.tail_plan = planned if rule == "after" else (lambda *a: None)
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            model = make(eps).fit(X_tr, y_tr)
                    finally:
                        _bounds.tail_plan = planned
                    rows.append({"case": name, "eps": eps, "seed": seed, "rule": rule,
                                 "r2": model.score(X_te, y_te),
                                 "ridge": ridge.score(X_te, y_te) if ridge is not None else "",
                                 "epsilon_": model.epsilon_})
        print(f"done: {name}", flush=True)
    return rows


def report(rows):
    import pandas as pd

    df = pd.DataFrame(rows)
    out = ["# The targets' tail reserve of DPRidge(y_bounds='auto'): before and after (session 27)",
           "", f"Test R^2, mean over {df.seed.nunique()} seeds (min over seeds in brackets); "
           "`benchmarks/dev_rules_y_tail.py`.", "",
           "| case | eps | before | after | Ridge() |", "|---|---|---|---|---|"]
    for (case, eps), g in df.groupby(["case", "eps"], sort=False):
        cell = {r: g[g.rule == r].r2 for r in ("before", "after")}
        ridge = pd.to_numeric(g.ridge, errors="coerce").mean()
        out.append(f"| {case} | {eps:g} | {cell['before'].mean():.3f} ({cell['before'].min():.3f})"
                   f" | {cell['after'].mean():.3f} ({cell['after'].min():.3f}) | "
                   + (f"{ridge:.3f}" if np.isfinite(ridge) else "") + " |")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    rows = run(args.seeds)
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "dev_rules_y_tail.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    text = report(rows)
    (RESULTS / "dev_rules_y_tail.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
