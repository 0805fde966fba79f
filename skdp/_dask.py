"""Fitting on Dask: the rows stay on the workers; the loop, noise and accounting on the client.

A full-batch private step needs one thing from the data: the sum over all rows of the weighted
clipped per-example gradients at the current point. That is a sum over chunks of rows, so
:class:`DaskDesign` persists the prepared chunks once on the workers (each row clipped to
``data_norm``, the intercept column appended, the targets encoded and the weights clipped to
``[0, max_sample_weight]``, exactly as the in-memory fit prepares them), and every step

1. sends the coefficients (a vector of ``p * K`` floats) with one task per chunk, which runs
   the numba kernel :func:`skdp.optimizers._glm.clipped_gradient_sum` on the chunk where it
   lives;
2. gathers the per-chunk sums and adds them on the client in chunk order (a fixed order: the
   same data and chunking give the same floats);
3. adds the noise on the client, from the fit's generator (:mod:`skdp.optimizers._loops`).

The inputs are checked before the fit releases anything, as in memory: X's values (finite) and
the weights' (finite, non-negative) in one pass of reductions (:func:`dask_sample_weight`), and
every block of an input against the chunk sizes its array declares (the fit's n, its Poisson
samples and the kernels' bounds are those sizes), wherever the block is computed; the prepared
chunks are checked again where the kernels read them.

Nothing of the data reaches the client but each step's clipped sum (whose sensitivity is the
one the noise is calibrated for), the public n and shapes, and what the in-memory fit releases
too: the label set when ``classes`` is not given, and the private bounds (``data_norm="auto"``,
``y_bounds="auto"``), computed from per-chunk counts over public candidates
(:func:`chunk_counts`). The privacy record is the in-memory fit's.

With a ``distributed.Client`` the chunks are futures and the steps ``client.map`` calls on them;
without one (dask's local schedulers) the chunks are prepared once with ``dask.compute`` into
this process, where the local scheduler would hold them anyway, and the steps call the same
chunk functions on them directly, in chunk order (no task graph per step). Without a Client,
the fit's few computations (the prepared chunks, the counts of the private bounds, the label
set) run on dask's synchronous scheduler unless the user configured another (:func:`compute`).
"""

from collections import namedtuple
from functools import partial
import sys

import numpy as np

from ._validation import NEGATIVE_SAMPLE_WEIGHT, refuse_negative_weights

__all__ = [
    "is_dask", "as_dask_inputs", "as_dask_vector", "DaskDesign", "chunk_counts", "dask_max",
    "unique_labels", "take_rows", "predict_blocks", "CandidateCounts", "column_counts",
    "dask_features", "map_rows", "compute", "compute_chunk_sizes", "dask_sample_weight",
    "check_values",
]


def is_dask(obj):
    """Whether ``obj`` is a Dask collection (array, DataFrame, Series); dask is not imported
    when it was not already."""
    if "dask" not in sys.modules or obj is None:
        return False
    import dask

    return dask.is_dask_collection(obj)


def _to_array(obj, name, X=None):
    """A dask array with known chunk sizes from a dask array, DataFrame or Series. With ``X``
    (the fit's X, from this function), an array of another number of rows than X is refused
    when its declared chunk sizes or X's are not the blocks' (:func:`_refuse_stale_sizes`)."""
    import dask.array as da

    if hasattr(obj, "to_dask_array"):  # dask DataFrame / Series: lengths computed once
        lengths = compute(obj.map_partitions(len))[0]
        obj = obj.to_dask_array(lengths=tuple(int(length) for length in lengths))
    if not isinstance(obj, da.Array):
        raise ValueError(f"{name} must be a dask array, DataFrame or Series; got {type(obj)}")
    if any(np.isnan(c) for chunks in obj.chunks for c in chunks):
        obj = compute_chunk_sizes(obj)
    if X is not None and obj.ndim and obj.shape[0] != X.shape[0]:
        _refuse_stale_sizes(X, obj, name)  # (here, where obj's real sizes can still be read)
    # Every computation of the array checks its blocks against the declared chunk sizes (which
    # a map_blocks that drops rows leaves unchanged): the fit's n, its Poisson samples and the
    # kernels' bounds are those sizes, and a release over other rows would not be the fit's.
    return obj.map_blocks(partial(_declared_block, name=name), meta=obj._meta)


