"""Whether a transformation maps each record on its own.

Only skdp's private steps learn from the data. Every other step before a private estimator must
be a row-wise function fixed in advance: a step whose output for one record depends on the other
records of its batch (a ``FunctionTransformer`` that centres its input, say) lets one record
change the rows of all the others, and no sensitivity argument of the estimator after it holds.
The check here is empirical: a batch of rows, transformed together, must give what each row
gives alone. A step that is row-wise on the rows checked but not on others cannot be detected.
"""

import numpy as np

__all__ = ["check_row_wise", "rows_of"]


def rows_of(X, start, stop):
    """Rows ``start:stop`` of an array, sparse matrix or DataFrame, as the same kind."""
    return X.iloc[start:stop] if hasattr(X, "iloc") else X[start:stop]


def _array(Z):
    Z = Z.toarray() if hasattr(Z, "toarray") else Z
    return np.asarray(Z)


def _same(a, b):
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "biuf" and b.dtype.kind in "biuf":
        return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
    # strings, objects (an encoder's input): equal value by value, a missing one on both sides
    return all(x == y or (x != x and y != y) for x, y in zip(a.ravel(), b.ravel()))


def check_row_wise(name, kind, transform, P):
    """Raise ValueError unless ``transform`` maps every row of ``P`` on its own.

    ``transform(P)`` as one batch must give, row by row, what ``transform`` of each row alone
    gives. ``name`` and ``kind`` (the step's path and class) are for the message, which names no
    value of ``P``. Returns the output on the batch.
    """
    why = None
    batch = None
    try:
        with np.errstate(all="ignore"):  # warnings about the rows checked are noise
            batch = transform(P)
            alone = [_array(transform(rows_of(P, i, i + 1))) for i in range(P.shape[0])]
        B = _array(batch)
        if B.ndim != 2 or B.shape[0] != P.shape[0] or any(
            a.shape != (1, B.shape[1]) for a in alone
        ):
            why = "its output does not have one row per input row"
        elif not _same(np.concatenate(alone), B):
            why = "its output for a row depends on the other rows of the batch"
    except Exception as exc:  # a step that cannot transform single rows cannot be checked
        why = f"it could not be checked on single rows ({type(exc).__name__}: {exc})"
    if why is not None:
        raise ValueError(
            f"Pipeline step {name!r} ({kind}) is not a row-wise transformation: {why}. Only "
            "skdp's private steps learn from the data, so any other step before the skdp "
            "estimator must transform each record on its own (for example Normalizer, or a "
            "FunctionTransformer of an element-wise function such as np.log1p); apply anything "
            "else beforehand, on public data"
        )
    return batch
