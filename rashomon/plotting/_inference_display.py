from __future__ import annotations

from typing import Any

import numpy as np

from ._layout import legend_outside, new_axes, user_text


class LearnerImportanceDisplay:
    """Sorted horizontal bars of learner-PFI (or model-PFI) with their t intervals.

    ``plot`` returns ``self`` and keeps ``ax_``, ``figure_`` and ``bars_``.
    """

    def __init__(
        self,
        names,
        importances_mean,
        ci_lower,
        ci_upper,
        *,
        correction: float = 0.0,
        resampling: str = "",
        confidence_level: float = 0.95,
    ):
        self.names = list(names)
        self.importances_mean = np.asarray(importances_mean, dtype=float)
        self.ci_lower = np.asarray(ci_lower, dtype=float)
        self.ci_upper = np.asarray(ci_upper, dtype=float)
        self.correction, self.resampling, self.confidence_level = correction, resampling, confidence_level

    @classmethod
    def from_result(cls, result: Any) -> LearnerImportanceDisplay:
        return cls(
            result.names,
            result.importances_mean,
            result.ci_lower,
            result.ci_upper,
            correction=result.correction,
            resampling=result.resampling,
            confidence_level=result.confidence_level,
        )

    @user_text
    def plot(self, *, ax: Any = None, bar_kw: dict | None = None) -> LearnerImportanceDisplay:
        ax = new_axes(ax, (6, 0.4 * len(self.names) + 1.5))
        order = np.argsort(self.importances_mean)
        pos = np.arange(len(order))
        mean = self.importances_mean
        err = np.vstack([mean - self.ci_lower, self.ci_upper - mean])[:, order]
        self.bars_ = ax.barh(pos, mean[order], xerr=err, **({"color": "#4c72b0"} | (bar_kw or {})))
        ax.set_yticks(pos, [self.names[i] for i in order])
        ax.axvline(0, color="grey", lw=0.8)
        lab = "corrected " if self.correction > 0 else ""
        ax.set_xlabel(f"learner-PFI with {self.confidence_level:.0%} {lab}t intervals ({self.resampling})")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class LearnerPDDisplay:
    """Learner-PD: the PD of each refit (grey), the mean (red) and the pointwise t band.

    ``plot`` returns ``self`` and keeps ``ax_``, ``figure_``, ``lines_`` (refit curves),
    ``band_`` and ``line_`` (the mean).
    """

    def __init__(self, result: Any):
        self.result = result

    @classmethod
    def from_result(cls, result: Any) -> LearnerPDDisplay:
        return cls(result)

    @user_text
    def plot(self, *, ax: Any = None, curves: bool = True) -> LearnerPDDisplay:
        r = self.result
        ax = new_axes(ax, (6, 4))
        self.lines_ = []
        if curves:
            for c in r.curves:
                self.lines_.append(ax.plot(r.grid, c, color="grey", lw=0.6, alpha=0.5)[0])
        lab = "corrected " if r.correction > 0 else ""
        self.band_ = ax.fill_between(
            r.grid, r.ci_lower, r.ci_upper, color="#4c72b0", alpha=0.3, label=f"{r.confidence_level:.0%} {lab}band"
        )
        (self.line_,) = ax.plot(r.grid, r.mean, color="#c44e52", lw=2, label="learner-PD")
        ax.set_xlabel(r.feature)
        ax.set_ylabel("partial dependence")
        legend_outside(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class PIMPDisplay:
    """One panel per feature: histogram of the null PFIs and the observed PFI (red line).

    ``plot`` returns ``self`` and keeps ``axes_``, ``figure_``.
    """

    def __init__(self, result: Any):
        self.result = result

    @classmethod
    def from_result(cls, result: Any) -> PIMPDisplay:
        return cls(result)

    @user_text
    def plot(self, *, axes: Any = None, bins: int = 20) -> PIMPDisplay:
        import matplotlib.pyplot as plt

        r = self.result
        k = len(r.names)
        if axes is None:
            _, axes = plt.subplots(1, k, figsize=(3 * k, 2.8), squeeze=False, layout="constrained")
            axes = axes[0]
        axes = list(np.ravel(axes))
        if len(axes) < k:
            raise ValueError(f"The 'axes' parameter of PIMPDisplay.plot needs {k} axes. Got {len(axes)} instead.")
        for ax, name, obs, nul, p in zip(axes, r.names, r.observed, r.null, r.p_values_adjusted):
            ax.hist(nul, bins=bins, color="#bbbbbb")
            ax.axvline(obs, color="#c44e52", lw=2)
            ax.set_title(f"{name}\np = {p:.3g}", fontsize=9)
            ax.set_xlabel("PFI")
        self.axes_ = axes[:k]
        self.figure_ = axes[0].figure
        return self
