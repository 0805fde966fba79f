"""The solver every optimizer runs at ``epsilon = inf``: L-BFGS on the same objective.

Without noise there is nothing to protect, so the solver may look at the data: it minimises
``F(W) = (1/n) sum_i s_i loss_i(W) + (lam/2) ||W||^2`` of the :class:`~skdp.optimizers.Problem`
(the jitted :func:`~skdp.optimizers._glm.value_and_gradient`, dense or sparse rows, weights, the
Huberised loss when ``problem.clip`` is finite) with SciPy's L-BFGS-B, as scikit-learn's
``LogisticRegression(solver="lbfgs")`` does. The private optimizers' own iterations are built for
noise: their step sizes come from the data-free smoothness bound ``curvature R^2 + lam``, which
on weakly regularised problems is orders of magnitude above the curvature of the data, so
running them without noise needs far more iterations than a quasi-Newton method.

A solve that stops at ``max_iter`` before reaching ``tol`` warns with scikit-learn's
``ConvergenceWarning``. Nothing here is ever used on a private path.
"""


import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from ._glm import value_and_gradient
from .._warnings import warn

__all__ = ["DEFAULT_MAX_ITER", "DEFAULT_TOL", "minimize_objective"]

#: Iterations of the non-private solve when ``max_iter`` is None.
DEFAULT_MAX_ITER = 1000
#: Tolerance of the non-private solve when ``tol`` is None: the largest absolute component of
#: the gradient at the solution.
DEFAULT_TOL = 1e-8


def minimize_objective(problem, max_iter=None, tol=None, name="the non-private solver"):
    """Minimise the problem's objective from ``problem.start()``.

    Stops when the largest absolute gradient component is at most ``tol`` or when an
    iteration no longer decreases F by more than a few ulps (scikit-learn's criteria for its
    lbfgs solver); warns (``ConvergenceWarning``) when ``max_iter`` iterations did not get
    there.

    Returns
    -------
    w : ndarray of shape (p * K,)
    n_iter : int
        Number of L-BFGS iterations.
    """
    max_iter = DEFAULT_MAX_ITER if max_iter is None else int(max_iter)
    tol = DEFAULT_TOL if tol is None else float(tol)
    X, Y = problem.rows, problem.Y
    K = Y.shape[1]
    lid, tau, lam = problem.loss.loss_id, float(problem.clip), float(problem.lam)
    grad, z, s = np.zeros(problem.dim), np.zeros(K), np.zeros(K)

    if getattr(X, "is_distributed", False):  # rows on Dask workers (skdp._dask)
        def fun(w):
            return X.value_and_gradient(np.ascontiguousarray(w), lid, tau, lam)
    else:
        def fun(w):
            value = value_and_gradient(X, Y, np.ascontiguousarray(w), lid, tau, lam, grad, z, s)
            return value, grad.copy()

    result = minimize(
        fun, problem.start(), jac=True, method="L-BFGS-B",
        options={
            "maxiter": max_iter,
            "maxfun": 20 * max_iter + 100,
            "gtol": tol,
            "ftol": 64 * np.finfo(float).eps,
            "maxls": 50,
        },
    )
    if not result.success:
        warn(
            f"{name} did not converge at epsilon=inf: after {result.nit} iterations "
            f"({result.message}) the largest gradient component is "
            f"{np.max(np.abs(result.jac)):.3g} > tol={tol:g}. Increase max_iter (now "
            f"{max_iter}), scale the data, or regularise more.",
            ConvergenceWarning,
        )
    return np.ascontiguousarray(result.x), int(result.nit)
