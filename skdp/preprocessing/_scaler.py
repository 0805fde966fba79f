"""PrivateRobustScaler: per-feature private bounds, clipping, and a map onto [-1, 1]."""

import math

import numpy as np
from numbers import Real

from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._dask import column_counts, compute, dask_features, is_dask, map_rows
from .._fit_state import keeps_state_on_error
from .._validation import OPEN_UNIT, POSITIVE_OR_INF, RANDOM_STATE, explained_data_errors
from ..ledger import PrivacyLedger
from ..privacy import ComposedEvent, ExponentialMechanismEvent, NonPrivateEvent, SelfComposedEvent
from ..privacy.quantiles import (
    cell_edges, em_epsilon, evidence_ratio, positive_grid, private_quantile, signed_grid,
)
from ._step import PrivateStepMixin
from .._warnings import warn

__all__ = ["PrivateRobustScaler", "PASSTHROUGH_EVIDENCE", "BAND_PASSTHROUGH_EVIDENCE",
           "CENTRE_GRID_LOG2_STEP"]

#: ``if_unreliable="passthrough"`` passes the features through when the quantiles have less
#: than this fraction of the evidence the reliability rule asks for
#: (``n epsilon_q min(q, 1 - q) < PASSTHROUGH_EVIDENCE * 2 ln(K / 0.05)``); between it and the
#: rule they are released with a warning. Fitted on public data (raw breast cancer, digits,
#: Adult at 500 and 1000 rows, wine quality at 500 to 2000 rows, epsilon 0.3 / 1 / 3, 3 seeds,
#: 21 cells): below 0.5 passing through was better or within a point in every cell (up to 28
#: points better on breast cancer); from 0.5 to 1 releasing was better by 4 to 5 points on Adult
#: and 0.12 of R^2 on wine at 2000 rows, worse by 12 points on digits (whose pixels share one
#: public scale: give ``bounds=(0, 16)`` there). With 1 (the rule itself) those Adult and wine
#: cells lose what the release gains them. The MAD band has its own threshold,
#: :data:`BAND_PASSTHROUGH_EVIDENCE`.
PASSTHROUGH_EVIDENCE = 0.5
#: The same threshold for the MAD band (``spread="mad"``, and ``"auto"`` below the quartiles'
#: reliability), on the evidence of the band's own releases. Fitted on public data in session 55
#: (``benchmarks/dev_rules_passthrough_band.py``, its decision rule written before the runs):
#: the raw-data pipeline at its defaults, the band released against passed through in every
#: cell of session 54's looked-at cases whose band evidence is in [0.1, 0.5) (25 cells, 10
#: seeds); the lowest of 0.4, 0.3, 0.2 and 0.1 with a mean gain >= 0 per task and no cell
#: losing more than 1 point (0.02 of R^2) beyond two standard errors was 0.4 (+0.009 accuracy,
#: +0.014 R^2 from 0.4 to 0.5; at 0.3 digits lost 22 points and wine's alcohol 0.06). Judged on
#: two fresh generated raw-like tables: +0.039 accuracy and +0.114 R^2 in their cells from 0.4
#: to 0.5, and the band lost up to 11 points of accuracy below 0.4.
BAND_PASSTHROUGH_EVIDENCE = 0.4
#: Spacing (log2 units) of the public grid of the features' private centres: consecutive
#: candidates differ by 2^(1/64), about 1.1%. The default grid of the quantiles (2^(1/4), 19%)
#: resolves a spread only down to about a fifth of the feature's magnitude: a column whose
#: quartiles both fall in one of its cells (wine density, 0.994 +- 0.003; pH, 3.19 +- 0.15; a
#: year) was scaled to an almost constant feature at every epsilon (session 38: raw wine's
#: alcohol R^2 0.45 at epsilon 100 against 0.90 without privacy). Released around a centre
#: within 0.55% of the median, the quartiles are resolved down to a spread of about 0.1% of
#: the magnitude, at the cost of one more release per feature (``centred_epsilons``).
CENTRE_GRID_LOG2_STEP = 1.0 / 64.0


