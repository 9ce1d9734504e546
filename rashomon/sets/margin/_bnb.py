"""Branch and bound over cells of the switched coefficient and the intercept: the search behind the MCR+ bound.

The cells are boxes ``A_i = S ∩ {a_i <= b <= a'_i, ilo_i <= μ <= ihi_i}`` of b = θ_k and the intercept μ whose
union covers S (the b-range cut to a certified interval containing b on S, μ in the certified intercept
interval), so ``max_S MR = max_i max_{A_i} MR <= max_i U(A_i)`` for any valid cell bounds U
(:meth:`._secant.SecantBound.slab_value`, its forms (ii') and (iii'); proofs in that module). A cell's bound
is, for the logistic loss, the larger of its two ends' programmes (form (ii')); for the hinge the programme of
the row-wise maximum over the two ends (form (ii), half the work per cell; at equal work form (ii) is 1-19 points
looser for the logistic loss on Pima, COMPAS and red wine, and for the hinge mixed on the large sets and looser
on small ones, 6.9% -> 12.3% on a 2-parameter set); the least over the multiplier pairs tried (``_PAIRS``; for
the logistic loss two of them); for the ratio, when it exceeds the target and U > 0 makes the conversion through e_lo
cost more than the target, up to ``_DINKELBACH`` more programmes at Λ ← Λ + U/e_orig(maximiser) (every Λ gives a
valid bound; the least is kept). A cell is halved along b or the intercept: both are tried on the first
``_PROBE`` splits, then the axis whose splits have lowered the bound most on average (the better pair of
halves is kept when both are tried); a child keeps the smaller of its own bound and its parent's (both are
valid on it); for the hinge the whole range is evaluated first as the first slabs' parent. The search is best
first: the cell with the largest bound is split until

* the gap ``(bound - best member)/bound`` is at most ``gap_tol`` (the outer bound is then the largest cell
  bound, within the target of the best member), or
* the work budget is spent (units of :meth:`._secant.SecantBound.slab_cost`: a deterministic count of
  operations, so the same inputs give the same bits on any machine), or
* the bound stalls: at the rate it fell over the last ``_WINDOW`` splits (per unit of work), the rest of the
  budget would close neither the gap down to ``gap_tol`` nor half of it (:func:`stalled`; more work no longer
  pays; logistic loss only: the hinge's bound falls in steps, and a 2-parameter hinge set stopped 2.4% above a
  brute-force grid's maximum, against 1% at the full budget), or
* the deadline passes (``time.monotonic()``; only when a time limit was given: the result then depends on the
  machine's speed and load), or ``max_slabs`` cells exist.

Whatever stops the search, the cells cover S (the cells not yet evaluated when the budget ends are merged
into one, which is evaluated), so the bound is always valid; only its tightness depends on the budget.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np

__all__ = ["SearchReport", "slab_search"]

_DINKELBACH = 2  # Λ-updates of a cell's ratio bound when U(inner) > 0
_ENDS = True  # logistic: form (ii'), one programme per end (the hinge, and else: form (ii); see below)
_PROBE = 2  # splits tried along both axes before the record of bound decreases decides
_PAIRS = ((0.5, 0.25), (0.0, 0.25), (0.5, 0.0))  # multiplier pairs (τ₁, τ₂) tried per slab, in this order (hinge)
# the logistic's: (0, 0.25) gave a cell's least bound in 10 of 181 cells on Pima's 8 features, so it is tried late, on
# a cell only once it has the largest bound (before it is split): each cell evaluated costs a third less and the
# budget splits more cells (Pima: 21% less CPU, upper gaps equal or smaller, median 2.01% -> 1.98%)
_PAIRS_LOGISTIC, _PAIRS_LATE = ((0.5, 0.25), (0.5, 0.0)), ((0.0, 0.25),)
# ... where the budget holds at least this many first-programme estimates (Pima 66, red wine 72); below it (breast
# cancer 569 x 30: 40, COMPAS: 35, about 6 cells) every cell tries all three at once: COMPAS, priors_count, lazily
# 4.1% against 3.7%
_LAZY = 50.0
_WINDOW = 3  # splits over which the stall rule measures the bound's rate of decrease
_CLOSE = 0.5  # share of the gap the rest of the budget must be predicted to close for the search to go on
_SETTLE = 0.25  # share of the budget spent before the stall rule applies (early splits often leave the top bound flat)


def stalled(history, work, value, target, inner, budget, window=_WINDOW) -> bool:
    """The stall rule of a best-first search for a bound ``value`` above the best member ``inner``: ``history`` holds
    ``(work, bound)`` before each of its steps. True when the bound's decrease per unit of work over the last
    ``window`` steps, continued over the rest of the ``budget``, would bring it neither down to ``target`` nor
    ``_CLOSE`` of the way to ``inner`` (never with an infinite budget, before ``window`` steps, or before
    ``_SETTLE`` of the budget is spent: a best-first search's top bound is often flat over its first splits, as when
    two cells share it). Work units, not seconds: the same inputs stop at the same step."""
    if len(history) < window or not math.isfinite(budget) or work < _SETTLE * budget:
        return False
    w0, v0 = history[-window]
    rate = (v0 - value) / max(work - w0, 1e-300)
    return rate * max(budget - work, 0.0) < min(value - target, _CLOSE * (value - inner))


def _mean(g):
    return g[0] / max(g[1], 1)


class SearchReport(NamedTuple):
    """Outcome of :func:`slab_search`."""

    bound: float  # certified outer bound on MCR+ (nan: none)
    exhausted: bool  # stopped by the work budget, the deadline or max_slabs before the gap target
    n_slabs: int  # slabs covering the b-range at the end
    work: float  # work spent (units of SecantBound.slab_cost)
    timed_out: bool = False  # the deadline (max_time) stopped it
    stalled: bool = False  # the stall rule stopped it (the budget would not reach gap_tol at the bound's rate)


def _halves(a, b, ilo, ihi, axis):
    """The two halves of a cell along b (axis 0) or the intercept (axis 1)."""
    if axis == 0:
        mid = 0.5 * (a + b)
        return ((a, mid, ilo, ihi), (mid, b, ilo, ihi))
    m0 = np.array([0.5 * (ilo[0] + ihi[0])])
    return ((a, b, ilo, m0), (a, b, m0, ihi))


def slab_search(
    sb,
    kind,
    inner,
    *,
    budget,
    gap_tol=0.01,
    max_slabs=64,
    deadline=None,
    x_start=None,
    n0=None,
    b_limits=(-math.inf, math.inf),
) -> SearchReport:
    """Certified outer bound on MCR+ (kind "ratio" or "difference") over the slabs of ``sb`` (a
    :class:`._secant.SecantBound`) given the best member value ``inner`` (see the module docstring).

    A slab programme starts only when the work done plus its estimate fits ``budget``; the b-range starts as
    ``n0`` slabs (default: 4, 2 or 1, the most the budget covers); when the estimate outgrows the budget the
    slabs left are one slab (every member must lie in a bounded slab), so the budget may be passed by one slab
    programme. ``deadline``: a ``time.monotonic()`` value after which no slab is split (None: none)."""
    nan = SearchReport(math.nan, False, 0, sb.work)
    if sb.too_big:
        return nan
    b_lo, b_hi = sb.b_range()
    b_lo, b_hi = max(b_lo, b_limits[0]), min(b_hi, b_limits[1])
    if not b_lo <= b_hi:
        return nan
    lam = inner if kind == "ratio" else 1.0
    if kind == "ratio" and not (sb.e_lo > 0):
        return nan
    x_start = sb.ms.theta_min if x_start is None else x_start
    cost = sb.slab_cost()
    late_pairs = not sb.hinge and bool(_PAIRS_LATE) and budget >= _LAZY * cost  # 4th item of a slab: still to try
    late = [False]

    def fits(k=1):
        if deadline is not None and time.monotonic() > deadline:
            late[0] = True
            return False
        # a cell costs the most any cell has cost so far, else twice the estimate of one programme (two ends)
        return sb.work + k * (sb.slab_cost() if sb._seen else 2.0 * cost) <= budget

    def to_mr(u, lam=lam):
        if kind == "difference":
            return u
        return lam + (u / sb.eps if u <= 0 else u / sb.e_lo)

    def value(cell, lam_, tau1, tau2, x0):
        """U of the cell at Λ = lam_: the larger of the two ends' programmes (form (ii'): the row sums are convex
        in b; module docstring of ._secant), or without ``_ENDS`` the programme of form (ii)."""
        a, b, ilo, ihi = cell
        u, x, w0 = -math.inf, None, sb.work
        for e in (a, b) if _ENDS and not sb.hinge else (None,):
            ue, xe = sb.slab_value(a, b, lam_, tau1, tau2, x0, ilo, ihi, end=e)
            if ue >= u:
                u, x = ue, xe
        sb._seen = max(sb._seen, sb.work - w0)  # the unit of the budget's estimates: one cell
        return u, (x0 if x is None else x)

    def evaluate(cell, x0, reserve=0, pairs=None):
        """The cell's bound: the first multiplier pair always, the others while the budget keeps ``reserve``
        slab programmes for the cells still to be evaluated; for the ratio, then up to ``_DINKELBACH`` steps
        Λ ← Λ + U/e_orig(maximiser) (each U(Λ) gives a valid bound; U <= 0 proves MR <= Λ on the cell)."""
        best, xb, arg = math.inf, None, None
        for i, (tau1, tau2) in enumerate(pairs or (_PAIRS_LOGISTIC if late_pairs else _PAIRS)):
            if i and not fits(1 + reserve):
                break
            u, x = value(cell, lam, tau1, tau2, x0)
            if to_mr(u) < best:
                best, xb, arg = to_mr(u), x, (u, x, tau1, tau2)
            if u == -math.inf or to_mr(u) <= inner:
                break
        # worth it only where the conversion through e_lo (U > 0) costs more than the target
        # (ratio only: there ε > 0 and e_lo > 0 were checked; the difference may have ε = 0)
        slack = (
            kind == "ratio"
            and arg is not None
            and arg[0] > 0
            and arg[0] * (1 / sb.e_lo - 1 / sb.eps) > gap_tol * abs(inner)
        )
        if slack and np.isfinite(best) and best > inner * (1 + gap_tol):
            assert arg is not None  # slack implies it
            u, x, tau1, tau2 = arg
            lam_ = lam
            for _ in range(_DINKELBACH):
                if u <= 0 or not fits(1 + reserve):
                    break
                lam_ = lam_ + u / max(float(np.mean(sb.lossv(sb.C @ x))), sb.e_lo)
                u, x = value(cell, lam_, tau1, tau2, x)
                best = min(best, to_mr(u, lam_))
        return best, (xb if xb is not None else x0)

    if n0 is None:
        n0 = next((k for k in (4, 2, 1) if fits(k)), 1)
    # hinge: the whole range first, when more than one slab follows; each first slab keeps the smaller of its own
    # bound and the root's (a hinge cell's programme may stop short of its optimum, its certificate then loose:
    # breast cancer 300 x 6, mean texture, a quarter of the b-range gave MR <= 124 where the whole range gives 22.1)
    v_root = math.inf
    if sb.hinge and n0 > 1 and fits(n0 + 1):
        v_root, x_start = evaluate((b_lo, b_hi, sb.lo, sb.hi), x_start, reserve=n0)
    edges = np.linspace(b_lo, b_hi, n0 + 1)
    slabs = []
    for i in range(n0):
        last = edges[i + 1]
        if i and not fits(n0 - i):  # the estimate has grown with the slabs seen: one slab covers the rest
            last = edges[-1]
        cell = (edges[i], last, sb.lo, sb.hi)
        v, x = evaluate(cell, x_start, reserve=0 if last == edges[-1] else n0 - i - 1)
        slabs.append((min(v, v_root), cell, x, late_pairs))
        if last == edges[-1]:
            break
    done = stall = False
    gain = [[0.0, 0], [0.0, 0]]  # per axis: total bound decrease of its splits, number of splits
    hist: list = []  # (work, bound) before each split: the stall rule
    while len(slabs) < max_slabs:
        slabs.sort(key=lambda s: s[0])
        v, (a, b, ilo, ihi), x, pend = slabs[-1]
        if not np.isfinite(v) or v - inner <= gap_tol * max(abs(v), 1e-300):
            done = True
            break
        if pend and fits(1):  # the late multiplier pairs, now that the cell has the largest bound (each is valid)
            vl, xl = evaluate((a, b, ilo, ihi), x, reserve=0, pairs=_PAIRS_LATE)
            slabs[-1] = (min(v, vl), (a, b, ilo, ihi), xl if vl < v else x, False)
            continue
        if not fits(2):  # no split left in the budget (a top cell still gets its late pairs while one cell fits)
            break
        # the target in MR: v - inner <= gap_tol·v, i.e. v <= inner/(1 - gap_tol) (v > 0; else the gap itself)
        target = inner / (1.0 - gap_tol) if v > 0 and gap_tol < 1 else inner + gap_tol * abs(v)
        if not sb.hinge and stalled(hist, sb.work, v, target, inner, budget):
            stall = True
            break
        hist.append((sb.work, v))
        slabs.pop()
        # the axis: b, or (with an intercept) the one whose splits have lowered the bound most on average; both are
        # tried on the first splits (and while one has no record), the better pair of halves is kept
        axes = (0, 1) if sb.o and min(gain[0][1], gain[1][1]) < _PROBE else (int(_mean(gain[1]) > _mean(gain[0])),)
        axes = axes if fits(2 * len(axes)) else axes[:1]
        best_kids: list = []
        for axis in axes:
            kids: list = []
            for i, cell in enumerate(_halves(a, b, ilo, ihi, axis)):
                vv, xx = evaluate(cell, x, reserve=1 - i)
                kids.append((min(vv, v), cell, xx, late_pairs))
            g = v - max(k[0] for k in kids)
            gain[axis][0] += g if np.isfinite(g) else 0.0
            gain[axis][1] += 1
            if not best_kids or max(k[0] for k in kids) < max(k[0] for k in best_kids):
                best_kids = kids
        slabs.extend(best_kids)
    top = max(s[0] for s in slabs)
    done = done or not np.isfinite(top) or top - inner <= gap_tol * max(abs(top), 1e-300)
    return SearchReport(top, not done, len(slabs), sb.work, late[0] and not done, stall and not done)
