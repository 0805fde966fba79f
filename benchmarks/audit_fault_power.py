"""The power of the path audits' fault checks over seeds: each path's faulty audit (noise scaled
by a factor, :func:`skdp.audit.noise_scaled`) rerun at several seeds, to tell a fault check that
catches its fault from one that passes by the luck of its fixed seed.

``bench_audit.py`` and ``tests/test_audit_paths.py`` run each path's fault at one fixed seed
(:func:`skdp.audit._paths.path_seeds`): deterministic, but a change that moves the random
draws (a new grid, another sampler) redraws that check, so its power over seeds is what
decides whether it holds. Session 44 chose the paths' fits and factors from this measurement
(``results/audit_fault_power.md``); rerun a path here before changing its fits or factor::

    python benchmarks/audit_fault_power.py "dp_nsgd_tree tree=aligned@2000@0.4"
    python benchmarks/audit_fault_power.py "DPLogisticRegression CSR@1000@p"   # its own factor

Each argument is ``label@fits@factor`` (``p``: the path's own factor); the seeds are the
path's fault seed and four others, with the path's label key.
"""
import sys
import time
import warnings

from skdp.audit._paths import estimator_paths, optimizer_paths, path_seeds, run_path

SEEDS = (13, 21, 22, 23, 24)  # 13: the fault seed of path_seeds


def fault_bounds(label, n_fits, factor):
    """The faulty audit's lower bounds of ``label`` at :data:`SEEDS`, and its claim."""
    path = next(p for p in optimizer_paths() + estimator_paths() if p.label == label)
    _, (_, key) = path_seeds(path)
    factor = path.factor if factor == "p" else float(factor)
    results = [run_path(path, n_fits, random_state=[seed, key], factor=factor)
               for seed in SEEDS]
    return [r.epsilon_lower_bound for r in results], results[0].claimed_epsilon, factor


def main(argv):
    warnings.simplefilter("ignore")
    for spec in argv:
        label, n_fits, factor = spec.rsplit("@", 2)
        t0 = time.perf_counter()
        bounds, claim, factor = fault_bounds(label, int(n_fits), factor)
        caught = sum(b > claim for b in bounds)
        print(f"{label}: {n_fits} + {n_fits} fits, noise x{factor}, claim {claim:.2f}: "
              f"{' '.join(f'{b:.2f}' for b in bounds)} ({caught}/{len(bounds)} caught, "
              f"{time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
