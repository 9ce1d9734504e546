"""Certified bounds of decision-rate disparities (positive rate, TPR, FPR) by a linear programme and its dual.

A rate difference is ``D(θ) = Σ_j c_j 1[s_j > t] + c0`` over the distinct rows j (duplicates merged, their
coefficients summed), with ``s = Pθ + p0`` and every member's score of row j in a certified range ``[l_j, u_j]``.
Rows whose range lies on one side of t are constant over the set; only the *open* rows (``l_j <= t < u_j``) vary.

**The bound is a Lagrangian dual.** For any multipliers γ (one per row) and every member θ,

    D(θ) = Σ_j [c_j 1[s_j > t] - γ_j s_j] + γ'(Pθ + p0)
         <= Σ_j max_{s ∈ [l_j, u_j]} (c_j 1[s > t] - γ_j s) + max_S γ'(Pθ + p0),

where each row's maximum is taken in closed form (at l_j, u_j or just above t) and the last term is one certified
call of the set's linear-functional engine. So the bound holds for *any* γ, however it was found; its minimum
over γ is the concave-envelope relaxation of D over the set.

**The multipliers come from a linear programme**: the envelope relaxation maximised over a polytope ``Q ⊇ S``:
the half-spaces ``l_j <= p_j'θ + p0_j <= u_j`` of every row, tangent cuts of the convex loss ``L(θ) <= ε`` and of
the norm ball at the programme's own solutions (outer approximation: each round cuts off the last solution).
Each row's envelope is ``min(c_j, c_j (s - l_j)/(t - l_j))`` (``c_j > 0``) or ``min(0, c_j (s - t)/(u_j - t))``
(``c_j < 0``), one inequality each; the dual value π_j of that inequality gives ``γ_j = π_j·slope_j``. The
programme's accuracy affects only how tight the bound is, never its validity. Each programme solution, moved
into the set along the segment to θ_min, is a member (an attained value).

Frank–Wolfe on the same relaxation (:mod:`._joint`) stalls on these piecewise-linear envelopes; the programme
solves them exactly (COMPAS two-year, positive-rate gap: certified [0.014, 0.396] against [0.007, 0.419]). The
relaxation itself stays loose on decisions (each row's step becomes a ramp): members reach [0.180, 0.286] there.
"""

from __future__ import annotations

import numpy as np

__all__ = ["step_max"]

_ROUNDS = 8  # programmes solved (each adds the tangent cuts at its solution)
_MAX_OPEN = 6000  # open rows (columns of the programme) beyond which the bound is not tried
_TIME = 30.0  # seconds allowed to one programme (past it, the rounds stop; every bound found so far stands)
_DEGENERATE = 1e-12  # a row range touching the threshold closer than this (relative): no ramp, the flat piece only


def _rows(spec, coef, lo_s, hi_s):
    """Distinct rows with nonzero summed coefficient: ``(P, p0, c, lr, ur)``."""
    key = np.column_stack([spec.P, spec.p0])
    U, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.ravel()
    c = np.bincount(inv, weights=coef, minlength=len(U))
    lr = np.full(len(U), np.inf)
    ur = np.full(len(U), -np.inf)
    np.minimum.at(lr, inv, lo_s)
    np.maximum.at(ur, inv, hi_s)
    keep = c != 0
    return U[:, :-1], U[:, -1], c, lr, ur, keep


def _kept_rows(distinct):
    """``(rows, trivial)`` from :func:`_rows`' output: the distinct rows with a nonzero coefficient
    ``(P, p0, c, lr, ur)``, and the answer of a maximum that needs no search: ``(0.0, [])`` when no row is left,
    ``(inf, [])`` when a score range is unbounded, else None."""
    P, p0, c, lr, ur, keep = distinct
    rows = P[keep], p0[keep], c[keep], lr[keep], ur[keep]
    if not keep.any():
        return rows, (0.0, [])
    if not (np.all(np.isfinite(rows[3])) and np.all(np.isfinite(rows[4]))):
        return rows, (np.inf, [])
    return rows, None


def _row_max(c, gam, lr, ur, t):
    """``max_{s ∈ [lr, ur]} c·1[s > t] - γ s`` per row (the supremum just above t where the range crosses t)."""
    step = lambda s: np.where(s > t, c, 0.0)  # noqa: E731
    best = np.maximum(step(lr) - gam * lr, step(ur) - gam * ur)
    cross = (lr <= t) & (t <= ur)  # a range ending at t: just above t counted too (decisions rounded at the threshold)
    at_t = np.maximum(-gam * t, c - gam * t)
    return np.where(cross, np.maximum(best, at_t), best)


def certificate(rs, P, p0, c, lr, ur, t, gam, eps, func):
    """The dual bound of the module notes for multipliers ``gam`` (any real vector): certified ``max_S D - c0``."""
    from ._functionals import min_functionals

    gam = np.where(np.isfinite(gam), gam, 0.0)
    rows = _row_max(c, gam, lr, ur, t)
    if not np.any(gam):
        lin = 0.0
    else:
        b, _, _ = min_functionals(rs, -(gam @ P), np.array([-(gam @ p0)]), eps, 1e-10, func)
        lin = -float(b[0])
    size = float(np.abs(rows).sum() + np.abs(c).sum() + abs(lin))
    return float(rows.sum()) + lin + 64 * np.finfo(float).eps * size * max(1, len(c)) ** 0.5


