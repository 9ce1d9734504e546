"""Fibres of the two-constraint problem (see :mod:`.two_constraint`): the problem data, the outer range of
the fibre coordinate, the two-multiplier dual on one fibre and the minimum of an upper envelope of quadratics.

The matrices are small (p is a model's number of coefficients), so the cost is the number of calls, not their
flops: the fibre data are stacked once per direction, each dual evaluation is one Cholesky factorisation
(LAPACK ``potrf``, whose success proves the definiteness the minorant needs) and one two-column solve, and the
fibre's point and constraint gradients are read off that solve in the reduced coordinates."""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from ._secular import eigh

_EPS = np.finfo(float).eps
_F64 = (np.empty((1, 1)),)
_POTRF, _POTRS = linalg.get_lapack_funcs(("potrf", "potrs"), _F64)


def _q(A, b, c, x):
    return float((A @ x - 2 * b) @ x) + c


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
    """An interval containing v'x for every feasible x: each ellipsoid ``αg₁ + (1-α)g₂ <= 0`` (α ∈ (0, 1))
    contains the feasible set, so the intersection of their ranges does; α is optimised for each end (for the
    convex problem min/max v'x the best α gives the exact range, Slater holding).

    All the ellipsoids are diagonal in one basis W (``W'(A₁+B)W = I``, ``W'A₁W = Λ``), so each α costs O(p):
    a grid of α, then a finer grid around the best of each end."""
    S = pb.A1 + pb.B
    try:
        Lc = linalg.cholesky(S, lower=True)
    except linalg.LinAlgError:  # A₁ and B share a null direction: the set may be unbounded along v
        return -math.inf, math.inf
    T = linalg.solve_triangular(Lc, linalg.solve_triangular(Lc, pb.A1, lower=True).T, lower=True)
    lam, V = eigh(0.5 * (T + T.T))
    lam = np.clip(lam, 0.0, 1.0)
    W = linalg.solve_triangular(Lc, V, lower=True, trans="T")
    z, y = W.T @ v, W.T @ pb.b1

    def ends(a):
        a = a[:, None]
        d = a * lam + (1 - a) * (1 - lam)  # >= min(α, 1-α) > 0
        a = a[:, 0]
        vxc = a * (z * y / d).sum(1)
        R = a * a * (y * y / d).sum(1) - a * pb.c1 + (1 - a) * pb.r
        w = (z * z / d).sum(1)
        half = np.sqrt(np.maximum(R, 0.0) * w)
        # the basis is exact to ~cond(S)·eps: each end is widened well beyond that
        slack = 1e-8 * half + 1e-10 * np.abs(vxc) + 1e-12 * math.sqrt(float(v @ v))
        lo, hi = vxc - half - slack, vxc + half + slack
        bad = R < 0
        return np.where(bad, -np.inf, lo), np.where(bad, np.inf, hi)

    grid = 1.0 / (1.0 + np.exp(-np.linspace(-23.0, 23.0, 93)))  # α from 1e-10 to 1 - 1e-10, logit-spaced
    lo, hi = ends(grid)
    out_lo, out_hi = float(lo.max()), float(hi.min())
    for k in (int(np.argmax(lo)), int(np.argmin(hi))):
        a0, a1 = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
        fine = np.linspace(a0, a1, 65)
        flo, fhi = ends(fine)
        out_lo, out_hi = max(out_lo, float(flo.max())), min(out_hi, float(fhi.min()))
    return out_lo, out_hi


