"""Small helpers shared by the benchmarks (best-of-k wall time, milliseconds a fit, numpy pass
baseline, epochs of a fit)."""

import time

import numpy as np

__all__ = ["best_time", "ms_per_fit", "epochs_of", "rss", "hwm", "xw_pass_time", "record_steps"]


def best_time(fn, repeat=5):
    """Smallest wall time of ``fn()`` over ``repeat`` calls (robust to a noisy shared machine)."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def ms_per_fit(make, X, y, fits):
    """Mean wall time in milliseconds of ``make(seed).fit(X, y)`` over seeds ``0..fits-1`` (the
    caller warms compilation and caches first, so that they stay outside the timing)."""
    start = time.perf_counter()
    for seed in range(fits):
        make(seed).fit(X, y)
    return 1e3 * (time.perf_counter() - start) / fits


def xw_pass_time(X, repeat=20, threads=1):
    """Time of one numpy ``X @ w`` pass over the same array (the memory-bandwidth yardstick).

    BLAS is limited to ``threads`` threads (default 1, like skdp's kernels), so that the ratio
    compares like with like and does not swing with the load of a shared machine.
    """
    from threadpoolctl import threadpool_limits

    w = np.ones(X.shape[1])
    with threadpool_limits(limits=threads):
        return best_time(lambda: X @ w, repeat)


def epochs_of(est, n):
    """Passes over the n training examples implied by the fitted privacy record."""
    rec = est.privacy_record_
    det = rec.details or {}
    if "epochs" in det:
        return float(det["epochs"])
    if "sampling_rate" in det:
        return float(rec.n_steps) * float(det["sampling_rate"])
    s = str(rec.sampling)
    if s.startswith("poisson(q="):
        return float(rec.n_steps) * float(s[len("poisson(q="):].rstrip(")"))
    return float(rec.n_steps)  # full batch: one pass per step


def rss():
    """Resident set size of this process now, in bytes (Linux)."""
    import resource

    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()


def hwm():
    """Peak resident set size (VmHWM) of this process, in bytes (Linux). VmHWM is per address
    space (reset by exec, unlike ru_maxrss, which inherits the parent's peak) and can be reset
    to the current RSS by writing "5" to /proc/self/clear_refs."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def record_steps():
    """Time the noisy steps of every fit from now on, in this process: returns a list that each
    ``skdp.progress.ProgressMonitor.run`` call (every optimizer's steps go through it; the noise
    calibration and the fit's set-up do not) appends ``(seconds, n_steps)`` to. For benchmark
    processes: the patch stays for the life of the process."""
    import skdp.progress as progress

    calls = []
    run = progress.ProgressMonitor.run

    def timed_run(self, n_steps, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return run(self, n_steps, *args, **kwargs)
        finally:
            calls.append((time.perf_counter() - t0, n_steps))

    progress.ProgressMonitor.run = timed_run
    return calls
