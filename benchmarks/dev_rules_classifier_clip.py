"""Development sweep (issue 15): the classifiers' default derivative clip, per optimizer.

``derivative_clip="auto"`` is, for the logistic loss, a bound that is never active (1 for a
binary model), and for the squared hinge its derivative at W = 0 (2). Near W = 0, where a
private gradient method starts and where it stays at a small signal-to-noise ratio, the
logistic derivative is 1/2: half the sensitivity the noise is scaled to carries no signal.
Clipping the derivative at ``f`` times the default replaces the loss by a convex, Lipschitz,
classification-calibrated one (the derivative, clipped, is still monotone in the margin) and
divides the noise by ``1/f``.

This sweep forces ``derivative_clip = f * default`` for f in {1, 1/2, 1/4} on the development
classification sets of ``bench_defaults.py`` (Adult, breast cancer, digits; its arrays, public
``data_norm=1``), every n of its grid, epsilon 0.1 to 3, 2 seeds, and reports the mean accuracy
gap to the cached Opacus anchor and the cells more than 1 point below it. The held-out set
(make_classification) is run with ``--datasets make_classification`` once a rule is chosen.

Run: ``python benchmarks/dev_rules_classifier_clip.py --estimator logistic``; writes
``benchmarks/results/dev_rules_<estimator>_clip[_<suffix>].md``.
"""

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import bench_defaults as bd  # noqa: E402

OPTIMIZERS = ("dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree", "dp_scd")
DEFAULT_CLIP = {"logistic": 1.0, "svc": 2.0}  # binary models: Loss.default_clip(1)


def main(argv=None):
    p = bd.sweep_arguments(argparse.ArgumentParser(), [1.0, 0.5, 0.25],
                           ["adult", "breast_cancer", "digits"], optimizers=OPTIMIZERS)
    p.add_argument("--estimator", choices=sorted(DEFAULT_CLIP), default="logistic")
    p.add_argument("--suffix", default="")
    args = p.parse_args(argv)
    cls = bd.ESTIMATORS[args.estimator][0]

    def accuracy(opt, f, eps, seed, X_tr, y_tr, X_te, y_te):
        m = cls(epsilon=eps, delta=bd.DELTA, optimizer=opt, data_norm=1.0,
                derivative_clip=f * DEFAULT_CLIP[args.estimator], random_state=seed)
        return float(m.fit(X_tr, y_tr).score(X_te, y_te))

    rows = bd.clip_sweep(args, accuracy)
    cells = collections.defaultdict(list)
    for name, n, eps, seed, opt, f, acc, anchor in rows:
        cells[(opt, f, name, n, eps)].append((acc, anchor))
    lines = [f"# {cls.__name__}: derivative clip f * {DEFAULT_CLIP[args.estimator]:g} (sweep, issue 15)", "",
             f"`python benchmarks/dev_rules_classifier_clip.py --estimator {args.estimator}"
             + (f" --datasets {' '.join(args.datasets)}" if args.suffix else "")
             + f"` ({args.seeds} seeds; data sets {', '.join(args.datasets)}; n {args.n}; epsilon "
             f"{args.eps}). Per optimizer and f: mean accuracy gap to the Opacus anchor over the "
             "cells, the cells more than 1 point below it, the worst cell, and the cells where f "
             "is better / worse than f = 1 by more than half a point.", "",
             "| optimizer | f | mean gap | cells < -0.01 | worst gap | better / worse than f=1 | cells |",
             "|---|---|---|---|---|---|---|"]
    for opt in args.optimizers:
        for f in args.factors:
            keys = [k for k in cells if k[0] == opt and k[1] == f]
            if not keys:
                continue
            gaps = [np.mean([a for a, _ in cells[k]]) - np.mean([b for _, b in cells[k]]) for k in keys]
            diff = [np.mean([a for a, _ in cells[k]]) - np.mean([a for a, _ in cells[(opt, args.factors[0]) + k[2:]]])
                    for k in keys]
            lines.append(f"| {opt} | {f:g} | {np.mean(gaps):+.4f} | {sum(g < -0.01 for g in gaps)} | "
                         f"{min(gaps):+.3f} | {sum(d > 0.005 for d in diff)} / {sum(d < -0.005 for d in diff)} | {len(gaps)} |")
    lines += ["", "Per cell (mean accuracy over seeds; the anchor in the last column):", "",
              "| data | n | eps | optimizer | " + " | ".join(f"f={f:g}" for f in args.factors) + " | Opacus |",
              "|---|---|---|---|" + "---|" * (len(args.factors) + 1)]
    for name, n, eps, opt in sorted({(k[2], k[3], k[4], k[0]) for k in cells}):
        vals = [np.mean([a for a, _ in cells[(opt, f, name, n, eps)]]) for f in args.factors]
        anchor = np.mean([b for _, b in cells[(opt, args.factors[0], name, n, eps)]])
        lines.append(f"| {name} | {n} | {eps:g} | {opt} | " + " | ".join(f"{v:.3f}" for v in vals)
                     + f" | {anchor:.3f} |")
    stem = f"dev_rules_{args.estimator}_clip" + (f"_{args.suffix}" if args.suffix else "")
    (HERE / "results" / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:8 + len(args.optimizers) * len(args.factors)]))


if __name__ == "__main__":
    main()
