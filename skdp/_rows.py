"""The row access every kernel goes through: dense or sparse (CSR) design, with example weights.

A kernel never indexes ``X`` itself; it calls the jitted primitives below, which numba
specialises on the type of ``X``:

* a plain 2-D float64 array (the low-level tests and benchmarks): dense rows, weight 1;
* :class:`DenseRows`: a C-contiguous 2-D array read in place, a factor and a weight per row,
  and an optional constant last column (the clipped design of a fit without a copy of X);
* :class:`SparseRows`: CSR arrays (``data``, ``indices``, ``indptr``; int32 indices, int64
  only past 2**31 entries) and a weight per row; a row costs its stored entries, never ``p``.

Both named tuples carry ``shape = (n, p)``, so ``X.shape[0]`` and ``X.shape[1]`` read the same
in every kernel. The estimators always pass a ``DenseRows`` or a ``SparseRows`` (weights of one
when the caller gives none): two specialisations per kernel (times two for the kernels that
sample: full batches, ``q=None``, compile no sampler; see :mod:`skdp.optimizers._step_parts`).

Example weights scale the per-example loss: the objective is
``(1/n) sum_i w_i loss_i + (lam/2) ||W||^2`` and the clipped per-example gradient is
``w_i * g_i``, so the sensitivity is ``max_sample_weight`` times that of unweighted data.
"""

from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numba import njit, types
from numba.extending import overload

__all__ = [
    "DenseRows", "SparseRows", "make_rows", "row_weight", "dot_row", "axpy_row", "margins",
    "add_example_gradient", "margins_and_sqnorm", "design_kind", "clip_sparse_rows",
    "sparse_row_norms",
    "clip_limit", "clip_factors", "index_dtype", "row_norms", "float64_blocks", "clipped_dense_rows",
    "IN_PLACE_LIMIT", "design_array", "dot_stored", "axpy_stored", "tail_dot", "add_tail",
    "read_only",
]

DenseRows = namedtuple("DenseRows", ["values", "weight", "scale", "tail", "shape"])
DenseRows.__doc__ = """Dense design rows: row i is ``scale[i] * values[i]``, followed by the constant
``tail`` when ``shape[1] == values.shape[1] + 1`` (an intercept column), with weight ``weight[i]``.

``values`` (n, d) is C-contiguous float64 or float32 and is only read: a fit clips the caller's
rows through ``scale`` (:func:`clipped_dense_rows`) instead of writing a clipped copy of X. The
kernels compute in float64 (a float32 entry converts exactly), so a float32 X gives the bits of
the same rows in float64; numba compiles a float32 variant of a kernel on its first float32 fit."""
SparseRows = namedtuple("SparseRows", ["data", "indices", "indptr", "weight", "shape"])
SparseRows.__doc__ = "CSR design rows (``data``, ``indices``, ``indptr``) with weights ``weight``."


def read_only(a):
    """``a``, or a read-only view of it.

    The arrays of :class:`DenseRows` and :class:`SparseRows` are always read-only: numba types a
    read-only array apart from a writable one, so a caller's read-only X (a memmap, a Dask
    chunk, scikit-learn's read-only checks) would otherwise compile every kernel a second time.
    """
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


#: Sums of squares outside [_SMALL_SQ, inf) lost precision to underflow or overflowed: below
#: it, squares of the entries may be subnormal.
_SMALL_SQ = np.finfo(np.float64).tiny / np.finfo(np.float64).eps


#: Rows converted to float64 at a time when a float32 design is read (about 8 MB at d = 100).
ROW_BLOCK = 8192


def float64_blocks(X):
    """``(start, stop, rows)`` over row blocks of a dense 2-D array, ``rows`` in float64.

    A float64 array gives itself, in one block (no copy). Other float dtypes (float32) are
    converted ``ROW_BLOCK`` rows at a time, so reading them never needs a float64 copy of X;
    the conversion is exact, so the results equal those on ``X.astype(np.float64)``.
    """
    if X.dtype == np.float64:
        yield 0, X.shape[0], X
        return
    for start in range(0, X.shape[0], ROW_BLOCK):
        stop = min(start + ROW_BLOCK, X.shape[0])
        yield start, stop, np.asarray(X[start:stop], dtype=np.float64)


