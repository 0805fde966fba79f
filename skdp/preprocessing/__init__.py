"""Private preprocessing: steps that learn their state with differential privacy.

Only two kinds of preprocessing keep a private model's guarantee: steps that learn nothing from
the data (stateless, or fitted on public information, such as
``OneHotEncoder(categories=<public lists>, handle_unknown="ignore")``), and steps that learn it
privately, whose privacy event is composed into the model's. :class:`PrivateRobustScaler` is
the second kind; :class:`skdp.pipeline.PrivatePipeline` puts both under one budget and refuses
everything else.
"""

from ._scaler import (
    BAND_PASSTHROUGH_EVIDENCE, CENTRE_GRID_LOG2_STEP, PASSTHROUGH_EVIDENCE, PrivateRobustScaler,
)
from ._step import PrivateStepMixin, StepBudget

__all__ = [
    "BAND_PASSTHROUGH_EVIDENCE", "CENTRE_GRID_LOG2_STEP", "PASSTHROUGH_EVIDENCE",
    "PrivateRobustScaler", "PrivateStepMixin", "StepBudget",
]
