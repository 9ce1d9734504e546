"""Result dataclasses of :mod:`rashomon.inference` (computed in ``_inference`` and ``_pvalues``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..utils import DisplayMixin

__all__ = ["LearnerImportanceResult", "LearnerPDResult", "TTestResult", "PIMPResult"]


@dataclass(frozen=True, repr=False)
class LearnerImportanceResult(DisplayMixin):
    """Learner-PFI (difference form) over refits, with (corrected) t intervals.

    Attributes
    ----------
    names : list of str
    importances : ndarray of shape (n_features, n_refits)
        PFI of each refit on its held-out part.
    importances_mean, std_error, ci_lower, ci_upper : ndarray of shape (n_features,)
    correction : float
        c = n_test / n_train used in ``(1/m + c)·s²`` (0 without correction).
    resampling : str
    confidence_level : float
    loss : str
        The loss the PFI is measured with (what ``loss="auto"`` chose, see
        ``rashomon.utils.losses.default_loss``).
    """

    names: list
    importances: np.ndarray
    importances_mean: np.ndarray
    std_error: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    correction: float
    resampling: str
    confidence_level: float
    loss: str = "squared_error"

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "n_features": len(self.names),
                "n_refits": int(np.shape(self.importances)[1]),
                "resampling": self.resampling,
                "confidence_level": self.confidence_level,
                "correction": self.correction,
                "loss": self.loss,
                "importance": dict(zip(self.names, self.importances_mean)),
            },
            [("", self.to_frame())],
        )

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "importance": self.importances_mean,
                "std_error": self.std_error,
                "ci_lower": self.ci_lower,
                "ci_upper": self.ci_upper,
            },
            index=pd.Index(self.names, name="feature"),
        )

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """Sorted bars with the t intervals; returns a LearnerImportanceDisplay."""
        from ..plotting import LearnerImportanceDisplay

        return LearnerImportanceDisplay.from_result(self).plot(ax=ax, **kwargs)


@dataclass(frozen=True, repr=False)
class LearnerPDResult(DisplayMixin):
    """Learner-PD over refits with pointwise (corrected) t bands."""

    feature: str
    grid: np.ndarray
    curves: np.ndarray
    mean: np.ndarray
    std_error: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    correction: float
    resampling: str
    confidence_level: float

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "feature": self.feature,
                "grid_points": len(self.grid),
                "n_refits": int(np.shape(self.curves)[0]),
                "resampling": self.resampling,
                "confidence_level": self.confidence_level,
                "correction": self.correction,
            },
            [("", self.to_frame())],
        )

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"grid": self.grid, "pd": self.mean, "ci_lower": self.ci_lower, "ci_upper": self.ci_upper})

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """Refit curves, mean and pointwise band; returns a LearnerPDDisplay."""
        from ..plotting import LearnerPDDisplay

        return LearnerPDDisplay.from_result(self).plot(ax=ax, **kwargs)


@dataclass(frozen=True, repr=False)
class TTestResult(DisplayMixin):
    """Corrected resampled t-test of the held-out loss difference (a - b); ``loss`` names the loss."""

    mean_difference: float
    t_statistic: float
    p_value: float
    differences: np.ndarray
    correction: float
    ci_lower: float
    ci_upper: float
    loss: str = "squared_error"

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "mean_difference": self.mean_difference,
                "ci": (self.ci_lower, self.ci_upper),
                "t_statistic": self.t_statistic,
                "p_value": self.p_value,
                "n_refits": len(self.differences),
                "correction": self.correction,
                "loss": self.loss,
            },
            [],
        )


@dataclass(frozen=True, repr=False)
class PIMPResult(DisplayMixin):
    """PIMP p-values per feature, with the null PFIs; ``loss`` names the loss of the PFIs."""

    names: list
    observed: np.ndarray
    null: np.ndarray
    p_values: np.ndarray
    p_values_adjusted: np.ndarray
    null_kind: str
    correction: str | None
    loss: str = "squared_error"
    #: why the p-values are not those of the requested null (too few permutations for a parametric fit), or ""
    note: str = ""

    def _display_(self) -> tuple[dict, list]:
        fields = {
            "n_features": len(self.names),
            "n_permutations": int(np.shape(self.null)[-1]),
            "null_kind": self.null_kind,
            "correction": self.correction,
            "loss": self.loss,
            "p_adjusted": dict(zip(self.names, self.p_values_adjusted)),
        }
        return fields, [("", self.to_frame())] + ([(f"note: {self.note}", None)] if self.note else [])

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {"pfi": self.observed, "p_value": self.p_values, "p_adjusted": self.p_values_adjusted},
            index=pd.Index(self.names, name="feature"),
        )

    def plot(self, *, axes: Any = None, **kwargs: Any):
        """Null histogram and observed PFI per feature; returns a PIMPDisplay."""
        from ..plotting import PIMPDisplay

        return PIMPDisplay.from_result(self).plot(axes=axes, **kwargs)
