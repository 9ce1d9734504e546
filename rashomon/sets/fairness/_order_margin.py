"""Reliance orders of the classifier classes (logistic, hinge): shared MCRs and the critical-ε brackets.

One :class:`MarginOrderCache` serves a whole :func:`._order.reliance_order` call: the MCR of each feature group
is computed once per ε and shared by every pair (``MR(a) - MR(b)`` lies in ``[MCR-(a) - MCR+(b), MCR+(a) -
MCR-(b)]``), and by every critical-ε bracket. The sets are nested (``S_ε ⊆ S_ε'`` for ε <= ε'), so an MCR bound
at ε' bounds every ε <= ε': the certified lower end of a difference at ε is the best over every ε' >= ε
computed so far, by any pair.

The critical ε of a relation ``a ≻ b`` lies where the certified lower end ``g(ε) = MCR-(a) - MCR+(b)`` crosses
0. Near the minimiser the set scales like ``sqrt(ε - e_min)`` and so do the MCR ends, so ``g`` is close to
linear in ``s = sqrt(ε - e_min)``. Each probe is placed at the crossing predicted from the points already known
(the difference at the minimiser, the set's ε, earlier probes: the line through the two nearest, or the parabola
through three), aimed below it by the estimated error once an uncertified ε is known, with a bisection in s when
the prediction leaves the bracket; then the best member's value is extrapolated the same way to find a member
breaking the relation. A probe refines only the ends it needs (``MCR-(a)`` in full; the upper end of a's MCR
keeps its surrogate bound) and every reported ε is an ε probed: certified below ``critical_lower``, refuted at
``critical_upper`` by a member of the MCR searches at that ε.
"""

from __future__ import annotations

import math

import numpy as np

from ..margin import MarginTerms, margin_mcr
from ._order_results import RelianceDifference

__all__ = ["CLASSIFIER_PROBES", "REFUTE_PROBES", "MarginOrderCache", "margin_critical", "margin_difference"]

#: classifier critical ε: at most this many ε probed per relation to certify it, and this many to refute it; each
#: probe is two MCRs (shared with the other pairs).
CLASSIFIER_PROBES, REFUTE_PROBES = 3, 2


def _label(rs, idx):
    cols = rs._columns
    return tuple(cols[i] if cols else f"x{i}" for i in idx)


class MarginOrderCache:
    """The MCRs of feature groups over a classifier set, per ε, computed once (``tick(1)`` after each)."""

    def __init__(self, rs, kind, tol, func, tick=None):
        self.rs, self.ms, self.kind, self.tol, self.func = rs, rs._margin, kind, tol, func
        self.tick = tick or (lambda k=1: None)
        self.results: dict = {}  # (group, ε) -> MCRResult
        self._lower: dict = {}  # (group, ε) -> MCRResult with a loose upper end
        self._terms: dict = {}

    def mcr(self, group, eps=None, lower_only=False):
        """The MCR of ``group`` at ``eps`` (default the set's ε: exactly ``model_class_reliance``).

        ``lower_only``: only the lower end is wanted; the upper end's slab search is skipped (``gap_tol`` = 1e6:
        the upper end is the surrogate bound, valid but looser). The lower end is the same either way.
        """
        rs = self.rs
        eps = rs.epsilon_abs_ if eps is None else float(eps)
        key = (tuple(int(i) for i in group), eps)
        if key in self.results:
            return self.results[key]
        if lower_only and key in self._lower:
            return self._lower[key]
        if eps == rs.epsilon_abs_:
            r, lower_only = rs.model_class_reliance(list(group), kind=self.kind, tol=self.tol), False
        else:  # as model_class_reliance's defaults, at another ε (the same class, data and reference)
            r = margin_mcr(
                self.ms,
                rs._columns,
                list(group),
                e_ref=rs.e_ref_,
                epsilon_abs=eps,
                reference_theta=rs.reference_theta_,
                kind=self.kind,
                tol=self.tol,
                max_iter=100,
                n_starts=5,
                random_state=0,
                func=self.func,
                gap_tol=1e6 if lower_only else 0.01,
            )
        (self._lower if lower_only else self.results)[key] = r
        self.tick(1)
        return r

    def bounds(self, group, eps):
        """Certified ``(lower, upper)`` of MR(group) over S_ε from every MCR computed at an ε' >= ε (nested sets)."""
        g, lo, up = tuple(int(i) for i in group), -math.inf, math.inf
        for (gg, e), r in [*self.results.items(), *self._lower.items()]:
            if gg == g and e >= eps:
                lo, up = max(lo, r.lower), min(up, r.upper)
        return lo, up

    def has(self, group, eps):
        key = (tuple(int(i) for i in group), float(eps))
        return key in self.results or key in self._lower

    def epsilons(self, *groups):
        gs = {tuple(int(i) for i in g) for g in groups}
        return sorted({e for (g, e) in [*self.results, *self._lower] if g in gs})

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


