"""Reliance orders of the classifier classes (logistic, hinge): shared MCRs and the critical-ε brackets.

One :class:`MarginOrderCache` serves a whole :func:`._order.reliance_order` call: the MCR of each feature group
is computed once per ε and shared by every pair (``MR(a) - MR(b)`` lies in ``[MCR-(a) - MCR+(b), MCR+(a) -
MCR-(b)]``), and by every critical-ε bracket. The sets are nested (``S_ε ⊆ S_ε'`` for ε <= ε'), so an MCR bound
at ε' bounds every ε <= ε': the certified lower end of a difference at ε is the best over every ε' >= ε
computed so far, by any pair.

The critical ε of a relation ``a ≻ b`` lies where the certified lower end ``g(ε) = MCR-(a) - MCR+(b)`` crosses
0. Each call searches only what the bracket needs (``margin_mcr``'s ``ends``): the lower end of MCR(a), the
members of MCR+(b) (its ascent, no slab search), and, to certify, the slab search of MCR+(b) only down to
MCR-(a) (it stops there, and is not run when a member of MCR+(b) already reaches it). Near the minimiser the set
scales like ``s = sqrt(ε - e_min)`` and so do the MCR ends, so the probes are placed by lines in s: first, from
members alone (cheap), 20% past the predicted crossing of the best member's value, where a member breaking the
relation is looked for; then the predicted crossing of the certified end (MCR-(a) less the best member of
MCR+(b) less the outer bound's gap at the set's ε, scaled with s), aimed 20% inside it, with one slab search.
Every reported ε is an ε probed: certified below ``critical_lower``, refuted at ``critical_upper`` by a member of
the MCR searches at that ε.
"""

from __future__ import annotations

import math

import numpy as np

from ..margin import MarginTerms, margin_mcr
from ._order_results import RelianceDifference

__all__ = ["CLASSIFIER_PROBES", "REFUTE_PROBES", "MarginOrderCache", "margin_critical", "margin_difference"]

#: classifier critical ε: at most this many ε probed per relation to certify it, and this many to refute it; at
#: most two MCR calls per probe on average (shared with the other pairs).
CLASSIFIER_PROBES, REFUTE_PROBES = 3, 2


def _label(rs, idx):
    cols = rs._columns
    return tuple(cols[i] if cols else f"x{i}" for i in idx)


class MarginOrderCache:
    """The MCRs of feature groups over a classifier set, per ε, computed once (``tick(1)`` after each).

    Each call searches only what its use needs (``margin_mcr``'s ``ends``): ``"full"`` both ends (the set's ε:
    exactly ``model_class_reliance``), ``"lower"`` the lower end, ``"members"`` the upper end's members (no slab
    search), ``"upper"`` the upper end's slab bound down to a target. Every call's bounds are valid at both ends.
    """

    def __init__(self, rs, kind, tol, func, tick=None):
        self.rs, self.ms, self.kind, self.tol, self.func = rs, rs._margin, kind, tol, func
        self.tick = tick or (lambda k=1: None)
        self.results: dict = {}  # (group, ε, what) -> MCRResult
        self._terms: dict = {}

    def mcr(self, group, eps=None, what="full", target=None):
        """The MCR of ``group`` at ``eps`` (default the set's ε), searched for ``what`` (see the class docstring).

        ``"upper"``: the slab search stops once its bound is below ``target`` (its gap target is ``1 - m/target``
        for the best member m > 0 of the ascent, the same as the ``"members"`` call's, run first; else the default
        0.01), and is not run when a member already reaches the target (certification is then impossible)."""
        rs = self.rs
        eps = rs.epsilon_abs_ if eps is None else float(eps)
        g = tuple(int(i) for i in group)
        if eps == rs.epsilon_abs_ or (g, eps, "full") in self.results:
            what = "full"
        key = (g, eps, what)
        if key in self.results:
            return self.results[key]
        if what == "full" and eps == rs.epsilon_abs_:
            r = rs.model_class_reliance(list(g), kind=self.kind, tol=self.tol)
        elif what == "upper":
            m = self.mcr(g, eps, "members")
            umr = m.upper_model.mr if m.upper_model is not None else -math.inf
            if target is None or umr >= target or m.upper < target:
                return m  # a member reaches the target, or the surrogate bound is already below it
            r = self._call(g, eps, ("upper",), 1.0 - umr / (target * (1 - 1e-9)) if umr > 0 else 0.01)
            key = (g, eps, ("upper", float(target)))
        else:
            ends = {"full": ("lower", "upper"), "lower": ("lower",), "members": ("upper",)}[what]
            r = self._call(g, eps, ends, 0.01 if what == "full" else math.inf)
        self.results[key] = r
        self.tick(1)
        return r

    def _call(self, g, eps, ends, gap_tol):
        """``margin_mcr`` with ``model_class_reliance``'s defaults at another ε (the same class, data, reference)."""
        rs = self.rs
        return margin_mcr(
            self.ms,
            rs._columns,
            list(g),
            e_ref=rs.e_ref_,
            epsilon_abs=eps,
            reference_theta=rs.reference_theta_,
            kind=self.kind,
            tol=self.tol,
            max_iter=100,
            n_starts=5,
            random_state=0,
            func=self.func,
            gap_tol=gap_tol,
            ends=ends,
        )

    def bounds(self, group, eps):
        """Certified ``(lower, upper)`` of MR(group) over S_ε from every MCR computed at an ε' >= ε (nested sets)."""
        g, lo, up = tuple(int(i) for i in group), -math.inf, math.inf
        for (gg, e, _), r in self.results.items():
            if gg == g and e >= eps:
                lo, up = max(lo, r.lower), min(up, r.upper)
        return lo, up

    def at(self, group, eps):
        """Every MCR of ``group`` computed at ``eps``."""
        g = tuple(int(i) for i in group)
        return [r for (gg, e, _), r in self.results.items() if gg == g and e == float(eps)]

    def epsilons(self, *groups):
        gs = {tuple(int(i) for i in g) for g in groups}
        return sorted({e for (g, e, _) in self.results if g in gs})

    def terms(self, group):
        g = tuple(int(i) for i in group)
        if g not in self._terms:
            ms = self.ms
            self._terms[g] = MarginTerms(ms.D, ms.y, np.asarray(g, dtype=int) + ms.o)
        return self._terms[g]

    def value(self, ga, gb, th):
        """``MR(a) - MR(b)`` of the member θ (exact losses)."""
        loss, Ta, Tb = self.ms.loss, self.terms(ga), self.terms(gb)
        eo = Ta.e_orig(th, loss)
        sa, sb = Ta.e_switch(th, loss), Tb.e_switch(th, loss)
        return (sa - sb) / eo if self.kind == "ratio" else sa - sb


