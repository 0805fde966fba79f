"""Development sweep: DPLinearSVC's step length for dp_gdws and dp_sgld (session 12).

The squared hinge's default derivative clip is its size at W = 0 (2 sqrt(K)), so unlike the
logistic loss's it cannot be lowered without bias (tried in session 11 and reverted). What is
left to set is how far the noisy descent travels: dp_gdws's noise-adaptive step (times a
multiplier m) and dp_sgld's Langevin time ``CLASSIFICATION_FACTOR s / (G R)`` (times m). The
factors were fitted with the logistic loss; this sweep asks whether the squared hinge wants
other ones. m in {1/4, 1/2, 1, 2, 4}; Adult, breast cancer, digits, n 426..10000, epsilon
0.1..3, 3 seeds; at the grid's public ``data_norm=1`` and at 1.5 (what ``"auto"`` gives on these
unit rows). Writes results/dev_rules_svc_steps[_norm1.5].csv. The held-out part of the grid is
never loaded here.

``python benchmarks/dev_rules_svc_steps.py [data_norm]``
"""

import csv
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from skdp.optimizers import _defaults  # noqa: E402
from skdp.optimizers.dp_gdws import DPGDWS  # noqa: E402
from skdp.optimizers._defaults import budget_rho, snr  # noqa: E402

MULTIPLIERS = (0.25, 0.5, 1.0, 2.0, 4.0)
DATASETS = ("adult", "breast_cancer", "digits")
N_GRID = (500, 1000, 2000, 5000, 10000)
SEEDS = 3


def sweep(data_norm=1.0):
    tag = "" if data_norm == 1.0 else f"_norm{data_norm:g}"
    out = HERE / "results" / f"dev_rules_svc_steps{tag}.csv"
    step, factor = DPGDWS._step_size, _defaults.CLASSIFICATION_FACTOR
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "seed", "s", "optimizer", "m", "score"])
        for name in DATASETS:
            for n in bd.sizes(name, N_GRID):
                for seed in range(SEEDS):
                    _, X_tr, y_tr, X_te, y_te = bd.subsample(name, n, seed)
                    p = X_tr.shape[1] + 1
                    for eps in bd.EPS_GRID:
                        s = snr(n, p, budget_rho(eps, bd.DELTA))
                        for m in MULTIPLIERS:
                            DPGDWS._step_size = lambda self, *a, m=m: m * step(self, *a)
                            _defaults.CLASSIFICATION_FACTOR = factor * m
                            for opt in ("dp_gdws", "dp_sgld"):
                                with warnings.catch_warnings():
                                    warnings.simplefilter("ignore")
                                    score = bd.skdp_fit("svc", opt, X_tr, y_tr, X_te, y_te, eps,
                                                        seed, data_norm)[0]
                                w.writerow([name, n, eps, seed, f"{s:.3f}", opt, m, f"{score:.5f}"])
                        fh.flush()
                    print(name, n, seed, flush=True)
    DPGDWS._step_size, _defaults.CLASSIFICATION_FACTOR = step, factor


if __name__ == "__main__":
    sweep(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
