"""Development sweeps for the issue-15 rules changed in round h17 (development data only).

``python benchmarks/dev_rules_h17.py scd``: dp_scd on the logistic loss, the update-clip
constants (CLIP_SNR, CLIP_MAX) and the epochs, on Adult (n 1000, 2000, 5000) and digits
(n 1347), epsilon 0.1, 0.3, 1, 2 seeds. ``gdws``: dp_gdws ridge, the step-count factor and a
step multiplier on wine and make_regression. Scores are printed next to the cached Opacus
anchor of ``bench_defaults.py`` (read only; cells without a cached anchor print nan).
The held-out part (make_classification, California) is never loaded here.
"""

import itertools
import json
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402
from skdp.optimizers import dp_scd  # noqa: E402
from skdp.optimizers.dp_scd import DPSCD  # noqa: E402
from skdp.optimizers.dp_gdws import DPGDWS  # noqa: E402
from skdp.optimizers import _defaults  # noqa: E402

CACHE = json.loads(bd.CACHE.read_text()) if bd.CACHE.exists() else {}


def anchor(name, n, eps, seed):
    return CACHE.get(bd.opacus_key(name, n, eps, seed), [float("nan")])[0]


def cells(names, ns, epss, seeds):
    for name in names:
        for n in bd.sizes(name, ns):
            for seed in range(seeds):
                data = bd.subsample(name, n, seed)
                for eps in epss:
                    yield name, n, eps, seed, data


def fit(est, opt, data, eps, seed):
    _, X_tr, y_tr, X_te, y_te = data
    return bd.skdp_fit(est, opt, X_tr, y_tr, X_te, y_te, eps, seed)[0]


def scd(seeds=2, configs=None, epss=(0.1, 0.3, 1.0)):
    """First sweep: k in {30, 60, 120}, cap in {3, 10}, epochs in {5, 10, 20}; ``scd2``: k in
    {120, 240, 480}, cap in {1, 3}, 10 epochs, epsilon up to 3."""
    configs = configs or list(itertools.product((30.0, 60.0, 120.0), (3.0, 10.0), (5, 10, 20)))
    res = {}
    for name, n, eps, seed, data in cells(("adult", "digits"), (1000, 2000, 5000), epss, seeds):
        a = anchor(name, n, eps, seed)
        for k, cap, ep in configs:
            dp_scd.CLIP_SNR["logistic"], dp_scd.CLIP_MAX["logistic"] = k, cap
            s = fit("logistic", DPSCD(epochs=ep), data, eps, seed)
            res.setdefault((k, cap, ep), []).append((name, n, eps, seed, s, a))
            print(f"{name} {n} {eps} {seed} k={k} cap={cap} ep={ep}: {s:.4f} (opacus {a:.4f})", flush=True)
    report(res)


def report(res):
    print("\nconfig: mean score, mean (score - opacus), cells > 1 point below opacus, worst")
    for cfg, rs in sorted(res.items(), key=lambda kv: -np.mean([r[4] for r in kv[1]])):
        by = {}
        for name, n, eps, seed, s, a in rs:
            by.setdefault((name, n, eps), []).append((s, a))
        gaps = [np.mean([x[0] for x in v]) - np.mean([x[1] for x in v]) for v in by.values()]
        gaps = [g for g in gaps if not np.isnan(g)]
        print(cfg, f"{np.mean([r[4] for r in rs]):.4f}", f"{np.mean(gaps):+.4f}",
              sum(g < -0.01 for g in gaps), f"{min(gaps):+.4f}" if gaps else "")


