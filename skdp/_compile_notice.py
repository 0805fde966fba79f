"""Saying so, once per process, when a fit compiles numba kernels.

The first fit in an environment whose numba cache does not hold skdp's kernels yet (after
installation, an upgrade, or with a new ``NUMBA_CACHE_DIR``) compiles them: seconds that would
otherwise pass in silence. :func:`compile_notice` watches numba's ``numba:compile`` events,
which numba emits only when it really compiles (never when it loads a cached kernel), and on the
first one logs an INFO message on the ``"skdp"`` logger (and prints it at ``verbose >= 1``).
"""

from contextlib import contextmanager
import logging

__all__ = ["compile_notice"]

logger = logging.getLogger("skdp")

_announced = False


def _message(what):
    return (
        f"compiling numba kernels for {what} (first use in this environment only, typically "
        "a few seconds; cached for later fits)"
    )


@contextmanager
def compile_notice(what, verbose=0):
    """Within the block, the first numba compilation of the process is announced (once).

    Parameters
    ----------
    what : str
        What is being fitted (the optimizer's name), for the message.
    verbose : int
        The estimator's ``verbose``: at 1 or more the message is also printed.
    """
    if _announced:
        yield
        return
    from numba.core import event  # numba is imported by the kernels anyway, at this point

    class _Listener(event.Listener):
        def on_start(self, ev):
            global _announced
            if _announced:
                return
            _announced = True
            logger.info(_message(what))
            if verbose:
                print(f"[skdp] {_message(what)}", flush=True)

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", _Listener()):
        yield
