"""Result objects of the model-reliance estimators."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..utils import DisplayMixin

__all__ = ["ModelRelianceResult", "FeatureRelianceResult"]


@dataclass(frozen=True, repr=False)
class ModelRelianceResult(DisplayMixin):
    """Model reliance of one fitted model on one feature or feature group.

    Attributes
    ----------
    features : tuple of str
        Names of the switched columns (``x0``, ``x1``, ... without names).
    feature_indices : tuple of int
    method : {"exact", "divide", "permutation"}
    loss : str
    e_orig : float
        Mean loss on the original data.
    e_switch : float
        Estimated switched loss: the exact U-statistic, ``e_divide`` or the mean
        over permutation repeats, according to ``method``.
    ratio : float
        ``e_switch / e_orig`` (``inf`` when ``e_orig`` is 0 and ``e_switch`` > 0).
    difference : float
        ``e_switch - e_orig``.
    n_samples : int
    e_switch_repeats : ndarray of shape (n_repeats,) or None
        Per-repeat switched losses (``method="permutation"``).
    ratio_repeats, difference_repeats : ndarray of shape (n_repeats,) or None
    closed_form : bool
        True when the linear closed form was used.
    exact_algorithm : str or None
        For ``method="exact"``: ``"linear"`` (closed form), ``"tree-paths"``,
        ``"tree-cells"`` (tree ensembles) or ``"distinct-values"`` (generic);
        all compute the same U-statistic. None for the other methods.
    """

    features: tuple[str, ...]
    feature_indices: tuple[int, ...]
    method: str
    loss: str
    e_orig: float
    e_switch: float
    ratio: float
    difference: float
    n_samples: int
    e_switch_repeats: np.ndarray | None = None
    ratio_repeats: np.ndarray | None = None
    difference_repeats: np.ndarray | None = None
    closed_form: bool = False
    exact_algorithm: str | None = None

    def _display_(self) -> tuple[dict, list]:
        fields = {
            "features": list(self.features),
            "method": self.method,
            "loss": self.loss,
            "ratio": self.ratio,
            "difference": self.difference,
            "e_orig": self.e_orig,
            "e_switch": self.e_switch,
            "n_samples": self.n_samples,
        }
        if self.e_switch_repeats is not None:
            fields["n_repeats"] = len(self.e_switch_repeats)
        if self.exact_algorithm:
            fields["exact_algorithm"] = self.exact_algorithm
        return fields, []


def _ratio(num: np.ndarray | float, den: float) -> Any:
    num = np.asarray(num, dtype=float)
    if den > 0:
        return num / den
    # e_orig = 0: reliance is infinite unless switching costs nothing too.
    return np.where(num > 0, np.inf, 1.0)


@dataclass(frozen=True, repr=False)
class FeatureRelianceResult(DisplayMixin):
    """Model reliance for several features or groups (see :func:`feature_reliance`).

    Attributes
    ----------
    names : list of str
        One name per feature or group.
    results : list of ModelRelianceResult
    e_orig : float
    e_switch, ratio, difference : ndarray of shape (n_features,)
    ratio_repeats, difference_repeats : ndarray of shape (n_features, n_repeats) or None
    method, loss : str
    """

    names: list[str]
    results: list[ModelRelianceResult]
    e_orig: float
    e_switch: np.ndarray
    ratio: np.ndarray
    difference: np.ndarray
    method: str
    loss: str
    ratio_repeats: np.ndarray | None = None
    difference_repeats: np.ndarray | None = None

    def _display_(self) -> tuple[dict, list]:
        fields = {
            "n_features": len(self.names),
            "method": self.method,
            "loss": self.loss,
            "e_orig": self.e_orig,
            "ratio": dict(zip(self.names, self.ratio)),
        }
        if self.ratio_repeats is not None:
            fields["n_repeats"] = int(self.ratio_repeats.shape[1])
        return fields, [("", self.to_frame())]

    def to_frame(self) -> pd.DataFrame:
        """One row per feature: e_orig, e_switch, ratio, difference (and the spread over repeats).

        Returns
        -------
        DataFrame
            Indexed by feature name.
        """
        df = pd.DataFrame(
            {"e_orig": self.e_orig, "e_switch": self.e_switch, "ratio": self.ratio, "difference": self.difference},
            index=pd.Index(self.names, name="feature"),
        )
        if self.ratio_repeats is not None and self.difference_repeats is not None:  # set together
            df["ratio_std"] = self.ratio_repeats.std(axis=1, ddof=1) if self.ratio_repeats.shape[1] > 1 else 0.0
            df["difference_std"] = (
                self.difference_repeats.std(axis=1, ddof=1) if self.difference_repeats.shape[1] > 1 else 0.0
            )
        return df

    def plot(self, *, kind: Literal["ratio", "difference"] = "ratio", ax: Any = None, **kwargs: Any):
        """Sorted horizontal bars (with spread over repeats).

        Parameters
        ----------
        kind : {"ratio", "difference"}, default="ratio"
            Which MR to draw.
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        **kwargs
            Passed to ``RelianceDisplay.plot`` (``bar_kw``).

        Returns
        -------
        RelianceDisplay
        """
        from ..plotting import RelianceDisplay

        return RelianceDisplay.from_result(self, kind=kind).plot(ax=ax, **kwargs)