def _declared_block(block, block_info=None, name="X"):
    """``block`` when its shape is the one its dask array declares for it, else a ValueError."""
    declared = tuple(stop - start for start, stop in block_info[0]["array-location"])
    _check_shape(np.shape(block), declared, name)
    return block


def _real_sizes(name):
    """What to do about the dask array ``name`` whose declared chunk sizes do not describe its
    blocks (:func:`_check_shape`, :func:`_refuse_stale_sizes`)."""
    return (
        "Its chunk sizes do not describe its blocks (as after a map_blocks that drops rows, whose "
        "chunks dask keeps as they were); the fit needs the real sizes: call "
        f"{name}.compute_chunk_sizes(), declare the sizes unknown (map_blocks(..., chunks=("
        "(np.nan,) * n_blocks, ...))), or, from a dask DataFrame, use "
        "to_dask_array(lengths=True)."
    )


def _check_shape(shape, declared, name):
    """Refuse a block of shape ``shape`` where its dask array declares ``declared``."""
    if tuple(shape) != tuple(declared):
        raise ValueError(
            f"{name}: a block of the dask array has shape {tuple(shape)} but the array "
            f"declares {tuple(declared)} for it. {_real_sizes(name)}"
        )


def _block_rows(a):
    """The numbers of rows of the dask array ``a``'s row blocks, as computed (the blocks' own,
    not the declared chunk sizes; through :func:`_to_array`'s check, a block of other rows than
    declared raises :func:`_check_shape`'s error). Only these counts reach the client."""
    import dask

    blocks = a.to_delayed()
    blocks = blocks[(slice(None),) + (0,) * (a.ndim - 1)]  # the first block of each row chunk
    return [int(k) for k in compute(*[dask.delayed(len)(b) for b in blocks])]


def _refuse_stale_sizes(X, v=None, name=None):
    """Refuse a dask array whose declared chunk sizes are not its blocks' where the fit's
    targets or weights ``v`` (dask or numpy) have another number of entries than X rows: that
    is the cause when the rows were filtered by a map_blocks (dask keeps the chunk sizes), and
    the error "y has 3000 entries but X has 1476 rows" said otherwise (a user trial: y's blocks
    held X's 1476 rows). The real sizes are computed, a dask ``v``'s (before :func:`_to_array`
    wraps it), then X's (from :func:`_to_array`, whose check of its blocks raises first): only
    the counts reach the client, before anything is released. Returns when both arrays' sizes
    are real (the caller says that the rows differ)."""
    n = int(X.shape[0])
    if v is not None and is_dask(v):
        declared, real = int(v.shape[0]), sum(_block_rows(v))
        if real != declared:
            raise ValueError(
                f"{name}: the chunk sizes of the dask array declare {declared} entries but its "
                f"blocks hold {real} (X has {n} rows). {_real_sizes(name)}"
            )
    real = sum(_block_rows(X)) if is_dask(X) else n
    if real != n:
        raise ValueError(f"X: the chunk sizes of the dask array declare {n} rows but its blocks "
                         f"hold {real}. {_real_sizes('X')}")


def as_dask_vector(v, X, name):
    """``v`` (dask or in-memory, 1-D) as a float or label dask array chunked like X's rows."""
    v = _to_array(v, name, X) if is_dask(v) else np.asarray(v)
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1:
        # scikit-learn's wording, which the estimators' explained errors extend
        raise ValueError(f"{name} should be a 1d array, got an array of shape {v.shape} instead.")
    return _chunked_like_rows(v, X, name)


