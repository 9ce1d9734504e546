"""Branch and bound on boxes of θ for decision-rate disparities: certified bounds that bind.

``D(θ) = Σ_j c_j 1[s_j > t]`` over distinct rows j, ``s = Pθ + p0``; the set S is convex (``L(θ) <= ε`` and the
ball). In the coordinates ``z = Lᵀ(θ - θ_min)`` (``LLᵀ`` the loss Hessian at θ_min, so S is nearly a ball), rotated
to the principal axes of the open rows' score vectors, the search splits boxes (the side that carries the most
open weight, at its middle). On a box Z, each row's score lies in ``[l_j, u_j] ∩ {p_j'θ : z ∈ Z}`` (closed form), which
shrinks with the box: rows whose hyperplane misses the box are constant there, the rest are *open*. The bound of a
box is a Lagrangian dual: for any multipliers γ (one per row) and μ >= 0 (one per valid cut ``g'z <= h`` of S),

    max_{Z ∩ S} D <= Σ_j max_{s ∈ [l_j, u_j]} (c_j 1[s > t] - γ_j s) + max_{z ∈ Z} (γ'(Pθ(z) + p0) - μ'(Gz - h)),

every term in closed form. The multipliers come from a linear programme on the box: each open row's step
replaced by its concave envelope on the box's range (a ramp), the cuts being tangent planes of L and of the ball
(at box centres and at the programme's solutions, kept for every box). A box is dropped when a tangent plane at its
centre shows it misses S. So every bound is certified whatever the accuracy of the programme, and the maximum
over the boxes left (and the best member found) is a certified bound of ``max_S D``. Members: each programme's
solution moved into S along the segment to θ_min; the search is best-first and stops when the bound is within
``gap`` of the best member or at the time limit (the bound at that moment stands).

Measured (one BLAS thread): on sets of two parameters the bound closes to the stopping gap in seconds; with eight
or nine parameters and hundreds of open rows (COMPAS two-year, Pima) it tightens slowly, by about 0.007-0.010 of
the gap per doubling of processor time (COMPAS positive-rate gap: [0.066, 0.363] at 10 s, [0.110, 0.333] at 240 s
per end, members at [0.176, 0.290]; ``benchmarks/bench_fairness.py --only trace``). Where every row's hyperplane meets at one point of S (a
constant model whose score is the threshold) no box around it closes, and the bound stays at the programme's.
"""

from __future__ import annotations

import heapq
import time

import numpy as np

__all__ = ["bnb_max", "step_bnb"]

_PAD = 1e-9  # relative padding of cuts and score intervals (rounding of losses and products)
_PENALTY = 1e3  # cost per unit violation of a cut in the elastic programme (any multiplier is valid)
_MAX_NODES = 200_000


class _Problem:
    def __init__(self, rs, P, p0, c, lr, ur, t, eps):
        from ..margin import margin_set

        ms = margin_set(rs)
        self.ms, self.eps, self.t = ms, float(eps), float(t)
        self.tm = ms.theta_min
        L = ms.hessian_cholesky()
        M = np.linalg.inv(L.T)  # θ = θ_min + M z
        # rotated to the principal directions of the open rows' scores (weighted): boxes aligned with them
        opn = (lr <= t) & (t < ur)
        if opn.any():
            A = np.sqrt(np.abs(c[opn]))[:, None] * (P[opn] @ M)
            M = M @ np.linalg.svd(A, full_matrices=True)[2].T
        self.M = M
        self.Pz = P @ self.M
        self.q = P @ self.tm + p0
        self.c, self.lr, self.ur = c, lr, ur
        self.absPz = np.abs(self.Pz)
        self.cuts_g: list = []
        self.cuts_h: list = []
        self.scale = float(np.abs(c).sum())

    def theta(self, z):
        return self.tm + self.M @ z

    def loss(self, th):
        return self.ms.orig.e_orig(th, self.ms.loss)

    def in_set(self, th):
        return self.loss(th) <= self.eps and float(th @ self.ms.B @ th) <= self.ms.r

    def tangents(self, z):
        """The tangent planes of L and of the ball at θ(z), as cuts ``g'z <= h`` in z (padded outward)."""
        ms, th = self.ms, self.theta(z)
        out = []
        # the loss (smoothed for the hinge: above the exact loss by at most its offset) is convex
        Lv, g = ms.orig.orig_parts(th, ms.loss, 1)[:2]
        gz = self.M.T @ g
        e = self.eps + ms.loss.offset
        out.append((gz, e - Lv + gz @ z + _PAD * (abs(e) + abs(Lv) + abs(gz) @ np.abs(z))))
        Bt = ms.B @ th
        qv = float(th @ Bt)
        gb = self.M.T @ (2 * Bt)
        out.append((gb, ms.r - qv + gb @ z + _PAD * (ms.r + qv + abs(gb) @ np.abs(z))))
        return out


