from __future__ import annotations

from typing import Any

import numpy as np

from ._layout import legend_outside, new_axes, user_text


class PDDisplay:
    """Partial dependence / ICE plots.

    1-D: PD line, optional ICE lines (``ice=True``, coloured by ``color_by``: an
    array with one value per row, e.g. a feature), ±std band, rug of the data;
    crisp classifiers: stacked bars of the predicted-class shares. 2-D: contour.
    ``plot`` returns ``self`` and keeps ``ax_``, ``figure_``, ``lines_``.
    """

    def __init__(self, result: Any):
        self.result = result

    @classmethod
    def from_result(cls, result: Any) -> PDDisplay:
        return cls(result)

    @user_text
    def plot(
        self,
        *,
        ax: Any = None,
        output: int = -1,
        ice: bool | None = None,
        color_by: Any = None,
        std_band: bool = True,
        rug: bool = True,
        max_ice: int = 200,
        line_kw: dict | None = None,
    ) -> PDDisplay:
        import matplotlib.pyplot as plt

        r = self.result
        ax = new_axes(ax, (6, 4))
        self.lines_ = []
        if len(r.grid) == 2:
            g0, g1 = np.meshgrid(r.grid[0], r.grid[1], indexing="ij")
            self.contour_ = ax.contourf(g0, g1, r.average[output], levels=15, cmap="viridis")
            ax.figure.colorbar(self.contour_, ax=ax, label=f"PD [{r.outputs[output]}]")
            ax.set_xlabel(r.features[0])
            ax.set_ylabel(r.features[1])
        elif r.response == "crisp":
            bottom = np.zeros(len(r.grid[0]))
            width = np.min(np.diff(r.grid[0])) * 0.8 if len(r.grid[0]) > 1 else 0.8
            self.bars_ = []
            for k, o in enumerate(r.outputs):
                self.bars_.append(ax.bar(r.grid[0], r.average[k], bottom=bottom, width=width, label=str(o)))
                bottom = bottom + r.average[k]
            ax.set_ylabel("share of rows predicted as each class")
            ax.set_xlabel(r.features[0])
            ax.legend(title="class", fontsize=8)
        else:
            x = r.grid[0]
            show_ice = (r.individual is not None) if ice is None else ice
            if show_ice and r.individual is not None:
                curves = r.individual[output]
                rows = np.linspace(0, curves.shape[0] - 1, min(max_ice, curves.shape[0])).astype(int)
                if color_by is not None:
                    cv = np.asarray(color_by, dtype=float)[rows]
                    cmap = plt.get_cmap("coolwarm")
                    norm = plt.Normalize(cv.min(), cv.max())
                    for i, c in zip(rows, cv):
                        self.lines_.append(ax.plot(x, curves[i], color=cmap(norm(c)), lw=0.6, alpha=0.5)[0])
                    ax.figure.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="ICE colour")
                else:
                    for i in rows:
                        self.lines_.append(ax.plot(x, curves[i], color="grey", lw=0.5, alpha=0.35)[0])
            avg = r.average[output]
            if std_band:
                self.band_ = ax.fill_between(
                    x, avg - r.std[output], avg + r.std[output], color="#4c72b0", alpha=0.15, label="± std of ICE"
                )
            (self.pd_line_,) = ax.plot(x, avg, **({"color": "#c44e52", "lw": 2.5, "label": "PD"} | (line_kw or {})))
            if rug and r.feature_values is not None:
                lo, hi = ax.get_ylim()
                ax.plot(r.feature_values[:, 0], np.full(len(r.feature_values), lo), "|", color="k", alpha=0.3, ms=8)
            ax.set_xlabel(r.features[0])
            lab = "centred " if r.centered else ""
            ax.set_ylabel(
                f"{lab}partial dependence" + (f" [{r.outputs[output]}]" if r.response != "regression" else "")
            )
            legend_outside(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class RashomonPDBandDisplay:
    """The Rashomon PD band around the reference PD (and optionally a fitted model's PD/ICE)."""

    def __init__(self, band: Any, pd_result: Any = None):
        self.band = band
        self.pd_result = pd_result

    @user_text
    def plot(self, *, ax: Any = None, fill_kw: dict | None = None) -> RashomonPDBandDisplay:
        b = self.band
        ax = new_axes(ax, (6, 4))
        if self.pd_result is not None:
            PDDisplay(self.pd_result).plot(
                ax=ax, std_band=False, line_kw={"label": "PD of the fitted model (ICE in grey)"}
            )
        self.band_ = ax.fill_between(
            b.grid,
            b.lower,
            b.upper,
            **({"color": "#55a868", "alpha": 0.3, "label": "Rashomon PD band"} | (fill_kw or {})),
        )
        (self.reference_line_,) = ax.plot(b.grid, b.reference, color="#2d6a3e", lw=2, label="PD of the loss minimiser")
        ax.set_xlabel(b.feature)
        ax.set_ylabel("partial dependence")
        legend_outside(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class UncertaintyPDDisplay:
    """Entropy/likelihood ICE: curves coloured by class (or a feature), the original point marked on
    each curve, and a rug of the feature per class."""

    def __init__(self, result: Any, color_by: Any = None, classes: Any = None):
        self.result = result
        self.color_by = None if color_by is None else np.asarray(color_by)
        self.classes = classes

    @user_text
    def plot(self, *, ax: Any = None, max_ice: int = 150) -> UncertaintyPDDisplay:
        import matplotlib.pyplot as plt

        r = self.result
        ax = new_axes(ax, (6, 4))
        x = r.grid[0]
        curves = r.individual[0]
        rows = np.linspace(0, curves.shape[0] - 1, min(max_ice, curves.shape[0])).astype(int)
        cb = self.color_by
        discrete = cb is not None and len(np.unique(cb)) <= 10
        cmap = plt.get_cmap("tab10" if discrete else "viridis")
        if cb is not None and not discrete:
            norm = plt.Normalize(float(np.min(cb)), float(np.max(cb)))
        levels = list(np.unique(cb)) if discrete and cb is not None else []
        orig = r.original_values
        fv = r.feature_values[:, 0]
        self.lines_ = []
        for i in rows:
            if cb is None:
                col: Any = "grey"  # a name or an RGBA tuple
            elif discrete:
                col = cmap(levels.index(cb[i]))
            else:
                col = cmap(norm(cb[i]))
            self.lines_.append(ax.plot(x, curves[i], color=col, lw=0.6, alpha=0.5)[0])
            if orig is not None:
                ax.plot([fv[i]], [orig[i]], "o", color=col, ms=3)
        (self.pd_line_,) = ax.plot(x, r.average[0], color="k", lw=2.5, label=f"{r.outputs[0]} PD")
        lo = ax.get_ylim()[0]
        if discrete:
            for k, lev in enumerate(levels):
                sel = cb == lev
                ax.plot(
                    fv[sel],
                    np.full(sel.sum(), lo - 0.02 * (k + 1) * (ax.get_ylim()[1] - lo)),
                    "|",
                    color=cmap(k),
                    ms=8,
                    label=f"class {lev}",
                )
        ax.set_xlabel(r.features[0])
        ax.set_ylabel("predictive entropy" if r.outputs[0] == "entropy" else "log-likelihood")
        legend_outside(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class UncertaintyImportanceDisplay:
    """Likelihood-PFI and entropy-PFI side by side, ordered by likelihood-PFI."""

    def __init__(self, likelihood: Any, entropy: Any):
        self.likelihood, self.entropy = likelihood, entropy

    @user_text
    def plot(self, *, ax: Any = None) -> UncertaintyImportanceDisplay:
        res = [r for r in (self.likelihood, self.entropy) if r is not None]
        ax = new_axes(ax, (7, 0.4 * len(res[0].names) + 1.5))
        ref = self.likelihood if self.likelihood is not None else self.entropy
        order = np.argsort(ref.importances_mean)
        pos = np.arange(len(order))
        h = 0.8 / len(res)
        self.bars_ = []
        for k, r in enumerate(res):
            self.bars_.append(
                ax.barh(
                    pos + (k - (len(res) - 1) / 2) * h,
                    r.importances_mean[order],
                    height=h,
                    xerr=r.importances_std[order],
                    label=f"{r.measure}-PFI",
                )
            )
        ax.set_yticks(pos, [ref.names[i] for i in order])
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_xlabel("importance (nats)")
        legend_outside(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self
