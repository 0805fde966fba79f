"""Development sweep for dp_scd's update clip at small n (session 12; development data only).

``auto_update_clip`` sets the clip to ``g * natural`` with ``g = min(CLIP_MAX, n sqrt(2 rho) /
CLIP_SNR)``, fitted on n 1000..5000 at epsilon <= 1 (``dev_rules_h17.py``). At n = 500 it
made dp_scd flat in epsilon (digits: 0.800 at epsilon 1, 0.803 at 3): the noise on the shared
vector V is ``z * clip * R`` per step and never decays, and g grew faster in epsilon than the
multiplier z fell. This sweep fixes g in {1/16, 1/8, 1/4, 1/2, 1, 2, 3} (1 is the natural size of one dual
step) on Adult, breast cancer and digits, n 500..10000, epsilon 0.1..3, 3 seeds, for the
logistic loss and the squared hinge, and writes every score with the cell's public
signal-to-noise ratio ``s = snr(n, p, rho)``.

``python benchmarks/dev_rules_scd_clip.py logistic|svc [data_norm]`` ->
results/dev_rules_scd_clip_<est>[_norm<data_norm>].csv. The grid's public bound is
``data_norm=1``; users run ``data_norm="auto"``, about 1.5 on these unit rows, and the natural
step ``Lam / (Lam + L R^2)`` shrinks with the bound while the rows do not, so the sweep runs at
1.5 too and the rule is chosen on both.
``python benchmarks/dev_rules_scd_clip.py report`` summarises both. The held-out part of the grid
(make_classification, California, ...) is never loaded here.
"""

import csv
import math
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from skdp.optimizers import dp_scd  # noqa: E402
from skdp.optimizers._defaults import budget_rho, snr  # noqa: E402

FACTORS = {"logistic": (1 / 16, 1 / 8, 0.25, 0.5, 1.0, 2.0, 3.0), "svc": (1 / 16, 1 / 8, 0.25, 0.5, 1.0, 2.0)}
FAMILY = {"logistic": "logistic", "svc": "squared_hinge"}
DATASETS = ("adult", "breast_cancer", "digits")
N_GRID = (500, 1000, 2000, 5000, 10000)
SEEDS = 3


def sweep(est, data_norm=1.0):
    family = FAMILY[est]
    tag = "" if data_norm == 1.0 else f"_norm{data_norm:g}"
    out = HERE / "results" / f"dev_rules_scd_clip_{est}{tag}.csv"
    rule = (dp_scd.CLIP_MAX[family], dp_scd.CLIP_SNR[family], dp_scd.CLIP_EXPONENT[family])
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "n", "eps", "seed", "s", "g", "rule_g", "score"])
        for name in DATASETS:
            for n in bd.sizes(name, N_GRID):
                for seed in range(SEEDS):
                    _, X_tr, y_tr, X_te, y_te = bd.subsample(name, n, seed)
                    p = X_tr.shape[1] + 1
                    for eps in bd.EPS_GRID:
                        z = dp_scd._gaussian_multiplier(eps, bd.DELTA)
                        rule_g = min(rule[0], ((n / z) / rule[1]) ** rule[2])
                        s = snr(n, p, budget_rho(eps, bd.DELTA))
                        for g in FACTORS[est]:
                            dp_scd.CLIP_MAX[family], dp_scd.CLIP_SNR[family] = g, 1e-300
                            dp_scd.CLIP_EXPONENT[family] = 1.0
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                score = bd.skdp_fit(est, "dp_scd", X_tr, y_tr, X_te, y_te, eps, seed,
                                                    data_norm)[0]
                            w.writerow([name, n, eps, seed, f"{s:.3f}", g, f"{rule_g:.3f}", f"{score:.5f}"])
                            fh.flush()
                    print(name, n, seed, flush=True)
    dp_scd.CLIP_MAX[family], dp_scd.CLIP_SNR[family], dp_scd.CLIP_EXPONENT[family] = rule


if __name__ == "__main__":
    sweep(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
