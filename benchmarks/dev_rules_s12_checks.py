"""Session 12's checks of its rules outside the defaults grid (development data only).

``python benchmarks/dev_rules_s12_checks.py`` runs three checks and writes
``results/dev_rules_s12_checks.md``:

* ``adult``: full Adult (32561 training rows, the library's loader, ``data_norm="auto"``, every
  other parameter at its default; 3 seeds). DPLinearSVC with dp_gdws with the squared hinge's
  step share off, opening to s = 400 and to s = 200 (the rule), at epsilon 0.1 and 0.3; and
  DPLinearSVC's binary default before (dp_nag_opt) and after (dp_gdws) at epsilon 0.1, 0.3, 1.
* ``svc_defaults``: DPLinearSVC at all its defaults (``data_norm="auto"``) with dp_nag_opt and
  with dp_gdws on every cell of the defaults grid with a cached anchor (3 seeds); mean accuracy
  and cells below the Opacus anchor, per part (the held-out part was looked at after the
  choice, which the development part made).
* ``multiclass``: standardised digits (K = 10), wine and iris (5 stratified splits, epsilon 0.3,
  1, 3): DPLinearSVC with dp_nag_opt against dp_gdws; and dp_scd's multinomial update clip at
  its linear rule against the binary logistic's new one, at ``data_norm=1`` (rows scaled by the
  largest training norm) and ``"auto"``.
"""

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from skdp import DPLinearSVC, DPLogisticRegression  # noqa: E402
from skdp.datasets import load_adult  # noqa: E402
from skdp.optimizers import _defaults, dp_scd  # noqa: E402


def _mean(scores):
    return float(np.mean(scores))


def adult(seeds=3):
    X, y, Xt, yt = load_adult()
    lines = ["## Full Adult, DPLinearSVC at `data_norm=\"auto\"` (3 seeds)", "",
             "| epsilon | dp_gdws, no step share | opening to s = 400 | opening to s = 200 (rule) |",
             "|---|---|---|---|"]
    losses, full = _defaults.SQUARED_HINGE_OPENING_LOSSES, _defaults.SQUARED_HINGE_FULL_SNR
    for eps in (0.1, 0.3):
        row = []
        for on, f in ((frozenset(), full), (losses, 400.0), (losses, 200.0)):
            _defaults.SQUARED_HINGE_OPENING_LOSSES, _defaults.SQUARED_HINGE_FULL_SNR = on, f
            row.append(_mean([DPLinearSVC(epsilon=eps, optimizer="dp_gdws", random_state=s)
                              .fit(X, y).score(Xt, yt) for s in range(seeds)]))
        lines.append(f"| {eps:g} | " + " | ".join(f"{v:.4f}" for v in row) + " |")
    _defaults.SQUARED_HINGE_OPENING_LOSSES, _defaults.SQUARED_HINGE_FULL_SNR = losses, full
    lines += ["", "| epsilon | dp_nag_opt (binary default before) | dp_gdws (binary default now) |",
              "|---|---|---|"]
    for eps in (0.1, 0.3, 1.0):
        row = [_mean([DPLinearSVC(epsilon=eps, optimizer=o, random_state=s).fit(X, y).score(Xt, yt)
                      for s in range(seeds)]) for o in ("dp_nag_opt", "dp_gdws")]
        lines.append(f"| {eps:g} | {row[0]:.4f} | {row[1]:.4f} |")
    return lines + [""]


