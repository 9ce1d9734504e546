"""Global solver for QCQPs with two convex quadratic constraints (the CDT / two-trust-region problem).

Standard form: minimise ``f(x) = x'A₀x - 2b₀'x + c₀`` (A₀ symmetric, indefinite allowed) subject to
``g₁(x) = x'A₁x - 2b₁'x + c₁ <= 0`` (A₁ PSD) and ``g₂(x) = x'Bx - r <= 0`` (B PSD, r > 0), with a
feasible point ``x_in`` given (``g₁(x_in) < 0``: Slater).

Method
------
1. *Lagrangian in the first constraint, exact in the second.* For λ >= 0 the trust-region engine
   (:class:`~solvers.QCQPSequence`, certified) solves ``D(λ) = min_{g₂<=0} f + λg₁``; D is concave with
   slope ``g₁(x_λ)``, bisected to its maximum. If some λ gives a minimiser with ``g₁ = 0`` (or λ = 0
   with ``g₁ <= 0``), that minimiser is optimal: the usual S-lemma case.
2. *Jump* (duality gap): at the best λ* the minimiser jumps between two points x₋, x₊ on the
   boundary of the ball, and no multiplier pair attains the primal value. The Hessian
   ``H* = A₀ + λ*A₁ + ν*B`` is then singular along ``v ∝ x₋ - x₊`` and positive definite across it.
   Each *fibre* ``{x : v'x = s}`` is a two-constraint problem whose Lagrangian Hessian ``P'HP``
   (P spans v^⊥) is positive definite near (λ*, ν*): its two-multiplier dual is maximised by
   projected Newton, and any multipliers with ``P'HP ≻ 0`` (checked by Cholesky) give a quadratic
   ``ψ(s) <= Φ(s) = min {f : g <= 0, v'x = s}`` valid for every s (weak duality on each fibre).
3. *One-dimensional outer loop* (Kelley's cutting planes with quadratic minorants): the certified
   lower bound is ``min_{s∈[s_lo,s_hi]} max_k ψ_k(s)`` (computed exactly from the breakpoints of the
   quadratics; ``[s_lo, s_hi]`` is an outer range of v'x over the feasible set), the next fibre is its
   minimiser, and every fibre's solution (moved into the set along the segment to ``x_in``) is a
   feasible point. It stops when the best feasible value is within ``atol`` of the lower bound.

Every bound is a Lagrangian bound with its multipliers and a Cholesky proof of the Hessian's
definiteness, so the lower bound holds whatever the loop does; the gap left (if any) is reported.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from ._base import SolverStatus
from .trust_region import QCQPSequence

__all__ = ["TwoConstraintResult", "solve_two_constraint"]

_EPS = np.finfo(float).eps


@dataclass(frozen=True)
class TwoConstraintResult:
    """Answer of :func:`solve_two_constraint`.

    Attributes
    ----------
    x : ndarray
        The best feasible point found (``g₁(x) <= 0``, ``g₂(x) <= r·1e-12``).
    value : float
        ``f(x)``: an upper bound on the minimum.
    lower : float
        Certified lower bound on the minimum (``value - lower`` is the gap left).
    status : SolverStatus
        OPTIMAL when ``value - lower <= atol``, INACCURATE otherwise.
    info : dict
        ``method`` ("lagrangian" or "fibres"), ``fibres`` solved, ``lambda``/``nu`` multipliers.
    """

    x: np.ndarray
    value: float
    lower: float
    status: SolverStatus
    info: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return max(0.0, self.value - self.lower)


def _q(A, b, c, x):
    return float(x @ A @ x - 2 * b @ x + c)


class _Problem:
    def __init__(self, A0, b0, c0, A1, b1, c1, B, r, x_in):
        self.A0, self.b0, self.c0 = A0, b0, float(c0)
        self.A1, self.b1, self.c1 = A1, b1, float(c1)
        self.B, self.r, self.x_in = B, float(r), x_in
        self.p = A0.shape[0]
        # members keep g₁ below -margin, so that g₁ evaluated in any other rounding order is <= 0 too
        self.margin = 1e-13 * (abs(self.c1) + 2 * abs(float(b1 @ x_in)) + abs(float(x_in @ A1 @ x_in)))

    def f(self, x):
        return _q(self.A0, self.b0, self.c0, x)

    def g1(self, x):
        return _q(self.A1, self.b1, self.c1, x)

    def g2(self, x):
        return float(x @ self.B @ x) - self.r

    def feasible(self, x) -> np.ndarray | None:
        """x moved along the segment to ``x_in`` until both constraints hold (both sets are convex, so the
        feasible part of the segment is ``[0, t*]``; t* from the two quadratics in t, then checked)."""
        if self.g1(x) <= -self.margin and self.g2(x) <= 1e-12 * self.r:
            return x
        d = x - self.x_in
        t = 1.0
        for A, b, c in ((self.A1, self.b1, self.c1 + self.margin), (self.B, np.zeros(self.p), -self.r * (1 + 1e-12))):
            Ad = A @ d
            al, be, ga = float(d @ Ad), float(2 * (self.x_in @ Ad) - 2 * b @ d), _q(A, b, c, self.x_in)
            if ga >= 0:
                return None if ga > 0 or A is self.A1 else self.x_in
            if al * t * t + be * t + ga > 0:  # the positive root of al t² + be t + ga (ga < 0: one root > 0)
                disc = math.sqrt(max(be * be - 4 * al * ga, 0.0))
                root = (-2 * ga) / (be + disc) if be + disc > 0 else t
                t = min(t, root)
        for _ in range(60):
            y = self.x_in + t * d
            if self.g1(y) <= -self.margin and self.g2(y) <= 1e-12 * self.r:
                return y
            t *= 1 - 1e-14 if _ < 30 else 0.5
        return None


def _outer_range(pb: _Problem, v: np.ndarray) -> tuple[float, float]:
    """An interval containing v'x for every feasible x: intersection of the ranges over the ellipsoids
    ``αg₁ + (1-α)g₂ <= 0`` (each contains the feasible set)."""
    lo, hi = -math.inf, math.inf
    for a in (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98):
        E = a * pb.A1 + (1 - a) * pb.B
        try:
            L = linalg.cholesky(E, lower=True)
        except linalg.LinAlgError:
            continue
        xc = linalg.cho_solve((L, True), a * pb.b1)
        R = float(a * pb.b1 @ xc - a * pb.c1 + (1 - a) * pb.r)
        if R < 0:
            continue
        w = float(v @ linalg.cho_solve((L, True), v))
        half = math.sqrt(R * w) * (1 + 1e-9) + 1e-12 * abs(float(v @ xc))
        lo, hi = max(lo, float(v @ xc) - half), min(hi, float(v @ xc) + half)
    return lo, hi


def _min_max_quadratics(Q: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    """``min_{s∈[lo,hi]} max_k (a_k s² + b_k s + c_k)`` and its argument (rows of Q: a, b, c)."""
    a, b, c = Q[:, 0], Q[:, 1], Q[:, 2]
    cand = [lo, hi]
    conv = a > 0
    cand.extend((-b[conv] / (2 * a[conv])).tolist())
    i, j = np.triu_indices(len(a), 1)
    da, db, dc = a[i] - a[j], b[i] - b[j], c[i] - c[j]
    lin = np.abs(da) <= 1e-14 * (np.abs(a[i]) + np.abs(a[j]) + 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        cand.extend((-dc[lin] / db[lin]).tolist())
        q = ~lin
        disc = db[q] ** 2 - 4 * da[q] * dc[q]
        ok = disc >= 0
        sq = np.sqrt(np.where(ok, disc, 0.0))
        for sgn in (1.0, -1.0):
            cand.extend(((-db[q] + sgn * sq) / (2 * da[q]))[ok].tolist())
    s = np.array([x for x in cand if np.isfinite(x)])
    s = s[(s >= lo) & (s <= hi)]
    vals = (a[None, :] * s[:, None] ** 2 + b[None, :] * s[:, None] + c[None, :]).max(axis=1)
    k = int(np.argmin(vals))
    return float(vals[k]), float(s[k])


class _Fibres:
    """Two-multiplier duals on the fibres ``v'x = s``, x = s·u + P w."""

    def __init__(self, pb: _Problem, v: np.ndarray):
        self.pb = pb
        v = v / np.linalg.norm(v)
        self.u = v
        Qm, _ = np.linalg.qr(np.column_stack([v, np.eye(pb.p)]))
        self.P = Qm[:, 1:pb.p]
        P = self.P
        self.PA = [P.T @ pb.A0 @ P, P.T @ pb.A1 @ P, P.T @ pb.B @ P]
        self.PAu = [P.T @ (pb.A0 @ v), P.T @ (pb.A1 @ v), P.T @ (pb.B @ v)]
        self.uAu = [float(v @ pb.A0 @ v), float(v @ pb.A1 @ v), float(v @ pb.B @ v)]
        self.Pb = [P.T @ pb.b0, P.T @ pb.b1, np.zeros(P.shape[1])]
        self.ub = [float(v @ pb.b0), float(v @ pb.b1), 0.0]
        self.cs = [pb.c0, pb.c1, -pb.r]

    def _combine(self, m):
        w = (1.0, m[0], m[1])
        M = sum(wi * X for wi, X in zip(w, self.PA))
        q = sum(wi * X for wi, X in zip(w, self.PAu))
        uHu = sum(wi * X for wi, X in zip(w, self.uAu))
        Ph = sum(wi * X for wi, X in zip(w, self.Pb))
        uh = sum(wi * X for wi, X in zip(w, self.ub))
        C = sum(wi * X for wi, X in zip(w, self.cs))
        return M, q, uHu, Ph, uh, C

    def minorant(self, m):
        """``(a, b, c)`` of ψ(s) = min over the fibre of the Lagrangian at m, or None (P'HP not ≻ 0)."""
        M, q, uHu, Ph, uh, C = self._combine(m)
        try:
            L = linalg.cho_factor(M, lower=True, check_finite=False)
        except linalg.LinAlgError:
            return None
        if not np.all(np.diag(L[0]) > 0):
            return None
        Mq, Mh = linalg.cho_solve(L, q), linalg.cho_solve(L, Ph)
        return np.array([uHu - q @ Mq, -2 * uh + 2 * q @ Mh, C - Ph @ Mh]), L

    def point(self, m, s, L=None):
        M, q, uHu, Ph, uh, C = self._combine(m)
        if L is None:
            L = linalg.cho_factor(M, lower=True, check_finite=False)
        w = linalg.cho_solve(L, Ph - s * q)
        return s * self.u + self.P @ w, L

    def solve(self, s, m0, upper, atol, max_iter=60):
        """Maximise the fibre's dual from m0. Returns (minorant coefficients, multipliers, best feasible x,
        its value); the minorant is None when m0 already fails to give a positive definite P'HP."""
        pb = self.pb
        m = np.maximum(np.asarray(m0, dtype=float), 0.0)
        got = self.minorant(m)
        bump = 1e-8 * max(m[1], 1.0)
        while got is None and bump < 1e12 * max(m[1], 1.0):  # add curvature through the ball's multiplier
            got = self.minorant(m + (0.0, bump))
            if got is not None:
                m = m + (0.0, bump)
            bump *= 10.0
        if got is None:
            return None, m, None, math.inf
        coef, L = got
        D = float(coef @ (s * s, s, 1.0))
        best_x, best_f = None, math.inf
        for _ in range(max_iter):
            x, _ = self.point(m, s, L)
            g = np.array([pb.g1(x), pb.g2(x)])
            xf = pb.feasible(x)
            if xf is not None:
                fx = pb.f(xf)
                if fx < best_f:
                    best_x, best_f = xf, fx
            if best_f - D <= atol or D >= upper:
                break
            G = self.P.T @ np.column_stack([pb.A1 @ x - pb.b1, pb.B @ x])
            K = 2 * G.T @ linalg.cho_solve(L, G)
            free = (m > 0) | (g > 0)
            d = np.zeros(2)
            if free.all():
                try:
                    d = np.linalg.solve(K + 1e-14 * np.trace(K) * np.eye(2), g)
                except np.linalg.LinAlgError:
                    break
            elif free.any():
                i = int(np.argmax(free))
                d[i] = g[i] / K[i, i] if K[i, i] > 0 else 0.0
            if not np.all(np.isfinite(d)) or not np.any(d):
                break
            t, improved = 1.0, False
            for _ in range(50):
                mn = np.maximum(m + t * d, 0.0)
                got = self.minorant(mn)
                if got is not None:
                    Dn = float(got[0] @ (s * s, s, 1.0))
                    if Dn >= D:
                        improved = True
                        break
                t *= 0.5
            if not improved or Dn - D <= 4 * _EPS * abs(D):
                if improved:
                    m, (coef, L), D = mn, got, Dn
                break
            m, (coef, L), D = mn, got, Dn
        return coef, m, best_x, best_f


