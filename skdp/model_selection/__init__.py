"""Private hyper-parameter search and the privacy cost of ordinary tuning."""

from ._cost import TuningCost, plan_event, plan_search_fits, tuning_cost
from ._events import MaxEvent, RepeatAndSelectEvent
from ._search import PrivateSearchCV

__all__ = [
    "PrivateSearchCV",
    "RepeatAndSelectEvent",
    "MaxEvent",
    "TuningCost",
    "plan_event",
    "plan_search_fits",
    "tuning_cost",
]
