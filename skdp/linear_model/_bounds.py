"""Private bounds inside a fit: ``data_norm="auto"`` and ``DPRidge(y_bounds="auto")``.

A fit with automatic bounds is one mechanism in two parts, under one (epsilon, delta):

1. **Bounds.** Each bound is a private quantile (the exponential mechanism over a public log
   grid, :func:`skdp.privacy.quantiles.private_quantile`, with a public base measure favouring
   moderate magnitudes, :data:`BOUNDS_PRIOR_DECAY`; the candidates scored by their cells,
   :data:`Y_BOUNDS_CELLS` and :data:`DATA_NORM_CELLS`) scaled by a public factor: the median
   row norm, the median of y and the upper quartile of ``|y - median|``
   (:data:`Y_SPREAD_QUANTILE`), and where that quartile is 0 the median of the ``|y - median|``
   that are not 0 (the tail reserve, :func:`tail_plan`, charged whether or not it is drawn).
   Medians and quartiles are reliable at small n, where extreme
   quantiles are not (see :mod:`skdp.privacy.quantiles`).
   The bounds take a public share of the fit's budget on the zCDP scale
   (:func:`skdp.privacy.split.zcdp_budget`): :data:`DATA_NORM_SHARE` for ``data_norm``,
   :data:`Y_BOUNDS_SHARE` for the target bounds.
2. **Model.** The optimizer is calibrated to what is left
   (:func:`skdp.privacy.split.remaining_epsilon`); the composition of both parts is then
   computed by the accountant and must be within the fit's epsilon. When it is not (an optimizer
   whose event is not zCDP, such as a subsampled or Laplace one, can overshoot), the model is
   discarded and refitted with less (at the optimizer's own optimal Rényi order, then by basic
   composition, which always holds). This decision depends on public events only.

The fit's ``dp_event_`` composes both parts, ``epsilon_`` and the ledger charge are computed from
it, and the values used are fitted attributes (``data_norm_``, ``y_bounds_``). A number given by
the user is a public bound: it costs nothing and the fit is exactly the explicit-bounds fit.
At ``epsilon=np.inf`` there is nothing to protect and "auto" uses exact statistics (the largest
row norm, the range of y), so the fit is the non-private optimum.

Inside a :class:`skdp.pipeline.PrivatePipeline` the budget is the pipeline's, the events of the
private preprocessing steps come first, and a public bound on the rows (from the steps' fixed
output ranges) replaces the private ``data_norm`` estimate.
"""

from dataclasses import dataclass, replace
import math

import numpy as np
import scipy.sparse as sp

from .._dask import compute_chunk_sizes, dask_max, is_dask
from .._fit_state import log_stream
from .._streams import stream_state
from .._validation import check_delta, check_epsilon, check_positive, make_generator
from ..ledger import precheck
from ..optimizers import Budget
from ..privacy import (
    ComposedEvent, ExponentialMechanismEvent, PrivacyRecord, ZCDPEvent, compute_epsilon,
    rdp_epsilon_and_order,
)
from ..preprocessing._scaler import CENTRE_GRID_LOG2_STEP
from ..privacy.quantiles import (
    GRID_LOG2_STEP, em_epsilon, is_reliable, magnitude_prior, positive_grid, private_quantile,
    signed_grid,
)
from ..privacy.split import remaining_epsilon, remaining_rho, zcdp_budget
from .._warnings import warn

__all__ = [
    "DATA_NORM_SHARE",
    "DATA_NORM_FACTOR",
    "DATA_NORM_GRID_STEP",
    "DATA_NORM_CELLS",
    "Y_BOUNDS_SHARE",
    "Y_CENTRE_GRID_LOG2_STEP",
    "Y_BOUNDS_SPREAD_FACTOR",
    "Y_SPREAD_QUANTILE",
    "Y_BOUNDS_MAD_FACTOR",
    "Y_TAIL_SHARE",
    "Y_TAIL_MIN_FRACTION",
    "MAX_BOUND_SHARE",
    "Y_BOUNDS_CELLS",
    "BOUNDS_PRIOR_DECAY",
    "BOUNDS_PRIOR_DECAY_RELIABLE",
    "bound_share",
    "PipelinePlan",
    "PrivateFit",
    "resolve_data_norm",
    "resolve_y_bounds",
    "centre_grid_step",
    "resolve_target_bounds",
    "public_target_bounds",
    "tail_plan",
]

