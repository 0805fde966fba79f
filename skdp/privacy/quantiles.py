"""Private quantiles: the exponential mechanism over a public grid of candidates.

The q-quantile of n values (n public) is released by the exponential mechanism (McSherry &
Talwar 2007; Smith 2011) over a **public**, data-independent list of candidates ``c_1 < ... <
c_K``, with utility ``u(c) = -max(#{x_i < c} - q n, q n - #{x_i <= c}, 0)``: minus the distance
from ``q n`` to the range of ranks c can take (so a value shared by many records, such as a
spike at 0, is the quantile when that range covers ``q n``). Changing, adding or removing one
record changes each count by at most one, so ``u`` has sensitivity 1 under every neighbouring
relation skdp uses; sampling ``c`` with probability proportional to ``exp(epsilon u(c) / 2)`` (here with
the Gumbel-max trick) is pure ``epsilon``-DP and ``epsilon^2 / 8``-zCDP
(:class:`~skdp.privacy.ExponentialMechanismEvent`).

Cells (``cells=True``). When the data sit between two candidates (targets of 1e6 +- 30 on a
grid of ratio 2^(1/4)), every candidate has the same utility, ``-min(q, 1 - q) n``, and the
release is the base measure's pick, orders of magnitude away however large n is. With cells,
each candidate stands for the values nearer to it than to its neighbours,
``[m_{k-1}, m_k]`` with ``m_k = (c_k + c_{k+1}) / 2`` (``m_0 = -inf``, ``m_K = +inf``;
:func:`cell_edges`), and ``u(c_k) = -max(#{x_i < m_{k-1}} - q n, q n - #{x_i <= m_k}, 0)``:
the candidate whose cell holds the q-quantile scores 0, so the release is the quantile rounded
to the grid. The counts are at public points, each moves by at most one: the same sensitivity,
the same event. Where the data spread over several candidates the two utilities pick the same
region, but the cells' edges fall elsewhere relative to the data, so the rounding can differ.
DPRidge's automatic target bounds, the row-norm median of ``data_norm="auto"`` (since session
19: row norms concentrate, and often sit between two candidates of its grid) and
:class:`~skdp.preprocessing.PrivateRobustScaler` score by cells (see
``skdp.linear_model._bounds.Y_BOUNDS_CELLS`` and ``DATA_NORM_CELLS``).

Reliability. Candidates outside the data all have utility about ``-min(q, 1 - q) n`` and there
are many of them, so the release lands far outside the data with probability about
``K exp(-epsilon min(q, 1 - q) n / 2)``; within the data its rank error is of order
``2 ln(K / beta) / epsilon`` with probability ``1 - beta``. Hence a rule of thumb: a quantile is
reliable when ``n epsilon min(q, 1 - q) >= 2 ln(K / beta)`` (about 20 for the default grids at
beta = 0.05). Medians (q = 0.5) need the fewest records; extreme quantiles many more. skdp's
automatic bounds therefore use medians and quartiles scaled by public factors, never extreme
quantiles.

Base measure. Candidates outside the data cannot be told apart by the counts, so with a uniform
choice an unreliable release is as likely 2^30 as 2^3 away from the data. A public base measure
``prior(c)`` (:func:`magnitude_prior`, favouring magnitudes near 1) breaks that tie: the release
is drawn with probability proportional to ``prior(c) exp(epsilon u(c) / 2)``. The base measure
does not depend on the data, so it cancels in the ratio of one candidate's probabilities on
neighbouring data sets: the mechanism is still pure epsilon-DP and epsilon-bounded-range
(hence ``epsilon^2 / 8``-zCDP), with the same event.
"""

import math

import numpy as np

from .._dask import CandidateCounts, chunk_counts, is_dask
from .._fit_state import log_release

from .events import ExponentialMechanismEvent

__all__ = [
    "GRID_LOG2_STEP",
    "GRID_LOG2_RANGE",
    "MAGNITUDE_PRIOR_DECAY",
    "magnitude_prior",
    "positive_grid",
    "signed_grid",
    "private_quantile",
    "em_epsilon",
    "evidence_ratio",
    "is_reliable",
    "quantile_utility",
    "quantile_distribution",
    "cell_edges",
]

