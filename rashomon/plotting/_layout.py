"""Layout shared by the displays: new figures never clip a label, legends never cover data.

* :func:`new_axes`: the caller's ``ax``, or a new figure with constrained layout (titles, labels,
  tick labels and an outside legend all fit in the figure).
* :func:`legend_outside`: the legend to the right of the axes, outside the data; constrained layout
  (and ``tight_layout``, ``bbox_inches="tight"``) make room for it.
* :func:`integer_ticks`, :func:`scale_label`: row axes with integer ticks; the name of what a range is of.
* :func:`user_text` (a decorator of ``plot`` methods) and :func:`plain_text`: text from users (group labels,
  feature names) is drawn as text: ``$`` is escaped so mathtext never parses it, TeX is off, and non-ASCII
  text falls back through the installed fonts that cover the common scripts (Noto CJK and the like; Debian:
  ``fonts-noto-cjk``), then matplotlib's Last Resort font, with one warning naming the characters no
  installed font has.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["new_axes", "legend_outside", "integer_ticks", "scale_label", "plain_text", "user_text"]

#: fonts tried, in order, for characters the figure's own font lacks (those installed; names as matplotlib lists
#: them); the last, bundled with matplotlib, draws a placeholder for any other character
_FALLBACK = (
    "DejaVu Sans",
    "Noto Sans",
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans CJK TC",
    "Noto Sans CJK KR",
    "Noto Sans Hebrew",
    "Noto Sans Arabic",
    "Noto Sans Devanagari",
    "Noto Sans Thai",
    "Droid Sans Fallback",
    "WenQuanYi Zen Hei",
    "Source Han Sans",
    "Arial Unicode MS",
)
_LAST_RESORT = "Last Resort High-Efficiency"

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


def _escape(text: str) -> str:
    """``$`` not already escaped becomes ``\\$`` (mathtext draws it as a dollar sign); idempotent."""
    return re.sub(r"(?<!\\)\$", r"\\$", text)


class _Escaped:
    """A tick formatter's function whose labels are escaped (:func:`_escape`)."""

    def __init__(self, func: Any):
        self.func = func

    def __call__(self, x: Any, pos: Any = None) -> str:
        return _escape(str(self.func(x, pos)))


@functools.cache
def _fonts() -> tuple[list, list]:
    """(installed fallback family names, their font files' character coverage objects)."""
    from matplotlib import font_manager, ft2font

    installed = {f.name for f in font_manager.fontManager.ttflist}
    names = [n for n in _FALLBACK if n in installed]
    faces = []
    for n in names:
        try:
            faces.append(ft2font.FT2Font(font_manager.findfont(n, fallback_to_default=False)))
        except (ValueError, RuntimeError, OSError):
            continue
    last = [_LAST_RESORT] if _LAST_RESORT in installed else []
    return names + last, faces


def plain_text(artist: Any) -> None:
    """Draw every text of ``artist`` as plain text: labels from data are never parsed as mathtext or TeX.

    Every display's ``plot`` does this to its axes; call it on a figure of your own to do the same. An
    unescaped ``$`` becomes ``\\$`` (drawn as a dollar sign; tick labels too), TeX is turned off, and text
    with non-ASCII characters falls back through the installed fonts covering the common scripts (Noto
    CJK, Noto Sans Hebrew, ... where installed; Debian: ``fonts-noto-cjk``), then a placeholder glyph.
    Characters no installed font has give one :class:`~rashomon.RashomonWarning`.

    Parameters
    ----------
    artist : matplotlib Axes or Figure
    """
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    families, faces = _fonts()
    missing: set = set()
    axes = [artist] if hasattr(artist, "xaxis") else list(getattr(artist, "axes", []))
    texts = [t for t in artist.findobj(Text)]
    for ax in axes:
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            if isinstance(fmt, FixedFormatter):  # tick labels are re-made from the formatter at each draw
                fmt.seq = [_escape(str(v)) for v in fmt.seq]
            elif isinstance(fmt, FuncFormatter) and not isinstance(fmt.func, _Escaped):  # set_ticks(labels=...)
                fmt.func = _Escaped(fmt.func)
            labels = [str(lab.get_text()) for lab in axis.get_ticklabels()]
            if not all(v.isascii() for v in labels):
                texts += [t for tick in axis.get_major_ticks() for t in (tick.label1, tick.label2)]
    for t in texts:
        s = t.get_text()
        t.set_usetex(False)
        if "$" in s:
            t.set_text(_escape(s))
        if not s.isascii():
            missing |= {c for c in s if not c.isascii()}
            if families:
                t.set_fontfamily(list(dict.fromkeys([*t.get_fontfamily(), *families])))
    uncovered = sorted(c for c in missing if c.isprintable() and not any(f.get_char_index(ord(c)) for f in faces))
    if uncovered:
        import warnings

        from ..utils.validation import RashomonWarning

        warnings.warn(
            f"No installed font has {''.join(uncovered[:20])!r}: drawn as placeholders. Install a font that "
            "covers them (e.g. Noto CJK: the Debian package fonts-noto-cjk) for the figure to show them.",
            RashomonWarning,
            stacklevel=3,
        )


def user_text(plot: Any) -> Any:
    """Decorator of a display's ``plot``: its axes' texts are made plain (:func:`plain_text`) once drawn."""

    @functools.wraps(plot)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = plot(self, *args, **kwargs)
        for ax in [getattr(self, "ax_", None), *(getattr(self, "axes_", None) or [])]:
            if ax is not None:
                plain_text(ax)
        return out

    return wrapper
