"""The accountant's share of a small fit: every in-memory audit path, timed three ways: a fit
run once, the same fit repeated (the process's cache of the accountant's answers warm), and with
every accountant result served from a warm cache.

A fit calibrates its noise on the accountant (a bisection over RDP curves) and reports its
epsilon; at small n that can cost more than the optimisation. ``compute_epsilon`` keeps its
answers for the process (``skdp.privacy._epsilon_cache``), so the folds of a search and the
refits of one configuration ask it once; the first way turns that cache off
(``_epsilon_cache.MAX_ENTRIES = 0``). The third adds :func:`skdp.audit.memoized_accounting`,
which also caches the RDP curves asked for outside it, both warmed with the timed seeds' fits, so
the difference between the first and third timings is what the accountant costs a
fit that a user runs once. The ways are interleaved in one run, on the audit paths' data
(``skdp.audit``'s estimator paths, a few hundred rows); worker-process and Dask paths are left
out (their cost is elsewhere). Then the same comparison for what a user runs: scikit-learn's
``GridSearchCV`` over four epsilons, five folds, on a 300-row raw table through
``make_private_pipeline(PrivateRobustScaler(), estimator)`` (one search per estimator, unseeded
as the README advises). Writes
``benchmarks/results/accountant_share.md`` with the machine's load average.

Usage: ``python benchmarks/bench_accountant_share.py [--fits 10] [--rounds 3] [--out PATH]``
"""

import argparse
import os
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ms_per_fit  # noqa: E402

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge  # noqa: E402
from skdp.audit import memoized_accounting  # noqa: E402
from skdp.audit._paths import estimator_paths  # noqa: E402
from skdp.pipeline import make_private_pipeline  # noqa: E402
from skdp.preprocessing import PrivateRobustScaler  # noqa: E402
from skdp.privacy import _epsilon_cache  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "accountant_share.md"



@contextmanager
def process_cache(on):
    """The process's cache of the accountant's answers on (emptied first) or off."""
    saved = _epsilon_cache.MAX_ENTRIES
    _epsilon_cache.clear()
    _epsilon_cache.MAX_ENTRIES = saved if on else 0
    try:
        yield
    finally:
        _epsilon_cache.MAX_ENTRIES = saved


def search_seconds(estimator, X, y):
    """Wall time of a GridSearchCV over four epsilons (five folds, the refit included)."""
    from sklearn.model_selection import GridSearchCV, KFold

    pipe = make_private_pipeline(PrivateRobustScaler(), estimator, epsilon=1.0)
    folds = KFold(5, shuffle=True, random_state=0)  # independent of the data (the user guide)
    start = time.perf_counter()
    GridSearchCV(pipe, {"epsilon": [0.3, 1.0, 3.0, 10.0]}, cv=folds).fit(X, y)
    return time.perf_counter() - start


def search_rows(rounds):
    """(estimator, seconds without the process cache, seconds with it) per estimator."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6)) * [1.0, 30.0, 1e3, 0.01, 5.0, 1.0] + [0, 50, 1e4, 0, 0, 3]
    target = X[:, 0] + X[:, 1] / 30 - X[:, 2] / 1e3 + rng.normal(size=300)
    rows = []
    labels = (target > np.median(target)).astype(int)
    for make, y in ((DPRidge, target), (DPLogisticRegression, labels), (DPLinearSVC, labels)):
        search_seconds(make(), X, y)  # compiled outside the timing
        off, on = [], []
        for _ in range(rounds):
            with process_cache(False):
                off.append(search_seconds(make(), X, y))
            with process_cache(True):
                on.append(search_seconds(make(), X, y))
        rows.append((type(make()).__name__, float(np.median(off)), float(np.median(on))))
        print(f"GridSearchCV {rows[-1][0]}: {rows[-1][1]:.2f} s, {rows[-1][2]:.2f} s cached",
              flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    for path in estimator_paths():
        if path.dask or "worker process" in path.label:
            continue
        c, X = path.data()
        X, y = np.asarray(X) if not hasattr(X, "tocsr") else X, np.asarray(c.y)
        path.make(0).fit(X, y)  # compiled and cached outside the timing
        once, repeat, cached = [], [], []
        for _ in range(args.rounds):
            with process_cache(False):
                once.append(ms_per_fit(path.make, X, y, args.fits))
            with process_cache(True):
                ms_per_fit(path.make, X, y, 1)
                repeat.append(ms_per_fit(path.make, X, y, args.fits))
            with process_cache(True), memoized_accounting():
                ms_per_fit(path.make, X, y, args.fits)  # every question of the timed seeds
                cached.append(ms_per_fit(path.make, X, y, args.fits))
        p, r, q = (float(np.median(t)) for t in (once, repeat, cached))
        rows.append((path.label, p, r, q, max(0.0, 1.0 - q / p)))
        print(f"{path.label}: {p:.1f} ms, {r:.1f} ms repeated, {q:.1f} ms cached, "
              f"share {rows[-1][4]:.2f}", flush=True)
    searches = search_rows(args.rounds)
    shares = np.array([r[4] for r in rows])
    speedups = np.array([r[1] / r[2] for r in rows])
    load = os.getloadavg()
    lines = [
        "# The accountant's share of a small fit",
        "",
        f"`python benchmarks/bench_accountant_share.py --fits {args.fits} --rounds {args.rounds}`;"
        f" load average at the end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (2 cores).",
        "Medians over the rounds of the mean time per fit. *Once*: the process's cache of the"
        " accountant's answers off (a fit run once); *repeated*: the cache on and warm (the"
        " same configuration fitted again: a search's folds, a refit); *cached*: every"
        " accountant call served from that cache and `memoized_accounting`'s RDP curves"
        " (warmed with the same seeds), so"
        " `share = 1 - cached / once` is the accountant's part of a fit run once.",
        "",
        f"Over {len(rows)} paths: median share {np.median(shares):.2f}, largest {shares.max():.2f};"
        f" {int((shares > 0.5).sum())} paths spend more than half of a fit run once in the"
        f" accountant. A repeated fit is {np.median(speedups):.1f} times faster than a fit run"
        f" once (median over the paths; from {speedups.min():.1f} to {speedups.max():.1f}).",
        "",
        "| search (GridSearchCV, 4 epsilons x 5 folds, 300 raw rows, private pipeline) |"
        " s, cache off | s, cache on | ratio |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} defaults | {off:.2f} | {on:.2f} | {off / on:.1f} |"
              for name, off, on in searches]
    lines += [
        "",
        "| path | ms a fit, once | ms a fit, repeated | ms a fit, accountant cached |"
        " accountant's share |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {label} | {p:.1f} | {r:.1f} | {q:.1f} | {s:.2f} |"
              for label, p, r, q, s in rows]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
