"""Labels of the classifier classes: ±1, from {-1, +1}, {0, 1} or booleans (the engine and the classes share it)."""

from __future__ import annotations

import numpy as np

from ..utils.validation import RashomonInputError

__all__ = ["encode_margin_labels"]


def encode_margin_labels(y: np.ndarray, func: str) -> np.ndarray:
    """Labels as ±1 (from {-1, +1}, {0, 1} or booleans); both classes must be present."""
    vals = set(np.unique(y).tolist())
    if vals <= {-1.0, 1.0}:
        out = y.astype(float)
    elif vals <= {0.0, 1.0}:
        out = 2.0 * y.astype(float) - 1.0
    else:
        raise RashomonInputError(
            f"The 'y' parameter of {func} must hold labels in {{-1, +1}} or {{0, 1}} for a "
            f"classifier class. Got values {sorted(vals)[:5]} instead."
        )
    if len(np.unique(out)) < 2:
        raise RashomonInputError(f"The 'y' parameter of {func} must contain both classes. Got only {sorted(vals)}.")
    return out
