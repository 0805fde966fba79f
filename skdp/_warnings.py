"""Warnings that point at the user's code.

A warning raised deep inside a fit (the private bounds, an optimizer's plan, a ledger's charge)
is only useful when it names the line that called skdp: the user's ``fit``, ``Pipeline.fit`` or
``GridSearchCV.fit``. A fixed ``stacklevel`` cannot do that, since the same function is reached
through different depths (an estimator's own ``fit``, scikit-learn's ``_fit_context`` wrapper,
a pipeline, a search, a warm start). :func:`warn` instead attributes each warning to the first
frame outside skdp and the scikit-learn machinery that calls skdp's estimators, as pandas does
with its ``find_stack_level``.
"""

import contextlib
import os
import sys
import warnings

import joblib
import sklearn

#: The folders whose frames are skipped: skdp itself, and scikit-learn and joblib, whose
#: machinery (``_fit_context``, pipelines, searches, cross-validation) calls skdp's estimators.
_INTERNAL_DIRS = tuple(os.path.dirname(os.path.abspath(path)) + os.sep
                       for path in (__file__, sklearn.__file__, joblib.__file__))
#: ... and the standard library's wrapper of skdp's context managers (``with`` blocks that
#: warn on exit).
_INTERNAL_FILES = (os.path.abspath(contextlib.__file__),)


def _is_internal(filename):
    path = os.path.abspath(filename)
    return path.startswith(_INTERNAL_DIRS) or path in _INTERNAL_FILES


def user_stacklevel():
    """The ``stacklevel`` that makes a ``warnings.warn`` in the caller of this function name
    the first frame outside skdp, scikit-learn and joblib (the outermost frame if there is
    none: a worker's thread or process)."""
    frame = sys._getframe(1)  # the function that will call warnings.warn: level 1
    level = 1
    while frame.f_back is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)`` attributed to the user's code
    (:func:`user_stacklevel`)."""
    warnings.warn(message, category, stacklevel=user_stacklevel())
