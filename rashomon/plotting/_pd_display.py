from __future__ import annotations

from typing import Any

import numpy as np


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
    def from_result(cls, result: Any) -> "PDDisplay":
        return cls(result)

    def plot(self, *, ax: Any = None, output: int = -1, ice: bool | None = None, color_by: Any = None,
             std_band: bool = True, rug: bool = True, max_ice: int = 200, line_kw: dict | None = None) -> "PDDisplay":
        import matplotlib.pyplot as plt

        r = self.result
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
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
                self.band_ = ax.fill_between(x, avg - r.std[output], avg + r.std[output], color="#4c72b0", alpha=0.15, label="± std of ICE")
            (self.pd_line_,) = ax.plot(x, avg, **({"color": "#c44e52", "lw": 2.5, "label": "PD"} | (line_kw or {})))
            if rug and r.feature_values is not None:
                lo, hi = ax.get_ylim()
                ax.plot(r.feature_values[:, 0], np.full(len(r.feature_values), lo), "|", color="k", alpha=0.3, ms=8)
            ax.set_xlabel(r.features[0])
            lab = "centred " if r.centered else ""
            ax.set_ylabel(f"{lab}partial dependence" + (f" [{r.outputs[output]}]" if r.response != "regression" else ""))
            ax.legend(fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class RashomonPDBandDisplay:
    """The Rashomon PD band around the reference PD (and optionally a fitted model's PD/ICE)."""

    def __init__(self, band: Any, pd_result: Any = None):
        self.band = band
        self.pd_result = pd_result

    def plot(self, *, ax: Any = None, fill_kw: dict | None = None) -> "RashomonPDBandDisplay":
        import matplotlib.pyplot as plt

        b = self.band
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        if self.pd_result is not None:
            PDDisplay(self.pd_result).plot(ax=ax, std_band=False, line_kw={"label": "PD of the fitted model (ICE in grey)"})
        self.band_ = ax.fill_between(b.grid, b.lower, b.upper, **({"color": "#55a868", "alpha": 0.3, "label": "Rashomon PD band"} | (fill_kw or {})))
        (self.reference_line_,) = ax.plot(b.grid, b.reference, color="#2d6a3e", lw=2, label="PD of the loss minimiser")
        ax.set_xlabel(b.feature)
        ax.set_ylabel("partial dependence")
        ax.legend(fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self
