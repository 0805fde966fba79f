"""Tree aggregation of exponentially weighted gradient sums: sensitivity and the privacy event.

Used by ``dp_nsgd_tree`` (Tran & Cutkosky 2022, Algorithm 1). The fit releases, with fresh
Gaussian noise ``N(0, sigma^2 I)`` each, the values of dyadic tree nodes

    S_[a, b] = sum_{i = a..b} alpha (1 - alpha)^(b - i) g_i

where ``g_i`` is the step-i mini-batch sum of clipped per-example gradients divided by the public
batch size ``b``. Under the library's zero-out relation one occurrence of one record changes a
node by at most ``Delta = G alpha / b`` (its weight ``(1 - alpha)^(b - i) <= 1``). A record sits
once per epoch (random reshuffling) and touches several nodes; with
``S^2 = max_record sum_nodes (change of the node / Delta)^2`` the whole fit is an adaptive
composition of Gaussian mechanisms whose squared sensitivities sum to at most ``Delta^2 S^2``
(Tran & Cutkosky, Thm. 10 refined to per-node sensitivities), i.e. ONE Gaussian mechanism with
noise multiplier ``z = sigma / (Delta S)`` (Dong, Roth & Su 2022: adaptive composition of GDP),
which the accountant converts tightly (RDP with the improved conversion, or PLD).

Two tree layouts, neither of which lets a node straddle an epoch boundary (a straddling node can
hold two occurrences of one record one step apart, which breaks the paper's bound):

* ``"restart"``: a fresh dyadic tree over the M steps of every epoch.
  ``S^2 = E * ceil(log2(M + 1))``, the same RDP as dp-accounting's
  ``SelfComposedDpEvent(SingleEpochTreeAggregationDpEvent(sigma / Delta, M), E)``.
* ``"aligned"``: a within-epoch tree over steps 1..M-1 plus a tree whose leaves are whole epochs
  (decay ``gamma = (1 - alpha)^M`` per epoch): ``S^2 = E ceil(log2 M) + sum_j floor(E / 2^j)
  kappa_j^2`` with ``kappa_j = sum_{k < 2^j} gamma^k`` (an upper bound; the tests compare it to the
  brute-force maximum).
"""

from dataclasses import dataclass
import math

import numpy as np

from .events import DPEvent
from .rdp import rdp_gaussian

__all__ = [
    "TREE_LAYOUTS",
    "tree_depth",
    "epoch_tree_weights",
    "sensitivity_squared",
    "honaker_weights",
    "TreeAggregationEvent",
    "gaussian_noise_multiplier_exact",
]

TREE_LAYOUTS = ("restart", "aligned")


def tree_depth(n_leaves):
    """Number of dyadic levels over ``n_leaves`` leaves, ``ceil(log2(n_leaves + 1))``.

    It is also the largest number of complete dyadic nodes ``[i 2^l + 1, (i + 1) 2^l]`` inside
    ``[1, n_leaves]`` that contain one leaf.
    """
    return int(n_leaves).bit_length()


def epoch_tree_weights(alpha, steps_per_epoch, epochs):
    """``kappa_j = sum_{k < 2^j} gamma^k`` for the levels ``j`` of the epoch tree of ``"aligned"``.

    ``kappa_j`` is the largest weight (in units of Delta) one record can have in a node spanning
    ``2^j`` epochs: at most one occurrence per epoch, the one in the k-th epoch from the node's
    end decayed by at least ``gamma^k``, ``gamma = (1 - alpha)^M``.
    """
    gamma = (1.0 - alpha) ** steps_per_epoch
    return np.array(
        [sum(gamma**k for k in range(2**j)) for j in range(tree_depth(epochs))], dtype=float
    )


def sensitivity_squared(tree, steps_per_epoch, epochs, alpha):
    """The accountant's ``S^2``: the worst-case sum over released nodes of (node change / Delta)^2.

    Parameters
    ----------
    tree : {"restart", "aligned"}
    steps_per_epoch : int >= 1
        M, the number of steps (mini-batches) per epoch.
    epochs : int >= 1
        E.
    alpha : float in (0, 1]
        Weight of the new gradient in the momentum (``1 - beta``).

    Returns
    -------
    float
    """
    M, E = int(steps_per_epoch), int(epochs)
    if M < 1 or E < 1:
        raise ValueError(f"steps_per_epoch and epochs must be >= 1; got {M}, {E}")
    if tree == "restart":
        return float(E * tree_depth(M))
    if tree == "aligned":
        kappa = epoch_tree_weights(alpha, M, E)
        levels = range(tree_depth(E))
        return float(E * tree_depth(M - 1) + sum((E >> j) * kappa[j] ** 2 for j in levels))
    raise ValueError(f"tree must be one of {TREE_LAYOUTS}; got {tree!r}")


