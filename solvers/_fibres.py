"""Fibres of the two-constraint problem (see :mod:`.two_constraint`): the problem data, the outer range of
the fibre coordinate, the two-multiplier dual on one fibre and the minimum of an upper envelope of quadratics."""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg, optimize

_EPS = np.finfo(float).eps


def _q(A, b, c, x):
    return float(x @ A @ x - 2 * b @ x + c)


class _Problem:
    def __init__(self, A0, b0, c0, A1, b1, c1, B, r, x_in):
        self.A0, self.b0, self.c0 = A0, b0, float(c0)
        self.A1, self.b1, self.c1 = A1, b1, float(c1)
        self.B, self.r, self.x_in = B, float(r), x_in
        self.p = A0.shape[0]
        # members keep g₁ below -margin, so that g₁ evaluated in any other rounding order is <= 0 too
        self.feas_tol = (1e-10 * (abs(self.c1) + abs(float(b1 @ x_in)) + abs(float(x_in @ A1 @ x_in))), 1e-10 * self.r)
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
            t *= 1 - 1e-13 * 4.0**_ if _ < 20 else 0.5
        return None


def _outer_range(pb: _Problem, v: np.ndarray) -> tuple[float, float]:
    """An interval containing v'x for every feasible x: each ellipsoid ``αg₁ + (1-α)g₂ <= 0`` (α ∈ [0, 1])
    contains the feasible set, so the intersection of their ranges does; α is optimised for each end
    (for the convex problem min/max v'x the best α gives the exact range, Slater holding)."""

    def ends(a):
        E = a * pb.A1 + (1 - a) * pb.B
        try:
            L = linalg.cholesky(E, lower=True)
        except linalg.LinAlgError:
            return -math.inf, math.inf
        xc = linalg.cho_solve((L, True), a * pb.b1)
        R = float(a * pb.b1 @ xc - a * pb.c1 + (1 - a) * pb.r)
        if R < 0:
            return -math.inf, math.inf
        w = float(v @ linalg.cho_solve((L, True), v))
        half = math.sqrt(R * w) * (1 + 1e-9) + 1e-12 * abs(float(v @ xc))
        return float(v @ xc) - half, float(v @ xc) + half

    lo, hi = -math.inf, math.inf
    for a in (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98):
        e = ends(a)
        lo, hi = max(lo, e[0]), min(hi, e[1])
    for k, sgn in ((0, -1.0), (1, 1.0)):
        opt = optimize.minimize_scalar(
            lambda a, k=k, sgn=sgn: sgn * ends(a)[k] if math.isfinite(ends(a)[k]) else 1e300,
            bounds=(1e-9, 1 - 1e-9),
            method="bounded",
            options={"xatol": 1e-6, "maxiter": 40},
        )
        e = ends(float(opt.x))
        lo, hi = max(lo, e[0]), min(hi, e[1])
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


def _msolve(L, rhs):
    """``M⁻¹ rhs`` from a Cholesky factor, or ``M⁺ rhs`` from ``("pinv", U, 1/λ)``."""
    if isinstance(L, tuple) and len(L) == 3 and L[0] == "pinv":
        _, U, inv = L
        return U @ ((U.T @ rhs) * (inv if np.ndim(rhs) == 1 else inv[:, None]))
    return linalg.cho_solve(L, rhs)


