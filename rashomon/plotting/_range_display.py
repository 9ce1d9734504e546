"""Displays of ranges over a Rashomon set: functionals, predictions per row, members, the importance cloud.

Every ``plot`` returns the display and keeps ``ax_``, ``figure_`` and the drawn artists.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._layout import integer_ticks, legend_outside, new_axes, scale_label, user_text


def _axes(ax):
    return new_axes(ax)


class RangeDisplay:
    """Horizontal intervals ``[lower, upper]`` per functional with the reference marked (a forest plot).

    Given ``attained`` (the values members found reach, when some bound is not tight), each certified interval is
    drawn wide and light, with the attained one thin and dark inside it.

    Attributes after ``plot``: ``ax_``, ``figure_``, ``intervals_`` (LineCollection),
    ``attained_`` (LineCollection, or None), ``reference_`` (the markers), ``zero_line_`` (None when 0 is
    outside the view).
    """

    def __init__(self, names, lower, upper, reference, *, highlight=None, title: str = "", apart=None, attained=None):
        self.names = list(names)
        self.lower, self.upper, self.reference = (np.asarray(v, dtype=float) for v in (lower, upper, reference))
        self.highlight = None if highlight is None else np.asarray(highlight, dtype=bool)
        #: ``(lower_attained, upper_attained)`` arrays when some bound is not tight, else None
        self.attained = None if attained is None else tuple(np.asarray(v, dtype=float) for v in attained)
        self.title = title
        #: ``(name, lower, upper, reference)`` of a functional on another scale, written under the axis, not drawn
        self.apart = apart

    @classmethod
    def from_range(cls, res) -> RangeDisplay:
        stable = getattr(res, "sign_stable", None)
        title = f"{type(res).__name__}: range over the Rashomon set"
        names, lo, hi, ref = list(res.names), res.lower, res.upper, res.reference
        g = res.gap
        tight = bool(np.all(res._tight(lo, g[0], res.tol)) and np.all(res._tight(hi, g[1], res.tol)))
        att = None if tight else (np.asarray(res.lower_attained), np.asarray(res.upper_attained))
        if stable is not None and len(names) > 1 and names[0] == "intercept":
            # the intercept is on the scale of y, not of the coefficients: written apart, not drawn on their axis
            return cls(
                names[1:],
                lo[1:],
                hi[1:],
                ref[1:],
                highlight=stable[1:],
                title=title,
                apart=("intercept", float(lo[0]), float(hi[0]), float(ref[0])),
                attained=None if att is None else (att[0][1:], att[1][1:]),
            )
        return cls(names, lo, hi, ref, highlight=stable, title=title, attained=att)

    @user_text
    def plot(self, *, ax: Any = None, color: str = "C0", highlight_color: str = "C3") -> RangeDisplay:
        from matplotlib.collections import LineCollection

        ax = _axes(ax)
        m = len(self.names)
        ys = np.arange(m)[::-1]
        colors = [highlight_color if (self.highlight is not None and self.highlight[i]) else color for i in range(m)]
        segs = [[(lo, y), (hi, y)] for lo, hi, y in zip(self.lower, self.upper, ys)]
        loose = self.attained is not None
        self.intervals_ = ax.add_collection(
            LineCollection(segs, colors=colors, linewidths=7 if loose else 3, alpha=0.35 if loose else 1.0)
        )
        self.attained_ = None
        if self.attained is not None:
            a_lo, a_hi = self.attained
            a_segs = [[(lo, y), (hi, y)] for lo, hi, y in zip(a_lo, a_hi, ys)]
            self.attained_ = ax.add_collection(LineCollection(a_segs, colors=colors, linewidths=2))
        self.reference_ = ax.plot(self.reference, ys, "k|", markersize=12, label="reference")[0]
        lo, hi = float(np.min(self.lower)), float(np.max(self.upper))
        pad = 0.05 * max(hi - lo, 1e-12 * max(1.0, abs(hi)))
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(-1, m)
        self.zero_line_ = ax.axvline(0.0, color="grey", lw=0.8, ls=":") if lo - pad < 0 < hi + pad else None
        ax.set_yticks(ys)
        ax.set_yticklabels(self.names)
        ax.set_title(self.title)
        xlabel = "value over the set"
        if self.apart is not None:
            name, a_lo, a_hi, a_ref = self.apart
            xlabel += f"\n{name} (not drawn): [{a_lo:.4g}, {a_hi:.4g}], reference {a_ref:.4g}"
        ax.set_xlabel(xlabel)
        from matplotlib.lines import Line2D

        handles = [self.reference_]
        if self.highlight is not None:
            handles += [
                Line2D([], [], color=highlight_color, lw=3, label="sign stable"),
                Line2D([], [], color=color, lw=3, label="sign can flip"),
            ]
        if loose:
            handles += [
                Line2D([], [], color="grey", lw=7, alpha=0.35, label="certified bounds"),
                Line2D([], [], color="grey", lw=2, label="attained by members\n(within certified)"),
            ]
        legend_outside(ax, handles=handles)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class PredictionRangeDisplay:
    """The viable prediction range figure: rows sorted by reference prediction, each with its range.

    ``kind="ranges"`` draws one vertical segment per row (``segments_``), the reference
    predictions (``reference_``) and, given a threshold, the threshold line
    (``threshold_line_``) with the rows some member flips in another colour.
    ``kind="widths"`` draws the histogram of range widths (``bars_``). Where some row's bounds are not tight,
    each certified range is drawn wide and light with the attained one thin inside it (``attained_``).
    """

    def __init__(self, res, threshold: float | None = None):
        self.res, self.threshold = res, threshold

    @user_text
    def plot(self, *, ax: Any = None, kind: str = "ranges", max_rows: int = 2000) -> PredictionRangeDisplay:
        from matplotlib.collections import LineCollection

        from ..utils.validation import check_choice

        check_choice(kind, ("ranges", "widths"), "kind", "PredictionRange.plot")
        ax = _axes(ax)
        r = self.res
        self.threshold_line_ = None
        if kind == "widths":
            _, _, self.bars_ = ax.hist(r.width, bins=min(50, max(5, len(r.width) // 10)), color="C0")
            ax.set_xlabel(f"width of the prediction range ({getattr(r, 'scale', 'prediction')} scale)")
            ax.set_ylabel("rows")
            ax.set_title("Widths of the prediction ranges")
        else:
            order = np.argsort(r.reference, kind="stable")
            if len(order) > max_rows:  # evenly spaced rows keep the figure readable
                order = order[np.linspace(0, len(order) - 1, max_rows).round().astype(int)]
            x = np.arange(len(order))
            flips = r.flippable(self.threshold) if self.threshold is not None else np.zeros(len(r.lower), bool)
            cols = np.where(flips[order], "C3", "C0")
            segs = [[(xi, r.lower[i]), (xi, r.upper[i])] for xi, i in zip(x, order)]
            g = r.gap
            tight = r._tight(r.lower, g[0], r.tol) & r._tight(r.upper, g[1], r.tol)
            loose = not bool(np.all(tight))
            self.segments_ = ax.add_collection(
                LineCollection(segs, colors=cols, linewidths=3.0 if loose else 1.0, alpha=0.35 if loose else 1.0)
            )
            self.attained_ = None
            if loose:  # the members' values, inside the certified bounds
                a_segs = [[(xi, r.lower_attained[i]), (xi, r.upper_attained[i])] for xi, i in zip(x, order)]
                self.attained_ = ax.add_collection(LineCollection(a_segs, colors=cols, linewidths=1.0))
            self.reference_ = ax.plot(x, r.reference[order], "k.", markersize=2, label="reference")[0]
            handles = [self.reference_]
            if loose:
                from matplotlib.lines import Line2D

                handles += [
                    Line2D(
                        [],
                        [],
                        color="grey",
                        lw=3,
                        alpha=0.35,
                        label=f"certified bounds ({int(np.sum(~tight))} rows not tight)",
                    ),
                    Line2D([], [], color="grey", lw=1, label="attained by members"),
                ]
            if self.threshold is not None:
                from matplotlib.lines import Line2D

                nf = int(flips.sum())
                self.threshold_line_ = ax.axhline(
                    self.threshold, color="grey", ls="--", label=f"threshold {self.threshold:g} ({nf} rows flip)"
                )
                handles += [
                    self.threshold_line_,
                    Line2D([], [], color="C3", lw=2, label=f"decision some member flips ({nf})"),
                    Line2D([], [], color="C0", lw=2, label=f"decision no member flips ({len(flips) - nf})"),
                ]
            # every bar whole: the limits pad the lowest and highest ends
            lo, hi = float(np.min(r.lower[order])), float(np.max(r.upper[order]))
            pad = 0.04 * max(hi - lo, 1e-12 * max(1.0, abs(hi)))
            ax.set_xlim(-0.5 - 0.01 * len(order), len(order) - 0.5 + 0.01 * len(order))
            ax.set_ylim(lo - pad, hi + pad)
            integer_ticks(ax.xaxis)
            name = scale_label(getattr(r, "scale", "prediction"))
            ax.set_xlabel(f"row, sorted by the reference's {name}")
            ax.set_ylabel(name)
            ax.set_title(f"Range of the {name} over the Rashomon set")
            legend_outside(ax, handles=handles)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class SampleDisplay:
    """Histogram of sampled members' losses between e_min and ε_abs (``bars_``, ``epsilon_line_``)."""

    def __init__(self, sample):
        self.sample = sample

    @user_text
    def plot(self, *, ax: Any = None, bins: int = 30) -> SampleDisplay:
        ax = _axes(ax)
        s = self.sample
        _, _, self.bars_ = ax.hist(s.e_orig, bins=bins, color="C0")
        self.epsilon_line_ = ax.axvline(s.epsilon_abs, color="C3", ls="--", label=f"ε_abs = {s.epsilon_abs:.4g}")
        ax.axvline(s.e_min, color="k", ls=":", label=f"e_min = {s.e_min:.4g}")
        ax.set_xlabel("loss of the sampled member")
        ax.set_ylabel("members")
        ax.set_title(f"{len(s)} members of the Rashomon set ({s.method})")
        legend_outside(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class ImportanceCloudDisplay:
    """The variable importance cloud: per feature the MCR interval (``intervals_``; exact, or certified bounds with
    the attained values inside them, ``attained_``, when an end is not tight), the sampled
    members' MR as points (``points_``) and the reference (``reference_``)."""

    def __init__(self, cloud):
        self.cloud = cloud

    @user_text
    def plot(self, *, ax: Any = None, max_points: int = 500, random_state: int = 0) -> ImportanceCloudDisplay:
        from matplotlib.collections import LineCollection

        ax = _axes(ax)
        c = self.cloud
        f = len(c.features)
        ys = np.arange(f)[::-1]
        rng = np.random.default_rng(random_state)
        S = c.samples[:max_points]
        jitter = rng.uniform(-0.25, 0.25, size=S.shape)
        self.points_ = ax.scatter(
            S.ravel(), (ys[None, :] + jitter).ravel(), s=4, alpha=0.3, color="C0", label="sampled members"
        )
        segs = [[(lo, y), (hi, y)] for lo, hi, y in zip(c.lower, c.upper, ys)]
        # exact when both ends are attained (quadratic classes); a classifier's upper end is an outer bound
        tight = all(r.lower_tight and r.upper_tight for r in c.mcr) if c.mcr else True
        self.intervals_ = ax.add_collection(
            LineCollection(
                segs,
                colors="C3",
                linewidths=2 if tight else 6,
                alpha=1.0 if tight else 0.35,
                label="exact MCR" if tight else "MCR (certified bounds)",
            )
        )
        self.attained_ = None
        if not tight:  # the members found, inside the certified bounds
            a_segs = [[(r.lower_attained, y), (r.upper_attained, y)] for r, y in zip(c.mcr, ys)]
            self.attained_ = ax.add_collection(
                LineCollection(a_segs, colors="C3", linewidths=2, label="MCR attained by members")
            )
        self.reference_ = ax.plot(c.reference, ys, "k*", markersize=9, label="reference")[0]
        lo, hi = float(np.min(c.lower)), float(np.max(c.upper))
        pad = 0.05 * max(hi - lo, 1e-9)
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(-1, f)
        ax.axvline(1.0 if c.kind == "ratio" else 0.0, color="grey", lw=0.8, ls=":")
        ax.set_yticks(ys)
        ax.set_yticklabels(c.features)
        ax.set_xlabel(f"model reliance ({c.kind})")
        ax.set_title("Variable importance cloud over the Rashomon set")
        legend_outside(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self
