"""
Private hyper-parameter search with one guarantee
=================================================

:class:`skdp.model_selection.PrivateSearchCV` tunes a skdp estimator so that the *whole* search,
the choice of the best candidate included, is (epsilon, delta)-DP. It uses random stopping
(Papernot & Steinke 2022): a random number of runs, each fitting a random candidate on a
training part and scoring it with noise on a disjoint validation part, and only the best run
is released. We compare it with what an ordinary ``GridSearchCV`` over the same grid spends
(:func:`skdp.tuning_cost`), which moreover chooses its winner without any noise.
"""

# %%
# Raw data, no preprocessing
# --------------------------
# Breast cancer as it comes: every candidate estimates its row bound privately
# (``data_norm="auto"``) inside its own budget, so each run's event covers that estimate too.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, KFold, train_test_split

from skdp import DPLogisticRegression, tuning_cost
from skdp.model_selection import PrivateSearchCV

X, y = load_breast_cancer(return_X_y=True)
X_private, X_test, y_private, y_test = train_test_split(
    X, y, test_size=0.25, random_state=0, stratify=y
)
model = DPLogisticRegression(epsilon=0.5, delta=1e-7, classes=[0, 1])
grid = {
    "C": [0.1, 0.3, 1.0, 3.0],
    "optimizer": ["dp_gdws", "dp_scd"],
}  # 8 candidates, each fit at epsilon 0.5

# %%
# The private search
# ------------------
# On average 8 runs (geometric number of runs, ``shape=1``). The guarantee is computed from the
# candidates' privacy events before the data is read.
search = PrivateSearchCV(model, grid, n_iter=8, shape=1.0, delta=1e-5, random_state=0)
search.fit(X_private, y_private)
print(f"PrivateSearchCV: the whole search is ({search.epsilon_:.3g}, {search.delta_:g})-DP")
print(f"  selected {search.best_params_}")
print(f"  noisy validation accuracy {search.best_score_:.3f}, "
      f"test accuracy {search.score(X_test, y_test):.3f}")

# %%
# The same grid with GridSearchCV
# -------------------------------
# 8 candidates x 3 folds + the refit = 25 fits. Their composition covers the models only: the
# choice of the winner from exact validation scores has no guarantee at all. The folds must not
# depend on the labels (``cv=3`` would stratify them): ``tuning_cost`` refuses such a search.
cv = KFold(3, shuffle=True, random_state=0)
gs = GridSearchCV(model, grid, cv=cv).fit(X_private, y_private)
cost = tuning_cost(gs, X_private, y_private, delta=1e-5)
print(f"GridSearchCV: {cost.n_fits} fits, epsilon {cost.epsilon:.3g} composing all of them, "
      f"{cost.epsilon_per_record:.3g} for one record (fits that read it), "
      "and no guarantee for the selection")
print(f"  selected {gs.best_params_}, test accuracy {gs.score(X_test, y_test):.3f}")

# %%
# How the guarantee grows with the mean number of runs
# ----------------------------------------------------
# The cost of selection is a small multiple of one run's, and grows like log(E[K]).
# (the released model carries the search's guarantee; the fit that made it is in its record)
selected = search.best_estimator_.privacy_record_.details["selected_fit"]
one_fit = selected.epsilon
print(f"one fit: epsilon {one_fit:.3g} at delta {selected.delta:g}")
mean_runs = [1, 3, 10, 30]
search_eps = []
for n_iter in mean_runs:
    s = PrivateSearchCV(model, grid, n_iter=n_iter, delta=1e-5, random_state=1)
    s.fit(X_private, y_private)
    search_eps.append(s.epsilon_)
    print(f"E[K] = {n_iter:>2}: search epsilon {s.epsilon_:.3g}")

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(mean_runs, search_eps, marker="o", label="PrivateSearchCV, the whole search")
ax.axhline(one_fit, color="k", linestyle=":", label="one fit")
ax.axhline(cost.epsilon_per_record, color="tab:grey", linestyle="--",
           label=f"GridSearchCV, {cost.n_fits} fits (models only)")
ax.set_xscale("log")
ax.set_xlabel("mean number of runs E[K]")
ax.set_ylabel("epsilon at delta = 1e-5")
ax.set_title("The price of selection grows like log E[K]")
ax.legend(loc="center right")
fig.tight_layout()
plt.show()
