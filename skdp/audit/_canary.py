"""Worst-case canaries for linear models, at the estimator level and at the optimizer level.

The canary is a record of the largest allowed norm in a direction no other record uses (an extra
feature column that is zero for every other row). Its gradient is then orthogonal to everyone
else's, so the coefficient of that column moves only through the canary and the noise: the
canary's score (its margin) is the most powerful test statistic a linear model offers, and its
shift between D and D' is as large as clipping allows. Its label is the one whose (clipped)
loss derivative is largest at the start of training: for the squared loss at the optimizer
level, a target so far away that the clipped derivative stays saturated for the whole run.
"""

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..losses import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE

__all__ = ["CanaryData", "CanaryProblem", "make_canary", "canary_problem", "null_neighbour", "canary_direction"]


class CanaryProblem(NamedTuple):
    """An optimizer-level problem with a canary (returned by :func:`canary_problem`).

    Attributes
    ----------
    problem : Problem
        D, with the canary as the last row.
    neighbour : Problem
        D', the canary replaced by the null record.
    index : int
        Row of the canary.
    column : int
        The parameter row (column of X) that only the canary uses.
    """

    problem: object
    neighbour: object
    index: int
    column: int


@dataclass(frozen=True)
class CanaryData:
    """A data set with a canary, and its zero-out neighbour.

    Attributes
    ----------
    X, y : ndarray
        D: the original rows with one extra (zero) feature column, plus the canary as the last
        row.
    X_neighbour, y_neighbour : ndarray
        D': the same, with the canary row replaced by the null record (an all-zero row; its label
        is irrelevant, a zero row contributes no gradient).
    index : int
        Row index of the canary (the last row).
    x : ndarray of shape (n_features,)
        The canary row.
    label : scalar
        The canary's label.
    """

    X: np.ndarray
    y: np.ndarray
    X_neighbour: np.ndarray
    y_neighbour: np.ndarray
    index: int
    x: np.ndarray
    label: object