def _row_max(c, gam, lr, ur, t):
    step = lambda s: np.where(s > t, c, 0.0)  # noqa: E731
    best = np.maximum(step(lr) - gam * lr, step(ur) - gam * ur)
    cross = (lr <= t) & (t <= ur)
    at_t = np.maximum(-gam * t, c - gam * t)
    return np.where(cross, np.maximum(best, at_t), best)


def _ranges(pb: _Problem, lo, hi):
    """Certified score ranges of the rows on the box ∩ S, or None when a tangent plane shows the box misses S."""
    zc, hw = 0.5 * (lo + hi), 0.5 * (hi - lo)
    cuts = pb.tangents(zc)
    for g, h in cuts:  # a tangent plane at the centre that the whole box violates: the box misses S
        if g @ zc - np.abs(g) @ hw > h:
            return None
    mid = pb.Pz @ zc + pb.q
    rad = pb.absPz @ hw
    pad = _PAD * (np.abs(pb.q) + pb.absPz @ np.abs(zc) + rad) + 1e-300
    lo_s = np.maximum(pb.lr, mid - rad - pad)
    hi_s = np.minimum(pb.ur, mid + rad + pad)
    if np.any(lo_s > hi_s):
        return None
    return lo_s, hi_s, cuts


def _certificate(pb: _Problem, lo, hi, lo_s, hi_s, gam, G, H, mu):
    """The dual bound of the module notes on the box, for multipliers ``gam`` (any) and ``mu`` (>= 0)."""
    zc, hw = 0.5 * (lo + hi), 0.5 * (hi - lo)
    rows = _row_max(pb.c, gam, lo_s, hi_s, pb.t)
    w = pb.Pz.T @ gam - G.T @ mu
    lin = float(w @ zc + np.abs(w) @ hw + gam @ pb.q + mu @ H)
    size = float(np.abs(rows).sum() + pb.scale + abs(lin) + np.abs(w) @ (np.abs(zc) + hw))
    return float(rows.sum()) + lin + 64 * np.finfo(float).eps * size * max(1, len(gam)) ** 0.5


def _separable(pb: _Problem, lo_s, hi_s):
    return float(np.where(lo_s > pb.t, pb.c, np.where(hi_s > pb.t, np.maximum(pb.c, 0.0), 0.0)).sum())


