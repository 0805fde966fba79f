"""The scikit-learn layer shared by the three estimators: validation, clipping, the optimizer call.

No numerics live here beyond preparing the clipped design matrix; the optimizer does the rest.
"""

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_delta, check_epsilon, check_positive, make_generator
from ..ledger import active_ledgers, charge, ledgers_to_charge, precheck
from ..optimizers import Budget, Problem, resolve_optimizer
from ..privacy import ACCOUNTANTS

__all__ = ["DPLinearModel", "clip_rows"]


def clip_rows(X, data_norm, intercept_scaling=None):
    """A new array: rows of X scaled to L2 norm <= data_norm, plus an intercept column.

    The caller's array is never modified. With ``intercept_scaling`` set, a constant column of
    that value is appended, so every row of the result has norm <= sqrt(data_norm^2 + s^2).
    """
    n, d = X.shape
    p = d + (intercept_scaling is not None)
    out = np.empty((n, p), dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(norms > data_norm, data_norm / norms, 1.0)
    np.multiply(X, factor[:, None], out=out[:, :d])
    if intercept_scaling is not None:
        out[:, d] = intercept_scaling
    return out


class DPLinearModel(BaseEstimator):
    """Base class of the skdp estimators (not for direct use).

    Subclasses define ``_encode_targets`` (targets -> loss and Y matrix), ``_regularisation``
    and the prediction methods.
    """

    # -- parameter checks ---------------------------------------------------------------------
    def _check_common_params(self, n_samples):
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, n_samples)
        data_norm = check_positive(self.data_norm, "data_norm")
        intercept_scaling = check_positive(self.intercept_scaling, "intercept_scaling")
        if self.accountant not in ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {ACCOUNTANTS}; got {self.accountant!r}")
        if self.derivative_clip != "auto":
            check_positive(self.derivative_clip, "derivative_clip")
        optimizer = resolve_optimizer(self.optimizer)
        return epsilon, delta, data_norm, intercept_scaling, optimizer

    def _validate_X_y(self, X, y, **kwargs):
        if sp.issparse(X):
            raise ValueError(
                f"{type(self).__name__} does not support sparse input yet; got a sparse "
                f"{type(X).__name__}. Pass a dense array, for example X.toarray()."
            )
        return validate_data(self, X, y, dtype=np.float64, **kwargs)

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        if sp.issparse(X):
            raise ValueError(
                f"{type(self).__name__} does not support sparse input yet; got a sparse "
                f"{type(X).__name__}. Pass a dense array, for example X.toarray()."
            )
        return validate_data(self, X, dtype=np.float64, reset=False)

    # -- the fit ------------------------------------------------------------------------------
    def _fit_problem(self, X, Y, loss, lam, clip_default, n_samples):
        """Clip, build the problem, run the optimizer, store the fitted attributes.

        Returns the coefficient matrix of shape (p, K) in the clipped design's parameterisation.
        """
        epsilon, delta, data_norm, s, optimizer = self._check_common_params(n_samples)
        self.optimizer_ = optimizer
        Xc = clip_rows(X, data_norm, s if self.fit_intercept else None)
        R = math.hypot(data_norm, s) if self.fit_intercept else data_norm
        private = math.isfinite(epsilon)
        if not private:
            clip = math.inf  # no privacy: no derivative clipping, the plain objective
        elif self.derivative_clip == "auto":
            clip = clip_default
        else:
            clip = float(self.derivative_clip)
        problem = Problem(
            X=Xc, Y=np.ascontiguousarray(Y, dtype=np.float64), loss=loss, lam=lam,
            row_norm_bound=R, clip=clip, fit_intercept=bool(self.fit_intercept),
        )
        budget = Budget(epsilon=epsilon, delta=delta, accountant=self.accountant)
        # The ledgers this fit charges (explicit, open contexts, carried to a worker process);
        # the ceiling is checked before the kernel from the target budget, then exactly.
        ledgers = ledgers_to_charge(
            getattr(self, "ledger", None), getattr(self, "_skdp_context_ledgers", ())
        )
        source = type(self).__name__
        precheck(ledgers, epsilon, delta, source)
        rng = make_generator(self.random_state, secure=bool(self.secure_mode))
        result = optimizer.solve(problem, budget, rng)
        record = result.record
        charge(ledgers, record, source, epsilon, delta, n_samples=int(n_samples))
        self.privacy_record_ = record
        self.dp_event_ = record.event
        self.epsilon_ = record.epsilon
        self.delta_ = record.delta
        self.noise_multiplier_ = record.noise_multiplier
        self.n_iter_ = int(result.n_iter)
        if self.verbose:
            print(
                f"[{type(self).__name__}] {optimizer.name}: {self.n_iter_} iterations, "
                f"epsilon spent {self.epsilon_:.4g} at delta {self.delta_:.3g} "
                f"({record.mechanism}, noise multiplier {self.noise_multiplier_:.4g})"
            )
        if self.verbose >= 2:
            print(
                f"[{type(self).__name__}] released {record.n_steps} noisy steps, sampling "
                f"{record.sampling}, sensitivity {record.sensitivity:.4g}, relation: "
                f"{record.relation}"
            )
            for ledger in ledgers:
                print(
                    f"[{type(self).__name__}] {ledger._label()}: {len(ledger)} charges, "
                    f"epsilon spent {ledger.spent():.4g} of {ledger.epsilon:.4g} at delta "
                    f"{ledger.delta:.3g}"
                )
        return result.coef

    # -- ledgers across processes and clones ----------------------------------------------------
    def __getstate__(self):
        # An estimator pickled while a ledger context is open (for example sent to a loky
        # worker by GridSearchCV(n_jobs=2)) carries the open ledgers, so that its fits in the
        # worker are charged to them too (see skdp.ledger). Never carried any further.
        state = dict(super().__getstate__())  # object.__getstate__ returns __dict__ itself
        state.pop("_skdp_context_ledgers", None)
        active = active_ledgers()
        if active:
            state["_skdp_context_ledgers"] = tuple(active)
        return state

    def __sklearn_clone__(self):
        new = super().__sklearn_clone__()
        carried = getattr(self, "_skdp_context_ledgers", None)
        if carried:
            new._skdp_context_ledgers = carried
        return new

    def _split_coef(self, W):
        """(coef (K, d), intercept (K,)) in the original feature space from W of shape (p, K)."""
        if self.fit_intercept:
            return W[:-1].T.copy(), W[-1] * float(self.intercept_scaling)
        return W.T.copy(), np.zeros(W.shape[1])

    def _decision(self, X):
        X = self._validate_X_predict(X)
        return X @ self.coef_.T + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags
