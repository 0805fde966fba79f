"""Utility against epsilon for every estimator and every available optimizer.

Run: ``python benchmarks/bench_utility.py [--data adult wine breast_cancer diabetes]
[--epsilons 0.05 0.1 0.5 1 2 5 inf] [--seeds 5] [--optimizers dp_gdws dp_scd ...]
[--anchors opacus diffprivlib] [--update]`` (``pip install ".[bench]"`` first; ``--update``
refits only the optimizers given and replaces their rows in the existing CSV).

Writes ``benchmarks/results/utility_<data>.csv`` (one row per estimator, optimizer, epsilon,
seed: test score, epsilon spent, fit time) and ``utility_<data>.md`` (mean and standard deviation
over seeds), plus ``utility_<data>.png`` when matplotlib is installed. Non-private scikit-learn
on the same data and preprocessing is the reference row. The anchors (``_anchors.py``, which
states their fixed configurations) run on the same arrays: Opacus DP-SGD on one linear layer
(RDP accountant, ``make_private_with_epsilon``) and diffprivlib's LogisticRegression /
LinearRegression in their own virtual environment ``benchmarks/.venv-diffprivlib`` (created on
first use; diffprivlib needs scikit-learn <= 1.7). An anchor that cannot run is reported in the
output and in the markdown, not silently dropped.

Preprocessing (the same for every method): numeric features standardised and categoricals
one-hot encoded with training statistics, rows scaled to unit L2 norm; regression targets mapped
onto [-1, 1] with the public range of the score (wine quality 0..10, diabetes 25..346).
"""

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.datasets import find_data_dir, load_adult, load_wine_quality
from skdp.optimizers import available_optimizers
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import Normalizer, StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _anchors import AnchorUnavailable, diffprivlib_runs, opacus_config, opacus_runs

RESULTS = Path(__file__).resolve().parent / "results"
DELTA = 1e-5


def _unit(X_tr, X_te):
    sc = StandardScaler().fit(X_tr)
    nz = Normalizer()
    return nz.transform(sc.transform(X_tr)), nz.transform(sc.transform(X_te))


def load(name):
    """(task, X_tr, y_tr, X_te, y_te, target range or None)."""
    if name == "adult":
        return ("classification",) + load_adult() + (None,)
    if name == "wine":
        return ("regression",) + load_wine_quality() + ((0.0, 10.0),)
    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
        A, B = _unit(X_tr, X_te)
        return ("classification", A, y_tr, B, y_te, None)
    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
        A, B = _unit(X_tr, X_te)
        return ("regression", A, y_tr, B, y_te, (25.0, 346.0))
    raise ValueError(name)


def _to_unit_target(y, rng):
    lo, hi = rng
    return (y - (lo + hi) / 2) / ((hi - lo) / 2)



def run_anchors(task, X_tr, y_tr, X_te, y_te, epsilons, seeds, anchors):
    """Rows for the anchors, and notes for those that could not run."""
    rows, notes = [], []
    est = "LogisticRegression" if task == "classification" else "LinearRegression"
    for a in anchors:
        try:
            if a == "opacus":
                res = opacus_runs(task, X_tr, y_tr, X_te, y_te, epsilons, seeds, DELTA)
                cfg = opacus_config(len(X_tr))
                label = ("Opacus DP-SGD", f"nn.Linear, SGD lr {cfg['lr']:g}, batch "
                         f"{cfg['batch_size']}, {cfg['epochs']} epochs, clip 1 (issue 15's anchor)")
            elif a == "diffprivlib":
                res, versions = diffprivlib_runs(task, X_tr, y_tr, X_te, y_te, epsilons, seeds)
                label = (f"diffprivlib {est}", f"diffprivlib {versions[0]} (sklearn {versions[1]}), pure eps-DP")
            else:
                raise ValueError(a)
        except AnchorUnavailable as exc:
            notes.append(f"{a} could not run: {exc}")
            print(notes[-1], file=sys.stderr, flush=True)
            continue
        rows += [label + (eps, seed, score, spent, dt) for eps, seed, score, spent, dt in res]
    return rows, notes


