"""Helper run inside ``benchmarks/.venv-diffprivlib`` (diffprivlib + scikit-learn < 1.8).

Usage: ``python _anchors_diffprivlib.py in.npz out.npz``. Reads the training and test arrays,
the task, the epsilons and the number of seeds; writes ``rows`` = (epsilon, seed, score,
epsilon spent, fit seconds). Fit seconds are the minimum over ``repeat_time`` fits of the same
seed (only the first fit's model is scored). Must not import skdp (different environment).
"""

import sys
import time
import warnings

import numpy as np


def main(inp, outp):
    from diffprivlib.models import LinearRegression, LogisticRegression
    from sklearn.metrics import r2_score

    d = np.load(inp, allow_pickle=False)
    X_tr, y_tr, X_te, y_te = d["X_tr"], d["y_tr"], d["X_te"], d["y_te"]
    task = str(d["task"])
    seeds = int(d["seeds"])
    repeat = int(d["repeat_time"])
    rows = []
    for eps in d["epsilons"]:
        for seed in range(seeds):
            best = np.inf
            for k in range(repeat):
                if task == "classification":
                    est = LogisticRegression(epsilon=float(eps), data_norm=1.0, C=1.0, random_state=seed)
                else:
                    est = LinearRegression(epsilon=float(eps), bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0),
                                           random_state=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    est.fit(X_tr, y_tr)
                    best = min(best, time.perf_counter() - t0)
                if k == 0:
                    score = est.score(X_te, y_te) if task == "classification" else r2_score(y_te, est.predict(X_te))
            rows.append((float(eps), seed, float(score), float(eps), best))
    np.savez(outp, rows=np.array(rows, dtype=float))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