def dask_sample_weight(sample_weight, X, max_sample_weight, y=None):
    """The weights of a fit on the dask array ``X`` (None for ones within the bound), chunked
    like its rows, after checking X and them as the in-memory fit does, before any private
    computation.

    The weights are accepted and refused as scikit-learn's ``_check_sample_weight`` does in
    memory (a scalar for every row; a 1-D array of n entries, not an (n, 1) one). X's values
    (finite) and the weights' (finite, non-negative) are reductions over the workers' chunks,
    computed together in one pass (:func:`check_values`), so that a bad input is refused before
    the fit releases anything (its private bounds), as in memory, not when the chunks are
    prepared. They are clipped to ``[0, max_sample_weight]`` on the workers (:func:`_prepare`).
    ``y`` (the fit's targets as a dask array, or None) is checked in the same pass.
    """
    from .linear_model._base import check_sample_weight

    n = int(X.shape[0])
    if sample_weight is None:
        w = None if max_sample_weight >= 1.0 else as_dask_vector(
            np.full(n, float(max_sample_weight)), X, "sample_weight")
        check_values(X, y=y)  # (a constant vector of the bound needs no check)
        return w
    if not is_dask(sample_weight):  # in memory: scikit-learn's checks (an empty X of n rows)
        if np.ndim(sample_weight) == 1 and len(sample_weight) != n:
            _refuse_stale_sizes(X)  # (X's declared sizes, when they are not its blocks')
        sample_weight = check_sample_weight(sample_weight, np.empty((n, 0)))
        w, checked = as_dask_vector(sample_weight, X, "sample_weight"), None
    else:
        w = _to_array(sample_weight, "sample_weight", X)
        if w.ndim != 1:  # scikit-learn's messages
            raise ValueError(
                f"Sample weights must be 1D array or scalar, got {w.ndim}D array. Expected "
                f"either a scalar value or a 1D array of length {n}."
            )
        if w.shape != (n,):
            raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n,)}!")
        if w.dtype.kind not in "biuf":
            raise ValueError(
                f"sample_weight must be numeric; got a dask array of dtype {w.dtype}")
        w = checked = _chunked_like_rows(w, X, "sample_weight")
    check_values(X, checked, y)  # one pass (in-memory weights were checked above)
    return w


def check_values(X, sample_weight=None, y=None):
    """Refuse NaN or infinity in the dask arrays X and y (numeric targets; None: not checked),
    and weights (a dask vector) that are not finite or are negative, with the in-memory errors:
    one pass over the chunks, where they live, all reductions computed together (only booleans
    reach the client). A chunk whose shape is not the declared one is refused on the way
    (:func:`_to_array`)."""
    import dask.array as da

    checks = {"Input X contains NaN or infinity.": da.isfinite(X).all()}
    if sample_weight is not None:
        checks["Input sample_weight contains NaN or infinity."] = da.isfinite(sample_weight).all()
        checks[NEGATIVE_SAMPLE_WEIGHT] = (sample_weight >= 0).all()
    if y is not None and is_dask(y) and y.dtype.kind in "biuf":
        checks["Input y contains NaN or infinity."] = da.isfinite(y).all()
    for message, ok in zip(checks, compute(*checks.values())):
        if not ok:
            raise ValueError(message)


def _as_dask_columns(v, X, name):
    """A 2-D ``v`` (dask or in-memory) as a dask array chunked like X's rows, one column
    chunk."""
    return _chunked_like_rows(_to_array(v, name, X) if is_dask(v) else np.asarray(v), X, name)


def _chunked_like_rows(v, X, name):
    """``v`` (a dask or numpy array, 1-D or 2-D) with X's row chunks (and one column chunk)."""
    import dask.array as da

    if v.shape[0] != X.shape[0]:
        if not is_dask(v):  # (a dask v's sizes and X's were checked by _to_array)
            _refuse_stale_sizes(X)
        raise ValueError(
            f"{name} has {v.shape[0]} entries but X has {X.shape[0]} rows (real sizes, not stale "
            f"chunk sizes): {name} needs one entry per row of X, in X's order (its chunks may "
            "differ from X's: it is rechunked like X's rows)"
        )
    chunks = (X.chunks[0],) + (-1,) * (v.ndim - 1)
    return v.rechunk(chunks) if is_dask(v) else da.from_array(v, chunks=chunks)


def as_dask_inputs(X, y, multi_output=False):
    """``(X, y)`` as dask arrays: X float, 2-D, row chunks of known sizes and one column chunk
    (whole rows per chunk); y chunked like X's rows (``multi_output``: a 2-D y stays 2-D, with
    one column chunk)."""
    X = _to_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D; got a dask array of shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must be numeric; got a dask array of dtype {X.dtype}")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have at least one row and one column; got shape {X.shape}")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    if multi_output and np.ndim(y) == 2:
        y = _as_dask_columns(y, X, "y")
    else:
        y = as_dask_vector(y, X, "y")
    if y.dtype.kind in "fc":  # checked where each chunk is computed (as validate_data does)
        y = y.map_blocks(_finite_y, dtype=y.dtype)
    return X, y