def solve_two_constraint(A0, b0, c0, A1, b1, c1, B, r, x_in, *, atol: float, max_fibres: int = 60,
                         seq: QCQPSequence | None = None, lam_bracket: tuple | None = None) -> TwoConstraintResult:
    """Globally minimise ``f`` subject to ``g₁ <= 0`` and ``x'Bx <= r`` (see the module docstring).

    ``x_in``: a feasible point with ``g₁(x_in) < 0``. ``atol``: absolute gap to reach. ``seq``: a
    :class:`QCQPSequence` of the family ``A₀ + λA₁, b₀ + λb₁`` on the same ball (built when omitted).
    ``lam_bracket``: ``(λ₋, λ₊, x₋, x₊)``, multipliers believed to bracket the one where the minimiser
    crosses ``g₁ = 0`` with their minimisers (used when verified; otherwise the bracket is searched from λ = 0).
    """
    A0, A1, B = (np.asarray(M, dtype=float) for M in (A0, A1, B))
    b0, b1, x_in = (np.asarray(v, dtype=float) for v in (b0, b1, x_in))
    pb = _Problem(A0, b0, c0, A1, b1, c1, B, r, x_in)
    if seq is None:
        seq = QCQPSequence(A0, b0, B, r, A1=A1, b1=b1)
    best = {"x": x_in, "f": pb.f(x_in)}

    def offer(x):
        xf = pb.feasible(x) if x is not None else None
        if xf is not None:
            fx = pb.f(xf)
            if fx < best["f"]:
                best["x"], best["f"] = xf, fx

    lam_best = {"D": -math.inf, "lam": math.nan, "nu": math.nan}
    sols = {}

    def dual(lam):
        res = seq.solve(lam, check=False, certificate="reduced")
        if res.status is not SolverStatus.OPTIMAL:
            sols[lam] = None
            return None
        D = res.objective + pb.c0 + lam * pb.c1
        if D > lam_best["D"]:
            lam_best.update(D=D, lam=lam, nu=float(res.multiplier))
        offer(res.x)
        sols[lam] = (res.x, pb.g1(res.x), float(res.multiplier), D)
        return sols[lam]

    def done():
        return best["f"] - lam_best["D"] <= atol

    info = {"method": "lagrangian", "fibres": 0}
    lo, hi = 0.0, None
    if lam_bracket is not None:  # a caller's bracket (λ₋, λ₊, x₋, x₊): minimisers at λ₋ (g₁ > 0) and λ₊ (g₁ <= 0)
        l0, l1, x0, x1 = lam_bracket
        a, b = dual(float(l0)), dual(float(l1))
        if a is not None and b is not None and 0 <= l0 < l1 and pb.g1(x0) > 0 >= pb.g1(x1):
            # at a jump the solver may return either minimiser: keep the caller's, when they are minimisers too
            for lam, x, st in ((l0, x0, a), (l1, x1, b)):
                Al, bl = seq.A0 + lam * seq.A1, seq.b0 + lam * seq.b1
                size = abs(float(x @ Al @ x)) + 2 * abs(float(bl @ x)) + abs(pb.c0 + lam * pb.c1)
                if abs(_q(Al, bl, pb.c0 + lam * pb.c1, x) - st[3]) <= 1e-8 * size and pb.g2(x) <= 1e-9 * pb.r:
                    sols[float(lam)] = (x, pb.g1(x), st[2], st[3])
            if sols[float(l0)][1] > 0 >= sols[float(l1)][1]:
                lo, hi = float(l0), float(l1)
    if hi is None:
        st = dual(0.0)
        if st is not None and st[1] <= 0:
            hi = 0.0
        else:
            lam = max(1.0, abs(pb.c0) / max(abs(pb.c1), 1e-300))
            for _ in range(200):
                st = dual(lam)
                if st is not None and st[1] <= 0:
                    hi = lam
                    break
                lo, lam = lam, lam * 4.0
    if hi is None:
        return _result(pb, best, lam_best, atol, info)
    it = 0
    while hi > 0 and not done() and hi - lo > 1e-8 * hi:
        a, b = sols.get(lo), sols.get(hi)
        mid = 0.5 * (lo + hi)
        it += 1
        if it % 3 and a is not None and b is not None and a[1] > 0 >= b[1] and a[1] - b[1] > 0:
            sec = lo + (hi - lo) * a[1] / (a[1] - b[1])
            if lo + 0.05 * (hi - lo) < sec < hi - 0.05 * (hi - lo):
                mid = sec
        st = dual(mid)
        if st is not None and st[1] <= 0:
            hi = mid
        else:
            lo = mid
    a, b = sols.get(lo), sols.get(hi)
    if a is not None and b is not None:  # the chord between the bracketing minimisers
        for t in np.linspace(0.0, 1.0, 17)[1:-1]:
            offer(b[0] + t * (a[0] - b[0]))
    if done():
        return _result(pb, best, lam_best, atol, info)
    a, b = sols.get(lo), sols.get(hi)
    if a is None or b is None or np.linalg.norm(a[0] - b[0]) == 0:
        return _result(pb, best, lam_best, atol, info)
    # A jump: one-dimensional search over the fibres v'x = s across it.
    info["method"] = "fibres"
    v = a[0] - b[0]
    fib = _Fibres(pb, v / np.linalg.norm(v))
    s_lo, s_hi = _outer_range(pb, fib.u)
    if not (np.isfinite(s_lo) and np.isfinite(s_hi)) or s_lo > s_hi:
        return _result(pb, best, lam_best, atol, info)
    lam_s, nu_s = lam_best["lam"], lam_best["nu"]
    quads = [np.array([0.0, 0.0, lam_best["D"]])]
    m_start = np.array([lam_s, nu_s])
    got = fib.minorant(m_start)
    if got is not None:
        quads.append(got[0])
    lower = lam_best["D"]
    tried, starts = [], [(math.inf, m_start)]
    todo = [float(fib.u @ best["x"]), float(fib.u @ a[0]), float(fib.u @ b[0])]
    for k in range(max_fibres):
        lower, s_star = _min_max_quadratics(np.array(quads), s_lo, s_hi)
        if best["f"] - lower <= atol:
            break
        queued = bool(todo)
        s = min(max(todo.pop(0) if queued else s_star, s_lo), s_hi)
        if any(abs(s - t) <= 1e-12 * max(abs(s), abs(s_hi - s_lo)) for t in tried):
            if queued:
                continue
            break
        tried.append(s)
        near = min(starts, key=lambda e: abs(e[0] - s))[1]  # warm start: the nearest fibre's multipliers
        coef, m, x, fx = fib.solve(s, near, best["f"], 0.25 * atol)
        info["fibres"] = k + 1
        if coef is not None:
            starts.append((s, m))
        if coef is not None:
            quads.append(coef)
        if x is not None and fx < best["f"]:
            best["x"], best["f"] = x, fx
    lower = max(lower, _min_max_quadratics(np.array(quads), s_lo, s_hi)[0])
    lam_best["D"] = max(lam_best["D"], lower)
    return _result(pb, best, lam_best, atol, info)


def _result(pb, best, lam_best, atol, info):
    info = dict(info, **{"lambda": lam_best["lam"], "nu": lam_best["nu"]})
    lower = min(lam_best["D"], best["f"])
    status = SolverStatus.OPTIMAL if best["f"] - lower <= atol else SolverStatus.INACCURATE
    return TwoConstraintResult(best["x"], float(best["f"]), float(lower), status, info)