def equal_evidence_epsilons(rho, n_features, releases, beta=0.05):
    """The exponential mechanisms' parameters of per-feature releases that together cost
    ``rho``-zCDP (``epsilon^2 / 8`` each) and have equal evidence
    (:func:`skdp.privacy.quantiles.evidence_ratio`, proportional to
    ``epsilon q / ln(K / beta)``): ``releases`` lists ``(q, K, count)``, a quantile with
    ``min(q, 1 - q) = q`` (the fit's effective q, at least 1 / n) released ``count`` times per
    feature on a grid of K candidates; one epsilon per entry, in its order. A function of
    public quantities only."""
    weights = [math.log(k / beta) / q for q, k, _ in releases]
    total = sum(count * w * w for (_, _, count), w in zip(releases, weights))
    scale = math.sqrt(8.0 * rho / (n_features * total))
    return [scale * w for w in weights]


def centred_epsilons(rho, n_features, q, n_quantile_candidates, n_centre_candidates,
                     beta=0.05):
    """``(epsilon_quantile, epsilon_centre)``: the exponential mechanisms' parameters of the
    ``2 * n_features`` quantiles of ``x - centre`` and the ``n_features`` centres that together
    cost ``rho``-zCDP (``epsilon^2 / 8`` each).

    The centre (a median, ``min(q, 1 - q) = 1/2``) gets the epsilon that gives it the evidence
    of the quantiles (:func:`equal_evidence_epsilons`) on its finer grid:
    ``epsilon_centre = epsilon_quantile * 2 q ln(K_centre / beta) / ln(K_quantile / beta)``
    (0.65 for the quartiles and the default grids), so neither release is the weaker one. A
    function of public quantities only.
    """
    eps_q, eps_c = equal_evidence_epsilons(
        rho, n_features, [(q, n_quantile_candidates, 2), (0.5, n_centre_candidates, 1)], beta)
    return eps_q, eps_c


def _spike_width(lo, grid):
    """The width the grid gives a spike at ``lo`` (quantiles that coincide): the width of the
    grid interval that holds it (1 beyond the grid's last candidate). Public: a function of the
    released value and the public grid."""
    i = np.searchsorted(grid, lo, side="right")
    inside = (i >= 1) & (i < grid.size)
    j = np.clip(i, 1, grid.size - 1)
    return np.where(inside, grid[j] - grid[j - 1], np.where(i < 1, grid[1] - grid[0], 1.0))