def margin_difference(cache: MarginOrderCache, ga, gb) -> RelianceDifference:
    """Outer bounds from the two certified MCR intervals at the set's ε, attained inner values from their members
    and the reference."""
    rs = cache.rs
    eps = rs.epsilon_abs_
    ra, rb = cache.mcr(ga), cache.mcr(gb)
    cands = [rs.reference_theta_] + [m.theta for r in (ra, rb) for m in (r.lower_model, r.upper_model) if m is not None]
    vals = np.array([cache.value(ga, gb, t) for t in cands])
    i, j = int(np.argmin(vals)), int(np.argmax(vals))
    lo, hi = min(ra.lower - rb.upper, vals[i]), max(ra.upper - rb.lower, vals[j])
    return RelianceDifference(
        _label(rs, ga),
        _label(rs, gb),
        cache.kind,
        float(lo),
        float(hi),
        float(vals[i]),
        float(vals[j]),
        False,
        cands[i],
        cands[j],
        float(vals[0]),
        eps,
        "outer bounds from the two certified MCR intervals; attained inner values from their members",
        rs.parametrization_,
    )


def _best_value(cache, x, y, e):
    """The smallest ``MR(x) - MR(y)`` over the reference and the members of every MCR of x and y computed at e."""
    rs = cache.rs
    cands = [rs.reference_theta_] + [
        m.theta for g in (x, y) for r in cache.at(g, e) for m in (r.lower_model, r.upper_model) if m is not None
    ]
    return min(cache.value(x, y, t) for t in cands)


def _secant_root(pts):
    """The root of the line through the last two points ``(s, g)``, or None when it does not fall."""
    (s1, g1), (s2, g2) = pts[-2], pts[-1]
    if s1 == s2 or not np.isfinite(g1 - g2):
        return None
    slope = (g2 - g1) / (s2 - s1)
    return s2 - g2 / slope if slope < 0 else None


