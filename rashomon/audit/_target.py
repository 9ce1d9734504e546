"""The audit's target: a numeric outcome (regression classes) or a binary one (classifier classes).

A binary target is 0/1, True/False, or any two levels with ``positive_label`` naming the level coded 1.
The model class defaults to the logistic class for a binary target and to the kernel class otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..utils.validation import RashomonInputError

__all__ = ["CLASSIFIER_CLASSES", "REGRESSION_CLASSES", "resolve_target"]

CLASSIFIER_CLASSES = ("logistic", "hinge")
REGRESSION_CLASSES = ("kernel", "linear")


def _levels_text(levels: list) -> str:
    shown = [v.item() if hasattr(v, "item") else v for v in levels[:5]]
    return f"{shown}{' ...' if len(levels) > 5 else ''}"


def _matches(level: Any, label: Any) -> bool:
    """``positive_label`` names a level: the same value, or the same text (the CLI passes strings: "1",
    "True", "malignant")."""
    if isinstance(label, str) and not isinstance(level, str):
        if isinstance(level, (bool, np.bool_)):
            return label.strip().lower() == str(bool(level)).lower()
        try:
            return float(label) == float(level)
        except ValueError:
            return False
    if isinstance(level, (bool, np.bool_)) != isinstance(label, (bool, np.bool_)):
        return False  # True is not 1 here: a boolean target takes True/False
    try:
        return bool(level == label)
    except (TypeError, ValueError):
        return False


def resolve_target(
    s: pd.Series, target: str, model_class: str | None, positive_label: Any, func: str = "audit"
) -> tuple[np.ndarray, str, dict | None]:
    """``(y, model_class, labels)``: y as floats (0/1 for a classifier class), the class chosen, and for a
    classifier ``{"positive": level, "negative": level, "n_positive": k, "n": n}`` (None for regression).

    ``model_class=None`` picks ``"logistic"`` for a binary target (0/1, boolean, two non-numeric levels, or
    any two levels with ``positive_label``) and ``"kernel"`` for a numeric one.
    """
    allowed = CLASSIFIER_CLASSES + REGRESSION_CLASSES
    if model_class is not None and model_class not in allowed:
        raise RashomonInputError(
            f"The 'model_class' parameter of {func} must be one of {list(allowed)} (or None: "
            f"logistic for a binary target, kernel otherwise). Got {model_class!r} instead."
        )
    is_bool = pd.api.types.is_bool_dtype(s)
    numeric = pd.api.types.is_numeric_dtype(s) and not is_bool
    levels = list(pd.unique(s))
    try:
        levels = sorted(levels)
    except TypeError:
        levels = sorted(levels, key=str)
    zero_one = numeric and set(np.asarray(levels, dtype=float).tolist()) <= {0.0, 1.0}
    if model_class is None:
        binary = is_bool or zero_one or (not numeric and len(levels) == 2) or (positive_label is not None)
        model_class = "logistic" if binary else "kernel"
    if model_class in REGRESSION_CLASSES:
        if positive_label is not None:
            raise RashomonInputError(
                f"The 'positive_label' parameter of {func} applies to a binary target with a "
                f"classifier class (model_class 'logistic' or 'hinge'). Got {positive_label!r} "
                f"with model_class={model_class!r} instead."
            )
        if not (numeric or is_bool):
            raise RashomonInputError(
                f"The 'target' parameter of {func} must name a numeric column for "
                f"model_class={model_class!r} (or a binary one with model_class 'logistic' or "
                f"'hinge'). Got {target!r} with dtype {s.dtype} instead."
            )
        return s.to_numpy(dtype=float), model_class, None
    # ---------------------------------------------------------------- a classifier class: two levels
    if len(levels) != 2:
        what = "a single level" if len(levels) == 1 else f"{len(levels)} distinct values (e.g. {_levels_text(levels)})"
        raise RashomonInputError(
            f"The 'target' parameter of {func} must name a binary column (0/1, True/False, or two "
            f"levels with positive_label) for model_class={model_class!r}. Got {target!r} with "
            f"{what} instead."
        )
    if positive_label is None:
        if is_bool:
            pos = True
        elif zero_one:
            pos = levels[1]
        else:
            raise RashomonInputError(
                f"The 'positive_label' parameter of {func} must name the level of {target!r} coded 1 "
                f"(the target has levels {_levels_text(levels)}, not 0/1 or True/False). Got None "
                f"instead."
            )
    else:
        hits = [lv for lv in levels if _matches(lv, positive_label)]
        if len(hits) != 1:
            raise RashomonInputError(
                f"The 'positive_label' parameter of {func} must be one of the levels of {target!r}: "
                f"{_levels_text(levels)}. Got {positive_label!r} instead."
            )
        pos = hits[0]
    neg = [lv for lv in levels if not (lv is pos or lv == pos)][0]
    y = (s == pos).to_numpy(dtype=float)
    py = lambda v: v.item() if hasattr(v, "item") else v  # noqa: E731 - JSON-ready scalars
    return y, model_class, {"positive": py(pos), "negative": py(neg), "n_positive": int(y.sum()), "n": int(len(y))}