#: Share of the fit's zCDP budget (rho) spent on ``data_norm="auto"``: one private median over
#: a grid of ratio sqrt(2). At epsilon = 1, delta = 1e-5 that is an exponential mechanism with
#: epsilon 0.156, reliable (see :func:`skdp.privacy.quantiles.is_reliable`) from n = 195 rows.
DATA_NORM_SHARE = 0.10
#: Spacing (log2) of the data_norm grid: coarse, since the bound is scaled by a factor anyway,
#: and fewer candidates make the median reliable with fewer rows.
DATA_NORM_GRID_STEP = 0.5
#: ``data_norm_`` is this factor times the private median row norm: rows up to 1.5 times the typical
#: norm are kept whole, the larger ones scaled down (clipping near the median is what adaptive
#: clipping converges to, Andrew et al. 2021; 1.5 keeps most rows whole for a small cost in noise).
#: Session 14 tried 1.25 and 1 for the classifiers alone (a clipped row keeps its direction;
#: ``benchmarks/dev_rules_data_norm_factor.py``, all defaults, 5 seeds): Adult and digits gained
#: up to 3 points at small budgets, but raw breast cancer, whose row norm carries much of the
#: signal, lost 2 to 3 (1.25) and 6 to 9 (1) points at epsilon >= 0.3; kept at 1.5.
DATA_NORM_FACTOR = 1.5
#: Share of the fit's rho spent on ``y_bounds="auto"``: two private quantiles (the median of y
#: on the fine grid of :data:`Y_CENTRE_GRID_LOG2_STEP`, then the ``Y_SPREAD_QUANTILE`` quantile
#: of ``|y - median|`` on the default grid, ratio 2^(1/4)), at epsilon 0.11 each at epsilon = 1,
#: delta = 1e-5 (the median reliable from n = 425, the spread from n = 598; below,
#: :func:`bound_share` raises the share).
Y_BOUNDS_SHARE = 0.10
#: Spacing (log2) of the grid of the targets' private median: the scaler's centre grid
#: (:data:`skdp.preprocessing.CENTRE_GRID_LOG2_STEP`, ratio 2^(1/64); one rule for every private
#: centre), which rounds the median to within 0.55% of its magnitude. On the default grid (ratio
#: 2^(1/4)) until session 42 it was rounded to within 9%, and targets whose spread is below
#: that (years, temperatures in kelvin, a large constant offset) got bounds as wide as the
#: rounding, and a model whose intercept noise is as large. Measured
#: (``benchmarks/dev_rules_y_centre_grid.py``): see its report.
Y_CENTRE_GRID_LOG2_STEP = CENTRE_GRID_LOG2_STEP
#: The quantile of ``|y - median|`` that sets the targets' spread where its release is reliable
#: (:func:`~skdp.privacy.quantiles.is_reliable`, after :func:`bound_share`; a public decision).
#: It was the median (the MAD) everywhere until session 10: targets with an atom (a value shared
#: by half of them or more: zero-inflated amounts, integer ratings) have a MAD of 0, and the
#: bounds collapsed onto the atom without a warning (4000 rows, 60% zeros, epsilon 1: y_bounds
#: +-1e-4 and R^2 -0.67 against Ridge's 0.74). The upper quartile is positive unless three
#: quarters of the targets share one value; its release needs twice the data of a median.
#: Where it would be unreliable the spread stays the MAD (:data:`Y_BOUNDS_MAD_FACTOR`): an
#: unreliable upper quartile lands above the data more easily (a candidate above every value
#: scores ``-n / 4`` against the median's ``-n / 2``), and a spread too large costs a model
#: in proportion (331 rows of diabetes at epsilon 0.3, one seed of 40: a spread of 2e6 and R^2
#: -3.6e6), while one too small clips the targets (a bounded loss).
Y_SPREAD_QUANTILE = 0.75
#: Most of a fit's rho reserved for the targets' tail (:func:`tail_plan`): the median of the
#: ``|y - median|`` that are not 0, released only when the upper quartile of ``|y - median|``
#: is at the grid's floor (more than three quarters of the targets share the centre's value:
#: zero-inflated amounts, censored targets). The reserve is charged whether or not it is drawn
#: (a planned release, public from n and the budget), so the claim is the same in both branches.
#: Without it such targets got bounds of +-3.6e-5. Measured (``benchmarks/dev_rules_y_tail.py``,
#: 5 seeds, epsilon 1, before -> after): a censored linear target with 80% zeros -0.135 ->
#: 0.321 (Ridge 0.411), with 90% zeros -0.060 -> 0.142 (0.254), Adult's capital-gain (91.7%
#: zeros) -0.020 -> 0.007; fits without such an atom (wine, make_regression) within 0.001.
Y_TAIL_SHARE = 0.02
#: ... lowered to what makes that median reliable (:func:`~skdp.privacy.quantiles.is_reliable`)
#: for a tail of this fraction of the rows: at large n the reserve costs the model little
#: (at epsilon 1: 2% of rho up to about 11000 rows, 0.43% at 24420, 0.24% at 32561).
Y_TAIL_MIN_FRACTION = 0.05
#: ``y_bounds_`` is the private median of y plus or minus this factor times the private upper
#: quartile of ``|y - median|``: 2.35 of them are 2.7 standard deviations for normal targets
#: (as 4 MADs are), the reach of Tukey's fences (PrivateRobustScaler's default).
Y_BOUNDS_SPREAD_FACTOR = 2.35
#: ... and this factor times the private MAD where the upper quartile would be unreliable.
Y_BOUNDS_MAD_FACTOR = 4.0

#: The target bounds' medians score each candidate of the log grid by its cell
#: (:func:`skdp.privacy.quantiles.private_quantile` with ``cells=True``), so that targets sitting
#: between two candidates (1e6 +- 30) get the nearest candidate rather than a base-measure pick
#: (measured: DPRidge on 3000 rows of 1e6 +- 30 at epsilon 1 released bounds near +-10 in 20 of
#: 20 seeds, R^2 ~ -9e8; with cells the bounds held the data in 20 of 20).
Y_BOUNDS_CELLS = True
#: The row-norm median of ``data_norm="auto"`` scores by cells too (since session 19). Row
#: norms concentrate (standardised rows have norms near sqrt(d)), and on the grid of ratio
#: sqrt(2) they often sit between two candidates: scored as points no candidate then ranks near
#: n/2, the candidates outside the data outweigh the two around it, and a median that the
#: reliability rule counts as reliable (so the fit does not warn) lands anywhere on the grid.
#: Measured (``benchmarks/dev_rules_data_norm_cells.py``, all defaults, 10 seeds): Adult
#: standardised and one-hot, 500 rows at epsilon 0.3 (row norms near 3.3), released a median
#: more than 100 times off in 6 of 10 seeds, accuracy down to 0.41 (the majority class is 0.76);
#: the classifiers' fits below the majority class went from 17 and 16 of 240 to 5 and 5, their
#: mean accuracy up 1.1 and 0.9 points, DPRidge level. With cells, the candidate whose cell holds
#: the median scores 0: the release is the median rounded to the grid. The cost: raw breast
#: cancer, whose signal is the row norm itself and whose median norm (897) sits near the edge
#: of two cells, gets the lower candidate more often, 0.5 to 0.7 points at epsilon 1 over 40
#: splits (why session 10 had kept points).
DATA_NORM_CELLS = True

