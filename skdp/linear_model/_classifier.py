"""Shared label handling of the private classifiers."""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

__all__ = ["resolve_classes"]


def resolve_classes(classes, y):
    """The label set ``classes_`` and the label index of each example.

    With ``classes`` given (public), every label in y must belong to it. Without, the labels are
    read from y, which reveals which labels occur in the training set (documented on the
    estimators; pass ``classes`` to avoid it).
    """
    check_classification_targets(y)
    if classes is None:
        classes_ = np.unique(y)
    else:
        classes_ = np.unique(np.asarray(classes))
        if classes_.shape[0] != np.asarray(classes).shape[0]:
            raise ValueError(f"classes must not contain duplicates; got {classes!r}")
        unknown = np.setdiff1d(np.unique(y), classes_)
        if unknown.size:
            raise ValueError(
                f"y contains labels {unknown.tolist()} that are not in classes={classes_.tolist()}"
            )
    if classes_.shape[0] < 2:
        raise ValueError(
            "a classifier needs samples of at least 2 classes; the data contains only one class: "
            f"{classes_.tolist()}"
        )
    index = np.searchsorted(classes_, y)
    return classes_, index
