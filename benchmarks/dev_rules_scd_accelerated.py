"""Development grid used to fit the default rules of dp_scd, dp_nag_opt and dp_masg (issue 15).

Public development data only (the held-out part of ``bench_defaults.py`` is not used here):
Adult subsamples (first n rows of ``adult.data``; test on 5000 rows of ``adult.test``),
scikit-learn's breast cancer (classification), white wine quality subsamples and scikit-learn's
diabetes (regression), and two generated problems (``make_classification`` /
``make_regression``, seeds 11 and 12). Rows standardised and scaled to unit norm (as the other
benchmarks do); every skdp estimator at its defaults (``data_norm="auto"``,
``y_bounds="auto"``, default delta) with only ``optimizer`` and ``epsilon`` set. The anchor is
Opacus DP-SGD (``nn.Linear``, SGD lr 1, Poisson batch ``clip(n // 32, 16, 512)``, 10 epochs,
clip 1, delta 1e-5; targets mapped to [-1, 1] by the public target range for regression).

Usage::

    python benchmarks/dev_rules_scd_accelerated.py --seeds 2 [--opt dp_scd ...] [--est ...]

Prints one line per cell (mean score over seeds) next to the anchor and the baseline, and
writes ``benchmarks/results/dev_rules_scd_accelerated.csv``.
"""

import argparse
import csv
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import (
    load_breast_cancer, load_diabetes, make_classification, make_regression,
)
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import Normalizer, StandardScaler

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge  # noqa: E402
from skdp.datasets import load_adult, load_wine_frame  # noqa: E402

EPSILONS = (0.1, 0.3, 1.0, 3.0)
CACHE = HERE / "results" / "dev_rules_anchor_cache.json"


def _unit(X_tr, X_te):
    sc = StandardScaler().fit(X_tr)
    nz = Normalizer()
    return nz.transform(sc.transform(X_tr)), nz.transform(sc.transform(X_te))


_ADULT = None


def datasets():
    """name -> (task, X_tr, y_tr, X_te, y_te, public target range or None)."""
    global _ADULT
    out = {}
    if _ADULT is None:
        _ADULT = load_adult()
    X, y, Xt, yt = _ADULT
    Xt, yt = Xt[:5000], yt[:5000]
    for n in (500, 1000, 2000, 5000, 30000):
        out[f"adult{n}"] = ("classification", X[:n], y[:n], Xt, yt, None)
    Xb, yb = load_breast_cancer(return_X_y=True)
    a, b, c, d = train_test_split(Xb, yb, test_size=0.25, random_state=0, stratify=yb)
    A, B = _unit(a, b)
    out["breast_cancer"] = ("classification", A, c, B, d, None)
    Xg, yg = make_classification(n_samples=4000, n_features=20, n_informative=8,
                                 random_state=11)
    a, b, c, d = train_test_split(Xg, yg, test_size=0.5, random_state=0)
    A, B = _unit(a, b)
    out["gen_clf2000"] = ("classification", A, c, B, d, None)
    Wtr, wtr, Wte, wte = load_wine_frame()
    A, B = _unit(Wtr, Wte)
    for n in (500, 1000, 3673):
        out[f"wine{n}"] = ("regression", A[:n], wtr[:n], B, wte, (0.0, 10.0))
    Xd, yd = load_diabetes(return_X_y=True)
    a, b, c, d = train_test_split(Xd, yd, test_size=0.25, random_state=0)
    A, B = _unit(a, b)
    out["diabetes"] = ("regression", A, c, B, d, (25.0, 346.0))
    Xr, yr = make_regression(n_samples=4000, n_features=10, n_informative=6, noise=20.0,
                             random_state=12)
    a, b, c, d = train_test_split(Xr, yr, test_size=0.5, random_state=0)
    A, B = _unit(a, b)
    out["gen_reg2000"] = ("regression", A, c, B, d, (-400.0, 400.0))
    return out


def baseline(task, y_tr, y_te):
    if task == "classification":
        return max(np.mean(y_te), 1 - np.mean(y_te))
    return r2_score(y_te, np.full(len(y_te), np.mean(y_tr)))


def anchor(name, task, X_tr, y_tr, X_te, y_te, trange, eps, seeds):
    """Opacus DP-SGD, cached on disk (mean score over seeds)."""
    cache = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    key = f"{name}|{eps}|{seeds}"
    if key in cache:
        return cache[key]
    from _anchors import opacus_fit

    n = X_tr.shape[0]
    cfg = {"lr": 1.0, "batch_size": int(np.clip(n // 32, 16, 512)), "epochs": 10,
           "max_grad_norm": 1.0}
    if task == "regression":
        lo, hi = trange
        tr = (np.clip(y_tr, lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)
        te = (y_te - (lo + hi) / 2) / ((hi - lo) / 2)
    else:
        tr, te = y_tr, y_te
    scores = [opacus_fit(task, X_tr, tr, X_te, te, eps, s, 1e-5, **cfg)[0] for s in range(seeds)]
    cache[key] = float(np.mean(scores))
    CACHE.parent.mkdir(exist_ok=True)
    CACHE.write_text(json.dumps(cache, indent=0))
    return cache[key]


ESTIMATORS = {"logistic": DPLogisticRegression, "svc": DPLinearSVC, "ridge": DPRidge}


def score(est_name, optimizer, task, X_tr, y_tr, X_te, y_te, eps, seed):
    Est = ESTIMATORS[est_name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Est(epsilon=eps, optimizer=optimizer, random_state=seed).fit(X_tr, y_tr)
    assert est.epsilon_ <= eps * (1 + 1e-9)
    return est.score(X_te, y_te), est


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--opt", nargs="*", default=["dp_scd", "dp_nag_opt", "dp_masg"])
    ap.add_argument("--est", nargs="*", default=["logistic", "svc", "ridge"])
    ap.add_argument("--data", nargs="*", default=None)
    ap.add_argument("--eps", nargs="*", type=float, default=list(EPSILONS))
    ap.add_argument("--out", default="dev_rules_scd_accelerated.csv")
    args = ap.parse_args(argv)
    rows = []
    for name, (task, X_tr, y_tr, X_te, y_te, trange) in datasets().items():
        if args.data and name not in args.data:
            continue
        base = baseline(task, y_tr, y_te)
        ests = [e for e in args.est if (e == "ridge") == (task == "regression")]
        for eps in args.eps:
            anc = anchor(name, task, X_tr, y_tr, X_te, y_te, trange, eps, args.seeds)
            for e in ests:
                for opt in args.opt:
                    t0 = time.perf_counter()
                    res = [score(e, opt, task, X_tr, y_tr, X_te, y_te, eps, s)
                           for s in range(args.seeds)]
                    m = float(np.mean([r[0] for r in res]))
                    row = dict(data=name, n=X_tr.shape[0], est=e, opt=opt, eps=eps, score=m,
                               anchor=anc, baseline=base, gap=m - anc,
                               n_iter=res[0][1].n_iter_, secs=(time.perf_counter() - t0))
                    rows.append(row)
                    flag = "" if m >= anc - (0.01 if task == "classification" else 0.02) else " MISS"
                    flag += " BASE" if m < base + (0 if task == "classification" else 0) else ""
                    print(f"{name:14s} {e:8s} {opt:10s} eps={eps:<4} {m:.4f} anchor={anc:.4f} "
                          f"base={base:.4f} T={row['n_iter']} {row['secs']:.1f}s{flag}",
                          flush=True)
    out = HERE / "results" / args.out
    with open(out, "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    return rows


if __name__ == "__main__":
    main()