#: Spacing of the default grids in log2 units: consecutive candidates differ by 2^(1/4) ~ 1.19.
GRID_LOG2_STEP = 0.25
#: The default grids span magnitudes 2^-16 (1.5e-5) to 2^32 (4.3e9).
GRID_LOG2_RANGE = (-16, 32)
#: Decay (nats per factor of 2 away from magnitude 1) of :func:`magnitude_prior`.
MAGNITUDE_PRIOR_DECAY = 0.5


def positive_grid(step=GRID_LOG2_STEP):
    """The default public candidates for a non-negative statistic (a norm, a spread):
    0 and ``2^k`` for k from -16 to 32 in steps of ``step`` (194 candidates for 1/4)."""
    lo, hi = GRID_LOG2_RANGE
    k = np.arange(int(round((hi - lo) / step)) + 1) * step + lo
    return np.concatenate([[0.0], 2.0**k])


def signed_grid(step=GRID_LOG2_STEP):
    """The default public candidates for a real statistic: ``-g``, 0 and ``g`` for every
    positive candidate g of :func:`positive_grid` (387 candidates for the default ``step``)."""
    g = positive_grid(step)[1:]
    return np.concatenate([-g[::-1], [0.0], g])


def em_epsilon(rho, count):
    """The epsilon of each of ``count`` exponential mechanisms that together cost ``rho``-zCDP
    (``count * epsilon^2 / 8 = rho``)."""
    if not (rho > 0 and count >= 1):
        raise ValueError(f"need rho > 0 and count >= 1; got rho={rho!r}, count={count!r}")
    return math.sqrt(8.0 * rho / count)


def evidence_ratio(n, epsilon, q, n_candidates, beta=0.05):
    """``n epsilon min(q, 1 - q) / (2 ln(K / beta))``: the evidence a quantile's release has, as
    a fraction of what the rule of thumb of this module asks for (reliable from 1).

    A function of public quantities only (n, epsilon, q, the number K of candidates), so it can
    decide a warning, or a step's behaviour, without touching the data.
    """
    return n * epsilon * min(q, 1.0 - q) / (2.0 * math.log(n_candidates / beta))


def is_reliable(n, epsilon, q, n_candidates, beta=0.05):
    """The rule of thumb of this module: ``n epsilon min(q, 1 - q) >= 2 ln(K / beta)``
    (:func:`evidence_ratio` at least 1)."""
    return evidence_ratio(n, epsilon, q, n_candidates, beta) >= 1.0


def cell_edges(candidates):
    """The public edges of the candidates' cells: the midpoints ``(c_k + c_{k+1}) / 2`` of
    consecutive candidates (K - 1 of them; see the module docstring)."""
    cand = np.asarray(candidates, dtype=np.float64)
    return 0.5 * cand[:-1] + 0.5 * cand[1:]  # halves first: no overflow near the float max


def quantile_utility(x, q, candidates, cells=False):
    """The utility ``u(c)`` of every candidate (sensitivity 1; see the module docstring).

    ``x`` is the data (an array, or a dask vector: counted chunk by chunk on the workers), or a
    :class:`~skdp._dask.CandidateCounts` already counted at the candidates (``cells=False``)
    or at their :func:`cell_edges` (``cells=True``). ``cells``: score each candidate by the
    ranks of its cell rather than of its own value.
    """
    cand = np.asarray(candidates, dtype=np.float64)
    points = cell_edges(cand) if cells else cand
    if isinstance(x, CandidateCounts):  # counts at these points, already summed
        below, upto, n = x
        if np.shape(below) != points.shape or np.shape(upto) != points.shape:
            raise ValueError(
                f"counts must be taken at the {points.size} "
                + ("cell edges (skdp.privacy.quantiles.cell_edges)" if cells else "candidates")
            )
    elif is_dask(x):  # values on Dask workers: counts per point, summed over the chunks
        below, upto, n = chunk_counts(x, points)
    else:
        x = np.asarray(x, dtype=np.float64).ravel()
        n = x.shape[0]
        xs = np.sort(x)
        below = np.searchsorted(xs, points, side="left")  # #{x_i < c}
        upto = np.searchsorted(xs, points, side="right")  # #{x_i <= c}
    if cells:  # the ranks of cell k: from #{x < m_{k-1}} to #{x <= m_k}
        below = np.concatenate([[0], below])
        upto = np.concatenate([upto, [n]])
    # distance from q n to the range of ranks: 0 at the quantile even on an atom of ties
    return -np.maximum(np.maximum(below - q * n, q * n - upto), 0.0)