def row_norms(X):
    """L2 norms of the rows of a dense 2-D float array, in float64, without overflow or underflow.

    The sum of squares overflows for entries past about 1e154 (and loses precision below about
    1e-146); those rows are computed again scaled by their largest absolute entry, as
    ``np.linalg.norm`` / ``hypot`` do. Other rows cost one pass, with no temporary array
    (float32 rows: a float64 block of ``ROW_BLOCK`` rows at a time).
    """
    if X.dtype != np.float64:
        norms = np.empty(X.shape[0])
        for start, stop, rows in float64_blocks(X):
            norms[start:stop] = row_norms(rows)
        return norms
    sq = np.einsum("ij,ij->i", X, X)
    norms = np.sqrt(sq)
    redo = np.flatnonzero(~(sq >= _SMALL_SQ) | np.isinf(sq))  # zero rows too: harmless
    if redo.size:
        rows = X[redo]
        scale = np.max(np.abs(rows), axis=1)
        scale[scale == 0.0] = 1.0
        rows /= scale[:, None]
        norms[redo] = scale * np.sqrt(np.einsum("ij,ij->i", rows, rows))
    return norms


def index_dtype(nnz, p):
    """int32 indices when they fit (less memory, one kernel specialisation), else int64."""
    return np.int32 if max(nnz, p) < 2**31 - 1 else np.int64


def clip_factors(norms, bound, length):
    """Per-row factors ``min(1, clip_limit(bound, length) / norm)``: what clips rows of
    computed norms ``norms`` (each of ``length`` entries) to norm ``bound`` exactly (see
    :func:`clip_limit`)."""
    limit = clip_limit.py_func(float(bound), length)  # same arithmetic, nothing to compile
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norms > limit, limit / norms, 1.0)


#: 2**-52, twice the unit roundoff of float64: the margin of :func:`clip_limit`.
_ULP = 2.0**-52


@njit(cache=True, nogil=True)
def clip_limit(bound, length):
    """What a clip compares a *computed* norm with: ``bound`` shrunk by ``length + 8`` ulps.

    The computed L2 norm of ``length`` float64 entries (any summation order) is within about
    ``(length / 2 + 2)`` half-ulps of the exact norm (Higham's bound for a dot product, then the
    square root), and scaling by a rounded factor adds two more. So a vector whose computed norm
    is at most ``clip_limit(bound, length)`` is left as it is, and a longer one is scaled by
    ``clip_limit(bound, length) / computed norm``: either way its *exact* norm is <= ``bound``
    (scaling by ``bound / norm`` lands up to a few ulps above it). The shrink is
    ``(length + 8) * 2.2e-16`` relative: nothing for the model, everything for the bound.
    """
    return bound * (1.0 - (length + 8.0) * _ULP)