#: Most of a fit's rho that one automatic bound may take when its base share is too little for
#: the data set's size (see :func:`bound_share`): a DPRidge fit keeps at least 1 - 2 x 0.4 of
#: its budget for the model. (0.4 rather than 0.3: on 331 rows of diabetes at epsilon 0.3 the
#: median R^2 over 40 seeds goes from -3.6 to -0.5; at epsilon 1 the cap is not reached.)
MAX_BOUND_SHARE = 0.4

#: Decay of the public base measure of the bounds' exponential mechanisms
#: (:func:`skdp.privacy.quantiles.magnitude_prior`): a candidate 2^k away from magnitude 1
#: weighs exp(-0.5 |k|). Without it, at small n epsilon the medians land 2^20 or 2^30 from the
#: data (R^2 of -1e15 on 331 rows of diabetes at epsilon 0.3, -1.8e11 on 1000 rows of wine);
#: with it an unreliable median lands near magnitude 1, and a median backed by the data is
#: moved by less than one grid step (n epsilon / 4 nats of evidence against 0.5 nats per
#: octave). 0.3 still let one of 40 seeds release a spread of 2e6 on diabetes at epsilon 0.3.
BOUNDS_PRIOR_DECAY = 0.5
#: ... where the public rule says the median is reliable
#: (:func:`~skdp.privacy.quantiles.is_reliable`) the base measure only has to break
#: near-ties, and a strong one would outvote the data for values far from magnitude 1: with
#: 0.5 everywhere, DPRidge on 300 rows of targets 1e6 +- 3e5
#: at epsilon 1 (medians counted as reliable, no warning) released bounds that missed the data
#: in 19 of 20 seeds (R^2 -8.6), 1e5 +- 3e4 in 11 of 20.
BOUNDS_PRIOR_DECAY_RELIABLE = 0.1


def bound_share(share, n, count, n_candidates, rho, q=0.5):
    """The share of ``rho`` that ``count`` private q-quantiles of ``n`` records over
    ``n_candidates`` candidates get: ``share``, raised up to :data:`MAX_BOUND_SHARE` to what
    makes each quantile reliable by the rule of :func:`~skdp.privacy.quantiles.is_reliable`
    with failure probability 0.01 (``n eps min(q, 1 - q) >= 2 ln(K / 0.01)``): a release that
    lands outside the data is then a 1-in-100 event.

    A function of public quantities only (n, the budget, the grid size). At small n the base
    share gives an exponential mechanism close to its base measure over a grid that spans
    2^-16 to 2^32: bounds off by orders of magnitude and a model off by as much. A larger share
    of the same budget costs the model some noise and avoids that failure where it can be
    avoided; where it cannot, :data:`BOUNDS_PRIOR_DECAY` keeps the failure moderate.
    """
    needed_epsilon = 2.0 * math.log(n_candidates / 0.01) / (min(q, 1.0 - q) * max(n, 1))
    needed = count * needed_epsilon**2 / 8.0 / rho  # count * eps^2 / 8 = share * rho
    return min(max(share, needed), max(share, MAX_BOUND_SHARE))


#: Margin kept below the target epsilon when a fit has to be redone with less budget.
_REFIT_MARGIN = 1e-9

#: A pure-DP optimizer (``mechanism="laplace"``) after pure-DP releases (private bounds, a
#: pipeline's scaler) stays pure DP when their pure epsilon is at most this share of the
#: budget, leaving its steps at least half; above it (many releases that are cheap in zCDP but
#: not in pure epsilon: a scaler's quantiles of 30 features) the fit is (epsilon, delta)-DP, with
#: a warning. Both the share and the decision are public.
PURE_PRIOR_MAX_SHARE = 0.5


@dataclass(frozen=True)
class PipelinePlan:
    """What a :class:`~skdp.pipeline.PrivatePipeline` hands to its final estimator's fit (a fit
    outside a pipeline has the plan of :meth:`standalone`): held by the fit's
    :class:`PrivateFit` as ``plan``.

    Attributes
    ----------
    epsilon, delta : float
        The pipeline's budget (replaces the estimator's own ``epsilon`` and ``delta``).
    prior : tuple of DPEvent
        The events of the private steps fitted before (composed into the estimator's event).
    row_norm_bound : float or None
        A public bound on the norm of the rows the estimator receives, or None.
    chain_streams : frozenset
        The stream tags (:mod:`skdp._streams`) of the pipeline's earlier fits, which a warm
        start of the estimator continues.
    step_streams : frozenset
        The stream tags of the private steps fitted before the estimator in this fit: a warm
        start whose chain drew from one of them (or, seeded, may have: another session's
        chain) has no composition bound either.
    """

    epsilon: float
    delta: float
    prior: tuple = ()
    row_norm_bound: object = None
    chain_streams: frozenset = frozenset()
    step_streams: frozenset = frozenset()

    @classmethod
    def standalone(cls, estimator, n_samples):
        """The plan of a fit outside a pipeline: the estimator's own ``epsilon`` and ``delta``
        (checked; the default delta of ``n_samples`` rows), no earlier events, no public row
        bound, no earlier streams."""
        return cls(check_epsilon(estimator.epsilon), check_delta(estimator.delta, n_samples))


