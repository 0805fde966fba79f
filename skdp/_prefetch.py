"""CPU prefetch hints for the kernels that read scattered rows (sampled batches).

An LLVM ``llvm.prefetch`` through a numba intrinsic: a hint to fetch a cache line, with no effect
on any result. The batch kernels issue it a few rows ahead of the row they work on, so the memory
reads of scattered rows overlap with the arithmetic of the rows before them.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ._rows import design_kind

__all__ = ["PREFETCH_AHEAD", "prefetch_row", "prefetch_row_weight", "prefetch_entry"]


def _prefetch_codegen(context, builder, signature, args):
    aryty = signature.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    ptr = cgutils.get_item_pointer2(
        context, builder, data=ary.data, shape=cgutils.unpack_tuple(builder, ary.shape),
        strides=cgutils.unpack_tuple(builder, ary.strides), layout=aryty.layout,
        inds=list(args[1:]), wraparound=False, boundscheck=False,
    )
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
    # read access, high temporal locality, data cache
    builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
    return context.get_dummy_value()


@intrinsic
def prefetch_entry(typingctx, arr, i, j):
    """Hint the CPU to fetch the cache line of ``arr[i, j]`` (no effect on any result)."""
    return types.void(arr, i, j), _prefetch_codegen


@intrinsic
def _prefetch1(typingctx, arr, r):
    """Hint the CPU to fetch the cache line of ``arr[r]`` (no effect on any result)."""
    return types.void(arr, r), _prefetch_codegen


#: How many rows ahead the gradient loop prefetches (rows of a batch are scattered in memory).
PREFETCH_AHEAD = 8


def prefetch_row(X, i):
    """Hint the CPU to fetch row i of a design (no effect on any result)."""
    raise NotImplementedError("jitted only")


@overload(prefetch_row, inline="always")
def _prefetch_row(X, i):
    kind = design_kind(X)
    if kind == "array":
        return lambda X, i: _prefetch_dense(X, i)
    if kind == "dense":  # the row's values, and its factor and weight (n-long arrays)
        def dense(X, i):
            _prefetch_dense(X.values, i)
            _prefetch1(X.scale, i)
            prefetch_row_weight(X, i)
        return dense
    if kind == "sparse":
        def sparse(X, i):
            for r in range(X.indptr[i], X.indptr[i + 1], 8):  # one hint per 64-byte line
                _prefetch1(X.data, r)
                _prefetch1(X.indices, r)
            prefetch_row_weight(X, i)
        return sparse
    return None


def prefetch_row_weight(X, i):
    """Hint the CPU to fetch the weight of row i (no effect on any result)."""
    raise NotImplementedError("jitted only")


@overload(prefetch_row_weight, inline="always")
def _prefetch_row_weight(X, i):
    kind = design_kind(X)
    if kind == "array":  # weights of one, nothing stored
        return lambda X, i: None
    if kind in ("dense", "sparse"):
        return lambda X, i: _prefetch1(X.weight, i)
    return None


@njit(cache=True, nogil=True, inline="always")
def _prefetch_dense(V, i):
    for j in range(0, V.shape[1], 8):  # one hint per 64-byte line
        prefetch_entry(V, i, j)
