"""Progress of a private fit, reported to a user callback while the fit runs.

A private fit runs its kernel in chunks of ``callback_every`` steps from Python, resuming with the
same state (iterate, momentum, random generator, step offset), and calls the callback between
chunks with a :class:`FitProgress`. Everything in it is public and data-independent: step
counts, the sampling rate and the privacy spent by the steps done so far, all fixed before the
data is touched. Iterates and losses never reach the callback (each kernel releases only noisy
sums, and dp_sgld's analysis covers the release of its last iterate only).
"""

from dataclasses import dataclass
import numbers

import numpy as np

from .privacy.events import SelfComposedEvent
from .privacy.rdp import DEFAULT_ORDERS, epsilons_per_order

__all__ = ["FitProgress"]


@dataclass(frozen=True)
class FitProgress:
    """What a fit's ``callback`` receives every ``callback_every`` noisy steps.

    The callback is called during a private fit, every ``callback_every`` steps and after the
    last one. A non-private fit (``epsilon=inf``) makes no noisy steps and never calls it.

    Attributes
    ----------
    step : int
        Number of noisy steps done so far (``n_steps`` at the last call).
    n_steps : int
        Number of noisy steps the fit makes (fixed before the data is touched).
    epoch : float
        Passes over the data so far: ``step`` times the sampling rate (the epoch number for
        dp_nsgd_tree, which calls back at epoch ends).
    epsilon : float
        Epsilon spent by the steps done so far at ``delta`` (non-decreasing; at the last call
        the fit's ``epsilon_``). The intermediate values come from the RDP accountant on its
        grid of orders (cheap and valid, a little above what ``accountant="pld"`` or a refined
        order would give), capped by the whole fit's epsilon, which covers every prefix. After
        private bounds they add the bounds' pure epsilon, capped by the fit's budget, and the
        last call (the exact composition) can be a little lower than the one before it.
    delta : float
        The delta of the fit's guarantee (0 for pure-DP mechanisms).
    """

    step: int
    n_steps: int
    epoch: float
    epsilon: float
    delta: float


def check_callback(callback, callback_every):
    """Validate a fit's ``callback`` and ``callback_every``; returns them (the latter an int)."""
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be None or a callable; got {callback!r}")
    if (
        isinstance(callback_every, (bool, np.bool_))
        or not isinstance(callback_every, numbers.Integral)
        or callback_every < 1
    ):
        raise ValueError(f"callback_every must be an int >= 1; got {callback_every!r}")
    return callback, int(callback_every)


