"""Issue 15, session 13: DPRidge's ``optimizer="auto"`` after the accelerated methods' new horizon.

With the squared loss's horizon factor 1.5 (``dev_rules_nag_horizon.py``) dp_nag_opt is at
least level with dp_scd, DPRidge's default, on every development cell of the ten-seed grid
whose public ``n sqrt(2 rho) = n / z`` is 240 or more, and ahead of it by up to 0.045 of R^2.
This script checks a rule ``dp_scd below n / z = THRESHOLD, dp_nag_opt from there`` where the
grid does not look: at *all* the estimator's defaults (``data_norm="auto"``,
``y_bounds="auto"``: private bounds, the user's setting), on

* ``grid``: every development regression cell of ``bench_defaults.py`` (wine, diabetes,
  ``make_regression``, 3 seeds) with nothing but epsilon, delta and the seed set;
* ``raw``: raw wine quality (11 unscaled columns, the target the quality score) and raw
  diabetes (scikit-learn's, targets 25..346), 5 random 75/25 splits, n = all training rows.

Development data only. ``python benchmarks/dev_rules_ridge_default.py`` writes
``results/dev_rules_ridge_default.md``.
"""

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_defaults as bd  # noqa: E402

from skdp import DPRidge  # noqa: E402
from skdp.datasets import load_wine_frame  # noqa: E402
from skdp.optimizers.dp_scd import _gaussian_multiplier  # noqa: E402

OPTIMIZERS = ("dp_scd", "dp_nag_opt")
EPS = (0.1, 0.3, 1.0, 3.0)


def _fit(optimizer, X, y, X_te, y_te, eps, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPRidge(epsilon=eps, delta=bd.DELTA, optimizer=optimizer, random_state=seed).fit(X, y)
    return float(r2_score(y_te, m.predict(X_te)))


def _raw_sets():
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes (raw)", X, y
    try:
        X_tr, y_tr, X_te, y_te = load_wine_frame()
    except FileNotFoundError:
        return
    yield "wine (raw)", np.vstack([X_tr, X_te]), np.concatenate([y_tr, y_te])


def rows():
    out = []
    for name, n, eps, seed, X, y, X_te, y_te, _ in bd.anchored_cells(
            ("wine", "diabetes", "make_regression"), bd.N_GRID, EPS, 3):
        out.append(("grid", name, n, eps, seed) + tuple(
            _fit(o, X, y, X_te, y_te, eps, seed) for o in OPTIMIZERS))
        print(out[-1], flush=True)
    for name, X, y in _raw_sets():
        for seed in range(5):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
            for eps in EPS:
                out.append(("raw", name, X_tr.shape[0], eps, seed) + tuple(
                    _fit(o, X_tr, y_tr, X_te, y_te, eps, seed) for o in OPTIMIZERS))
                print(out[-1], flush=True)
    return out


def report(out, thresholds=(120, 160, 240, 320, 480)):
    cells = {}
    for kind, name, n, eps, seed, *scores in out:
        cells.setdefault((kind, name, n, eps), []).append(scores)
    lines = ["# DPRidge's default: dp_scd or dp_nag_opt, at all the estimator's defaults "
             "(session 13, development data)", "",
             "Mean R^2 over seeds; `n/z` is the public ``n sqrt(2 rho)``. *rule t*: dp_scd below "
             "n/z = t, dp_nag_opt from there.", "",
             "| kind | data | n | eps | n/z | dp_scd | dp_nag_opt | difference |", "|---|---|---|---|---|---|---|---|"]
    means = {}
    for k in sorted(cells, key=lambda k: (k[0], k[1], k[2], k[3])):
        s, a = np.mean(cells[k], axis=0)
        nz = k[2] / _gaussian_multiplier(k[3], bd.DELTA)
        means[k] = (nz, s, a)
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]:g} | {nz:.0f} | {s:.3f} | {a:.3f} | {a - s:+.3f} |")
    lines += ["", "| rule | kind | cells switched | mean gain over the switched cells | worst | best |",
              "|---|---|---|---|---|---|"]
    for t in thresholds:
        for kind in ("grid", "raw"):
            sw = [a - s for (kd, *_), (nz, s, a) in means.items() if kd == kind and nz >= t]
            if sw:
                lines.append(f"| {t} | {kind} | {len(sw)} | {np.mean(sw):+.4f} | {min(sw):+.3f} | "
                             f"{max(sw):+.3f} |")
    (HERE / "results" / "dev_rules_ridge_default.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    report(rows())
