"""Shared label handling of the private classifiers."""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from .._dask import is_dask, unique_labels
from ..privacy import with_public_labels

__all__ = ["resolve_classes", "encode_labels", "state_label_set"]


def resolve_classes(classes, y):
    """The label set ``classes_`` and the label index of each example.

    With ``classes`` given (public), every label in y must belong to it. Without, the labels are
    read from y, which reveals which labels occur in the training set (documented on the
    estimators; pass ``classes`` to avoid it).
    """
    if is_dask(y):  # labels on Dask workers: only the label set comes to the client
        present = unique_labels(y)
        check_classification_targets(present)
    else:
        check_classification_targets(y)
        present = np.unique(y)
    if classes is None:
        classes_ = present
    else:
        classes_ = np.unique(np.asarray(classes))
        if classes_.shape[0] != np.asarray(classes).shape[0]:
            raise ValueError(f"classes must not contain duplicates; got {classes!r}")
        unknown = np.setdiff1d(present, classes_)
        if unknown.size:
            raise ValueError(
                f"y contains labels {unknown.tolist()} that are not in classes={classes_.tolist()}"
            )
    if classes_.shape[0] < 2:
        raise ValueError(
            "a classifier needs samples of at least 2 classes; the data contains only one class: "
            f"{classes_.tolist()}"
        )
    if is_dask(y):
        return classes_, y.map_blocks(lambda b: np.searchsorted(classes_, b), dtype=np.int64)
    index = np.searchsorted(classes_, y)
    return classes_, index


def state_label_set(estimator):
    """After a fit: when the label set was read from y (``classes=None``), the record's relation
    says so (:func:`skdp.privacy.with_public_labels`); ``epsilon_`` does not cover which labels
    occur."""
    estimator.privacy_record_ = with_public_labels(
        estimator.privacy_record_, estimator.classes is None)


def encode_labels(index, K, negative):
    """Targets from label indices (numpy or dask): one column of +-1 for two classes, else a
    (n, K) matrix with 1 at the label and ``negative`` elsewhere."""
    if K == 2:
        return np.where(index == 1, 1.0, -1.0)[:, None]
    hit = index[:, None] == np.arange(K)[None, :]
    return np.where(hit, 1.0, float(negative))
