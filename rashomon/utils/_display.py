"""How a result shows itself: a short text repr and a compact HTML table in a notebook.

Every result class says *what* to show in one method, ``_display_()``, returning
``(fields, tables)``: ``fields`` an ordered dict of scalars (the headline: bounds, ε, scale, ...)
and ``tables`` a list of ``(caption, DataFrame or None)`` (bounds, attained values, tight flags, gaps; a
summary, never thousands of rows). :class:`DisplayMixin` turns that into ``__repr__`` (at most
:data:`MAX_LINES` lines, no arrays) and ``_repr_html_`` (escaped, at most :data:`MAX_ROWS` rows
per table: pandas shows the first and last rows around an ellipsis).
"""

from __future__ import annotations

import html
import math
import numbers
from typing import Any

import numpy as np

__all__ = ["DisplayMixin", "format_value", "text_repr", "html_repr", "tight_flags", "quantile_table"]

#: rows shown per table in the HTML repr (the first and last half around "...")
MAX_ROWS = 12
#: lines of a text repr at most
MAX_LINES = 8
_WIDTH = 100


def format_value(v: Any) -> str:
    """A scalar as a short string: floats to 4 significant digits, sequences joined and cut at 60 characters."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        return repr(f) if not math.isfinite(f) else f"{f:.4g}"
    if isinstance(v, dict):
        s = "{" + ", ".join(f"{k}: {format_value(x)}" for k, x in v.items()) + "}"
    elif isinstance(v, (list, tuple)):
        if len(v) == 2 and all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in v):
            return f"[{format_value(v[0])}, {format_value(v[1])}]"
        items = list(map(str, v))
        s = "[" + ", ".join(items) + "]"
        if len(s) > 60:  # cut between items, never inside a name, and say how many are not shown
            k = len(items)
            while k > 1 and len(", ".join(items[:k])) + len(f", ... (+{len(items) - k} more)") + 2 > 60:
                k -= 1
            return "[" + ", ".join(items[:k]) + f", ... (+{len(items) - k} more)]"
    elif isinstance(v, np.ndarray):
        s = f"<array of shape {v.shape}>"
    else:
        s = str(v)
    return s if len(s) <= 60 else s[:57] + "..."


def text_repr(name: str, fields: dict) -> str:
    """``Name(k=v, ...)`` wrapped at 100 characters, cut to :data:`MAX_LINES` lines."""
    lines: list = []
    for part in (f"{k}={format_value(v)}" for k, v in fields.items()):  # break between fields only
        if lines and len(lines[-1]) + len(part) + 2 <= _WIDTH - 4:
            lines[-1] += ", " + part
        else:
            if lines:
                lines[-1] += ","
            lines.append(part)
    if len(lines) > MAX_LINES:
        lines = lines[: MAX_LINES - 1] + ["..."]
    if len(lines) <= 1:
        return f"{name}({lines[0] if lines else ''})"
    return f"{name}(\n" + "\n".join("    " + ln for ln in lines) + "\n)"


def _float_format(v: float) -> str:
    return f"{v:.4g}"


def html_repr(name: str, fields: dict, tables: list) -> str:
    """A title line, the fields as ``key: value`` and each table (escaped, at most :data:`MAX_ROWS` rows)."""
    head = " &middot; ".join(f"{html.escape(str(k))}: <b>{html.escape(format_value(v))}</b>" for k, v in fields.items())
    out = [f'<div class="rashomon-result"><p><strong>{html.escape(name)}</strong></p>']
    if head:
        out.append(f'<p style="margin:0.2em 0">{head}</p>')
    for caption, frame in tables:
        if caption:
            out.append(f'<p style="margin:0.4em 0 0.1em 0"><em>{html.escape(caption)}</em></p>')
        if frame is not None:
            out.append(
                frame.to_html(
                    max_rows=MAX_ROWS, max_cols=16, float_format=_float_format, escape=True, border=0, notebook=False
                )
            )
    out.append("</div>")
    return "\n".join(out)


class DisplayMixin:
    """``__repr__`` and ``_repr_html_`` from ``_display_`` (one place for every result's display).

    Dataclasses using it are declared with ``repr=False`` (a generated repr would dump arrays).
    """

    def _display_(self) -> tuple[dict, list]:  # pragma: no cover - every user overrides it
        raise NotImplementedError

    def __repr__(self) -> str:
        fields, _ = self._display_()
        return text_repr(type(self).__name__, fields)

    def _repr_html_(self) -> str:
        fields, tables = self._display_()
        return html_repr(type(self).__name__, fields, tables)

    @staticmethod
    def _tight(bound: Any, gap: Any, tol: float) -> np.ndarray:
        return tight_flags(bound, gap, tol)

    @staticmethod
    def _quantiles(columns: dict):
        return quantile_table(columns)


def tight_flags(bound: Any, gap: Any, tol: float) -> np.ndarray:
    """``gap <= tol·max(1, |bound|)`` elementwise (``tol`` NaN: only a zero gap is tight)."""
    bound, gap = np.asarray(bound, dtype=float), np.asarray(gap, dtype=float)
    t = tol if tol is not None and math.isfinite(tol) else 0.0
    return gap <= t * np.maximum(1.0, np.abs(bound))


def quantile_table(columns: dict, q: tuple = (0.0, 0.1, 0.5, 0.9, 1.0)):
    """A frame of quantiles: one row per named array, columns ``min, 10%, median, 90%, max``."""
    import pandas as pd

    labels = ["min" if v == 0 else "max" if v == 1 else ("median" if v == 0.5 else f"{v:.0%}") for v in q]
    return pd.DataFrame(
        [
            np.quantile(np.asarray(a, dtype=float), q) if np.size(a) else np.full(len(q), np.nan)
            for a in columns.values()
        ],
        index=list(columns),
        columns=labels,
    )
