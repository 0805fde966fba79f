"""Privacy audit of every available optimizer: empirical epsilon lower bound vs the claim.

For each optimizer, each of its privacy regimes (full batch / Poisson mini-batch / Laplace, found
from its parameters) and each target epsilon in {0.5, 1, 2, 4} (delta = 1e-5), the optimizer is
fitted ``--fits`` times on D and ``--fits`` times on D' at the optimizer level (no estimator
overhead), where D holds the worst-case canary of :func:`skdp.audit.canary_problem` (squared loss,
its own feature column, norm R, a target that saturates the clipped derivative at every step)
and D' replaces it by the null record. Columns:

* ``lower_bound``: the Clopper-Pearson lower bound at 95% confidence, threshold chosen on half of
  the fits and evaluated on the other half (a valid bound: it must never exceed ``claimed``);
* ``lower_bound_best``: the best threshold on all fits (the practice of Jagielski et al. 2020,
  optimistic);
* ``oracle``: what the same procedure certifies, with the same number of fits, for a mechanism
  that is *exactly* as private as the claim (a Gaussian shift with the claimed (epsilon, delta), or
  the Laplace shift for pure claims; median of 25 simulated audits): what an audit of this size
  can show when the accounting is tight;
* ``gaussian_estimate``: epsilon of a Gaussian shift fitted to the scores (an estimate, not a
  bound; near the claim when the accounting is tight and the statistic is a Gaussian shift).

Run ``python benchmarks/bench_audit.py`` (``--fits 500``: 72 audits in about 160 s on a shared
two-core machine; ``--quick`` for a smoke run). Writes ``benchmarks/results/audit.csv``, ``audit.md``
and ``audit_table.rst``; ``--update-docs`` also replaces the table in ``docs/audit.rst``.
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
from skdp.audit._variants import optimizer_variants
from skdp.losses import get_loss
from skdp.optimizers import Budget, Problem, available_optimizers, get_optimizer_class

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DOCS = HERE.parent / "docs" / "audit.rst"
EPSILONS = (0.5, 1.0, 2.0, 4.0)
DELTA = 1e-5
BEGIN, END = ".. begin audit table", ".. end audit table"


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=500, help="fits on each of D and D'")
    parser.add_argument("--optimizers", nargs="*", default=None)
    parser.add_argument("--quick", action="store_true", help="100 fits per side")
    parser.add_argument("--update-docs", action="store_true",
                        help="replace the table between the markers in docs/audit.rst")
    args = parser.parse_args(argv)
    n_fits = 100 if args.quick else args.fits
    names = args.optimizers or available_optimizers()
    t0 = time.perf_counter()
    rows = run(n_fits, names)
    seconds = time.perf_counter() - t0
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "audit.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (RESULTS / "audit.md").write_text(markdown(rows, n_fits, seconds))
    table = rst_table(rows, n_fits)
    (RESULTS / "audit_table.rst").write_text(table)
    if args.update_docs and DOCS.is_file():
        text = DOCS.read_text()
        if BEGIN in text and END in text:
            pre, rest = text.split(BEGIN, 1)
            _, post = rest.split(END, 1)
            DOCS.write_text(f"{pre}{BEGIN}\n\n{table}\n{END}{post}")
    n_viol = sum(r["violation"] for r in rows)
    print(f"{len(rows)} audits, {n_viol} violations, {seconds:.0f} s; results in {RESULTS}")
    return 1 if n_viol else 0


if __name__ == "__main__":
    sys.exit(main())
