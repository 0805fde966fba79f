"""Small timing helpers shared by the benchmarks (best-of-k wall time, numpy pass baseline)."""

import time

import numpy as np

__all__ = ["best_time", "xw_pass_time"]


def best_time(fn, repeat=5):
    """Smallest wall time of ``fn()`` over ``repeat`` calls (robust to a noisy shared machine)."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def xw_pass_time(X, repeat=20):
    """Time of one numpy ``X @ w`` pass over the same array (the memory-bandwidth yardstick)."""
    w = np.ones(X.shape[1])
    return best_time(lambda: X @ w, repeat)
