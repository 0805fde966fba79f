"""Statistics of a membership-inference audit: Clopper-Pearson intervals and epsilon lower bounds.

An (epsilon, delta)-DP mechanism M satisfies, for neighbours D, D' and every set S of outputs,
``P[M(D) in S] <= e^epsilon P[M(D') in S] + delta`` and the same with D and D' swapped. A
membership test "the canary is IN when the score exceeds t" turns the true and false positive
rates of the test into a lower bound on epsilon (Kairouz et al. 2015; Jagielski et al. 2020;
Nasr et al. 2021)::

    epsilon >= log((TPR - delta) / FPR) = log((1 - delta - FNR) / FPR)

and symmetrically ``log((1 - delta - FPR) / FNR)`` (and the same two with the test reversed).
With finitely many fits the rates are estimated: a one-sided Clopper-Pearson bound at level
``1 - alpha/2`` for each of the two rates makes the bound hold with probability at least
``confidence = 1 - alpha``.

The Clopper-Pearson piece follows jax_privacy ``auditing.py`` and TF Privacy
``privacy_tests/epsilon_lower_bound.py`` (Apache-2.0); re-implemented on scipy only.
"""

from dataclasses import dataclass
import math

import numpy as np
from scipy import optimize, special, stats

__all__ = [
    "clopper_pearson",
    "EpsilonLowerBound",
    "epsilon_lower_bound",
    "gaussian_epsilon",
    "gaussian_mu",
]

#: The four tests of a threshold t on the score s. "in>" means: declare IN when s > t; the bound
#: compares P_in(S) with P_out(S) for S = {s > t}. The suffix "|swap" is the inequality with the
#: roles of D and D' exchanged (DP is symmetric in the two neighbours).
_TESTS = ("in>", "in>|swap", "in<=", "in<=|swap")


