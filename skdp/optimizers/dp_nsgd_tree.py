"""dp_nsgd_tree: normalized SGD with momentum released through tree aggregation.

Tran & Cutkosky (2022), *Momentum Aggregation for Private Non-convex ERM*, NeurIPS 2022,
Algorithm 1 (arXiv 2210.06328). See ``docs/optimizers/dp_nsgd_tree.rst`` for the privacy
argument and the deviations from the paper.
"""

from dataclasses import replace
import math
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..privacy import PrivacyRecord, calibrate_noise_multiplier
from ..privacy.tree import (
    TREE_LAYOUTS,
    TreeAggregationEvent,
    epoch_tree_weights,
    gaussian_noise_multiplier_exact,
    honaker_weights,
    sensitivity_squared,
    tree_depth,
)
from ..progress import ProgressMonitor, prefix_epsilon
from .._validation import AUTO, POSITIVE, POSITIVE_INT, TOLERANCE
from ._base import DPOptimizer, OptimizeResult, empty_trace, trace_buffer
from ._defaults import (
    budget_rho, tree_alpha, tree_classification_step, tree_epochs, tree_regression_travel,
)
from ._glm import full_batch_oracle, scalar_targets, thread_mode, threads_allowed
from ._loops import is_distributed
from ._tree_kernels import GRADIENT_ROW, N_STATE, nsgd_tree_epoch, nsgd_tree_update

__all__ = ["DPNSGDTree"]


def _trailing_zeros(t):
    return (t & -t).bit_length() - 1


