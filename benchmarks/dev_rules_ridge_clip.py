"""Development sweep (issue 15): the squared loss's default derivative clip, for every optimizer.

DPRidge's ``derivative_clip="auto"`` was ``2 * y_bound`` (the largest residual at W = 0, twice):
the per-example gradient bound G = tau R that sets every gradient method's noise, and the step
rules' time (``noisy_gd_time`` ~ s^2 / G^2). This sweep forces ``derivative_clip = f * y_bound``
for f in {2, 1, 1/2, 1/4} on the development regression sets of ``bench_defaults.py`` (wine,
diabetes, make_regression; its arrays, public ``y_bounds=(-1, 1)``, so y_bound = 1), n 1000 to
10000, epsilon 0.1 to 3, 2 seeds, and reports the mean R^2 gap to the cached Opacus anchor and the
cells more than 0.02 below it. Held-out California housing is not run here.

Run: ``python benchmarks/dev_rules_ridge_clip.py [--factors 2 1 0.5 0.25]``; writes
``benchmarks/results/dev_rules_ridge_clip.md``.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import bench_defaults as bd  # noqa: E402
from skdp import DPRidge  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402

OPTIMIZERS = ("dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree", "dp_scd")


def main(argv=None):
    p = bd.sweep_arguments(argparse.ArgumentParser(), [2.0, 1.0, 0.5, 0.25],
                           ["wine", "diabetes", "make_regression"], [1000, 2000, 5000, 10000],
                           OPTIMIZERS)
    p.add_argument("--out", default="dev_rules_ridge_clip")
    args = p.parse_args(argv)

    def r2(opt, f, eps, seed, X_tr, y_tr, X_te, y_te):
        m = DPRidge(epsilon=eps, delta=bd.DELTA, optimizer=opt, data_norm=1.0,
                    y_bounds=(-1.0, 1.0), derivative_clip=f, random_state=seed)
        return float(r2_score(y_te, m.fit(X_tr, y_tr).predict(X_te)))

    rows = bd.clip_sweep(args, r2)
    import collections
    cells = collections.defaultdict(list)
    for name, n, eps, seed, opt, f, r2, anchor in rows:
        cells[(opt, f, name, n, eps)].append((r2, anchor))
    lines = ["# DPRidge: derivative clip f * y_bound (development sweep, issue 15)", "",
             f"`python benchmarks/dev_rules_ridge_clip.py` ({args.seeds} seeds; data sets "
             f"{', '.join(args.datasets)}; n {args.n}; epsilon {args.eps}). Per optimizer and f: "
             "mean R^2 gap to the Opacus anchor over the cells, the number of cells more than "
             "0.02 below it, and the worst cell.", "",
             "| optimizer | f | mean gap | cells < -0.02 | worst gap | cells |", "|---|---|---|---|---|---|"]
    for opt in args.optimizers:
        for f in args.factors:
            gaps = [np.mean([r for r, _ in v]) - np.mean([a for _, a in v])
                    for k, v in cells.items() if k[0] == opt and k[1] == f]
            if gaps:
                lines.append(f"| {opt} | {f:g} | {np.mean(gaps):+.3f} | {sum(g < -0.02 for g in gaps)} | "
                             f"{min(gaps):+.3f} | {len(gaps)} |")
    lines += ["", "Per cell (mean R^2 over seeds; anchor in the last column):", "",
              "| data | n | eps | optimizer | " + " | ".join(f"f={f:g}" for f in args.factors) + " | Opacus |",
              "|---|---|---|---|" + "---|" * (len(args.factors) + 1)]
    keys = sorted({(k[2], k[3], k[4], k[0]) for k in cells})
    for name, n, eps, opt in keys:
        vals = [np.mean([r for r, _ in cells[(opt, f, name, n, eps)]]) for f in args.factors]
        anchor = np.mean([a for _, a in cells[(opt, args.factors[0], name, n, eps)]])
        lines.append(f"| {name} | {n} | {eps:g} | {opt} | " + " | ".join(f"{v:.3f}" for v in vals)
                     + f" | {anchor:.3f} |")
    out = HERE / "results" / f"{args.out}.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:8 + len(args.optimizers) * len(args.factors)]))


if __name__ == "__main__":
    main()
