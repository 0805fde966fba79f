"""dp_gdws on UCI Adult: fit time against scikit-learn and epoch cost against one X @ w pass.

Run: ``python benchmarks/bench_dp_gdws.py``. Writes ``benchmarks/results/dp_gdws.md``.
Numba compile time is measured in a fresh process with an empty cache, reported separately.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_time, xw_pass_time  # noqa: E402

from skdp import DPGDWS, DPLogisticRegression  # noqa: E402
from skdp.datasets import load_adult  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

_COLD = """
import time, numpy as np
t0 = time.perf_counter(); import skdp; t_import = time.perf_counter() - t0
from skdp.datasets import load_adult
X, y, _, _ = load_adult()
est = skdp.DPLogisticRegression(epsilon=1.0, random_state=0)
t0 = time.perf_counter(); est.fit(X, y); first = time.perf_counter() - t0
t0 = time.perf_counter(); est.fit(X, y); second = time.perf_counter() - t0
print(t_import, first, second)
"""


def cold_start():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", _COLD], env=env, capture_output=True, text=True, check=True)
        cold = [float(v) for v in out.stdout.split()]
        out = subprocess.run([sys.executable, "-c", _COLD], env=env, capture_output=True, text=True, check=True)
        warm = [float(v) for v in out.stdout.split()]
    return cold, warm


def _kernel_and_calibration_time(est, X):
    """(kernel time, calibration time) of one private solve, measured apart."""
    import math

    from skdp.linear_model._base import clip_rows
    from skdp.losses import get_loss
    from skdp.optimizers import Budget, Problem
    from skdp.optimizers._base import batch_fraction
    from skdp.optimizers.dp_gdws import _dp_gdws_kernel
    from skdp.privacy.noise import GAUSSIAN

    opt = est.optimizer_
    Y = np.where(est.classes_[1] == _Y_TRAIN, 1.0, -1.0)[:, None]
    p = Problem(X=clip_rows(X, 1.0, 1.0), Y=Y, loss=get_loss("logistic"), lam=1.0 / X.shape[0],
                row_norm_bound=math.sqrt(2.0), clip=1.0)
    budget = Budget(1.0, 1e-5)
    q = batch_fraction(opt.batch_size, p.n_samples)
    t_cal = best_time(lambda: opt._calibrate(p, budget, 100, q), 1)
    scale, _ = opt._calibrate(p, budget, 100, q)
    step = opt._step_size(p, 100, q, scale, 0.1)

    def run():
        _dp_gdws_kernel(p.X, p.Y, np.zeros(p.dim), 0, 1.0, p.lam, 100, q, 1.0 / (q * p.n_samples),
                        step, 0.1, GAUSSIAN, scale, np.random.default_rng(0),
                        np.arange(p.n_samples, dtype=np.int64), np.zeros((0, 2, 0)), False)

    return best_time(run, 3), t_cal


_Y_TRAIN = None


def main():
    global _Y_TRAIN
    X, y, X_te, y_te = load_adult()
    _Y_TRAIN = y
    n, d = X.shape
    t_pass = xw_pass_time(X)
    rows = []
    for label, opt in [
        ("full batch, T=100", DPGDWS(max_iter=100)),
        ("Poisson batch 512, T=100", DPGDWS(max_iter=100, batch_size=512)),
    ]:
        est = DPLogisticRegression(epsilon=1.0, delta=1e-5, optimizer=opt, random_state=0)
        est.fit(X, y)  # warm (compile or load from cache)
        t_fit = best_time(lambda: est.fit(X, y), 3)
        t_kernel, t_cal = _kernel_and_calibration_time(est, X)
        # an "epoch" is one pass over n examples: full batch = one step, mini-batch = n/512 steps
        epochs = 100 if opt.batch_size is None else 100 * 512 / n
        rows.append((label, t_fit, t_kernel / epochs / t_pass, est.score(X_te, y_te), t_cal))
    sk = LogisticRegression(C=1.0, max_iter=1000)
    t_sk = best_time(lambda: sk.fit(X, y), 3)
    inf = DPLogisticRegression(epsilon=np.inf)
    inf.fit(X, y)
    t_inf = best_time(lambda: inf.fit(X, y), 3)
    cold, warm = cold_start()

    lines = [
        "# dp_gdws on UCI Adult",
        "",
        f"n = {n}, d = {d} (one-hot, rows unit norm); one single-thread numpy `X @ w` pass: {t_pass * 1e3:.3f} ms.",
        "All figures from one run on a shared 2-core machine; ratios are the meaningful part.",
        "",
        "| setting | fit time (s) | of which noise calibration (s) | kernel epoch / `X @ w` pass "
        "| fit / sklearn fit | test accuracy |",
        "|---|---|---|---|---|---|",
    ]
    for label, t_fit, ratio, acc, t_cal in rows:
        lines.append(f"| dp_gdws eps=1, {label} | {t_fit:.3f} | {t_cal:.3f} | {ratio:.1f}x | "
                     f"{t_fit / t_sk:.2f}x | {acc:.4f} |")
    lines.append(f"| dp_gdws eps=inf (to tol 1e-6, {inf.n_iter_} gradient evals) | {t_inf:.3f} | 0 | "
                 f"{t_inf / inf.n_iter_ / t_pass:.1f}x | {t_inf / t_sk:.2f}x | {inf.score(X_te, y_te):.4f} |")
    lines.append(f"| sklearn LogisticRegression (lbfgs) | {t_sk:.3f} | | | 1.00x | {sk.score(X_te, y_te):.4f} |")
    lines += [
        "",
        "Cold start in a fresh process (empty numba cache) and warm start (cache filled):",
        "",
        "| | `import skdp` (s) | first fit (s) | second fit (s) |",
        "|---|---|---|---|",
        f"| cold cache | {cold[0]:.2f} | {cold[1]:.2f} | {cold[2]:.3f} |",
        f"| warm cache | {warm[0]:.2f} | {warm[1]:.2f} | {warm[2]:.3f} |",
        "",
        f"Numba compile time of the dp_gdws path: about {cold[1] - warm[1]:.1f} s (cold first fit - warm first fit).",
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dp_gdws.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