def clip_sparse_rows(X, data_norm, intercept_scaling=None, norms=None):
    """A new CSR matrix: rows of the sparse X scaled to L2 norm <= data_norm, plus (with
    ``intercept_scaling``) a last column of that constant. ``norms``: the rows' norms when the
    caller has them already (:func:`sparse_row_norms` of the same X), not computed again.

    Works on the stored entries only (never densifies) and writes one new copy of them; the
    caller's matrix is not modified (a CSR input with no duplicate entries shares nothing but,
    without an intercept, its read-only index arrays). Duplicate entries (one column stored
    twice in a row; they add up) are always looked for, in O(nnz) for sorted rows: scipy's
    cached ``has_canonical_format`` is not trusted, since the arrays of a matrix can change
    after it was computed, and a row norm must see each column's summed value once.
    """
    X = _summed_csr(X)
    n, p = X.shape
    nnz, bound = int(X.indptr[-1]), float(data_norm)
    indptr, counts = X.indptr, np.diff(X.indptr)
    blocks = _row_blocks(indptr)
    if intercept_scaling is None:
        values = np.empty(nnz)
        for r0, r1 in blocks:
            a, b = int(indptr[r0]), int(indptr[r1])
            values[a:b] = _clipped_block(X.data, indptr, counts, r0, r1, bound, norms)
        out = sp.csr_matrix((n, p))
        out.data, out.indices, out.indptr = values, X.indices[:nnz], X.indptr
        return out
    index = index_dtype(nnz + n, p + 1)
    out_indptr = indptr.astype(index) + np.arange(n + 1, dtype=index)
    out_data, out_indices = np.empty(nnz + n), np.empty(nnz + n, dtype=index)
    for r0, r1 in blocks:
        # the constant goes after each row's entries (empty rows included)
        a, b = int(indptr[r0]), int(indptr[r1])
        ends = indptr[r0 + 1:r1 + 1] - a
        o0, o1 = int(out_indptr[r0]), int(out_indptr[r1])
        values = _clipped_block(X.data, indptr, counts, r0, r1, bound, norms)
        out_data[o0:o1] = np.insert(values, ends, float(intercept_scaling))
        out_indices[o0:o1] = np.insert(X.indices[a:b].astype(index, copy=False), ends, p)
    out = sp.csr_matrix((n, p + 1))
    # assigned, not passed to the constructor: no index-dtype conversion or copy
    out.data, out.indices, out.indptr = out_data, out_indices, out_indptr
    return out


#: Stored entries per block of :func:`clip_sparse_rows`: its temporaries (squares, factors, the
#: inserted constants) are of this size, so that the clipped copy is the only full-size array
#: it writes (before session 10 they were full-size: 2.3 times the CSR bytes at the peak for
#: an intercept fit, against 1.1 now; ``benchmarks/results/sparse.md``).
_CLIP_BLOCK = 1 << 16


def _row_blocks(indptr):
    """Row ranges ``(r0, r1)`` of about :data:`_CLIP_BLOCK` stored entries each (a row is never
    split)."""
    n, nnz = indptr.shape[0] - 1, int(indptr[-1])
    marks = np.searchsorted(indptr, np.arange(_CLIP_BLOCK, nnz, _CLIP_BLOCK), side="left")
    edges = np.unique(np.concatenate(([0], marks, [n])))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def _block(data, indptr, counts, r0, r1):
    """``(entries, indptr, counts)`` of rows ``r0..r1-1``: their stored entries as float64 and
    the block's own row pointers."""
    a, b = int(indptr[r0]), int(indptr[r1])
    return np.asarray(data[a:b], dtype=np.float64), indptr[r0:r1 + 1] - a, counts[r0:r1]


def _clipped_block(data, indptr, counts, r0, r1, bound, norms=None):
    """Rows ``r0..r1-1``'s stored entries (as float64) clipped to L2 norm ``bound`` (their
    norms computed here unless ``norms``, all rows', is given)."""
    block, local, c = _block(data, indptr, counts, r0, r1)
    block_norms = _stored_row_norms(block, local, c) if norms is None else norms[r0:r1]
    return block * np.repeat(_row_factors(block_norms, c, bound), c)


# Sparse clipping is numpy on the stored entries (segment reductions over the rows), not numba:
# a first sparse fit would otherwise compile its loops (about 2 s of that fit).

_CORRUPTED = (
    "the sparse matrix is corrupted: a column index outside [0, n_features) or a decreasing "
    "indptr"
)


def _segment_reduce(ufunc, values, indptr, counts):
    """``ufunc`` reduced over each row's stored entries (0 for an empty row)."""
    out = np.zeros(counts.shape[0])
    rows = np.flatnonzero(counts)
    if rows.size:
        # between two non-empty rows there are only empty ones: each segment is one row
        out[rows] = ufunc.reduceat(values, indptr[rows].astype(np.intp))
    return out


