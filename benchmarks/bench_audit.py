"""Privacy audit of every available optimizer and of every non-default path: bounds vs claims.

Two tables.

**Regimes** (``run``): for each optimizer, each of its privacy regimes (full batch / Poisson
mini-batch / Laplace, found from its parameters) and each target epsilon in {0.5, 1, 2, 4}
(delta = 1e-5), the optimizer is fitted ``--fits`` times on D and ``--fits`` times on D' at the
optimizer level (no estimator overhead), where D holds the worst-case canary of
:func:`skdp.audit.canary_problem` (squared loss, its own feature column, norm R, a target that
saturates the clipped derivative at every step) and D' replaces it by the null record.

**Non-default paths** (``run_paths``): every path of :mod:`skdp.audit._paths` (Poisson batches,
Laplace, the optimizers' accountant options, the PLD accountant, every loss, multiclass, sparse
input, secure_mode; optimizer and estimator level), audited at (epsilon, delta) = (2, 0.2) (pure
epsilon = 2 for Laplace) with ``--path-fits`` fits per side, once on the real code and once with
the noise scaled by the path's factor (:func:`skdp.audit.noise_scaled`, 0.5 unless the path says
why not): the first bound must stay below the claim, the second must exceed it (the audit is
strong enough to catch that error).

Columns:

* ``lower_bound``: the Clopper-Pearson lower bound at 95% confidence, threshold chosen on half of
  the fits and evaluated on the other half (a valid bound: it must never exceed ``claimed``);
* ``lower_bound_best``: the best threshold on all fits (the practice of Jagielski et al. 2020,
  optimistic);
* ``oracle``: what the same procedure certifies, with the same number of fits, for a mechanism
  that is *exactly* as private as the claim (a Gaussian shift with the claimed (epsilon, delta), or
  the Laplace shift for pure claims; median of 25 simulated audits): what an audit of this size
  can show when the accounting is tight;
* ``gaussian_estimate``: epsilon of a Gaussian shift fitted to the scores (an estimate, not a
  bound; near the claim when the accounting is tight and the statistic is a Gaussian shift);
* ``fault_factor``, ``fault_bound``, ``caught`` (paths only): the bound with the noise scaled by
  the factor, and whether it exceeds the claim.

Run ``python benchmarks/bench_audit.py`` (``--fits 500``: 72 audits in about 160 s on a shared
two-core machine; ``--path-fits 1000``: 75 paths, real and faulty, in about 25 minutes;
``--quick`` for a smoke run; ``--skip-regimes`` / ``--skip-paths`` reuse the other table's CSV).
Writes ``benchmarks/results/audit.csv``, ``audit_paths.csv``, ``audit.md`` and
``audit_table.rst``; ``--update-docs`` also replaces the tables in ``docs/audit.rst``.
"""

import argparse
import csv
import math
from pathlib import Path
import platform
import sys
import time

import numpy as np

from skdp.audit import audit_optimizer, canary_problem, epsilon_lower_bound, gaussian_mu
from skdp.audit._paths import OptimizerPath, estimator_paths, optimizer_paths, path_seeds, run_path
from skdp.audit._variants import optimizer_variants
from skdp.losses import get_loss
from skdp.optimizers import Budget, Problem, available_optimizers, get_optimizer_class

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DOCS = HERE.parent / "docs" / "audit.rst"
EPSILONS = (0.5, 1.0, 2.0, 4.0)
DELTA = 1e-5
BEGIN, END = ".. begin audit table", ".. end audit table"
PATHS_BEGIN, PATHS_END = ".. begin paths table", ".. end paths table"


