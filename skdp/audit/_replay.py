"""Record/replay sensitivity checks (gray-box, after Cebere et al., "Re:cord-play", PETS 2026).

Run the same optimizer with the same seed on D and on a neighbour D'. With
``record_trace=True`` every skdp kernel records, at each noisy release t, the released quantity
before the noise (``trace[t, 0]``) and after it (``trace[t, 1]``).

Sensitivity is a statement at a *fixed history*: release t, as a function of the data, given the
previous (noisy) releases. With the same seed the two runs share their history only until the
first release whose noisy values differ; after it the iterates differ, and so do the other
records' contributions (a continuity effect that is not bounded by the sensitivity). So

* releases up to and including the first one that differs are compared as whole vectors:
  their noiseless inputs must differ by at most the declared sensitivity (``record.sensitivity``;
  L2, or L1 for the Laplace mechanism) times the number of zero-out steps between D and D' (1
  for a record replaced by the null record, 2 for a record replaced by another record);
* when the differing record lives in *isolated* parameter rows (feature columns that every other
  record has at zero, see :func:`~skdp.audit.canary_problem`), those entries of every release
  hold the differing record's contribution only, whatever the history: they are compared at
  every release. This is exact for any optimizer whose releases are linear in per-example
  gradients laid out like the parameters (gradient sums, tree nodes of gradient sums);
* the noise must be the same on both runs (same seed; skdp calibrates every noise scale before
  the run) and the random stream must end in the same state: the number of releases, the batch
  sampling and the stopping time do not depend on the data;
* the privacy record (the calibration) must be the same: noise comes from public quantities.
"""

from dataclasses import dataclass, field
import math

import numpy as np

from ._cache import memoized_accounting

__all__ = ["ReplayReport", "compare_replays", "replay"]


@dataclass(frozen=True)
class ReplayReport:
    """What a record/replay comparison found.

    Attributes
    ----------
    n_releases : int
    n_shared_history : int
        Releases compared as whole vectors (up to the first noisy release that differs).
    n_isolated : int
        Releases compared on the isolated entries only (after the histories diverged).
    max_distance : float
        Largest distance found between the noiseless inputs of a release on D and on D'.
    bound : float
        The declared sensitivity times the number of zero-out steps.
    norm : str
        ``"l2"`` or ``"l1"``.
    violations : list of str
        Empty when every check passed.
    """

    n_releases: int
    n_shared_history: int
    n_isolated: int
    max_distance: float
    bound: float
    norm: str
    violations: list = field(default_factory=list)

    @property
    def ok(self):
        return not self.violations

    def __str__(self):
        head = (
            f"{self.n_releases} releases ({self.n_shared_history} whole, {self.n_isolated} on "
            f"isolated entries), max {self.norm} distance {self.max_distance:.6g} <= bound "
            f"{self.bound:.6g}?"
        )
        return head + (" ok" if self.ok else "\n  " + "\n  ".join(self.violations))


def _mechanism_record(result):
    return result.record if result.mechanism_record is None else result.mechanism_record


def _norm_of(record):
    return "l1" if record.mechanism == "laplace" else "l2"


