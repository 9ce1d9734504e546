"""The Rashomon PD band: the lowest and highest partial dependence over the set, certified."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...utils import DisplayMixin, feature_grid
from ...utils.validation import RashomonInputError, check_grid

__all__ = ["RashomonPDBand", "pd_band"]


@dataclass(frozen=True, repr=False)
class RashomonPDBand(DisplayMixin):
    """Range of PD(v) over every model of the class in the Rashomon set, at each grid value.

    Attributes
    ----------
    grid : ndarray of shape (G,)
    lower, upper : ndarray of shape (G,)
        Certified: every model of the class with ``e_orig <= epsilon_abs`` has
        PD(v) in [lower, upper] (up to ``duality_gap``).
    reference : ndarray of shape (G,)
        PD of the class's loss minimiser.
    lower_models, upper_models : list of ndarray
        Parameters θ attaining each end.
    duality_gap : ndarray of shape (2, G)
        Certified gaps (attained value minus the dual bound) of each end.
    epsilon_abs : float
    feature : str
    scale : {"prediction", "score"}
        ``"score"`` for the classifier classes: the PD of the decision function (see ``pd_band``).
    """

    grid: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    reference: np.ndarray
    lower_models: list = field(repr=False)
    upper_models: list = field(repr=False)
    duality_gap: np.ndarray | None = field(repr=False, default=None)
    epsilon_abs: float = math.nan
    feature: str = ""
    pd_vectors: np.ndarray | None = field(repr=False, default=None)
    scale: str = "prediction"

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"grid": self.grid, "lower": self.lower, "reference": self.reference, "upper": self.upper})

    def _display_(self) -> tuple[dict, list]:
        w = self.upper - self.lower
        fields = {
            "feature": self.feature,
            "grid_points": len(self.grid),
            "scale": self.scale,
            "epsilon_abs": self.epsilon_abs,
            "width_median": float(np.median(w)) if w.size else math.nan,
            "width_max": float(np.max(w)) if w.size else math.nan,
        }
        df = self.to_frame()
        if self.duality_gap is not None:
            df["lower_gap"], df["upper_gap"] = self.duality_gap[0], self.duality_gap[1]
            fields["max_gap"] = float(np.max(self.duality_gap)) if np.size(self.duality_gap) else 0.0
        return fields, [("", df)]

    def plot(self, *, ax: Any = None, pd_result: Any = None, **kwargs: Any):
        from ...plotting import RashomonPDBandDisplay

        return RashomonPDBandDisplay(self, pd_result).plot(ax=ax, **kwargs)


def pd_band(rs, feature, grid, grid_resolution, percentiles, tol) -> RashomonPDBand:
    """PD(v) is linear in θ (``PD(v) = a(v)'θ + a₀(v)``), so each end at each grid value is a
    linear objective under two quadratic constraints (``e_orig <= ε_abs`` and the class's norm),
    a convex problem solved exactly with a certified bound and an attaining member
    (:class:`~rashomon.sets.LinearFunctionalRange`, as every range of the set).
    At ε_abs = e_min the set is the minimiser and both ends are its PD.

    Classifier classes (logistic, hinge): the band is of the PD of the *score* (decision function), a
    linear functional of θ, exact in the same way (:mod:`.margin._ranges`). The PD of the probability
    ``mean σ(score)`` is not linear in θ; averaging σ of per-row score ranges would give only a valid outer
    band (not tight) at the cost of one range per row and grid value, so it is not offered.
    """
    from ._range_results import FunctionalRange
    from ._ranges import functional_ranges

    func = "RashomonSet.pd_band"
    group = rs._group(feature, func)
    if len(group) != 1:
        raise RashomonInputError(
            f"The 'feature' parameter of {func} must be a single feature. Got {feature!r} instead."
        )
    j = group[0]
    Xa, par = rs.X_, rs.parametrization_
    if grid is None:
        g = feature_grid(Xa[:, j], grid_resolution, percentiles, False)
    else:
        g = check_grid(grid, 1, func)[0]
    eps = rs.epsilon_abs_
    # PD(v) = a(v)'θ + a0(v): the class's affine prediction map, averaged over the data with x_j = v
    a_list, a0_list = [], []
    for v in g:
        Z = Xa.copy()
        Z[:, j] = v
        P, p0 = par.prediction_map(Z)
        a_list.append(P.mean(axis=0))
        a0_list.append(float(p0.mean()))
    A_rows, a0 = np.array(a_list), np.array(a0_list)
    reference = A_rows @ rs.reference_theta_ + a0
    name = rs._columns[j] if rs._columns else f"x{j}"
    if rs._degenerate:
        th = rs.theta_min_
        vals = A_rows @ th + a0
        return RashomonPDBand(
            g,
            vals,
            vals.copy(),
            reference,
            [th] * len(g),
            [th] * len(g),
            np.zeros((2, len(g))),
            float(eps),
            name,
            np.column_stack([A_rows, a0]),
        )

    # each end at each grid value: a linear objective over the set, solved exactly with its certificate
    rng_: FunctionalRange = functional_ranges(
        rs, A_rows, a0, [f"{v:g}" for v in g], tol=tol, return_models=True, func=func
    )
    scale = "prediction" if rs.loss_ == "squared_error" else "score"
    assert rng_.lower_models is not None and rng_.upper_models is not None  # return_models=True
    return RashomonPDBand(
        g,
        rng_.lower,
        rng_.upper,
        reference,
        list(rng_.lower_models),
        list(rng_.upper_models),
        np.maximum(rng_.gap, 0.0),
        float(eps),
        name,
        np.column_stack([A_rows, a0]),
        scale,
    )