class PrivateRobustScaler(PrivateStepMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each numeric feature onto [-1, 1] with private, robust bounds.

    The private counterpart of :class:`sklearn.preprocessing.RobustScaler` followed by
    clipping. For every feature j it releases a private centre ``m_j`` (the median, on a fine
    public log-spaced grid of ratio 2^(1/64),
    :data:`~skdp.preprocessing.CENTRE_GRID_LOG2_STEP`), then two private quantiles of
    ``x_j - m_j`` (by default the quartiles) on the default log-spaced grid (ratio
    2^(1/4)), giving ``a_j``, ``b_j``, all with the exponential mechanism, each candidate scored
    by its cell (:func:`skdp.privacy.quantiles.private_quantile` with ``cells=True``: a feature
    concentrated between two candidates gets the nearest one rather than a uniform pick over
    the grid, which released bounds up to +-1e10 for 2020 +- 1). Released around the centre,
    the quartiles resolve a spread down to about 0.1% of the feature's magnitude (a density
    0.994 +- 0.003, a year); on the 2^(1/4) grid directly they could not tell apart two values
    less than about a fifth of their magnitude apart, and such a feature came out almost
    constant at every epsilon. It then sets the bounds to Tukey's fences
    ``[a_j - fence * (b_j - a_j), b_j + fence * (b_j - a_j)]``, clips the feature to them and maps
    them affinely onto [-1, 1]. No private mean or variance is needed, every output row has norm
    at most ``sqrt(n_features)`` (a public bound the next estimator can use for free), and the
    transform is row-wise, so a model fitted after it keeps its sensitivity argument.

    Reliability: the ``n_features`` centres and ``2 * n_features`` quantiles share the budget
    (``centred_epsilons``: each centre gets the epsilon that makes it as reliable as a
    quartile, 0.65 of a quartile's), and a quartile needs about ``n * epsilon_q / 4 >= 18``
    records (:func:`skdp.privacy.quantiles.is_reliable`). At epsilon 1 with the default pipeline
    share (10%) that is about 3,900 records for 30 features and 1,750 for 6 (about
    ``715 * sqrt(n_features)``; 10% more than the quartiles alone would need).

    With fewer rows (``spread="auto"``, the default) it releases a MAD band instead: the
    centre, the centre's offset (a median of ``x_j - m_j`` on the 2^(1/4) grid, which resolves
    what the centre's grid cannot, such as a density's 0.994 +- 0.002) and the median of
    ``|x_j - m_j|`` around the corrected centre on the non-negative 2^(1/4) grid, all three
    medians with equal evidence (:func:`equal_evidence_epsilons`), about 1.65 times a
    quartile's at the same budget, so it is reliable from about 60% of the rows. The bounds are
    ``m_j +- (1 + 2 fence) MAD_j`` (Tukey's fences for a symmetric feature). Where the
    quartiles are reliable they are kept: their fences follow a skewed feature, which the
    symmetric band does not (``benchmarks/dev_rules_scaler_spread.py``: the band
    gained up to 0.3 of R^2 and 25 points of accuracy where the quartiles would pass through,
    and lost up to 0.035 of R^2 where they are reliable).

    Below half the evidence the reliability rule asks for (:data:`PASSTHROUGH_EVIDENCE`; 0.4 of
    it for the MAD band, :data:`BAND_PASSTHROUGH_EVIDENCE`) the released values are noise (on
    426 rows of raw breast cancer, quartiles off by factors up to 2^30, and a model at the
    majority class), so by default
    (``if_unreliable="passthrough"``) the scaler releases nothing, warns, and passes its
    features through unscaled: a skdp estimator after it bounds the rows itself
    (``data_norm="auto"``, one private median for all features) with the budget the scaler did
    not spend. Between that threshold and the rule the releases are made with a warning.
    Every decision reads only public quantities (n, the number of features, the budget, the
    grid sizes). Scale few columns privately, and give public bounds for the others when they
    are known. See :ref:`raw_data`.

    A feature whose two quantiles coincide (a spike, such as a mostly-zero "capital gain") gets
    the width of the grid's interval that holds the spike as its spread: the output is then
    close to an indicator of "above the spike".

    Parameters
    ----------
    epsilon : float > 0 or np.inf, default=1.0
        Budget of a fit on its own (inside a :class:`skdp.pipeline.PrivatePipeline`, the
        pipeline's share replaces it). The releases share it on the zCDP scale, at equal
        evidence. ``np.inf``: exact quantiles (the exact band under ``spread="mad"``; the
        quartiles under ``"auto"``, which are reliable there), no privacy.
    delta : float in (0, 1) or None, default=None
        Delta at which ``epsilon_`` is reported; None: ``min(1e-5, 0.1 / n_samples)``.
    bounds : None or array-like of shape (n_features, 2) or (2,), default=None
        Public bounds (low, high) per feature (or one pair for all): no quantile is released,
        the fit costs nothing (``epsilon_ = 0``). They must not be derived from the private data.
    quantile_range : tuple (q_low, q_high), default=(25.0, 75.0)
        The two quantiles, in percent, as for RobustScaler. Medians and quartiles are reliable
        with few records; extreme quantiles need many more (see :mod:`skdp.privacy.quantiles`).
    fence : float >= 0, default=1.5
        Bounds are the quantiles widened by ``fence`` times their distance (1.5: Tukey's fences,
        about 2.7 standard deviations from the centre for normal data).
    spread : {"auto", "quantiles", "mad"}, default="auto"
        How the spread is released around the centre. ``"quantiles"``: the two quantiles of
        ``quantile_range``, and fences ``fence`` times their distance beyond them.
        ``"mad"``: the centre's offset and the ``(q_high - q_low) / 100``-quantile of
        ``|x - centre|`` (the MAD for the default range), and bounds ``centre +- (1 + 2 fence)``
        times it: three medians per feature, reliable from fewer rows. ``"auto"``:
        ``"quantiles"`` where they meet the reliability rule at this n, number of features and
        budget, ``"mad"`` below it. Not used with a ``grid`` (its quantiles are released on it
        directly).
    if_unreliable : {"passthrough", "scale"}, default="passthrough"
        What to do when the quantiles would be far from reliable by the public rule above
        (less than :data:`PASSTHROUGH_EVIDENCE` of the evidence it asks for, or
        :data:`BAND_PASSTHROUGH_EVIDENCE` for the MAD band):
        ``"passthrough"``: release nothing, spend nothing, warn, and pass the features through
        unchanged; ``"scale"``: release them anyway, with a warning. Between that and the rule
        they are released, with a warning, either way.
    grid : array-like or None, default=None
        Public, strictly increasing candidates for the quantiles, released on them directly (no
        centres; the two quantiles share the whole budget); None: the centred releases above,
        on :func:`skdp.privacy.quantiles.signed_grid` (magnitudes 2^-16 to 2^32, ratio 2^(1/4);
        the centres on the same range at ratio 2^(1/64)).
    random_state : int, RandomState, Generator or None, default=None
    secure_mode : bool, default=False
        Draw the noise from randomgen's ChaCha20 (see the estimators).
    ledger : PrivacyLedger or None, default=None
        Charged with the fit's event when fitted on its own.

    Attributes
    ----------
    bounds_ : ndarray of shape (n_features, 2)
        The clipping bounds (public, or released by the mechanism).
    quantiles_ : ndarray of shape (n_features, 2) or None
        The released quantiles, centres added back; under the MAD band, ``centre -+ MAD``
        (None with public ``bounds`` or when passing through).
    centres_ : ndarray of shape (n_features,) or None
        The released centres, with their released offsets under the MAD band (None without
        them: a user's ``grid``, public ``bounds``, passing through, or ``epsilon=np.inf``).
    passthrough_ : bool
        Whether the features pass through unscaled (see ``if_unreliable``); ``bounds_`` is
        then ``(-inf, inf)`` for every feature.
    epsilon_, delta_ : float
        The step's own spend (0 with public bounds).
    dp_event_ : DPEvent
    privacy_record_ : PrivacyRecord
    n_features_in_ : int
    feature_names_in_ : ndarray of str
    """

    _parameter_constraints: dict = {
        "epsilon": [POSITIVE_OR_INF],
        "delta": [OPEN_UNIT, None],
        "bounds": ["array-like", None],
        "quantile_range": [tuple, list],
        "fence": [Interval(Real, 0, None, closed="left")],
        "if_unreliable": [StrOptions({"passthrough", "scale"})],
        "spread": [StrOptions({"auto", "mad", "quantiles"})],
        "grid": ["array-like", None],
        "random_state": RANDOM_STATE,
        "secure_mode": ["boolean"],
        "ledger": [PrivacyLedger, None],
    }

    def __init__(
        self, epsilon=1.0, delta=None, bounds=None, quantile_range=(25.0, 75.0), fence=1.5,
        grid=None, random_state=None, secure_mode=False, ledger=None, if_unreliable="passthrough",
        spread="auto",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.quantile_range = quantile_range
        self.fence = fence
        self.grid = grid
        self.random_state = random_state
        self.secure_mode = secure_mode
        self.ledger = ledger
        self.if_unreliable = if_unreliable
        self.spread = spread

    def _check_params(self, n_features):
        try:
            q_lo, q_hi = (float(v) for v in self.quantile_range)
        except (TypeError, ValueError):
            raise ValueError(
                f"quantile_range must be a pair (q_low, q_high) in percent; got "
                f"{self.quantile_range!r}"
            ) from None
        if not 0.0 <= q_lo < q_hi <= 100.0:
            raise ValueError(
                f"quantile_range must satisfy 0 <= q_low < q_high <= 100; got {self.quantile_range!r}"
            )
        fence = self.fence
        if isinstance(fence, bool) or not isinstance(fence, (int, float, np.number)) or not (
            math.isfinite(fence) and fence >= 0
        ):
            raise ValueError(f"fence must be a finite real >= 0; got {fence!r}")
        bounds = None
        if self.bounds is not None:
            bounds = np.asarray(self.bounds, dtype=np.float64)
            if bounds.shape == (2,):
                bounds = np.tile(bounds, (n_features, 1))
            if bounds.shape != (n_features, 2) or not np.all(np.isfinite(bounds)) or np.any(
                bounds[:, 0] >= bounds[:, 1]
            ):
                raise ValueError(
                    f"bounds must be finite pairs (low < high), of shape ({n_features}, 2) or "
                    f"(2,); got {self.bounds!r}"
                )
        grid = signed_grid() if self.grid is None else np.asarray(self.grid, dtype=np.float64)
        if grid.ndim != 1 or grid.size < 2 or np.any(np.diff(grid) <= 0):
            raise ValueError("grid must be a strictly increasing 1-D array of at least 2 values")
        return q_lo / 100.0, q_hi / 100.0, float(fence), bounds, grid

    @keeps_state_on_error
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the per-feature bounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features (no missing values: impute with a public constant first, for
            example ``SimpleImputer(strategy="constant", fill_value=0)``). A dask array or
            DataFrame stays on its workers: one pass counts, chunk by chunk, the values below
            and at every public cell edge of the grid of every feature, and the mechanisms run
            on the
            client on these counts (the same releases as in memory for the same seed).
        y : ignored

        Returns
        -------
        self
        """
        dask_input = is_dask(X)
        with explained_data_errors(self, X):  # (what to do with NaN, text columns)
            X = dask_features(self, X, reset=True) if dask_input else validate_data(
                self, X, dtype=np.float64)
        n, d = (int(v) for v in X.shape)
        q_lo, q_hi, fence, bounds, grid = self._check_params(d)
        self.passthrough_, self.centres_ = False, None
        if bounds is not None:  # public bounds: nothing is released
            self._set_bounds(bounds)
            return self._release_nothing()
        rho, delta, private, ledgers = self._start(n)
        if not private:
            quant = np.empty((d, 2))
            for j in range(d):  # exact quantiles (no privacy): on Dask, one column at a time
                col = np.asarray(compute(X[:, j])[0], np.float64) if dask_input else X[:, j]
                if dask_input and not np.all(np.isfinite(col)):
                    raise ValueError("Input X contains NaN or infinity.")
                if self.grid is None and self.spread == "mad":  # the exact band ("auto": quartiles)
                    centre = np.median(col)
                    quant[j] = centre + np.quantile(np.abs(col - centre), q_hi - q_lo) * np.array(
                        [-1.0, 1.0])
                else:
                    quant[j] = np.quantile(col, [q_lo, q_hi])
            event = NonPrivateEvent()
        else:
            # the default grid: quantiles around a private centre; a user's grid: on it directly
            centred = self.grid is None
            centre_grid = signed_grid(CENTRE_GRID_LOG2_STEP) if centred else None
            # the quantiles' scheme: two per feature, around the centres or on a user's grid
            spread_grid = grid
            q_eff = max(min(q_lo, 1.0 - q_lo, q_hi, 1.0 - q_hi), 1.0 / n)
            if centred:
                eps, eps_centre = centred_epsilons(rho, d, q_eff, grid.size, centre_grid.size)
            else:
                eps = em_epsilon(rho, 2 * d)
            # "mad": the centre, its offset, one quantile of |x - centre| (positive grid);
            # "auto": the quartiles where they meet the reliability rule, the MAD band below
            # (public: n, d, the budget and the grids)
            mad = centred and (self.spread == "mad" or (
                self.spread == "auto" and evidence_ratio(n, eps, q_eff, grid.size) < 1.0))
            if mad:
                q_spread = q_hi - q_lo  # the share of the values within the band's half-width
                spread_grid = positive_grid()
                q_eff = max(min(q_spread, 1.0 - q_spread), 1.0 / n)
                # the centre, its offset (a median of x - centre on the quantiles' grid, which
                # resolves what the centre grid cannot), the spread: equal evidence
                eps, eps_centre, eps_offset = equal_evidence_epsilons(
                    rho, d, [(q_eff, spread_grid.size, 1), (0.5, centre_grid.size, 1),
                             (0.5, grid.size, 1)])
            n_releases = (3 if centred else 2) * d
            # decided from public quantities only (n, d, the budget, the grid sizes)
            evidence = evidence_ratio(n, eps, q_eff, spread_grid.size)
            if evidence < 1.0:  # unreliable (is_reliable's rule)
                passthrough_below = BAND_PASSTHROUGH_EVIDENCE if mad else PASSTHROUGH_EVIDENCE
                if self.if_unreliable == "passthrough" and evidence < passthrough_below:
                    warn(
                        f"PrivateRobustScaler: {n_releases} private quantiles of {n} records "
                        f"(the spreads at epsilon {eps:.3g}) would be unreliable, so the features "
                        "pass through unscaled and the step spends nothing. A skdp estimator "
                        "after it then bounds the rows itself (data_norm='auto'), but a feature "
                        "in large units (a count, an amount) then dominates the rows and the "
                        "model can be constant. Pass public bounds "
                        "(PrivateRobustScaler(bounds=[(low, high), ...]), from the features' "
                        "documented ranges), scale fewer features, or use more data or budget",
                        UserWarning,
                    )
                    return self._pass_through(X if dask_input else None)
                warn(
                    f"PrivateRobustScaler: {n_releases} private quantiles of {n} records (the "
                    f"spreads at epsilon {eps:.3g}) are unreliable (they can land far from the "
                    "data); pass public bounds (PrivateRobustScaler(bounds=[(low, high), "
                    "...])), scale fewer features, or use more data or budget",
                    UserWarning,
                )
            rng = self._rng()

            def releases(epsilon, count):
                return SelfComposedEvent(ExponentialMechanismEvent(epsilon), count)

            if centred:
                self.centres_ = self._release(X, dask_input, [0.5], eps_centre, rng,
                                              centre_grid)[:, 0]
                # a public map of every value (a shift by the released centres, and under "mad"
                # the absolute value): a row still moves one rank, the same sensitivity
                if mad:
                    self.centres_ = self.centres_ + self._release(
                        X - self.centres_, dask_input, [0.5], eps_offset, rng, grid)[:, 0]
                    half = self._release(abs(X - self.centres_), dask_input, [q_spread], eps,
                                         rng, spread_grid)
                    quant = self.centres_[:, None] + half * np.array([-1.0, 1.0])
                    event = ComposedEvent((releases(eps_centre, d), releases(eps_offset, d),
                                           releases(eps, d)))
                else:
                    quant = self.centres_[:, None] + self._release(
                        X - self.centres_, dask_input, (q_lo, q_hi), eps, rng, grid)
                    event = ComposedEvent((releases(eps_centre, d), releases(eps, 2 * d)))
            else:
                quant = self._release(X, dask_input, (q_lo, q_hi), eps, rng, grid)
                event = releases(eps, 2 * d)
        # post-processing of the released quantiles with the public grid only
        lo, hi = np.minimum(quant[:, 0], quant[:, 1]), np.maximum(quant[:, 0], quant[:, 1])
        spike = hi <= lo
        if np.any(spike):  # the width of the (default or user's) grid's interval at the spike
            hi[spike] = lo[spike] + _spike_width(lo[spike], grid)
        width = hi - lo
        self.quantiles_ = quant
        self._set_bounds(np.column_stack([lo - fence * width, hi + fence * width]))
        self._finish(event, delta, ledgers, n)
        return self

    @staticmethod
    def _release(X, dask_input, quantiles, epsilon, rng, grid):
        """The private ``quantiles`` of every feature of X on ``grid`` (cells), feature by
        feature and in the order given: an array of shape (n_features, len(quantiles)). On
        Dask, every feature's counts at the grid's cell edges in one pass."""
        columns = column_counts(X, cell_edges(grid)) if dask_input else X.T
        return np.array([[private_quantile(col, q, epsilon, rng, grid, cells=True)[0]
                          for q in quantiles] for col in columns])

    def _pass_through(self, dask_X=None):
        """The identity, releasing nothing (a public decision: see ``if_unreliable``)."""
        if dask_X is not None:  # as validate_data in memory: one pass on the workers
            import dask.array as da

            if not bool(compute(da.isfinite(dask_X).all())[0]):
                raise ValueError("Input X contains NaN or infinity.")
        self.passthrough_ = True
        d = self.n_features_in_
        self.bounds_ = np.column_stack([np.full(d, -np.inf), np.full(d, np.inf)])
        return self._release_nothing()

    def _release_nothing(self):
        """The fitted state of a fit that released nothing (public bounds, or passing through):
        no quantiles, an empty event, no spend, no record."""
        self.quantiles_ = None
        self.dp_event_, self.epsilon_, self.delta_ = ComposedEvent(()), 0.0, 0.0
        self.privacy_record_ = None
        return self

    def _set_bounds(self, bounds):
        self.bounds_ = bounds
        self._centre = (bounds[:, 0] + bounds[:, 1]) / 2.0
        self._half = (bounds[:, 1] - bounds[:, 0]) / 2.0

    def transform(self, X):
        """Clip every feature to ``bounds_`` and map it onto [-1, 1] (a new array; a lazy dask
        array, chunk by chunk, for a dask input)."""
        check_is_fitted(self, "bounds_")
        if is_dask(X):
            X = dask_features(self, X, reset=False)
            if self.passthrough_:
                return X
            centre, half = self._centre, self._half
            return map_rows(lambda b: np.clip((b - centre) / half, -1.0, 1.0), X)
        X = validate_data(self, X, dtype=np.float64, reset=False, copy=self.passthrough_)
        if self.passthrough_:  # the identity (a new array, as for the scaled output)
            return X
        return np.clip((X - self._centre) / self._half, -1.0, 1.0)

    def inverse_transform(self, X):
        """Map [-1, 1] back onto ``bounds_`` (clipped values stay at the bounds)."""
        check_is_fitted(self, "bounds_")
        X = np.asarray(X, dtype=np.float64)
        if self.passthrough_:
            return X.copy()
        return X * self._half + self._centre

    def _skdp_output_norm_bound(self):
        """Public bound on the norm of a transformed row: every coordinate is in [-1, 1]; none
        when the features passed through."""
        return None if self.passthrough_ else math.sqrt(self.n_features_in_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