def quantile_distribution(x, q, epsilon, candidates=None, log_prior=None, cells=False):
    """The exact output distribution of :func:`private_quantile` (probabilities of the
    candidates), for audits and tests."""
    cand = signed_grid() if candidates is None else np.asarray(candidates, dtype=np.float64)
    score = 0.5 * epsilon * quantile_utility(x, q, cand, cells) + _check_prior(log_prior, cand)
    p = np.exp(score - score.max())
    return p / p.sum()


def magnitude_prior(candidates, decay=MAGNITUDE_PRIOR_DECAY):
    """A public base measure over ``candidates`` favouring moderate magnitudes: the log-weight
    of ``c`` is ``-decay * |log2 |c||`` (``decay`` nats per factor of 2 away from 1), and 0 gets
    the weight of the smallest non-zero magnitude of the grid.

    Why: every candidate outside the data has the same utility (the counts saturate), so under
    a uniform base measure the chance of a release far outside the data grows with the number
    of such candidates: on a grid spanning 2^-16..2^32 a median of 331 records at epsilon 0.06
    lands at 2^20 or 2^30 about as often as next to the data, and a bound off by 2^20 ruins the
    model. The prior breaks the tie between candidates the data cannot tell apart in favour of
    magnitudes near 1, so that an unreliable release is a moderate one; where the data do
    speak (``n epsilon / 4`` nats for a median) they outweigh it. A function of the candidates
    only, never of the data.
    """
    cand = np.asarray(candidates, dtype=np.float64)
    mag = np.abs(cand)
    nonzero = mag > 0
    floor = np.log2(mag[nonzero].min()) if np.any(nonzero) else 0.0
    log2m = np.where(nonzero, np.log2(np.where(nonzero, mag, 1.0)), floor)
    return -float(decay) * np.abs(log2m)


def _check_prior(log_prior, cand):
    if log_prior is None:
        return 0.0
    lp = np.asarray(log_prior, dtype=np.float64)
    if lp.shape != cand.shape or not np.all(np.isfinite(lp)):
        raise ValueError("log_prior must be finite, one value per candidate")
    return lp


def private_quantile(x, q, epsilon, rng, candidates=None, log_prior=None, cells=False):
    """The q-quantile of ``x`` released by the exponential mechanism over public candidates.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite values (the private data). n is treated as public.
    q : float in [0, 1]
    epsilon : float > 0
        The mechanism's parameter: the release is pure epsilon-DP.
    rng : numpy.random.Generator
        The only source of randomness (Gumbel noise on the scores).
    candidates : array-like or None
        Sorted, public candidate values; None: :func:`signed_grid`. The release is always one of
        them. They must not be derived from the private data.
    log_prior : array-like of shape (n_candidates,) or None
        Public log-weights of a base measure over the candidates (for example
        :func:`magnitude_prior`); None: uniform. The release is drawn with probability
        proportional to ``prior(c) exp(epsilon u(c) / 2)``. The base measure cancels in the
        ratio of the probabilities of one candidate on neighbouring data sets, so the release is
        still epsilon-DP and epsilon-bounded-range (``epsilon^2 / 8``-zCDP), with the same event.
        It must not be derived from the private data.
    cells : bool, default=False
        Score each candidate by the ranks of its cell (the values nearer to it than to its
        neighbours) rather than of its own value: the release is then the quantile rounded to
        the grid also when the data sit between two candidates (module docstring). The same
        sensitivity and event.

    Returns
    -------
    value : float
        The released candidate.
    event : ExponentialMechanismEvent
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1]; got {q!r}")
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a finite real > 0; got {epsilon!r}")
    cand = signed_grid() if candidates is None else np.asarray(candidates, dtype=np.float64)
    if cand.ndim != 1 or cand.size == 0 or np.any(np.diff(cand) <= 0):
        raise ValueError("candidates must be a non-empty, strictly increasing 1-D array")
    prior = _check_prior(log_prior, cand)
    utility = quantile_utility(x, q, cand, cells)
    # Gumbel-max: argmax(eps u / 2 + log prior + G) is distributed as prior exp(eps u / 2) / Z.
    scores = 0.5 * epsilon * utility + prior + rng.gumbel(size=cand.shape[0])
    event = ExponentialMechanismEvent(float(epsilon))
    log_release(event)  # charged if the fit making it fails later (skdp._fit_state)
    return float(cand[int(np.argmax(scores))]), event
