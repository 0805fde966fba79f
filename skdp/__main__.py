"""``python -m skdp``: fit every estimator with every available optimizer at several epsilons.

Classifiers on scikit-learn's breast-cancer data, the ridge on the diabetes data; features are
standardised and rows scaled to unit norm (``data_norm=1``), targets of the ridge are mapped
to [-1, 1] with the public range of the diabetes score (25..346). Prints test score (accuracy or
R^2), the epsilon spent (at delta = 1e-5) and the fit time (first fits include numba compilation,
cached afterwards).
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.compose import TransformedTargetRegressor
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from . import DPLinearSVC, DPLogisticRegression, DPRidge, __version__
from .optimizers import available_optimizers

EPSILONS = (0.5, 1.0, 5.0, np.inf)


def _datasets():
    Xc, yc = load_breast_cancer(return_X_y=True)
    Xr, yr = load_diabetes(return_X_y=True)
    return {
        "breast_cancer": train_test_split(Xc, yc, test_size=0.25, random_state=0, stratify=yc),
        "diabetes": train_test_split(Xr, yr, test_size=0.25, random_state=0),
    }


def _model(cls, optimizer, epsilon, seed):
    est = cls(epsilon=epsilon, delta=1e-5, optimizer=optimizer, random_state=seed)
    if cls is DPRidge:
        # public affine map of the target range 25..346 onto [-1, 1] (the default y_bounds)
        lo, hi = 25.0, 346.0
        est = TransformedTargetRegressor(
            regressor=est,
            func=lambda y: (y - (lo + hi) / 2) / ((hi - lo) / 2),
            inverse_func=lambda t: t * ((hi - lo) / 2) + (lo + hi) / 2,
            check_inverse=False,
        )
    # scaling statistics come from the training split: a demo shortcut (use public ranges in
    # production); Normalizer is a stateless per-row map
    return make_pipeline(StandardScaler(), Normalizer(), est)


def _spent(pipe):
    est = pipe[-1]
    est = getattr(est, "regressor_", est)
    return est.epsilon_


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m skdp", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1, help="fits per cell (mean score)")
    args = parser.parse_args(argv)
    data = _datasets()
    print(f"skdp {__version__}: test score at several epsilons (delta = 1e-5)\n")
    header = f"{'estimator':<22}{'optimizer':<14}{'epsilon':>8}{'score':>9}{'eps spent':>11}{'fit s':>8}"
    print(header)
    print("-" * len(header))
    for cls, name in ((DPLogisticRegression, "breast_cancer"), (DPLinearSVC, "breast_cancer"),
                      (DPRidge, "diabetes")):
        X_tr, X_te, y_tr, y_te = data[name]
        for opt in available_optimizers():
            for eps in EPSILONS:
                scores, spent, times = [], [], []
                for seed in range(args.seeds):
                    pipe = _model(cls, opt, eps, seed)
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        pipe.fit(X_tr, y_tr)
                    times.append(time.perf_counter() - t0)
                    scores.append(pipe.score(X_te, y_te))
                    spent.append(_spent(pipe))
                print(
                    f"{cls.__name__:<22}{opt:<14}{eps:>8g}{np.mean(scores):>9.3f}"
                    f"{np.max(spent):>11.4g}{np.mean(times):>8.2f}"
                )
    print("\nscore: accuracy (classifiers) or R^2 (ridge) on a held-out quarter of the data.")


if __name__ == "__main__":
    main()
