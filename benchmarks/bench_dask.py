"""Per-step cost of a full-batch private step on Dask (skdp._dask) against the same step in memory.

A step of dp_gdws / dp_nag_opt / dp_masg / dp_sgld on Dask inputs is: the coefficients sent with
one task per persisted chunk, the numba kernel ``clipped_gradient_sum`` on each chunk where it
lives, the per-chunk sums gathered and added on the client. This script times exactly that
(``DaskDesign.gradient_sum``) on a ``distributed.LocalCluster`` and the in-memory kernel on the
same rows, and writes ``benchmarks/results/dask.md``:

1. step time against the number of chunks at a fixed n (the per-task overhead);
2. step time against n (rows generated on the workers chunk by chunk, float32 draws, d=100),
   and the ratio to the in-memory step at equal n (the in-memory kernel on one chunk's rows,
   scaled by n: the kernel is linear in n, and the whole array does not fit the client too);
3. the Poisson mini-batch step (rate ``--q``): the client's draw of the sample (the kernels'
   sampler on the fit's generator), its split by chunk, the sampled rows' sums on the workers;
4. the extrapolation to 1e8 rows from the per-row cost and the per-task overhead.

The load average of the machine is written with the figures (it is shared).

Usage: ``python benchmarks/bench_dask.py [--max-rows 4e6] [--repeats 5] [--workers 2]
[--q 0.01]`` (the largest n is ``--max-rows`` itself when it is not on the 1-2-5 grid).
The kernel computes in float64 (the prepared chunks are float64: 8 bytes x 101 per row), so
on this shared 2-core machine n stops well below 1e8; the rest is extrapolated.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")

D = 100


def _design(n, chunk_rows, seed=0):
    """A DaskDesign over n x D rows generated on the workers (float32 draws), logistic targets."""
    import dask.array as da

    from skdp._dask import DaskDesign

    chunks = [chunk_rows] * (n // chunk_rows) + ([n % chunk_rows] if n % chunk_rows else [])
    X = da.random.RandomState(seed).standard_normal(size=(n, D), chunks=(tuple(chunks), D))
    X = X.astype(np.float32)
    Y = da.where(X[:, :1] > 0, 1.0, -1.0)
    return DaskDesign(X, Y, None, data_norm=10.0, intercept_scaling=1.0, unit=10.0,
                      max_weight=1.0)


def _timed_gradient(chunk, w, loss_id, tau):
    """The step's task, with the kernel's own time on the worker (pickled by value)."""
    import time as _time

    from distributed import get_worker

    from skdp._dask import _chunk_gradient

    t0 = _time.perf_counter()
    out = _chunk_gradient(chunk, w, loss_id, tau)
    return out, (get_worker().address, _time.perf_counter() - t0)


def _step_with_compute(design, w, lid):
    """One step as ``DaskDesign.gradient_sum`` does it, timed: (wall, kernel critical path).

    The kernel's critical path is the largest total kernel time of one worker (its chunks run
    one after the other on its one thread); the rest of the wall time is the overhead (task
    scheduling, the coefficients out and the sums back, the client's sum)."""
    from distributed import get_client

    client = get_client()
    t0 = time.perf_counter()
    futures = client.map(_timed_gradient, design._chunks, w=w, loss_id=lid, tau=0.5, pure=False)
    parts = client.gather(futures)
    total = parts[0][0].copy()
    for out, _ in parts[1:]:
        total += out
    wall = time.perf_counter() - t0
    per_worker = {}
    for _, (addr, dt) in parts:
        per_worker[addr] = per_worker.get(addr, 0.0) + dt
    return wall, max(per_worker.values())


def _poisson_step(design, w, lid, q, perm, rng, repeats):
    """Median (client sampling, split, whole step) of a Poisson step as ``poisson_oracle`` runs
    it: the kernels' sampler on the client, then ``DaskDesign.gradient_sum`` on the sample."""
    from skdp.optimizers._glm import poisson_batch

    n = design.shape[0]
    runs = []
    for r in range(repeats + 1):
        t0 = time.perf_counter()
        m = poisson_batch(rng, n, q, perm)
        t1 = time.perf_counter()
        design.split_index(perm[:m])
        t2 = time.perf_counter()
        design.gradient_sum(w, lid, 0.5, perm[:m])
        t3 = time.perf_counter()
        if r:  # the first is the warm-up
            runs.append((t1 - t0, t2 - t1, t3 - t0 - (t2 - t1)))
    return tuple(float(np.median([x[i] for x in runs])) for i in range(3))


def _memory_poisson(n, q, repeats):
    """Median time of the in-memory Poisson step's sampler at n (the kernel on the sample costs
    q times the full step)."""
    from skdp.optimizers._glm import poisson_batch

    perm = np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(1)
    return _time_steps(lambda: poisson_batch(rng, n, q, perm), repeats)


def _time_split(design, w, lid, repeats):
    _step_with_compute(design, w, lid)
    runs = [_step_with_compute(design, w, lid) for _ in range(repeats)]
    wall = float(np.median([r[0] for r in runs]))
    comp = float(np.median([r[1] for r in runs]))
    return wall, comp


def _time_steps(step, repeats):
    step()  # warm (numba dispatch, connections)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _memory_step(rows, repeats):
    """Median time of the in-memory kernel over ``rows`` rows (same preparation, one thread)."""
    from skdp._rows import make_rows
    from skdp.linear_model._base import clip_rows
    from skdp.losses import get_loss
    from skdp.optimizers._glm import clipped_gradient_sum

    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, D), dtype=np.float32).astype(np.float64)
    Xc = clip_rows(X, 10.0, 1.0) / 10.0
    Y = np.where(X[:, :1] > 0, 1.0, -1.0)
    R = make_rows(Xc)
    idx = np.arange(rows, dtype=np.int64)
    w = np.full(D + 1, 0.01)
    out, z, s = np.zeros(D + 1), np.zeros(1), np.zeros(1)
    lid = get_loss("logistic").loss_id

    def step():
        clipped_gradient_sum(R, Y, w, idx, rows, lid, 0.5, out, z, s)

    return _time_steps(step, repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-rows", type=float, default=4e6)
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--q", type=float, default=0.01, help="Poisson sampling rate")
    parser.add_argument("--memory-limit", default="7GB", help="per worker (no spilling)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "dask.md"))
    args = parser.parse_args()

    import dask
    from distributed import Client, LocalCluster

    from skdp.losses import get_loss

    load_start = os.getloadavg()
    # the prepared chunks must stay in memory (a spilled chunk is read from disk every step)
    dask.config.set({"distributed.worker.memory.target": False,
                     "distributed.worker.memory.spill": False,
                     "distributed.worker.memory.pause": 0.95})

    lid = get_loss("logistic").loss_id
    cluster = LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=1,
                           dashboard_address=":0", memory_limit=args.memory_limit)
    client = Client(cluster)
    w = np.full(D + 1, 0.01)
    lines = []

    # 1. chunk count at fixed n: (step time - kernel time) / chunks = per-task overhead
    n1 = 1_000_000
    mem1 = _memory_step(n1, args.repeats)
    rows_chunks = []
    for k in (2, 10, 50):
        design = _design(n1, -(-n1 // k))
        t, comp = _time_split(design, w, lid, args.repeats)
        rows_chunks.append((design.n_chunks, t, comp))
        design.close()
        print(f"chunks {design.n_chunks:3d}: step {t * 1e3:8.1f} ms, kernel critical path "
              f"{comp * 1e3:.1f} ms", flush=True)
    ks = np.array([k for k, _, _ in rows_chunks], dtype=float)
    ov = np.array([t - c for _, t, c in rows_chunks])
    slope, intercept = np.polyfit(ks, ov, 1)  # overhead: fixed + per chunk

    # 2. n: chunks of chunk_rows rows
    per_row_mem = _memory_step(args.chunk_rows, args.repeats) / args.chunk_rows
    rows_n = []
    sizes = [m * 10**e for e in range(6, 10) for m in (1, 2, 5)]  # 1e6, 2e6, 5e6, 1e7, ...
    sizes = [int(v) for v in sizes if v <= args.max_rows]
    if sizes[-1] < int(args.max_rows):
        sizes.append(int(args.max_rows))
    rows_q = []
    for n in sizes:
        design = _design(n, args.chunk_rows)
        t, comp = _time_split(design, w, lid, args.repeats)
        mem = per_row_mem * n
        rows_n.append((n, design.n_chunks, t, comp, mem))
        perm = np.arange(n, dtype=np.int64)
        sample, split, step = _poisson_step(design, w, lid, args.q, perm, np.random.default_rng(0),
                                            args.repeats)
        rows_q.append((n, design.n_chunks, sample, split, step, t))
        design.close()
        del perm
        print(f"n {n:.1e}: {design.n_chunks} chunks, dask {t * 1e3:.1f} ms (kernel "
              f"{comp * 1e3:.1f}), memory {mem * 1e3:.1f} ms, ratio {t / mem:.2f}; poisson "
              f"q={args.q}: step {step * 1e3:.1f} ms (sampling {sample * 1e3:.1f}, split "
              f"{split * 1e3:.1f})", flush=True)
    mem_sampler = _memory_poisson(sizes[0], args.q, args.repeats)
    client.close()
    cluster.close()
    load_end = os.getloadavg()

    # 3. extrapolation: a step on W workers ~ n * c_row / W + chunks * overhead
    W = args.workers
    c_row = per_row_mem
    over = max(slope, 0.0) + max(intercept, 0.0) / max(ks.max(), 1.0)  # per chunk, generous
    lines.append("# Dask: per-step cost of a full-batch private step (bench_dask.py)\n")
    lines.append(f"LocalCluster, {W} worker processes x 1 thread ({args.memory_limit} each, no "
                 "spilling), on a 2-core machine shared with "
                 "other jobs (timings noisy; ratios from one run). Load average (1, 5, 15 min) "
                 f"at the start {load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f}, "
                 f"at the end {load_end[0]:.2f} / {load_end[1]:.2f} / {load_end[2]:.2f}. "
                 "Logistic loss, d = 100 "
                 "(+ intercept), rows drawn on the workers in float32 and prepared (clipped, "
                 "float64) once; a step = `DaskDesign.gradient_sum` (coefficients out, one "
                 "task per chunk running `clipped_gradient_sum`, sums back, added in chunk "
                 f"order). Median of {args.repeats} steps.\n")
    lines.append("## Step time against chunk count (n = 1e6)\n")
    lines.append(f"In-memory kernel on the same n (one thread): {mem1 * 1e3:.1f} ms.\n")
    lines.append("Kernel critical path: the largest total kernel time of one worker, timed "
                 "inside the tasks; overhead = step - kernel critical path (scheduling, the "
                 "coefficients out, the sums back, the client's sum).\n")
    lines.append("| chunks | Dask step (ms) | kernel critical path (ms) | overhead (ms) | "
                 "overhead share | Dask / memory |")
    lines.append("|---:|---:|---:|---:|---:|---:|")
    for k, t, c in rows_chunks:
        lines.append(f"| {k} | {t * 1e3:.1f} | {c * 1e3:.1f} | {(t - c) * 1e3:.1f} | "
                     f"{(t - c) / t:.1%} | {t / mem1:.2f} |")
    lines.append(f"\nLinear fit of the overhead: {intercept * 1e3:.1f} ms + {slope * 1e3:.2f} ms "
                 "per chunk.\n")
    lines.append(f"## Step time against n ({args.chunk_rows:,} rows per chunk)\n")
    lines.append("Memory: the in-memory kernel (one thread) per row, times n (linear in n; "
                 "the whole array does not fit this machine beside the cluster).\n")
    lines.append("| n | chunks | Dask step (ms) | kernel critical path (ms) | overhead share | "
                 "in memory (ms) | Dask / memory | ms per 1e6 rows |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, k, t, c, mem in rows_n:
        lines.append(f"| {n:.1e} | {k} | {t * 1e3:.1f} | {c * 1e3:.1f} | {(t - c) / t:.1%} | "
                     f"{mem * 1e3:.1f} | {t / mem:.2f} | {t / n * 1e9:.1f} |")
    lines.append(f"\n## Poisson mini-batch step (q = {args.q}, same designs)\n")
    lines.append("A step of `poisson_oracle`: the client draws the sample with the kernels' "
                 "sampler (`poisson_batch`: geometric skips between sampled rows, drawn from "
                 "uniforms, into a buffer of n int64), splits it by chunk "
                 "(`searchsorted` on the chunk offsets), and each chunk holding sampled rows "
                 "sums them where it lives. In memory the sampler alone at n = "
                 f"{sizes[0]:.0e} costs {mem_sampler * 1e3:.2f} ms.\n")
    lines.append("| n | chunks | client sampling (ms) | split (ms) | Poisson step (ms) | "
                 "full-batch step (ms) | Poisson / full |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|")
    for n, k, sample, split, step, full in rows_q:
        lines.append(f"| {n:.1e} | {k} | {sample * 1e3:.2f} | {split * 1e3:.2f} | "
                     f"{step * 1e3:.1f} | {full * 1e3:.1f} | {step / full:.2f} |")
    lines.append("\n## Extrapolation to 1e7 and 1e8 rows (on paper)\n")
    lines.append(f"Per-row kernel cost c = {c_row * 1e9:.1f} ns (one thread, measured above); "
                 f"per-task overhead o = {over * 1e3:.2f} ms (slope of the chunk sweep). With "
                 f"W workers and chunks of {args.chunk_rows:,} rows, a step costs about "
                 "`T(n) = n c / W + (n / chunk) o / W` on the workers plus a fixed client part; "
                 "the overhead share is `o / (chunk c + o)`, independent of n. A Poisson step "
                 "adds the client's sampler, about `s q n` (s per sampled row, from the table "
                 "above), and its workers' part is `q n c / W + (n / chunk) o / W` (every chunk "
                 "holds sampled rows once `q chunk >> 1`).\n")
    lines.append("| n | workers | chunks | compute (s) | overhead (s) | overhead share |")
    lines.append("|---:|---:|---:|---:|---:|---:|")
    for n in (1e7, 1e8):
        for workers in (W, 16):
            k = int(np.ceil(n / args.chunk_rows))
            comp = n * c_row / workers
            ov = k * over / workers
            lines.append(f"| {n:.0e} | {workers} | {k} | {comp:.2f} | {ov:.3f} | "
                         f"{ov / (comp + ov):.1%} |")
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
