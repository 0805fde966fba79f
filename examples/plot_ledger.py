"""
A privacy ledger: every fit of a search charged, and a ceiling
==============================================================

:class:`skdp.PrivacyLedger` records the privacy event of every skdp fit made while it is open
(or passed as ``ledger=``). Unlike an accountant that ``clone`` copies away, it survives
:class:`~sklearn.model_selection.GridSearchCV`, ``cross_val_score`` and worker processes, so a
search is charged for all of its fits. With a ceiling, it refuses a fit that would pass it.
"""

# %%
# Raw data, no preprocessing
# --------------------------
# Breast cancer as it comes: each fit estimates its row bound privately (``data_norm="auto"``)
# inside its own budget, so each charge covers that estimate too.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, KFold

from skdp import BudgetExceededError, DPLogisticRegression, PrivacyLedger, compose
from skdp.privacy import compute_epsilon

X_private, y_private = load_breast_cancer(return_X_y=True)
# random_state=None (the default): every fit of the search draws fresh noise. A fixed seed would
# give every fold fit and the refit the same noise, which their releases can cancel: the ledger
# then refuses the second fit, or reports an infinite total without a ceiling.
model = DPLogisticRegression(classes=[0, 1], delta=1e-7)
param_grid = {
    "C": [0.1, 0.3, 1.0, 3.0],
    "epsilon": [0.25, 0.5, 1.0],
}  # 12 candidates
# Folds chosen independently of the data: ``cv=3`` would stratify a classifier's folds by label,
# and one record's label would then move other records between folds (see the ledger docs).
cv = KFold(3, shuffle=True, random_state=0)

# %%
# A search inside a ledger
# ------------------------
# 12 candidates x 3 folds = 36 fits, plus the refit of the best candidate: 37 charges.
with PrivacyLedger(delta=1e-5, name="breast cancer") as ledger:
    search = GridSearchCV(model, param_grid, cv=cv).fit(X_private, y_private)
per_fit = [entry.epsilon for entry in ledger.entries]
print(f"charges: {len(ledger)}")
print(f"largest single fit: epsilon {max(per_fit):.3g}; sum of the fits: {sum(per_fit):.3g}")
print(f"composed (RDP): epsilon {ledger.spent():.3g} at delta {ledger.delta:g}")

# %%
# How the spend grows, charge by charge: the composition of the first k fits (what the ledger
# would report after k fits) against the sum of their epsilons.
counts = np.arange(1, len(ledger) + 1)
running = [compute_epsilon(compose(ledger.entries[:k]), ledger.delta) for k in counts]
fig, ax = plt.subplots(figsize=(6.5, 4))
ax.plot(counts, np.cumsum(per_fit), color="tab:grey", linestyle="--",
        label="sum of the per-fit epsilons")
ax.plot(counts, running, color="tab:blue", marker=".", label="composed (RDP), the ledger")
ax.set_xlabel("fits charged")
ax.set_ylabel(f"epsilon at delta = {ledger.delta:g}")
ax.set_title("A GridSearchCV of 12 candidates x 3 folds + refit, charge by charge")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# The composed figure is what the search spent on this data set, charged to every record as if
# it took part in every fit. It is far below the sum of the per-fit epsilons because the
# accountant composes Rényi-DP curves, but far above the budget of the returned model.
#
# A ceiling
# ---------
# The same search under a ceiling of epsilon 3. Each fit is checked before its optimizer runs
# against the worst case it can spend (its target epsilon); once the ledger is too full, every
# further fit is refused, and ``error_score="raise"`` stops the search at the first refusal.
with PrivacyLedger(epsilon=3.0, delta=1e-5) as capped:
    try:
        GridSearchCV(model, param_grid, cv=cv, error_score="raise").fit(X_private, y_private)
    except BudgetExceededError as exc:
        print("stopped:", str(exc)[:110], "...")
print(f"{len(capped)} fits charged, epsilon {capped.spent():.3g} <= ceiling {capped.epsilon:g}")

# %%
# Worker processes
# ----------------
# With ``n_jobs=2`` the fits run in other processes, on pickled copies of the estimator. The
# copies write their events to a spool shared with the ledger, so the parent sees them all.
with PrivacyLedger(delta=1e-5) as parallel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        GridSearchCV(model, param_grid, cv=cv, n_jobs=2).fit(X_private, y_private)
print(f"n_jobs=2: {len(parallel)} charges, epsilon {parallel.spent():.3g} "
      f"(n_jobs=1: {ledger.spent():.3g})")
print(ledger.summary().splitlines()[-1])
