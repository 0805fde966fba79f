"""
Quick start: a private logistic regression on raw data
======================================================

Fit :class:`~skdp.linear_model.DPLogisticRegression` on scikit-learn's breast-cancer data, as it
comes (row norms from a few hundred to several thousand), at ``epsilon=1``; compare it with the
non-private fit of the same objective (``epsilon=np.inf``); read what the fit spent.

Nothing is fitted on the data outside the private fit: the bound on the rows that the
sensitivity needs (``data_norm="auto"``) is estimated privately inside the fit's budget, and the
fit's ``epsilon_`` covers it. See :doc:`/user_guide/raw_data`, and
:ref:`sphx_glr_auto_examples_plot_pipeline.py` for a raw DataFrame with numeric and categorical
columns through a :class:`~skdp.pipeline.PrivatePipeline`.
"""

# %%
# Data: raw features, a training set and a test set
# -------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from skdp import DPLogisticRegression

X, y = load_breast_cancer(return_X_y=True)
X_private, X_test, y_private, y_test = train_test_split(
    X, y, test_size=0.25, random_state=0, stratify=y
)
norms = np.linalg.norm(X, axis=1)
print(f"{X_private.shape[0]} private training records, {X.shape[1]} features, "
      f"row norms {norms.min():.0f} to {norms.max():.0f}")

# %%
# A private fit at its defaults
# -----------------------------
# ``epsilon`` is the privacy budget of the fit; ``delta`` defaults to ``min(1e-5, 0.1 / n)``.
# Passing the public label set ``classes`` avoids reading the labels from the private ``y``.
clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
clf.fit(X_private, y_private)
print(f"test accuracy at epsilon=1: {clf.score(X_test, y_test):.3f}")
print(f"row bound estimated privately: data_norm_ = {clf.data_norm_:.0f}")

# %%
# What the fit spent
# ------------------
# ``epsilon_`` and ``delta_`` are what the accountant charged for the whole fit: the private
# median behind ``data_norm_`` and the optimizer's noisy steps, composed (never more than
# asked). ``privacy_record_`` says what was released, how often, with which noise and under
# which neighbouring relation.
record = clf.privacy_record_
bounds = record.details["private_bounds"]["data_norm"]
print(f"epsilon spent: {clf.epsilon_:.4f} at delta {clf.delta_:.1e}")
print(f"  of which the data_norm median: exponential mechanism with epsilon {bounds['epsilon']:.3f}")
print(f"  and the optimizer: {record.details['optimizer_epsilon']:.4f}")
print(f"mechanism: {record.mechanism}, {record.n_steps} noisy steps, sampling: {record.sampling}")
print(f"neighbouring relation: {record.relation}")

# %%
# The same objective without noise
# --------------------------------
# ``epsilon=np.inf`` adds no noise (and uses the exact largest row norm, since there is nothing
# to protect) and runs the optimizer to the optimum of the same regularised objective as
# :class:`sklearn.linear_model.LogisticRegression`: the price of privacy is the gap between the
# two scores.
exact = DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(X_private, y_private)
print(f"test accuracy without privacy: {exact.score(X_test, y_test):.3f}")

# %%
# Several seeds
# -------------
# A private model is random: report the spread over seeds, not one lucky fit.
models = [
    DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=seed).fit(X_private, y_private)
    for seed in range(5)
]
scores = [m.score(X_test, y_test) for m in models]
print(f"epsilon=1 over 5 seeds: {np.mean(scores):.3f} +- {np.std(scores):.3f}")

# %%
# The coefficients
# ----------------
# Each private model is the non-private optimum moved by the noise (and by the fixed number of
# steps the budget affords): the coefficients of the five seeds scatter around those of
# ``epsilon=np.inf``. With 426 raw training records the noise is of the size of the coefficients
# themselves; it shrinks as n or epsilon grows.
fig, ax = plt.subplots(figsize=(7, 4))
features = np.arange(X.shape[1])
for seed, m in enumerate(models):
    ax.plot(features, m.coef_.ravel(), marker=".", linestyle="none", color="tab:blue",
            alpha=0.6, label="epsilon = 1 (5 seeds)" if seed == 0 else None)
ax.plot(features, exact.coef_.ravel(), marker="o", linestyle="-", color="k",
        label="epsilon = inf")
ax.axhline(0.0, color="grey", linewidth=0.5)
ax.set_xlabel("feature")
ax.set_ylabel("coefficient")
ax.set_title("DPLogisticRegression on breast cancer: private and exact coefficients")
ax.legend()
fig.tight_layout()
plt.show()