class _Fibres:
    """Two-multiplier duals on the fibres ``v'x = s``, x = s·u + P w."""

    def __init__(self, pb: _Problem, v: np.ndarray):
        self.pb = pb
        v = v / np.linalg.norm(v)
        self.u = v
        Qm, _ = np.linalg.qr(np.column_stack([v, np.eye(pb.p)]))
        self.P = Qm[:, 1 : pb.p]
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
        """``(a, b, c)`` of ψ(s) = min over the fibre of the Lagrangian at m, with the factor of P'HP; None
        where P'HP is not PSD. Positive definite: Cholesky. Singular: valid only when both right-hand sides
        (the fibre's linear terms at every s) lie in its range, then its pseudo-inverse (the dual's hard case,
        e.g. a direction such as an intercept along which the objective and the ball are flat)."""
        M, q, uHu, Ph, uh, C = self._combine(m)
        try:
            L = linalg.cho_factor(M, lower=True, check_finite=False)
            if not np.all(np.diag(L[0]) > 0):
                raise linalg.LinAlgError
        except linalg.LinAlgError:
            lam, U = linalg.eigh(M)
            scale = max(abs(lam[0]), abs(lam[-1]), 1e-300)
            if lam[0] < -1e-12 * scale:
                return None
            null = lam <= 1e-10 * scale
            for v in (q, Ph):
                if np.abs(U[:, null].T @ v).max(initial=0.0) > 1e-10 * (np.linalg.norm(v) + 1e-300):
                    return None
            inv = np.where(null, 0.0, 1.0 / np.where(null, 1.0, lam))
            L = ("pinv", U, inv)
        Mq, Mh = _msolve(L, q), _msolve(L, Ph)
        return np.array([uHu - q @ Mq, -2 * uh + 2 * q @ Mh, C - Ph @ Mh]), L

    def point(self, m, s, L):
        M, q, uHu, Ph, uh, C = self._combine(m)
        w = _msolve(L, Ph - s * q)
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
            # the fibre's dual is solved when x is feasible on it (to rounding) and complementary: f(x) - D = -m'g
            if g[0] <= pb.feas_tol[0] and g[1] <= pb.feas_tol[1] and abs(float(m @ g)) <= atol:
                break
            G = self.P.T @ np.column_stack([pb.A1 @ x - pb.b1, pb.B @ x])
            K = 2 * G.T @ _msolve(L, G)  # -(Hessian of the dual), PSD, possibly singular
            free = (m > 0) | (g > 0)
            if not free.any():
                break
            mu_min = 1e-12 * float(np.trace(K)) + 1e-300
            # Levenberg–Marquardt on the free multipliers: the damping rises until the step keeps P'HP ≻ 0
            # and does not lower the dual (K singular: parallel constraint gradients on the fibre).
            # Levenberg–Marquardt steps on both free multipliers and on each alone (one may sit at an edge of
            # definiteness, or K be singular: parallel constraint gradients on the fibre); the best one is taken.
            subsets = [free] + ([np.array([True, False]), np.array([False, True])] if free.all() else [])
            cands = []
            for sub in subsets:
                mu_s = mu_min
                for _ in range(12):
                    d = np.zeros(2)
                    try:
                        d[sub] = np.linalg.solve(K[np.ix_(sub, sub)] + mu_s * np.eye(int(sub.sum())), g[sub])
                    except np.linalg.LinAlgError:
                        mu_s *= 100.0
                        continue
                    mn = np.maximum(m + d, 0.0)
                    got = self.minorant(mn) if np.all(np.isfinite(mn)) else None
                    if got is not None:
                        Dn = float(got[0] @ (s * s, s, 1.0))
                        if Dn >= D:
                            cands.append((Dn, mn, got, d))
                            break
                    mu_s *= 30.0
                if cands and sub is free and cands[0][0] - D >= 0.25 * float(g @ d - 0.5 * d @ K @ d):
                    break  # the joint step achieved a quarter of its predicted increase: take it
            for i in range(
                2
            ):  # a multiplier whose constraint is slack may belong at 0 exactly (a pseudo-inverse there)
                if m[i] > 0 and g[i] < 0:
                    mn = m.copy()
                    mn[i] = 0.0
                    got = self.minorant(mn)
                    if got is not None and float(got[0] @ (s * s, s, 1.0)) >= D:
                        cands.append((float(got[0] @ (s * s, s, 1.0)), mn, got, mn - m))
            if not cands:
                break
            Dn, mn, got, d = max(cands, key=lambda c: c[0])
            small = Dn - D <= 4 * _EPS * abs(D)
            m, (coef, L), D = mn, got, Dn
            if small and np.abs(d).max() <= 1e-12 * (1.0 + np.abs(m).max()):
                break
        return coef, m, best_x, best_f