def _lp(pb: _Problem, lo, hi, lo_s, hi_s, centre_cuts):
    """``(bound, z, multipliers)`` on the box from the ramp programme (see the module notes)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    c, t = pb.c, pb.t
    opn = (lo_s <= t) & (t < hi_s)
    j = np.flatnonzero(opn)
    cj, lj, uj = c[j], lo_s[j], hi_s[j]
    pos = cj > 0
    scale = 1.0 + abs(t)
    ramp = np.where(pos, t - lj > 1e-12 * scale, uj - t > 1e-12 * scale)
    R = np.flatnonzero(ramp)
    a = np.where(pos, cj / np.where(pos, t - lj, 1.0), cj / np.where(pos, 1.0, uj - t))[R]
    anchor = np.where(pos, lj, t)[R]
    d, m = len(lo), len(j)
    cuts = centre_cuts + list(zip(pb.cuts_g, pb.cuts_h))
    G = np.array([g for g, _ in cuts])
    H = np.array([h for _, h in cuts])
    k = len(cuts)
    nr = len(R)
    A1 = sp.hstack(
        [
            sp.csr_matrix(-a[:, None] * pb.Pz[j[R]]),
            sp.csr_matrix((np.ones(nr), (np.arange(nr), R)), shape=(nr, m)),
            sp.csr_matrix((nr, k)),
        ]
    )
    A2 = sp.hstack([sp.csr_matrix(G), sp.csr_matrix((k, m)), -sp.eye(k)])
    A = sp.vstack([A1, A2], format="csr")
    b = np.r_[a * (pb.q[j[R]] - anchor), H]
    cost = np.r_[np.zeros(d), -np.ones(m), _PENALTY * pb.scale * np.ones(k)]
    bounds = np.vstack(
        [
            np.column_stack([lo, hi]),
            np.column_stack([np.full(m, -np.inf), np.maximum(cj, 0.0)]),
            np.column_stack([np.zeros(k), np.full(k, np.inf)]),
        ]
    )
    res = linprog(cost, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    if res.status != 0 or res.x is None:
        return np.inf, None, None
    pi = np.clip(-np.asarray(res.ineqlin.marginals), 0.0, None)
    gam = np.zeros(len(c))
    gam[j[R]] = pi[:nr] * a
    mult = (gam, G, H, pi[nr:])
    return _certificate(pb, lo, hi, lo_s, hi_s, *mult), res.x[:d], mult


def _into_set(pb: _Problem, th):
    tm = pb.tm
    if pb.in_set(th):  # an LP vertex sits on rows' threshold hyperplanes: moved off them (into S, by convexity),
        return tm + (1.0 - 1e-7) * (th - tm)  # so that every evaluation of the member rounds alike
    a, b = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (a + b)
        if pb.in_set(tm + mid * (th - tm)):
            a = mid
        else:
            b = mid
    return tm + a * (th - tm)


def step_bnb(rs, P, p0, c, lr, ur, t, eps, func, starts, time_limit=60.0, gap=0.0, progress=None):
    """Certified ``max_S Σ_j c_j 1[p_j'θ + p0_j > t]`` by branch and bound on boxes (see the module notes).

    ``lr``, ``ur``: certified score ranges of the rows over S; ``starts``: members (the best is the first
    incumbent); ``progress``: called with ``(processor seconds, bound, attained)`` about once a second.
    Returns ``(bound, members, info)``; ``info["trace"]`` lists the same triples."""
    from ._functionals import min_functionals

    t0 = time.process_time()
    pb = _Problem(rs, P, p0, c, lr, ur, t, eps)
    d = P.shape[1]

    def D(th):
        return float(c @ (P @ th + p0 > t))

    starts = [np.asarray(s) for s in np.atleast_2d(starts)] if len(starts) else [pb.tm]
    vals = [D(s) for s in starts]
    k = int(np.argmax(vals))
    inc, inc_th = vals[k], starts[k]
    # the root box: certified ranges of each z coordinate over S
    Lt = np.linalg.inv(pb.M)
    a, _, _ = min_functionals(rs, Lt, -(Lt @ pb.tm), eps, 1e-10, func)
    b, _, _ = min_functionals(rs, -Lt, Lt @ pb.tm, eps, 1e-10, func)
    lo0, hi0 = np.asarray(a, float), -np.asarray(b, float)
    padz = 1e-9 * (1.0 + np.maximum(np.abs(lo0), np.abs(hi0)))
    lo0, hi0 = lo0 - padz, hi0 + padz
    members = []
    heap: list = []
    count = 0
    nodes = 0

    def push(lo, hi, mult, parent=np.inf):
        """A box with the cheap bound (separable; the parent's multipliers; the parent's bound, valid on its part):
        its programme is solved when popped."""
        nonlocal count, nodes
        nodes += 1
        rg = _ranges(pb, lo, hi)
        if rg is None:
            return
        lo_s, hi_s, _ = rg
        bnd = min(parent, _separable(pb, lo_s, hi_s))
        if mult is not None:
            bnd = min(bnd, _certificate(pb, lo, hi, lo_s, hi_s, *mult))
        if bnd > inc:
            heapq.heappush(heap, (-bnd, count, lo, hi, None))
            count += 1

    push(lo0, hi0, None)
    n_lp = 0
    trace: list[tuple[float, float, float]] = []  # (processor seconds, bound, attained) every second or so
    while heap:
        ub = -heap[0][0]
        now = time.process_time() - t0
        if not trace or now - trace[-1][0] >= 1.0:
            trace.append((now, max(ub, inc), inc))
            if progress is not None:
                progress(trace[-1])
        if ub - inc <= gap or time.process_time() - t0 > time_limit or nodes > _MAX_NODES:
            break
        nb, _, lo, hi, mult = heapq.heappop(heap)
        if -nb <= inc:
            continue
        if mult is None:  # solve the box's programme, then put it back with its bound
            rg = _ranges(pb, lo, hi)
            lo_s, hi_s, centre = rg
            bnd, z, mult = _lp(pb, lo, hi, lo_s, hi_s, centre)
            n_lp += 1
            if z is None:
                mult = (np.zeros(len(c)), np.zeros((0, d)), np.zeros(0), np.zeros(0))
                bnd = -nb
            else:
                th = _into_set(pb, pb.theta(z))
                v = D(th)
                if v > inc:
                    inc, inc_th = v, th
                    members.append(th)
                thz = pb.theta(z)
                if not pb.in_set(thz) and len(pb.cuts_g) < 200:
                    for g, h in pb.tangents(z):
                        if g @ z > h:
                            pb.cuts_g.append(g)
                            pb.cuts_h.append(h)
            bnd = min(bnd, -nb)
            if bnd > inc:
                heapq.heappush(heap, (-bnd, count, lo, hi, mult))
                count += 1
            continue
        # split the side that carries the most open weight
        zc, hw = 0.5 * (lo + hi), 0.5 * (hi - lo)
        mid = pb.Pz @ zc + pb.q
        rad = pb.absPz @ hw
        opn = (np.maximum(pb.lr, mid - rad) <= t) & (t < np.minimum(pb.ur, mid + rad))
        score = hw * (np.abs(pb.c[opn]) @ pb.absPz[opn]) if opn.any() else hw
        i = int(np.argmax(score))
        for side in (0, 1):
            l2, h2 = lo.copy(), hi.copy()
            if side == 0:
                h2[i] = zc[i]
            else:
                l2[i] = zc[i]
            push(l2, h2, mult, -nb)
    ub = max(inc, -heap[0][0]) if heap else inc
    trace.append((time.process_time() - t0, ub, inc))
    info = {"nodes": nodes, "lps": n_lp, "cpu": trace[-1][0], "attained": inc, "open": len(heap), "trace": trace}
    return ub, members + [inc_th], info


def bnb_max(rs, spec, coef, lo_s, hi_s, eps, func, t, starts, time_limit, gap):
    """Certified ``max_S Σ_i coef_i 1[s_i > t]`` over the rows of ``spec`` (duplicates merged): ``(bound, members)``."""
    from ._step_bound import _kept_rows, _rows

    (P, p0, c, lr, ur), trivial = _kept_rows(_rows(spec, coef, lo_s, hi_s))
    if trivial is not None:
        return trivial
    b, members, _ = step_bnb(rs, P, p0, c, lr, ur, t, eps, func, starts, time_limit, gap)
    return b, members