def _finite_y(block):
    if not np.all(np.isfinite(block)):
        raise ValueError("Input y contains NaN or infinity.")
    return block


def _client():
    """The current ``distributed.Client``, or None (dask's local schedulers)."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_client

    try:
        return get_client()
    except ValueError:
        return None


def _configured_scheduler():
    """Whether computations go to a ``distributed.Client`` or a scheduler the user configured
    (``dask.config.set(scheduler=...)``)."""
    import dask

    return _client() is not None or dask.config.get("scheduler", None) is not None


def compute(*collections):
    """``dask.compute(*collections)``; with no Client and no configured scheduler, on dask's
    synchronous scheduler. A fit's graphs are a few tasks per chunk, whose results the local
    fit holds in this process anyway, and the default thread pool's hand-offs cost more than
    such a task at small n (DPRidge's defaults on 300 rows in two chunks, private bounds: 34 ms
    a fit against 41 on the thread pool, session 40); a scheduler configured by the user is
    used as configured."""
    import dask

    if _configured_scheduler():
        return dask.compute(*collections)
    return dask.compute(*collections, scheduler="sync")


def compute_chunk_sizes(a):
    """A dask array with ``a``'s graph and its chunk sizes known, computed on the scheduler
    :func:`compute` picks; ``a`` itself is left as it was.

    Dask's ``a.compute_chunk_sizes()`` writes the sizes into ``a`` (the caller's array, when
    ``a`` came from the user), and running it on the synchronous scheduler would need
    ``dask.config.set``, which changes the configuration of every thread of the process.
    """
    import dask
    import dask.array as da

    blocks = a.to_delayed().ravel()
    shapes = compute(*[dask.delayed(np.shape)(block) for block in blocks])
    shapes = np.asarray(shapes, dtype=np.int64).reshape(a.numblocks + (a.ndim,))
    chunks = []
    for axis in range(a.ndim):
        # the blocks along this axis, at block 0 of every other axis
        along = tuple(slice(None) if i == axis else 0 for i in range(a.ndim))
        chunks.append(tuple(int(size) for size in shapes[along + (axis,)]))
    return da.Array(a.dask, a.name, tuple(chunks), meta=a)  # as dask's Array.copy


# -- what runs on the workers --------------------------------------------------------------------
def _prepare(x, Y, weight, shape, data_norm, intercept_scaling, unit, max_weight):
    """One chunk as the in-memory fit prepares the whole design: (rows, Y, index).

    ``shape`` is the chunk's declared (rows, columns) of X, the sizes the client's indices and
    the kernels' bounds assume: its X, Y and weights must have them (the kernels do not check).
    """
    from ._rows import make_rows
    from .linear_model._base import clipped_design

    x = np.asarray(x)  # float32 stays float32, as in memory (clipped_design converts the rest)
    _check_shape(x.shape, shape, "X")
    _check_shape(np.shape(Y)[:1], shape[:1], "y")
    if weight is not None:
        _check_shape(np.shape(weight), shape[:1], "sample_weight")
    if not np.all(np.isfinite(x)):
        raise ValueError("Input X contains NaN or infinity.")
    Xc = clipped_design(x, data_norm, intercept_scaling, unit)  # reads the chunk in place
    if weight is not None:  # the in-memory checks of sample_weight, then its clip
        weight = np.asarray(weight, dtype=np.float64)
        if not np.all(np.isfinite(weight)):
            raise ValueError("Input sample_weight contains NaN or infinity.")
        weight = np.clip(refuse_negative_weights(weight), 0.0, max_weight)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    if not np.all(np.isfinite(Y)):
        raise ValueError("Input y contains NaN or infinity.")
    return make_rows(Xc, weight), Y, np.arange(Xc.shape[0], dtype=np.int64)


def _chunk_gradient(chunk, w, loss_id, tau):
    """The chunk's sum of weighted clipped per-example gradients at ``w`` (all its rows)."""
    return _chunk_gradient_at(chunk, chunk[2], w, loss_id, tau)