class DPNSGDTree(DPOptimizer):
    """Normalized SGD with momentum, the momentum released by tree aggregation.

    Every epoch draws a fresh permutation (random reshuffling) and walks it in ``M = ceil(n/b)``
    mini-batches of the public size ``b`` (the last may be shorter; it is still divided by b).
    Step t computes ``g_t = (1/b) sum_batch clip(grad_i)``, the momentum
    ``m_t = (1 - alpha) m_(t-1) + alpha (g_t + lam w_t)`` and moves
    ``w_(t+1) = w_t - eta_t m_hat_t / ||m_hat_t||`` along the privately released momentum
    ``m_hat_t``: the sum of at most ``log2(M) + 1`` noisy dyadic tree nodes
    ``S_[a,b] + xi``, ``S_[a,b] = sum_(i=a..b) alpha (1 - alpha)^(b-i) g_i``, each decayed by
    ``(1 - alpha)^(t - b)``. It is implemented as the exact momentum plus a streamed noise-only
    tree (O(D log M) memory, amortised O(D) per step). The regulariser term depends only on the
    released iterates and is added outside the tree. The output is the last iterate.

    **Neighbouring relation and sensitivity.** Zero-out (add/remove one record, n public): a
    null record contributes nothing. Per-example gradients are bounded by ``G = clip * R``
    (rows clipped to R, the loss derivative clipped to ``clip``), so one occurrence of one
    record changes a node by at most ``Delta = G alpha / b`` (the paper and the spec use
    replace-one, ``2 G alpha / b``; zero-out halves it). A record occurs once per epoch.
    Tree nodes never straddle an epoch boundary (a straddling node can hold two occurrences one
    step apart, and the paper's bound then fails under reshuffling): ``tree="restart"``
    restarts the tree every epoch, ``S^2 = E ceil(log2(M + 1))``; ``tree="aligned"`` uses a
    within-epoch tree over steps 1..M-1 and a tree over whole epochs,
    ``S^2 = E ceil(log2 M) + sum_j floor(E / 2^j) kappa_j^2``,
    ``kappa_j = sum_(k < 2^j) (1 - alpha)^(k M)``.

    **Accounting.** The fit is an adaptive composition of Gaussian mechanisms whose squared
    sensitivities sum to at most ``Delta^2 S^2`` for any record, i.e. one Gaussian mechanism
    with noise multiplier ``z = sigma / (Delta S)`` (:class:`~skdp.privacy.tree.TreeAggregationEvent`;
    for ``"restart"`` its RDP equals dp-accounting's
    ``SelfComposedDpEvent(SingleEpochTreeAggregationDpEvent(sigma / Delta, M), E)``). z is the
    smallest value whose epsilon at delta is within the budget (tight RDP conversion, or PLD);
    the node noise is ``sigma = z Delta S``. Everything is a function of n, p, K, the bounds,
    the budget and the hyper-parameters.

    **Trace** (``record_trace=True``): one row per drawn node noise, in drawing order: the
    exact node value ``S_v`` (data gradients only) and ``S_v + xi_v``. Plain mode draws one
    node per step (the node that enters the prefix); Honaker mode draws every completing node;
    ``"aligned"`` draws the epoch-tree node at the last step of each epoch instead of a
    within-epoch node. ``record.sensitivity`` bounds every row's change (``Delta``, or
    ``kappa_J Delta`` for ``"aligned"``); ``extras["trace_sensitivity"]`` has the bound of each
    row. The sum over rows of the squared changes is at most ``Delta^2 S^2`` (at fixed iterates).

    **Replay** (record/replay tests, ``solve(..., replay=trace)``): the implementation releases
    ``exact momentum + streamed node noise``, never the node values themselves; a replayed run
    draws every node noise as usual (the random stream stays aligned) and then sets it to
    ``recorded released node - own exact node``, so that each node it releases is the recorded
    run's. The released momentum is the regulariser term (a function of the released iterates)
    plus a fixed linear combination of the released nodes, so both runs share their iterates (up
    to rounding) and ``trace[:, 0]`` holds this run's exact nodes along the recorded history.

    Parameters
    ----------
    epochs : int or "auto", default="auto"
        Number of passes E (a private fit makes exactly ``E * M`` steps). "auto": the public
        rule ``round(s)`` within [2, 40] below ``s = 200``, 80 from it,
        ``s = n sqrt(2 rho) / sqrt(d)`` with rho the zCDP budget
        (:func:`skdp.optimizers._defaults.tree_epochs`; fewer passes where the noise would
        swamp the normalised direction; fitted on public data).
    batch_size : "auto", None or int, default="auto"
        Public batch size b. "auto" and None: the full batch (one step per epoch: with the
        "auto" momentum, normalised noisy GD, which beat the mini-batches at every s on public
        data). An int: ``M = ceil(n / b)`` steps per epoch, the tree's momentum over them.
    momentum : "auto" or float in [0, 1), default="auto"
        The classic momentum ``beta`` (the weight of the past); the new gradient has weight
        ``alpha = 1 - beta``. "auto": ``alpha = 1 / M`` (an average over about one epoch; no
        momentum with the full batch, the default), except for the squared loss's full batch
        from ``s = 10``, which keeps ``beta = 0.5`` (the tree's noise on an average of a few
        steps is much smaller than on one; :func:`skdp.optimizers._defaults.tree_alpha`,
        fitted on public data). Larger alpha means larger node sensitivity (Delta is
        proportional to alpha).
    learning_rate : "auto" or float, default="auto"
        Initial step length eta_0 (a normalized step moves by exactly eta_t), for rows of norm at
        most R. "auto" is ``8 / (M R)`` for the logistic and multinomial losses (a total travel
        ``eta_0 T / 2 = 4 E / R`` whatever M), ``4 / (M R)`` for the squared hinge
        (DPLinearSVC) and, for the squared loss, the step whose total
        travel is ``min(4, max(1, sqrt(s) / 2.5)) / R`` (R^2 pays for every unit a noisy
        normalised step travels; fitted on public data).
    schedule : {"linear", "constant"}, default="linear"
        ``eta_t = eta_0 (1 - t / (T + 1))`` or ``eta_0``.
    tree : {"restart", "aligned"}, default="restart"
    honaker : bool, default=True
        Replace every node's noisy value by its online Honaker (2015) inverse-variance
        combination with its children (post-processing, no privacy cost; draws every completing
        node, about two noise vectors per step; cuts the momentum noise variance by 30-40 %).
        False: the paper's plain estimates (one noise vector per step).
    tol : float > 0 or None, default=None
        Tolerance of the non-private fit (``epsilon=inf`` only): the largest absolute gradient
        component at the solution (None: 1e-8).
    max_iter : int >= 1 or None, default=None
        Maximum number of iterations of the non-private fit (``epsilon=inf`` only; None:
        1000). A private fit runs ``epochs``.

    Notes
    -----
    ``epsilon=inf``: there is nothing to protect, and normalized SGD with a decaying step
    reaches the optimum only slowly, so the fit runs the library's shared non-private solver
    (L-BFGS, :mod:`skdp.optimizers._nonprivate`) to ``tol`` on the same (unclipped) objective,
    with a ``ConvergenceWarning`` when ``max_iter`` iterations do not get there; ``epochs``,
    ``batch_size``, ``momentum``, ``learning_rate`` and ``tree`` are then unused.

    Deviations from the paper: zero-out instead of replace-one (Delta halves); mini-batches of a
    public size; the tree restarts per epoch (or is epoch-aligned) so that no node straddles an
    epoch boundary; calibration through a tight accountant instead of the paper's closed-form
    sigma; last iterate instead of a uniformly drawn one; the paper's Algorithm 2 is not
    implemented (its details are lost in the source).

    A progress ``callback`` is called at epoch ends (the kernel runs one epoch at a time): the
    first epoch end at or after every ``callback_every`` steps, and after the last epoch; its
    ``epoch`` is the epoch number and its ``epsilon`` the tree event of the epochs done. A warm
    start (``problem.init``) sets ``w_0``; the momentum and the trees start empty.
    """

    name = "dp_nsgd_tree"
    # its event is a function of n, the budget and the hyper-parameters only
    event_depends_on_problem = False
    supports_replay = True
    required_problem_constants = ("gradient_bound",)
    # every step is a sum over its batch's rows: on Dask the client draws the epoch's order and
    # each chunk sums its rows of the batch (_summed_epoch)
    supports_distributed = True
    #: Its mini-batches are slices of a reshuffled order, not Poisson samples (``batch_size`` is
    #: its own: "auto", None or an int, never a rate).
    poisson_batches = False

    _parameter_constraints: dict = {
        "epochs": [POSITIVE_INT, AUTO],
        "batch_size": [AUTO, None, POSITIVE_INT],
        "momentum": [AUTO, Interval(Real, 0, 1, closed="left")],
        "learning_rate": [AUTO, POSITIVE],
        "schedule": [StrOptions({"linear", "constant"})],
        "tree": [StrOptions(set(TREE_LAYOUTS))],
        "honaker": ["boolean"],
        "tol": TOLERANCE,
        "max_iter": [POSITIVE_INT, None],
    }

    def __init__(
        self, epochs="auto", batch_size="auto", momentum="auto", learning_rate="auto",
        schedule="linear", tree="restart", honaker=True, tol=None, max_iter=None,
    ):
        self.epochs = epochs
        self.batch_size = batch_size
        self.momentum = momentum
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.tree = tree
        self.honaker = honaker
        self.tol = tol
        self.max_iter = max_iter

    # -- parameters ---------------------------------------------------------------------------
    def _settings(self, problem, budget=None):
        """(b, M, E, alpha, eta0): public quantities only (``epochs="auto"`` and the regression
        learning rate read the budget, never the data)."""
        n = problem.n_samples
        if self.batch_size in ("auto", None):  # "auto": the full batch (session 16)
            b = n
        else:
            b = min(int(self.batch_size), n)
        M = -(-n // b)
        if self.epochs == "auto":
            if budget is None:
                raise ValueError('epochs="auto" resolves from the budget: pass it')
            E = tree_epochs(n, problem.dim, budget_rho(budget.epsilon, budget.delta))
        else:
            E = int(self.epochs)
        if self.momentum != "auto":
            alpha = 1.0 - float(self.momentum)
        elif budget is None:  # the non-private fit: no noise to average
            alpha = 1.0 / M
        else:
            alpha = tree_alpha(n, problem.dim, budget_rho(budget.epsilon, budget.delta), M,
                               problem.loss.name)
        if self.learning_rate != "auto":
            eta0 = float(self.learning_rate)
        elif problem.loss.name == "squared":
            if budget is None:
                raise ValueError('learning_rate="auto" resolves from the budget: pass it')
            # total travel eta0 T / 2 (linear schedule) of tree_regression_travel / R: a normalised
            # step moves by eta_t whatever the noise, and R^2 pays for every unit of it
            travel = tree_regression_travel(n, problem.dim, budget_rho(budget.epsilon, budget.delta))
            eta0 = 2.0 * travel / (E * M * problem.row_norm_bound)
        else:
            # total travel 4 E / R whatever M (0.5 / R at 16 steps per epoch, 2 / R at 4); half
            # of it for the squared hinge
            eta0 = tree_classification_step(problem.loss.name) / (M * problem.row_norm_bound)
        return b, M, E, alpha, eta0

    # -- private fit --------------------------------------------------------------------------
    def _calibrate(self, problem, budget, b, M, E, alpha):
        """Node noise std sigma and the privacy record. Public inputs only."""
        G = problem.gradient_bound
        delta_node = G * alpha / b  # zero-out: one occurrence, weight <= 1
        S2 = sensitivity_squared(self.tree, M, E, alpha)
        S = math.sqrt(S2)

        def make(z):
            return TreeAggregationEvent(z * S, M, E, self.tree, alpha)

        # The exact one-Gaussian z is a lower bound for every accountant: starting the search
        # there avoids evaluating (PLD) accountants at absurdly small noise.
        z_exact = gaussian_noise_multiplier_exact(budget.epsilon, budget.delta)
        z, _ = calibrate_noise_multiplier(
            make, budget.epsilon, budget.delta, budget.accountant, lower=0.999 * z_exact
        )
        event = make(z)
        sigma = event.noise_multiplier * delta_node
        if self.tree == "aligned":
            max_release = float(epoch_tree_weights(alpha, M, E).max()) * delta_node
        else:
            max_release = delta_node
        record = PrivacyRecord.from_event(
            event, budget.delta, budget.accountant, mechanism="tree",
            noise_multiplier=sigma / max_release, sensitivity=max_release, n_steps=E * M,
            sampling=f"random reshuffling (b={b}, {M} steps/epoch)",
            details={
                "tree": self.tree,
                "honaker": bool(self.honaker),
                "node_sensitivity": delta_node,
                "node_noise_multiplier": event.noise_multiplier,
                "node_noise_std": sigma,
                "sensitivity_squared": S2,
                "effective_noise_multiplier": z,
                "alpha": alpha,
                "batch_size": b,
                "steps_per_epoch": M,
                "epochs": E,
            },
        )
        return sigma, record

    def _tables(self, M, E, alpha):
        """Per-level decay powers and Honaker weights of the within-epoch and epoch trees."""
        dec = 1.0 - alpha
        gamma = dec**M
        L_in = tree_depth(M - 1 if self.tree == "aligned" else M)
        L_ep = tree_depth(E) if self.tree == "aligned" else 0
        decpow_in = np.array([dec ** (2**level) for level in range(L_in)], dtype=float)
        decpow_ep = np.array([gamma ** (2**level) for level in range(L_ep)], dtype=float)
        hon_in = honaker_weights(dec, L_in)[0]
        hon_ep = honaker_weights(gamma, L_ep)[0]
        return decpow_in, hon_in, decpow_ep, hon_ep

    def _trace_layout(self, M, E, alpha, delta_node):
        """Sensitivity bound of each trace row, in the kernel's drawing order."""
        kappa = epoch_tree_weights(alpha, M, E) if self.tree == "aligned" else None
        rows = []
        for e in range(1, E + 1):
            for tau in range(1, M + 1):
                if self.tree == "aligned" and tau == M:
                    k = _trailing_zeros(e)
                    levels = range(k + 1) if self.honaker else [k]
                    rows.extend(kappa[level] * delta_node for level in levels)
                else:
                    k = _trailing_zeros(tau)
                    rows.extend([delta_node] * (k + 1 if self.honaker else 1))
        return np.array(rows, dtype=float)

    def _run(self, problem, sigma, rng, record_trace=False, replay=None, progress=None,
             record=None, settings=None):
        """The private path's trajectory with node noise ``sigma`` (0: the exact NSGD-momentum
        trajectory). Returns (w, n_steps, trace, trace_sensitivity). ``replay``: a recorded
        trace whose released nodes are released instead (tests). ``progress`` (with the fit's
        ``record``) calls back at the end of epochs (see :meth:`_prefix_epsilon`)."""
        if replay is not None:
            record_trace = True
        b, M, E, alpha, eta0 = settings or self._settings(problem)
        decpow_in, hon_in, decpow_ep, hon_ep = self._tables(M, E, alpha)
        delta_node = problem.gradient_bound * alpha / b
        if record_trace:
            sens = self._trace_layout(M, E, alpha, delta_node)
            trace = trace_buffer(sens.shape[0], problem.dim, True, replay)
        else:
            sens, trace = None, empty_trace()
        D = problem.dim
        w = problem.start()
        state = np.zeros((N_STATE, D))
        L_in, L_ep = max(decpow_in.shape[0], 1), max(decpow_ep.shape[0], 1)
        xi_in, xi_ep = np.zeros((L_in, D)), np.zeros((L_ep, D))
        sx_in = np.zeros((L_in if record_trace else 0, D))
        sx_ep = np.zeros((L_ep if record_trace else 0, D))
        n, T = problem.n_samples, E * M
        row = [0]  # the next trace row, carried across chunks
        # the step's arguments after its batch gradient (nsgd_tree_update's from lam on), the
        # same for both epoch loops
        step_args = (
            problem.lam, b, alpha, eta0, self.schedule == "linear", self.tree == "aligned",
            float(sigma), bool(self.honaker), decpow_in, hon_in, decpow_ep, hon_ep, rng, state,
            xi_in, xi_ep, sx_in, sx_ep, trace,
        )
        if is_distributed(problem) or M == 1:
            epoch = self._summed_epoch(self._batch_sum(problem, w), n, w, state, b, T, M,
                                       step_args, replay is not None)
        else:
            targets = scalar_targets(problem.Y, problem.loss.loss_id)  # 1-D: the scalar loop

            def epoch(perm, e, row):
                return nsgd_tree_epoch(
                    problem.rows, targets, w, perm, e, (e - 1) * M, T, problem.loss.loss_id,
                    problem.clip, *step_args, row, replay is not None,
                )

        def run_chunk(start, stop):  # whole epochs: start and stop are multiples of M (or T)
            for e in range(start // M + 1, stop // M + 1):
                # numpy's permutation (the same stream numba would draw, 4x faster), the epoch;
                # the full batch needs no order (and draws none, in memory and on Dask alike)
                row[0] = epoch(rng.permutation(n) if M > 1 else None, e, row[0])

        progress = progress or ProgressMonitor()
        progress.run(
            T, run_chunk, lambda stops: self._prefix_epsilon(record, stops // M),
            0.0 if record is None else record.delta, 1.0 / M, unit=M,
        )
        n_steps = T
        return w, int(n_steps), (trace if record_trace else None), sens

    @staticmethod
    def _batch_sum(problem, w):
        """``(w, index) -> the batch's sum of clipped per-example gradients`` where the epoch
        kernel's own row-by-row sum is not the tool: on Dask, the chunks' sums over their rows
        of the slice (:meth:`skdp._dask.DaskDesign.gradient_sum`); in memory, the full batch
        (``index`` None) by :func:`~skdp.optimizers._glm.full_batch_oracle`'s block sum, the
        one the other full-batch methods take (both cores where the problem is large enough;
        the kernel's sum runs one row at a time on one core, about 3 passes of ``X @ w``)."""
        if is_distributed(problem):
            design, loss_id, clip = problem.X, problem.loss.loss_id, problem.clip
            return lambda w_, index: design.gradient_sum(w_, loss_id, clip, index)
        oracle = full_batch_oracle(problem, thread_mode(threads_allowed(
            problem.n_samples * w.shape[0])))
        return lambda w_, index: oracle(w_)

    @staticmethod
    def _summed_epoch(batch_sum, n, w, state, b, T, M, step_args, replay):
        """``(perm, e, row) -> row``: one epoch whose batch gradients come from ``batch_sum``.

        The epoch's permutation (drawn from the fit's generator, as for the kernel; none for
        the full batch) is walked in slices of ``b``; each step's batch gradient, over the
        slice's positions sorted (a sum does not depend on the order of its terms, up to
        rounding), is written where :func:`~skdp.optimizers._tree_kernels.nsgd_tree_epoch`
        writes it, and the rest of the step is the kernel's own
        (:func:`~skdp.optimizers._tree_kernels.nsgd_tree_update`). On Dask the permutation is
        as secret as the noise: only the workers holding the rows see their positions (as
        with Poisson batches)."""
        grad = state[GRADIENT_ROW]  # where the kernel writes its batch gradient

        def epoch(perm, e, row):
            for tau in range(1, M + 1):
                start = (tau - 1) * b
                stop = min(start + b, n)
                index = None if stop - start == n else np.sort(perm[start:stop])
                grad[:] = batch_sum(w, index)
                row = nsgd_tree_update(w, tau, e, (e - 1) * M + tau, T, M, *step_args, row,
                                       replay)
            return row

        return epoch

    @staticmethod
    def _prefix_epsilon(record, epochs):
        """Epsilon of the first ``epochs`` epochs: the tree event with the nodes released so
        far (``S^2`` of fewer epochs, the same node noise)."""
        event = record.event

        def rdp_at(stops, orders):
            return np.array([
                replace(event, epochs=int(e)).rdp(orders) for e in stops
            ])

        return prefix_epsilon(epochs, record.delta, record.epsilon, rdp_at)

    def _solve_private(self, problem, budget, rng, record_trace, replay=None, progress=None):
        """Private fit. A ``progress`` callback is called at the end of an epoch: the first
        epoch end at or after every ``callback_every`` steps, and after the last epoch."""
        self._check_params()
        settings = self._settings(problem, budget)
        b, M, E, alpha, eta0 = settings
        sigma, record = self._calibrate(problem, budget, b, M, E, alpha)
        w, n_steps, trace, sens = self._run(
            problem, sigma, rng, record_trace, replay=replay, progress=progress, record=record,
            settings=settings,
        )
        return OptimizeResult(
            coef=w.reshape(problem.n_params, problem.n_outputs),
            n_iter=n_steps,
            record=record,
            trace=trace,
            extras={
                "batch_size": b, "steps_per_epoch": M, "alpha": alpha, "learning_rate": eta0,
                "noise_std": sigma, "trace_sensitivity": sens,
                "hyperparameters": {"epochs": E, "batch_size": b, "momentum": 1.0 - alpha,
                                    "learning_rate": eta0},
            },
        )