def clopper_pearson(k, n, alpha, side="upper"):
    """One-sided exact (Clopper-Pearson) confidence bound on a binomial proportion.

    Parameters
    ----------
    k : int or array of int
        Number of successes.
    n : int or array of int
        Number of trials (> 0).
    alpha : float in (0, 1)
        The bound holds with probability at least ``1 - alpha``.
    side : {"upper", "lower"}

    Returns
    -------
    float or ndarray
        ``upper``: ``beta.ppf(1 - alpha, k + 1, n - k)`` (1 when k == n);
        ``lower``: ``beta.ppf(alpha, k, n - k + 1)`` (0 when k == 0).
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(n <= 0) or np.any(k < 0) or np.any(k > n):
        raise ValueError("clopper_pearson needs 0 <= k <= n and n > 0")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if side == "upper":
        with np.errstate(invalid="ignore"):
            out = np.where(k >= n, 1.0, special.betaincinv(k + 1.0, np.maximum(n - k, 1e-300), 1.0 - alpha))
    elif side == "lower":
        with np.errstate(invalid="ignore"):
            out = np.where(k <= 0, 0.0, special.betaincinv(np.maximum(k, 1e-300), n - k + 1.0, alpha))
    else:
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    return out[()] if out.ndim == 0 else out


@dataclass(frozen=True)
class EpsilonLowerBound:
    """An empirical lower bound on epsilon from a threshold membership test.

    Attributes
    ----------
    epsilon : float
        The lower bound (>= 0); it holds with probability ``confidence``.
    estimate : float
        The same bound from the raw rates, without the confidence correction (optimistic; a
        diagnostic, not a bound).
    confidence : float
    delta : float
    threshold : float
        The score threshold of the chosen test.
    test : str
        Which of the four tests was chosen (see :data:`_TESTS`).
    method : str
        ``"split"`` or ``"best"``.
    n_in, n_out : int
        Number of scores from D and from D' that the bound was computed on.
    in_above, out_above : int
        How many of them exceed ``threshold``.
    """

    epsilon: float
    estimate: float
    confidence: float
    delta: float
    threshold: float
    test: str
    method: str
    n_in: int
    n_out: int
    in_above: int
    out_above: int


def _counts_above(scores_sorted, thresholds):
    """Number of scores strictly above each threshold."""
    return scores_sorted.size - np.searchsorted(scores_sorted, thresholds, side="right")


def _bounds_table(in_sorted, out_sorted, thresholds, delta, alpha):
    """Lower bounds (shape (4, m)) of the four tests at each threshold, and the raw estimates."""
    n_in, n_out = in_sorted.size, out_sorted.size
    a_in = _counts_above(in_sorted, thresholds)  # IN scores in S = {s > t}
    a_out = _counts_above(out_sorted, thresholds)
    # (numerator count, its n, denominator count, its n) for P_num(S) <= e^eps P_den(S) + delta
    specs = (
        (a_in, n_in, a_out, n_out),  # in>: S = {s > t}
        (n_out - a_out, n_out, n_in - a_in, n_in),  # in>|swap: S^c under D' vs D
        (a_out, n_out, a_in, n_in),  # in<=: S under D' vs D
        (n_in - a_in, n_in, n_out - a_out, n_out),  # in<=|swap: S^c under D vs D'
    )
    half = alpha / 2.0
    lb = np.empty((4, thresholds.size))
    est = np.empty((4, thresholds.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        for r, (kn, nn, kd, nd) in enumerate(specs):
            num = clopper_pearson(kn, nn, half, "lower") - delta
            den = clopper_pearson(kd, nd, half, "upper")
            lb[r] = np.where(num > 0, np.log(num / den), -np.inf)
            num_raw = kn / nn - delta
            den_raw = kd / nd
            est[r] = np.where(num_raw > 0, np.log(num_raw / den_raw), -np.inf)
    return lb, est, (a_in, a_out)


def _candidate_thresholds(*score_arrays):
    """Midpoints between consecutive distinct scores, plus one below all and one above all.

    Midpoints (rather than the scores themselves) keep the chosen threshold in the middle of a
    gap, which matters for the split method: the evaluation scores are not the selection ones.
    """
    pooled = np.unique(np.concatenate(score_arrays))
    finite = pooled[np.isfinite(pooled)]
    if finite.size == 0:
        return np.array([0.0])
    with np.errstate(invalid="ignore"):
        mids = 0.5 * (pooled[:-1] + pooled[1:])
    mids = np.where(np.isfinite(mids), mids, np.where(pooled[1:] == np.inf, finite[-1] + 1.0,
                                                      finite[0] - 1.0))
    return np.unique(np.concatenate([[finite[0] - 1.0], mids, [finite[-1] + 1.0]]))


def epsilon_lower_bound(in_scores, out_scores, delta=0.0, confidence=0.95, method="split",
                        split_fraction=0.5):
    """Empirical epsilon lower bound from the scores of models trained with and without a canary.

    Parameters
    ----------
    in_scores : array-like of shape (n_in,)
        The test statistic of each model trained on D (with the canary). Infinite values are
        allowed (a diverged fit), NaN is not.
    out_scores : array-like of shape (n_out,)
        The test statistic of each model trained on the neighbour D'.
    delta : float in [0, 1), default=0.0
        The delta of the claim being audited.
    confidence : float in (0, 1), default=0.95
    method : {"split", "best"}, default="split"
        ``"split"``: the threshold and direction of the test are chosen on the first
        ``split_fraction`` of each score array and the bound is computed on the rest, so the
        confidence level is exact (the choice is independent of the scores it is evaluated on).
        ``"best"``: the best threshold over all scores, bound on the same scores (the practice
        of Jagielski et al. 2020 and Nasr et al. 2021; optimistic, since the confidence level
        does not account for the choice among thresholds).
    split_fraction : float in (0, 1), default=0.5

    Returns
    -------
    EpsilonLowerBound
    """
    in_scores = np.asarray(in_scores, dtype=float).ravel()
    out_scores = np.asarray(out_scores, dtype=float).ravel()
    if in_scores.size < 2 or out_scores.size < 2:
        raise ValueError("need at least two scores on each side")
    if np.isnan(in_scores).any() or np.isnan(out_scores).any():
        raise ValueError("scores must not be NaN (map a diverged fit to +inf or -inf: finite "
                         "scores are not required, only ordered ones)")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    alpha = 1.0 - confidence
    if method == "split":
        if not 0.0 < split_fraction < 1.0:
            raise ValueError(f"split_fraction must be in (0, 1), got {split_fraction}")
        k_in = max(1, min(in_scores.size - 1, int(round(split_fraction * in_scores.size))))
        k_out = max(1, min(out_scores.size - 1, int(round(split_fraction * out_scores.size))))
        sel_in, ev_in = np.sort(in_scores[:k_in]), np.sort(in_scores[k_in:])
        sel_out, ev_out = np.sort(out_scores[:k_out]), np.sort(out_scores[k_out:])
    elif method == "best":
        sel_in = ev_in = np.sort(in_scores)
        sel_out = ev_out = np.sort(out_scores)
    else:
        raise ValueError(f"method must be 'split' or 'best', got {method!r}")
    thresholds = _candidate_thresholds(sel_in, sel_out)
    lb, est, _ = _bounds_table(sel_in, sel_out, thresholds, delta, alpha)
    # choose by the bound on the selection scores; ties broken by the raw estimate
    score = np.where(np.isfinite(lb), lb, -1e300) + 1e-12 * np.where(np.isfinite(est), est, 0.0)
    r, m = np.unravel_index(int(np.argmax(score)), score.shape)
    t = thresholds[m : m + 1]
    lb_ev, est_ev, (a_in, a_out) = _bounds_table(ev_in, ev_out, t, delta, alpha)
    eps = float(lb_ev[r, 0])
    raw = float(est_ev[r, 0])
    return EpsilonLowerBound(
        epsilon=max(0.0, eps) if math.isfinite(eps) else 0.0,
        estimate=max(0.0, raw) if not math.isnan(raw) else 0.0,
        confidence=confidence,
        delta=float(delta),
        threshold=float(t[0]),
        test=_TESTS[r],
        method=method,
        n_in=int(ev_in.size),
        n_out=int(ev_out.size),
        in_above=int(a_in[0]),
        out_above=int(a_out[0]),
    )


def _gaussian_delta(eps, mu):
    """delta(eps) of the Gaussian mechanism with sensitivity / sigma = mu (Balle & Wang 2018)."""
    a = stats.norm.logcdf(-eps / mu + mu / 2.0)
    b = eps + stats.norm.logcdf(-eps / mu - mu / 2.0)  # log of e^eps Phi(.), no overflow
    return math.exp(a) * -math.expm1(min(0.0, b - a)) if a > -math.inf else 0.0


def gaussian_epsilon(mu, delta):
    """Exact epsilon at ``delta`` of a mu-GDP Gaussian mechanism (mean shift mu, unit variance).

    A reference for audits: an audit whose statistic is exactly ``N(0, 1)`` vs ``N(mu, 1)`` cannot
    certify more than this (Balle & Wang 2018, Thm. 8).

    Parameters
    ----------
    mu : float >= 0
        Sensitivity divided by the noise standard deviation.
    delta : float in (0, 1)

    Returns
    -------
    float
        The smallest epsilon with ``delta(epsilon) <= delta`` (inf for an infinite mu).
    """
    if mu <= 0:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    if _gaussian_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while _gaussian_delta(hi, mu) > delta:
        hi *= 2.0
        if hi > 1e6:
            return math.inf
    return float(optimize.brentq(lambda e: _gaussian_delta(e, mu) - delta, 0.0, hi, xtol=1e-12))


def gaussian_mu(epsilon, delta):
    """The mean shift mu of the Gaussian mechanism that is exactly (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)

    Returns
    -------
    float
        The inverse of :func:`gaussian_epsilon` in mu.
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError("gaussian_mu needs epsilon > 0 and delta in (0, 1)")
    hi = 1.0
    while _gaussian_delta(epsilon, hi) < delta:
        hi *= 2.0
    return float(optimize.brentq(lambda m: _gaussian_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-14))
