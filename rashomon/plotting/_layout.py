"""Layout shared by the displays: new figures never clip a label, legends never cover data.

* :func:`new_axes`: the caller's ``ax``, or a new figure with constrained layout (titles, labels,
  tick labels and an outside legend all fit in the figure).
* :func:`legend_outside`: the legend to the right of the axes, outside the data; constrained layout
  (and ``tight_layout``, ``bbox_inches="tight"``) make room for it.
* :func:`integer_ticks`, :func:`scale_label`: row axes with integer ticks; the name of what a range is of.
"""

from __future__ import annotations

from typing import Any

__all__ = ["new_axes", "legend_outside", "integer_ticks", "scale_label"]

_SCALE = {"prediction": "prediction", "score": "score (decision function)", "probability": "predicted probability"}


def new_axes(ax: Any = None, figsize: Any = None) -> Any:
    """``ax``, or the axes of a new figure with constrained layout."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def legend_outside(ax: Any, **kwargs: Any) -> Any:
    """A legend to the right of the axes (upper left corner at the axes' upper right), so it covers no data.

    A figure without a layout engine (``plt.subplots()``) is given matplotlib's tight layout, which makes
    room for the legend when the figure is drawn (and which a later ``fig.tight_layout()`` keeps without a
    warning); if that is not possible, the legend goes inside, where matplotlib finds the least data.
    """
    fig = ax.figure
    if fig.get_layout_engine() is None:
        try:
            fig.set_layout_engine("tight")
        except RuntimeError:
            return ax.legend(**({"loc": "best", "fontsize": 8} | kwargs))
    kw = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0, "fontsize": 8} | kwargs
    return ax.legend(**kw)


def integer_ticks(axis: Any) -> None:
    """Ticks on whole numbers only (rows are counted, not measured)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def scale_label(scale: str | None) -> str:
    """Axis label of a range's ``scale`` ("prediction", "score" or "probability")."""
    return _SCALE.get(scale or "prediction", str(scale))
