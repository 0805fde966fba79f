"""Sparse input at d = 100,000: time and memory of every optimizer, no densification.

Run: ``python benchmarks/bench_sparse.py [--n 100000]``. Writes ``benchmarks/results/sparse.md``
and ``sparse.csv``.

Data: a generated text-like CSR matrix (n rows, d = 100,000 columns, about 30 stored entries per
row, column popularity Zipf-like, rows of unit norm; labels from a sparse logistic model), split
80/20. Dense float64 it would take n * d * 8 bytes (80 GB at n = 1e5): any densification fails.

Per optimizer, ``DPLogisticRegression(epsilon=1, delta=1e-6)`` at its defaults, each in a fresh
process (the numba cache is warmed on a small fit first):

* fit time, epochs (passes over the data, from the privacy record) and the time per epoch as a
  ratio to one scipy ``X @ w`` pass over the same CSR matrix (single-threaded, like the kernels);
* peak RSS during the fit minus the RSS just before it, relative to the bytes of the CSR matrix
  (data + indices + indptr) and to ``d * 8`` (one coefficient vector);
* test accuracy, and scikit-learn ``LogisticRegression(solver="liblinear")`` on the same data.

All figures come from one run on a shared 2-core machine; read the ratios.
"""

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _timing import best_time  # noqa: E402

RESULTS = HERE / "results"
OPTIMIZERS = ["dp_gdws", "dp_scd", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree"]
D = 100_000
NNZ_PER_ROW = 30


def generated(n, d=D, seed=0):
    """(X_train, y_train, X_test, y_test): unit-norm CSR rows with Zipf-like columns."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, d + 1) ** 0.8
    popularity /= popularity.sum()
    counts = rng.poisson(NNZ_PER_ROW, n).clip(1, None)
    indptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    cols = rng.choice(d, size=indptr[-1], p=popularity).astype(np.int32)
    vals = rng.exponential(1.0, indptr[-1])
    X = sp.csr_matrix((vals, cols, indptr), shape=(n, d))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    X.sort_indices()  # canonical CSR, like a vectorizer's output
    truth = np.zeros(d)
    truth[:300] = rng.normal(0, 6.0, 300)  # the signal is on the 300 most frequent columns
    p = 1.0 / (1.0 + np.exp(-(X @ truth)))
    y = (rng.random(n) < p).astype(int)
    cut = int(0.8 * n)
    return X[:cut], y[:cut], X[cut:], y[cut:]


def csr_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


_CHILD = """
import ctypes, json, sys, time, warnings
sys.path.insert(0, %r)
from bench_sparse import generated
from _timing import epochs_of, hwm, rss
import skdp
opt, n = sys.argv[1], int(sys.argv[2])
X, y, Xt, yt = generated(n)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    skdp.DPLogisticRegression(optimizer=opt, random_state=0).fit(X[:2000], y[:2000])  # numba cache
    est = skdp.DPLogisticRegression(epsilon=1.0, delta=1e-6, optimizer=opt, random_state=0)
    # return the data generation's freed temporaries to the OS, or the fit reuses those pages
    # and its allocations never show in the RSS
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
    before = rss()
    t0 = time.perf_counter()
    est.fit(X, y)
    t = time.perf_counter() - t0
    peak = hwm()
print(json.dumps({"fit_s": t, "extra_bytes": peak - before, "epochs": epochs_of(est, X.shape[0]),
                  "acc": float(est.score(Xt, yt))}))
"""


def run_child(opt, n):
    out = subprocess.run([sys.executable, "-c", _CHILD % (str(HERE),), opt, str(n)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    args = parser.parse_args(argv)
    from sklearn.linear_model import LogisticRegression

    X, y, Xt, yt = generated(args.n)
    w = np.ones(D)
    t_pass = best_time(lambda: X @ w, 10)
    xbytes = csr_bytes(X)
    t0 = time.perf_counter()
    ref = LogisticRegression(solver="liblinear", C=1.0).fit(X, y)
    t_ref = time.perf_counter() - t0
    acc_ref = float(ref.score(Xt, yt))
    print(f"n={X.shape[0]} d={D} nnz={X.nnz} CSR {xbytes / 1e6:.1f} MB, dense would be "
          f"{X.shape[0] * D * 8 / 1e9:.0f} GB; X@w {t_pass * 1e3:.2f} ms; liblinear "
          f"{t_ref:.2f} s acc {acc_ref:.4f}", flush=True)
    rows = []
    for opt in OPTIMIZERS:
        r = run_child(opt, args.n)
        r.update(optimizer=opt, ratio=r["fit_s"] / max(r["epochs"], 1e-12) / t_pass,
                 mem_x=r["extra_bytes"] / xbytes, mem_d=r["extra_bytes"] / (8 * D))
        rows.append(r)
        print(f"{opt}: {r['fit_s']:.2f} s, {r['epochs']:.2f} epochs, {r['ratio']:.1f}x X@w per "
              f"epoch, extra RSS {r['extra_bytes'] / 1e6:.1f} MB = {r['mem_x']:.2f} x CSR, "
              f"acc {r['acc']:.4f}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "sparse.csv", "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    lines = [
        "# Sparse input, d = 100,000 (`benchmarks/bench_sparse.py`)",
        "",
        f"Generated CSR data: {X.shape[0]} training rows, d = {D}, {X.nnz} stored entries "
        f"({X.nnz / X.shape[0]:.1f} per row), CSR size {xbytes / 1e6:.1f} MB; dense float64 "
        f"would be {X.shape[0] * D * 8 / 1e9:.0f} GB. One scipy `X @ w` pass: "
        f"{t_pass * 1e3:.2f} ms. `DPLogisticRegression(epsilon=1, delta=1e-6)`, defaults, fresh "
        "process per optimizer. scikit-learn `LogisticRegression(solver='liblinear')`: "
        f"{t_ref:.2f} s, test accuracy {acc_ref:.4f}.",
        "",
        "| optimizer | fit (s) | epochs | time per epoch / `X @ w` | extra peak RSS (MB) | "
        "/ CSR bytes | / (8 d) | test accuracy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['optimizer']} | {r['fit_s']:.2f} | {r['epochs']:.2f} | {r['ratio']:.1f} | "
            f"{r['extra_bytes'] / 1e6:.1f} | {r['mem_x']:.2f} | {r['mem_d']:.1f} | "
            f"{r['acc']:.4f} |"
        )
    lines += ["", "Shared 2-core machine, one run; the ratios are the meaningful part."]
    (RESULTS / "sparse.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
