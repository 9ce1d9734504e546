"""The least disparate good model, its frontier over ε and a benchmark's place (engine of ``least_disparate``).

Distance from parity: ``|d|`` for a difference (for more than two groups, fairlearn's ``max - min``) and ``1 -
min/max`` for a ratio. The certificate is the certified bound of the between-groups row of the disparity range:
no member of the set is closer to parity. For the exact metrics with two groups it is attained: when the range
contains parity, a member on the segment between the two end members has zero disparity (the set is convex and
the disparity continuous along the segment), and among those the least-loss one is bracketed by bisection over ε.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...utils.validation import RashomonInputError
from ._disparity import between_value, range_rows
from ._fair_results import DisparityFrontier, DisparityRange, LeastDisparate

__all__ = ["make_range", "least_disparate"]

_METHODS = {
    "linear": "exact: linear functional of θ (functional-range engine)",
    "quadratic": "exact: γ-search on the indefinite quadratic L_g - L_h",
    "rowwise": "certified outer bounds (per-row score ranges; on classifier sets a joint convex relaxation over the "
    "set); attained inner values from members",
}


def make_range(rs, spec, kind, eps, tol, func, ranger=None):
    rows, ranger = range_rows(rs, spec, kind, eps, tol, func, ranger)
    gv = spec.group_values(rs.reference_theta_)[0]
    n = (spec.W > 0).sum(axis=1)
    group_values = pd.DataFrame({"group": spec.labels, "reference_model": gv, "n_rows": n}).set_index("group")
    res = DisparityRange(
        rows["names"],
        rows["lower"],
        rows["upper"],
        rows["lower_attained"],
        rows["upper_attained"],
        rows["exact"],
        rows["reference"],
        rows["lower_models"],
        rows["upper_models"],
        spec.metric,
        kind,
        spec.scale,
        _METHODS[spec.structure],
        spec.labels,
        spec.labels[spec.ref],
        group_values,
        spec.threshold,
        spec.positive,
        float(eps),
        rs.parametrization_,
        spec,
    )
    return res, ranger


def _distance(res: DisparityRange):
    """(certified lower bound on the distance from parity, attained distance, member θ) from the between row."""
    if res.kind == "difference":
        return float(res.lower[-1]), float(res.lower_attained[-1]), res.lower_models[-1]
    return 1.0 - float(res.upper[-1]), 1.0 - float(res.upper_attained[-1]), res.upper_models[-1]


def _loss(rs, th):
    if rs.loss_ == "squared_error":
        return float(rs.e_orig_form_(th))
    return float(rs._margin.orig.e_orig(th, rs._margin.loss))


def _reliance(rs, features, thetas, func):
    if not features:
        return pd.DataFrame(columns=["features", "least_disparate", "reference"])
    rows = []
    for f in features:
        g = rs._group(f, func)
        name = ", ".join(rs._columns[i] if rs._columns else f"x{i}" for i in g)
        if rs.loss_ == "squared_error":
            prob = rs.problem(list(g), func=func)
            mr = [prob.e_switch(t) / prob.e_orig(t) for t in thetas]
        else:
            from ..margin import MarginTerms

            ms = rs._margin
            T = MarginTerms(ms.D, ms.y, np.asarray(g, dtype=int) + ms.o)
            mr = [T.e_switch(t, ms.loss) / T.e_orig(t, ms.loss) for t in thetas]
        rows.append({"features": name, "least_disparate": mr[0], "reference": mr[1]})
    return pd.DataFrame(rows)


def _benchmark(rs, spec, kind, res: DisparityRange, benchmark, func):
    """The benchmark's disparity (row 0 for two groups, else the between-groups row) and its place in the range."""
    from scipy.special import logit

    n = rs.X_.shape[0]
    scores = None
    if hasattr(benchmark, "predict") or hasattr(benchmark, "predict_proba") or hasattr(benchmark, "decision_function"):
        X = rs.X_ if not rs._columns else pd.DataFrame(rs.X_, columns=list(rs._columns))
        if spec.scale == "probability" and hasattr(benchmark, "predict_proba"):
            pred = np.asarray(benchmark.predict_proba(X))[:, -1]
        elif spec.scale == "score" and hasattr(benchmark, "decision_function"):
            pred = np.asarray(benchmark.decision_function(X))
        else:
            pred = np.asarray(benchmark.predict(X), dtype=float)
    else:
        pred = np.asarray(getattr(benchmark, "to_numpy", lambda: benchmark)(), dtype=float)
        if pred.ndim != 1 or len(pred) != n or not np.all(np.isfinite(pred)):
            raise RashomonInputError(
                f"The 'benchmark' parameter of {func} must be a fitted model (predict, "
                f"predict_proba or decision_function) or a finite 1-d array of {n} predictions on "
                f"the set's rows. Got {type(benchmark).__name__} of shape {np.shape(pred)} instead."
            )
    pred = pred.astype(float)
    if spec.metric == "group_loss" and spec.margin:
        scores = logit(np.clip(pred, 1e-15, 1 - 1e-15)) if spec.scale == "probability" else pred
    gv = spec.group_values_pred(pred, scores)
    ref = spec.ref
    signed = [gv[g] - gv[ref] if kind == "difference" else gv[g] / gv[ref] for g in range(len(gv)) if g != ref]
    i = 0 if len(gv) == 2 else len(res.names) - 1
    val = float(signed[0]) if len(gv) == 2 else float(between_value(gv[None, :], kind)[0])
    lo, hi = float(res.lower[i]), float(res.upper[i])
    pos = "below" if val < lo else ("above" if val > hi else "inside")
    dist = abs(val) if kind == "difference" else 1 - min(val, 1 / val) if val > 0 else math.inf
    far = res.upper[-1] if kind == "difference" else 1 - res.lower[-1]
    out = {
        "disparity": val,
        "row": res.names[i],
        "lower": lo,
        "upper": hi,
        "position": pos,
        "fraction_of_range": (val - lo) / (hi - lo) if hi > lo else math.nan,
        "more_disparate_than_every_member": bool(dist > far),
    }
    w = spec.W.sum(axis=0)
    w = w / w.sum()
    if not spec.margin:
        out["loss"] = float(w @ (spec.y - pred) ** 2)
    elif spec.scale == "probability":
        p = np.clip(pred, 1e-15, 1 - 1e-15)
        out["loss"] = float(-np.mean(spec.ybin * np.log(p) + (1 - spec.ybin) * np.log1p(-p)))
    return out


