"""Displays of the fairness queries: disparity ranges, the least-disparity frontier, the reliance order (Hasse)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._layout import legend_outside, new_axes, user_text

__all__ = ["DisparityRangeDisplay", "DisparityFrontierDisplay", "RelianceOrderDisplay"]


def _axes(ax, figsize):
    ax = new_axes(ax, figsize)  # constrained layout: no label clipped
    return ax.figure, ax


class DisparityRangeDisplay:
    """One horizontal bar per disparity: certified range (light), attained range (dark), reference (dot).

    Parameters
    ----------
    result : DisparityRange
    benchmark : float, default=None
        A benchmark's disparity (first row), drawn as a red diamond.
    """

    def __init__(self, result, benchmark: float | None = None):
        self.result, self.benchmark = result, benchmark

    @user_text
    def plot(self, *, ax: Any = None, **kwargs: Any) -> DisparityRangeDisplay:
        r = self.result
        self.figure_, self.ax_ = _axes(ax, (6.4, 0.6 + 0.55 * len(r.names)))
        ax = self.ax_
        y = np.arange(len(r.names))[::-1]
        ax.hlines(
            y, r.lower, r.upper, color="#9ecae1", lw=9, label="certified range" if not r.exact.all() else "exact range"
        )
        ax.hlines(y, r.lower_attained, r.upper_attained, color="#3182bd", lw=4, label="attained by members")
        ax.plot(r.reference, y, "ko", ms=5, label="reference model")
        if self.benchmark is not None:
            ax.plot([self.benchmark], [y[0]], "D", color="#d62728", ms=7, label="benchmark")
        ax.axvline(0.0 if r.kind == "difference" else 1.0, color="grey", lw=0.8, ls="--")
        ax.set_yticks(y)
        ax.set_yticklabels(r.names)
        ax.set_xlabel(f"{r.metric} {r.kind} over the Rashomon set")
        legend_outside(ax, frameon=False)
        return self


class DisparityFrontierDisplay:
    """Least distance from parity against the loss threshold: certified lower bound and attained value."""

    def __init__(self, frontier):
        self.frontier = frontier

    @user_text
    def plot(self, *, ax: Any = None, **kwargs: Any) -> DisparityFrontierDisplay:
        f = self.frontier
        self.figure_, self.ax_ = _axes(ax, (6.0, 4.0))
        ax = self.ax_
        ax.plot(f.epsilons, f.attained, "-o", color="#3182bd", ms=4, label="least |disparity| attained")
        ax.plot(f.epsilons, f.lower, "--", color="black", lw=1, label="certified lower bound")
        ax.axvline(f.epsilon_abs, color="grey", ls=":", lw=1, label="the set's ε")
        ax.plot([f.e_ref], [f.reference_disparity], "ks", ms=6, label="reference model")
        if f.benchmark is not None:
            ax.axhline(f.benchmark, color="#d62728", lw=1, label="benchmark")
        if np.isfinite(f.zero_loss_upper):
            ax.axvline(f.zero_loss_upper, color="#31a354", ls="-.", lw=1, label="least loss at parity")
        ax.set_xlabel("loss threshold ε_abs")
        ax.set_ylabel(f"least distance from parity ({f.name})")
        ax.set_ylim(bottom=min(0.0, float(np.min(f.lower))))
        legend_outside(ax, frameon=False)
        return self


class RelianceOrderDisplay:
    """Hasse diagram of the certified order: features in levels (most relied on at the top), an arrow for each
    covering relation a ≻ b, labelled with its critical ε (in the set's ε units)."""

    def __init__(self, order):
        self.order = order

    @staticmethod
    def interval(diff, *, ax: Any = None, **kwargs: Any):
        """One reliance difference as an interval (certified and attained) with the reference."""
        fig, ax = _axes(ax, (6.0, 1.6))
        ax.hlines([0], [diff.lower], [diff.upper], color="#9ecae1", lw=9, label="certified")
        ax.hlines([0], [diff.lower_attained], [diff.upper_attained], color="#3182bd", lw=4, label="attained")
        ax.plot([diff.reference], [0], "ko", label="reference")
        ax.axvline(0, color="grey", ls="--", lw=0.8)
        ax.set_yticks([])
        ax.set_xlabel(f"MR({', '.join(map(str, diff.a))}) - MR({', '.join(map(str, diff.b))}) ({diff.kind})")
        legend_outside(ax, frameon=False)
        return ax

    @user_text
    def plot(self, *, ax: Any = None, **kwargs: Any) -> RelianceOrderDisplay:
        o = self.order
        names = [str(f) for f in o.features]
        edges = o.hasse_edges()
        level = {n: 0 for n in names}
        for _ in names:  # longest path from a maximal element
            for a, b in edges:
                level[b] = max(level[b], level[a] + 1)
        depth = max(level.values()) if level else 0
        self.figure_, self.ax_ = _axes(ax, (max(4.0, 1.6 * len(names)), 1.2 + 1.2 * depth))
        ax = self.ax_
        pos = {}
        for lv in range(depth + 1):
            row = [n for n in names if level[n] == lv]
            for i, n in enumerate(row):
                pos[n] = ((i + 1) / (len(row) + 1), depth - lv)
        crit = {(r.a, r.b): r.critical_epsilon_lower for r in o.relations.itertuples()}
        for a, b in edges:
            (x0, y0), (x1, y1) = pos[a], pos[b]
            ax.annotate(
                "",
                xy=(x1, y1 + 0.12),
                xytext=(x0, y0 - 0.12),
                arrowprops={"arrowstyle": "->", "color": "#3182bd", "lw": 1.5},
            )
            c = crit.get((a, b), np.nan)
            if np.isfinite(c):
                ax.text((x0 + x1) / 2, (y0 + y1) / 2, f"ε*≥{c:.3g}", fontsize=8, ha="left", color="#555555")
            elif c == np.inf:
                ax.text((x0 + x1) / 2, (y0 + y1) / 2, "all ε", fontsize=8, ha="left", color="#555555")
        for n, (x, yv) in pos.items():
            ax.text(
                x,
                yv,
                n,
                ha="center",
                va="center",
                fontsize=10,
                bbox={"boxstyle": "round", "fc": "white", "ec": "#3182bd"},
            )
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.5, depth + 0.5)
        ax.axis("off")
        ax.set_title(f"certified reliance order ({o.kind}), ε_abs = {o.epsilon_abs:.4g}", fontsize=10)
        return self
