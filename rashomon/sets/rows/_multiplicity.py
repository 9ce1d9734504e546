"""Predictive multiplicity of thresholded decisions over a Rashomon set (Marx, Calmon & Ustun 2020).

For decisions ``f(x) > t``:

* **ambiguity**: the share of rows whose decision some member reverses against the
  reference. Exact from the per-row prediction ranges (each flip witnessed by a member).
* **discrepancy**: the largest share of decisions that *one* member reverses. Its exact
  value is a combinatorial maximum; reported as a certified interval: the lower end is
  attained by a returned member (the best of the rows' attaining members and two
  aggregate directions), the upper end is the share of rows whose certified bound crosses
  the threshold (no member can flip another row): the ambiguity, unless a row's certified
  gap straddles the threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...utils import DisplayMixin
from ...utils.validation import RashomonInputError

__all__ = ["Multiplicity", "multiplicity"]


@dataclass(frozen=True, repr=False)
class Multiplicity(DisplayMixin):
    """Ambiguity, discrepancy and per-row flips of thresholded decisions over the set.

    Attributes
    ----------
    threshold : float
        On ``scale``.
    ambiguity : float
        Share of rows whose decision some member flips (exact).
    discrepancy_lower, discrepancy_upper : float
        Certified interval for the largest share one member flips: ``discrepancy_lower``
        is attained by ``discrepancy_model``; ``discrepancy_upper`` is the share of rows whose certified
        range crosses the threshold (the ambiguity unless a row's gap straddles it).
    flips : ndarray of bool, shape (n_rows,)
        Rows some member flips.
    reference_decision : ndarray of bool
        ``reference prediction > threshold``.
    discrepancy_model : ClassMember
        A member of the set flipping ``discrepancy_lower`` of the decisions.
    ranges : PredictionRange
        Per-row ranges on ``scale`` (exact ends with their attaining members).
    scale : {"probability", "score", "prediction"}
        The scale of the threshold and the ranges: ``"probability"`` for the logistic class (default),
        ``"score"`` (the decision function; the hinge class, or the logistic class on request) or
        ``"prediction"`` (a regression class).
    settled : dict or None
        Classifier classes: how many rows each stage decided; the counts add up to the rows. ``"members"``: a
        member already found flips the row; ``"outer bounds"``: a certified bound shows that no member can;
        ``"line search"`` (logistic, in memory): a member on the row's own ray flips it, or the tangent half-space
        of the loss there shows that no member can; ``"by solved rows"``: the members and half-spaces of rows solved
        before it decide; ``"inner ellipsoids"`` (logistic, in memory): a member of an ellipsoid
        about a point evaluated for another row flips it; ``"solved"``: the row's flip side was solved, to its tolerance or until its flip was
        decided; ``"open"`` (not a stage: of the solved rows) those whose certified gap still straddles the
        threshold after the per-row search, decided like :meth:`PredictionRange.flippable` by the member found. The
        ``ranges`` of rows not solved exactly are certified but not tight (their gap is shown); every flip is
        decided as by the exact ranges.
    """

    threshold: float
    ambiguity: float
    discrepancy_lower: float
    discrepancy_upper: float
    flips: np.ndarray = field(repr=False)
    reference_decision: np.ndarray = field(repr=False)
    discrepancy_model: Any = field(repr=False, default=None)
    ranges: Any = field(repr=False, default=None)
    n_candidates: int = field(repr=False, default=0)
    scale: str = "prediction"
    settled: dict | None = field(repr=False, default=None)

    def to_frame(self) -> pd.DataFrame:
        """One row per data row: reference prediction, range, decision and whether some member flips it."""
        r = self.ranges
        return pd.DataFrame(
            {
                "reference": r.reference,
                "lower": r.lower,
                "upper": r.upper,
                "reference_decision": self.reference_decision,
                "flippable": self.flips,
                "scale": self.scale,
            }
        )

    def _display_(self) -> tuple[dict, list]:
        r = self.ranges
        fields = {
            "threshold": self.threshold,
            "scale": getattr(r, "scale", None),
            "ambiguity": self.ambiguity,
            "discrepancy": (self.discrepancy_lower, self.discrepancy_upper),
            "n_rows": len(self.flips),
            "n_flippable": int(np.sum(self.flips)),
        }
        fields = {k: v for k, v in fields.items() if v is not None}
        tables = (
            []
            if r is None
            else [("width of the prediction ranges, quantiles over the rows", self._quantiles({"width": r.width}))]
        )
        return fields, tables

    def summary(self) -> pd.Series:
        return pd.Series(
            {
                "threshold": self.threshold,
                "scale": self.scale,
                "ambiguity": self.ambiguity,
                "discrepancy_lower": self.discrepancy_lower,
                "discrepancy_upper": self.discrepancy_upper,
                "n_rows": len(self.flips),
                "n_flippable": int(self.flips.sum()),
            }
        )

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """The viable prediction range figure with the threshold and the flippable rows coloured."""
        return self.ranges.plot(ax=ax, threshold=self.threshold, **kwargs)


def _check_binary_target(rs, X, func) -> None:
    """A regression set's decisions have no default threshold unless the target is 0/1 (then 0.5)."""
    rs._rows(X, func)  # rows first: a set fitted on Dask input without rows says so
    if not isinstance(rs.y_, np.ndarray):  # a set fitted on Dask input keeps no target values
        seen = "the set was fitted on Dask input, which keeps no target values"
    else:
        w = rs.sample_weight_
        vals = np.unique(rs.y_ if w is None else rs.y_[np.asarray(w) > 0])
        if set(vals.tolist()) <= {0.0, 1.0}:
            return
        seen = f"y takes {len(vals)} distinct values from {vals[0]:.4g} to {vals[-1]:.4g}"
    raise RashomonInputError(
        f"The 'threshold' parameter of {func} must be given for a regression set unless its target is 0/1 "
        f"(decisions are 'prediction > threshold'; {seen}). Got None instead."
    )


def multiplicity(rs, X, threshold, max_candidates, tol, func, scale=None, progress=False) -> Multiplicity:
    """See :meth:`~rashomon.RashomonSet.multiplicity`. A classifier's decisions are thresholded scores: a probability
    threshold t of the logistic class (its default scale) is the score threshold logit(t), the same decisions."""
    from ..margin import margin_set
    from ._ranges import _score_scale, prediction_range, to_probability

    rs._check_fitted(func.split(".")[-1])
    scale = _score_scale(rs, scale, func)
    if threshold is None and scale == "prediction":
        _check_binary_target(rs, X, func)
    t_user = (0.0 if scale == "score" else 0.5) if threshold is None else float(threshold)
    t = t_user
    if scale == "probability":
        if not 0.0 < t_user < 1.0:
            raise RashomonInputError(
                f"The 'threshold' parameter of {func} must be in (0, 1) on the probability "
                f"scale. Got {threshold!r} instead."
            )
        t = math.log(t_user / (1.0 - t_user))
    settled: dict | None = None
    if margin_set(rs) is not None and not rs._degenerate:  # classifiers: screened, exact solves only where needed
        rng_res, P, p0, settled = screened_ranges(rs, X, t, tol, func, progress)
    else:
        rng_res, P, p0 = prediction_range(
            rs,
            X,
            tol=tol,
            return_models=True,
            func=func,
            return_map=True,
            scale=None if scale == "prediction" else "score",
            progress=progress,
        )
    above = rng_res.reference > t
    flips = rng_res.flippable(t)
    n = len(flips)
    ambiguity = float(flips.mean()) if n else math.nan
    # rows whose certified bound (not only the attained end) crosses t: no member flips any other row; equal to
    # the witnessed flips unless a row's gap straddles t
    possible = np.where(above, rng_res.lower <= t, rng_res.upper > t)
    disc_upper = float(possible.mean()) if n else math.nan
    # candidates: the member attaining the flipping end of each flippable row (evenly spaced
    # subset when there are many), and the members pushing all decisions toward the other side
    idx = np.where(flips)[0]
    if idx.size > max_candidates:
        idx = idx[np.linspace(0, idx.size - 1, max_candidates).round().astype(int)]
    thetas = [rng_res.lower_models[i] if above[i] else rng_res.upper_models[i] for i in idx]
    if n and not rs._degenerate:
        from ._ranges import engine_of

        eng = engine_of(rs, func)
        sgn = np.where(above, 1.0, -1.0)  # minimising sgn·f pushes every decision toward the other side
        for rows in (flips, np.ones(n, dtype=bool)):
            if rows.any():
                thetas.append(eng.minimize((sgn[rows] @ P[rows])[None, :] / rows.sum(), tol=tol)[1][0])
    best, best_theta = 0.0, rs.reference_theta_
    for s in range(0, len(thetas), 64):
        Th = np.array(thetas[s : s + 64])
        shares = np.mean((P @ Th.T + p0[:, None] > t) != above[:, None], axis=0)
        j = int(np.argmax(shares))
        if shares[j] > best:
            best, best_theta = float(shares[j]), Th[j]
    if scale == "probability":
        rng_res = to_probability(rng_res)
    return Multiplicity(
        t_user,
        ambiguity,
        best,
        disc_upper,
        flips,
        above,
        rs.parametrization_.estimator(best_theta),
        rng_res,
        len(thetas),
        scale,
        settled,
    )


def screened_ranges(rs, X, t, tol, func, progress):
    """``(ranges, P, p0, settled)`` for a classifier set on the score scale: each row's flip side (the end toward
    the threshold t) screened and solved exactly only where undecided (:mod:`.margin._screen`); the other end
    certified by the outer bounds and attained by the best member found."""
    from ..margin import screen_of
    from ._range_results import PredictionRange
    from ._ranges import _check_consistent, _phase, engine_of

    Xa = rs._rows(X, func)
    par = rs.parametrization_
    P, p0 = par.prediction_map(Xa)
    m = len(P)
    ref = P @ rs.reference_theta_ + p0
    above = ref > t
    sgn = np.where(above, 1.0, -1.0)
    F = sgn[:, None] * P
    tau = sgn * (t - p0)
    eng = engine_of(rs, func)
    with _phase(rs, progress, f"{func}: {m} rows", m) as tick:
        from ...utils import single_blas_thread

        # (a set fitted on Dask input: its engine's own screen, by passes over the rows)
        scr = eng.screen() if hasattr(eng, "screen") else single_blas_thread(screen_of, eng)
        sf = single_blas_thread(lambda: scr.flips(F, tau, ~above, tol, tick=lambda k=1: tick(2 * k)))
    up = ~above
    lo_b = np.where(above, sf.bound, sf.other_bound) + p0
    lo_v = np.where(above, sf.value, sf.other_value) + p0
    hi_b = p0 - np.where(above, sf.other_bound, sf.bound)
    hi_v = p0 - np.where(above, sf.other_value, sf.value)
    lo_m = np.where(above[:, None], sf.theta, sf.other_theta)
    hi_m = np.where(up[:, None], sf.theta, sf.other_theta)
    _check_consistent(lo_b, hi_b, lo_v, hi_v, ref, rs, func)
    res = PredictionRange(
        [str(i) for i in range(m)], lo_b, hi_b, lo_v, hi_v, ref, lo_m, hi_m, rs.epsilon_abs_, tol, par, scale="score"
    )
    return res, P, p0, sf.settled
