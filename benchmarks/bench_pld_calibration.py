"""How long a fit with ``accountant="pld"`` takes against the same fit with ``"rdp"``.

``"pld"`` calibrates the noise of full-batch Gaussian fits (dp_gdws, dp_nag_opt, dp_masg,
dp_sgld, dp_nsgd_tree's tree) on the exact analytic Gaussian curve, and of the subsampled
dp_scd with dp-accounting's PLD. One run: DPLogisticRegression on make_classification (n 5000,
10 features), a public ``data_norm=5`` (with ``"auto"`` the fit is accounted with RDP either
way), epsilon 1 and 10, delta 1e-5, each fit timed once after a warm-up fit (numba compiled,
the calibration cache cleared before every timed fit), and the noise multiplier of each.

    python benchmarks/bench_pld_calibration.py    # writes results/pld_calibration.md
"""

import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sklearn.datasets import make_classification  # noqa: E402

from skdp import DPLogisticRegression  # noqa: E402
from skdp.privacy import compute_epsilon  # noqa: E402

OPTIMIZERS = ("dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree", "dp_scd")
EPSILONS = (1.0, 10.0)
OUT = HERE / "results" / "pld_calibration.md"


def timed_fit(X, y, optimizer, epsilon, accountant):
    compute_epsilon.cache_clear()
    est = DPLogisticRegression(optimizer=optimizer, epsilon=epsilon, accountant=accountant,
                               data_norm=5.0, random_state=0)
    start = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - start, est.noise_multiplier_, est.epsilon_


def main():
    warnings.simplefilter("ignore")
    X, y = make_classification(5000, 10, random_state=0)
    lines = ["# Fit time with accountant=\"pld\" against \"rdp\"", "",
             "`benchmarks/bench_pld_calibration.py` (its docstring: the set-up). One run.", "",
             "| optimizer | epsilon | rdp s | pld s | pld / rdp | noise rdp | noise pld | "
             "pld / rdp noise |", "|---|---|---|---|---|---|---|---|"]
    for optimizer in OPTIMIZERS:
        timed_fit(X, y, optimizer, 1.0, "rdp")  # warm-up: numba compiles
        for epsilon in EPSILONS:
            t_r, z_r, _ = timed_fit(X, y, optimizer, epsilon, "rdp")
            t_p, z_p, e_p = timed_fit(X, y, optimizer, epsilon, "pld")
            assert e_p <= epsilon
            lines.append(f"| {optimizer} | {epsilon:g} | {t_r:.2f} | {t_p:.2f} | "
                         f"{t_p / t_r:.2f}x | {z_r:.4g} | {z_p:.4g} | {z_p / z_r:.3f} |")
            print(lines[-1], flush=True)
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
