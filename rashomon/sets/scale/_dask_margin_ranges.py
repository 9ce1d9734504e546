"""Ranges of linear functionals over a logistic Rashomon set fitted on Dask input: batched Newton passes.

For every direction c (a row's design vector, or its negation for the upper end) ``min c'θ`` over
``S = {θ ∈ K : e(θ) <= ε}`` is convex and, the scores being unbounded along the intercept, its loss constraint
is active. Its KKT system ``c + λ∇e(θ) (+ 2νBθ) = 0``, ``e(θ) = ε`` (``θ'Bθ = r`` when the ball binds) is solved
by Newton's method for a **batch of directions at once**: each pass over the rows returns, per partition, the
loss, the gradient and the Hessian of every direction's current point (``k·(1 + d + d²)`` sums), and every
direction then takes its own Newton step; after two such steps the Hessians are kept for a few chord steps
whose passes sum only the loss and the gradient (d times less work; the same KKT point). The start is the direction's end on the ellipsoid of the Hessian at
θ_min (``½(θ - θ_min)'H(θ - θ_min) <= ε - e_min``), close to the answer, so a few passes suffice.

Each end is certified by weak duality whatever the accuracy: for the final multiplier λ and any θ* the
Lagrangian ``L(θ) = c'θ + λ(e(θ) - ε)`` is convex, so ``min_S c'θ >= min_K L >= L(θ*) + min_K ∇L(θ*)'(θ - θ*)``
(the support function of K: the ball with the intercept in Jensen's interval).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["DaskMarginRanges", "dask_margin_ranges"]

_SUB = 8192  # rows per sub-block of a partition (bounded memory of the d² products)
_DIRS = 128  # directions per pass
_REFRESH = 6  # chord steps between fresh Hessians


class DaskMarginRanges:
    """The range engine of a logistic set fitted on Dask input (``minimize`` as the in-memory engines')."""

    def __init__(self, rs: Any, rows: Any):
        from ...solvers import SmoothBallProgram
        from ._dask_margin import _intercept_interval

        par = rs.parametrization_
        self.rows, self.par, self.loss = rows, par, par.info["margin_loss"]
        self.eps, self.theta_min, self.e_min = float(rs.epsilon_abs_), np.asarray(rs.theta_min_), float(rs.e_min_)
        self.B, self.r = par.B, float(par.r)
        self.lo, self.hi = _intercept_interval(par, rows, rows.zbar_pos, rows.zbar_neg, self.loss, self.eps)
        self.K = SmoothBallProgram(self.B, self.r, self.lo, self.hi)
        self.H0 = rows.loss_parts(self.theta_min, self.loss, 2)[2]
        # collinear columns (every level of a categorical column beside the intercept): the loss is flat along
        # the null space of its Hessian, so a direction with a component there ends on the ball
        w, V = np.linalg.eigh(self.H0)
        self.null = V[:, w <= 1e-10 * max(float(w.max()), 1e-300)]
        self.passes = 0
        self._screen: Any = None

    def screen(self) -> Any:
        """The screen of multiplicity (:mod:`._dask_margin_screen`), built once."""
        if self._screen is None:
            from ._dask_margin_screen import DaskRowScreen

            self._screen = DaskRowScreen(self)
        return self._screen

    # ------------------------------------------------------------------ one pass for a batch of points
    def _parts(self, T: np.ndarray, hess: bool = True):
        """``(e (k,), G (k, d), H (k, d, d) or None)`` of the mean smooth loss at the k points T (rows): one pass
        (the Hessians, d times the work of the rest, only when ``hess``)."""
        from ._dask_margin import _derivs

        k, d = T.shape
        loss = self.loss
        size = 1 + d + (d * d if hess else 0)

        def fn(D, ye):
            out = np.zeros((k, size))
            for s in range(0, len(ye), _SUB):
                Ds, ys = D[s : s + _SUB], ye[s : s + _SUB]
                M = ys[:, None] * (Ds @ T.T)
                l0, l1, l2 = _derivs(loss, M)
                out[:, 0] += l0.sum(axis=0)
                out[:, 1 : d + 1] += (l1 * ys[:, None]).T @ Ds
                if hess:
                    DD = (Ds[:, :, None] * Ds[:, None, :]).reshape(len(ys), d * d)
                    out[:, d + 1 :] += l2.T @ DD
            return out.ravel()

        v = self.rows.reduce(fn, k * size).reshape(k, size) / self.rows.n_rows
        self.passes += 1
        if not hess:
            return v[:, 0], v[:, 1 : d + 1], None
        H = v[:, d + 1 :].reshape(k, d, d)
        return v[:, 0], v[:, 1 : d + 1], 0.5 * (H + np.transpose(H, (0, 2, 1)))

    # ------------------------------------------------------------------ Newton on the KKT systems
    def _start(self, C: np.ndarray):
        delta = max(self.eps - self.e_min, 1e-300)
        U = np.linalg.lstsq(self.H0, C.T, rcond=1e-10)[0].T if self.null.size else np.linalg.solve(self.H0, C.T).T
        s = np.sqrt(np.maximum(np.einsum("ij,ij->i", C, U), 1e-300) / (2.0 * delta))
        return self.theta_min[None, :] - U / s[:, None], s

    def _bound(self, c, t, lam, nu, e, g) -> float:
        """Weak duality at (λ, ν): ``L(θ) = c'θ + λ(e(θ) - ε) + ν(θ'Bθ - r) >= L(t) + ∇L(t)'(θ - t)`` on K, so
        ``min_S c'θ >= min_K L >= L(t) - ∇L(t)'t + min_K ∇L(t)'θ`` (the support function of K)."""
        Bt = self.B @ t
        grad = c + lam * g + 2 * nu * Bt
        L = c @ t + lam * (e - self.eps) + nu * (t @ Bt - self.r)
        return float(L - grad @ t + self.K.support_min(grad))

    def _member(self, t, e) -> np.ndarray:
        """t pulled toward θ_min just enough to be a member (the loss and the ball are convex, θ_min in both)."""
        tm = self.theta_min
        eta = 0.0
        # a band below ε for the rounding of the pass's loss against the loss in the user's units (a point exactly
        # on the level set in floating point can lie a few ulp outside); the in-memory engine's band, made wider
        band = max(1e-13 * (self.eps - self.e_min), 8e-15 * abs(self.eps), 1e-300)
        if e > self.eps - band:
            eta = 2.0 * (e - self.eps + band) / max(e - self.e_min, 1e-300)
        # the ball within rounding (1e-12 relative, the in-memory engine's membership test); θ_min may lie on it
        nt, nm = np.sqrt(max(t @ self.B @ t, 0.0)), np.sqrt(max(tm @ self.B @ tm, 0.0))
        if nt * nt > self.r * (1 + 1e-12) and nm < nt:
            eta = max(eta, 2.0 * (nt - np.sqrt(self.r)) / (nt - nm))
        return t if eta == 0.0 else tm + (1.0 - min(eta, 1.0)) * (t - tm)

    def _newton(self, C, T, lam, nu, ball, max_iter, tol, decide=None):
        """Newton steps on the KKT systems of the directions C (ν and the ball row where ``ball``); ``decide(i,
        bound, value of a member or None)`` stops a direction early (a flip decided)."""
        k, d = C.shape
        eps, B, r = self.eps, self.B, self.r
        done = np.zeros(k, dtype=bool)
        H: Any = None
        for it in range(max_iter):
            # Newton with fresh Hessians for the first steps, then chord steps (the last Hessians, exact gradients:
            # the same KKT point, each pass d times cheaper), refreshed every _REFRESH steps
            act = np.flatnonzero(~done)  # only the directions still open are evaluated
            fresh = it < 2 or it % _REFRESH == 0
            ea, Ga, Ha = self._parts(T[act], hess=fresh)
            e, G = np.full(k, np.nan), np.full((k, d), np.nan)
            e[act], G[act] = ea, Ga
            if Ha is not None:
                H = np.full((k, d, d), np.nan) if H is None else H
                H[act] = Ha
            if decide is not None:
                for i in np.flatnonzero(~done):
                    member = e[i] <= eps and T[i] @ B @ T[i] <= r
                    val = float(C[i] @ T[i]) if member else None
                    done[i] = decide(i, self._bound(C[i], T[i], lam[i], nu[i], e[i], G[i]), val)
                if done.all():
                    break
            for i in np.flatnonzero(~done):
                Bt = B @ T[i]
                if ball[i]:
                    J = np.zeros((d + 2, d + 2))
                    J[:d, :d] = lam[i] * H[i] + 2 * nu[i] * B
                    J[:d, d], J[d, :d] = G[i], G[i]
                    J[:d, d + 1], J[d + 1, :d] = 2 * Bt, 2 * Bt
                    rhs = -np.r_[C[i] + lam[i] * G[i] + 2 * nu[i] * Bt, e[i] - eps, T[i] @ Bt - r]
                else:
                    J = np.zeros((d + 1, d + 1))
                    J[:d, :d] = lam[i] * H[i]
                    J[:d, d], J[d, :d] = G[i], G[i]
                    rhs = -np.r_[C[i] + lam[i] * G[i], e[i] - eps]
                try:  # least squares where the loss is flat (collinear columns, the ball not binding)
                    step = np.linalg.solve(J, rhs) if ball[i] or not self.null.size else np.linalg.lstsq(J, rhs)[0]
                except np.linalg.LinAlgError:
                    step = np.linalg.lstsq(J, rhs, rcond=None)[0]
                dt = step[:d]
                if not ball[i]:  # a step far outside the ball (a flat loss along near-collinear columns) is cut
                    q = float((T[i] + dt) @ B @ (T[i] + dt))  # to twice its radius: the iterate stays finite, and
                    if not q <= 4.0 * r:  # the end is then solved on the ball
                        dt = dt * (2.0 * np.sqrt(r / q)) if np.isfinite(q) else np.zeros(d)
                T[i] = T[i] + dt
                lam[i] = lam[i] + step[d] if lam[i] + step[d] > 0 else lam[i] / 4
                if ball[i]:
                    nu[i] = max(nu[i] + step[d + 1], 0.0)
                small = np.linalg.norm(dt) <= tol * (1.0 + np.linalg.norm(T[i]))
                done[i] = small and abs(e[i] - eps) <= tol * eps
            if done.all():
                break
        e, G, _ = self._parts(T, hess=False)  # every direction at its final point
        return T, lam, nu, e, G

    def minimize(self, A: np.ndarray, *, tol: float = 1e-10, decide: Any = None, **_: Any):
        """``(certified lower bounds, members (rows x d), attained values)`` of ``min_S a'θ`` for every row a.

        ``decide(rows, bounds, values)`` (boolean per row; values NaN where the iterate is not a member) stops the
        rows it decides early: multiplicity needs only which side of its threshold each end lies on."""
        A = np.atleast_2d(np.asarray(A, dtype=float))
        m, d = A.shape
        bound, theta, value = np.empty(m), np.empty((m, d)), np.empty(m)
        for s in range(0, m, _DIRS):
            C = A[s : s + _DIRS]
            k = len(C)
            dec = None
            if decide is not None:

                def dec(i, b, v, s=s):
                    return bool(decide(np.array([s + i]), np.array([b]), np.array([np.nan if v is None else v]))[0])

            T, lam = self._start(C)
            nu, ball, e, G = np.zeros(k), np.zeros(k, dtype=bool), np.empty(k), np.empty((k, d))
            # a few steps on the loss constraint alone tell the directions whose end lies on the ball
            T, lam, nu, e, G = self._newton(C, T, lam, nu, ball, 4, min(tol, 1e-12), dec)
            ball = np.einsum("ij,ij->i", T @ self.B, T) > self.r * (1 + 1e-12)
            if self.null.size:
                ball |= np.abs(C @ self.null).max(axis=1) > 1e-9 * np.abs(C).max(axis=1)
            for grp in (~ball, ball):
                if not grp.any():
                    continue
                Tg = T[grp]
                if grp is ball:  # both constraints active: start on the ball
                    Tg *= np.sqrt(self.r / np.einsum("ij,ij->i", Tg @ self.B, Tg))[:, None]
                    nu[grp] = 1e-3
                idx = np.flatnonzero(grp)
                dg = None if dec is None else (lambda j, b, v, idx=idx, f=dec: f(idx[j], b, v))
                Tg, lg, ng, eg, Gg = self._newton(C[grp], Tg, lam[grp], nu[grp], ball[grp], 40, min(tol, 1e-12), dg)
                T[grp], lam[grp], nu[grp], e[grp], G[grp] = Tg, lg, ng, eg, Gg
                late = ~ball & (np.einsum("ij,ij->i", T @ self.B, T) > self.r * (1 + 1e-12))
                if grp is not ball and late.any():  # reached the ball later: solved with it below
                    ball |= late
            for i in range(k):  # certified by weak duality; the member pulled into the set (by rounding at most)
                bound[s + i] = self._bound(C[i], T[i], lam[i], nu[i], e[i], G[i])
                T[i] = self._member(T[i], e[i])
            theta[s : s + k], value[s : s + k] = T, np.einsum("ij,ij->i", C, T)
            # rounding guard: the bound is never above a value attained by a member
            bound[s : s + k] = np.minimum(bound[s : s + k], value[s : s + k])
        return bound, theta, value


def dask_margin_ranges(rs: Any) -> DaskMarginRanges:
    """The range engine of a logistic set fitted on Dask input."""
    return DaskMarginRanges(rs, rs.X_)
