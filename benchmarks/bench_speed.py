"""Speed and memory: every skdp optimizer against scikit-learn, Opacus and diffprivlib.

Run: ``python benchmarks/bench_speed.py [--skip-grid] [--skip-anchors]`` (``pip install ".[bench]"``).
Writes ``benchmarks/results/speed.md`` and ``speed.csv``. Four parts:

1. Fit time at epsilon = 1 on UCI Adult: ``DPLogisticRegression(epsilon=1)`` with each optimizer
   at its defaults (minimum of 3 fits after a warm-up fit, so numba compilation is excluded),
   next to scikit-learn ``LogisticRegression`` (lbfgs, C = 1), Opacus DP-SGD and diffprivlib
   (configurations in ``_anchors.py``; diffprivlib timed in its own environment).
2. Epoch cost as a ratio to one numpy ``X @ w`` pass over the same array, on generated data with
   n in {1e5, 1e6} and d in {20, 100, 1000} (float64, rows of unit norm). The optimizers run a
   capped number of steps there (the ratio is per epoch, so the cap does not change it); the
   number of epochs (passes over n examples) is read from the fitted privacy record.
   n = 1e6, d = 1000 is skipped: X alone would be 8 GB.
3. ``import skdp`` time and numba compile time, each in a fresh process with
   ``NUMBA_CACHE_DIR`` set to an empty temporary directory (cold) and then to the filled one (warm).
4. Peak memory of a fit, in a fresh process per optimizer: peak RSS during the fit minus the RSS
   just before it, relative to ``X.nbytes`` (target: at most one extra copy of X; a fit reads a
   dense X in place since session 7, so what is left is per-row buffers).

All figures come from one run on a shared 2-core machine; ratios are the meaningful part.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _anchors import (
    CHEAP_OPACUS_CONFIG, AnchorUnavailable, diffprivlib_runs, opacus_config, opacus_fit,
)
from _timing import best_time, epochs_of, xw_pass_time

RESULTS = HERE / "results"
OPTIMIZERS = ["dp_gdws", "dp_scd", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree"]
GRID = [(100_000, 20), (100_000, 100), (100_000, 1000), (1_000_000, 20), (1_000_000, 100)]
SKIPPED_GRID = [(1_000_000, 1000, "X would take 8 GB (limit ~2 GB)")]


def capped(opt):
    """A short run of each optimizer for the generated-data grid (same kernels, fewer steps)."""
    import skdp

    return {
        "dp_gdws": lambda: skdp.DPGDWS(max_iter=20),
        "dp_scd": lambda: skdp.DPSCD(epochs=2),
        "dp_nag_opt": lambda: skdp.DPNAGOpt(max_iter=20),
        "dp_masg": lambda: skdp.DPMASG(max_iter=20),
        "dp_sgld": lambda: skdp.DPSGLD(max_iter=20),
        "dp_nsgd_tree": lambda: skdp.DPNSGDTree(epochs=2),
    }[opt]()


# ----------------------------------------------------------------------------- part 1
def adult_fit_times(skip_anchors=False):
    from skdp import DPLogisticRegression
    from skdp.datasets import load_adult
    from sklearn.linear_model import LogisticRegression

    X, y, X_te, y_te = load_adult()
    n = X.shape[0]
    t_pass = xw_pass_time(X)
    rows = []
    sk = LogisticRegression(C=1.0, max_iter=1000)
    t_sk = best_time(lambda: sk.fit(X, y), 3)
    rows.append({"method": "scikit-learn LogisticRegression (lbfgs, non-private)", "fit_s": t_sk,
                     "accuracy": sk.score(X_te, y_te), "epochs": float(sk.n_iter_[0]), "note": "n_iter_ lbfgs iterations"})
    for opt in OPTIMIZERS:
        est = DPLogisticRegression(epsilon=1.0, optimizer=opt, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
            t = best_time(lambda est=est: est.fit(X, y), 3)
        ep = epochs_of(est, n)
        rows.append({"method": f"skdp {opt}", "fit_s": t, "accuracy": est.score(X_te, y_te), "epochs": ep,
                         "epoch_ratio": t / ep / t_pass})
        print(f"adult {opt}: {t:.3f}s, {ep:.1f} epochs", flush=True)
    notes = []
    if not skip_anchors:
        try:
            # issue 15's accuracy anchor (lr 1, Poisson batch 512, 10 epochs: issue 16's table
            # timed 10 epochs too), and the older, cheaper configuration of _anchors.py
            anchor = opacus_config(n)
            for label, cfg in (
                (f"Opacus DP-SGD (issue 15 anchor: nn.Linear, lr {anchor['lr']:g}, batch "
                 f"{anchor['batch_size']}, {anchor['epochs']} epochs)", anchor),
                ("Opacus DP-SGD (nn.Linear, lr 0.5, batch 256, 5 epochs)", CHEAP_OPACUS_CONFIG),
            ):
                times, accs = [], []
                for k in range(3):
                    acc, _, dt = opacus_fit("classification", X, y, X_te, y_te, 1.0, 0, **cfg)
                    times.append(dt)
                    accs.append(acc)
                epochs = float(cfg.get("epochs", 5))
                rows.append({"method": label, "fit_s": min(times), "accuracy": accs[0],
                             "epochs": epochs, "epoch_ratio": min(times) / epochs / t_pass})
        except AnchorUnavailable as exc:
            notes.append(f"Opacus could not run: {exc}")
        try:
            res, versions = diffprivlib_runs("classification", X, y, X_te, y_te, [1.0], 1, repeat_time=3)
            rows.append({"method": f"diffprivlib {versions[0]} LogisticRegression (sklearn {versions[1]})",
                             "fit_s": res[0][4], "accuracy": res[0][2], "epochs": np.nan,
                             "note": "own venv, timed inside it"})
        except AnchorUnavailable as exc:
            notes.append(f"diffprivlib could not run: {exc}")
    for r in rows:
        r["vs_sklearn"] = r["fit_s"] / t_sk
    return {"n": n, "d": X.shape[1], "t_pass": t_pass, "rows": rows, "notes": notes}


# ----------------------------------------------------------------------------- part 2
def generated(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = np.empty((n, d))
    step = max(1, 20_000_000 // d)
    for i in range(0, n, step):
        blk = rng.standard_normal((min(step, n - i), d))
        blk /= np.linalg.norm(blk, axis=1, keepdims=True)
        X[i:i + step] = blk
    w = rng.standard_normal(d)
    y = (X @ w + 0.1 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def grid_epoch_ratios(time_budget=600.0):
    from skdp import DPLogisticRegression

    rows, skipped = [], [f"n={n:.0e}, d={d}: {why}" for n, d, why in SKIPPED_GRID]
    t_start = time.perf_counter()
    for n, d in GRID:
        if time.perf_counter() - t_start > time_budget:
            skipped.append(f"n={n:.0e}, d={d}: time budget of {time_budget:.0f} s exhausted")
            continue
        X, y = generated(n, d)
        t_pass = xw_pass_time(X, 10)
        for opt in OPTIMIZERS:
            est = DPLogisticRegression(epsilon=1.0, optimizer=capped(opt), random_state=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if n == GRID[0][0] and d == GRID[0][1]:
                    est.fit(X[:2000], y[:2000])  # compile outside the timing
                t0 = time.perf_counter()
                est.fit(X, y)
                t = time.perf_counter() - t0
            ep = epochs_of(est, n)
            rows.append({"n": n, "d": d, "optimizer": opt, "fit_s": t, "epochs": ep, "t_pass": t_pass,
                             "ratio": t / ep / t_pass})
            print(f"grid n={n} d={d} {opt}: {t:.2f}s {ep:.2f} epochs ratio {t / ep / t_pass:.1f}", flush=True)
        del X, y
    return rows, skipped


# ----------------------------------------------------------------------------- part 2b
STEP_SHAPES = [(32_561, 108), (100_000, 20), (1_000_000, 20), (200_000, 100), (1_000_000, 100)]


def step_costs(shapes=STEP_SHAPES, repeat=15):
    """One full-batch clipped gradient sum (the kernel every full-batch step runs) with one and
    two numba threads, against one ``X @ w`` plus one ``X.T @ r`` numpy pass (BLAS on one
    thread). Repetitions interleaved, minimum kept."""
    import numba
    from threadpoolctl import threadpool_limits

    from skdp._rows import make_rows
    from skdp.optimizers._glm import block_gradient_sum, gradient_workspace

    rows = []
    # two threads whatever the load (the fits themselves use them only while a core is free)
    allowed = numba.config.NUMBA_NUM_THREADS >= 2
    for n, d in shapes:
        X, y = generated(n, d)
        R = make_rows(X)
        Y = np.where(y > 0, 1.0, -1.0)[:, None]
        w = np.random.default_rng(0).standard_normal(d) * 0.1
        idx = np.arange(n)
        g = np.zeros(d)
        part = gradient_workspace(n, d)
        r = np.ones(n)
        best = {"blas": np.inf, 1: np.inf, 2: np.inf}
        old = numba.get_num_threads()
        block_gradient_sum(R, Y, w, idx, n, 0, 1.0, g, part, allowed)  # compile / load
        with threadpool_limits(limits=1):
            for _ in range(repeat):
                t0 = time.perf_counter()
                X @ w
                X.T @ r
                best["blas"] = min(best["blas"], time.perf_counter() - t0)
                for k in (1, 2) if allowed else (1,):
                    numba.set_num_threads(k)
                    t0 = time.perf_counter()
                    block_gradient_sum(R, Y, w, idx, n, 0, 1.0, g, part, True)
                    best[k] = min(best[k], time.perf_counter() - t0)
                    numba.set_num_threads(old)
        rows.append({"n": n, "d": d, "blas_s": best["blas"], "one_s": best[1], "two_s": best[2]})
        print(f"step n={n} d={d}: X@w+X.T@r {best['blas'] * 1e3:.2f} ms, 1 thread "
              f"{best[1] * 1e3:.2f} ms, 2 threads {best[2] * 1e3:.2f} ms", flush=True)
        del X, y, R
    return rows


# ----------------------------------------------------------------------------- part 3
_COLD = """
import time, json, warnings, numpy as np
t0 = time.perf_counter(); import skdp; t_import = time.perf_counter() - t0
rng = np.random.default_rng(0)
X = rng.standard_normal((2000, 20)); X /= np.linalg.norm(X, axis=1, keepdims=True)
y = (X[:, 0] > 0).astype(int)
out = {"import": t_import}
for opt in %r:
    est = skdp.DPLogisticRegression(epsilon=1.0, optimizer=opt, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter(); est.fit(X, y); first = time.perf_counter() - t0
        t0 = time.perf_counter(); est.fit(X, y); second = time.perf_counter() - t0
    out[opt] = [first, second]
print(json.dumps(out))
"""


def cold_start():
    code = _COLD % (OPTIMIZERS,)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cold = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                         check=True).stdout.strip().splitlines()[-1])
        warm = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                         check=True).stdout.strip().splitlines()[-1])
    return cold, warm


# ----------------------------------------------------------------------------- part 4
_MEM = """
import sys, time, warnings, numpy as np
sys.path.insert(0, %r)
from bench_speed import generated
from _timing import hwm, rss
import skdp
opt, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
Xs, ys = generated(2000, d, seed=1)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    skdp.DPLogisticRegression(epsilon=1.0, optimizer=opt, random_state=0).fit(Xs, ys)  # compile / load cache
X, y = generated(n, d)
try:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
except OSError:
    pass
before, peak_before = rss(), hwm()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    skdp.DPLogisticRegression(epsilon=1.0, optimizer=opt, random_state=0).fit(X, y)
print(X.nbytes, before, peak_before, hwm())
"""


def memory(n=500_000, d=100):
    rows = []
    code = _MEM % (str(HERE),)
    for opt in OPTIMIZERS:
        out = subprocess.run([sys.executable, "-c", code, opt, str(n), str(d)], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            rows.append({"optimizer": opt, "error": out.stderr.strip()[-300:]})
            continue
        nbytes, before, peak_before, peak_after = (int(v) for v in out.stdout.split())
        extra = peak_after - before
        rows.append({"optimizer": opt, "X_mb": nbytes / 2**20, "extra_mb": extra / 2**20, "extra_over_X": extra / nbytes,
                         "masked": peak_before >= peak_after})
        print(f"memory {opt}: extra {extra / 2**20:.0f} MB = {extra / nbytes:.2f} x X", flush=True)
    return {"n": n, "d": d, "rows": rows}


# ----------------------------------------------------------------------------- output
def write(adult, grid, skipped, cold, warm, mem, steps=None):
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "speed.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["part", "method", "n", "d", "fit_seconds", "epochs", "epoch_over_xw", "vs_sklearn", "accuracy",
                    "extra_memory_over_X"])
        if adult:
            for r in adult["rows"]:
                w.writerow(["adult", r["method"], adult["n"], adult["d"], r["fit_s"], r.get("epochs"),
                            r.get("epoch_ratio"), r["vs_sklearn"], r["accuracy"], ""])
        for r in grid:
            w.writerow(["grid", r["optimizer"], r["n"], r["d"], r["fit_s"], r["epochs"], r["ratio"], "", "", ""])
        if mem:
            for r in mem["rows"]:
                w.writerow(["memory", r["optimizer"], mem["n"], mem["d"], "", "", "", "", "", r.get("extra_over_X")])
        if cold:
            w.writerow(["import", "import skdp (cold cache)", "", "", cold["import"], "", "", "", "", ""])
            w.writerow(["import", "import skdp (warm cache)", "", "", warm["import"], "", "", "", "", ""])
            for opt in OPTIMIZERS:
                w.writerow(["compile", opt, "", "", cold[opt][0] - warm[opt][0], "", "", "", "", ""])

    L = ["# Speed and memory", "",
         ("Regenerate: `python benchmarks/bench_speed.py`. One run on a shared 2-core machine (other jobs running); "
         "ratios are the meaningful part. skdp: `DPLogisticRegression(epsilon=1)` with each optimizer at its "
         "defaults (C = 1, data_norm = \"auto\" (a private estimate inside the same epsilon), default delta = min(1e-5, 0.1/n)). Anchor configurations: `benchmarks/_anchors.py`."), ""]
    if adult:
        L += [f"## Fit time on UCI Adult at epsilon = 1 (n = {adult['n']}, d = {adult['d']})", "",
              (f"Minimum of 3 fits after a warm-up fit (numba compilation excluded). One numpy `X @ w` pass: "
              f"{adult['t_pass'] * 1e3:.3f} ms. An epoch is one pass over n examples, counted from the privacy record."),
              "", "| method | fit time (s) | fit / scikit-learn | epochs | epoch / `X @ w` | test accuracy |",
              "|---|---|---|---|---|---|"]
        for r in adult["rows"]:
            ep = r.get("epochs")
            ep_s = "" if ep is None or not np.isfinite(ep) else (f"{ep:.0f} lbfgs it." if "lbfgs" in r["method"] else f"{ep:.1f}")
            er = r.get("epoch_ratio")
            L.append(f"| {r['method']} | {r['fit_s']:.3f} | {r['vs_sklearn']:.2f}x | {ep_s} | "
                     f"{'' if er is None else f'{er:.0f}x'} | {r['accuracy']:.4f} |")
        for note in adult["notes"]:
            L += ["", f"**{note}**"]
        L.append("")
    if grid:
        L += ["## Epoch cost against one `X @ w` pass on generated data", "",
              ("float64, rows of unit norm, logistic labels; a capped run of each optimizer (DPGDWS/DPNAGOpt/DPMASG/"
              "DPSGLD max_iter=20, DPSCD/DPNSGDTree epochs=2); one timed fit each (noisy). Cell: epoch time / "
              "`X @ w` time."), ""]
        shapes = sorted({(r["n"], r["d"]) for r in grid})
        L.append("| optimizer | " + " | ".join(f"n={n:.0e}, d={d}" for n, d in shapes) + " |")
        L.append("|---|" + "---|" * len(shapes))
        xw = {(r["n"], r["d"]): r["t_pass"] for r in grid}
        L.append("| `X @ w` pass (ms) | " + " | ".join(f"{xw[s] * 1e3:.2f}" for s in shapes) + " |")
        for opt in OPTIMIZERS:
            cells = []
            for s in shapes:
                m = [r for r in grid if (r["n"], r["d"]) == s and r["optimizer"] == opt]
                cells.append(f"{m[0]['ratio']:.1f}x" if m else "")
            L.append(f"| {opt} | " + " | ".join(cells) + " |")
        L += [""] + [f"Skipped: {s}." for s in skipped] + [""]
    if steps:
        L += ["## One full-batch step: one core and two", "",
              ("The clipped gradient sum every full-batch step of dp_gdws, dp_nag_opt, dp_masg and dp_sgld "
              "runs (`_glm.block_gradient_sum`: fixed row blocks, one partial vector per block, partials "
              "added in block order, so the result is the same bits with any number of threads), with numba "
              "limited to one thread and to two, against one `X @ w` plus one `X.T @ r` numpy pass (BLAS on "
              "one thread). Generated data as above; minimum of 15 interleaved repetitions. The machine is "
              "shared: a second thread only helps when a second core is free."), "",
              "| n | d | `X @ w` + `X.T @ r` (ms) | 1 thread (ms) | 2 threads (ms) | 1 thread / numpy | "
              "2 threads / numpy |", "|---|---|---|---|---|---|---|"]
        for r in steps:
            two = r["two_s"]
            two_ms = "" if not np.isfinite(two) else f"{two * 1e3:.2f}"
            two_ratio = "" if not np.isfinite(two) else f"{two / r['blas_s']:.2f}x"
            L.append(f"| {r['n']} | {r['d']} | {r['blas_s'] * 1e3:.2f} | {r['one_s'] * 1e3:.2f} | {two_ms} | "
                     f"{r['one_s'] / r['blas_s']:.2f}x | {two_ratio} |")
        L.append("")
    if cold:
        L += ["## `import skdp` and numba compile time", "",
              ("Fresh process, `NUMBA_CACHE_DIR` an empty temporary directory (cold), then the same directory filled "
              "(warm). Compile time = first fit with a cold cache - first fit with a warm cache, on a 2000 x 20 "
              "problem, optimizers fitted in the order shown (kernels shared with an earlier optimizer are already "
              "compiled)."), "",
              f"`import skdp`: {cold['import']:.2f} s (cold cache), {warm['import']:.2f} s (warm cache).", "",
              "| optimizer | first fit, cold (s) | first fit, warm (s) | compile (s) | second fit (s) |",
              "|---|---|---|---|---|"]
        for opt in OPTIMIZERS:
            L.append(f"| {opt} | {cold[opt][0]:.2f} | {warm[opt][0]:.2f} | {cold[opt][0] - warm[opt][0]:.2f} | "
                     f"{warm[opt][1]:.3f} |")
        L.append("")
    if mem:
        L += [(f"## Peak memory of a fit (n = {mem['n']}, d = {mem['d']}, X = "
              f"{mem['n'] * mem['d'] * 8 / 2**20:.0f} MB)"), "",
              ("Fresh process per optimizer: peak RSS (`VmHWM`, reset through `/proc/self/clear_refs` just before the fit) "
              "minus the RSS just before the fit "
              "(kernels compiled/loaded beforehand on a small problem). Target: at most 1.0 x X."), "",
              "| optimizer | extra peak memory (MB) | extra / X |", "|---|---|---|"]
        for r in mem["rows"]:
            if "error" in r:
                L.append(f"| {r['optimizer']} | failed: {r['error']} | |")
            else:
                flag = " (fit peak below the earlier peak: upper bound)" if r["masked"] else ""
                L.append(f"| {r['optimizer']} | {r['extra_mb']:.0f} | {r['extra_over_X']:.2f}x{flag} |")
        L.append("")
    (RESULTS / "speed.md").write_text("\n".join(L))
    print("\n".join(L))


def rewrite_steps():
    """Time the steps again and rewrite speed.md from speed_raw.json with them."""
    raw = json.loads((RESULTS / "speed_raw.json").read_text())
    raw["steps"] = step_costs()
    (RESULTS / "speed_raw.json").write_text(json.dumps(raw, indent=1, default=float))
    write(raw["adult"], raw["grid"], raw["skipped"], raw["cold"], raw["warm"], raw["mem"], raw["steps"])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skip-grid", action="store_true")
    p.add_argument("--skip-anchors", action="store_true")
    p.add_argument("--skip-memory", action="store_true")
    p.add_argument("--grid-budget", type=float, default=600.0, help="seconds for the generated-data grid")
    p.add_argument("--only-steps", action="store_true", help="time the steps again, rewrite from speed_raw.json")
    args = p.parse_args(argv)
    if args.only_steps:
        return rewrite_steps()
    adult = adult_fit_times(args.skip_anchors)
    grid, skipped = ([], []) if args.skip_grid else grid_epoch_ratios(args.grid_budget)
    steps = step_costs()
    cold, warm = cold_start()
    mem = None if args.skip_memory else memory()
    (RESULTS / "speed_raw.json").write_text(json.dumps({"adult": adult, "grid": grid, "skipped": skipped, "cold": cold,
                                                            "warm": warm, "mem": mem, "steps": steps}, indent=1, default=float))
    write(adult, grid, skipped, cold, warm, mem, steps)


if __name__ == "__main__":
    main()
