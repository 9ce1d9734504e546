"""Differences of reliances over a Rashomon set and the certified order of features (Laberge et al. 2023).

For the quadratic classes, ``MR(a) - MR(b) = (e_switch_a - e_switch_b) / e_orig`` (ratio) or
``e_switch_a - e_switch_b`` (difference): the same γ-search as MCR with the indefinite numerator
``N = e_switch_a - e_switch_b`` in place of e_switch. Only the *lower* end is searched, for N and for -N
(``max N/D = -min (-N)/D``): its Lagrangian bound ``N/D >= h*(γ)/ε - γ`` (ratio, ``h* >= 0``) or
``N >= h*(γ) - (1+γ)ε`` (difference) holds for any sign of the result, and the search drives a member to it
(exact, as MCR is). The upper end of MCR's search (γ < 0) assumes a non-negative result, which a difference
need not have.

For the classifier classes the ends come from the two MCR intervals, ``[MCR-(a) - MCR+(b), MCR+(a) - MCR-(b)]``:
sound (every member lies in both intervals) but an outer bound; the members of both searches and the
reference give attained inner values, and the gap is reported. The MCR of each group is computed once per ε and
shared by every pair and every critical-ε bracket (:mod:`._order_margin`): certified below ``critical_lower``;
refuted by an attained member at ``critical_upper`` only when ``critical_refuted`` (else inf: no member breaking
it was found, the outer bounds' gap).

The order: ``a ≻ b`` when the certified lower end of ``MR(a) - MR(b)`` is > 0. The lower end can only fall as
ε grows (the set grows), so each relation holds up to a critical ε, bracketed by bisection over ε:
``critical_lower`` (certified: the lower end is still > 0) and ``critical_upper`` (a member of the set at that
ε has ``MR(a) <= MR(b)``). The searches keep their steps, and every certified step bounds at every ε.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...model_classes.quadratics import MCRProblem, Quadratic
from ...utils.validation import RashomonInputError
from ._disparity import best_inside
from ._order_results import RelianceDifference, RelianceOrder

__all__ = ["reliance_difference", "reliance_order"]


def _label(rs, idx):
    cols = rs._columns
    return tuple(cols[i] if cols else f"x{i}" for i in idx)


class _DiffSearch:
    """The lower end of ``sign·(MR(a) - MR(b))`` over the set at any ε (quadratic classes)."""

    def __init__(self, rs, pa, pb, kind, sign, tol, max_iter):
        from ..quadratic import GammaSearch

        D = rs.e_orig_form_
        ea, eb = pa.e_switch, pb.e_switch
        N = Quadratic(sign * (ea.Q - eb.Q), sign * (ea.c - eb.c), sign * (ea.k - eb.k))
        es = N if kind == "ratio" else Quadratic(N.Q + D.Q, N.c + D.c, N.k + D.k)
        self.rs, self.kind, self.N = rs, kind, N
        self.srch = GammaSearch(
            MCRProblem(D, es, rs.parametrization_, ("difference",)), kind, tol, max_iter, theta_min=rs.theta_min_
        )
        self.k = max(abs(float(D.k)), abs(float(es.k)), abs(float(rs.e_min_)))

    def value(self, th):
        D = self.rs.e_orig_form_(th)
        n = self.N(th)
        return n / D if self.kind == "ratio" else n

    def lower(self, eps, recertify=True):
        """``(certified bound, member θ, its value)`` at ε (``recertify=False``: the steps' reduced certificates only,
        as the search itself uses; the bisection over ε re-certifies its final bracket)."""
        rs, s = self.rs, self.srch
        if rs.loss_ == "squared_error" and rs._at_e_min(eps):
            v = self.value(rs.theta_min_)
            return v, rs.theta_min_, v
        g = s.best_gamma("lower", eps) if s.steps else math.nan
        s.search("lower", eps, start=g if np.isfinite(g) else None)
        if recertify:
            s.recertify("lower", eps)
        bound = s.best_bound("lower", eps)
        th, val = best_inside(rs, s, eps, self.value)
        res = 1e3 * np.finfo(float).eps * self.k  # the rounding of losses of size k, as in the MCR result
        bound -= res * (1 + abs(bound)) / max(rs.e_min_, 1e-300) if self.kind == "ratio" else 2 * res
        if th is None or not np.isfinite(bound):
            raise RashomonInputError(
                "reliance_difference: the γ-search found no certified bound; please report this data."
            )
        return float(min(bound, val)), th, float(val)


def _quadratic_difference(rs, ga, gb, kind, tol, max_iter, func):
    pa, pb = rs.problem(list(ga), func=func), rs.problem(list(gb), func=func)
    searches = [_DiffSearch(rs, pa, pb, kind, s, tol, max_iter) for s in (1.0, -1.0)]
    eps = rs.epsilon_abs_
    lo, th_lo, v_lo = searches[0].lower(eps)
    nhi, th_hi, nv_hi = searches[1].lower(eps)
    ref = searches[0].value(rs.reference_theta_)
    exact = (v_lo - lo <= tol * max(1.0, abs(lo))) and (nv_hi - nhi <= tol * max(1.0, abs(nhi)))
    res = RelianceDifference(
        _label(rs, ga),
        _label(rs, gb),
        kind,
        lo,
        -nhi,
        v_lo,
        -nv_hi,
        bool(exact),
        th_lo,
        th_hi,
        float(ref),
        eps,
        "exact (γ-search with the numerator e_switch(a) - e_switch(b))",
        rs.parametrization_,
    )
    return res, searches


def reliance_difference(rs, a, b, kind, tol, max_iter, func):
    rs._check_fitted(func.split(".")[-1])
    ga, gb = rs._group(a, func), rs._group(b, func)
    if rs.loss_ == "squared_error":
        return _quadratic_difference(rs, ga, gb, kind, tol, max_iter, func)
    if getattr(rs, "_margin", None) is None:
        raise NotImplementedError(
            f"{func} is not implemented for loss={rs.loss_!r} (no certified MCR of both ends "
            "for this class); it supports the squared loss and the logistic / hinge classes."
        )
    from ._order_margin import MarginOrderCache, margin_difference

    return margin_difference(MarginOrderCache(rs, kind, tol, func), ga, gb), None


def _eps_in_kind(rs, e):
    if not np.isfinite(e):
        return e
    return {"relative": e / rs.e_ref_ - 1.0, "additive": e - rs.e_ref_, "absolute": e}[rs.epsilon_kind]


def _critical(rs, srch: _DiffSearch, eps_max, rtol):
    """Bracket the largest ε at which the certified lower end stays > 0: ``(holds_up_to, fails_at, note)``."""
    e0, emin = rs.epsilon_abs_, rs.e_min_
    lo, hi, note = e0, math.inf, ""
    step, prev = e0 - emin, None
    while True:
        e = e0 + step
        if e > eps_max:
            break
        b, _, v = srch.lower(e)
        if v <= 0:
            hi = e
            break
        if b <= 0:
            hi, note = e, "undetermined between the bounds (search gap)"
            break
        lo = e
        if prev is not None and abs(b - prev) <= 1e-12 * max(1.0, abs(b)):  # the set no longer binds
            note = "holds on the whole class (the lower end stops changing with ε)"
            return lo, math.inf, note
        prev, step = b, 2 * step
    if not np.isfinite(hi):
        return lo, math.inf, f"holds up to the largest ε searched ({eps_max:.6g})"
    for _ in range(60):
        if hi - lo <= rtol * max(lo - emin, 1e-300):
            break
        mid = 0.5 * (lo + hi)
        b, _, v = srch.lower(mid, recertify=False)
        if b > 0:
            lo = mid
        elif v <= 0:
            hi = mid
        else:
            note = "undetermined between the bounds (search gap)"
            break
    # the bracket's lower end is reported as certified: its bound passes the full certificate, else step back
    while lo > e0 and not srch.lower(lo)[0] > 0:
        lo, note = e0 + 0.5 * (lo - e0), "stepped back: a bound failed its full certificate"
    return lo, hi, note


def _items(rs, features, func):
    if isinstance(features, dict):
        items = [(str(k), rs._group(v, func)) for k, v in features.items()]
    else:
        if isinstance(features, (str, int, np.integer)) or len(features) < 2:
            raise RashomonInputError(
                f"The 'features' parameter of {func} must list two or more features or groups. "
                f"Got {features!r} instead."
            )
        items = []
        for f in features:
            g = rs._group(f, func)
            items.append(("+".join(_label(rs, g)) if not isinstance(f, (str, int, np.integer)) else str(f), g))
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise RashomonInputError(f"The 'features' parameter of {func} must not repeat a feature. Got {names} instead.")
    return items


def _check_eps_max(rs, eps_max, func):
    if eps_max is None:
        return rs.e_min_ + 4096 * (rs.epsilon_abs_ - rs.e_min_)
    if not eps_max >= rs.epsilon_abs_:
        raise RashomonInputError(
            f"The 'epsilon_max' parameter of {func} must be an absolute ε at least the set's epsilon_abs_ = "
            f"{rs.epsilon_abs_:.6g} (the critical ε is searched from there up). Got {eps_max!r} instead."
        )
    return float(eps_max)


_COLUMNS = [
    "a",
    "b",
    "lower",
    "critical_epsilon_abs_lower",
    "critical_epsilon_abs_upper",
    "critical_epsilon_lower",
    "critical_epsilon_upper",
    "critical_refuted",
    "critical_exact",
    "note",
]


def reliance_order(rs, features, kind, critical, eps_max, rtol, tol, max_iter, func, progress=False) -> RelianceOrder:
    from .._progress import progress_phase

    rs._check_fitted(func.split(".")[-1])
    items = _items(rs, features, func)
    quad = rs.loss_ == "squared_error"
    if not quad and getattr(rs, "_margin", None) is None:
        reliance_difference(rs, items[0][1], items[1][1], kind, tol, max_iter, func)  # its NotImplementedError
    eps_max = _check_eps_max(rs, eps_max, func)
    pairs = [(items[i], items[j]) for i in range(len(items)) for j in range(i + 1, len(items))]
    diffs, found = {}, []
    # classifiers: one MCR per group, shared by every pair; quadratic classes: one exact γ-search per pair
    with progress_phase(bool(progress), "reliance order: the differences", len(pairs) if quad else len(items)) as tick:
        if not quad:
            from ._order_margin import MarginOrderCache, margin_difference

            cache = MarginOrderCache(rs, kind, tol, func, tick)
        for (na, ga), (nb, gb) in pairs:
            if quad:
                rd, searches = _quadratic_difference(rs, ga, gb, kind, tol, max_iter, func)
                tick(1)
            else:
                rd, searches = margin_difference(cache, ga, gb), None
            diffs[(na, nb)] = rd
            for a, b, low, k, x, y in ((na, nb, rd.lower, 0, ga, gb), (nb, na, -rd.upper, 1, gb, ga)):
                if low > 0:
                    found.append((a, b, low, k, x, y, searches))
    rows = []
    desc = f"reliance order: critical ε of {len(found)} relations"
    with progress_phase(bool(progress) and critical and bool(found), desc, len(found)) as tick:
        if not quad:
            cache.tick = lambda k=1: None
        for a, b, low, k, x, y, searches in found:
            c_lo, c_hi, note, refuted = math.nan, math.nan, "critical ε not computed (critical=False)", False
            if critical and quad:
                c_lo, c_hi, note = _critical(rs, searches[k], eps_max, rtol)
                refuted = bool(np.isfinite(c_hi)) and not note.startswith("undetermined")
            elif critical:
                from ._order_margin import margin_critical

                c_lo, c_hi, note, refuted = margin_critical(cache, x, y, eps_max, rtol)
            if critical:
                tick(1)
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "lower": low,
                    "critical_epsilon_abs_lower": c_lo,
                    "critical_epsilon_abs_upper": c_hi,
                    "critical_epsilon_lower": _eps_in_kind(rs, c_lo),
                    "critical_epsilon_upper": _eps_in_kind(rs, c_hi),
                    "critical_refuted": refuted,
                    "critical_exact": bool(quad and refuted),
                    "note": note,
                }
            )
    return RelianceOrder(
        [n for n, _ in items], pd.DataFrame(rows, columns=_COLUMNS), diffs, kind, rs.epsilon_abs_, rs.e_ref_, eps_max
    )
