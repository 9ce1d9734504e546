"""Results of the range queries (``_ranges.py``): the lowest and highest value of linear functionals over a
Rashomon set (:class:`FunctionalRange`), of predictions per row (:class:`PredictionRange`) and of coefficients
(:class:`CoefRange`), each with certified bounds and attaining members."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...utils import DisplayMixin
from ...utils.validation import RashomonInputError, check_float

__all__ = ["FunctionalRange", "PredictionRange", "CoefRange"]


@dataclass(frozen=True, repr=False)
class FunctionalRange(DisplayMixin):
    """Lowest and highest value of linear functionals ``a'θ + a₀`` over every member of the set.

    Attributes
    ----------
    names : list of str
        One label per functional.
    lower, upper : ndarray of shape (m,)
        Certified: no member of the set has a value outside ``[lower, upper]``.
    lower_attained, upper_attained : ndarray of shape (m,)
        Values of the returned members (``lower_attained - lower`` and
        ``upper - upper_attained`` are the certified gaps, >= 0).
    reference : ndarray of shape (m,)
        Values of the set's reference.
    lower_models, upper_models : ndarray of shape (m, d) or None
        Parameters θ of members attaining each end (``return_models=True``).
    epsilon_abs : float
    tol : float
        Relative tolerance the gaps were driven below.
    """

    names: list
    lower: np.ndarray
    upper: np.ndarray
    lower_attained: np.ndarray = field(repr=False)
    upper_attained: np.ndarray = field(repr=False)
    reference: np.ndarray = field(repr=False)
    lower_models: np.ndarray | None = field(repr=False, default=None)
    upper_models: np.ndarray | None = field(repr=False, default=None)
    epsilon_abs: float = math.nan
    tol: float = math.nan
    parametrization: Any = field(repr=False, default=None)

    def _display_(self) -> tuple[dict, list]:
        """Headline and tables of the notebook display (:class:`~rashomon.utils.DisplayMixin`)."""
        w, g = self.width, self.gap
        fields = {
            "m": len(self.lower),
            "scale": getattr(self, "scale", None),
            "epsilon_abs": self.epsilon_abs,
            "width_median": float(np.median(w)),
            "width_max": float(np.max(w)),
            "max_gap": float(np.max(g)),
            "all_tight": bool(
                np.all(self._tight(self.lower, g[0], self.tol)) and np.all(self._tight(self.upper, g[1], self.tol))
            ),
        }
        tight = self._tight(self.lower, g[0], self.tol) & self._tight(self.upper, g[1], self.tol)
        if not fields["all_tight"]:
            fields["n_not_tight"] = int(np.sum(~tight))
            if len(self.lower) == 1:  # one functional: both intervals in the headline
                fields["attained"] = (float(self.lower_attained[0]), float(self.upper_attained[0]))
                fields["certified"] = (float(self.lower[0]), float(self.upper[0]))
        fields = {k: v for k, v in fields.items() if v is not None}
        df = self.to_frame()
        df["tight"] = tight
        df = df.set_index(df.columns[0])
        if len(df) <= 12:
            return fields, [("", df)]
        return fields, [
            ("width of the range, quantiles over the rows", self._quantiles({"width": w})),
            (f"first and last of {len(df)} rows", df),
        ]

    @property
    def width(self) -> np.ndarray:
        """``upper - lower`` per functional."""
        return self.upper - self.lower

    @property
    def gap(self) -> np.ndarray:
        """Certified gaps, shape (2, m): lower end, upper end."""
        return np.vstack([self.lower_attained - self.lower, self.upper - self.upper_attained])

    def member(self, i: int, end: str = "upper"):
        """The fitted member (a :class:`~rashomon.ClassMember`) attaining ``end`` of functional ``i``."""
        models = self.upper_models if end == "upper" else self.lower_models
        if models is None:
            raise RashomonInputError(
                f"{type(self).__name__}.member needs the attaining members; compute the range with return_models=True."
            )
        return self.parametrization.estimator(models[i])

    def to_frame(self) -> pd.DataFrame:
        """One row per functional: the certified ``lower``, the attained ends (``lower_attained``,
        ``upper_attained``: values of returned members) around the reference, the certified ``upper``, the width
        and the certified gaps."""
        g = self.gap
        return pd.DataFrame(
            {
                "name": self.names,
                "lower": self.lower,
                "lower_attained": self.lower_attained,
                "reference": self.reference,
                "upper_attained": self.upper_attained,
                "upper": self.upper,
                "width": self.width,
                "lower_gap": g[0],
                "upper_gap": g[1],
            }
        )

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """Intervals per functional with the reference marked (:class:`~rashomon.plotting.RangeDisplay`)."""
        from ...plotting import RangeDisplay

        return RangeDisplay.from_range(self).plot(ax=ax, **kwargs)


@dataclass(frozen=True, repr=False)
class PredictionRange(FunctionalRange):
    """Per-row range of predictions over the set (the "viable prediction range").

    ``scale`` says what is ranged: ``"prediction"`` (a regression class), ``"probability"``
    (``σ(score)``, the logistic class's default: σ is increasing, so the ends are σ of the score ends, exactly)
    or ``"score"`` (the decision function of a classifier class, what its members' ``predict`` returns; the
    hinge class's only scale). It is shown by ``repr``, ``to_frame`` (column ``scale``) and the plot's axis.
    """

    scale: str = "prediction"

    def to_frame(self) -> pd.DataFrame:
        df = super().to_frame()
        df["scale"] = self.scale
        return df

    def width_quantiles(self, q: Any = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)) -> pd.Series:
        """The distribution of range widths (regression multiplicity)."""
        q = np.asarray(q, dtype=float)
        return pd.Series(np.quantile(self.width, q), index=q, name="width")

    def flippable(self, threshold: float) -> np.ndarray:
        """Rows whose decision ``prediction > threshold`` some member reverses against the reference.

        ``threshold`` is on the range's ``scale`` (a probability for the logistic class's default). Exact from
        the attained ends (each flip is witnessed by a returned member).
        """
        t = check_float(threshold, "threshold", "PredictionRange.flippable")
        if self.scale == "probability" and not 0.0 < t < 1.0:
            raise RashomonInputError(
                "The 'threshold' parameter of PredictionRange.flippable must be in (0, 1) on the "
                f"probability scale (this range's scale). Got {threshold!r} instead."
            )
        above = self.reference > t
        return np.where(above, self.lower_attained <= t, self.upper_attained > t)

    def plot(self, *, ax: Any = None, threshold: float | None = None, kind: str = "ranges", **kwargs: Any):
        """``kind="ranges"``: rows sorted by reference prediction with their ranges (flips coloured when
        ``threshold`` is given); ``kind="widths"``: histogram of range widths."""
        from ...plotting import PredictionRangeDisplay

        return PredictionRangeDisplay(self, threshold).plot(ax=ax, kind=kind, **kwargs)


@dataclass(frozen=True, repr=False)
class CoefRange(FunctionalRange):
    """Per-coefficient range over the set, in the user's units (intercept first when fitted)."""

    @property
    def sign_stable(self) -> np.ndarray:
        """Coefficients whose sign no member can flip (the whole range on one side of 0)."""
        return (self.lower > 0) | (self.upper < 0)

    def to_frame(self) -> pd.DataFrame:
        df = super().to_frame()
        df["sign_stable"] = self.sign_stable
        return df.rename(columns={"name": "coefficient"})