def base_problem(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = np.hstack([X, np.ones((n, 1))])
    Y = rng.uniform(-1, 1, size=(n, 1))
    loss = get_loss("squared")
    return Problem(X=np.ascontiguousarray(X), Y=Y, loss=loss, lam=1.0 / n,
                   row_norm_bound=math.sqrt(2.0), clip=loss.default_clip(1, 1.0),
                   fit_intercept=True)


def oracle_bound(claimed, delta, n_fits, rng, reps=25):
    """Median over ``reps`` simulated audits of the split bound on a mechanism exactly as private
    as the claim, with the same number of fits."""
    out = []
    for _ in range(reps):
        if delta > 0:
            mu = gaussian_mu(claimed, delta)
            a, b = rng.normal(mu, 1.0, n_fits), rng.normal(0.0, 1.0, n_fits)
        else:  # pure claim: the Laplace mechanism on a unit shift with scale 1 / epsilon
            a = 1.0 + rng.laplace(0.0, 1.0 / claimed, n_fits)
            b = rng.laplace(0.0, 1.0 / claimed, n_fits)
        out.append(epsilon_lower_bound(a, b, delta=delta).epsilon)
    return float(np.median(out))


def run(n_fits, names):
    c = canary_problem(base_problem())
    rows = []
    rng = np.random.default_rng(12345)
    for name in names:
        cls = get_optimizer_class(name)
        for label, params in optimizer_variants(name):
            for k, eps in enumerate(EPSILONS):
                t0 = time.perf_counter()
                try:
                    # independent seeds per row, so that the rows' errors are not correlated
                    res = audit_optimizer(cls(**params), c.problem, Budget(eps, DELTA), c.index,
                                          n_fits=n_fits, random_state=[7, k])
                except ValueError as exc:
                    print(f"  {name} {label}: skipped ({exc})", flush=True)
                    break
                best = epsilon_lower_bound(res.in_scores, res.out_scores,
                                           delta=res.claimed_delta, method="best").epsilon
                row = {
                    "optimizer": name,
                    "regime": label,
                    "target_epsilon": eps,
                    "claimed_epsilon": res.claimed_epsilon,
                    "claimed_delta": res.claimed_delta,
                    "lower_bound": res.epsilon_lower_bound,
                    "lower_bound_best": best,
                    "oracle": oracle_bound(res.claimed_epsilon, res.claimed_delta, n_fits, rng),
                    "gaussian_estimate": res.gaussian_estimate,
                    "violation": res.violated,
                    "fits": res.n_fits,
                    "seconds": time.perf_counter() - t0,
                }
                rows.append(row)
                print(f"  {name:13s} {label:18s} eps {eps:4.1f}: bound {row['lower_bound']:.3f} "
                      f"(best {best:.3f}, oracle {row['oracle']:.3f}, estimate "
                      f"{row['gaussian_estimate']:.3f}) vs claim {row['claimed_epsilon']:.3f} "
                      f"[{row['seconds']:.1f} s]", flush=True)
    return rows


def run_paths(n_fits=None, only=None):
    """Every non-default path: the real code, then the noise scaled by the path's factor.

    ``n_fits`` None: each path's own number of fits (what ``tests/test_audit_paths.py`` runs,
    with the same seeds)."""
    rows = []
    rng = np.random.default_rng(54321)
    paths = optimizer_paths() + estimator_paths()
    for path in paths:
        if only and not any(word in path.label for word in only):
            continue
        level = "optimizer" if isinstance(path, OptimizerPath) else "estimator"
        fits = n_fits or path.fits
        t0 = time.perf_counter()
        real_seed, fault_seed = path_seeds(path)  # independent per row and per run
        res = run_path(path, fits, random_state=real_seed)
        fault = run_path(path, fits, random_state=fault_seed, factor=path.factor)
        best = epsilon_lower_bound(res.in_scores, res.out_scores, delta=res.claimed_delta,
                                   method="best").epsilon
        row = {
            "group": path.group,
            "path": path.label,
            "level": level,
            "claimed_epsilon": res.claimed_epsilon,
            "claimed_delta": res.claimed_delta,
            "lower_bound": res.epsilon_lower_bound,
            "lower_bound_best": best,
            "oracle": oracle_bound(res.claimed_epsilon, res.claimed_delta, fits, rng),
            "gaussian_estimate": res.gaussian_estimate,
            "violation": res.violated,
            "fault_factor": path.factor,
            "fault_bound": fault.epsilon_lower_bound,
            "fault_claim": fault.claimed_epsilon,
            "caught": fault.violated,
            "fits": res.n_fits,
            "seconds": time.perf_counter() - t0,
        }
        rows.append(row)
        print(f"  {path.label:42s} claim {row['claimed_epsilon']:.2f}: bound {row['lower_bound']:.2f}"
              f" (estimate {row['gaussian_estimate']:.2f}); noise x{path.factor}: bound "
              f"{row['fault_bound']:.2f} {'caught' if row['caught'] else 'NOT CAUGHT'}"
              f"{'  ** VIOLATION **' if row['violation'] else ''} [{row['seconds']:.1f} s]",
              flush=True)
    return rows


def _fmt(v):
    return "n/a" if isinstance(v, float) and math.isnan(v) else f"{v:.2f}"


def markdown(rows, n_fits, seconds):
    head = ("| optimizer | regime | claimed eps (delta) | lower bound (95%) | best-threshold bound "
            "| oracle bound | Gaussian estimate | violation |\n|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {r['optimizer']} | {r['regime']} | {r['claimed_epsilon']:.2f} ({r['claimed_delta']:.0e}) "
        f"| {_fmt(r['lower_bound'])} | {_fmt(r['lower_bound_best'])} | {_fmt(r['oracle'])} "
        f"| {_fmt(r['gaussian_estimate'])} | {'**YES**' if r['violation'] else 'no'} |\n"
        for r in rows
    )
    foot = (f"\n{n_fits} fits on D and {n_fits} on D' per row; total {seconds:.0f} s on "
            f"{platform.processor() or platform.machine()}, Python {sys.version.split()[0]}.\n")
    return head + body + foot


def rst_table(rows, n_fits):
    lines = [
        ".. list-table:: Empirical epsilon lower bounds vs claims "
        f"({n_fits} + {n_fits} fits per row, delta = 1e-5 unless pure)",
        "   :header-rows: 1",
        "",
        "   * - optimizer",
        "     - regime",
        "     - claimed epsilon",
        "     - lower bound (95%)",
        "     - best-threshold bound",
        "     - oracle bound",
        "     - Gaussian estimate",
    ]
    for r in rows:
        claim = f"{r['claimed_epsilon']:.2f}" + (" (pure)" if r["claimed_delta"] == 0 else "")
        lines += [
            f"   * - {r['optimizer']}",
            f"     - {r['regime']}",
            f"     - {claim}",
            f"     - {_fmt(r['lower_bound'])}" + (" **violation**" if r["violation"] else ""),
            f"     - {_fmt(r['lower_bound_best'])}",
            f"     - {_fmt(r['oracle'])}",
            f"     - {_fmt(r['gaussian_estimate'])}",
        ]
    return "\n".join(lines) + "\n"


def paths_markdown(rows, n_fits, seconds):
    head = ("| option | path | level | claimed eps (delta) | lower bound (95%) | oracle bound "
            "| Gaussian estimate | noise factor | bound with that noise | caught |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {r['group']} | {r['path']} | {r['level']} | {float(r['claimed_epsilon']):.2f} "
        f"({float(r['claimed_delta']):.0e}) | {_fmt(float(r['lower_bound']))}"
        f"{' **VIOLATION**' if _true(r['violation']) else ''} | {_fmt(float(r['oracle']))} "
        f"| {_fmt(float(r['gaussian_estimate']))} | {float(r['fault_factor']):g} "
        f"| {_fmt(float(r['fault_bound']))} | {'yes' if _true(r['caught']) else '**no**'} |\n"
        for r in rows
    )
    foot = (f"\n{n_fits} fits on D and as many on D' per run (two runs per row); total "
            f"{seconds:.0f} s on {platform.processor() or platform.machine()}, Python "
            f"{sys.version.split()[0]}.\n")
    return head + body + foot


def _fits_label(rows):
    """"1000" or "1000 or 2000": the fits per side of the paths' runs."""
    sizes = sorted({int(r["fits"]) // 2 for r in rows})
    return " or ".join(str(k) for k in sizes)


def _true(v):
    return v is True or v == "True"


def paths_rst_table(rows, n_fits):
    lines = [
        ".. list-table:: Non-default paths: bounds on the real code, and with scaled noise "
        f"({n_fits} fits on each of D and D' per run, epsilon = 2, delta = 0.2 unless pure)",
        "   :header-rows: 1",
        "",
        "   * - option",
        "     - path",
        "     - claimed epsilon",
        "     - lower bound (95%)",
        "     - oracle bound",
        "     - Gaussian estimate",
        "     - noise x",
        "     - bound with that noise",
    ]
    for r in rows:
        claim = f"{float(r['claimed_epsilon']):.2f}" + (
            " (pure)" if float(r["claimed_delta"]) == 0 else "")
        lines += [
            f"   * - {r['group']}",
            f"     - {r['path']} ({r['level']}, {int(r['fits']) // 2} fits)",
            f"     - {claim}",
            f"     - {_fmt(float(r['lower_bound']))}"
            + (" **violation**" if _true(r["violation"]) else ""),
            f"     - {_fmt(float(r['oracle']))}",
            f"     - {_fmt(float(r['gaussian_estimate']))}",
            f"     - {float(r['fault_factor']):g}",
            f"     - {_fmt(float(r['fault_bound']))}"
            + (" (caught)" if _true(r["caught"]) else " (**not caught**)"),
        ]
    return "\n".join(lines) + "\n"


def _read_csv(path):
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _replace_between(text, begin, end, table):
    if begin not in text or end not in text:
        return text
    pre, rest = text.split(begin, 1)
    _, post = rest.split(end, 1)
    return f"{pre}{begin}\n\n{table}\n{end}{post}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=500,
                        help="fits on each of D and D' (regimes table)")
    parser.add_argument("--path-fits", type=int, default=None,
                        help="fits on each of D and D' per run (paths table; default: each "
                             "path's own, 1000 or 2000)")
    parser.add_argument("--optimizers", nargs="*", default=None)
    parser.add_argument("--paths", nargs="*", default=None,
                        help="only the paths whose label contains one of these words")
    parser.add_argument("--skip-regimes", action="store_true",
                        help="reuse results/audit.csv for the regimes table")
    parser.add_argument("--skip-paths", action="store_true",
                        help="reuse results/audit_paths.csv for the paths table")
    parser.add_argument("--quick", action="store_true", help="100 fits per side")
    parser.add_argument("--update-docs", action="store_true",
                        help="replace the tables between the markers in docs/audit.rst")
    args = parser.parse_args(argv)
    n_fits = 100 if args.quick else args.fits
    path_fits = 100 if args.quick else args.path_fits
    RESULTS.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    if args.skip_regimes:
        rows = [{**r, "claimed_epsilon": float(r["claimed_epsilon"]),
                 "claimed_delta": float(r["claimed_delta"]),
                 **{k: float(r[k]) for k in ("lower_bound", "lower_bound_best", "oracle",
                                             "gaussian_estimate")},
                 "violation": _true(r["violation"]), "fits": int(r["fits"])}
                for r in _read_csv(RESULTS / "audit.csv")]
        n_fits = rows[0]["fits"] // 2 if rows else n_fits
        seconds = sum(float(r["seconds"]) for r in rows)  # the run that wrote the rows
    else:
        rows = run(n_fits, args.optimizers or available_optimizers())
        _write_csv(RESULTS / "audit.csv", rows)
        seconds = time.perf_counter() - t0
    if args.skip_paths:
        path_rows = _read_csv(RESULTS / "audit_paths.csv")
        path_seconds = sum(float(r["seconds"]) for r in path_rows)
    else:
        path_rows = run_paths(path_fits, args.paths)
        if args.paths:  # a partial run: the other rows come from the previous one
            fresh = {r["path"]: r for r in path_rows}
            order = [p.label for p in optimizer_paths() + estimator_paths()]
            old = {r["path"]: r for r in _read_csv(RESULTS / "audit_paths.csv")}
            merged = {**old, **fresh}
            path_rows = [merged[label] for label in order if label in merged]
        if path_rows:
            _write_csv(RESULTS / "audit_paths.csv", path_rows)
        path_seconds = sum(float(r["seconds"]) for r in path_rows)  # merged rows included
    md = markdown(rows, n_fits, seconds)
    if path_rows:
        md += "\n## Non-default paths\n\n" + paths_markdown(path_rows, _fits_label(path_rows),
                                                          path_seconds)
    (RESULTS / "audit.md").write_text(md)
    table = rst_table(rows, n_fits)
    fits_label = _fits_label(path_rows)
    paths_table = paths_rst_table(path_rows, fits_label) if path_rows else ""
    (RESULTS / "audit_table.rst").write_text(table + ("\n" + paths_table if paths_table else ""))
    if args.update_docs and DOCS.is_file():
        text = _replace_between(DOCS.read_text(), BEGIN, END, table)
        if paths_table:
            text = _replace_between(text, PATHS_BEGIN, PATHS_END, paths_table)
        DOCS.write_text(text)
    n_viol = sum(r["violation"] for r in rows) + sum(_true(r["violation"]) for r in path_rows)
    missed = [r["path"] for r in path_rows if not _true(r["caught"])]
    print(f"{len(rows)} + {len(path_rows)} audits, {n_viol} violations, {len(missed)} faults not "
          f"caught {missed}; {time.perf_counter() - t0:.0f} s; results in {RESULTS}")
    return 1 if n_viol or missed else 0


if __name__ == "__main__":
    sys.exit(main())
