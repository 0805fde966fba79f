"""A non-private momentum solver with a fixed step: the tests' and benchmarks' reference.

The optimizers themselves run :mod:`skdp.optimizers._nonprivate` (L-BFGS) at ``epsilon = inf``;
this solver is kept as an independent check of that optimum. Nesterov's
accelerated gradient with gradient-based adaptive restart (O'Donoghue & Candès 2015), stopped on a
gradient-norm tolerance. None of this is ever used on a private path: there the number of steps is
fixed in advance and nothing depends on the data.
"""

import numpy as np
from numba import njit

from ._glm import value_and_gradient

__all__ = ["momentum_to_optimum"]


@njit(cache=True, nogil=True)
def momentum_to_optimum(X, Y, w, loss_id, tau, lam, step, momentum, tol, max_iter):
    """Minimise F from ``w`` (in place); returns the number of gradient evaluations.

    ``y_t = w_t + momentum (w_t - w_{t-1})``, ``w_{t+1} = y_t - step grad F(y_t)``; the momentum
    is dropped whenever ``grad F(y_t) . (w_{t+1} - w_t) > 0`` (the step turned against the
    momentum). Stops when ``||grad F(y_t)|| <= tol`` (then ``w = y_t``) or after ``max_iter``
    evaluations. Converges for any convex L-smooth F with ``step <= 1/L``.
    """
    D = w.shape[0]
    K = Y.shape[1]
    g = np.zeros(D)
    y = w.copy()
    w_new = np.zeros(D)
    z = np.zeros(K)
    s = np.zeros(K)
    t = 0
    while t < max_iter:
        value_and_gradient(X, Y, y, loss_id, tau, lam, g, z, s)
        t += 1
        gn = 0.0
        for j in range(D):
            gn += g[j] * g[j]
        if np.sqrt(gn) <= tol:
            for j in range(D):
                w[j] = y[j]
            break
        against = 0.0
        for j in range(D):
            w_new[j] = y[j] - step * g[j]
            against += g[j] * (w_new[j] - w[j])
        beta = 0.0 if against > 0.0 else momentum
        for j in range(D):
            y[j] = w_new[j] + beta * (w_new[j] - w[j])
            w[j] = w_new[j]
    return t
