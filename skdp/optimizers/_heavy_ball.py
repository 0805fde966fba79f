"""The non-private heavy-ball / momentum solver used at ``epsilon = inf``.

With no noise there is nothing to protect, so the solver may look at the objective: it stops on
a gradient-norm tolerance and resets the momentum whenever the objective goes up (adaptive
restart, O'Donoghue & Candès 2015), which makes the momentum method monotone and convergent.
None of this is ever used on a private path: there the number of steps is fixed in advance.
"""

import numpy as np
from numba import njit

from ._glm import value_and_gradient

__all__ = ["momentum_to_optimum"]


@njit(cache=True, nogil=True)
def momentum_to_optimum(X, Y, w, loss_id, tau, lam, step, momentum, tol, max_iter):
    """Minimise F from ``w`` (in place) with heavy ball + adaptive restart; returns iterations.

    Iterates ``w_{t+1} = w_t - step * g_t + momentum * (w_t - w_{t-1})`` and stops when
    ``||grad F(w)|| <= tol`` or after ``max_iter`` gradient evaluations.
    """
    D = w.shape[0]
    K = Y.shape[1]
    g = np.zeros(D)
    v = np.zeros(D)  # w_t - w_{t-1}
    z = np.zeros(K)
    s = np.zeros(K)
    f_prev = np.inf
    t = 0
    while t < max_iter:
        f = value_and_gradient(X, Y, w, loss_id, tau, lam, g, z, s)
        t += 1
        gn = 0.0
        for j in range(D):
            gn += g[j] * g[j]
        if np.sqrt(gn) <= tol:
            break
        if f > f_prev:
            # restart: undo nothing, drop the momentum
            for j in range(D):
                v[j] = 0.0
        f_prev = f
        for j in range(D):
            v[j] = momentum * v[j] - step * g[j]
            w[j] += v[j]
    return t
