"""The membership-inference auditor: many fits on D and on D', one epsilon lower bound."""

from dataclasses import dataclass, field
import math
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .._dask import is_dask
from ._bounds import EpsilonLowerBound, epsilon_lower_bound, gaussian_epsilon
from ._cache import memoized_accounting
from ._canary import canary_direction, null_neighbour, zero_row

__all__ = ["AuditResult", "audit_optimizer", "audit_estimator"]


@dataclass(frozen=True)
class AuditResult:
    """The outcome of an audit.

    Attributes
    ----------
    epsilon_lower_bound : float
        Empirical lower bound on epsilon, valid with probability ``confidence`` (see
        :func:`~skdp.audit.epsilon_lower_bound` for ``method``).
    claimed_epsilon, claimed_delta : float
        What the fits reported (``epsilon_`` / ``delta_`` or ``record.epsilon`` / ``record.delta``).
        The lower bound is computed at ``claimed_delta``.
    confidence : float
    bound : EpsilonLowerBound
        The details of the chosen membership test.
    gaussian_estimate : float
        The epsilon (at ``claimed_delta``) of a Gaussian mechanism with the standardised mean
        shift of the scores, ``|mean_in - mean_out| / sd``. An estimate, not a bound; close to the
        truth when the statistic is a Gaussian shift (full-batch Gaussian noise, saturated
        canary), so it shows how tight the accounting is with few fits. NaN when delta is 0 or a
        score is not finite.
    in_scores, out_scores : ndarray
        The statistic of each model fitted on D and on D' (a NaN statistic, from a diverged
        fit, is stored as +inf).
    seconds : float
        Wall time of the fits.
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_delta: float
    confidence: float
    bound: EpsilonLowerBound
    gaussian_estimate: float
    in_scores: np.ndarray = field(repr=False)
    out_scores: np.ndarray = field(repr=False)
    seconds: float = 0.0

    @property
    def n_fits(self):
        """Total number of fits (on D and on D')."""
        return int(self.in_scores.size + self.out_scores.size)

    @property
    def violated(self):
        """True when the lower bound exceeds the claim: the claimed guarantee is false (at the
        confidence level of the bound)."""
        return self.epsilon_lower_bound > self.claimed_epsilon

    def summary(self):
        """One line: bound vs claim."""
        return (
            f"epsilon lower bound {self.epsilon_lower_bound:.3f} ({self.confidence:.0%} confidence, "
            f"{self.n_fits} fits, method {self.bound.method}) vs claimed {self.claimed_epsilon:.3f} "
            f"at delta {self.claimed_delta:.3g}; Gaussian-shift estimate "
            f"{self.gaussian_estimate:.3f}" + ("  ** VIOLATION **" if self.violated else "")
        )


def _seeds(random_state, n_fits):
    ss = np.random.SeedSequence(random_state)
    children = ss.spawn(2 * n_fits)
    return children[:n_fits], children[n_fits:]


def _gaussian_estimate(in_scores, out_scores, delta):
    if not delta > 0 or not (np.isfinite(in_scores).all() and np.isfinite(out_scores).all()):
        return math.nan
    sd = math.sqrt(0.5 * (np.var(in_scores, ddof=1) + np.var(out_scores, ddof=1)))
    if not sd > 0:
        return math.inf if np.mean(in_scores) != np.mean(out_scores) else 0.0
    mu = abs(float(np.mean(in_scores) - np.mean(out_scores))) / sd
    return gaussian_epsilon(mu, delta)


def _result(in_scores, out_scores, claimed_eps, claimed_delta, confidence, method, seconds):
    # a diverged fit (NaN statistic) is an observable outcome too: it ranks above every score
    in_scores = np.nan_to_num(np.asarray(in_scores, dtype=float), nan=np.inf, posinf=np.inf,
                              neginf=-np.inf)
    out_scores = np.nan_to_num(np.asarray(out_scores, dtype=float), nan=np.inf, posinf=np.inf,
                               neginf=-np.inf)
    bound = epsilon_lower_bound(in_scores, out_scores, delta=claimed_delta, confidence=confidence,
                                method=method)
    return AuditResult(
        epsilon_lower_bound=bound.epsilon,
        claimed_epsilon=float(claimed_eps),
        claimed_delta=float(claimed_delta),
        confidence=confidence,
        bound=bound,
        gaussian_estimate=_gaussian_estimate(in_scores, out_scores, claimed_delta),
        in_scores=in_scores,
        out_scores=out_scores,
        seconds=seconds,
    )


def _import_optimizers():
    """Import every available optimizer module so that the accounting cache patches them all."""
    from ..optimizers import available_optimizers, get_optimizer_class

    for name in available_optimizers():
        try:
            get_optimizer_class(name)
        except Exception:  # noqa: BLE001 - a module being written must not break an audit
            pass


def audit_optimizer(optimizer, problem, budget, index, neighbour=None, n_fits=200, statistic=None,
                    confidence=0.95, method="split", random_state=0):
    """Audit an optimizer on a problem with a canary (the fast path: no estimator overhead).

    Parameters
    ----------
    optimizer : DPOptimizer
        Its ``solve`` is called ``2 * n_fits`` times with fresh, independent generators.
    problem : Problem
        D, with the canary at row ``index`` (see :func:`~skdp.audit.canary_problem`).
    budget : Budget
    index : int
        Row of the canary.
    neighbour : Problem or None
        D'. None: the canary row replaced by the null record (an all-zero row of X).
    n_fits : int, default=200
        Fits on each of D and D'.
    statistic : callable or None
        ``statistic(coef) -> float`` for a coefficient matrix of shape (p, K). None: the projection
        of the coefficients on the direction the canary pulls in (:func:`canary_direction`), the
        canary's signed margin.
    confidence : float, default=0.95
    method : {"split", "best"}, default="split"
        See :func:`~skdp.audit.epsilon_lower_bound`.
    random_state : int or None, default=0

    Returns
    -------
    AuditResult
    """
    if n_fits < 4:
        raise ValueError(f"n_fits must be >= 4, got {n_fits}")
    if neighbour is None:
        neighbour = null_neighbour(problem, index)
    if neighbour.X.shape != problem.X.shape or neighbour.Y.shape != problem.Y.shape:
        raise ValueError("D and D' must have the same shape (skdp's relation keeps n public)")
    if statistic is None:
        direction = canary_direction(problem, index)

        def statistic(coef):
            return float(np.dot(np.ravel(coef), direction))

    seeds_in, seeds_out = _seeds(random_state, n_fits)
    _import_optimizers()
    in_scores, out_scores, claims = [], [], set()
    t0 = time.perf_counter()
    with memoized_accounting():
        for seeds, prob, scores in ((seeds_in, problem, in_scores), (seeds_out, neighbour, out_scores)):
            for s in seeds:
                res = optimizer.solve(prob, budget, np.random.default_rng(s))
                scores.append(statistic(res.coef))
                claims.add((res.record.epsilon, res.record.delta))
    seconds = time.perf_counter() - t0
    if len(claims) != 1:
        raise RuntimeError(
            f"the fits reported different privacy spends {sorted(claims)}: the accounting depends "
            "on the data or on the seed"
        )
    eps, delta = claims.pop()
    return _result(in_scores, out_scores, eps, delta, confidence, method, seconds)


def _default_estimator_statistic(model, x, label):
    if getattr(model, "best_estimator_", False) is None:
        # a search that released no model (PrivateSearchCV with a Poisson K = 0): an outcome
        # whose probability does not depend on the data, mapped to one value
        return 0.0
    x = np.asarray(x, dtype=float)[None, :]
    if hasattr(model, "decision_function"):
        scores = np.asarray(model.decision_function(x), dtype=float)
        if scores.ndim == 2 and scores.shape[1] > 1:
            k = int(np.searchsorted(model.classes_, label))
            return float(scores[0, k])
        return float(np.ravel(scores)[0])
    # a regressor: its prediction (summed over the columns of a model of several targets, all
    # of which the canary pulls towards their upper bounds)
    return float(np.sum(model.predict(x)))


def _seeded_factory(estimator):
    """``seed -> clone of estimator`` with its ``random_state`` set to ``seed``; without one, each
    nested ``..__random_state`` (a pipeline's steps, a meta-estimator's estimator) set to a seed
    drawn from ``seed``."""
    params = estimator.get_params(deep=True) if hasattr(estimator, "get_params") else {}
    if "random_state" in params:
        def factory(seed):
            return clone(estimator).set_params(random_state=seed)
        return factory
    nested = sorted(k for k in params if k.endswith("__random_state"))
    if not nested:
        raise ValueError(
            f"cannot seed the fits of {type(estimator).__name__}: it has no random_state "
            "parameter, at the top or nested (get_params(deep=True)). Pass a factory instead: a "
            "callable seed -> unfitted estimator that draws all its noise from seed"
        )

    def factory(seed):
        # one seed per step: composition assumes the steps' noises independent, and only skdp's
        # PrivatePipeline separates the streams of steps given one integer
        children = np.random.SeedSequence(seed).spawn(len(nested))
        seeds = (int(c.generate_state(1)[0]) for c in children)
        return clone(estimator).set_params(**dict(zip(nested, seeds)))
    return factory


def audit_estimator(estimator, X, y, index, neighbour=None, n_fits=200, statistic=None,
                    confidence=0.95, method="split", random_state=0, claimed_epsilon=None,
                    claimed_delta=None):
    """Audit an estimator: fit it ``n_fits`` times on D and on D', bound epsilon from below.

    Parameters
    ----------
    estimator : estimator instance or callable
        An unfitted estimator (cloned for each fit with ``random_state`` set to a fresh seed), or a
        factory ``seed -> unfitted estimator``. An estimator without a ``random_state`` of its
        own, such as a :class:`~skdp.pipeline.PrivatePipeline` or a ``CalibratedClassifierCV``,
        gets a fresh seed in each nested ``random_state`` (``<step>__random_state``, distinct
        seeds for distinct steps); one without any ``random_state`` needs a factory.
    X, y : array-like or sparse matrix, array-like
        D, with the canary at row ``index`` (see :func:`~skdp.audit.make_canary`). A sparse X
        is passed to the estimator as it is (the sparse kernels are audited).
    index : int
        Row of the canary.
    neighbour : tuple (X', y') or None
        D'. None: row ``index`` of X replaced by an all-zero row (labels unchanged; for a
        sparse X, the row's entries removed, in X's format). That is a
        null record of skdp's relation only without an intercept, so an estimator with
        ``fit_intercept=True`` needs an explicit neighbour (and a claim valid for it).
    n_fits : int, default=200
        Fits on each of D and D'.
    statistic : callable or None
        ``statistic(fitted_model) -> float``. None: the canary's score, ``decision_function`` at
        the canary row (its class's column for a multiclass model) or ``predict`` for a regressor
        (summed over the columns of a model of several targets).
    confidence : float, default=0.95
    method : {"split", "best"}, default="split"
    random_state : int or None, default=0
    claimed_epsilon, claimed_delta : float or None
        The claim to audit. None: the fitted models' ``epsilon_`` and ``delta_``.

    Returns
    -------
    AuditResult
    """
    if n_fits < 4:
        raise ValueError(f"n_fits must be >= 4, got {n_fits}")
    # a sparse X stays sparse: the fits then run the sparse kernels (the path audited)
    dask_input = is_dask(X)  # the rows stay in dask arrays: the distributed path is audited
    X = X if sp.issparse(X) or dask_input else np.asarray(X)
    y = y if dask_input else np.asarray(y)
    if callable(estimator) and not hasattr(estimator, "fit"):
        factory = estimator
    else:
        factory = _seeded_factory(estimator)
    if neighbour is None:
        probe = factory(0)
        # the estimator's own fit_intercept, or a wrapped one's (a pipeline's step)
        params = probe.get_params(deep=True) if hasattr(probe, "get_params") else {}
        if getattr(probe, "fit_intercept", False) or any(
            key.endswith("__fit_intercept") and value is True for key, value in params.items()
        ):
            raise ValueError(
                "with fit_intercept=True an all-zero row is not a null record (its intercept column "
                "is not zero); audit with fit_intercept=False or pass neighbour=(X', y')"
            )
        X_out = zero_row(X, index)
        if sp.issparse(X):
            X_out = X_out.asformat(X.format)
        neighbour = (X_out, y.copy())
    X_out, y_out = neighbour
    x_canary = X[index].toarray().ravel() if sp.issparse(X) else X[index]
    label = y[index]
    if dask_input:  # the auditor's own canary, known to it
        x_canary, label = np.asarray(x_canary.compute()), np.asarray(label.compute())[()]
    if statistic is None:
        def statistic(model):
            return _default_estimator_statistic(model, x_canary, label)

    seeds_in, seeds_out = _seeds(random_state, n_fits)
    _import_optimizers()
    in_scores, out_scores, claims = [], [], set()
    t0 = time.perf_counter()
    with memoized_accounting():
        for seeds, (Xs, ys), scores in ((seeds_in, (X, y), in_scores), (seeds_out, (X_out, y_out), out_scores)):
            for s in seeds:
                seed = int(s.generate_state(1)[0])
                model = factory(seed).fit(Xs, ys)
                scores.append(statistic(model))
                claims.add((getattr(model, "epsilon_", None), getattr(model, "delta_", None)))
    seconds = time.perf_counter() - t0
    if claimed_epsilon is None or claimed_delta is None:
        if len(claims) != 1 or None in next(iter(claims)):
            raise ValueError(
                "pass claimed_epsilon and claimed_delta: the fitted models do not report a single "
                f"(epsilon_, delta_); got {sorted(claims, key=str)}"
            )
        eps, delta = next(iter(claims))
        claimed_epsilon = eps if claimed_epsilon is None else claimed_epsilon
        claimed_delta = delta if claimed_delta is None else claimed_delta
    return _result(in_scores, out_scores, claimed_epsilon, claimed_delta, confidence, method, seconds)
