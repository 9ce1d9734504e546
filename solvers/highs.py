"""A HiGHS instance (``highspy``) whose start-up banner does not reach the console."""

from __future__ import annotations

from typing import Any

__all__ = ["quiet_highs"]


def quiet_highs() -> tuple[Any, Any]:
    """A new ``highspy.Highs`` whose constructor's banner is kept off the console.

    The constructor prints on the C-level standard output; that descriptor points at the null device while it
    runs (a descriptor, not a file the package writes), so nothing leaks into a user's console or a report.

    Returns
    -------
    highs : highspy.Highs
        The solver instance.
    highspy : module
        The ``highspy`` module (its enums and ``kHighsInf``).
    """
    import os
    import sys

    import highspy

    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)
    return h, highspy
