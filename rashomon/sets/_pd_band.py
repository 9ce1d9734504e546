"""The Rashomon PD band: the lowest and highest partial dependence over the set, certified."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..utils import feature_grid
from ..utils.validation import RashomonInputError, check_float, check_positive_int

__all__ = ["RashomonPDBand", "pd_band"]


@dataclass(frozen=True)
class RashomonPDBand:
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
    """

    grid: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    reference: np.ndarray
    lower_models: list = field(repr=False)
    upper_models: list = field(repr=False)
    duality_gap: np.ndarray = field(repr=False, default=None)
    epsilon_abs: float = math.nan
    feature: str = ""
    pd_vectors: np.ndarray = field(repr=False, default=None)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"grid": self.grid, "lower": self.lower, "reference": self.reference, "upper": self.upper})

    def plot(self, *, ax: Any = None, pd_result: Any = None, **kwargs: Any):
        from ..plotting import RashomonPDBandDisplay

        return RashomonPDBandDisplay(self, pd_result).plot(ax=ax, **kwargs)


def _linear_extreme(seq_factory, Q0, c0, k0, a, eps, B, r, sign, tol=1e-10, max_iter=200):
    """min sign·a'θ  s.t.  θ'Q0θ - 2c0'θ + k0 <= eps, θ'Bθ <= r, by the dual on the e_orig constraint.

    For λ > 0 the Lagrangian ``sign·a'θ + λ(e_orig(θ) - eps)`` is minimised over the
    ball by the exact QCQP engine (A = λQ0, b = λc0 - sign·a/2); its value q(λ) is a
    lower bound on the optimum, concave in λ, with slope e_orig(θ_λ) - eps.
    Bisection on the slope; the minimiser at the crossing is feasible and attains
    the bound up to the reported gap.
    """
    from ..solvers import SolverStatus

    # A(λ) = λ Q0 ; b(λ) = λ c0 - sign a / 2: a sequence in λ with A0 = 0, b0 = -sign a / 2
    seq = seq_factory(np.zeros_like(Q0), -0.5 * sign * a, Q0, c0)

    def at(lam):
        res = seq.solve(lam, check=False)
        if res.status is SolverStatus.UNBOUNDED or res.x is None:
            return None, -math.inf, math.inf
        th = res.x
        e = float(th @ Q0 @ th - 2 * c0 @ th + k0)
        q = float(sign * a @ th + lam * (e - eps)) if res.status is SolverStatus.OPTIMAL else -math.inf
        return th, q, e

    best_q, best_th, best_val = -math.inf, None, math.inf
    lo, hi = 0.0, None
    th, q, e = at(0.0)
    if th is not None and e <= eps:
        return th, q, float(sign * a @ th) - q
    lam = 1.0
    for _ in range(200):
        th, q, e = at(lam)
        best_q = max(best_q, q)
        if th is not None and e <= eps:
            hi = lam
            if sign * a @ th < best_val:
                best_val, best_th = float(sign * a @ th), th
            break
        lo, lam = lam, lam * 2
    if hi is None:
        raise RashomonInputError("rashomon_pd_band: the Rashomon set could not be reached (epsilon too small?).")
    for _ in range(max_iter):
        if best_th is not None and best_val - best_q <= tol * max(1.0, abs(best_val)):
            break
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        th, q, e = at(mid)
        best_q = max(best_q, q)
        if th is not None and e <= eps:
            hi = mid
            if sign * a @ th < best_val:
                best_val, best_th = float(sign * a @ th), th
        else:
            lo = mid
    return best_th, best_q, best_val - best_q


def pd_band(rs, feature, grid, grid_resolution, percentiles, tol) -> "RashomonPDBand":
    """PD(v) is linear in θ (``PD(v) = a(v)'θ + a₀(v)``), so each end at each grid value is a
    linear objective under two quadratic constraints (``e_orig <= ε_abs`` and the class's norm),
    a convex problem solved exactly: the e_orig constraint is dualised and each Lagrangian is
    minimised over the norm ball by the exact QCQP engine; the dual value certifies the bound.
    At ε_abs = e_min the set is the minimiser and both ends are its PD.
    """
    from ..solvers import QCQPSequence

    func = "RashomonSet.pd_band"
    tol = check_float(tol, "tol", func, low=0.0)
    grid_resolution = check_positive_int(grid_resolution, "grid_resolution", func, minimum=2)
    group = rs._group(feature, func)
    if len(group) != 1:
        raise RashomonInputError(f"The 'feature' parameter of {func} must be a single feature. Got {feature!r} instead.")
    j = group[0]
    Xa, par, eo = rs.X_, rs.parametrization_, rs.e_orig_form_
    if grid is None:
        g = feature_grid(Xa[:, j], grid_resolution, percentiles, False)
    else:
        g = np.asarray(grid, dtype=float).ravel()
        if g.size == 0 or not np.all(np.isfinite(g)):
            raise RashomonInputError(f"The 'grid' parameter of {func} must be a non-empty array of finite floats. "
                                     f"Got {grid!r} instead.")
    eps = rs.epsilon_abs_
    # PD(v) = a(v)'θ + a0(v): the class's affine prediction map, averaged over the data with x_j = v
    A_rows, a0 = [], []
    for v in g:
        Z = Xa.copy()
        Z[:, j] = v
        P, p0 = par.prediction_map(Z)
        A_rows.append(P.mean(axis=0))
        a0.append(float(p0.mean()))
    A_rows, a0 = np.array(A_rows), np.array(a0)
    reference = A_rows @ rs.reference_theta_ + a0
    name = rs._columns[j] if rs._columns else f"x{j}"
    if rs._degenerate:
        th = rs.theta_min_
        vals = A_rows @ th + a0
        return RashomonPDBand(g, vals, vals.copy(), reference, [th] * len(g), [th] * len(g), np.zeros((2, len(g))),
                              float(eps), name, np.column_stack([A_rows, a0]))

    def factory(A0, b0, A1, b1):
        return QCQPSequence(A0, b0, par.B, par.r, A1=A1, b1=b1)

    lower, upper, lm, um, gaps = [], [], [], [], []
    for a, base in zip(A_rows, a0):
        th_lo, q_lo, gap_lo = _linear_extreme(factory, eo.Q, eo.c, eo.k, a, eps, par.B, par.r, +1.0, tol)
        th_hi, q_hi, gap_hi = _linear_extreme(factory, eo.Q, eo.c, eo.k, a, eps, par.B, par.r, -1.0, tol)
        lower.append(base + q_lo)  # certified: every member has a'θ >= q_lo
        upper.append(base - q_hi)
        lm.append(th_lo)
        um.append(th_hi)
        gaps.append((max(gap_lo, 0.0), max(gap_hi, 0.0)))
    lower, upper = np.array(lower), np.array(upper)
    slack = 1e-9 * np.maximum(1.0, np.abs(reference))
    inside = rs.e_ref_ <= eps * (1 + 1e-12)
    if inside and (np.any(lower > reference + slack) or np.any(upper < reference - slack)):
        raise RashomonInputError(f"{func}: consistency check failed (the reference's PD lies outside the computed band "
                                 "by more than 1e-9 relative); the bounds are not certified. Please report this data.")
    return RashomonPDBand(g, lower, upper, reference, lm, um, np.array(gaps).T, float(eps), name,
                          np.column_stack([A_rows, a0]))
