"""
A raw DataFrame through a private pipeline
==========================================

skdp estimators are ordinary scikit-learn estimators: they go in a pipeline, can be cloned,
pickled and cross-validated. What a pipeline must not do is *learn* its preprocessing from the
private training set without privacy: a :class:`~sklearn.preprocessing.StandardScaler` or a
``OneHotEncoder()`` fitted on the private data releases its means, scales and category lists
outside any guarantee.

:class:`~skdp.pipeline.PrivatePipeline` gives a whole pipeline one ``(epsilon, delta)``:

* numeric columns go through :class:`~skdp.preprocessing.PrivateRobustScaler` (private
  quartiles, clipped and mapped onto [-1, 1]);
* categorical columns are one-hot encoded with **public** categories (from the data set's
  documentation), which needs no privacy;
* the budget is split between the private steps, their events are composed, and the pipeline
  reports one ``epsilon_``; steps that would learn non-private state are refused.

The data is UCI Adult as raw pandas DataFrames when the files are available
(``skdp.datasets.load_adult_frame``; set ``SKDP_DATA_DIR``), otherwise a synthetic table of the
same kind.
"""

# %%
# A raw table with numeric and categorical columns
# ------------------------------------------------
import pickle

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdp import DPLogisticRegression, DPRidge
from skdp.datasets import ADULT_CATEGORIES, ADULT_NUMERIC, find_data_dir, load_adult_frame
from skdp.pipeline import NonPrivateStepError, make_private_pipeline
from skdp.preprocessing import PrivateRobustScaler


def synthetic_table(n, seed):
    """A stand-in for Adult: the same columns, random values (used when the files are absent)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(17, 90, n), "fnlwgt": rng.integers(10_000, 1_500_000, n),
        "education-num": rng.integers(1, 17, n),
        "capital-gain": np.where(rng.random(n) < 0.92, 0, rng.integers(100, 99_999, n)),
        "capital-loss": np.where(rng.random(n) < 0.95, 0, rng.integers(100, 4_000, n)),
        "hours-per-week": rng.integers(1, 99, n),
    })
    for col, cats in ADULT_CATEGORIES.items():
        frame[col] = rng.choice(cats, n)
    score = (frame["education-num"] - 10) / 3 + (frame["capital-gain"] > 0) * 2 \
        + (frame["marital-status"] == "Married-civ-spouse") * 1.5 - 1.5
    return frame, (score + rng.logistic(size=n) > 0).astype(int).to_numpy()


if find_data_dir(required=("adult.data", "adult.test")) is not None:
    X_train, y_train, X_test, y_test = load_adult_frame()
    source = "UCI Adult"
else:
    X_train, y_train = synthetic_table(20_000, 0)
    X_test, y_test = synthetic_table(5_000, 1)
    source = "synthetic stand-in for Adult"
print(f"{source}: {X_train.shape[0]} training rows, columns:")
print(X_train.dtypes.to_string())

# %%
# One budget for scaling, encoding and the model
# ----------------------------------------------
categorical = list(ADULT_CATEGORIES)
public_categories = [ADULT_CATEGORIES[c] for c in categorical]  # from adult.names, not the data


def make_model(epsilon):
    return make_private_pipeline(
        make_column_transformer(
            (PrivateRobustScaler(random_state=0), list(ADULT_NUMERIC)),
            (OneHotEncoder(categories=public_categories, handle_unknown="ignore"), categorical),
            sparse_threshold=0,  # dense output (the default picks it from the data's density)
        ),
        DPLogisticRegression(random_state=0),
        epsilon=epsilon, delta=1e-5,
    )


model = make_model(1.0).fit(X_train, y_train)
print(f"epsilon=1: test accuracy {model.score(X_test, y_test):.3f}, "
      f"epsilon spent {model.epsilon_:.4f} for the whole pipeline")
scaler = model[0].named_transformers_["privaterobustscaler"]
print(f"the scaler's share of the budget: {model.budget_shares_}")
print("private bounds of the numeric columns:")
print(pd.DataFrame(scaler.bounds_, index=list(ADULT_NUMERIC), columns=["low", "high"]))
print(f"public row bound used as data_norm by the model: {model[-1].data_norm_:.3f}")

# %%
# A smaller budget
# ----------------
small = make_model(0.1).fit(X_train, y_train)
print(f"epsilon=0.1: test accuracy {small.score(X_test, y_test):.3f}, "
      f"epsilon spent {small.epsilon_:.4f}")

# %%
# Non-private steps are refused
# -----------------------------
# A scaler fitted on the private data, or an encoder that reads the categories from it, would
# leak outside the guarantee. The pipeline refuses them and names the replacement.
for bad in (StandardScaler(), OneHotEncoder()):
    leaky = make_private_pipeline(
        make_column_transformer((bad, list(ADULT_NUMERIC) if bad.__class__ is StandardScaler
                                 else categorical)),
        DPLogisticRegression(),
    )
    try:
        leaky.fit(X_train, y_train)
    except NonPrivateStepError as exc:
        print(f"refused: {exc}\n")

# %%
# clone and pickle
# ----------------
# The pipeline is an ordinary scikit-learn estimator.
twin = clone(model)
restored = pickle.loads(pickle.dumps(model))
print("pickled pipeline predicts the same:",
      bool(np.all(restored.predict(X_test) == model.predict(X_test))))

# %%
# A private regression on raw targets
# -----------------------------------
# :class:`~skdp.linear_model.DPRidge` estimates the target bounds privately (``y_bounds="auto"``:
# median plus or minus 2.7 standard deviations for normal targets, from a private quartile of
# ``|y - median|``), inside the pipeline's budget. The targets
# are raw (25 to 346); scikit-learn ships diabetes' features centred and scaled (the user guide's
# raw-data page shows what 331 rows of the features as measured give).
Xd, yd = load_diabetes(return_X_y=True)
Xd_train, Xd_test, yd_train, yd_test = train_test_split(Xd, yd, test_size=0.25, random_state=0)
ridge = DPRidge(epsilon=1.0, delta=1e-5, random_state=0).fit(Xd_train, yd_train)
print(f"DPRidge on diabetes, raw targets: R^2 {ridge.score(Xd_test, yd_test):.3f}, "
      f"y_bounds_ = ({ridge.y_bounds_[0]:.0f}, {ridge.y_bounds_[1]:.0f}), "
      f"epsilon spent {ridge.epsilon_:.4f}")
