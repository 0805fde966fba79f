"""An in-place heapsort for the kernels, in place of numba's ``ndarray.sort``.

numba's sort is a generic quicksort that takes about 1.5 s to compile (a quarter of a first
mini-batch fit, half of a first sparse fit); the kernels only sort a few integer index arrays
(a Poisson batch, the column indices of an unsorted sparse row), where this heapsort compiles
in a fraction of that and runs in O(m log m). Sorting is a function of the values only: the
result is the same array whichever algorithm sorts it.
"""

from numba import njit

__all__ = ["sort_inplace"]


@njit(cache=True, nogil=True)
def _sift_down(a, start, stop):
    """Restore the max-heap property of a[start:stop] below the root ``start``."""
    root = start
    v = a[root]
    child = 2 * root + 1
    while child < stop:
        if child + 1 < stop and a[child + 1] > a[child]:
            child += 1
        if a[child] <= v:
            break
        a[root] = a[child]
        root = child
        child = 2 * root + 1
    a[root] = v


@njit(cache=True, nogil=True)
def sort_inplace(a):
    """Sort the 1-D array ``a`` in increasing order, in place (heapsort)."""
    m = a.shape[0]
    for start in range(m // 2 - 1, -1, -1):
        _sift_down(a, start, m)
    for stop in range(m - 1, 0, -1):
        t = a[0]
        a[0] = a[stop]
        a[stop] = t
        _sift_down(a, 0, stop)