def honaker_weights(decay, n_levels):
    """Per-level weights of the online Honaker (2015) node estimates, for unit node noise.

    A node at level ``l >= 1`` has children whose estimates combine to an estimate of the node
    with noise variance ``V_c = (decay^(2 * 2^(l-1)) + 1) V_(l-1)``; the node's estimate is
    ``a_l * own + (1 - a_l) * children`` with ``a_l = V_c / (1 + V_c)`` (inverse-variance
    weights) and variance ``V_l = V_c / (1 + V_c)``. Pure post-processing of the noisy nodes.

    Returns
    -------
    a : ndarray of shape (n_levels,)
        ``a[0] = 1`` (a leaf is its own estimate).
    variance : ndarray of shape (n_levels,)
        ``V_l`` in units of sigma^2.
    """
    a = np.ones(max(n_levels, 1))
    v = np.ones(max(n_levels, 1))
    for level in range(1, n_levels):
        vc = (decay ** (2 * 2 ** (level - 1)) + 1.0) * v[level - 1]
        a[level] = vc / (1.0 + vc)
        v[level] = vc / (1.0 + vc)
    return a, v


def gaussian_noise_multiplier_exact(epsilon, delta):
    """Smallest noise multiplier z of ONE Gaussian mechanism that is (epsilon, delta)-DP.

    The analytic Gaussian mechanism (Balle & Wang 2018): with ``mu = 1 / z`` the exact privacy
    curve is ``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``, solved for z by
    bisection. Every accountant's z is at least this value, so it is a safe starting point for
    calibration (and the target the PLD accountant approaches).
    """
    from .accountant import analytic_gaussian_log_delta

    def delta_of(z):
        return math.exp(analytic_gaussian_log_delta(epsilon, 1.0 / z))

    lo, hi = 1e-3, 1.0
    while delta_of(hi) > delta:
        hi *= 2.0
    while delta_of(lo) <= delta:
        lo /= 2.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-12:
            break
    return hi


@dataclass(frozen=True)
class TreeAggregationEvent(DPEvent):
    """The whole tree-aggregation fit as one Gaussian mechanism.

    Parameters
    ----------
    noise_multiplier : float
        Node noise std divided by the per-occurrence sensitivity Delta (``sigma / Delta``),
        the unit dp-accounting's tree events use.
    steps_per_epoch : int
        M.
    epochs : int
        E.
    tree : {"restart", "aligned"}
    alpha : float in (0, 1]
        Momentum weight of the new gradient (only ``"aligned"`` depends on it).

    Notes
    -----
    RDP ``order * S^2 / (2 noise_multiplier^2)``: the Gaussian mechanism with the effective noise
    multiplier ``noise_multiplier / S``. Valid under zero-out (Delta = G alpha / b) and, with
    Delta = 2 G alpha / b, under replace-one.
    """

    noise_multiplier: float
    steps_per_epoch: int
    epochs: int
    tree: str = "restart"
    alpha: float = 1.0

    @property
    def sensitivity_squared(self):
        return sensitivity_squared(self.tree, self.steps_per_epoch, self.epochs, self.alpha)

    @property
    def effective_noise_multiplier(self):
        """``sigma / (Delta S)``: the noise multiplier of the equivalent single Gaussian."""
        if self.noise_multiplier == 0:
            return 0.0
        return self.noise_multiplier / math.sqrt(self.sensitivity_squared)

    def rdp(self, orders):
        return rdp_gaussian(self.effective_noise_multiplier, orders)

    def gaussian_mu(self):
        """``Delta S / sigma``: the node releases are Gaussian mechanisms whose squared
        sensitivities add up to ``(Delta S)^2`` (the event's RDP and PLD forms say the same)."""
        z = self.effective_noise_multiplier
        return math.inf if z <= 0 else 1.0 / z

    def to_dp_accounting(self):
        """dp-accounting's ``GaussianDpEvent(sigma / (Delta S))`` (RDP and PLD accept it)."""
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.effective_noise_multiplier)

    def to_dp_accounting_tree(self):
        """For ``"restart"``: dp-accounting's own tree event, which must be composed by an
        ``RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_SPECIAL)``.

        ``SelfComposedDpEvent(SingleEpochTreeAggregationDpEvent(sigma / Delta, M), E)``; its RDP
        equals :meth:`rdp`. There is no dp-accounting event for ``"aligned"``.
        """
        import dp_accounting

        if self.tree != "restart":
            raise NotImplementedError(f"dp-accounting has no event for tree={self.tree!r}")
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.SingleEpochTreeAggregationDpEvent(
                self.noise_multiplier, int(self.steps_per_epoch)
            ),
            int(self.epochs),
        )