def margin_difference(cache: MarginOrderCache, ga, gb, eps=None, lower_only=False, members=False) -> RelianceDifference:
    """Outer bounds from the two certified MCR intervals at ``eps`` (default the set's ε), attained inner values
    from their members and the reference (``lower_only``: only the lower end of the difference is wanted, so
    only the lower end of MCR(a) and the upper end of MCR(b) are refined; ``members``: only members are wanted,
    neither upper end is refined)."""
    rs = cache.rs
    eps = rs.epsilon_abs_ if eps is None else float(eps)
    ra, rb = cache.mcr(ga, eps, lower_only=lower_only or members), cache.mcr(gb, eps, lower_only=members)
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


def _secant_root(pts):
    """The root of the line through the last two points ``(s, g)``, or None when it does not fall."""
    (s1, g1), (s2, g2) = pts[-2], pts[-1]
    if s1 == s2 or not np.isfinite(g1 - g2):
        return None
    slope = (g2 - g1) / (s2 - s1)
    return s2 - g2 / slope if slope < 0 else None


def _predict(pts, lo, hi):
    """The predicted crossing of g in s within ``(lo, hi)`` and an estimate of its error: the root of the parabola
    through the three points nearest the bracket, against the line through the two nearest (None: no root)."""
    near = sorted(pts, key=lambda p: min(abs(p[0] - lo), abs(p[0] - hi) if np.isfinite(hi) else math.inf))
    line = _secant_root(sorted(near[:2]))
    if len(near) < 3 or line is None:
        return line, math.inf
    (s1, g1), (s2, g2), (s3, g3) = near[:3]
    if len({s1, s2, s3}) < 3:
        return line, math.inf
    c = np.polyfit([s1, s2, s3], [g1, g2, g3], 2)
    roots = [r.real for r in np.roots(c) if abs(r.imag) < 1e-12 and lo < r.real < hi]
    if not roots:
        return line, math.inf
    r = min(roots, key=lambda t: abs(t - line))
    return r, abs(r - line)


