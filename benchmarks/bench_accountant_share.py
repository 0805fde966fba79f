"""The accountant's share of a small fit: every in-memory audit path, timed with the accountant
computed as a user's fit computes it, and with its results served from a warm cache.

A fit calibrates its noise on the accountant (a bisection over RDP curves) and reports its
epsilon; at small n that can cost more than the optimisation. :func:`skdp.audit.memoized_accounting`
caches the accountant's pure functions (the same values), so the difference between the two
timings is what the accountant costs a fit that a user runs once. The two ways are interleaved in
one run, fit by fit, on the audit paths' data (``skdp.audit``'s estimator paths, a few hundred
rows); worker-process and Dask paths are left out (their cost is elsewhere). Writes
``benchmarks/results/accountant_share.md`` with the machine's load average.

Usage: ``python benchmarks/bench_accountant_share.py [--fits 10] [--rounds 3] [--out PATH]``
"""

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ms_per_fit  # noqa: E402

from skdp.audit import memoized_accounting  # noqa: E402
from skdp.audit._paths import estimator_paths  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "accountant_share.md"



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
        plain, cached = [], []
        with memoized_accounting():
            ms_per_fit(path.make, X, y, args.fits)  # warm the cache with the timed seeds' calls
        for _ in range(args.rounds):
            plain.append(ms_per_fit(path.make, X, y, args.fits))
            with memoized_accounting():
                ms_per_fit(path.make, X, y, 1)
                cached.append(ms_per_fit(path.make, X, y, args.fits))
        p, q = float(np.median(plain)), float(np.median(cached))
        rows.append((path.label, p, q, max(0.0, 1.0 - q / p)))
        print(f"{path.label}: {p:.1f} ms, {q:.1f} ms cached, share {rows[-1][3]:.2f}", flush=True)
    shares = np.array([r[3] for r in rows])
    load = os.getloadavg()
    lines = [
        "# The accountant's share of a small fit",
        "",
        f"`python benchmarks/bench_accountant_share.py --fits {args.fits} --rounds {args.rounds}`;"
        f" load average at the end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (2 cores).",
        "Medians over the rounds of the mean time per fit; the cached way serves every accountant"
        " call from `memoized_accounting` (warmed with the same seeds), so"
        " `share = 1 - cached / plain` is the accountant's part of a fit run once.",
        "",
        f"Over {len(rows)} paths: median share {np.median(shares):.2f}, largest {shares.max():.2f};"
        f" {int((shares > 0.5).sum())} paths spend more than half of a fit in the accountant.",
        "",
        "| path | ms a fit | ms a fit, accountant cached | accountant's share |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {label} | {p:.1f} | {q:.1f} | {s:.2f} |" for label, p, q, s in rows]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
