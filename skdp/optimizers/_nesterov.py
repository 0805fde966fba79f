"""The shared Nesterov kernels of ``dp_nag_opt`` and ``dp_masg``.

:func:`nesterov_kernel` is the private one. It is driven by per-step schedules computed in
Python from public quantities only (:mod:`skdp.optimizers._allocation`): the step ``alpha[t]``,
the momentum ``beta[t]``, the momentum reset ``restart[t]`` (the stage starts of the multi-stage
method) and the noise scale ``noise_scale[t]``. The number of steps is the length of the
schedules, fixed before the data is touched.

:func:`nesterov_to_optimum` is the non-private solver used at ``epsilon = inf``: Nesterov's method
with the gradient restart of O'Donoghue & Candès (2015) and a gradient-norm stopping rule. It
looks at the data to decide when to stop, which is fine only because nothing is private there.
"""

import numpy as np
from numba import njit

from ..privacy.noise import add_noise
from ._glm import clipped_gradient_sum, poisson_batch, value_and_gradient

__all__ = ["nesterov_kernel", "nesterov_to_optimum"]


@njit(cache=True, nogil=True)
def nesterov_kernel(
    X, Y, w, loss_id, tau, lam, q, inv_batch, alpha, beta, restart, mechanism, noise_scale,
    rng, perm, trace, replay=False,
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
    """
    n = X.shape[0]
    D = w.shape[0]
    K = Y.shape[1]
    T = alpha.shape[0]
    g = np.zeros(D)
    y = np.zeros(D)
    w_prev = w.copy()
    z = np.zeros(K)
    s = np.zeros(K)
    tracing = trace.shape[0] > 0
    for t in range(T):
        b = beta[t]
        if restart[t]:
            for j in range(D):
                w_prev[j] = w[j]
        for j in range(D):
            yj = (1.0 + b) * w[j] - b * w_prev[j]
            w_prev[j] = w[j]
            y[j] = yj
        m = poisson_batch(rng, n, q, perm)  # q = 1: all n rows, perm stays arange(n)
        clipped_gradient_sum(X, Y, y, perm, m, loss_id, tau, g, z, s)
        if tracing:
            trace[t, 0, :] = g
        add_noise(rng, g, mechanism, noise_scale[t])
        if replay:  # release what the recorded run released (record/replay tests)
            for j in range(D):
                g[j] = trace[t, 1, j]
        elif tracing:
            trace[t, 1, :] = g
        a = alpha[t]
        for j in range(D):
            w[j] = y[j] - a * (g[j] * inv_batch + lam * y[j])
    return T


@njit(cache=True, nogil=True)
def nesterov_to_optimum(X, Y, w, loss_id, tau, lam, step, momentum, tol, max_iter):
    """Minimise F from ``w`` (in place) with Nesterov + gradient restart; returns iterations.

    Iterates ``y = w + momentum (w - w_prev)``, ``w+ = y - step grad F(y)``; the momentum is
    dropped whenever ``grad F(y) . (w+ - w) > 0`` (the step goes against the descent direction,
    O'Donoghue & Candès 2015). Stops when ``||grad F(y)|| <= tol`` (then ``w = y``) or after
    ``max_iter`` gradient evaluations.
    """
    D = w.shape[0]
    K = Y.shape[1]
    g = np.zeros(D)
    y = np.zeros(D)
    w_prev = w.copy()
    z = np.zeros(K)
    s = np.zeros(K)
    t = 0
    while t < max_iter:
        for j in range(D):
            y[j] = w[j] + momentum * (w[j] - w_prev[j])
        value_and_gradient(X, Y, y, loss_id, tau, lam, g, z, s)
        t += 1
        gn = 0.0
        for j in range(D):
            gn += g[j] * g[j]
        if np.sqrt(gn) <= tol:
            for j in range(D):
                w[j] = y[j]
            break
        dot = 0.0
        for j in range(D):
            w_new = y[j] - step * g[j]
            dot += g[j] * (w_new - w[j])
            w_prev[j] = w[j]
            w[j] = w_new
        if dot > 0.0:
            for j in range(D):  # restart: no momentum into the next step
                w_prev[j] = w[j]
    return t