def svc_defaults(seeds=3):
    names = ("adult", "breast_cancer", "digits", "make_classification")
    cells = {}
    for name, n, eps, seed, X_tr, y_tr, X_te, y_te, anchor in bd.anchored_cells(
            names, bd.N_GRID, bd.EPS_GRID, seeds):
        c = cells.setdefault((name, n, eps), {"anchor": []})
        c["anchor"].append(anchor)
        for o in ("dp_nag_opt", "dp_gdws"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = DPLinearSVC(epsilon=eps, delta=bd.DELTA, optimizer=o, random_state=seed)
                c.setdefault(o, []).append(m.fit(X_tr, y_tr).score(X_te, y_te))
    lines = ["## DPLinearSVC at all its defaults (`data_norm=\"auto\"`), grid cells, 3 seeds", "",
             "| part | optimizer | cells | mean accuracy | below the anchor | > 1 point below |",
             "|---|---|---|---|---|---|"]
    for part in ("development", "held-out"):
        sel = [{k: _mean(v) for k, v in c.items()} for (name, _, _), c in cells.items()
               if (name in bd.HELDOUT) == (part == "held-out")]
        for o in ("dp_nag_opt", "dp_gdws"):
            gaps = np.array([c[o] - c["anchor"] for c in sel])
            lines.append(f"| {part} | {o} | {len(sel)} | {_mean([c[o] for c in sel]):.4f} | "
                         f"{int((gaps < 0).sum())} | {int((gaps < -0.01).sum())} |")
    return lines + [""]


def _splits(loader, splits=5):
    X, y = loader(return_X_y=True)
    for s in range(splits):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=s, stratify=y)
        scaler = StandardScaler().fit(X_tr)
        yield s, scaler.transform(X_tr), y_tr, scaler.transform(X_te), y_te


def multiclass():
    sets = (("digits", load_digits), ("wine", load_wine), ("iris", load_iris))
    lines = ["## Multiclass, DPLinearSVC (5 splits)", "",
             "| data | epsilon | dp_nag_opt (default) | dp_gdws |", "|---|---|---|---|"]
    for name, loader in sets:
        for eps in (0.3, 1.0, 3.0):
            row = [_mean([DPLinearSVC(epsilon=eps, optimizer=o, random_state=s)
                          .fit(X_tr, y_tr).score(X_te, y_te)
                          for s, X_tr, y_tr, X_te, y_te in _splits(loader)])
                   for o in ("dp_nag_opt", "dp_gdws")]
            lines.append(f"| {name} | {eps:g} | {row[0]:.3f} | {row[1]:.3f} |")
    rules = {"linear (kept)": (3.0, 120.0, 1.0), "binary logistic's (not adopted)": (2.0, 100.0, 0.75)}
    kept = (dp_scd.CLIP_MAX["multinomial"], dp_scd.CLIP_SNR["multinomial"],
            dp_scd.CLIP_EXPONENT["multinomial"])
    lines += ["", "## Multiclass, DPLogisticRegression dp_scd: the multinomial update clip "
              "(3 splits)", "", "| data | epsilon | data_norm | " + " | ".join(rules) + " |",
              "|---|---|---|---|---|"]
    for name, loader in sets:
        for eps in (0.3, 1.0, 3.0):
            for norm in (1.0, "auto"):
                row = []
                for cap, k, a in rules.values():
                    (dp_scd.CLIP_MAX["multinomial"], dp_scd.CLIP_SNR["multinomial"],
                     dp_scd.CLIP_EXPONENT["multinomial"]) = cap, k, a
                    scores = []
                    for s, X_tr, y_tr, X_te, y_te in _splits(loader, 3):
                        if norm == 1.0:  # a public bound: rows scaled by the largest norm
                            X_tr = X_tr / np.linalg.norm(X_tr, axis=1).max()
                            X_te = X_te / np.linalg.norm(X_te, axis=1).max()
                        m = DPLogisticRegression(epsilon=eps, optimizer="dp_scd", data_norm=norm,
                                                 random_state=s)
                        scores.append(m.fit(X_tr, y_tr).score(X_te, y_te))
                    row.append(_mean(scores))
                lines.append(f"| {name} | {eps:g} | {norm} | " +
                             " | ".join(f"{v:.3f}" for v in row) + " |")
    (dp_scd.CLIP_MAX["multinomial"], dp_scd.CLIP_SNR["multinomial"],
     dp_scd.CLIP_EXPONENT["multinomial"]) = kept
    return lines + [""]


def main():
    warnings.simplefilter("ignore")
    lines = ["# Session 12's checks outside the defaults grid", "",
             "`python benchmarks/dev_rules_s12_checks.py` (see its docstring).", ""]
    for check in (adult, svc_defaults, multiclass):
        lines += check()
        print("\n".join(lines[-8:]), flush=True)
    out = HERE / "results" / "dev_rules_s12_checks.md"
    out.write_text("\n".join(lines))
    print("wrote", out)


if __name__ == "__main__":
    main()
