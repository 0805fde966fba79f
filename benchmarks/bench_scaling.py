"""Scaling with n (issue 16): step and epoch time from 1e4 to 1e7 rows at d = 100, and peak memory.

Each n runs in a fresh process. X is float32 (the input a large table would come in; a fit reads
it in place, computing in float64, with a clip factor per row: no copy of X is made). At the
largest n, X is a ``numpy.memmap`` on disk (``--memmap-from``), generated block by block, to show
the path for an X that does not fit in memory: every step reads the memmap itself. Per n:

* ``X @ w``: one numpy pass over the float32 X, BLAS on one thread (the bandwidth yardstick);
* full-batch step: ``DPLogisticRegression(optimizer=DPGDWS(max_iter=10))``, the time of its
  noisy steps (``ProgressMonitor.run``, which every optimizer's steps go through) over 10: the
  calibration and private bounds are not in it;
* mini-batch epoch: the same with Poisson batches of 512 rows (expected), per step times
  n / 512 (up to 2000 steps timed);
* set-up: the rest of the full-batch fit (validation, private bounds, row norms and clip
  factors, noise calibration);
* memory: peak resident memory during the fits beyond the resident memory with X loaded, over
  X's bytes (before session 7 the fit wrote a clipped float64 copy, 2 (d + 1) / d = 2.02 of a
  float32 X by itself; now per-row buffers are all).

Usage: ``python benchmarks/bench_scaling.py [--sizes 1e4,1e5,1e6,1e7] [--memmap-from 1e7]``;
writes ``benchmarks/results/scaling.md`` and ``scaling.json``.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

D = 100
BLOCK = 1 << 16


def make_x(n, path=None):
    """float32 (n, D) rows of N(0, 1) entries, in memory or in a memmap at ``path``."""
    rng = np.random.default_rng(0)
    if path is None:
        X = np.empty((n, D), dtype=np.float32)
    else:
        X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, D))
    for start in range(0, n, BLOCK):
        stop = min(n, start + BLOCK)
        X[start:stop] = rng.standard_normal((stop - start, D), dtype=np.float32)
    w = rng.standard_normal(D).astype(np.float32) / np.sqrt(D)
    y = np.empty(n, dtype=np.int64)
    for start in range(0, n, BLOCK):
        stop = min(n, start + BLOCK)
        y[start:stop] = (X[start:stop] @ w + rng.standard_normal(stop - start) > 0)
    return X, y


def child(n, memmap):
    from _timing import hwm, record_steps, rss, xw_pass_time

    from skdp import DPLogisticRegression
    from skdp.optimizers.dp_gdws import DPGDWS

    tmp = tempfile.mkdtemp(dir=os.environ.get("SKDP_SCALING_TMP"))
    X, y = make_x(n, os.path.join(tmp, "X.npy") if memmap else None)
    # compile outside the measurement
    DPLogisticRegression(optimizer=DPGDWS(max_iter=2), random_state=0).fit(X[:2000], y[:2000])
    DPLogisticRegression(optimizer=DPGDWS(max_iter=2, batch_size=64), random_state=0).fit(
        X[:2000], y[:2000])
    pass_s = xw_pass_time(X, repeat=5 if n >= 10**6 else 20)
    # and once on X itself: a fit of more than PARALLEL_MIN_WORK entries compiles (or loads) the
    # threaded variant of the gradient sum, whose compiler memory is not the fit's
    DPLogisticRegression(optimizer=DPGDWS(max_iter=1), random_state=0).fit(X, y)
    with open("/proc/self/clear_refs", "w") as fh:  # VmHWM := current RSS (X loaded)
        fh.write("5")
    base = rss()
    spent = record_steps()  # the noisy steps themselves (not the calibration or set-up)

    def fit(**kw):
        spent.clear()
        t0 = time.perf_counter()
        DPLogisticRegression(optimizer=DPGDWS(**kw), random_state=0).fit(X, y)
        seconds, n_steps = spent[-1]
        return time.perf_counter() - t0, seconds / n_steps

    repeat = 1 if n >= 10**7 else 3
    total, step = min(fit(max_iter=10) for _ in range(repeat))
    steps_epoch = max(3, n // 512)
    _, per_batch = min(fit(max_iter=min(steps_epoch, 2000), batch_size=512) for _ in range(repeat))
    epoch = per_batch * steps_epoch
    peak = hwm()
    return {
        "n": n, "d": D, "memmap": memmap, "x_bytes": int(X.nbytes), "xw_pass_s": pass_s,
        "full_batch_step_s": step, "minibatch_epoch_s": epoch, "setup_s": total - 10 * step,
        "peak_beyond_x_over_x": (peak - base) / X.nbytes,
        "load": os.getloadavg()[0],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e4,1e5,1e6,1e7")
    ap.add_argument("--memmap-from", type=float, default=1e7)
    ap.add_argument("--child", type=float)
    ap.add_argument("--memmap", action="store_true")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child), args.memmap)))
        return
    rows = []
    for n in (int(float(s)) for s in args.sizes.split(",")):
        cmd = [sys.executable, __file__, "--child", str(n)]
        if n >= args.memmap_from:
            cmd.append("--memmap")
        # a fixed mmap threshold: glibc's dynamic one would keep the warm-up fit's freed per-row
        # buffers in the heap, and the measured fits would reuse them without raising the peak
        env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
        out = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if out.returncode:
            print(out.stderr[-2000:], file=sys.stderr)
            continue
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(row, flush=True)
        rows.append(row)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scaling.json").write_text(json.dumps(rows, indent=1))
    lines = [
        "# Scaling with n: full-batch step, mini-batch epoch and peak memory (d = 100, float32 X)",
        "",
        "`python benchmarks/bench_scaling.py` (see its docstring for what is timed). One run, each n"
        " in a fresh process; the machine is shared, so the load average at each n is shown."
        " Ratios are against one numpy `X @ w` pass over the float32 X on one BLAS thread."
        " X is a memmap on disk where marked (the steps read it in place). The fit reads X in"
        " place with a clip factor per row (no copy; before session 7 it wrote a clipped float64"
        " copy, 2.02 X by itself). Memory: peak resident memory during the fits beyond the"
        " resident memory with X loaded, in units of X's bytes.",
        "",
        "| n | X | `X @ w` (ms) | full-batch step (ms) | step / pass | step per 1e6 rows (ms) |"
        " mini-batch epoch (ms) | epoch / pass | set-up (s) | peak beyond X / X | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:.0e} | {'memmap' if r['memmap'] else 'memory'} | {1e3 * r['xw_pass_s']:.2f}"
            f" | {1e3 * r['full_batch_step_s']:.2f} | {r['full_batch_step_s'] / r['xw_pass_s']:.2f}"
            f" | {1e9 * r['full_batch_step_s'] / r['n']:.1f}"
            f" | {1e3 * r['minibatch_epoch_s']:.1f} | {r['minibatch_epoch_s'] / r['xw_pass_s']:.2f}"
            f" | {r['setup_s']:.2f} | {r['peak_beyond_x_over_x']:.2f} | {r['load']:.1f} |"
        )
    (RESULTS / "scaling.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
