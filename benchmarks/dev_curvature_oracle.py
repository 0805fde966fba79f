"""Issue 15, session 54: what would a private curvature estimate give the accelerated methods?

dp_nag_opt and dp_masg take the step ``c / L`` with L from the public bound:
``Problem.step_smoothness`` is ``curvature * max(typical^2, 0.8 R^2) + lam``, stable for any
data. The true smoothness of the objective is ``curvature * lambda_max(X' S X / n) + lam``, and
it is smaller: on the grid's designs (unit rows and the intercept column) lambda_max is about 1,
the intercept's direction, against the bound's R^2 = 2 (public bounds) or 0.8 R^2 = 1.16 against
0.45 (``data_norm="auto"``). Closing notes since session 51 listed a private estimate of
lambda_max (sensitivity R^2 / n under the zero-out relation) as a lever for these methods.

This script bounds what it could give before anything is built: it runs both methods with the
rule's L and with the *exact* lambda_max of the clipped design (an oracle, non-private, free),
the only change, on DPRidge in every looked-at regression cell with s >= 10 (where a default
runs an accelerated method: from s = 10 the fallback, from s = 300 ``optimizer="auto"``), at
the grid's public bounds and at every default (``data_norm="auto"``), seeds 0 and 1, the same
subsample and ``random_state`` for both. A private estimate would do worse than the oracle: it
spends part of the budget and needs a margin above its noise.

Not a rule sweep (no decision rule, no held-out judge): if the oracle gains little, the lever
is closed. The result (``results/dev_curvature_oracle.md``) closed it.

    python benchmarks/dev_curvature_oracle.py sweep    # two shards in two processes
    python benchmarks/dev_curvature_oracle.py report
"""

import contextlib
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from unittest import mock

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from dev_rules_ridge_masg import looked_at_sets  # noqa: E402
from dev_rules_ridge_momentum import read, write_grid  # noqa: E402

from skdp.optimizers._base import Problem  # noqa: E402

OPTIMIZERS = ("dp_masg", "dp_nag_opt")
SETTINGS = {"public": 1.0, "default": "auto"}  # data_norm
MIN_SNR = 10.0
SEEDS = range(2)
BANDS = ((10, 30), (30, 100), (100, 300), (300, np.inf))
OUT = HERE / "results" / "dev_curvature_oracle.csv"


def exact_smoothness(problem):
    """``curvature * lambda_max(X' S X / n) + lam`` of the problem's clipped design (reads the
    data: an oracle for this benchmark only)."""
    from skdp._rows import design_array

    rows = problem.rows
    X = design_array(rows)  # the clipped rows and the intercept column, written out
    if not isinstance(X, np.ndarray):  # sparse: the CSR design itself
        X = problem.X.toarray()
    weight = np.broadcast_to(np.asarray(rows.weight, dtype=float), (X.shape[0],))
    lam_max = np.linalg.eigvalsh((X.T * weight) @ X / X.shape[0])[-1]
    return problem.loss.curvature * lam_max + problem.lam


@contextlib.contextmanager
def oracle_step(on):
    """``Problem.step_smoothness`` from :func:`exact_smoothness` while ``on``."""
    if not on:
        yield
        return
    with mock.patch.object(Problem, "step_smoothness", property(exact_smoothness)):
        yield


def fit_r2(optimizer, X, y, X_te, y_te, eps, seed, data_norm, oracle):
    from sklearn.metrics import r2_score

    from skdp import DPRidge

    with warnings.catch_warnings(), oracle_step(oracle):
        warnings.simplefilter("ignore")
        model = DPRidge(epsilon=eps, delta=bd.DELTA, optimizer=optimizer, data_norm=data_norm,
                        random_state=seed).fit(X, y)
    return float(r2_score(y_te, model.predict(X_te)))


def _shard(args):
    names, out = args

    def fit_rows(name, n, eps, s, seed, task, X, y, X_te, y_te):
        if s < MIN_SNR or seed not in SEEDS:
            return
        for setting, data_norm in SETTINGS.items():
            for opt in OPTIMIZERS:
                for variant in ("rule", "oracle"):
                    yield opt, f"{setting}/{variant}", fit_r2(
                        opt, X, y, X_te, y_te, eps, seed, data_norm, variant == "oracle")

    write_grid(names, out, SEEDS, fit_rows)


def sweep():
    names = looked_at_sets(())
    jobs = [(names[k::2], OUT.with_name(f"{OUT.stem}_{k}of2.csv")) for k in range(2)]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_shard, jobs))


def cell_gains():
    """``{(setting, optimizer): [(dataset, n, eps, s, mean gain over the seeds)]}``."""
    scores = {}
    for r in read(sorted(OUT.parent.glob(f"{OUT.stem}_[0-9]of2.csv"))):
        setting, variant = r["variant"].split("/")
        key = (setting, r["optimizer"], r["dataset"], r["n"], r["eps"], r["s"])
        scores.setdefault(key, {}).setdefault(variant, {})[r["seed"]] = r["score"]
    out = {}
    for (setting, opt, *cell), by in scores.items():
        gain = np.mean([by["oracle"][k] - by["rule"][k] for k in by["rule"]])
        out.setdefault((setting, opt), []).append((*cell, float(gain)))
    return out


def report():
    gains = cell_gains()
    lines = ["# The accelerated methods with the exact curvature (session 54)", "",
             "`benchmarks/dev_curvature_oracle.py` (its docstring). Gain in test R^2 of the "
             "oracle step (the exact lambda_max of the clipped design) over the rule's, DPRidge, "
             f"the looked-at regression cells with s >= {MIN_SNR:g}, seeds 0 and 1 (cells: means "
             "over the seeds).", "",
             "| setting | optimizer | cells | mean | median | worst | best | "
             + " | ".join(f"s {lo:g}-{hi:g}" for lo, hi in BANDS) + " |",
             "|---|---|---|---|---|---|---|" + "---|" * len(BANDS)]
    for (setting, opt), cells in sorted(gains.items()):
        g = np.array([c[-1] for c in cells])
        s = np.array([c[3] for c in cells])
        bands = [g[(s >= lo) & (s < hi)] for lo, hi in BANDS]
        lines.append(f"| {setting} | {opt} | {len(g)} | {g.mean():+.4f} | {np.median(g):+.4f} | "
                     f"{g.min():+.3f} | {g.max():+.3f} | "
                     + " | ".join(f"{b.mean():+.4f} ({len(b)})" for b in bands) + " |")
    names = sorted({c[0] for cells in gains.values() for c in cells})
    keys = sorted(gains)
    lines += ["", "Mean gain per data set:", "",
              "| data | " + " | ".join(f"{s} {o}" for s, o in keys) + " |",
              "|---|" + "---|" * len(keys)]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(
            f"{np.mean([c[-1] for c in gains[k] if c[0] == name]):+.4f}" for k in keys) + " |")
    out = OUT.with_suffix(".md")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "report"
    {"sweep": sweep, "report": report}[command]()
