"""The full-batch loops of dp_gdws, dp_nag_opt / dp_masg and dp_sgld in Python, around an oracle.

A full-batch step needs one thing from the data: the sum of the weighted clipped per-example
gradients at the current point. In memory it is one small numba kernel
(:func:`~skdp.optimizers._glm.full_batch_oracle`, the only thing a full-batch fit compiles);
when the rows are not in this process (a fit on Dask, :mod:`skdp._dask`), the design computes it
where the rows live (``design.gradient_sum(w, loss_id, tau)``). The mini-batch fits run the
optimizers' fused kernels, whose full-batch case (q = 1) these loops are step for step: the
same gradient sum (on Dask up to the order of the floating-point sum over chunks), the noise of
the step drawn in one call from the same generator stream
(:func:`~skdp.privacy.noise.add_noise_bulk`), the same trace/replay and update arithmetic. So a
fit with the same seed releases the same noise, and its privacy record is the same object.
With Poisson mini-batches the oracle of :func:`poisson_oracle` draws the step's sample first,
from the same generator, as the kernels do: the loops are unchanged.
"""

import math

import numpy as np

from ..privacy.noise import GAUSSIAN, add_noise_bulk

__all__ = [
    "is_distributed", "check_distributed", "gdws_full_batch",
    "nesterov_full_batch", "sgld_full_batch", "poisson_oracle", "step_oracle",
]


def is_distributed(problem):
    """Whether the problem's rows live elsewhere (a design with ``gradient_sum``)."""
    return getattr(problem.X, "is_distributed", False)


def check_distributed(optimizer, n_samples):
    """Raise ValueError, before any work on the cluster, when ``optimizer`` cannot run on rows
    that live on Dask workers (:func:`poisson_oracle` runs the ones that can)."""
    from ._base import DISTRIBUTED_OPTIMIZERS, batch_fraction

    name = optimizer.name or type(optimizer).__name__
    if not optimizer.supports_distributed:
        raise ValueError(
            f"{name} cannot run on Dask inputs (its steps are not a sum over rows: dp_scd keeps "
            "a dual variable per row and updates one row at a time); the optimizers that can "
            f"are {', '.join(DISTRIBUTED_OPTIMIZERS)}, in full batch or with their mini-batches "
            "(Poisson samples; dp_nsgd_tree's reshuffled epochs)"
        )
    if optimizer.poisson_batches:  # their mini-batch mode is Poisson sampling (poisson_oracle)
        batch_fraction(getattr(optimizer, "batch_size", None), n_samples)  # its ValueError


def release_bulk(rng, g, mechanism, scale, trace, t, replay):
    """The kernels' :func:`~skdp.optimizers._step_parts.release_step` for these loops: g plus
    the step's noise drawn in one call (:func:`~skdp.privacy.noise.add_noise_bulk`), recorded in
    ``trace[t]`` when tracing, or replaced by a recorded run's release with ``replay``."""
    tracing = trace.shape[0] > 0
    if tracing:
        trace[t, 0, :] = g
    add_noise_bulk(rng, g, mechanism, scale)
    if replay:  # release what the recorded run released (record/replay tests)
        g[:] = trace[t, 1, :]
    elif tracing:
        trace[t, 1, :] = g


def gdws_full_batch(
    oracle, w, lam, n_steps, inv_batch, step, smoothing, mechanism, noise_scale, rng, trace,
    replay, u, t0,
):
    """The full-batch case of ``dp_gdws``'s kernel; ``w`` and ``u`` updated in place."""
    for t in range(n_steps):
        g = oracle(w)
        release_bulk(rng, g, mechanism, noise_scale, trace, t, replay)
        gj = g * inv_batch + lam * w
        if t0 + t == 0:
            u[:] = smoothing * gj
        else:
            u[:] = (1.0 - smoothing) * u + smoothing * gj
        w -= step * u
    return n_steps