def _chunk_gradient_at(chunk, local, w, loss_id, tau):
    """The chunk's sum of weighted clipped per-example gradients at ``w`` over its rows
    ``local`` (sorted positions in the chunk: its part of a step's Poisson sample)."""
    from .optimizers._glm import clipped_gradient_sum

    rows, Y, _ = chunk
    K = Y.shape[1]
    out = np.zeros(w.shape[0])
    clipped_gradient_sum(
        rows, Y, w, local, local.shape[0], loss_id, tau, out, np.zeros(K), np.zeros(K)
    )
    return out


def _chunk_value_and_gradient(chunk, w, loss_id, tau):
    """The chunk's sums of weighted (Huberised) losses and of their gradients (epsilon = inf)."""
    from .optimizers._glm import value_and_gradient

    rows, Y, index = chunk
    n, K = index.shape[0], Y.shape[1]
    out = np.zeros(w.shape[0])
    value = value_and_gradient(rows, Y, w, loss_id, tau, 0.0, out, np.zeros(K), np.zeros(K))
    return value * n, out * n


def _in_order_sum(parts):
    """Sum of the per-chunk arrays in chunk order (a fixed order: reproducible floats)."""
    total = np.array(parts[0], dtype=np.float64, copy=True)
    for part in parts[1:]:
        total += part
    return total


