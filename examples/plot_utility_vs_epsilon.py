"""
Utility against epsilon, for every optimizer
============================================

Test accuracy of :class:`~skdp.linear_model.DPLogisticRegression` on scikit-learn's breast-cancer
data as the privacy budget grows, for each private optimizer available in this build, with the
non-private optimum of the same objective (``epsilon=np.inf``) as the ceiling.

This is a small data set (398 training records, used raw), where privacy is expensive: the
noise a record must hide behind is fixed by epsilon, while the signal grows with the number of
records. The benchmarks in ``benchmarks/`` compare the optimizers on larger data; this example
is about how to read such a curve (mean and spread over seeds), and runs in seconds.
"""

# %%
# Raw data, no preprocessing
# --------------------------
# The features as they come (row norms from a few hundred to several thousand): every fit
# estimates its row bound privately (``data_norm="auto"``) with a share of its own budget, and
# its ``epsilon_`` covers it (see :doc:`/user_guide/raw_data`). At the smallest budgets that
# estimate is itself unreliable on so few records, and the fit warns.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from skdp import DPLogisticRegression
from skdp.optimizers import available_optimizers

X, y = load_breast_cancer(return_X_y=True)
X_private, X_test, y_private, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y
)

# %%
# Fit every optimizer at every budget, over a few seeds
# -----------------------------------------------------
# Every optimizer runs with its default settings: no tuning on the private data (tuning costs
# privacy too, see :ref:`sphx_glr_auto_examples_plot_grid_search_epsilon.py`).
epsilons = np.array([0.05, 0.1, 0.3, 1.0, 3.0, 10.0])
n_seeds = 3
optimizers = available_optimizers()
scores = {}  # optimizer -> array (n_epsilons, n_seeds)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # the unreliable-bound warnings
    for opt in optimizers:
        scores[opt] = np.array([
            [
                DPLogisticRegression(
                    epsilon=eps, optimizer=opt, classes=[0, 1], random_state=seed
                ).fit(X_private, y_private)
                .score(X_test, y_test)
                for seed in range(n_seeds)
            ]
            for eps in epsilons
        ])
exact = DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(X_private, y_private)
ceiling = exact.score(X_test, y_test)
majority = max(np.mean(y_test), 1 - np.mean(y_test))

print(f"{'optimizer':<14}" + "".join(f"{e:>8g}" for e in epsilons))
for opt in optimizers:
    print(f"{opt:<14}" + "".join(f"{m:>8.3f}" for m in scores[opt].mean(axis=1)))
print(f"non-private optimum: {ceiling:.3f}; majority class: {majority:.3f}")
# which optimizers do not beat the majority class even at the largest budget (see below)
stuck = [opt for opt in optimizers if scores[opt][-1].mean() <= majority]
print("no better than the majority class at epsilon", epsilons[-1], ":", stuck or "none")

# %%
# The plot
# --------
# Each line is the mean over seeds; the band spans the lowest and highest score.
# Optimizers can coincide (see below): each has its own marker and line style, so that no line
# hides another.
styles = [("o", "-"), ("s", "--"), ("^", "-."), ("v", ":"), ("D", "-"), ("P", "--")]
fig, ax = plt.subplots(figsize=(7, 4.5))
for i, opt in enumerate(optimizers):
    mean = scores[opt].mean(axis=1)
    marker, linestyle = styles[i % len(styles)]
    (line,) = ax.plot(epsilons, mean, marker=marker, linestyle=linestyle, label=opt,
                      markerfacecolor="none" if i % 2 else None)
    ax.fill_between(epsilons, scores[opt].min(axis=1), scores[opt].max(axis=1),
                    color=line.get_color(), alpha=0.15)
ax.axhline(ceiling, color="k", linestyle="--", label="epsilon = inf")
ax.axhline(majority, color="grey", linestyle=":", label="majority class")
ax.set_xscale("log")
ax.set_xlabel("epsilon (delta = min(1e-5, 0.1/n))")
ax.set_ylabel("test accuracy")
ax.set_title(f"DPLogisticRegression, breast cancer (n = {len(y_private)}), {n_seeds} seeds")
ax.legend(loc="lower right", fontsize="small")
fig.tight_layout()
plt.show()

# %%
# Reading the curves
# ------------------
# The privacy records explain part of the picture: how many noisy releases each optimizer
# chose to make with the budget. On a data set this small the accelerated methods may find that
# a single step is what the budget affords (``dp_nag_opt`` re-selects its number of steps from
# its convergence bound, and ``dp_masg`` then coincides with it). How the budget is divided,
# into a few large releases or many small ones, with or without subsampling, is what tells the
# methods apart; which division wins depends on n, d and epsilon.
#
# Raw features add a second effect. ``C`` is in the units of ``X`` (the objective is
# scikit-learn's), and the optimizers work on rows scaled to the bound ``data_norm_`` (about
# 1000 here), where the ridge term ``1 / (n C)`` shrinks by ``data_norm_**2``: the problem is
# then barely strongly convex, and the methods whose step counts or step sizes are derived from
# the strong convexity (listed above as no better than the majority class, if any) can stall,
# while the gradient methods (``dp_gdws``, the default) are not affected. On data scaled to
# unit rows, or through a :class:`~skdp.pipeline.PrivatePipeline` whose steps bound the rows,
# the same ``C`` is a much stronger ridge.
for opt in optimizers:
    rec = DPLogisticRegression(epsilon=1.0, optimizer=opt, classes=[0, 1], random_state=0).fit(
        X_private, y_private
    ).privacy_record_
    print(f"{opt:<14} epsilon=1: {rec.n_steps:>5} noisy releases, mechanism {rec.mechanism}, "
          f"sampling {rec.sampling}")