class PrivateFit:
    """The budget, generator, ledgers and released bounds of one fit (not public API).

    Created at the start of a fit: takes its :class:`PipelinePlan` (a pipeline's, or
    :meth:`PipelinePlan.standalone`, which checks the estimator's epsilon and delta), finds the
    ledgers to charge and prechecks them, and creates the fit's only random generator, which
    the bounds and then the optimizer draw from in turn.
    """

    def __init__(self, estimator, n_samples):
        plan = getattr(estimator, "_skdp_pipeline_plan", None)
        if plan is not None and hasattr(plan, "resolve"):
            plan = plan.resolve()  # a PrivatePipeline's plan, known once its steps are fitted
        self.plan = plan if plan is not None else PipelinePlan.standalone(estimator, n_samples)
        self.epsilon, self.delta = float(self.plan.epsilon), float(self.plan.delta)
        self.events = list(self.plan.prior)  # the plan's, then the fit's bounds (appended)
        self.private = math.isfinite(self.epsilon)
        self.rho = zcdp_budget(self.epsilon, self.delta) if self.private else math.inf
        self.ledgers = estimator._fit_ledgers()
        self.source = type(estimator).__name__
        self.accountant = estimator.accountant
        self.rng = make_generator(estimator.random_state, secure=bool(estimator.secure_mode))
        # the stream the fit draws from (secret: for the ledgers and the warm-start check only)
        self.stream = stream_state(self.rng, seeded=estimator.random_state is not None)
        log_stream(self.stream)  # a failed fit's charge carries it
        precheck(self.ledgers, self.epsilon, self.delta, self.source, stream=self.stream)
        self.bounds = {}  # name -> {"value", "epsilon"} of each private bound, for the record

    def quantile_plan(self, n, q, share, count, n_candidates):
        """``(epsilon, reliable)`` of a private q-quantile of ``n`` records released by
        :meth:`quantile`: public quantities only (n, q, the budget, the grid size)."""
        share = bound_share(share, n, count, n_candidates, self.rho, q)
        eps = em_epsilon(share * self.rho, count)
        return eps, is_reliable(n, eps, q, n_candidates)

    def quantile(self, values, q, share, count, candidates, name, cells=False):
        """A private q-quantile of ``values`` with ``share / count`` of the fit's rho, or more
        (see :func:`bound_share`) when the data set is too small for ``share``, drawn with the
        public base measure :func:`~skdp.privacy.quantiles.magnitude_prior` (the same
        epsilon-DP exponential mechanism: the base measure cancels in the ratio of neighbours);
        ``cells``: candidates scored by their cells
        (:func:`~skdp.privacy.quantiles.private_quantile`)."""
        n = np.shape(values)[0]
        eps, reliable = self.quantile_plan(n, q, share, count, len(candidates))
        if not reliable:
            warn(
                f"{self.source}: the private {name} of {n} records at epsilon {eps:.3g} is "
                "unreliable (it can land far from the data); pass a public bound instead of "
                '"auto", or use more data or a larger epsilon',
                UserWarning,
            )
        return self.quantile_at(values, q, eps, reliable, candidates, name, cells)

    def quantile_at(self, values, q, eps, reliable, candidates, name, cells=False):
        """A private q-quantile of ``values`` at the exponential mechanism's ``eps`` (a public
        number), with the base measure of a ``reliable`` release or of an unreliable one (a
        public decision: the decay of :func:`~skdp.privacy.quantiles.magnitude_prior`)."""
        decay = BOUNDS_PRIOR_DECAY_RELIABLE if reliable else BOUNDS_PRIOR_DECAY
        prior = magnitude_prior(candidates, decay)  # public: the grid and the decision above
        value, event = private_quantile(values, q, eps, self.rng, candidates, prior, cells)
        self.events.append(event)
        self.bounds[name] = {"value": value, "epsilon": eps}
        return value

    def charge_planned(self, eps, name):
        """Charge a planned quantile release at ``eps`` that a public event (an earlier release)
        made unnecessary: the claim then does not depend on which branch ran. Nothing is drawn."""
        self.events.append(ExponentialMechanismEvent(float(eps)))
        self.bounds[name] = {"value": None, "epsilon": eps}

    @property
    def n_prior(self):
        """The number of events released before the fit (a pipeline's private steps)."""
        return len(self.plan.prior)

    @property
    def prior(self):
        """The events released in this fit before the optimizer (None when there are none)."""
        return ComposedEvent(tuple(self.events)) if self.events else None

    def solve(self, optimizer, problem, callback=None, callback_every=1):
        """Run the optimizer on what the bounds left; returns (OptimizeResult, PrivacyRecord).

        Without private bounds (public bounds, or epsilon = inf) this is the optimizer's plain
        fit on the whole budget, bit for bit.
        """
        accountant = self.accountant
        prior = self.prior
        if prior is None or not self.private:
            budget = Budget(epsilon=self.epsilon, delta=self.delta, accountant=accountant)
            result = optimizer.solve(
                problem, budget, self.rng, callback=callback, callback_every=callback_every
            )
            return result, result.record
        # The exponential mechanism has no PLD form in dp-accounting (see
        # ExponentialMechanismEvent.to_dp_accounting): the whole fit is accounted with RDP.
        accountant = "rdp"
        prior_pure = prior.pure_epsilon()
        if optimizer.event_depends_on(problem):
            result, composed, budget = self._solve_adaptive(optimizer, problem, prior, callback,
                                                            callback_every, prior_pure)
            spent = compute_epsilon(composed, self.delta, accountant)
            last = result.extras.pop("_skdp_last_progress", [])
            pure = False
        else:
            result, composed, budget, spent, last, pure = self._solve_fixed_event(
                optimizer, problem, prior, callback, callback_every, prior_pure, accountant
            )
        opt = result.record
        details = dict(opt.details)
        details.update({
            "optimizer_epsilon": opt.epsilon,
            "optimizer_target_epsilon": budget.epsilon,
            "private_bounds": dict(self.bounds),
            "preprocessing_events": self.n_prior,
        })
        record = PrivacyRecord.from_event(
            composed, 0.0 if pure else self.delta, accountant, mechanism=opt.mechanism,
            noise_multiplier=opt.noise_multiplier, sensitivity=opt.sensitivity,
            n_steps=opt.n_steps, sampling=opt.sampling, details=details,
        )
        if record.epsilon > self.epsilon:  # pragma: no cover - checked above
            raise RuntimeError("composed epsilon over the target")
        if last:  # the last call, held back until the whole fit's epsilon was known
            callback(replace(last[0], epsilon=record.epsilon, delta=record.delta))
        return result, replace(record, relation=opt.relation)

    def _solve_fixed_event(self, optimizer, problem, prior, callback, callback_every, prior_pure,
                           accountant):
        """An optimizer whose event depends on n, the budget and its hyper-parameters only (not
        on the released bounds): plain composition of two fixed events. A refit with less (the
        first model discarded, never released) depends on these public events only."""
        target = remaining_epsilon(prior, self.epsilon, self.delta)
        # (a public decision: the releases' pure epsilon is a function of the plan)
        pure_possible = prior_pure is not None and prior_pure <= PURE_PRIOR_MAX_SHARE * self.epsilon
        for attempt in range(3):
            budget = Budget(epsilon=target, delta=self.delta, accountant=accountant)
            wrapped, last = self._wrap(callback, prior_pure)
            result = optimizer.solve(
                problem, budget, self.rng, callback=wrapped, callback_every=callback_every
            )
            event = result.record.event
            composed = ComposedEvent(tuple(self.events) + (event,))
            # a pure-DP optimizer (its own record at delta 0) after pure-DP releases stays pure
            # DP within epsilon (what mechanism="laplace" asks for), not merely within
            # (epsilon, delta) by the RDP conversion, where that leaves its steps enough
            pure = pure_possible and result.record.delta == 0.0
            spent = compute_epsilon(composed, 0.0 if pure else self.delta, accountant)
            if spent <= self.epsilon:
                break
            # Not a zCDP event: refitted with less, first with the bounds' RDP at the
            # optimizer's own best order, then by basic composition with the bounds' pure epsilon.
            if attempt == 0 and event.pure_epsilon() is None:
                _, order = rdp_epsilon_and_order(event, self.delta)
                extra, margin = float(prior.rdp(np.array([order]))[0]), _REFIT_MARGIN
            else:
                extra, margin = prior_pure, 1e-6
            target = min(target, self.epsilon - extra) * (1.0 - margin)
            if not target > 0:
                raise ValueError(
                    f"the private bounds and preprocessing spend the whole budget "
                    f"epsilon={self.epsilon:.4g} for this optimizer; give public bounds, a "
                    "larger epsilon or a smaller preprocessing share"
                )
        if result.record.delta == 0.0 and not pure:
            warn(
                f"{self.source}: a pure-DP optimizer (Laplace noise) after private releases "
                "(bounds, preprocessing) "
                + ("without a pure-DP guarantee" if prior_pure is None else
                   f"whose pure epsilon {prior_pure:.3g} is over {PURE_PRIOR_MAX_SHARE:g} of "
                   f"epsilon={self.epsilon:.4g}")
                + f": the fit is DP within epsilon={self.epsilon:.4g} at delta={self.delta:.3g}"
                ", not pure DP. Give public bounds (and no private preprocessing) for a pure-DP "
                "fit.",
                UserWarning,
            )
        return result, composed, budget, spent, last, pure

    def _solve_adaptive(self, optimizer, problem, prior, callback, callback_every, prior_pure):
        """An optimizer whose event may depend on the problem's constants, hence on the bounds
        released before it (the number of steps of dp_nag_opt, the Langevin bound of dp_sgld,
        dp_gdws's default step count on the squared loss, which reads the smoothness).

        Composition with a mechanism chosen from earlier releases is sound when that mechanism
        is rho-zCDP for one fixed rho whatever was released: the optimizer is calibrated to the
        epsilon of the public ``rho`` left (:func:`~skdp.privacy.split.remaining_rho`), its event
        must then be zCDP (RDP linear in the order) with at most that rho, and the fit reports
        ``ZCDPEvent(rho)``, the bound that holds for every released bound. An event of another
        kind (Poisson-subsampled or Laplace noise) is refused: nothing is released but the
        refusal, a function of the released bounds, which are charged to the fit's ledgers
        (:class:`~skdp._fit_state.charged_if_failed`).
        """
        rho = remaining_rho(prior, self.epsilon, self.delta)
        target = remaining_epsilon(prior, self.epsilon, self.delta)
        budget = Budget(epsilon=target, delta=self.delta, accountant="rdp")
        wrapped, last = self._wrap(callback, prior_pure)
        result = optimizer.solve(
            problem, budget, self.rng, callback=wrapped, callback_every=callback_every
        )
        if not _is_zcdp_within(result.record.event, rho):
            name = getattr(optimizer, "name", None) or type(optimizer).__name__
            raise ValueError(
                f"{name} in this configuration (mini-batches, Laplace noise, or an option whose "
                "accounting reads the problem's constants) has a privacy "
                "event that depends on the bounds estimated privately inside the fit and is not "
                "zCDP, so the two cannot be composed into one proven guarantee; the model is "
                "not released (the bounds drawn before this refusal are charged to the fit's "
                "ledgers). Give public bounds (data_norm=<number>, and y_bounds for DPRidge), "
                "use the optimizer in full batch (dp_gdws: or a fixed max_iter), or use dp_gdws, "
                "dp_scd (variant='secret_dual') or dp_nsgd_tree"
            )
        composed = ComposedEvent(tuple(self.events) + (ZCDPEvent(rho),))
        result.extras["_skdp_last_progress"] = last
        return result, composed, budget

    def _wrap(self, callback, prior_pure):
        """The user's callback for a fit with private bounds, and a list that receives its last
        call. Before the last step it reports the steps' epsilon plus the bounds' pure epsilon
        (a valid bound), capped by the fit's target (which the released fit is verified to
        meet); the last call is made by :meth:`solve` with the composed epsilon."""
        last = []
        if callback is None:
            return None, last
        cap = self.epsilon

        def wrapped(progress):
            if progress.step >= progress.n_steps:
                last[:] = [progress]
                return None
            return callback(replace(progress, epsilon=min(cap, progress.epsilon + prior_pure)))

        return wrapped, last