def compare_replays(result, result_neighbour, n_changed=1, rng_states=None, isolated_rows=None,
                    rtol=1e-9):
    """Compare two :class:`~skdp.optimizers.OptimizeResult` of the same seed on D and on D'.

    Parameters
    ----------
    result, result_neighbour : OptimizeResult
        Both from ``solve(..., record_trace=True)``.
    n_changed : int, default=1
        Number of zero-out steps between D and D' (2 when a record was replaced by another).
    rng_states : tuple or None
        The generators' ``bit_generator.state`` after each run; compared when given.
    isolated_rows : sequence of int or None
        Parameter rows (indices into the first axis of ``coef``) in which only the differing
        record is nonzero. When given and the releases are laid out like the parameters
        (``trace.shape[2] == coef.size``), their entries are compared at every release.
    rtol : float, default=1e-9
        Relative slack for floating-point rounding.

    Returns
    -------
    ReplayReport
    """
    v = []
    # the calibration of the noisy releases (a traced result's own record is non-private)
    rec, rec2 = _mechanism_record(result), _mechanism_record(result_neighbour)
    norm = _norm_of(rec)
    bound = n_changed * float(rec.sensitivity)
    if (rec.epsilon, rec.delta, rec.noise_multiplier, rec.sensitivity, rec.n_steps, rec.event) != (
        rec2.epsilon, rec2.delta, rec2.noise_multiplier, rec2.sensitivity, rec2.n_steps, rec2.event
    ):
        v.append(f"privacy records differ (calibration depends on the data): {rec} vs {rec2}")
    if result.n_iter != result_neighbour.n_iter:
        v.append(f"stopping time differs: {result.n_iter} vs {result_neighbour.n_iter} iterations")
    if rng_states is not None and rng_states[0] != rng_states[1]:
        v.append("the random streams ended in different states (data-dependent draws or sampling)")
    tr, tr2 = result.trace, result_neighbour.trace
    if tr is None or tr2 is None:
        v.append("no trace recorded (the optimizer ignores record_trace=True)")
        return ReplayReport(0, 0, 0, math.nan, bound, norm, v)
    if tr.shape != tr2.shape:
        v.append(f"number or size of releases differs: trace shapes {tr.shape} vs {tr2.shape}")
        return ReplayReport(min(tr.shape[0], tr2.shape[0]), 0, 0, math.nan, bound, norm, v)
    T = tr.shape[0]
    if T == 0:
        v.append("the trace is empty: no noisy release was recorded")
        return ReplayReport(0, 0, 0, math.nan, bound, norm, v)
    if not (np.all(np.isfinite(tr)) and np.all(np.isfinite(tr2))):
        v.append("the trace holds NaN or inf values")
        return ReplayReport(T, 0, 0, math.nan, bound, norm, v)
    scale = 1.0 + max(np.abs(tr).max(), np.abs(tr2).max())
    atol = 1e-12 * scale
    noise, noise2 = tr[:, 1] - tr[:, 0], tr2[:, 1] - tr2[:, 0]
    dn = np.abs(noise - noise2).max()
    if dn > 16 * atol:
        v.append(f"the noise differs between D and D' (max abs difference {dn:.3g}): the random "
                 "draws depend on the data")
    # the histories are shared up to and including the first release whose output differs
    out_differs = np.abs(tr[:, 1] - tr2[:, 1]).max(axis=1) > 16 * atol
    t_div = int(np.argmax(out_differs)) if out_differs.any() else T - 1
    diff = tr[:, 0] - tr2[:, 0]

    def dist(a):
        return np.abs(a).sum(axis=1) if norm == "l1" else np.sqrt((a * a).sum(axis=1))

    whole = dist(diff[: t_div + 1])
    n_iso = 0
    iso = np.zeros(0)
    if isolated_rows is not None and t_div + 1 < T:
        K = result.coef.shape[1]
        if tr.shape[2] == result.coef.size:
            cols = np.array([j * K + k for j in isolated_rows for k in range(K)], dtype=int)
            iso = dist(diff[t_div + 1:, cols])
            n_iso = iso.size
    limit = bound * (1.0 + rtol) + atol
    for label, d, offset in (("", whole, 0), (" (isolated entries)", iso, t_div + 1)):
        if d.size and d.max() > limit:
            worst = int(np.argmax(d))
            v.append(f"release {offset + worst}{label}: {norm} distance {d[worst]:.6g} exceeds the "
                     f"declared sensitivity {rec.sensitivity:.6g} x {n_changed}")
    max_dist = float(max(whole.max(), iso.max() if iso.size else 0.0))
    return ReplayReport(T, int(whole.size), n_iso, max_dist, bound, norm, v)


def replay(optimizer, problem, neighbour, budget, seed=0, n_changed=1, isolated_rows=None):
    """Run ``optimizer`` on D and D' with the same seed and compare the traces.

    Parameters
    ----------
    optimizer : DPOptimizer
    problem, neighbour : Problem
        D and D' (same shape; see :func:`~skdp.audit.null_neighbour`).
    budget : Budget
    seed : int, default=0
    n_changed : int, default=1
        Zero-out steps between D and D'.
    isolated_rows : sequence of int or None
        See :func:`compare_replays`.

    Returns
    -------
    report : ReplayReport
    results : tuple of OptimizeResult
        The two runs.
    """
    results, states = [], []
    with memoized_accounting():
        for prob in (problem, neighbour):
            rng = np.random.default_rng(seed)
            results.append(optimizer.solve(prob, budget, rng, record_trace=True))
            states.append(rng.bit_generator.state)
    report = compare_replays(results[0], results[1], n_changed, tuple(states), isolated_rows)
    return report, tuple(results)