def step_max(rs, spec, coef, lo_s, hi_s, eps, func, t):
    """Certified ``max_S Σ_i coef_i 1[s_i > t]`` (rows of ``spec``): ``(bound, members)``; see the module notes."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from ..margin import margin_set

    ms = margin_set(rs)
    distinct = _rows(spec, coef, lo_s, hi_s)
    P_all, p0_all, _, l_all, u_all, _ = distinct
    (P, p0, c, lr, ur), trivial = _kept_rows(distinct)
    if trivial is not None:
        return trivial
    d = P.shape[1]
    scale = 1.0 + abs(t)
    open_ = (lr <= t) & (t < ur)
    pos = c > 0
    ramp = open_ & np.where(pos, t - lr > _DEGENERATE * scale, ur - t > _DEGENERATE * scale)
    opn = np.flatnonzero(open_)
    m = len(opn)
    if m > _MAX_OPEN:
        return np.inf, []
    if m == 0:
        return certificate(rs, P, p0, c, lr, ur, t, np.zeros(len(c)), eps, func), []
    R = np.flatnonzero(ramp[opn])
    Oj = opn[R]
    slope = np.where(pos[Oj], c[Oj] / np.where(pos[Oj], t - lr[Oj], 1.0), c[Oj] / np.where(pos[Oj], 1.0, ur[Oj] - t))
    anchor = np.where(pos[Oj], lr[Oj], t)
    # ramps: v_k - slope·p'θ <= slope·(p0 - anchor); the flat pieces are the columns' upper bounds
    A_ramp = sp.hstack(
        [
            sp.csr_matrix(-slope[:, None] * P[Oj]),
            sp.csr_matrix((np.ones(len(R)), (np.arange(len(R)), R)), shape=(len(R), m)),
        ]
    )
    b_ramp = slope * (p0[Oj] - anchor)
    # the polytope of the row ranges (every distinct row of the metric, coefficient or not)
    fin = np.isfinite(l_all) & np.isfinite(u_all)
    Pf, pad = P_all[fin], 1e-9 * (1.0 + np.maximum(np.abs(l_all[fin]), np.abs(u_all[fin])))
    A_poly = sp.hstack([sp.csr_matrix(np.vstack([Pf, -Pf])), sp.csr_matrix((2 * len(Pf), m))])
    b_poly = np.r_[u_all[fin] - p0_all[fin] + pad, -(l_all[fin] - p0_all[fin]) + pad]
    bounds = [(None, None)] * d + [(None, max(float(ci), 0.0)) for ci in c[opn]]
    cost = np.r_[np.zeros(d), -np.ones(m)]
    cuts: list = []
    best, members = np.inf, []
    B, r, tm = ms.B, ms.r, ms.theta_min
    for _ in range(_ROUNDS):
        A = sp.vstack(
            [A_ramp, A_poly] + ([sp.csr_matrix(np.array([cu[0] for cu in cuts]))] if cuts else []), format="csr"
        )
        b = np.r_[b_ramp, b_poly, [cu[1] for cu in cuts]]
        res = linprog(cost, A_ub=A, b_ub=b, bounds=bounds, method="highs", options={"time_limit": _TIME})
        if res.status != 0 or res.x is None:
            break
        pi = np.clip(-np.asarray(res.ineqlin.marginals[: len(R)]), 0.0, 1.0)
        gam = np.zeros(len(c))
        gam[Oj] = pi * slope
        best = min(best, certificate(rs, P, p0, c, lr, ur, t, gam, eps, func))
        th = res.x[:d]
        members.append(_into_set(ms, th, tm, eps))
        Lv, g = ms.orig.orig_parts(th, ms.loss, 1)[:2]  # the hinge smoothed: above the exact loss by <= its offset
        e_cut = eps + ms.loss.offset
        added = False
        if Lv > e_cut * (1 + 1e-9):
            cuts.append((np.r_[g, np.zeros(m)], e_cut - Lv + g @ th))
            added = True
        q = float(th @ B @ th)
        if q > r * (1 + 1e-9):
            gb = B @ th
            cuts.append((np.r_[gb / np.sqrt(q), np.zeros(m)], np.sqrt(r)))
            added = True
        if not added:
            break
    return best, members


def _into_set(ms, th, tm, eps):
    """The point of the segment from θ_min toward θ farthest along it and inside the set (bisection)."""
    a, b = 0.0, 1.0
    B, r = ms.B, ms.r
    for _ in range(40):
        mid = 0.5 * (a + b)
        x = tm + mid * (th - tm)
        if ms.orig.e_orig(x, ms.loss) <= eps and x @ B @ x <= r:
            a = mid
        else:
            b = mid
    return tm + a * (th - tm)
