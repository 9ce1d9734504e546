from __future__ import annotations

from typing import Any

import numpy as np

from ._layout import new_axes, user_text


class RelianceDisplay:
    """Sorted horizontal bars of model reliance, with the spread over repeats.

    Create with ``from_result``; ``plot`` returns ``self`` and keeps
    ``ax_``, ``figure_`` and ``bars_``.
    """

    def __init__(self, names, values, errors=None, *, kind: str = "ratio", method: str = ""):
        self.names = list(names)
        self.values = np.asarray(values, dtype=float)
        self.errors = None if errors is None else np.asarray(errors, dtype=float)
        self.kind = kind
        self.method = method

    @classmethod
    def from_result(cls, result: Any, *, kind: str = "ratio") -> RelianceDisplay:
        if kind not in ("ratio", "difference"):
            raise ValueError(
                f"The 'kind' parameter of RelianceDisplay.from_result must be 'ratio' or 'difference'. Got {kind!r} instead."
            )
        reps = getattr(result, f"{kind}_repeats")
        errors = None if reps is None or reps.shape[1] < 2 else reps.std(axis=1, ddof=1)
        return cls(result.names, getattr(result, kind), errors, kind=kind, method=result.method)

    @user_text
    def plot(self, *, ax: Any = None, bar_kw: dict | None = None) -> RelianceDisplay:
        ax = new_axes(ax, (6, 0.4 * len(self.names) + 1.2))
        order = np.argsort(self.values)
        kw = {"color": "#4c72b0"} | (bar_kw or {})
        err = None if self.errors is None else self.errors[order]
        # bars start at "no reliance": MR ratio 1, MR difference 0
        ref = 1.0 if self.kind == "ratio" else 0.0
        self.bars_ = ax.barh(np.arange(len(order)), self.values[order] - ref, left=ref, xerr=err, **kw)
        ax.set_yticks(np.arange(len(order)), [self.names[i] for i in order])
        ax.axvline(ref, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(f"model reliance ({self.kind}, {self.method})")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self
