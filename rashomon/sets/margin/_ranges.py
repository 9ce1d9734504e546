"""Exact ranges of linear functionals over a classifier Rashomon set (logistic and hinge classes).

:meth:`MarginFunctionalRange.minimize` answers all functionals at once by :mod:`._batch` (batched Newton on the
KKT systems, each row certified as below: a weak-duality bound and a member of S); a row the batch leaves
uncertified runs the per-row search of this module (:meth:`MarginFunctionalRange._one`), described here.

S = {θ ∈ K : e_orig(θ) <= ε} is convex (K: the class's norm ball with the intercept in the interval of
:func:`._bounds.intercept_interval`, which contains S; e_orig is convex in θ). For a functional
``c'θ`` (a row's score, a coefficient, a partial dependence value, any contrast) the least value over S
is a convex programme, bounded by Lagrangian duality: for every μ > 0 and every θ in S,

    e_orig(θ) + μ·c'θ >= h(μ) := min_{θ∈K} e_orig(θ) + μ·c'θ,  so  c'θ >= (h(μ) - ε)/μ,

and ``c'θ >= min_K c'θ`` (μ = ∞, closed form on K). The certified lower bound ``lb(μ) <= h(μ)`` of
:meth:`MarginSet.solve` (projected Newton with the Frank–Wolfe gap; for the hinge the smoothing error
``τ log 2`` is already subtracted) makes each μ a valid bound whatever the solver's accuracy. The best μ
solves ``e_orig(θ_μ) = ε`` (θ_μ: the minimiser at μ; e_orig(θ_μ) grows with μ); it is found by regula
falsi on ``sqrt(e_orig(θ_μ) - e_min)`` (linear in μ for a quadratic loss) with Illinois steps, for the hinge
alternated with the point where the tangents of the concave dual at the two bracket ends cross (exact at a kink of the
dual, which is where the hinge's optimum sits: its minimisers jump between vertices). Members attaining a value: θ_min, the θ_μ inside S, and the point with
``e_orig = ε`` on the segment between the bracketing minimisers (e_orig is convex along it; both ends
are in K, hence the whole segment). The gap (attained value minus bound) is reported per row; it is
driven below ``tol·max(1, |bound|)`` where the solver's precision allows: about 1e-10 for the logistic
loss; for the hinge at best about ``τ log 2 / μ`` (τ: the smoothing), in practice 1e-6 to 1e-4 relative where
projected Newton on the sharply smoothed hinge stops short (the bound stays valid; the gap says how far).

For the hinge the search is the fallback: first CLARABEL (through cvxpy) solves ``min c'θ`` over S, an SOCP,
and its dual multiplier λ of the loss constraint gives μ = 1/(nλ); the bound ``(lb(μ) - ε)/μ`` is then
certified by this package's own solve at that μ (warm-started at CLARABEL's point), and the member is
CLARABEL's point moved into the ball and S along the segment to θ_min. Nothing of CLARABEL's is trusted
beyond being a good μ and a good start: a failure or a gap above ``max(tol, 1e-6)`` runs the search.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._bounds import intercept_interval

__all__ = ["MarginFunctionalRange"]


class MarginFunctionalRange:
    """``min_S c'θ`` for a fitted classifier set, with a certified bound and a member (see the module docstring).

    Same interface as :class:`~rashomon.sets.LinearFunctionalRange` (:meth:`minimize`).
    """

    def __init__(self, ms, eps: float, max_iter: int = 60):
        self.ms, self.eps, self.max_iter = ms, float(eps), max_iter
        self.lo, self.hi = intercept_interval(ms.D, ms.y, ms.o, ms.B, ms.r, ms.loss, self.eps)
        self.e_min = float(ms.e_min)
        d = ms.D.shape[1]
        self.pen = np.arange(ms.o, d)
        Bp = ms.B[np.ix_(self.pen, self.pen)]
        self._Bp_inv = np.linalg.inv(Bp)
        self._H_chol = ms.hessian_cholesky()

    # ---------------------------------------------------------------- pieces
    def e_orig(self, theta: np.ndarray) -> float:
        return self.ms.orig.e_orig(theta, self.ms.loss)

    def in_set(self, theta: np.ndarray) -> bool:
        """Exact membership: the ball (to 1e-12 relative) and e_orig <= ε (the intercept interval contains S)."""
        ms = self.ms
        if float(theta @ ms.B @ theta) > ms.r * (1 + 1e-12):
            return False
        return self.e_orig(theta) <= self.eps

    def level_point(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The point of the segment from b (in S) toward a (outside) with e_orig = ε, on the inside.

        f(t) = e_orig(b + t(a - b)) - ε is convex with f(0) <= 0 < f(1). The chord between an inside and an
        outside point lies above f, so its zero is inside (f <= 0); a Newton step from an outside point stays
        outside. Alternating the two brackets the root from both sides (O(n) per step, on the margins).
        """
        ms, loss, eps = self.ms, self.ms.loss, self.eps
        mb = ms.y * (ms.D @ b)
        dm = ms.y * (ms.D @ (a - b))
        f = lambda t: float(np.mean(loss.exact(mb + t * dm))) - eps  # noqa: E731
        t_in, f_in, t_out, f_out = 0.0, f(0.0), 1.0, f(1.0)
        if f_out <= 0:
            return a.copy()
        if f_in > 0:
            return b.copy()
        for _ in range(40):
            if t_out - t_in <= 1e-15 or f_in >= -1e-15 * max(eps, 1.0):
                break
            t = t_in - f_in * (t_out - t_in) / (f_out - f_in)
            ft = f(t) if t_in < t < t_out else math.inf
            if ft <= 0:
                t_in, f_in = t, ft
            m = mb + t_out * dm
            slope = float(
                np.mean(
                    np.where(m < 1.0, -dm, 0.0) if loss.name == "hinge" else -dm / (1.0 + np.exp(np.clip(m, -700, 700)))
                )
            )
            if slope > 0:
                t = t_out - f_out / slope
                ft = f(t) if t_in < t < t_out else -math.inf
                if ft > 0:
                    t_out, f_out = t, ft
                elif t_in < t < t_out:
                    t_in, f_in = t, ft
        return b + t_in * (a - b)

    def corner(self, c: np.ndarray):
        """``(min_K c'θ, a minimiser)``: the ball end along -B⁻¹c and the intercept at the end c favours."""
        ms = self.ms
        th = ms.theta_min.copy()
        cp = c[self.pen]
        q = float(cp @ self._Bp_inv @ cp)
        if q > 0:
            th[self.pen] = -math.sqrt(ms.r / q) * (self._Bp_inv @ cp) * (1 - 1e-15)
        val = -math.sqrt(ms.r * max(q, 0.0))
        if ms.o:
            if c[0] > 0:
                th[0] = self.lo[0]
            elif c[0] < 0:
                th[0] = self.hi[0]
            val += float(c[0] * th[0])
        return val, th

    def __getstate__(self):  # the compiled cvxpy problem is rebuilt on demand, never pickled
        state = self.__dict__.copy()
        state.pop("_cvx", None)
        return state

    # ---------------------------------------------------------------- the hinge: a conic solve, then certified
    def _hinge_program(self):
        """cvxpy's problem ``min c'θ`` over S (hinge: an SOCP) with c a Parameter, compiled once (None if cvxpy
        cannot build it)."""
        if not hasattr(self, "_cvx"):
            try:
                import cvxpy as cp

                ms = self.ms
                d, n, o = ms.D.shape[1], len(ms.y), ms.o
                th, c = cp.Variable(d), cp.Parameter(d)
                Bp = ms.B[o:, o:]
                L = np.linalg.cholesky(0.5 * (Bp + Bp.T))
                # rows sharing (design, label) are one term weighted by their count (COMPAS: 3,325 of 6,172)
                U, cnt = np.unique(ms.y[:, None] * ms.D, axis=0, return_counts=True)
                cons = [cnt.astype(float) @ cp.pos(1 - U @ th) <= n * self.eps, cp.sum_squares(L.T @ th[o:]) <= ms.r]
                self._cvx: tuple | None = (cp.Problem(cp.Minimize(c @ th), cons), th, c, cons[0], n)
            except Exception:  # noqa: BLE001 -- no conic path: the Lagrangian search alone
                self._cvx = None
        return self._cvx

    def _hinge_fast(self, c: np.ndarray, tol: float, corner: float):
        """``(bound, θ, value)`` from CLARABEL's solution and multiplier, certified here: μ = 1/(n·λ) from its
        dual of the loss constraint, the bound ``(lb(μ) - ε)/μ`` from this package's certified solve warm-started
        at its θ, the member its θ (moved into S along the segment to θ_min if its constraint is off by
        rounding); ``corner`` is min over K of c'θ, also a bound. None when CLARABEL fails or the gap exceeds
        ``tol`` relative (the caller's search then runs)."""
        import warnings

        prog = self._hinge_program()
        if prog is None:
            return None
        problem, th, cp_c, loss_con, n = prog
        cp_c.value = c
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                problem.solve(solver="CLARABEL")
        except Exception:  # noqa: BLE001 -- the solver's failure: the search below decides
            return None
        lam = loss_con.dual_value
        if th.value is None or lam is None or not (np.isfinite(lam) and lam > 0):
            return None
        ms, eps = self.ms, self.eps
        mu = 1.0 / (n * float(lam))
        x = np.asarray(th.value, dtype=float)
        t, lb, ok = ms.solve(1.0, 0.0, ms.orig, self.lo, self.hi, x, lin=mu * c)
        if not (ok and np.isfinite(lb)):
            return None
        bound = max((lb - eps) / mu, corner)
        cands = [p for p in (x if self.in_set(x) else self._pull_in(x), t) if self.in_set(p)]
        if not cands:
            return None
        best = min(cands, key=lambda p: float(c @ p))
        value = float(c @ best)
        if value - bound > max(tol, 1e-6) * max(1.0, abs(bound)) + 4 * ms.loss.offset / mu:
            return None
        return min(bound, value), best, value

    def _pull_in(self, x: np.ndarray) -> np.ndarray:
        """x moved toward θ_min (a member) until it is in the ball (closed form: a quadratic in the step) and has
        e_orig <= ε (:meth:`level_point`): for a conic solver's point, off by rounding."""
        ms = self.ms
        a, dlt = ms.theta_min, x - ms.theta_min
        qa, qb, qc = float(dlt @ ms.B @ dlt), float(a @ ms.B @ dlt), float(a @ ms.B @ a) - ms.r * (1 - 1e-12)
        s = 1.0
        if qa > 0 and qa + 2 * qb + qc > 0:  # the largest root of qa s² + 2 qb s + qc (qc < 0: θ_min inside)
            s = max(0.0, min(1.0, (-qb + math.sqrt(max(qb * qb - qa * qc, 0.0))) / qa))
        return self.level_point(a + s * dlt, a)

    # ---------------------------------------------------------------- one functional
    def _one(self, c: np.ndarray, tol: float, max_iter: int):
        """``(bound, θ, value)`` for one functional c."""
        ms, eps = self.ms, self.eps
        bound, th_k = self.corner(c)
        best_v, best_t = float(c @ ms.theta_min), ms.theta_min
        if self.in_set(th_k):  # the constraint e_orig <= ε is inactive: K's minimum is a member
            return bound, th_k, float(c @ th_k)
        if not np.any(c):
            return 0.0, best_t, 0.0
        if ms.loss.name == "hinge":
            fast = self._hinge_fast(c, tol, bound)
            if fast is not None:
                return fast
        scale = lambda b: tol * max(1.0, abs(b))  # noqa: E731
        w = np.linalg.solve(self._H_chol, c)
        slack = max(eps - self.e_min, 0.0)
        root = math.sqrt(slack)
        mu = math.sqrt(2.0 * slack / max(float(w @ w), 1e-300))
        if not (np.isfinite(mu) and mu > 0):
            mu = 1.0
        # bracket ends: (μ, φ(μ), θ_μ) with φ = sqrt(e_orig - e_min) - sqrt(ε - e_min)
        lo_end, hi_end, last = [0.0, -root, ms.theta_min], None, None
        stall, best_gap = 0, math.inf
        x0 = ms.theta_min - mu * np.linalg.solve(self._H_chol.T, w)
        for it in range(max_iter):
            th, lb, _ok = ms.solve(1.0, 0.0, ms.orig, self.lo, self.hi, x0, lin=mu * c)
            e = self.e_orig(th)
            if np.isfinite(lb):
                bound = max(bound, (lb - eps) / mu)
            phi = math.sqrt(max(e - self.e_min, 0.0)) - root
            if e <= eps and self.in_set(th):
                if float(c @ th) < best_v:
                    best_v, best_t = float(c @ th), th
                lo_end = [mu, phi, th]
                if last == "lo" and hi_end is not None:  # Illinois: the stale end's value halved
                    hi_end[1] *= 0.5
                last = "lo"
            else:
                hi_end = [mu, phi, th]
                if last == "hi":
                    lo_end[1] *= 0.5
                last = "hi"
            if hi_end is not None:
                p = self.level_point(hi_end[2], lo_end[2])
                if self.in_set(p) and float(c @ p) < best_v:
                    best_v, best_t = float(c @ p), p
            gap = best_v - bound
            if gap <= scale(bound) + 4 * ms.loss.offset / mu:  # the hinge's smoothing floor: about τ log 2 / μ
                break
            stall = stall + 1 if gap > 0.9 * best_gap else 0
            best_gap = min(best_gap, gap)
            if stall >= 6:  # six solves without a 10% smaller gap: the solver's precision is reached
                break
            if hi_end is None:  # no minimiser outside S yet: secant on φ from μ = 0, at most 10-fold
                nxt = mu * root / (phi + root) if phi + root > 0 else 10 * mu
                mu, x0 = float(min(max(nxt, 1.01 * mu), 10 * mu)), th
                if mu > 1e15:
                    break
                continue
            (m0, f0, t0), (m1, f1, t1) = lo_end, hi_end
            if m1 - m0 <= 1e-13 * m1:
                break
            if ms.loss.name == "logistic" or it % 2:  # regula falsi on φ (Illinois)
                mu = m1 - f1 * (m1 - m0) / (f1 - f0) if f1 > f0 else 0.5 * (m0 + m1)
            else:  # where the two tangents of the concave dual cross (exact at a kink: the hinge's vertices)
                de = self.e_orig(t1) - self.e_orig(t0)
                mu = de / (float(c @ t0) - float(c @ t1)) if de > 0 and float(c @ t0) > float(c @ t1) else 0.0
            if not m0 < mu < m1:
                mu = 0.5 * (m0 + m1)
            x0 = t1 if abs(mu - m1) < abs(mu - m0) else t0
        if bound <= best_v + 1e-9 * max(1.0, abs(best_v)):  # rounding guard; a larger excess is left for the
            bound = min(bound, best_v)  # caller's consistency check to report
        return bound, best_t, best_v

    def minimize(self, A: np.ndarray, *, tol: float = 1e-10, max_iter: int | None = None, tick=None):
        """``min_S a'θ`` for every row a of A: ``(bound, theta, value)`` as
        :meth:`~rashomon.sets.LinearFunctionalRange.minimize` (certified bound, members of S, their values).

        All rows at once by :class:`._batch.MarginBatch` (equal rows once); a row it leaves uncertified runs the
        per-row search (:meth:`_one`). One BLAS thread: the bits do not depend on the thread count. ``tick(k)``
        is called as rows are done (progress)."""
        from ...utils import single_blas_thread

        return single_blas_thread(lambda: self._minimize(A, tol, max_iter, tick))

    def _minimize(self, A, tol, max_iter, tick):
        A = np.atleast_2d(np.asarray(A, dtype=float))
        tick = tick or (lambda k=1: None)
        if len(A) > 1:  # equal functionals (tables repeat rows: COMPAS's design has 2,666 distinct of 6,172) once
            U, inv = np.unique(A, axis=0, return_inverse=True)
            if len(U) < len(A):
                tick(len(A) - len(U))
                b, th, v = self._minimize(U, tol, max_iter, tick)
                inv = inv.ravel()
                return b[inv], th[inv], v[inv]
        m, d = A.shape
        bound, value, theta = np.empty(m), np.empty(m), np.empty((m, d))
        its = self.max_iter if max_iter is None else int(max_iter)
        todo: Any = range(m)
        if m:
            bat = self._batch()
            bat.tick = tick
            try:
                b, th, v, ok = bat.minimize(A, tol)
            finally:
                bat.tick = None
            bound[ok], theta[ok], value[ok] = b[ok], th[ok], v[ok]
            todo = np.where(~ok)[0]
            self.n_fallback = getattr(self, "n_fallback", 0) + len(todo)
        for i in todo:
            bound[i], theta[i], value[i] = self._one(A[i], tol, its)
        return bound, theta, value

    def _batch(self):
        """The batched KKT-Newton solver (:mod:`._batch`), built once."""
        if getattr(self, "_batch_solver", None) is None:
            from ._batch import MarginBatch

            self._batch_solver = MarginBatch(self)
        return self._batch_solver