def gdws(seeds=2):
    raise SystemExit(
        "retired in session 9: dp_gdws's squared-loss step rule (GDWS_REGRESSION, T = s / 5) is "
        "now dp_sgld's time rule (benchmarks/dev_rules_gdws_squared.py); run this at commit "
        "8fb07aa to reproduce round h17")
    orig = DPGDWS._step_size
    configs = list(itertools.product((1 / 25, 1 / 100), (1.0, 0.5, 0.25)))
    res = {}
    for name, n, eps, seed, data in cells(("wine", "make_regression"), (1000, 2000, 5000), (0.1, 0.3, 1.0), seeds):
        a = anchor(name, n, eps, seed)
        for f, m in configs:
            _defaults.GDWS_REGRESSION = f
            DPGDWS._step_size = lambda self, *args, m=m: m * orig(self, *args)
            s = fit("ridge", "dp_gdws", data, eps, seed)
            res.setdefault((f, m), []).append((name, n, eps, seed, s, a))
            print(f"{name} {n} {eps} {seed} f={f} m={m}: {s:.4f} (opacus {a:.4f})", flush=True)
    DPGDWS._step_size = orig
    report(res)


def gdws2(seeds=2):
    """dp_gdws ridge: smoothing (0.1 default, 0.5, 1 = plain GD) x step-count factor."""
    raise SystemExit(
        "retired in session 9: dp_gdws's squared-loss step rule (GDWS_REGRESSION, T = s / 5) is "
        "now dp_sgld's time rule (benchmarks/dev_rules_gdws_squared.py); run this at commit "
        "8fb07aa to reproduce round h17")
    res = {}
    configs = list(itertools.product((0.1, 0.5, 1.0), (1 / 25, 1 / 5)))
    for name, n, eps, seed, data in cells(("wine", "make_regression"), (1000, 2000, 5000), (0.1, 0.3, 1.0), seeds):
        a = anchor(name, n, eps, seed)
        for sm, f in configs:
            _defaults.GDWS_REGRESSION = f
            s = fit("ridge", DPGDWS(smoothing=sm), data, eps, seed)
            res.setdefault((sm, f), []).append((name, n, eps, seed, s, a))
            print(f"{name} {n} {eps} {seed} f={f} m={sm}: {s:.4f} (opacus {a:.4f})", flush=True)
    report(res)


def nag(seeds=2):
    """dp_nag_opt ridge: horizon constant c_T (squared loss) x step multiplier c."""
    from skdp.optimizers import dp_nag_opt
    from skdp.optimizers.dp_nag_opt import DPNAGOpt
    res = {}
    configs = list(itertools.product((1.0, 0.5), (1.0, 0.5, 0.25)))
    for name, n, eps, seed, data in cells(("wine", "make_regression"), (1000, 2000, 5000), (0.1, 0.3, 1.0), seeds):
        a = anchor(name, n, eps, seed)
        for hc, c in configs:
            dp_nag_opt.HORIZON_C["squared"] = hc
            s = fit("ridge", DPNAGOpt(c=c), data, eps, seed)
            res.setdefault((hc, c), []).append((name, n, eps, seed, s, a))
            print(f"{name} {n} {eps} {seed} f={hc} m={c}: {s:.4f} (opacus {a:.4f})", flush=True)
    report(res)


def gdws_clf(seeds=2):
    """dp_gdws logistic: (T factor, T floor, smoothing) around the current (4, 100, 0.1)."""
    res = {}
    configs = [(4.0, 100, 0.1), (16.0, 100, 0.1), (4.0, 300, 0.1), (4.0, 100, 0.3), (4.0, 100, 1.0)]
    for name, n, eps, seed, data in cells(("adult", "digits", "breast_cancer"), (1000, 2000), (0.1, 0.3, 1.0), seeds):
        a = anchor(name, n, eps, seed)
        for f, lo, sm in configs:
            _defaults.GDWS_CLASSIFICATION, _defaults.GDWS_MIN_CLASSIFICATION = f, lo
            s = fit("logistic", DPGDWS(smoothing=sm), data, eps, seed)
            res.setdefault((f, lo, sm), []).append((name, n, eps, seed, s, a))
            print(f"{name} {n} {eps} {seed} f={f},{lo} m={sm}: {s:.4f} (opacus {a:.4f})", flush=True)
    report(res)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    {"scd": scd, "gdws": gdws, "gdws2": gdws2, "nag": nag, "gdws_clf": gdws_clf,
     "scd2": lambda: scd(configs=list(itertools.product((120.0, 240.0, 480.0), (1.0, 3.0), (10,))),
                         epss=(0.1, 0.3, 1.0, 3.0))}[sys.argv[1]]()