def _stored_row_norms(data, indptr, counts):
    """L2 norms of the rows of CSR arrays (float64 ``data``), without overflow or underflow:
    rows whose sum of squares left [_SMALL_SQ, inf) are computed again, scaled by their largest
    absolute entry (as :func:`row_norms`)."""
    with np.errstate(over="ignore", under="ignore"):  # such rows are computed again
        sq = _segment_reduce(np.add, data * data, indptr, counts)
    norms = np.sqrt(sq)
    redo = np.flatnonzero(~(sq >= _SMALL_SQ) | np.isinf(sq))  # empty rows too: harmless
    if redo.size:
        scale = _segment_reduce(np.maximum, np.abs(data), indptr, counts)
        scaled = data / np.repeat(np.where(scale > 0.0, scale, 1.0), counts)
        sq2 = _segment_reduce(np.add, scaled * scaled, indptr, counts)
        norms[redo] = scale[redo] * np.sqrt(sq2[redo])
    return norms


def _summed_csr(X):
    """X as CSR with no column stored twice in a row: X itself when it has none (looked for,
    see :func:`clip_sparse_rows`), else a fresh matrix from copies of its arrays (no cached
    sorted / canonical flag is carried over, so scipy sorts and sums for real; the caller's
    arrays are untouched)."""
    X = X.tocsr()
    n, p = X.shape
    if not _has_duplicates(X.indices, X.indptr, p):
        return X
    X = sp.csr_matrix((X.data.copy(), X.indices.copy(), X.indptr.copy()), shape=(n, p))
    X.has_sorted_indices = False
    X.sum_duplicates()
    return X


def sparse_row_norms(X):
    """L2 norms of the rows of a CSR matrix (float64), a block of rows at a time: the
    temporaries are of :data:`_CLIP_BLOCK` entries, not of the matrix (``X.multiply(X)`` copied
    it whole). Duplicate entries are summed first, as :func:`clip_sparse_rows` does."""
    X = _summed_csr(X)
    indptr, counts = X.indptr, np.diff(X.indptr)
    norms = np.empty(X.shape[0])
    for r0, r1 in _row_blocks(indptr):
        norms[r0:r1] = _stored_row_norms(*_block(X.data, indptr, counts, r0, r1))
    return norms


def _row_factors(norms, counts, bound):
    """The factor that clips each row of ``counts`` stored entries and L2 norm ``norms`` (from
    :func:`_stored_row_norms`: without overflow or underflow, as :func:`row_norms`) to norm
    ``bound``: rows are compared with, and scaled to, ``clip_limit(bound, stored entries of
    the row)``."""
    limit = bound * (1.0 - (counts + 8.0) * _ULP)  # clip_limit(bound, count), row by row
    f = np.ones(counts.shape[0])
    clip = norms > limit
    f[clip] = limit[clip] / norms[clip]
    return f


def _has_duplicates(indices, indptr, p):
    """Whether some row of a CSR matrix stores a column twice; raises on indices outside
    [0, p) or a decreasing ``indptr`` (a corrupted matrix, never clipped).

    O(nnz), vectorised, for rows whose indices increase (the canonical layout); the entries
    of the other rows are sorted by (row, column) to find a repeated pair."""
    n = indptr.shape[0] - 1
    if n < 0 or indptr[0] != 0 or indptr[-1] > indices.shape[0] or np.any(np.diff(indptr) < 0):
        raise ValueError(_CORRUPTED)
    cols = indices[: indptr[-1]]
    if cols.size and (cols.min() < 0 or cols.max() >= p):
        raise ValueError(_CORRUPTED)
    ok = np.diff(cols) > 0
    starts = indptr[1:-1]
    ok[starts[(starts > 0) & (starts < cols.size)] - 1] = True  # a row starts anywhere
    if ok.all():
        return False
    row = np.repeat(np.arange(n), np.diff(indptr))
    keep = np.isin(row, row[1:][~ok])  # the entries of the rows whose indices do not increase
    r, c = row[keep], cols[keep].astype(np.int64)
    order = np.lexsort((c, r))
    r, c = r[order], c[order]
    return bool(np.any((r[1:] == r[:-1]) & (c[1:] == c[:-1])))


