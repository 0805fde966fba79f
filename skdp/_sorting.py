"""An in-place integer sort for the kernels, in place of numba's ``ndarray.sort``.

numba's sort is a generic quicksort that takes about 2 s to compile (a sixth of a first
mini-batch fit); the kernels only sort an integer index array (the Poisson batch), where this
quicksort (median-of-three pivot, insertion sort on short ranges, iterative) compiles in about
half that and runs as fast. Sorting is a function of the values only: the result is the same
array whichever algorithm sorts it. The batch is a uniformly random subset in random order, so
the quadratic worst case of quicksort is out of reach in practice (and would cost time only).
"""

import numpy as np
from numba import njit

__all__ = ["sort_inplace"]

#: Ranges shorter than this are finished by insertion sort.
_SHORT = 16


@njit(cache=True, nogil=True)
def sort_inplace(a):
    """Sort the 1-D array ``a`` in increasing order, in place."""
    m = a.shape[0]
    if m < 2:
        return
    # pending ranges; the shorter side is sorted first, so at most log2(m) of them wait
    los = np.empty(64, dtype=np.int64)
    his = np.empty(64, dtype=np.int64)
    top = 0
    los[0] = 0
    his[0] = m - 1
    while top >= 0:
        lo = los[top]
        hi = his[top]
        top -= 1
        while hi - lo >= _SHORT:
            mid = (lo + hi) >> 1
            # median of three into a[mid], with a[lo] <= a[mid] <= a[hi]
            if a[mid] < a[lo]:
                t = a[mid]
                a[mid] = a[lo]
                a[lo] = t
            if a[hi] < a[mid]:
                t = a[hi]
                a[hi] = a[mid]
                a[mid] = t
                if a[mid] < a[lo]:
                    t = a[mid]
                    a[mid] = a[lo]
                    a[lo] = t
            pivot = a[mid]
            i = lo
            j = hi
            while i <= j:  # Hoare partition
                while a[i] < pivot:
                    i += 1
                while a[j] > pivot:
                    j -= 1
                if i <= j:
                    t = a[i]
                    a[i] = a[j]
                    a[j] = t
                    i += 1
                    j -= 1
            top += 1
            if j - lo < hi - i:  # the longer side waits, the shorter one goes on
                los[top] = i
                his[top] = hi
                hi = j
            else:
                los[top] = lo
                his[top] = j
                lo = i
        for r in range(lo + 1, hi + 1):  # insertion sort of the short range a[lo:hi + 1]
            v = a[r]
            s = r - 1
            while s >= lo and a[s] > v:
                a[s + 1] = a[s]
                s -= 1
            a[s + 1] = v
