"""The lower end's slab step of classifier MCR (:func:`lower_end_slabs`): when to run the slab bound of
:mod:`._lower_bnb`, and its minimisers polished into members."""

from __future__ import annotations

import numpy as np

from . import _lower_bnb as lb
from ._descent import polish_lower
from ._terms import unique_rows

__all__ = ["lower_end_slabs"]


def lower_end_slabs(ms, T, ranges, loss, eps, lo, hi, kind, extremes, best, add, lower, max_time=None, **kw):
    """The lower end's slab step of :func:`._mcr._margin_mcr`: the slab bound (one feature; for the hinge only on
    sets small enough for the slabs it needs) when the gap between the best member (``best("lower")``) and ``lower``
    is above 1%, its slab minimisers polished into members (``add``) when the bound stopped short of its target;
    returns the better bound. ``terms``: the pair
    sums of the searches (τ guesses, the polish; default T, the exact ones: the bound itself always uses T's
    values and counts). ``notes`` (a list) gets a note when the slab search stopped because its bound stalled, or
    was skipped on a set too large for two slabs of its work. ``gap_tol`` (default 0.01): the slab search splits a
    slab until it is within the smaller of ``_lower_bnb._TARGET`` and ``gap_tol/2`` of the best member (relative)."""
    terms, notes, gap_tol = kw.get("terms"), kw.get("notes"), kw.get("gap_tol", 0.01)
    th, mr = best("lower")
    if th is None or len(T.gi) != 1 or mr - lower <= 0.01 * max(abs(mr), 1e-300):
        return lower
    nr = len(unique_rows(np.column_stack([ms.D, ms.y]))[2])  # distinct rows (O(n) memory besides the copy)
    hinge = loss.name == "hinge"
    if hinge and lb._slab_budget(nr, len(T.G), hinge) < lb._MAX_SLABS:
        # the hinge's slabs need to be narrow (its b-subgradient jumps): only small sets get enough of them
        # within the budget (Pima, Insulin: 0.853 with 24 slabs, 0.920 with 64; γ = 0 gives 0.910, a member 0.968)
        return lower
    if lb._LOWER_WORK / lb._slab_cost(nr, len(T.G), hinge) < lb._SKIP:
        # a set so large that two slabs exceed the work (3 x 10^4 rows: 1.6; the slabs took 69% of a 39 s MCR)
        if notes is not None:
            notes.append("lower end: no slab bound (fewer than two slabs fit its work on a set this large)")
        return lower
    lim = extremes().coef_range(int(T.gi[0]))
    info: dict = {}
    target = min(lb._TARGET, gap_tol / 2)
    opts = {"max_time": max_time, "floor": lower, "terms": terms, "info": info, "target": target}
    b, pts = lb.lower_slab_bound(ms, T, ranges, loss, eps, lo, hi, kind, th, mr, lim, **opts)
    if info.get("stalled") and notes is not None:
        notes.append("lower end: the slab search stopped when its bound stalled (the rest of its budget would not pay)")
    # the slab minimisers polished into members, unless the bound already reached the target: a better member could
    # then close less than the target (on Pima's 8 logistic features they never beat the best member; 0.06-0.15 s)
    if mr - max(lower, b) > target * max(abs(mr), 1e-300):
        for p in polish_lower(ms, T if terms is None else terms, loss, eps, kind, pts[:2], n_starts=2):
            add(p)
    return max(lower, b)