class DaskDesign:
    """The clipped design of a fit, persisted on the Dask workers, chunk by chunk.

    Stands for ``Problem.X``: it has the ``shape`` (n, p) of the clipped design (intercept
    column included) and computes the sums the optimizers need where the rows live. Created by
    the estimators from dask inputs (not public API).

    Parameters
    ----------
    X : dask array of shape (n, d)
        Raw features, whole rows per chunk.
    Y : dask array of shape (n, K)
        Targets encoded for the loss, chunked like X's rows.
    weight : dask array of shape (n,) or None
        Example weights (clipped to ``[0, max_weight]`` on the workers).
    data_norm, intercept_scaling, unit, max_weight : float (intercept_scaling None: none)
        As in :meth:`skdp.linear_model._base.DPLinearModel._fit_problem`.
    """

    is_distributed = True

    def __init__(self, X, Y, weight, data_norm, intercept_scaling, unit, max_weight):
        import dask

        xb = X.to_delayed().ravel()
        yb = Y.rechunk((X.chunks[0], -1)).to_delayed().ravel()
        wb = [None] * len(xb) if weight is None else weight.to_delayed().ravel()
        prepare = dask.delayed(_prepare, pure=True)
        d = int(X.shape[1])
        parts = [
            prepare(x, y, w, (int(rows), d), float(data_norm), intercept_scaling, float(unit),
                    float(max_weight))
            for x, y, w, rows in zip(xb, yb, wb, X.chunks[0])
        ]
        self._client = _client()
        if self._client is not None:
            from distributed import wait

            self._chunks = self._client.compute(parts)
            wait(self._chunks)
            for future in self._chunks:  # raise a chunk's error (bad input) here, on the client
                if future.status == "error":
                    future.result()
        else:
            # dask's local schedulers: the prepared chunks live in this process, so the steps
            # call the chunk functions on them directly, in chunk order, rather than build and
            # optimise a task graph per step (about 4 ms a step with dask 2026.8: a 100-step
            # Poisson fit on 31 rows took 0.4 s, and the Dask audit path 16 minutes)
            self._chunks = list(compute(*parts))
        n = int(X.shape[0])
        p = int(X.shape[1]) + (intercept_scaling is not None)
        self.shape = (n, p)
        self.chunk_rows = tuple(int(c) for c in X.chunks[0])
        self.n_chunks = len(self._chunks)
        # global position of each chunk's first row, and n (public: the chunk sizes)
        self._offsets = np.concatenate([[0], np.cumsum(self.chunk_rows)]).astype(np.int64)

    def _map(self, func, w, loss_id, tau):
        w = np.ascontiguousarray(w, dtype=np.float64)
        if self._client is not None:
            futures = self._client.map(
                func, self._chunks, w=w, loss_id=int(loss_id), tau=float(tau), pure=False
            )
            return self._client.gather(futures)
        return [func(c, w, int(loss_id), float(tau)) for c in self._chunks]

    def gradient_sum(self, w, loss_id, tau, index=None):
        """Sum over all rows (``index``: over the rows ``index``, sorted global positions, a
        step's Poisson sample) of the weighted clipped per-example gradients at ``w`` (flat, no
        regulariser): the only data-dependent value a private step brings to the client."""
        if index is None:
            return _in_order_sum(self._map(_chunk_gradient, w, loss_id, tau))
        return self._sample_sum(w, loss_id, tau, index)

    def split_index(self, index):
        """``[(chunk number, local positions), ...]`` of the sorted global rows ``index``, for
        the chunks that hold at least one of them (the others have nothing to add)."""
        index = np.asarray(index, dtype=np.int64)
        bounds = np.searchsorted(index, self._offsets)  # first sampled row of each chunk
        return [
            (k, index[bounds[k]:bounds[k + 1]] - self._offsets[k])
            for k in range(self.n_chunks) if bounds[k + 1] > bounds[k]
        ]

    def _sample_sum(self, w, loss_id, tau, index):
        """The sampled rows' sum: each chunk's task gets the coefficients and its own sampled
        local positions, and returns its part of the sum; added in chunk order."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        parts = self.split_index(index)
        if not parts:  # an empty sample: the sum of nothing (as in memory)
            return np.zeros(w.shape[0])
        chunks = [self._chunks[k] for k, _ in parts]
        local = [idx for _, idx in parts]
        if self._client is not None:
            futures = self._client.map(
                _chunk_gradient_at, chunks, local, w=w, loss_id=int(loss_id), tau=float(tau),
                pure=False,
            )
            return _in_order_sum(self._client.gather(futures))
        return _in_order_sum(
            [_chunk_gradient_at(c, i, w, int(loss_id), float(tau)) for c, i in zip(chunks, local)]
        )

    def value_and_gradient(self, w, loss_id, tau, lam):
        """The objective and its gradient at ``w`` (the non-private solver, epsilon = inf)."""
        parts = self._map(_chunk_value_and_gradient, w, loss_id, tau)
        n = self.shape[0]
        value = sum(v for v, _ in parts) / n + 0.5 * lam * float(np.dot(w, w))
        grad = _in_order_sum([g for _, g in parts]) / n + lam * w
        return value, grad

    def close(self):
        """Release the persisted chunks."""
        if self._client is not None:
            for future in self._chunks:
                future.release()
        self._chunks = []


# -- reductions for the private bounds -----------------------------------------------------------
def _counts(x, candidates):
    xs = np.sort(np.asarray(x, dtype=np.float64).ravel())
    below = np.searchsorted(xs, candidates, side="left")
    upto = np.searchsorted(xs, candidates, side="right")
    return np.stack([below, upto]).astype(np.int64)


def _add_counts(*parts):
    return np.sum(parts, axis=0)


def _tree_sum(count, a, *args, split_every=8):
    """The sum over the chunks of the dask array ``a`` of ``count(chunk, *args)`` (integer
    arrays of one shape), each chunk counted where it lives and the counts added in a tree of
    tasks of at most ``split_every`` parts where they live, so that only the total reaches the
    client and no task holds more than ``split_every`` of them (as dask's own reductions), with
    a cheaper graph than a ``map_blocks`` and a dask sum, whose building costs more than the
    counting itself at small n. Integer counts: the order of the additions does
    not change the total. (DPRidge's defaults on 300 rows in two chunks: 41 ms a fit on the
    thread pool against 51 with a ``map_blocks`` and a dask sum, session 40.)"""
    import dask

    count, add = dask.delayed(count, pure=True), dask.delayed(_add_counts, pure=True)
    parts = [count(block, *args) for block in a.to_delayed().ravel()]
    while len(parts) > 1:
        parts = [add(*parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
    return compute(parts[0])[0]


def chunk_counts(x, candidates):
    """``(below, upto, n)``: per public candidate c, ``#{x_i < c}`` and ``#{x_i <= c}`` over a
    dask vector, summed over chunks (each chunk counts where it lives; only the counts per
    candidate, public bins, reach the client)."""
    total = _tree_sum(_counts, x, np.asarray(candidates, dtype=np.float64))
    return total[0], total[1], int(x.shape[0])


def dask_max(x, weight=None):
    """The largest value of a dask vector over the rows of positive weight, or over all rows
    when no weight is positive (epsilon = inf only: an exact statistic, as in memory)."""
    import dask.array as da

    if weight is not None:
        top = float(compute(da.where(weight > 0, x, -np.inf).max())[0])
        if top > -np.inf:
            return top
    return float(compute(x.max())[0])


def unique_labels(y):
    """The sorted label set of a dask vector (each chunk's labels, then their union)."""
    import dask

    labels = dask.delayed(np.unique, pure=True)
    return np.unique(np.concatenate(compute(*[labels(b) for b in y.to_delayed().ravel()])))


def take_rows(a, index):
    """Rows ``index`` (sorted, public) of a dask array, still on the workers."""
    return a[np.asarray(index)]


def predict_blocks(model, X):
    """``model.predict`` chunk by chunk, where the rows live (a lazy dask vector, or a matrix
    for a model of several targets)."""
    probe = model.predict(np.zeros((1, X.shape[1])))
    if probe.ndim == 2:
        return X.map_blocks(model.predict, chunks=(X.chunks[0], (probe.shape[1],)),
                            dtype=probe.dtype)
    return X.map_blocks(model.predict, drop_axis=1, dtype=probe.dtype)


# -- preprocessing on Dask (skdp.preprocessing) ----------------------------------------------------
CandidateCounts = namedtuple("CandidateCounts", ["below", "upto", "n"])
CandidateCounts.__doc__ = (
    "``#{x_i < c}`` and ``#{x_i <= c}`` per public candidate c, and n, of one feature: what the "
    "exponential mechanism of a quantile needs (:func:`skdp.privacy.quantiles.quantile_utility`)."
)


def _column_counts(block, candidates):
    x = np.asarray(block, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError("Input X contains NaN or infinity.")
    xs = np.sort(x, axis=0)
    out = np.empty((1, x.shape[1], 2, candidates.shape[0]), dtype=np.int64)
    for j in range(x.shape[1]):
        out[0, j, 0] = np.searchsorted(xs[:, j], candidates, side="left")
        out[0, j, 1] = np.searchsorted(xs[:, j], candidates, side="right")
    return out


def column_counts(X, candidates):
    """``[CandidateCounts, ...]``, one per feature of a 2-D dask array (whole rows per chunk),
    in one pass: each chunk counts its values below and at every public candidate where it
    lives; only these counts (public bins, summed over chunks) reach the client."""
    total = _tree_sum(_column_counts, X, np.asarray(candidates, dtype=np.float64))[0]
    n = int(X.shape[0])
    return [CandidateCounts(total[j, 0], total[j, 1], n) for j in range(int(X.shape[1]))]


def check_dask_feature_names(estimator, X, reset):
    """Set (``reset``) or check ``feature_names_in_`` from a dask DataFrame's column names, as
    ``validate_data`` does for a pandas one (a dask array has none)."""
    from sklearn.utils.validation import _check_feature_names

    # a dask DataFrame's names are those of its empty pandas frame (_meta): nothing computed
    _check_feature_names(estimator, getattr(X, "_meta", X), reset=reset)


def dask_features(estimator, X, reset):
    """A 2-D numeric dask array, whole rows per chunk, from a dask array or DataFrame; sets
    (``reset``) or checks ``n_features_in_`` and ``feature_names_in_`` as ``validate_data``
    does (the values are checked where the chunks are computed)."""
    from sklearn.utils.validation import _check_n_features

    check_dask_feature_names(estimator, X, reset)
    X = _to_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D; got a dask array of shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must be numeric; got a dask array of dtype {X.dtype}")
    _check_n_features(estimator, X, reset=reset)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def _finite_rows(func):
    def block(b):
        b = np.asarray(b, dtype=np.float64)
        if not np.all(np.isfinite(b)):
            raise ValueError("Input X contains NaN or infinity.")
        return func(b)

    return block


def map_rows(func, X):
    """``func`` (row-wise, same shape) applied lazily chunk by chunk, float64, finite input."""
    return X.map_blocks(_finite_rows(func), dtype=np.float64)