def margin_critical(cache: MarginOrderCache, x, y, eps_max, rtol, max_probes=CLASSIFIER_PROBES):
    """Bracket the critical ε of ``x ≻ y`` (certified at the set's ε): ``(certified, refuted, note, refuted?)``.

    At an ε the relation is *certified* when ``MCR-(x) - MCR+(y) > 0`` (bounds from every ε' >= ε computed),
    *refuted* when a member of the MCR searches at ε (or the reference) has MR(x) - MR(y) <= 0. The true critical
    ε lies in ``[largest certified, smallest refuted]``. Each probe first searches members only (the lower end of
    MCR(x), exact for γ >= 0; the ascent of MCR(y): cheap); at most ``REFUTE_PROBES`` of them look for a member
    breaking the relation; then at most ``max_probes`` certify it, each adding one slab search of MCR+(y) that stops
    as soon as its bound is below MCR-(x) (see the module docstring).
    """
    rs = cache.rs
    e0, emin = rs.epsilon_abs_, rs.e_min_
    if not e0 > emin:  # a set of one point: no s-scale; ε_abs grows from a small absolute step
        emin = e0 - max(abs(e0), 1.0) * 1e-3

    def S(e):
        return math.sqrt(max(e - emin, 0.0))

    def E(s):
        return emin + s * s

    def cert(e):
        return cache.bounds(x, e)[0] - cache.bounds(y, e)[1]

    lo, w, u, hi = e0, e0, math.inf, math.inf  # certified <= lo; not refuted at w; not certified at u; refuted at hi

    def look(e):
        """What the MCRs computed at e show; returns the best member's value there (None: not both searched)."""
        nonlocal lo, w, hi
        if cert(e) > 0:
            lo, w = max(lo, e), max(w, e)
        if not (cache.at(x, e) and cache.at(y, e)):
            return None
        v = _best_value(cache, x, y, e)
        if v <= 0:
            hi = min(hi, e)
        else:
            w = max(w, e)
        return v

    for e in cache.epsilons(x, y):  # free: MCRs already computed at other ε (other pairs)
        if e0 < e <= eps_max:
            look(e)
    s0 = S(e0)
    rb0 = cache.mcr(y)
    g0 = rb0.upper - rb0.upper_model.mr if rb0.upper_model is not None and np.isfinite(rb0.upper) else 0.0
    vpts = [(0.0, cache.value(x, y, rs.theta_min_)), (s0, _best_value(cache, x, y, e0))]
    cpts = [(s0, cert(e0))]  # (s, predicted certified lower end: MCR-(x) - best member of MCR+(y) - the gap)
    probes, n0, budget = 0, len(cache.results), 2 * (max_probes + REFUTE_PROBES)  # MCR calls of this relation

    def spent(k):  # k more calls would pass the budget
        return len(cache.results) - n0 + k > budget

    def members(e):
        nonlocal probes
        probes += 1
        cache.mcr(x, e, "lower"), cache.mcr(y, e, "members")
        v = look(e)
        T, m = cache.bounds(x, e)[0], cache.mcr(y, e, "members").upper_model
        vpts.append((S(e), v if v is not None else math.inf))
        if m is not None:
            cpts.append((S(e), T - m.mr - g0 * S(e) / max(s0, 1e-300)))
        return T, m

    def narrow():
        return hi - lo <= rtol * max(lo - emin, 1e-300) or lo >= eps_max

    # the refutation: a member breaking the relation, 20% (in s) past the predicted crossing of the best member's
    # value, then the predicted crossing again inside the bracket
    for _ in range(REFUTE_PROBES):
        if narrow():
            break
        r, s_w = _secant_root(vpts), S(w)
        if spent(2):
            break
        if np.isfinite(hi):
            s_hi = S(hi)
            pts = sorted(p for p in vpts if np.isfinite(p[1]) and p[0] <= s_hi)
            r = _secant_root(pts[-2:]) if len(pts) >= 2 else None
            s = 1.02 * r if r is not None and s_w < 1.02 * r < s_hi else 0.5 * (s_w + s_hi)
        elif r is None:
            break
        else:
            s = min(max(1.2 * r, 1.2 * s_w), 4 * s_w)
        e = min(E(s), eps_max)
        if not w < e < hi:
            break
        members(e)
    # the certification: the predicted crossing of the certified lower end (the member gap less the outer bound's
    # gap at the set's ε, scaled with the set), aimed 20% (in s) inside; a failure halves the step
    frac = 0.8
    for _ in range(max_probes):
        top = min(u, hi)
        if narrow() or lo >= top or frac < 0.1 or spent(3):
            break
        below = sorted([p for p in cpts if p[1] <= 0], key=lambda p: p[0])
        r = None
        if below:
            (s1, c1), (s2, c2) = max((p for p in cpts if p[1] > 0), key=lambda p: p[0]), below[0]
            r = s1 + c1 * (s2 - s1) / (c1 - c2) if s2 > s1 and c1 > c2 else None
        s_top = S(top) if np.isfinite(top) else 4 * S(lo)
        r = min(r, s_top) if r is not None else s_top
        e = min(E(S(lo) + frac * (r - S(lo))), eps_max)
        if not lo < e < top:
            break
        T, m = members(e)
        if cert(e) <= 0 and m is not None and m.mr < T:
            cache.mcr(y, e, "upper", target=T)  # the slab search of MCR+(y) down to MCR-(x)
            look(e)
        if cert(e) > 0:
            break
        u, frac = min(u, e), 0.5 * frac
    if not np.isfinite(hi):
        cap = " (epsilon_max)" if lo >= eps_max else ""
        note = (
            f"certified up to ε_abs = {lo:.6g}{cap}; not refuted up to {w:.6g} (no member found breaking it: the "
            "classifier bounds are outer bounds from MCR)"
        )
    else:
        note = (
            f"certified up to ε_abs = {lo:.6g}, refuted at {hi:.6g}; between, the gap of the classifier outer "
            f"bounds ({probes} ε probed)"
        )
    return lo, hi, note, bool(np.isfinite(hi))
