"""Privacy auditing: check a model's privacy claim empirically.

Two complementary tools:

* a **membership-inference auditor** (black box): fit a model many times on a data set D
  holding a canary record and on its neighbour D' (the canary replaced by a null record), and
  turn the success of the best threshold test on the canary's score into an epsilon *lower*
  bound with Clopper-Pearson confidence (Jagielski et al. 2020; Nasr et al. 2021). A lower bound
  above the claimed epsilon proves the claim wrong. :func:`audit_estimator`,
  :func:`audit_optimizer`, with worst-case canaries from :func:`make_canary` and
  :func:`canary_problem`; :func:`noise_scaled` checks that an audit is strong enough to catch a
  given error in the noise;
* a **record/replay sensitivity check** (gray box, after Cebere et al. 2026): the same seed on D
  and D', comparing what each noisy release received before the noise with the declared
  sensitivity, and checking that the noise and control flow do not depend on the data.
  :func:`replay`, :func:`compare_replays`.

See ``docs/audit.rst`` for a walk-through.
"""

from ._auditor import AuditResult, audit_estimator, audit_optimizer
from ._bounds import EpsilonLowerBound, clopper_pearson, epsilon_lower_bound, gaussian_epsilon, gaussian_mu
from ._cache import memoized_accounting
from ._canary import CanaryData, CanaryProblem, canary_direction, canary_problem, make_canary, null_neighbour
from ._faults import noise_scaled
from ._replay import ReplayReport, compare_replays, replay

__all__ = [
    "AuditResult",
    "audit_estimator",
    "audit_optimizer",
    "EpsilonLowerBound",
    "clopper_pearson",
    "epsilon_lower_bound",
    "gaussian_epsilon",
    "gaussian_mu",
    "memoized_accounting",
    "CanaryData",
    "CanaryProblem",
    "canary_direction",
    "canary_problem",
    "make_canary",
    "null_neighbour",
    "noise_scaled",
    "ReplayReport",
    "compare_replays",
    "replay",
]
