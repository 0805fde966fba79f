"""The shared Nesterov kernels of ``dp_nag_opt`` and ``dp_masg``.

:func:`nesterov_kernel` is the private one. It is driven by per-step schedules computed in
Python from public quantities only (:mod:`skdp.optimizers._allocation`): the step ``alpha[t]``,
the momentum ``beta[t]``, the momentum reset ``restart[t]`` (the stage starts of the multi-stage
method) and the noise scale ``noise_scale[t]``. The number of steps is the length of the
schedules, fixed before the data is touched.

At ``epsilon = inf`` both optimizers use the shared non-private solver
(:mod:`skdp.optimizers._nonprivate`, L-BFGS).
"""

import numpy as np
from numba import njit

from ._glm import block_gradient_sum, gradient_workspace
from ._step_parts import draw_batch, release_step

__all__ = ["nesterov_kernel"]


@njit(cache=True, nogil=True)
def nesterov_kernel(
    X, Y, w, loss_id, tau, lam, q, inv_batch, alpha, beta, restart, mechanism, noise_scale,
    rng, perm, trace, replay=False, w_prev=None, threads=None,
):
    """Private Nesterov steps, ``T = alpha.shape[0]`` of them, on ``w`` in place.

    Step t (0-based)::

        if restart[t]:  w_prev = w                      (momentum reset)
        y      = (1 + beta[t]) w - beta[t] w_prev
        w_prev = w
        g      = sum over the Poisson batch B_t of clipped per-example gradients at y
        g     += noise(mechanism, noise_scale[t])       (the released quantity)
        w      = y - alpha[t] (g * inv_batch + lam y)

    ``inv_batch`` is ``1 / (q n)``: the noisy sum is divided by the public expected batch size.
    With ``trace.shape[0] > 0`` the clipped sum before and after the noise of step t is written to
    ``trace[t, 0]`` and ``trace[t, 1]``. Nothing is allocated inside the loop.

    ``replay`` (record/replay tests only): ``trace[:, 1]`` holds a recorded run's releases; the
    kernel still computes (and records in ``trace[t, 0]``) its own clipped sum and draws its
    noise, so the random stream stays aligned, but then releases ``trace[t, 1]`` instead. The
    iterates are a function of the releases and the public schedules only, so a replayed run on
    a neighbouring data set follows the recorded run's trajectory exactly.

    ``w_prev`` (the previous iterate, updated in place; None: ``w``, a fresh start) resumes a
    fit run in chunks, with the schedules and the trace sliced to the chunk's steps.
    ``threads``: the gradient sums may use several cores (same result, see ``_glm``).
    ``mechanism``: GAUSSIAN or LAPLACE, or None for Gaussian noise with no Laplace sampler
    compiled (see ``_step_parts.noise_mode``). ``Y`` may be 1-D (see ``_glm.scalar_targets``).
    """
    n = X.shape[0]
    D = w.shape[0]
    T = alpha.shape[0]
    g = np.zeros(D)
    y = np.zeros(D)
    prev = w.copy() if w_prev is None else w_prev
    partial = gradient_workspace(n, D)
    for t in range(T):
        b = beta[t]
        if restart[t]:
            for j in range(D):
                prev[j] = w[j]
        for j in range(D):
            yj = (1.0 + b) * w[j] - b * prev[j]
            prev[j] = w[j]
            y[j] = yj
        m = draw_batch(rng, n, q, perm)  # q = None: all n rows, perm stays arange(n)
        block_gradient_sum(X, Y, y, perm, m, loss_id, tau, g, partial, threads)
        release_step(rng, g, mechanism, noise_scale[t], trace, t, replay)
        a = alpha[t]
        for j in range(D):
            w[j] = y[j] - a * (g[j] * inv_batch + lam * y[j])
    return T
