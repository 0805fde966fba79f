"""
Quick start: a private logistic regression
==========================================

Fit :class:`~skdp.linear_model.DPLogisticRegression` on scikit-learn's breast-cancer data at
``epsilon=1``, compare it with the non-private fit of the same objective (``epsilon=np.inf``),
and read what the fit spent from its privacy record.

The features of this data set have very different scales, and a differentially private fit
needs rows of bounded norm. We standardise the features with statistics from a small *public*
sample (here: 60 records set aside and never used for training), so that the scaling does not
leak anything about the private training set, then scale every row to unit norm with the
stateless :class:`~sklearn.preprocessing.Normalizer`. See :doc:`/user_guide/preprocessing`.
"""

# %%
# Data: a public sample, a private training set, a test set
# ---------------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import Normalizer, StandardScaler

from skdp import DPLogisticRegression

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y
)
X_public, X_private, y_public, y_private = train_test_split(
    X_train, y_train, train_size=60, random_state=0, stratify=y_train
)

scaler = StandardScaler().fit(X_public)  # statistics of public data only
normalizer = Normalizer()  # per row: x / ||x||, no statistics at all


def prepare(X):
    return normalizer.transform(scaler.transform(X))


print(f"{X_private.shape[0]} private training records, {X.shape[1]} features")

# %%
# A private fit
# -------------
# ``epsilon`` is the privacy budget of the fit. ``delta`` defaults to
# ``min(1e-5, 0.1 / n)``. Rows are clipped to ``data_norm=1`` (our rows have norm 1 already).
# Passing the public label set ``classes`` avoids reading the labels from the private ``y``.
clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
clf.fit(prepare(X_private), y_private)
print(f"test accuracy at epsilon=1: {clf.score(prepare(X_test), y_test):.3f}")

# %%
# What the fit spent
# ------------------
# ``epsilon_`` and ``delta_`` are what the accountant charged (never more than asked), and
# ``privacy_record_`` says what was released, how often, with which noise and under which
# neighbouring relation.
record = clf.privacy_record_
print(f"epsilon spent: {clf.epsilon_:.4f} at delta {clf.delta_:.1e}")
print(f"mechanism: {record.mechanism}, {record.n_steps} noisy steps, sampling: {record.sampling}")
print(f"noise multiplier: {record.noise_multiplier:.3f} (noise std / sensitivity)")
print(f"neighbouring relation: {record.relation}")

# %%
# The same objective without noise
# --------------------------------
# ``epsilon=np.inf`` adds no noise and runs the optimizer to the optimum of the same
# regularised objective as :class:`sklearn.linear_model.LogisticRegression`: the price of
# privacy is the gap between the two scores.
exact = DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(prepare(X_private), y_private)
print(f"test accuracy without privacy: {exact.score(prepare(X_test), y_test):.3f}")

# %%
# Several seeds
# -------------
# A private model is random: report the spread over seeds, not one lucky fit.
models = [
    DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=seed).fit(
        prepare(X_private), y_private
    )
    for seed in range(5)
]
scores = [m.score(prepare(X_test), y_test) for m in models]
print(f"epsilon=1 over 5 seeds: {np.mean(scores):.3f} +- {np.std(scores):.3f}")

# %%
# The coefficients
# ----------------
# Each private model is the non-private optimum moved by the noise (and by the fixed number of
# steps the budget affords): the coefficients of the five seeds scatter around those of
# ``epsilon=np.inf``. With 338 training records the noise is of the size of the coefficients
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