def run(name, epsilons, seeds, optimizers, anchors=()):
    task, X_tr, y_tr, X_te, y_te, trange = load(name)
    rows = []
    if task == "classification":
        estimators = [("DPLogisticRegression", DPLogisticRegression), ("DPLinearSVC", DPLinearSVC)]
        ref = LogisticRegression(C=1.0, max_iter=2000).fit(X_tr, y_tr)
        rows.append(("sklearn LogisticRegression", "non-private", np.inf, 0, ref.score(X_te, y_te), np.inf, np.nan))
    else:
        estimators = [("DPRidge", DPRidge)]
        t_tr, t_te = _to_unit_target(y_tr, trange), _to_unit_target(y_te, trange)
        ref = Ridge(alpha=1.0).fit(X_tr, t_tr)
        rows.append(("sklearn Ridge", "non-private", np.inf, 0, r2_score(t_te, ref.predict(X_te)), np.inf, np.nan))
    for est_name, cls in estimators:
        for opt in optimizers:
            for eps in epsilons:
                for seed in range(seeds):
                    est = cls(epsilon=eps, delta=DELTA, optimizer=opt, random_state=seed)
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if task == "classification":
                            est.fit(X_tr, y_tr)
                            score = est.score(X_te, y_te)
                        else:
                            est.fit(X_tr, t_tr)
                            score = r2_score(t_te, est.predict(X_te))
                    dt = time.perf_counter() - t0
                    rows.append((est_name, opt, eps, seed, score, est.epsilon_, dt))
                    print(f"{name} {est_name} {opt} eps={eps} seed={seed}: {score:.4f} ({dt:.2f}s)", flush=True)
    if task == "classification":
        arows, notes = run_anchors(task, X_tr, y_tr, X_te, y_te, epsilons, seeds, anchors)
    else:
        arows, notes = run_anchors(task, X_tr, t_tr, X_te, t_te, epsilons, seeds, anchors)
    return task, rows + arows, notes


SKDP_ESTIMATORS = ("DPLogisticRegression", "DPLinearSVC", "DPRidge")


def write(name, task, rows, epsilons, notes=(), seeds=None):
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / f"utility_{name}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["estimator", "optimizer", "epsilon", "seed", "score", "epsilon_spent", "fit_seconds"])
        w.writerows(rows)
    metric = "accuracy" if task == "classification" else "R^2"
    lines = [f"# Utility on {name} (test {metric}, mean ± sd over {seeds} seeds, delta = {DELTA})", ""]
    lines.append("Regenerate: `python benchmarks/bench_utility.py --data " + name + f" --seeds {seeds}`. "
                 "skdp estimators at their defaults (C = 1, data_norm='auto') with the named optimizer. "
                 "Anchors on the same arrays; their configurations are stated in `benchmarks/_anchors.py` "
                 "(Opacus: issue 15's anchor, PRV accountant below eps 0.5 and RDP otherwise, `make_private_with_epsilon`, delta 1e-5, eps = inf is the same SGD "
                 "without clipping or noise; diffprivlib is pure eps-DP and has no eps = inf run).")
    lines.append("")
    for note in notes:
        lines += [f"**{note}**", ""]
    lines.append("| estimator | optimizer | " + " | ".join(f"eps={e:g}" for e in epsilons) + " |")
    lines.append("|---|---|" + "---|" * len(epsilons))
    keys = sorted({(r[0], r[1]) for r in rows if r[1] != "non-private"}, key=lambda k: (k[0] not in SKDP_ESTIMATORS, k))
    for key in keys:
        cells = []
        for e in epsilons:
            s = [r[4] for r in rows if (r[0], r[1]) == key and r[2] == e]
            cells.append(f"{np.mean(s):.4f} ± {np.std(s):.4f}" if s else "")
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    for r in rows:
        if r[1] == "non-private":
            lines.append(f"| {r[0]} | non-private | " + " | ".join(f"{r[4]:.4f}" for _ in epsilons) + " |")
    (RESULTS / f"utility_{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    panels = sorted({k[0] for k in keys if k[0] in SKDP_ESTIMATORS})
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.5), squeeze=False)
    finite = [e for e in epsilons if np.isfinite(e)]
    for ax, est_name in zip(axes[0], panels):
        for (en, opt) in keys:
            if en != est_name and en in SKDP_ESTIMATORS:
                continue
            es = [e for e in finite if any((r[0], r[1]) == (en, opt) and r[2] == e for r in rows)]
            vals = [[r[4] for r in rows if (r[0], r[1]) == (en, opt) and r[2] == e] for e in es]
            anchor = en not in SKDP_ESTIMATORS
            if anchor:
                style = dict(marker="s", ls="--", lw=2)
            else:  # its own marker and dash per optimizer: coinciding curves stay visible
                marker, ls = _OPT_STYLES[sorted(o for e, o in keys if e == est_name).index(opt)
                                         % len(_OPT_STYLES)]
                style = dict(marker=marker, ls=ls, lw=1, mfc="none", ms=7 if marker != "." else 4)
            ax.errorbar(es, [np.mean(v) for v in vals], yerr=[np.std(v) for v in vals], capsize=2,
                        label=en if anchor else opt, **style)
        for r in rows:
            if r[1] == "non-private":
                ax.axhline(r[4], color="k", ls="--", label=r[0])
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (delta = 1e-5)")
        ax.set_ylabel(metric)
        ax.set_title(f"{est_name} on {name}")
        if task == "classification":
            lo = min(r[4] for r in rows)
            ax.set_ylim(max(lo - 0.02, 0.5), None)
        else:  # R^2 far below zero (large noise) would flatten the chart: clip the axis at -1
            top = max(r[4] for r in rows if np.isfinite(r[4]))
            ax.set_ylim(max(min(r[4] for r in rows) - 0.05, -1.0), top + 0.05)
            ax.set_title(f"{est_name} on {name} (axis clipped at R^2 = -1)")
            ax.set_ylabel(metric)
            ax.legend(fontsize=7)
            continue
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / f"utility_{name}.png", dpi=100)