def _is_zcdp_within(event, rho):
    """Whether ``event`` is rho'-zCDP with rho' <= rho: its RDP is linear in the order (the
    same slope at every order of a wide grid, as for Gaussian compositions and the Langevin
    bound) and the slope is at most ``rho``. Linear and below at one order: below at all."""
    orders = np.array([1.01, 1.5, 2.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 65536.0])
    try:
        slopes = np.asarray(event.rdp(orders), dtype=float) / orders
    except Exception:  # an event without an RDP curve (pure epsilon only)
        return False
    if not np.all(np.isfinite(slopes)):
        return False
    linear = np.ptp(slopes) <= 1e-9 * max(abs(float(slopes.max())), 1e-300)
    return bool(linear and slopes.max() <= rho * (1.0 + 1e-12))


def _row_norms(X):
    """L2 norms of the rows of a dense, sparse or dask X (float64)."""
    from .._rows import row_norms, sparse_row_norms

    if is_dask(X):  # one norm per row, computed where the rows live (never gathered)
        return X.map_blocks(_block_row_norms, drop_axis=1, dtype=np.float64)

    if sp.issparse(X):  # a block of rows at a time, duplicates summed, without overflow
        return sparse_row_norms(X)
    # dense: without overflow for huge entries; float32 in float64, a block of rows at a time
    return row_norms(X)