def nesterov_full_batch(
    oracle, w, lam, inv_batch, alpha, beta, restart, mechanism, noise_scale, rng, trace,
    replay, w_prev,
):
    """The full-batch case of :func:`~skdp.optimizers._nesterov.nesterov_kernel`; ``w`` and
    ``w_prev`` updated in place."""
    for t in range(alpha.shape[0]):
        b = beta[t]
        if restart[t]:
            w_prev[:] = w
        y = (1.0 + b) * w - b * w_prev
        w_prev[:] = w
        g = oracle(y)
        release_bulk(rng, g, mechanism, noise_scale[t], trace, t, replay)
        w[:] = y - alpha[t] * (g * inv_batch + lam * y)
    return alpha.shape[0]


def _project(w, radius):
    """The projection of dp_sgld's kernel onto the ball of ``radius`` (none when <= 0)."""
    if radius <= 0.0:
        return
    nrm = math.sqrt(float(np.dot(w, w)))
    if nrm > radius:
        w *= radius / nrm


def sgld_full_batch(
    oracle, w, lam, etas, inv_batch, sigma, init_std, radius, rng, trace, replay, initialise,
):
    """The full-batch case of ``dp_sgld``'s kernel; ``w`` updated in place."""
    if initialise:
        add_noise_bulk(rng, w, GAUSSIAN, init_std)
        _project(w, radius)
    for t in range(etas.shape[0]):
        eta = etas[t]
        g = oracle(w)
        release_bulk(rng, g, GAUSSIAN, sigma * math.sqrt(2.0 / eta) / inv_batch, trace, t, replay)
        a = eta * inv_batch
        shrink = 1.0 - eta * lam
        w[:] = shrink * w - a * g
        _project(w, radius)
    return etas.shape[0]


def poisson_oracle(problem, q, rng, perm):
    """``w -> clipped gradient sum over the step's batch`` of a distributed problem (None in
    memory): all rows when ``q >= 1``, else a Poisson sample of rate ``q``.

    The sample is drawn on the client, from the fit's generator ``rng`` and the persistent
    permutation ``perm`` (``arange(n)`` at the start of the fit), by the in-memory kernels' own
    jitted sampler (:func:`~skdp.optimizers._glm.poisson_batch`): numba and numpy share the
    generator's state, so the draws are the kernel's, in the kernel's order (the batch, then the
    noise the loop adds). Each chunk's task gets only its own sampled local positions and
    returns their sum. The full-batch loops above then run a Poisson fit unchanged: the same
    seed gives the same fit, and the event (Poisson-subsampled Gaussian or Laplace of rate q)
    is the in-memory one, because the released sum is the same function of the same sample.

    Client cost per step: the sampler, O(q n) time (a geometric skip per sampled row), and
    ``perm``, 8 n bytes held for the fit (its output buffer); the split by chunk, O(q n +
    chunks).
    """
    if not is_distributed(problem):
        return None
    design, loss_id, tau = problem.X, problem.loss.loss_id, problem.clip
    if q >= 1.0:
        def oracle(w):
            return design.gradient_sum(w, loss_id, tau)

        return oracle
    from ._glm import poisson_batch

    n, q = int(problem.n_samples), float(q)

    def sampled(w):
        m = poisson_batch(rng, n, q, perm)
        return design.gradient_sum(w, loss_id, tau, perm[:m])

    return sampled


def step_oracle(problem, q, rng, perm, full_batch):
    """What the steps of a gradient fit run on: ``(oracle, threads, Y)``.

    ``oracle`` is a function ``w -> clipped gradient sum`` when the steps run in Python (the rows
    on Dask workers, any batch: :func:`poisson_oracle`; the full batch in memory, one small
    kernel: :func:`~skdp.optimizers._glm.full_batch_oracle`), else None: mini-batches in memory
    run in the optimizer's fused kernel, on ``Y``, the targets as that kernel takes them (1-D
    ones as a vector, so that it compiles the scalar gradient path alone). ``threads``: whether
    the gradient sums may use several cores (the same result either way).
    """
    from ._glm import full_batch_oracle, scalar_targets, thread_mode, threads_allowed

    threads = thread_mode(threads_allowed(problem.n_samples * problem.dim))
    oracle = poisson_oracle(problem, q, rng, perm)
    if oracle is None and full_batch:
        oracle = full_batch_oracle(problem, threads)
    Y = scalar_targets(problem.Y, problem.loss.loss_id) if oracle is None else None
    return oracle, threads, Y