def make_rows(X, weight=None):
    """The kernel view of a design: :class:`DenseRows` or :class:`SparseRows` (no copy of the
    values when they already have the kernel layout; a CSC or COO matrix is converted to CSR).

    Parameters
    ----------
    X : ndarray of shape (n, p) or scipy sparse matrix/array
    weight : ndarray of shape (n,) or None
        Example weights (None: ones).
    """
    n, p = X.shape
    if isinstance(X, DenseRows) and weight is None and np.all(X.weight == 1.0):
        return X  # a clipped design with its weights of one (no second vector of ones)
    w = np.ones(n) if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"weight must have shape ({n},); got {w.shape}")
    w = read_only(w)
    if isinstance(X, DenseRows):  # a clipped design (:func:`clipped_dense_rows`): new weights
        return X._replace(weight=w)
    if sp.issparse(X):
        X = X.tocsr()
        index = index_dtype(X.nnz, p)
        return SparseRows(
            read_only(np.ascontiguousarray(X.data, dtype=np.float64)),
            read_only(np.ascontiguousarray(X.indices, dtype=index)),
            read_only(np.ascontiguousarray(X.indptr, dtype=index)),
            w,
            (int(n), int(p)),
        )
    return DenseRows(read_only(np.ascontiguousarray(X, dtype=np.float64)), w,
                     read_only(np.ones(n)), 0.0, (int(n), int(p)))


def design_array(X):
    """The design as an array (tests and audits): a :class:`DenseRows` written out as
    ``scale[:, None] * values`` plus its constant column; any other design as it is."""
    if not isinstance(X, DenseRows):
        return X
    out = X.values * X.scale[:, None]
    if X.shape[1] > X.values.shape[1]:
        out = np.hstack([out, np.full((X.shape[0], 1), X.tail)])
    return out


#: Largest row norm (and, with its inverse, the range of ``unit``) for which a fit reads the rows
#: of X in place (:func:`clipped_dense_rows`): a kernel forms ``x . w`` before applying the row's
#: factor, which overflows for entries near 1e308; past the limit the fit writes the clipped copy.
IN_PLACE_LIMIT = 2.0**400


def clipped_dense_rows(X, data_norm, intercept_scaling=None, unit=1.0, norms=None):
    """The rows of a dense float64 or float32 X clipped to L2 norm ``data_norm``, plus a constant column of
    ``intercept_scaling``, all divided by ``unit``, as kernel rows that read X in place.

    Row i is ``scale[i] * x_i`` with ``scale[i] = min(1, clip_limit / ||x_i||) / unit`` (the
    factor :func:`~skdp.linear_model._base.clip_rows` writes into its copy), so the fit holds
    no copy of X: n factors instead of n x p values. The exact norm of every row is at most
    ``data_norm / unit`` (``clip_limit`` leaves ``d + 8`` ulps for the computed norm and the two
    rounded factors). The kernels multiply the row's dot product by its factor, the same
    function of the data up to rounding. Returns None when a row's norm exceeds
    :data:`IN_PLACE_LIMIT` or ``unit`` is outside its range (the caller writes the copy).
    ``norms``: the rows' norms, when computed already (:func:`row_norms`).
    """
    n, d = X.shape
    if X.dtype not in (np.float64, np.float32) or not X.flags.c_contiguous:
        raise ValueError("clipped_dense_rows reads a C-contiguous float64/float32 array in place")
    norms = row_norms(X) if norms is None else norms
    unit = float(unit)
    if not (1.0 / IN_PLACE_LIMIT <= unit <= IN_PLACE_LIMIT) or np.any(norms > IN_PLACE_LIMIT):
        return None
    scale = clip_factors(norms, data_norm, d)
    scale /= unit
    tail = 0.0 if intercept_scaling is None else float(intercept_scaling) / unit
    p = d + (intercept_scaling is not None)
    return DenseRows(read_only(X), read_only(np.ones(n)), read_only(scale), tail, (int(n), int(p)))