def make_canary(X, y, label=None, data_norm=1.0, task="classification", y_bounds=(-1.0, 1.0)):
    """Add a worst-case canary to an estimator-level data set.

    The canary is ``data_norm * e`` where ``e`` is a new feature column, zero for every other
    row. Its null neighbour is an all-zero row; it is a null record (zero gradient) only for an
    estimator with ``fit_intercept=False`` (the intercept column of a zero row is not zero).

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,), or (n, K) for a regression of K targets
    label : scalar or None
        The canary's label. None: for classification the least frequent class (ties: the
        largest), for regression the upper target bound ``y_bounds[1]`` (its residual at the
        start is the largest a clipped target allows), at every column of a 2-D y.
    data_norm : float, default=1.0
        The estimator's ``data_norm`` (the canary has exactly this norm, so clipping keeps it).
    task : {"classification", "regression"}
    y_bounds : tuple, default=(-1.0, 1.0)
        The regression estimator's public target bounds.

    Returns
    -------
    CanaryData
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    n, d = X.shape
    if label is None:
        if task == "classification":
            classes, counts = np.unique(y, return_counts=True)
            label = classes[::-1][np.argmin(counts[::-1])]
        elif task == "regression":
            label = float(y_bounds[1])
        else:
            raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    x = np.zeros(d + 1)
    x[d] = float(data_norm)
    X_in = np.zeros((n + 1, d + 1))
    X_in[:n, :d] = X
    X_in[n] = x
    X_out = X_in.copy()
    X_out[n] = 0.0
    if task == "regression" and y.ndim == 2:  # several targets: the canary's at every column
        y_in = np.vstack([y.astype(float), np.broadcast_to(np.asarray(label, dtype=float),
                                                           (1, y.shape[1]))])
    else:
        y_in = np.concatenate(
            [y, np.asarray([label], dtype=y.dtype if task == "classification" else float)])
    return CanaryData(X=X_in, y=y_in, X_neighbour=X_out, y_neighbour=y_in.copy(), index=n, x=x,
                      label=label)


def null_neighbour(problem, index):
    """The zero-out neighbour of a :class:`~skdp.optimizers.Problem`: row ``index`` of X set to 0.

    An all-zero row (intercept column included) contributes a zero gradient for every loss: it is
    the null record of skdp's neighbouring relation. Y is left as it is.

    Parameters
    ----------
    problem : Problem
    index : int

    Returns
    -------
    Problem
        A copy of ``problem`` with a new X (a CSR matrix when X is sparse, its row's entries
        removed).
    """
    return replace(problem, X=zero_row(problem.X, index))


def zero_row(X, index):
    """A copy of X with row ``index`` set to zero: a C-contiguous array (float32 stays float32,
    so D and D' take the same kernels), or a CSR matrix with the row's stored entries removed
    when X is sparse."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.data[X.indptr[index]:X.indptr[index + 1]] = 0.0
        X.eliminate_zeros()
        return X
    X = np.asarray(X)
    X = np.array(X, dtype=X.dtype if X.dtype == np.float32 else np.float64, copy=True)
    X[index] = 0.0
    return np.ascontiguousarray(X)


def canary_problem(problem, target=None, saturate=1e3):
    """Append a worst-case canary to an optimizer-level problem.

    A new parameter column is inserted (before the intercept column when the problem has one),
    zero for every existing row; the canary row is ``R e`` with ``R = problem.row_norm_bound``.

    Parameters
    ----------
    problem : Problem
    target : array-like of shape (K,) or None
        The canary's encoded target row. None: +1 for logistic / squared hinge (every output),
        the first class for multinomial, and ``saturate * max(1, clip)`` for the squared loss
        (the clipped derivative then stays at ``-clip`` for the whole run: the canary's gradient
        has the full norm G at every step).
    saturate : float, default=1e3

    Returns
    -------
    CanaryProblem
        ``(problem, neighbour, index, column)``: D (the canary as the last row), D' (the canary
        replaced by the null record), the canary's row and the parameter row (column of X) only
        the canary uses. A sparse X gives sparse (CSR) designs.
    """
    X, Y = problem.X, problem.Y
    n, p = X.shape
    K = Y.shape[1]
    col = p - 1 if problem.fit_intercept else p
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        canary = sp.csr_matrix(([problem.row_norm_bound], ([0], [col])), shape=(1, p + 1))
        Xn = sp.vstack([
            sp.hstack([X[:, :col], sp.csr_matrix((n, 1)), X[:, col:]]), canary
        ]).tocsr()
    else:
        Xn = np.zeros((n + 1, p + 1))
        Xn[:n, :col] = X[:, :col]
        Xn[:n, col + 1:] = X[:, col:]
        Xn[n, col] = problem.row_norm_bound
        Xn = np.ascontiguousarray(Xn)
    if target is None:
        if problem.loss.loss_id == MULTINOMIAL:
            target = np.eye(K)[0]
        elif problem.loss.loss_id == SQUARED:
            target = np.full(K, saturate * max(1.0, problem.clip if np.isfinite(problem.clip) else 1.0))
        else:
            target = np.ones(K)
    target = np.asarray(target, dtype=float).reshape(K)
    Yn = np.vstack([Y, target[None, :]])
    p_in = replace(problem, X=Xn, Y=np.ascontiguousarray(Yn))
    return CanaryProblem(p_in, null_neighbour(p_in, n), n, col)


def _derivative_at_zero(loss_id, y):
    """d loss / d z at z = 0 (numpy; the formulas of :mod:`skdp.losses`)."""
    if loss_id == LOGISTIC:
        return -0.5 * y
    if loss_id == SQUARED:
        return -y
    if loss_id == SQUARED_HINGE:
        return -2.0 * y
    if loss_id == MULTINOMIAL:
        return np.full(y.shape, 1.0 / y.shape[0]) - y
    raise ValueError(f"unknown loss id {loss_id}")


def canary_direction(problem, index):
    """Unit direction (flat, length p*K) in which the canary at ``index`` pulls at W = 0.

    ``-outer(x, s)`` with ``s`` the canary's clipped loss derivative at zero margins; the default
    test statistic of :func:`~skdp.audit.audit_optimizer` projects the released coefficients on it.

    Parameters
    ----------
    problem : Problem
    index : int

    Returns
    -------
    ndarray of shape (p * K,)
    """
    K = problem.n_outputs
    row = problem.X[index]
    x = np.asarray(row.toarray() if sp.issparse(row) else row, dtype=float).ravel()
    s = _derivative_at_zero(problem.loss.loss_id, np.asarray(problem.Y[index], dtype=float))
    nrm = np.linalg.norm(s)
    if nrm > problem.clip:
        s = s * (problem.clip / nrm)
    d = -np.outer(x, s).ravel()
    nrm = np.linalg.norm(d)
    if nrm == 0:
        d = np.outer(x, np.ones(K)).ravel()
        nrm = np.linalg.norm(d)
    if nrm == 0:
        raise ValueError("the canary row is zero: it cannot be distinguished from the null record")
    return d / nrm