def _parity_loss(rs, spec, kind, tol, func, ranger, at_eps):
    """Bracket the least loss of a member at parity: ``(lower, upper, member θ)`` by bisection over ε."""
    lo_e, hi_e, th = rs.e_min_, rs.epsilon_abs_, at_eps
    for _ in range(40):
        if hi_e - lo_e <= 1e-6 * max(hi_e - rs.e_min_, 1e-300):
            break
        mid = 0.5 * (lo_e + hi_e)
        r, ranger = make_range(rs, spec, kind, mid, tol, func, ranger)
        cert, att, t = _distance(r)
        if att <= 1e-12:
            hi_e, th = mid, t
        elif cert > 0:
            lo_e = mid
        else:
            break
    return lo_e, hi_e, th


def target_outcome(cert: float, att: float, target: float | None) -> str | None:
    """The answer to "is there a member with distance from parity <= target?": ``"member"`` (the returned one),
    ``"none"`` (certified: no member is that close) or ``"undetermined"`` (between the bound and the member)."""
    if target is None:
        return None
    if att <= target:
        return "member"
    return "none" if cert > target else "undetermined"


def least_disparate(rs, spec, kind, features, benchmark, epsilons, frontier, tol, func, target=None) -> LeastDisparate:
    res, ranger = make_range(rs, spec, kind, rs.epsilon_abs_, tol, func)
    cert, att, th = _distance(res)
    exact = bool(res.exact[-1])
    attained = att - cert <= 1e-6 * max(1.0, cert)  # the member is the least to 1e-6 (certified), any metric
    z_lo = z_hi = math.nan
    if exact and len(spec.labels) == 2 and att <= 1e-12:  # parity reachable: the least-loss member at parity
        z_lo, z_hi, th = _parity_loss(rs, spec, kind, tol, func, ranger, th)
    i = 0 if len(spec.labels) == 2 else len(res.names) - 1
    disp = float(res.evaluate(th)[0, i])
    bench = None if benchmark is None else _benchmark(rs, spec, kind, res, benchmark, func)
    fr = None
    if frontier:
        if epsilons is None:
            grid = rs.e_min_ + (rs.epsilon_abs_ - rs.e_min_) * np.array(
                [0.02, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]
            )
        else:
            from .._epsilon import epsilon_threshold

            e_in = np.atleast_1d(np.asarray(epsilons, dtype=float))
            grid = np.array([epsilon_threshold(float(e), rs.epsilon_kind, rs.e_ref_, rs.e_min_, func) for e in e_in])
        grid = np.unique(np.append(grid, rs.epsilon_abs_))
        lows, atts = [], []
        for e in grid:
            if e == rs.epsilon_abs_:
                c, a = cert, att
            else:
                r, ranger = make_range(rs, spec, kind, float(e), tol, func, ranger)
                c, a, _ = _distance(r)
            lows.append(c)
            atts.append(a)
        bdist = (
            None
            if bench is None
            else (
                abs(bench["disparity"]) if kind == "difference" else 1 - min(bench["disparity"], 1 / bench["disparity"])
            )
        )
        fr = DisparityFrontier(
            grid,
            np.array(lows),
            np.array(atts),
            rs.e_ref_,
            rs.e_min_,
            rs.epsilon_abs_,
            float(_distance_of(res.reference[-1], kind)),
            res.names[-1],
            kind,
            z_lo,
            z_hi,
            bdist,
        )
    rel = _reliance(rs, features, [th, rs.reference_theta_], func)
    return LeastDisparate(
        disp,
        cert,
        attained,
        rs.parametrization_.estimator(th),
        np.asarray(th),
        _loss(rs, th),
        rs.e_ref_,
        rs.epsilon_abs_,
        float(res.reference[i]),
        res.names[i],
        rel,
        res,
        fr,
        bench,
        None if target is None else float(target),
        target_outcome(cert, att, target),
    )


def _distance_of(v, kind):
    return abs(v) if kind == "difference" else 1.0 - v