def _min_max_quadratics(Q: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    """``min_{s∈[lo,hi]} max_k (a_k s² + b_k s + c_k)`` and its argument (rows of Q: a, b, c)."""
    a, b, c = Q[:, 0], Q[:, 1], Q[:, 2]
    parts = [np.array([lo, hi])]
    conv = a > 0
    parts.append(-b[conv] / (2 * a[conv]))
    i, j = np.triu_indices(len(a), 1)
    da, db, dc = a[i] - a[j], b[i] - b[j], c[i] - c[j]
    lin = np.abs(da) <= 1e-14 * (np.abs(a[i]) + np.abs(a[j]) + 1e-300)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        parts.append(-dc[lin] / db[lin])
        q = ~lin
        da, db, dc = da[q], db[q], dc[q]
        disc = db**2 - 4 * da * dc
        ok = disc >= 0
        sq = np.sqrt(disc[ok])
        parts.append((-db[ok] + sq) / (2 * da[ok]))
        parts.append((-db[ok] - sq) / (2 * da[ok]))
    s = np.concatenate(parts)
    s = s[np.isfinite(s) & (s >= lo) & (s <= hi)]
    vals = (a[None, :] * s[:, None] ** 2 + b[None, :] * s[:, None] + c[None, :]).max(axis=1)
    k = int(np.argmin(vals))
    return float(vals[k]), float(s[k])


class _Factor:
    """``M⁻¹`` from a Cholesky factor (``pinv`` None) or ``M⁺`` from ``(U, 1/λ)`` (singular M)."""

    __slots__ = ("c", "pinv")

    def __init__(self, c, pinv=None):
        self.c, self.pinv = c, pinv

    def solve(self, rhs):
        if self.pinv is not None:
            U, inv = self.pinv
            return U @ ((U.T @ rhs) * (inv if rhs.ndim == 1 else inv[:, None]))
        x, info = _POTRS(self.c, rhs, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("potrs failed")
        return x


class _Fibres:
    """Two-multiplier duals on the fibres ``v'x = s``, x = s·u + P w.

    Stacked over (objective, g₁, g₂): ``P'A P``, ``P'A u``, ``u'A u``, ``P'b``, ``u'b`` and the constants, so that
    the fibre Lagrangian at multipliers m = (λ, ν) has weights (1, λ, ν) on each."""

    def __init__(self, pb: _Problem, v: np.ndarray):
        self.pb = pb
        u = v / np.linalg.norm(v)
        self.u = u
        Qm, _ = np.linalg.qr(np.column_stack([u, np.eye(pb.p)]))
        self.P = P = Qm[:, 1 : pb.p]
        mats = (pb.A0, pb.A1, pb.B)
        AP = [A @ P for A in mats]
        self.M3 = np.array([0.5 * (P.T @ X + (P.T @ X).T) for X in AP])
        self.q3 = np.array([X.T @ u for X in AP])
        self.uAu3 = np.array([float(u @ A @ u) for A in mats])
        self.h3 = np.array([P.T @ pb.b0, P.T @ pb.b1, np.zeros(P.shape[1])])
        self.uh3 = np.array([float(u @ pb.b0), float(u @ pb.b1), 0.0])
        self.c3 = np.array([pb.c0, pb.c1, -pb.r])

    def minorant(self, m):
        """``(a, b, c)`` of ψ(s) = min over the fibre of the Lagrangian at m, with what the fibre's point needs
        (factor, M⁻¹q, M⁻¹h, q, h); None where P'HP is not PSD. Positive definite: Cholesky. Singular: valid
        only when both right-hand sides (the fibre's linear terms at every s) lie in its range, then its
        pseudo-inverse (the dual's hard case, e.g. a direction such as an intercept along which the objective
        and the ball are flat)."""
        w3 = np.array([1.0, m[0], m[1]])
        M = self.M3[0] + m[0] * self.M3[1] + m[1] * self.M3[2]
        q, h = w3 @ self.q3, w3 @ self.h3
        c, info = _POTRF(M, lower=1, clean=0, overwrite_a=0)
        if info == 0 and np.all(np.diag(c) > 0):
            fac = _Factor(c)
        else:
            lam, U = eigh(M)
            scale = max(abs(lam[0]), abs(lam[-1]), 1e-300)
            if not np.all(np.isfinite(lam)) or lam[0] < -1e-12 * scale:
                return None
            null = lam <= 1e-10 * scale
            for vec in (q, h):
                if np.abs(U[:, null].T @ vec).max(initial=0.0) > 1e-10 * (np.linalg.norm(vec) + 1e-300):
                    return None
            fac = _Factor(None, (U, np.where(null, 0.0, 1.0 / np.where(null, 1.0, lam))))
        sol = fac.solve(np.column_stack([q, h]))
        Mq, Mh = sol[:, 0], sol[:, 1]
        coef = np.array(
            [float(w3 @ self.uAu3 - q @ Mq), float(-2 * (w3 @ self.uh3) + 2 * q @ Mh), float(w3 @ self.c3 - h @ Mh)]
        )
        return coef, (fac, Mq, Mh)

    def point(self, s, aux):
        """The fibre's minimiser of the Lagrangian at s: ``(x, w)``."""
        _, Mq, Mh = aux
        w = Mh - s * Mq
        return s * self.u + self.P @ w, w

    def _grad(self, s, w):
        """``P'∇g/2`` of both constraints at x = s·u + P w (columns), in the reduced coordinates."""
        return np.column_stack([s * self.q3[1] + self.M3[1] @ w - self.h3[1], s * self.q3[2] + self.M3[2] @ w])

    def solve(self, s, m0, upper, atol, max_iter=60):
        """Maximise the fibre's dual from m0. Returns (minorant coefficients, multipliers, best feasible x,
        its value, converged); the minorant is None when no multipliers near m0 give a positive semi-definite
        P'HP. ``converged``: the dual was maximised (its value is the fibre's minimum, to ``atol``)."""
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
            return None, m, None, math.inf, False, math.nan
        coef, aux = got
        svec = np.array([s * s, s, 1.0])
        D = D0 = float(coef @ svec)
        best_x, best_f, conv = None, math.inf, False
        for _ in range(max_iter):
            x, w = self.point(s, aux)
            g = np.array([pb.g1(x), pb.g2(x)])
            xf = pb.feasible(x)
            if xf is not None:
                fx = pb.f(xf)
                if fx < best_f:
                    best_x, best_f = xf, fx
            if D >= upper:
                break
            # the fibre's dual is solved when x is feasible on it (to rounding) and complementary: f(x) - D = -m'g
            if g[0] <= pb.feas_tol[0] and g[1] <= pb.feas_tol[1] and abs(float(m @ g)) <= atol:
                conv = True
                break
            G = self._grad(s, w)
            K = 2 * G.T @ aux[0].solve(G)  # -(Hessian of the dual), PSD, possibly singular
            free = (m > 0) | (g > 0)
            if not free.any():
                conv = True  # both multipliers at 0 with slack constraints: the dual's maximum
                break
            step = self._step(s, svec, m, g, K, D, free)
            if step is None:
                break
            Dn, mn, got, d, pred = step
            small = Dn - D <= 4 * _EPS * abs(D)
            # progress stalls, far below Newton's prediction (a dual whose supremum is where P'HP turns singular,
            # e.g. a fibre at the edge of the set): the minorant so far is kept
            stalled = Dn - D <= 1e-3 * (Dn - D0) and Dn - D <= 0.1 * pred
            m, (coef, aux), D = mn, got, Dn
            if stalled or (small and np.abs(d).max() <= 1e-12 * (1.0 + np.abs(m).max())):
                break
        return coef, m, best_x, best_f, conv, (self._curvature(s, m, coef, aux, w) if conv else math.nan)

    def _curvature(self, s, m, coef, aux, w):
        """Φ''(s) at a solved fibre, Φ(s) = min over the fibre: differentiating the fibre's KKT equations in s
        with its active constraints (m_i > 0) kept active gives ``2(a + z'K⁻¹z)``, a the minorant's curvature,
        ``K = G'M⁻¹G`` and ``z = r - G'M⁻¹q`` (G, r: the constraint gradients' P and u components)."""
        act = m > 0
        if not act.any():
            return 2 * float(coef[0])
        G = self._grad(s, w)[:, act]
        r = np.array([s * self.uAu3[k] + self.q3[k] @ w - self.uh3[k] for k in (1, 2)])[act]
        fac, Mq, _ = aux
        z = r - G.T @ Mq
        try:
            return 2 * (float(coef[0]) + float(z @ np.linalg.solve(G.T @ fac.solve(G), z)))
        except np.linalg.LinAlgError:
            return math.nan

    def _step(self, s, svec, m, g, K, D, free):
        """One ascent step of the fibre's dual: ``(D, m, minorant, step)`` or None when none raises it.

        Levenberg–Marquardt steps on both free multipliers, and on each alone (one may sit at an edge of
        definiteness, or K be singular: parallel constraint gradients on the fibre); the damping rises until the
        step keeps P'HP ⪰ 0 and does not lower the dual; the joint step is taken once it achieves a quarter of
        its predicted increase."""
        mu_min = 1e-12 * float(np.trace(K)) + 1e-300
        cands = []
        # projected Newton with backtracking: the usual step, cheap where the dual is smooth
        d = np.zeros(2)
        try:
            d[free] = np.linalg.solve(K[np.ix_(free, free)] + mu_min * np.eye(int(free.sum())), g[free])
        except np.linalg.LinAlgError:
            d[:] = 0.0
        if np.all(np.isfinite(d)) and float(g @ d) > 0:
            t = 1.0
            for _ in range(8):
                mn = np.maximum(m + t * d, 0.0)
                got = self.minorant(mn)
                if got is not None:
                    Dn = float(got[0] @ svec)
                    if Dn >= D + 1e-4 * t * float(g @ d):
                        cands.append((Dn, mn, got, mn - m, 0.5 * float(g @ d)))
                        break
                t *= 0.25
        if cands:
            return cands[0]
        subsets = [free] + ([np.array([True, False]), np.array([False, True])] if free.all() else [])
        for sub in subsets:
            mu_s = mu_min
            Ks, gs = K[np.ix_(sub, sub)], g[sub]
            for _ in range(12):
                d = np.zeros(2)
                try:
                    d[sub] = np.linalg.solve(Ks + mu_s * np.eye(len(gs)), gs)
                except np.linalg.LinAlgError:
                    mu_s *= 100.0
                    continue
                mn = np.maximum(m + d, 0.0)
                got = self.minorant(mn) if np.all(np.isfinite(mn)) else None
                if got is not None:
                    Dn = float(got[0] @ svec)
                    if Dn >= D:
                        cands.append((Dn, mn, got, d, math.inf))
                        break
                mu_s *= 30.0
            if cands and sub is free and cands[0][0] - D >= 0.25 * float(g @ d - 0.5 * d @ K @ d):
                return cands[0]
        for i in range(2):  # a multiplier whose constraint is slack may belong at 0 exactly (a pseudo-inverse there)
            if m[i] > 0 and g[i] < 0:
                mn = m.copy()
                mn[i] = 0.0
                got = self.minorant(mn)
                if got is not None and float(got[0] @ svec) >= D:
                    cands.append((float(got[0] @ svec), mn, got, mn - m, math.inf))
        return max(cands, key=lambda c: c[0]) if cands else None
