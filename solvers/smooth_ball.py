"""Projected Newton for smooth convex objectives on a norm ball with boxed free directions.

Standard form: minimise a smooth convex ``f(x)`` subject to ``x'Bx <= r`` and
``lo_k <= x_k <= hi_k`` for the coordinates k that B leaves free (B's rows and
columns for them are zero; B is positive definite on the others). The free
coordinates are those of an unpenalised intercept: a bounded interval keeps the
feasible set K compact, which is what makes the certificate below finite.

Each iteration minimises the local quadratic model ``g'Δ + ½Δ'(H + δI)Δ`` *exactly*
over K (a convex one-ball QCQP: eigendecomposition and the secular equation; a free coordinate whose model
optimum leaves its interval is fixed at the violated end, which is exact for one
free coordinate since the model is convex) and backtracks along the segment, which
stays in K because K is convex. Near the optimum the steps are Newton steps on the
constrained problem (quadratic convergence); δ grows only when a step fails.

Certificate (valid for any x in K, whatever the solver's accuracy): by convexity
``f(z) >= f(x) + g'(z - x)`` for every z, so
``f* >= f(x) + min_{z ∈ K} g'(z - x) = f(x) - gap(x)`` with the Frank–Wolfe gap
``gap(x) = g'x + sqrt(r · g_P' B_P⁻¹ g_P) - Σ_k min(g_k lo_k, g_k hi_k)`` (P: the
penalised coordinates, k: the free ones). ``info["lower_bound"] = f(x) - gap(x)``
is a certified lower bound on the optimum; the gap vanishes at the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ._base import Certificate, Solver, SolverResult, SolverStatus

__all__ = ["SmoothBallProgram"]


class SmoothBallProgram(Solver):
    """``min f(x)  subject to  x'Bx <= r,  lo <= x[free] <= hi`` for smooth convex f (projected Newton).

    Parameters
    ----------
    B : ndarray of shape (p, p)
        Symmetric PSD; positive definite on the coordinates it does not leave free.
    r : float
        Ball radius squared, > 0.
    lo, hi : ndarray of shape (k,), optional
        Interval of each free coordinate of B (in increasing index order); finite for a
        finite certificate.
    tol : float, default=1e-10
        Stop when the Frank–Wolfe gap is below ``tol·max(1, |f|)``.
    max_iter : int, default=100

    Notes
    -----
    :meth:`minimize` takes an oracle ``f(x, order)`` returning ``(value,)`` for order 0,
    ``(value, gradient)`` for 1 and ``(value, gradient, Hessian)`` for 2.
    """

    backend = "smooth_ball_newton"

    def __init__(self, B, r, lo=None, hi=None, *, tol: float = 1e-10, max_iter: int = 100):
        B = np.asarray(B, dtype=float)
        p = B.shape[0]
        if B.shape != (p, p) or not np.all(np.isfinite(B)):
            raise ValueError(f"The 'B' parameter must be a finite square matrix. Got shape {B.shape} instead.")
        if not (np.isfinite(r) and r > 0):
            raise ValueError(f"The 'r' parameter must be a finite float > 0. Got {r!r} instead.")
        self.B, self.r, self.p, self.tol, self.max_iter = 0.5 * (B + B.T), float(r), p, tol, max_iter
        self.free = np.where(np.all(self.B == 0, axis=1))[0]
        self.pen = np.setdiff1d(np.arange(p), self.free)
        Bp = self.B[np.ix_(self.pen, self.pen)]
        ev = np.linalg.eigvalsh(Bp) if len(self.pen) else np.ones(1)
        if ev[0] <= 1e-12 * max(ev[-1], 1e-300):
            raise ValueError("The 'B' parameter must be positive definite on its penalised coordinates.")
        self._Bp_inv = np.linalg.inv(Bp) if len(self.pen) else np.zeros((0, 0))
        k = len(self.free)
        self.lo = np.full(k, -np.inf) if lo is None else np.asarray(lo, dtype=float).ravel()
        self.hi = np.full(k, np.inf) if hi is None else np.asarray(hi, dtype=float).ravel()
        if self.lo.shape != (k,) or self.hi.shape != (k,) or np.any(self.lo > self.hi):
            raise ValueError(f"The 'lo'/'hi' parameters must be {k} ordered bounds of the free coordinates.")
        self._Lp = np.linalg.cholesky(Bp)
        self._Lp_inv = np.linalg.inv(self._Lp)

    # ------------------------------------------------------------------ geometry of K
    def project(self, x: np.ndarray) -> np.ndarray:
        """A point of K near x (scaled into the ball, free coordinates clipped)."""
        x = np.array(x, dtype=float)
        xp = x[self.pen]
        nb = float(xp @ self.B[np.ix_(self.pen, self.pen)] @ xp)
        if nb > self.r:
            x[self.pen] = xp * math.sqrt(self.r / nb) * (1 - 1e-12)
        x[self.free] = np.clip(x[self.free], self.lo, self.hi)
        return x

    def support_min(self, g: np.ndarray) -> float:
        """``min_{z∈K} g'z`` in closed form (``-inf`` when K is unbounded along -g)."""
        gp, gf = g[self.pen], g[self.free]
        lin = -math.sqrt(max(self.r * float(gp @ self._Bp_inv @ gp), 0.0))
        with np.errstate(invalid="ignore"):
            fv = np.where(gf > 0, gf * self.lo, np.where(gf < 0, gf * self.hi, 0.0))
        if not np.all(np.isfinite(fv)):
            return -math.inf
        return lin + float(fv.sum())

    def gap(self, x: np.ndarray, g: np.ndarray) -> float:
        """Frank–Wolfe gap ``g'x - min_{z∈K} g'z`` (>= 0 up to rounding; inf when K is unbounded along -g)."""
        return max(float(g @ x) - self.support_min(g), 0.0)

    def _model_min(self, x, g, H, delta):
        """Exact minimiser over K of ``g'(z - x) + ½(z - x)'(H + δI)(z - x)`` (H + δI positive definite)."""
        A = 0.5 * (H + delta * np.eye(self.p))
        b = A @ x - 0.5 * g
        z = self._convex_qcqp(A, b, self.free)
        if z is None:
            return None
        f = self.free
        if len(f) and (np.any(z[f] < self.lo) or np.any(z[f] > self.hi)):
            fixed = np.clip(z[f], self.lo, self.hi)
            P = self.pen
            zp = self._convex_qcqp(A[np.ix_(P, P)], b[P] - A[np.ix_(P, f)] @ fixed, np.zeros(0, dtype=int))
            if zp is None:
                return None
            z = np.empty(self.p)
            z[P], z[f] = zp, fixed
        return z

    def _convex_qcqp(self, A, b, free):
        """``argmin x'Ax - 2b'x  s.t.  x_P'B_P x_P <= r`` for positive definite A (x_free unconstrained):
        eliminate the free block, whiten B_P, and solve the convex trust-region problem by an
        eigendecomposition and Newton on the secular equation ``||(S + νI)⁻¹c||² = r``."""
        P = self.pen if len(free) else np.arange(A.shape[0])
        if len(free):
            Aff, Afp = A[np.ix_(free, free)], A[np.ix_(free, P)]
            try:
                Ainv_fp = np.linalg.solve(Aff, np.column_stack([Afp, b[free]]))
            except np.linalg.LinAlgError:
                return None
            S = A[np.ix_(P, P)] - Afp.T @ Ainv_fp[:, :-1]
            c = b[P] - Afp.T @ Ainv_fp[:, -1]
        else:
            S, c = A, b
        Li = self._Lp_inv  # L⁻¹ with B_P = L L'; z = L'x_P
        St = Li @ S @ Li.T
        ct = Li @ c
        if not (np.all(np.isfinite(St)) and np.all(np.isfinite(ct))):
            return None
        lam, V = np.linalg.eigh(0.5 * (St + St.T))
        if not lam[0] > 1e-14 * max(lam[-1], 1e-300):
            return None  # numerically singular model: the caller raises δ
        beta = V.T @ ct
        nu = 0.0
        if float(np.sum((beta / lam) ** 2)) > self.r:
            for _ in range(100):  # Newton on 1/||z(ν)|| - 1/sqrt(r), convex and increasing: monotone convergence
                zz = beta / (lam + nu)
                nz2 = float(zz @ zz)
                dn = -2.0 * float(np.sum(zz * zz / (lam + nu)))
                phi = 1.0 / math.sqrt(nz2) - 1.0 / math.sqrt(self.r)
                dphi = -0.5 * nz2**-1.5 * dn
                step = phi / dphi
                nu = max(nu - step, 0.0)
                if abs(step) <= 1e-15 * max(nu, 1e-300) or abs(phi) <= 1e-15 / math.sqrt(self.r):
                    break
        zt = V @ (beta / (lam + nu))
        nz2 = float(zt @ zt)
        if nu > 0 and nz2 > 0:
            zt *= math.sqrt(self.r / nz2) * (1 - 1e-15)
        xp = Li.T @ zt
        if not len(free):
            return xp
        x = np.empty(A.shape[0])
        x[P] = xp
        x[free] = Ainv_fp[:, -1] - Ainv_fp[:, :-1] @ xp
        return x

    # ------------------------------------------------------------------ solve
    def minimize(self, oracle: Callable, x0: np.ndarray | None = None, gap_atol: float | None = None) -> SolverResult:
        """Minimise ``oracle`` over K from ``x0`` (projected into K); see the module notes. ``gap_atol`` also
        stops when the Frank–Wolfe gap is at most this absolute value."""
        atol = 0.0 if gap_atol is None else float(gap_atol)
        x = self.project(np.zeros(self.p) if x0 is None else x0)
        f, g, H = oracle(x, 2)
        delta, its, status = 0.0, 0, SolverStatus.INACCURATE
        scale_h = max(float(np.abs(H).max()), 1e-6)
        for its in range(1, self.max_iter + 1):  # noqa: B007  (its is returned: the iteration count)
            gap = self.gap(x, g)
            if gap <= max(self.tol * max(1.0, abs(f)), atol):
                status = SolverStatus.OPTIMAL
                break
            z = self._model_min(x, g, H, delta + 1e-12 * scale_h) if np.all(np.isfinite(H)) else None
            d = None if z is None else z - x
            slope = -math.inf if d is None else float(g @ d)
            if d is None or not slope < 0:
                delta = max(10 * delta, 1e-6 * scale_h)
                if delta > 1e12 * scale_h:
                    break
                continue
            if -slope <= 1e-15 * max(1.0, abs(f)):
                break  # the model predicts less decrease than f's rounding: nothing left to gain
            t, accepted = 1.0, False
            while t > 1e-10:
                ft = oracle(x + t * d, 0)[0]
                if np.isfinite(ft) and ft <= f + 1e-4 * t * slope:
                    accepted = True
                    break
                t *= 0.5
            if not accepted:
                delta = max(10 * delta, 1e-6 * scale_h)
                continue
            delta = 0.0 if t == 1.0 else max(delta, 1e-8 * scale_h)
            x = x + t * d
            f, g, H = oracle(x, 2)
        gap = self.gap(x, g)
        if status is not SolverStatus.OPTIMAL and gap <= max(self.tol * max(1.0, abs(f)), atol):
            status = SolverStatus.OPTIMAL
        xp = x[self.pen]
        feas = max(float(xp @ self.B[np.ix_(self.pen, self.pen)] @ xp) - self.r, 0.0) / self.r
        rel = gap / max(1.0, abs(f))
        cert = Certificate(stationarity=rel, complementarity=0.0, feasibility=feas, duality_gap=rel)
        return SolverResult(
            x, float(f), math.nan, status, cert, its, self.backend, {"lower_bound": float(f - gap), "gap": float(gap)}
        )

    def _solve(self, param, *, oracle: Callable = None, x0: np.ndarray | None = None) -> SolverResult:
        if oracle is None:
            raise ValueError("SmoothBallProgram.solve needs oracle=f(x, order).")
        return self.minimize(oracle, x0)