def _block_row_norms(block):
    """The in-memory norms of a dask chunk's rows: in float64 whatever its dtype (the squares
    of an int8 or float16 chunk overflow in its own), without overflow for huge entries."""
    from .._rows import row_norms

    block = np.asarray(block)
    if block.dtype not in (np.float64, np.float32):  # as validate_data converts X in memory
        block = block.astype(np.float64)
    return row_norms(block)


def _weighted_rows(values, weights):
    """The values of the records that take part in an exact (epsilon = inf) fit: those of
    positive weight (a zero weight removes a record, as in scikit-learn)."""
    if weights is None:
        return values
    keep = np.asarray(weights) > 0
    return values[keep] if np.any(keep) else values


def public_data_norm(param, fit):
    """The public row bound of a fit (the number given, or the pipeline's), or None when
    ``data_norm="auto"`` will release a private one (or read the exact one at epsilon=inf)."""
    if not (isinstance(param, str) and param == "auto"):
        return check_positive(param, "data_norm")
    if fit.plan.row_norm_bound is not None:
        return float(fit.plan.row_norm_bound)
    return None


def exact_largest_norm(X, sample_weight=None):
    """``(top, norms)``: the exact largest norm of the rows of positive ``sample_weight`` (1 if
    there is none or it is 0; a reduction on Dask), and the rows' norms when computed in memory
    (None for Dask). Not private: for fits at ``epsilon=np.inf`` only."""
    norms = _row_norms(X)
    if is_dask(norms):
        top, computed = dask_max(norms, sample_weight), None
    else:
        kept = _weighted_rows(norms, sample_weight)
        top, computed = (float(kept.max()) if kept.size else 0.0), norms
    return (top if top > 0 else 1.0), computed


def resolve_data_norm(param, X, fit, sample_weight=None):
    """``(data_norm, row_scale, norms)``: the row-norm bound a fit uses, the typical row norm
    that ``intercept_scaling="auto"`` takes, and the rows' norms when they were computed here
    for an in-memory X (None for Dask), for the clip factors of the fit's design.

    The bound is the public number given, the pipeline's public bound, the exact largest norm
    of the rows of positive ``sample_weight`` (epsilon = inf), or ``DATA_NORM_FACTOR`` times a
    private median norm (which counts every row once: a weight is not a number of repeats here,
    since a weighted count would have sensitivity ``max_sample_weight``); the typical norm is
    that private median when there is one (an intercept column of the size of a typical row
    keeps the dual and momentum methods balanced), the bound otherwise.
    """
    public = public_data_norm(param, fit)
    if public is not None:
        return public, public, None
    if not fit.private:  # epsilon = inf: the exact bound
        top, computed = exact_largest_norm(X, sample_weight)
        return top, top, computed
    norms = _row_norms(X)
    computed = None if is_dask(norms) else norms
    grid = positive_grid(DATA_NORM_GRID_STEP)
    median = max(fit.quantile(norms, 0.5, DATA_NORM_SHARE, 1, grid, "data_norm", DATA_NORM_CELLS),
                 grid[1])
    return DATA_NORM_FACTOR * median, median, computed