def design_kind(X):
    """'array', 'dense' or 'sparse' for the numba type of a design, else None."""
    if isinstance(X, types.Array) and X.ndim == 2:
        return "array"
    if isinstance(X, types.BaseNamedTuple):
        if X.instance_class is DenseRows:
            return "dense"
        if X.instance_class is SparseRows:
            return "sparse"
    return None


# Reassociation lets LLVM vectorise the dot products (a reduction); it changes rounding only,
# never the inf/nan semantics the clipping relies on (no 'nnan'/'ninf' flags). The primitives are
# compiled as functions of their own (inline="never"): numba-IR inlining would compile them with
# the caller's strict flags; LLVM still inlines them and keeps the per-instruction flags.
_FAST = {"reassoc", "contract"}
_JIT = {"fastmath": _FAST, "nogil": True, "cache": True}


def row_weight(X, i):
    """Weight of example i (1 for a plain array)."""
    raise NotImplementedError("jitted only")


@overload(row_weight, jit_options=_JIT)
def _row_weight(X, i):
    kind = design_kind(X)
    if kind == "array":
        return lambda X, i: 1.0
    if kind in ("dense", "sparse"):
        return lambda X, i: X.weight[i]
    return None


def dot_row(X, i, w):
    """x_i . w."""
    raise NotImplementedError("jitted only")


@overload(dot_row, jit_options=_JIT)
def _dot_row(X, i, w):
    kind = design_kind(X)
    if kind == "array":
        def dense_array(X, i, w):
            acc = 0.0
            for j in range(X.shape[1]):
                acc += X[i, j] * w[j]
            return acc
        return dense_array
    if kind == "dense":  # the stored values, then the constant column
        return lambda X, i, w: dot_stored(X, i, w) + tail_dot(X, w)
    if kind == "sparse":
        def sparse(X, i, w):
            acc = 0.0
            for r in range(X.indptr[i], X.indptr[i + 1]):
                acc += X.data[r] * w[X.indices[r]]
            return acc
        return sparse
    return None


def axpy_row(X, i, a, out):
    """out += a * x_i."""
    raise NotImplementedError("jitted only")


@overload(axpy_row, jit_options=_JIT)
def _axpy_row(X, i, a, out):
    kind = design_kind(X)
    if kind == "array":
        def dense_array(X, i, a, out):
            for j in range(X.shape[1]):
                out[j] += a * X[i, j]
        return dense_array
    if kind == "dense":
        def dense(X, i, a, out):
            axpy_stored(X, i, a, out)
            add_tail(X, a, out)
        return dense
    if kind == "sparse":
        def sparse(X, i, a, out):
            for r in range(X.indptr[i], X.indptr[i + 1]):
                out[X.indices[r]] += a * X.data[r]
        return sparse
    return None


def dot_stored(X, i, w):
    """x_i . w over the stored values of row i (its factor applied), without the constant
    column: a hot loop adds :func:`tail_dot` once per call instead of a branch per row."""
    raise NotImplementedError("jitted only")


@overload(dot_stored, jit_options=_JIT)
def _dot_stored(X, i, w):
    kind = design_kind(X)
    if kind == "dense":
        def dense(X, i, w):
            V = X.values
            acc = 0.0
            for j in range(V.shape[1]):
                acc += V[i, j] * w[j]
            return acc * X.scale[i]
        return dense
    if kind in ("array", "sparse"):
        return lambda X, i, w: dot_row(X, i, w)
    return None


