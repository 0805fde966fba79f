"""What every private preprocessing step shares: its budget, its generator, its privacy record.

A private step is fitted either on its own (its ``epsilon`` and ``delta``, its ledger charged
with its event) or inside a :class:`skdp.pipeline.PrivatePipeline`, which hands it a share of the
pipeline's budget (:class:`StepBudget`) and charges the ledgers once for the whole pipeline.
"""

from dataclasses import dataclass
import math
import numbers

import numpy as np

from .._fit_state import log_stream
from .._streams import remember_streams, stream_state
from .._validation import check_delta, check_epsilon, make_generator
from ..ledger import LedgerCarrierMixin, charge, precheck
from ..privacy import NonPrivateEvent, PrivacyRecord, compute_epsilon
from ..privacy.split import zcdp_budget

__all__ = ["StepBudget", "PrivateStepMixin"]


@dataclass(frozen=True)
class StepBudget:
    """The share of a pipeline's budget given to one private step: ``rho`` (zCDP) at the
    pipeline's ``delta``; ``epsilon`` is the pipeline's (inf: no privacy); ``stream`` numbers
    the step among the pipeline's private steps (from 1), so that steps given the same integer
    ``random_state`` still draw independent noise."""

    rho: float
    delta: float
    epsilon: float
    stream: int = 1


class PrivateStepMixin(LedgerCarrierMixin):
    """Mixin of the private transformers (budget, generator, record, ledgers, clone/pickle)."""

    #: Marks a step that learns its state privately (see skdp.pipeline).
    _skdp_private_step = True

    def _start(self, n_samples):
        """(rho, delta, private, ledgers): the step's budget, from the pipeline or the params."""
        plan = getattr(self, "_skdp_budget", None)
        if plan is not None:
            return plan.rho, plan.delta, math.isfinite(plan.epsilon), []
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, n_samples)
        ledgers = self._fit_ledgers()
        precheck(ledgers, epsilon, delta, type(self).__name__)
        if not math.isfinite(epsilon):
            return math.inf, delta, False, ledgers
        return zcdp_budget(epsilon, delta), delta, True, ledgers

    def _rng(self):
        seed = self.random_state
        plan = getattr(self, "_skdp_budget", None)
        if plan is not None and seed is not None:
            # Composition needs independent noise: a stream of its own for each private step,
            # distinct from the final estimator's (which uses its random_state as it is). A
            # ColumnTransformer fits deep copies of its steps, so a RandomState or Generator
            # shared by several steps reaches each copy in the same state: the entropy drawn
            # from it is the same, and the step's number in the pipeline tells them apart.
            if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
                entropy = [int(seed)]
            else:
                entropy = make_generator(seed).integers(0, 2**32, size=4).tolist()
            state = np.random.SeedSequence([*entropy, int(plan.stream)]).generate_state(
                1, np.uint64)
            seed = int(state[0])
        rng = make_generator(seed, secure=bool(getattr(self, "secure_mode", False)))
        # charged by _finish, or by the pipeline (fresh: the step's random_state is None)
        self._skdp_stream_state = stream_state(rng, seeded=self.random_state is not None)
        log_stream(self._skdp_stream_state)  # a failed fit's charge carries it
        return rng

    def _finish(self, event, delta, ledgers, n_samples, mechanism="exponential"):
        """Store ``dp_event_``, ``epsilon_``, ``delta_``, ``privacy_record_``; charge ledgers."""
        if isinstance(event, NonPrivateEvent):
            epsilon, spent_delta = math.inf, 0.0
        else:
            epsilon = compute_epsilon(event, delta, "rdp")
            pure = event.pure_epsilon()
            spent_delta = 0.0 if pure is not None and epsilon == pure else delta
        record = PrivacyRecord(
            event=event, epsilon=epsilon, delta=spent_delta, accountant="rdp",
            mechanism=mechanism, noise_multiplier=math.nan, sensitivity=1.0,
            n_steps=0, sampling="full batch",
        )
        plan = getattr(self, "_skdp_budget", None)
        remember_streams(self, vars(self).get("_skdp_stream_state"))
        if plan is None:  # standalone (in a pipeline, its one charge takes the raw stream)
            target = check_epsilon(self.epsilon)
            charge(ledgers, record, type(self).__name__, target, delta, n_samples=int(n_samples),
                   stream=vars(self).pop("_skdp_stream_state", None))
        self.dp_event_ = event
        self.epsilon_ = epsilon
        self.delta_ = spent_delta
        self.privacy_record_ = record

    # -- clones and pickles carry the pipeline's budget and the open ledgers (as the estimators)
    def __sklearn_clone__(self):
        # A ColumnTransformer fits clones of its transformers: the budget a PrivatePipeline set
        # for this fit must reach them (it is removed again when the pipeline's fit ends).
        new = super().__sklearn_clone__()  # LedgerCarrierMixin carries the open ledgers
        budget = getattr(self, "_skdp_budget", None)
        if budget is not None:
            new._skdp_budget = budget
        return new