def check_y_bounds(param, n_outputs=None):
    """``"auto"``, a public pair ``(low, high)``, or (a y of ``n_outputs`` columns) a public
    array of shape ``(n_outputs, 2)``, one pair per target."""
    if isinstance(param, str) and param == "auto":
        return "auto"
    try:
        bounds = np.asarray(param, dtype=np.float64)
    except (TypeError, ValueError):
        bounds = None
    pair = bounds is not None and bounds.shape == (2,)
    per_target = (bounds is not None and bounds.ndim == 2 and bounds.shape[1] == 2
                  and bounds.shape[0] >= 1)
    if not (pair or per_target):
        raise ValueError(
            f'y_bounds must be "auto", a pair (low, high) of finite reals, or one pair per '
            f"target (an array of shape (n_targets, 2)); got {param!r}"
        )
    if per_target and n_outputs is not None and bounds.shape[0] != n_outputs:
        raise ValueError(
            f"y_bounds has {bounds.shape[0]} pairs but y has {n_outputs} target columns: give "
            'one pair per column, one pair for all of them, or "auto"'
        )
    low, high = bounds.reshape(-1, 2).T
    if not (np.all(np.isfinite(bounds)) and np.all(low < high)):
        raise ValueError(f"y_bounds must be finite with low < high; got {param!r}")
    return (float(low[0]), float(high[0])) if pair else bounds


def resolve_y_bounds(y, fit, sample_weight=None, n_outputs=1, name=""):
    """The bounds ``y_bounds="auto"`` gives one target column (public bounds are read by
    :func:`public_target_bounds`): the exact range of y
    (epsilon = inf, over the records of positive ``sample_weight``), or the private median of y
    plus or minus ``Y_BOUNDS_SPREAD_FACTOR`` times the private upper quartile of
    ``|y - median|`` (:data:`Y_SPREAD_QUANTILE`; ``Y_BOUNDS_MAD_FACTOR`` times its median where
    the quartile's release would be unreliable; unweighted, as
    for :func:`resolve_data_norm`). Where the upper quartile is released at the grid's floor,
    ``Y_BOUNDS_MAD_FACTOR`` times the private median of the ``|y - median|`` that are not 0
    (:func:`tail_plan`, charged in every fit that plans it).

    For one column of a y of ``n_outputs`` columns (:func:`resolve_target_bounds`) each release
    gets ``1 / n_outputs`` of the shares, so that the bounds of all columns together cost what
    one column's do; ``name`` tells the columns' releases apart in the record."""
    if is_dask(y):
        y = y.astype(np.float64)
        if not fit.private:  # epsilon = inf: the exact range, a reduction
            low, high = -dask_max(-y, sample_weight), dask_max(y, sample_weight)
            return (low - 1.0, high + 1.0) if low == high else (low, high)
    else:
        y = np.asarray(y, dtype=np.float64)
    if not fit.private:
        kept = _weighted_rows(y, sample_weight)
        low, high = float(kept.min()), float(kept.max())
        if low == high:
            low, high = low - 1.0, high + 1.0
        return low, high
    # Cells (Y_BOUNDS_CELLS): targets often sit far from 0 relative to their spread, between
    # two candidates of the log grid, where scoring the candidates as points ties them all
    count = 2 * n_outputs  # the median and the spread of each column
    step = centre_grid_step(y.shape[0], fit.rho, count)
    centre = fit.quantile(y, 0.5, Y_BOUNDS_SHARE, count, signed_grid(step), "y_median" + name,
                          Y_BOUNDS_CELLS)
    grid = positive_grid()
    # the upper quartile where its release is reliable, else the median (MAD): a public choice
    q, factor = Y_SPREAD_QUANTILE, Y_BOUNDS_SPREAD_FACTOR
    if not fit.quantile_plan(y.shape[0], q, Y_BOUNDS_SHARE, count, grid.size)[1]:
        q, factor = 0.5, Y_BOUNDS_MAD_FACTOR
    deviation = np.abs(y - centre)
    spread = fit.quantile(deviation, q, Y_BOUNDS_SHARE, count, grid, "y_spread" + name,
                          Y_BOUNDS_CELLS)
    half = factor * max(spread, grid[1])
    _warn_if_offset_dominates(fit.source, centre, spread, step)
    tail = (tail_plan(y.shape[0], fit.rho, grid.size, n_outputs) if q == Y_SPREAD_QUANTILE
            else None)
    if tail is not None and spread <= grid[1]:
        # more than three quarters share the centre's value: the typical size of the others,
        # whose number is private, so the release gets the base measure of an unreliable one
        spread = fit.quantile_at(_outside_the_atom(deviation), 0.5, tail, False, grid,
                                 "y_tail" + name, Y_BOUNDS_CELLS)
        half, q = Y_BOUNDS_MAD_FACTOR * max(spread, grid[1]), None
        _warn_of_the_tail(fit.source, centre, spread, grid)
    elif tail is not None:
        fit.charge_planned(tail, "y_tail" + name)
    _warn_if_spread_collapsed(fit.source, spread, grid, q)
    return centre - half, centre + half


