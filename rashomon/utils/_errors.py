"""The errors and warnings of the one validation layer (:mod:`rashomon.utils.validation` exports them)."""

from __future__ import annotations

from typing import Any

__all__ = ["RashomonInputError", "RashomonWarning"]


class RashomonInputError(ValueError):
    """Bad user input (subclass of ValueError)."""


class RashomonWarning(UserWarning):
    """Input that is valid but probably not what was meant (e.g. a relative ε given as a percentage)."""


#: Largest |value| accepted in X: squares (and their sums over 1e8 rows) stay finite.


def _param_error(param: str, func: str, expected: str, got: Any) -> RashomonInputError:
    return RashomonInputError(f"The '{param}' parameter of {func} must be {expected}. Got {got} instead.")