def axpy_stored(X, i, a, out):
    """out += a * x_i over the stored values of row i (its factor applied), without the
    constant column (see :func:`add_tail`)."""
    raise NotImplementedError("jitted only")


@overload(axpy_stored, jit_options=_JIT)
def _axpy_stored(X, i, a, out):
    kind = design_kind(X)
    if kind == "dense":
        def dense(X, i, a, out):
            V = X.values
            b = a * X.scale[i]
            for j in range(V.shape[1]):
                out[j] += b * V[i, j]
        return dense
    if kind in ("array", "sparse"):
        return lambda X, i, a, out: axpy_row(X, i, a, out)
    return None


def tail_dot(X, w):
    """The constant column's part of every margin, ``tail * w[d]`` (0 without one)."""
    raise NotImplementedError("jitted only")


@overload(tail_dot, inline="always")
def _tail_dot(X, w):
    kind = design_kind(X)
    if kind == "dense":
        def dense(X, w):
            d = X.values.shape[1]
            return X.tail * w[d] if X.shape[1] > d else 0.0
        return dense
    if kind in ("array", "sparse"):
        return lambda X, w: 0.0
    return None


def add_tail(X, total, out):
    """out[d] += tail * total: the constant column's part of a sum of ``a_i x_i`` whose
    coefficients add up to ``total`` (nothing without one)."""
    raise NotImplementedError("jitted only")


@overload(add_tail, inline="always")
def _add_tail(X, total, out):
    kind = design_kind(X)
    if kind == "dense":
        def dense(X, total, out):
            d = X.values.shape[1]
            if X.shape[1] > d:
                out[d] += X.tail * total
        return dense
    if kind in ("array", "sparse"):
        def none(X, total, out):
            pass
        return none
    return None


def margins(X, w, i, K, z):
    """z = W.T x_i for the flat (p*K, row-major) parameter vector w."""
    raise NotImplementedError("jitted only")


@overload(margins, jit_options=_JIT)
def _margins(X, w, i, K, z):
    kind = design_kind(X)
    if kind in ("array", "dense"):
        def dense(X, w, i, K, z):
            V = _values(X)
            d = V.shape[1]
            if K == 1:  # the common case: a plain dot product the compiler can vectorise
                acc = 0.0
                for j in range(d):
                    acc += V[i, j] * w[j]
                z[0] = acc
            else:
                for k in range(K):  # one reduction per output, in a register (z may alias w)
                    acc = 0.0
                    for j in range(d):
                        acc += V[i, j] * w[j * K + k]
                    z[k] = acc
            c, tail = _row_scale(X, i)
            if c != 1.0:
                for k in range(K):
                    z[k] *= c
            if _has_tail(X):
                for k in range(K):
                    z[k] += tail * w[d * K + k]
        return dense
    if kind == "sparse":
        def sparse(X, w, i, K, z):
            for k in range(K):
                z[k] = 0.0
            for r in range(X.indptr[i], X.indptr[i + 1]):
                xij = X.data[r]
                base = X.indices[r] * K
                for k in range(K):
                    z[k] += xij * w[base + k]
        return sparse
    return None


def _scaled_row_add(V, i, b, out):
    raise NotImplementedError("jitted only")


@overload(_scaled_row_add, jit_options=_JIT)
def _scaled_row_add_impl(V, i, b, out):
    def impl(V, i, b, out):
        for j in range(V.shape[1]):
            out[j] += b * V[i, j]
    return impl


def add_example_gradient(X, i, s, K, scale, out):
    """out += scale * outer(x_i, s) (flattened, row-major)."""
    raise NotImplementedError("jitted only")


