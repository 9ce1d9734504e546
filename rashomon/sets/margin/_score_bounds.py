"""Certified score ranges of every row over a classifier set at once (the ellipsoid of :class:`._bounds.ScoreRanges`).

Outer bounds, wider than the exact per-row ranges of :class:`._ranges.MarginFunctionalRange` (about 25% on the
test sets) but computed for all rows in one pass; the fairness queries use them for rows not solved exactly.
"""

from __future__ import annotations

import numpy as np

from ._bounds import ScoreRanges, intercept_interval

__all__ = ["row_score_bounds"]


def row_score_bounds(ms, X, eps: float):
    """``(lower, upper)`` certified bounds on the score of each row of X over ``{θ ∈ K : e_orig(θ) <= eps}``."""
    lo, hi = intercept_interval(ms.D, ms.y, ms.o, ms.B, ms.r, ms.loss, eps)
    bl = ms.loss.smoothed(0.05)  # as the MCR surrogates: the hinge's minorant pays its smoothing offset
    sr = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, eps, ms.theta_min)
    D = ms.par.design(np.asarray(X, dtype=float)) if X is not None else ms.D
    # margins y·s of the fitting rows are bounded through the ellipsoid and the ball; for any rows, the same sets
    s_c = D @ sr.mid
    h = np.sqrt(ms.r * np.maximum(np.einsum("ij,jk,ik->i", D, sr.Pball, D), 0.0)) + np.abs(D) @ sr.fw
    lo_s, hi_s = s_c - h, s_c + h
    if sr.ellipsoid is not None:
        centre, P, delta = sr.ellipsoid
        s = D @ centre
        hw = np.sqrt(delta * np.maximum(np.einsum("ij,jk,ik->i", D, P, D), 0.0))
        lo_s, hi_s = np.maximum(lo_s, s - hw), np.minimum(hi_s, s + hw)
    return lo_s, hi_s