#: (marker, line style) of the skdp optimizers' curves, in the order of their names.
_OPT_STYLES = [("o", "-"), ("^", "--"), ("v", ":"), ("D", "-."), ("x", "-"), ("P", "--")]


def read_csv(name):
    with open(RESULTS / f"utility_{name}.csv") as fh:
        rd = csv.reader(fh)
        next(rd)
        rows = [(r[0], r[1], float(r[2]), int(r[3]), float(r[4]), float(r[5]), float(r[6])) for r in rd]
    task = "classification" if any("Logistic" in r[0] for r in rows) else "regression"
    return task, rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["adult", "wine", "breast_cancer", "diabetes"])
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.05, 0.1, 0.5, 1, 2, 5, np.inf])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--optimizers", nargs="+", default=None)
    p.add_argument("--replot", action="store_true", help="redraw md/png from the existing CSV, no fitting")
    p.add_argument("--anchors", nargs="*", default=["opacus", "diffprivlib"], choices=["opacus", "diffprivlib"])
    p.add_argument("--update", action="store_true",
                   help="fit only --optimizers (no anchors) and replace their rows in the existing "
                        "CSV, keeping every other row (after a change to those optimizers alone)")
    args = p.parse_args(argv)
    optimizers = args.optimizers or available_optimizers()
    for name in args.data:
        if name in ("adult", "wine") and find_data_dir(required=("adult.data",) if name == "adult" else ("winequality-white.csv",)) is None:
            print(f"skipping {name}: data not found", file=sys.stderr)
            continue
        if args.replot:
            task, rows = read_csv(name)
            write(name, task, rows, args.epsilons, (), args.seeds)
            continue
        if args.update:
            _, old = read_csv(name)
            task, rows, notes = run(name, args.epsilons, args.seeds, optimizers, ())
            kept = [r for r in old if r[1] not in optimizers and r[1] != "non-private"]
            rows = rows[:1] + kept + rows[1:]  # the non-private reference first, as in a full run
            write(name, task, rows, args.epsilons, notes, args.seeds)
            continue
        task, rows, notes = run(name, args.epsilons, args.seeds, optimizers, args.anchors)
        write(name, task, rows, args.epsilons, notes, args.seeds)


if __name__ == "__main__":
    main()