# Inlined into the caller (numba IR): its loops are updates, not reductions, so the caller's
# flags lose nothing, and a call LLVM declined to inline cost 43 against 26 ns per row at d = 100
# (K = 1; 152 against 81 at K = 3 with the outputs' loop outside the row's).
@overload(add_example_gradient, jit_options=_JIT, inline="always")
def _add_example_gradient(X, i, s, K, scale, out):
    kind = design_kind(X)
    if kind in ("array", "dense"):
        def dense(X, i, s, K, scale, out):
            V = _values(X)
            d = V.shape[1]
            c, tail = _row_scale(X, i)
            if _has_tail(X):
                for k in range(K):
                    out[d * K + k] += tail * scale * s[k]
            a = scale * c
            if K == 1:
                b = a * s[0]
                if b != 0.0:
                    _scaled_row_add(V, i, b, out)
                return
            for k in range(K):  # one pass over the row per output: s[k] stays in a register
                ak = a * s[k]
                if ak != 0.0:
                    for j in range(d):
                        out[j * K + k] += ak * V[i, j]
        return dense
    if kind == "sparse":
        def sparse(X, i, s, K, scale, out):
            for r in range(X.indptr[i], X.indptr[i + 1]):
                xij = X.data[r] * scale
                base = X.indices[r] * K
                for k in range(K):
                    out[base + k] += xij * s[k]
        return sparse
    return None


def margins_and_sqnorm(X, v, i, K, inv_lam, z):
    """z = V.T x_i * inv_lam and return ||x_i||^2, in one read of the row."""
    raise NotImplementedError("jitted only")


@overload(margins_and_sqnorm, jit_options=_JIT)
def _margins_and_sqnorm(X, v, i, K, inv_lam, z):
    kind = design_kind(X)
    if kind in ("array", "dense"):
        def dense(X, v, i, K, inv_lam, z):
            V = _values(X)
            d = V.shape[1]
            s = 0.0
            if K == 1:
                acc = 0.0
                for j in range(d):
                    xij = float(V[i, j])  # float64 arithmetic for a float32 X too
                    s += xij * xij
                    acc += xij * v[j]
                z[0] = acc
            else:  # one reduction per output, in a register (z may alias v)
                for j in range(d):
                    xij = float(V[i, j])
                    s += xij * xij
                for k in range(K):
                    acc = 0.0
                    for j in range(d):
                        acc += float(V[i, j]) * v[j * K + k]
                    z[k] = acc
            c, tail = _row_scale(X, i)
            s *= c * c
            for k in range(K):
                z[k] *= c
            if _has_tail(X):
                s += tail * tail
                for k in range(K):
                    z[k] += tail * v[d * K + k]
            for k in range(K):
                z[k] *= inv_lam
            return s
        return dense
    if kind == "sparse":
        def sparse(X, v, i, K, inv_lam, z):
            s = 0.0
            for k in range(K):
                z[k] = 0.0
            for r in range(X.indptr[i], X.indptr[i + 1]):
                xij = X.data[r]
                s += xij * xij
                base = X.indices[r] * K
                for k in range(K):
                    z[k] += xij * v[base + k]
            for k in range(K):
                z[k] *= inv_lam
            return s
        return sparse
    return None


def _values(X):
    """The dense value matrix of a plain array or a DenseRows."""
    raise NotImplementedError("jitted only")


@overload(_values, inline="always")
def _values_impl(X):
    kind = design_kind(X)
    if kind == "array":
        return lambda X: X
    if kind == "dense":
        return lambda X: X.values
    return None


def _row_scale(X, i):
    """(factor of row i, value of the constant column) of a plain array or a DenseRows."""
    raise NotImplementedError("jitted only")


@overload(_row_scale, inline="always")
def _row_scale_impl(X, i):
    kind = design_kind(X)
    if kind == "array":
        return lambda X, i: (1.0, 0.0)
    if kind == "dense":
        return lambda X, i: (X.scale[i], X.tail)
    return None


def _has_tail(X):
    """Whether the design has a constant last column beyond its stored values."""
    raise NotImplementedError("jitted only")


@overload(_has_tail, inline="always")
def _has_tail_impl(X):
    kind = design_kind(X)
    if kind == "array":
        return lambda X: False
    if kind == "dense":
        return lambda X: X.shape[1] > X.values.shape[1]
    return None