class ProgressMonitor:
    """The callback of one fit and its period, handed by ``DPOptimizer.solve`` to the optimizer.

    The optimizer runs its steps through :meth:`run`, which calls the kernel in one piece when
    there is no callback (the plain fit) and in chunks otherwise; both give the same bits.
    """

    def __init__(self, callback=None, callback_every=1):
        self.callback, self.every = check_callback(callback, callback_every)

    def stops(self, n_steps, unit=1):
        """Steps after which the callback runs: every ``every`` steps, rounded up to a multiple
        of ``unit`` (an epoch of dp_nsgd_tree), and ``n_steps``."""
        marks = np.arange(self.every, n_steps + self.every, self.every, dtype=np.int64)
        marks = np.minimum(-(-marks // unit) * unit, n_steps)
        return np.unique(np.append(marks, n_steps))

    def run(self, n_steps, run_chunk, epsilon_at, delta, epochs_per_step, unit=1):
        """Run steps ``[0, n_steps)`` as ``run_chunk(start, stop)`` calls, calling back after each.

        ``epsilon_at(stops)`` gives the epsilon of the first ``stops`` steps (vectorised; all
        values are computed before the first step, from public quantities only).
        """
        if self.callback is None or n_steps <= 0:
            run_chunk(0, n_steps)
            return
        stops = self.stops(n_steps, unit)
        eps = np.asarray(epsilon_at(stops), dtype=float)
        start = 0
        for stop, e in zip(stops.tolist(), eps.tolist()):
            run_chunk(start, stop)
            self.callback(FitProgress(
                step=stop, n_steps=int(n_steps), epoch=stop * float(epochs_per_step), epsilon=e,
                delta=float(delta),
            ))
            start = stop


# -- epsilon of a prefix of the fit -----------------------------------------------------------
def prefix_epsilon(stops, delta, final_epsilon, rdp_at=None, pure_at=None, orders=DEFAULT_ORDERS):
    """Epsilon of the first ``t`` steps of a fit, for each t in ``stops``.

    Parameters
    ----------
    stops : ndarray of int
        Increasing step counts.
    delta : float
        The fit's delta (0: pure DP, only ``pure_at`` is used).
    final_epsilon : float
        The whole fit's epsilon: every value is capped by it (the prefix is part of the fit's
        release), and the last value equals it when ``stops[-1]`` is the last step.
    rdp_at : callable or None
        ``rdp_at(stops, orders)``: the RDP curves of the prefixes, shape (len(stops), len(orders)).
    pure_at : callable or None
        ``pure_at(stops)``: pure-DP epsilons of the prefixes (or None).
    """
    stops = np.asarray(stops, dtype=np.int64)
    eps = np.full(stops.shape, np.inf)
    if pure_at is not None:
        eps = np.minimum(eps, pure_at(stops))
    if delta > 0 and rdp_at is not None:
        orders = np.asarray(orders, dtype=float)
        conv = epsilons_per_order(orders, rdp_at(stops, orders), delta)
        eps = np.minimum(eps, np.maximum(conv.min(axis=1), 0.0))
    # monotone by construction (curves of growing prefixes); the cap keeps it so at the end
    return np.minimum(eps, final_epsilon)


def repeated_step_epsilon(record, stops):
    """:func:`prefix_epsilon` of a fit whose event is one step repeated,
    ``SelfComposedEvent(step, n_steps)``: the first t steps are ``step`` repeated t times."""
    event = record.event
    if not isinstance(event, SelfComposedEvent):
        raise TypeError(f"expected a SelfComposedEvent, got {type(event).__name__}")
    step = event.event
    pure = step.pure_epsilon()
    return prefix_epsilon(
        stops, record.delta, record.epsilon,
        rdp_at=lambda t, orders: t[:, None] * step.rdp(orders)[None, :],
        pure_at=None if pure is None else (lambda t: t * pure),
    )


_BLOCK = 4096  # rows of per-step RDP held at once by stepwise_curves


def stepwise_curves(make_event, values):
    """``(rdp_at, pure_at)`` for a fit whose step t is the event ``make_event(values[t])``.

    Each distinct value's event is evaluated once; the prefix sums are taken in blocks of steps,
    so memory stays ``O(block * orders)`` whatever the number of steps. ``pure_at`` is None when
    the steps have no pure-DP guarantee.
    """
    values = np.asarray(values, dtype=float)
    uniq, inverse = np.unique(values, return_inverse=True)
    events = [make_event(float(v)) for v in uniq]

    def rdp_at(stops, orders):
        table = np.array([event.rdp(orders) for event in events])
        if len(events) == 1:
            return stops[:, None] * table[0][None, :]
        out = np.empty((len(stops), len(orders)))
        total = np.zeros(len(orders))
        k = 0
        for b in range(0, len(values), _BLOCK):
            block = np.cumsum(table[inverse[b:b + _BLOCK]], axis=0) + total
            while k < len(stops) and stops[k] <= b + block.shape[0]:
                out[k] = block[stops[k] - 1 - b]
                k += 1
            total = block[-1]
        return out

    pures = [event.pure_epsilon() for event in events]
    if any(p is None for p in pures):
        return rdp_at, None
    cum = np.concatenate([[0.0], np.cumsum(np.asarray(pures)[inverse])])

    def pure_at(stops):
        return cum[stops]

    return rdp_at, pure_at
