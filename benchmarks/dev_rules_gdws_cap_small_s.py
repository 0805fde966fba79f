"""Companion of dev_rules_gdws_cap.py: 50 / 70 / 100 steps where the rule gives T <= 100
(small s), DPLogisticRegression, 5 seeds. Output pasted into results/dev_rules_gdws_cap.md."""
import sys, warnings, numpy as np
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE)); sys.path.insert(0, str(HERE.parent))
from bench_defaults import DELTA, subsample
from skdp import DPLogisticRegression, DPGDWS
from skdp.optimizers._defaults import budget_rho, gdws_steps
cells = [("adult", 1000), ("adult", 2000), ("breast_cancer", 426), ("digits", 1000), ("make_classification", 1000), ("make_classification", 2000)]
gaps = {50: [], 70: []}
for cls in (DPLogisticRegression,):
  for name, n in cells:
    for eps in (0.1, 0.3, 1.0, 3.0):
        _, X, y, Xt, yt = subsample(name, n, 0)
        T = gdws_steps("logistic", X.shape[0], X.shape[1] + 1, budget_rho(eps, DELTA))
        if T > 100: continue
        m = {}
        for c in (50, 70, 100):
            s = []
            for seed in range(5):
                _, X, y, Xt, yt = subsample(name, n, seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    s.append(cls(epsilon=eps, delta=DELTA, optimizer=DPGDWS(max_iter=c), data_norm=1.0, random_state=seed).fit(X, y).score(Xt, yt))
            m[c] = np.mean(s)
        for c in (50, 70): gaps[c].append(m[c] - m[100])
        print(cls.__name__, name, n, eps, T, " ".join(f"{c}:{v:.4f}" for c, v in m.items()), flush=True)
for c, g in gaps.items(): print(c, "mean gap to 100: %+.4f worst %+.4f" % (np.mean(g), min(g)))