def margin_critical(cache: MarginOrderCache, x, y, eps_max, rtol, max_probes=CLASSIFIER_PROBES):
    """Bracket the critical ε of ``x ≻ y`` (certified at the set's ε): ``(certified, refuted, note, refuted?)``.

    At a probe ε the relation is *certified* when ``MCR-(x) - MCR+(y) > 0`` (bounds from every ε' >= ε
    computed), *refuted* when a member of the MCR searches at ε (or the reference) has MR(x) - MR(y) <= 0.
    The true critical ε lies in ``[largest certified, smallest refuted]``; between the largest certified and the
    smallest uncertified ε lies the gap of the outer bounds. At most ``max_probes`` probes close the certification
    gap, then at most ``REFUTE_PROBES`` look for a member breaking the relation (see the module docstring).
    """
    rs = cache.rs
    e0, emin = rs.epsilon_abs_, rs.e_min_
    if not e0 > emin:  # a set of one point: no s-scale; ε_abs grows from a small absolute step
        emin = e0 - max(abs(e0), 1.0) * 1e-3

    def cert(e):
        return cache.bounds(x, e)[0] - cache.bounds(y, e)[1]

    def S(e):
        return math.sqrt(max(e - emin, 0.0))

    lo, w, u, hi = e0, e0, math.inf, math.inf  # certified ≤ lo; not refuted at w; not certified at u; refuted at hi

    def record(e, b, v):
        """What a probe at e showed: the certified lower end b; v the best member's value there (None: unknown)."""
        nonlocal lo, w, u, hi
        if b > 0:
            lo, w = max(lo, e), max(w, e)
            return
        u = min(u, e)
        if v is not None and v <= 0:
            hi = min(hi, e)
        elif v is not None:
            w = max(w, e)

    for e in cache.epsilons(x, y):  # free: MCRs already computed at larger ε (other pairs)
        b = cert(e)
        if e0 < e <= eps_max and np.isfinite(b):
            both = cache.has(x, e) and cache.has(y, e)
            record(e, b, margin_difference(cache, x, y, e, lower_only=True).lower_attained if both else None)
    # (s, certified lower end) and (s, best member's value) in the order known; the first points, at e_min (the
    # minimiser's difference), are predictions only
    d_min = cache.value(x, y, rs.theta_min_)
    pts = [(0.0, d_min), (S(e0), cert(e0))] + ([(S(lo), cert(lo))] if lo > e0 else [])
    vpts = [(0.0, d_min), (S(e0), margin_difference(cache, x, y, e0).lower_attained)]
    probes = 0

    def probe(e, members=False):
        nonlocal probes
        v = margin_difference(cache, x, y, e, lower_only=True, members=members).lower_attained
        probes, b = probes + 1, cert(e)
        record(e, b, v)
        pts.append((S(e), b))
        vpts.append((S(e), v))

    # the certification gap [lo, u]: the predicted crossing, aimed below by its estimated error when an uncertified
    # ε is known (a certified ε close below the crossing is what is reported)
    for _ in range(max_probes):
        tol_e = rtol * max(lo - emin, 1e-300)
        if u - lo <= tol_e or (not np.isfinite(u) and lo >= eps_max):
            break
        s_lo = S(lo)
        r, err = _predict(pts, s_lo, S(u) if np.isfinite(u) else math.inf)
        if np.isfinite(u):
            e = emin + (r - min(err, 0.5 * (r - s_lo))) ** 2 - 0.4 * tol_e if r is not None else math.nan
            if not lo < e < u:
                e = emin + (0.5 * (s_lo + S(u))) ** 2
        else:  # no uncertified ε yet: the predicted crossing, between 1.2x and 4x the certified s
            e = emin + min(max(r if r is not None else 4 * s_lo, 1.2 * s_lo), 4 * s_lo) ** 2
        if not lo < min(e, eps_max):
            break
        probe(min(e, eps_max))
    # the refutation gap [w, hi]: a member breaking the relation, 20% (in s) past the predicted crossing of the
    # best member's value, then bisection in s
    for _ in range(REFUTE_PROBES):
        tol_e = rtol * max(lo - emin, 1e-300)
        if np.isfinite(hi):
            if hi - w <= tol_e:
                break
            e = emin + (0.5 * (S(w) + S(hi))) ** 2
        else:
            r, s_w = _secant_root(vpts), S(max(w, u if np.isfinite(u) else w))
            if r is None or w >= eps_max:
                break
            e = emin + min(max(1.2 * r, 1.2 * s_w), 4 * s_w) ** 2
        if not w < min(e, eps_max):
            break
        probe(min(e, eps_max), members=True)  # beyond the certified range: members suffice
        if not np.isfinite(hi):  # the predicted crossing did not refute: no member found breaking it
            break
    if not np.isfinite(hi):
        top = " (epsilon_max)" if lo >= eps_max else ""
        note = (
            f"certified up to ε_abs = {lo:.6g}{top}; not refuted up to {w:.6g} (no member found breaking it: the "
            "classifier bounds are outer bounds from MCR)"
        )
    elif u < hi:
        note = (
            f"certified up to ε_abs = {lo:.6g}, refuted at {hi:.6g}; between, the gap of the classifier outer "
            f"bounds ({probes} ε probed, two MCRs each)"
        )
    else:
        note = f"bracketed by secant steps over ε ({probes} ε probed, two MCRs each)"
    return lo, hi, note, bool(np.isfinite(hi))
