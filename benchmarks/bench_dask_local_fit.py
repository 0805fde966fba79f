"""Whole small fits on Dask inputs without a ``distributed.Client`` (dask's local schedulers),
against the same fits in memory.

At small n a local Dask fit's cost is its few task graphs (the prepared chunks, the counts of
the private bounds, the label set), not its steps (which call the chunk kernels directly; see
``skdp._dask``). This times, in one run and interleaved, the same fits of the Dask audit paths'
data (300 rows in two uneven chunks, ``skdp.audit``'s estimator paths) three ways: in memory;
on Dask with no scheduler configured (skdp computes on dask's synchronous scheduler); on Dask
with ``dask.config.set(scheduler="threads")`` (the thread pool, as before session 40). It
writes ``benchmarks/results/dask_local_fit.md`` with the machine's load average.

Usage: ``python benchmarks/bench_dask_local_fit.py [--fits 100] [--rounds 3]``
"""

import argparse
import os
import sys
import warnings
from pathlib import Path

import dask
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ms_per_fit  # noqa: E402

from skdp.audit import memoized_accounting  # noqa: E402
from skdp.audit._paths import estimator_paths  # noqa: E402

PATHS = (
    "DPRidge on Dask, defaults (dp_masg, 10 <= s < 300): data_norm and y_bounds 'auto' "
    "(300 rows)",
    "DPLogisticRegression on Dask (dp_gdws)",
    "DPLogisticRegression on Dask (dp_gdws Poisson)",
)
OUT = Path(__file__).resolve().parent / "results" / "dask_local_fit.md"



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    paths = {p.label: p for p in estimator_paths()}
    rows = []
    with memoized_accounting():  # the accountant's cost is the same in the three ways
        for label in PATHS:
            path = paths[label]
            c, X = path.data()
            Xd, yd, _ = path.dask_inputs(c, X)
            times = {"memory": [], "dask, synchronous": [], "dask, thread pool": []}
            path.make(0).fit(np.asarray(X), np.asarray(c.y))  # compiled outside the timing
            with dask.config.set(scheduler=None):
                path.make(0).fit(Xd, yd)
            for _ in range(args.rounds):
                times["memory"].append(ms_per_fit(path.make, np.asarray(X), np.asarray(c.y),
                                                   args.fits))
                with dask.config.set(scheduler=None):
                    times["dask, synchronous"].append(ms_per_fit(path.make, Xd, yd, args.fits))
                with dask.config.set(scheduler="threads"):
                    times["dask, thread pool"].append(ms_per_fit(path.make, Xd, yd, args.fits))
            rows.append((label, {k: float(np.median(v)) for k, v in times.items()}))
            print(label, rows[-1][1], flush=True)
    lines = [
        "# Small fits on Dask without a Client, against memory\n",
        f"`python benchmarks/bench_dask_local_fit.py --fits {args.fits} --rounds "
        f"{args.rounds}`: ms per fit, median of {args.rounds} interleaved rounds of "
        f"{args.fits} fits; the accountant memoised (as in the audits). Load average at the "
        f"end: {os.getloadavg()[0]:.2f} (2 cores, shared machine). DPRidge's defaults run "
        "dp_scd in memory at 300 rows and their fallback dp_masg on Dask (dp_scd is refused "
        "there), so its memory column is another optimizer's fit.\n",
        "| path | memory | Dask, synchronous (default) | Dask, thread pool | "
        "synchronous / thread pool | synchronous / memory |",
        "|---|---|---|---|---|---|",
    ]
    for label, t in rows:
        sync, pool, mem = t["dask, synchronous"], t["dask, thread pool"], t["memory"]
        lines.append(f"| {label} | {mem:.1f} | {sync:.1f} | {pool:.1f} | {sync / pool:.2f} | "
                     f"{sync / mem:.2f} |")
    OUT.write_text("\n".join(lines) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