def centre_grid_step(n, rho, count):
    """The log2 step of the public grid of the targets' private median in a fit of ``n`` rows
    and zCDP budget ``rho`` (``count`` releases sharing :data:`Y_BOUNDS_SHARE`): the fine
    :data:`Y_CENTRE_GRID_LOG2_STEP` where a median on its grid needs no more than that share to
    be reliable (:func:`bound_share`), else the default grid's, whose fewer candidates need less
    (6147 candidates against 387: the fine grid from 486 rows at epsilon 1, 1471 at 0.3, 181 at
    3, delta 1e-5). Below that the larger grid would take budget from the model
    (``benchmarks/dev_rules_y_centre_grid.py``: 0.04 of R^2 at 300 rows, epsilon 1, with the
    fine grid everywhere). Public quantities only."""
    fine = signed_grid(Y_CENTRE_GRID_LOG2_STEP).size
    if bound_share(Y_BOUNDS_SHARE, n, count, fine, rho) <= Y_BOUNDS_SHARE:
        return Y_CENTRE_GRID_LOG2_STEP
    return GRID_LOG2_STEP


def tail_plan(n, rho, n_candidates, count=1):
    """The exponential mechanism's epsilon of the targets' tail release in a fit of ``n`` rows
    and zCDP budget ``rho`` (:data:`Y_TAIL_SHARE`, lowered to what a reliable median of
    :data:`Y_TAIL_MIN_FRACTION` of the rows needs), or None without a finite budget. With
    ``count`` target columns: the epsilon of each of their ``count`` tail releases, which share
    that reserve. Public quantities only: the reserve is charged in every fit that plans it."""
    if not (math.isfinite(rho) and rho > 0):
        return None
    tail_rows = max(Y_TAIL_MIN_FRACTION * n, 1.0)
    share = min(Y_TAIL_SHARE, bound_share(0.0, tail_rows, count, n_candidates, rho, 0.5))
    return em_epsilon(share * rho, count)


def public_target_bounds(param, n_outputs):
    """``(low, high)``, arrays of shape ``(n_outputs,)``, of public ``y_bounds``: a pair for
    every column, or one pair per column (checked by :func:`check_y_bounds`)."""
    bounds = np.reshape(check_y_bounds(param, n_outputs), (-1, 2))
    low, high = np.broadcast_to(bounds, (n_outputs, 2)).T
    return low.astype(np.float64), high.astype(np.float64)


def resolve_target_bounds(param, Y, fit, sample_weight=None):
    """``(low, high)``, arrays of shape ``(n_outputs,)``: the bounds of each column of a 2-D
    ``Y`` (:func:`resolve_y_bounds` per column, the private releases of all columns sharing one
    column's budget). A public pair applies to every column; an array of shape
    ``(n_outputs, 2)`` gives each its own."""
    K = Y.shape[1]
    if not (isinstance(param, str) and param == "auto"):
        return public_target_bounds(param, K)
    pairs = [resolve_y_bounds(Y[:, k], fit, sample_weight, K, f"[{k}]" if K > 1 else "")
             for k in range(K)]
    low, high = np.array(pairs, dtype=np.float64).T
    return low, high


def _warn_of_the_tail(source, centre, spread, grid):
    """Say that the bounds come from the minority of targets that differ from the centre (a
    private release from a private number of records). Post-processing: costs nothing."""
    if spread > grid[1]:
        warn(
            f"{source}: more than three quarters of the targets may share one value "
            f"({centre:.4g}); y_bounds_ are set from the private median distance of the others "
            f"to it ({spread:.3g}), an estimate from fewer records. Give public y_bounds (a "
            "range known without the data) where you have them.",
            UserWarning,
        )


def _outside_the_atom(deviation):
    """The deviations from the centre that are not 0 (a per-record selection: neighbouring
    data sets give neighbouring selections, so a quantile of them has sensitivity 1)."""
    if is_dask(deviation):
        return compute_chunk_sizes(deviation[deviation > 0])
    return deviation[deviation > 0]


def _warn_if_spread_collapsed(source, spread, grid, q):
    """Warn when the released spread (the q-quantile of ``|y - median|``, or with q None the
    tail's median) is the grid's floor (2^-16 and below): more than a fraction q of the targets
    share one value (the quantile is 0), or the targets are smaller than the grid, and the
    bounds hold only that value.
    Post-processing of the release: it reads nothing else and costs nothing."""
    if spread <= grid[1]:
        share = "half" if q == 0.5 else "three quarters"
        warn(
            f"{source}: the targets' private spread ({spread:.3g}) is at the floor of its grid: "
            f"more than {share} of the targets may share one value (for example zeros), "
            "and the target bounds then hold only that value. Give public y_bounds (a range "
            "known without the data).",
            UserWarning,
        )


def _warn_if_offset_dominates(source, centre, spread, step):
    """Warn when the targets' spread may be below the rounding of their private centre.

    A grid of log2 step ``step`` (:func:`centre_grid_step`) rounds the median to within
    ``2^(step / 2) - 1`` of its magnitude (0.55% on the fine grid, 9% on the default one).
    Targets whose spread is smaller than that (a large constant offset: 1e6 +- 30; at small n,
    years or temperatures in kelvin) get bounds as wide as the rounding error (the released
    spread is then about that error), and the optimizer sees a small signal on a large
    constant, whose intercept noise is scaled by the bounds. The two cases look alike in the
    releases, so the warning says "may". Post-processing of the two releases: it reads nothing
    else and costs nothing.
    """
    rounding = 2.0 ** (step / 2.0) - 1.0
    if centre != 0.0 and spread < rounding * abs(centre):
        warn(
            f"{source}: the targets' private spread ({spread:.3g}, a quantile of "
            "|y - median|) is "
            f"within the rounding of their private centre ({centre:.4g}, known to about "
            f"{100 * rounding:.2g}% of its value), so the target bounds may be many times "
            "wider than the targets' spread "
            "and the model less precise than it could be. If the targets sit far from 0, "
            "subtract a public offset from y (a typical value known without the data) or give "
            "public y_bounds.",
            UserWarning,
        )
