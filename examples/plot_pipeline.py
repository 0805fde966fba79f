"""
A private model in a scikit-learn Pipeline
==========================================

skdp estimators are ordinary scikit-learn estimators: they go in a
:class:`~sklearn.pipeline.Pipeline`, can be cloned, pickled and cross-validated. The one thing a
pipeline must not do is *learn* its preprocessing from the private training set: a
:class:`~sklearn.preprocessing.StandardScaler` fitted inside the pipeline releases the means and
standard deviations of the private data, outside any privacy guarantee.

This example shows the two safe patterns:

1. preprocessing fitted on public (or separate) data and frozen with
   :class:`sklearn.frozen.FrozenEstimator`, so that ``Pipeline.fit`` does not refit it;
2. stateless transforms (:class:`~sklearn.preprocessing.Normalizer`, or a
   :class:`~sklearn.preprocessing.FunctionTransformer` with fixed constants), which learn nothing;

and a private regression whose target is bounded by public limits (``y_bounds``).
"""

# %%
# A classifier with a frozen, publicly fitted scaler
# --------------------------------------------------
import pickle

import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from skdp import DPLinearSVC, DPLogisticRegression, DPRidge

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y
)
# 60 records we are allowed to look at (say, a public reference sample)
X_public, X_private, y_public, y_private = train_test_split(
    X_train, y_train, train_size=60, random_state=0, stratify=y_train
)

public_scaler = FrozenEstimator(StandardScaler().fit(X_public))
pipe = make_pipeline(
    public_scaler,  # fit() of the pipeline leaves it untouched
    Normalizer(),  # rows of norm 1 = data_norm: nothing is clipped away
    DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0),
)
pipe.fit(X_private, y_private)
print(f"logistic regression, epsilon=1: test accuracy {pipe.score(X_test, y_test):.3f}")
print(f"spent epsilon {pipe[-1].epsilon_:.3f}")

# The scaler's statistics are those of the public sample, not of the private data:
print("scaler mean equals the public mean:",
      np.allclose(pipe[0].estimator.mean_, X_public.mean(axis=0)))

# %%
# Swapping the estimator or the optimizer
# ---------------------------------------
# ``set_params`` reaches any step and, for an optimizer instance, its own parameters
# (``optimizer__<name>``). A cloned pipeline is unfitted and independent of the original.
svc_pipe = clone(pipe).set_params(dplogisticregression=DPLinearSVC(
    epsilon=1.0, classes=[0, 1], random_state=0
))
svc_pipe.fit(X_private, y_private)
print(f"linear SVC, epsilon=1: test accuracy {svc_pipe.score(X_test, y_test):.3f}")

# %%
# Pickling keeps the model and its privacy record
# -----------------------------------------------
restored = pickle.loads(pickle.dumps(pipe))
print("same predictions after pickling:",
      np.array_equal(restored.predict(X_test), pipe.predict(X_test)))
print("record survives:", restored[-1].privacy_record_ == pipe[-1].privacy_record_)

# %%
# Regression with public bounds on the target
# -------------------------------------------
# :class:`~skdp.linear_model.DPRidge` clips every target to ``y_bounds`` and every row to
# ``data_norm``. The bounds must be public: for the diabetes data, the disease-progression score
# is documented to lie in 25..346, so we use that range, not ``y.min()`` and ``y.max()``.
# Here we also pick another optimizer by name: the dual coordinate method ``"dp_scd"``.
# (scikit-learn ships these features already centred and scaled with statistics of the whole
# data set; with real private data you would use public ranges instead.)
Xd, yd = load_diabetes(return_X_y=True)
Xd_train, Xd_test, yd_train, yd_test = train_test_split(Xd, yd, random_state=0)
ridge = make_pipeline(
    Normalizer(),
    DPRidge(epsilon=1.0, y_bounds=(25.0, 346.0), optimizer="dp_scd", random_state=0),
)
ridge.fit(Xd_train, yd_train)
print(f"ridge (dp_scd), epsilon=1: test R^2 {ridge.score(Xd_test, yd_test):.3f}")
exact = clone(ridge).set_params(dpridge__epsilon=np.inf).fit(Xd_train, yd_train)
print(f"ridge without privacy: test R^2 {exact.score(Xd_test, yd_test):.3f}")

# %%
# On a data set this small the private fit can score as well as the exact optimum of the
# objective, or slightly better: the noise and the small number of passes regularise too. Look
# at several seeds (as in :ref:`sphx_glr_auto_examples_plot_quickstart.py`) before concluding.
