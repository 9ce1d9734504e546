"""Exact ranges of linear functionals ``a'θ`` over the Rashomon set of a quadratic class.

The set is ``S = {θ : e(θ) = θ'Qθ - 2c'θ + k <= ε, θ'Bθ <= r}``: an ellipsoid (the
loss) cut by the class's norm ball. For every ``t >= 0`` each member satisfies the
single aggregated constraint ``e(θ) + t(θ'Bθ - r) <= ε``, an ellipsoid on which
``min a'θ`` has a closed form ``G(t)``. So every ``G(t)`` is a **certified lower
bound** on ``min_S a'θ``, and ``max_t G(t)`` equals it (Lagrangian duality with the
ratio ``t = μ/λ`` of the two multipliers; Slater holds because S has an interior
point). ``G`` is quasi-concave in ``t`` and ``dG/dt`` has the sign of
``θ_t'Bθ_t - r`` at the minimiser θ_t of the aggregated problem, so a bracketing
root search on that sign finds the optimal ``t``; at the root θ_t satisfies both
constraints with equality and attains the bound. ``t = 0`` (the ball inactive) is
the textbook closed form; the ball alone (loss inactive) is checked first.

Diagonalising the pencil (Q, B) once (``V'QV = diag(q)``, ``V'BV = diag(s)``) makes
each ``G(t)`` cost O(d) per functional, vectorised over many functionals (rows of
a prediction matrix, coefficients, contrasts).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ...utils.validation import RashomonInputError

__all__ = ["LinearFunctionalRange", "quadratic_roots"]

_TINY = np.finfo(float).tiny


def _einsum_rowdot(a, b):
    return np.einsum("ij,ij->i", a, b)


#: row-wise dot products (NumPy 2's gufunc: about half einsum's cost on 50 x 11; einsum on NumPy 1)
_rowdot = getattr(np, "vecdot", _einsum_rowdot)


def quadratic_roots(a, b, c):
    """Roots ``(lo, hi)`` of ``a σ² + 2bσ + c = 0`` with ``a >= 0`` and ``c <= 0`` (σ = 0 feasible), element-wise.

    Written without squaring b or forming a·c (no overflow for parameters near 1e150) and without
    cancellation (the smaller-magnitude root from the product ``lo·hi = c/a``). ``a = 0`` gives the
    root of the linear equation (±inf where it has none in that direction).
    """
    a, b, c = (np.asarray(v, dtype=float) for v in np.broadcast_arrays(a, b, c))
    d = np.hypot(b, np.sqrt(np.maximum(a, 0.0)) * np.sqrt(np.maximum(-c, 0.0)))  # sqrt(b² - ac)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = -(b + np.copysign(d, b))  # |q| = |b| + d: no cancellation
        r1 = np.where(q != 0, c / q, 0.0)  # the root of smaller magnitude
        r2 = np.where(a > 0, q / np.where(a > 0, a, 1.0), np.where(b > 0, -np.inf, np.inf))
        lin = np.where(b != 0, -c / (2 * b), np.nan)  # a = 0: the linear equation's root
    r1 = np.where(a > 0, r1, lin)
    lo, hi = np.minimum(r1, r2), np.maximum(r1, r2)
    # a = 0: one linear root; the other side is unbounded
    lo = np.where(a > 0, lo, np.where(b > 0, -np.inf, np.where(b < 0, lin, -np.inf)))
    hi = np.where(a > 0, hi, np.where(b < 0, np.inf, np.where(b > 0, lin, np.inf)))
    return lo, hi


class LinearFunctionalRange:
    """Minimise / maximise many linear functionals over ``S`` exactly, with certificates.

    Parameters
    ----------
    Q, c, k : the loss ``e(θ) = θ'Qθ - 2c'θ + k``.
    B, r : the class's ball ``θ'Bθ <= r``.
    eps : float
        The threshold ε_abs (> the least loss over the ball).
    theta_min : ndarray
        The least-loss member (inside S); an interior point is built from it.
    func : str
        The public function (for messages).
    loss_only : bool, default=False
        The ball is certified not to cut the loss's ellipsoid (``r >= max θ'Bθ`` over it): every
        range is then the closed form ``a'θ̂ ± sqrt((ε - e(θ̂))·a'Q⁻¹a)`` with θ̂ = Q⁻¹c, attained at
        ``θ̂ ± sqrt(ε - e(θ̂))·Q⁻¹a / sqrt(a'Q⁻¹a)``.
    """

    def __init__(self, Q, c, k, B, r, eps, theta_min, func: str, loss_only: bool = False):
        Q = 0.5 * (Q + Q.T)
        B = 0.5 * (B + B.T)
        d = Q.shape[0]
        sq = max(np.trace(Q) / d, _TINY)
        sb = max(np.trace(B) / d, _TINY)
        M = Q / sq + B / sb
        ev = linalg.eigvalsh(M)
        if ev[0] <= 1e-12 * ev[-1]:
            raise RashomonInputError(
                f"{func}: the Rashomon set is unbounded (a direction changes neither the loss on "
                "the data nor the norm), so some predictions or coefficients have no finite range."
            )
        _, V = linalg.eigh(Q / sq, M)
        self.V = V
        q = np.clip(np.einsum("ij,jk,ki->i", V.T, Q, V), 0.0, None)
        s = np.clip(np.einsum("ij,jk,ki->i", V.T, B, V), 0.0, None)
        # directions the data (or the norm) leave free to rounding are exactly free
        q[q <= 1e-13 * q.max(initial=0.0)] = 0.0
        s[s <= 1e-13 * s.max(initial=0.0)] = 0.0
        self.q, self.s = q, s
        self.ct = V.T @ c
        self.k, self.r, self.eps = float(k), float(r), float(eps)
        self.Q, self.c, self.B = Q, c, B
        self.Vinv = V.T @ M  # V'MV = I
        # Both constraints in the centred form Σ h (z - z_min)² + g'(z - z_min) <= slack, measured from the
        # least-loss member: no term cancels even when ε - e_min is tiny against the loss's constant k.
        th_min = np.asarray(theta_min, dtype=float)
        self.z_min = self.Vinv @ th_min
        self.slack = max(self.eps - self._loss(th_min), 0.0)
        self.ball_slack = max(self.r - float(self.z_min**2 @ self.s), 0.0)
        self.constraints = (
            (self.q, 2 * (self.q * self.z_min - self.ct), self.slack),
            (self.s, 2 * self.s * self.z_min, self.ball_slack),
        )
        self.z_int = self._interior()
        # the same two constraints in θ (the final check: V is only as accurate as the pencil's conditioning)
        self.theta_min, self.theta_int = th_min, V @ self.z_int
        self.theta_constraints = (
            (Q, 2 * (Q @ th_min - c), self.slack),
            (B, 2 * (B @ th_min), max(self.r - float(th_min @ B @ th_min), 0.0)),
        )
        self.t0 = float(np.mean(self.q) / max(np.mean(self.s), _TINY))
        self._closed: tuple[np.ndarray, np.ndarray, float] | None = None
        self._plain_cols: np.ndarray | None = None  # [Q⁻¹ | θ̂] and (key, [Q⁻¹ | θ̂ | θ_ref]): see _closed_columns
        self._ref_cols: tuple[bytes, np.ndarray] | None = None
        if loss_only:
            cf = linalg.cho_factor(Q)
            th = linalg.cho_solve(cf, c)
            Qinv = linalg.cho_solve(cf, np.eye(d))
            # ε - e(θ̂) in the centred form from θ_min (no cancellation against k): e(θ̂) <= e(θ_min)
            dt = th - th_min
            drop = float(dt @ Q @ dt + 2 * (Q @ th_min - c) @ dt)
            self._closed = (th, 0.5 * (Qinv + Qinv.T), max(self.slack - drop, 0.0))

    # ---------------------------------------------------------------- pieces
    def _loss(self, th):
        return float(th @ self.Q @ th - 2 * self.c @ th + self.k)

    def loss_excess(self, thetas: np.ndarray) -> np.ndarray:
        """``e(θ) - e_min`` for rows θ, in the centred form (accurate when the set is thin)."""
        dz = np.atleast_2d(thetas) @ self.Vinv.T - self.z_min[None, :]
        h, g, _ = self.constraints[0]
        return dz**2 @ h + dz @ g

    def _interior(self):
        """A point strictly inside both constraints: z_min, shrunk toward 0 (halfway to ε in loss) when on the ball."""
        zm = self.z_min
        A = float(zm**2 @ self.q)
        if self.ball_slack > 0 or A <= 0 or not float(zm**2 @ self.s) > 0:
            return zm.copy()
        G = float(self.constraints[0][1] @ zm)
        delta = (-G - np.sqrt(G * G + 2 * A * self.slack)) / (2 * A)  # Aδ² + Gδ = slack / 2, δ < 0
        return (1.0 + max(delta, -1.0)) * zm

    @staticmethod
    def chord(zc, dirs, h, g, slack):
        """Coefficients ``(a, b, c)`` of ``a σ² + 2bσ + c <= 0`` along ``zc + σ·dirs`` (zc centred on z_min)."""
        a = dirs**2 @ h
        b = (zc * dirs) @ h + 0.5 * (dirs @ g)
        c = zc**2 @ h + zc @ g - slack
        return a, b, c

    def _aggregated(self, b, t, slope=False):
        """``G(t)`` and its minimiser z_t for functionals b (rows) at ratios t (m,); with ``slope`` also dψ/dt."""
        s = self.s[None, :]
        w = self.q[None, :] + t[:, None] * s
        free = w <= 0  # a direction neither constraint sees here (the functional vanishes on it): keep z_min's value
        inv = np.where(free, 0.0, 1.0 / np.where(free, 1.0, w))
        bw = b * inv
        sbb = np.einsum("ij,ij->i", b, bw)
        sbc = bw @ self.ct
        # ρ² = ε - min_z [e(z) + t(z'Sz - r)] = (ε - e_min) + t(r - z_min'Sz_min) + Σ w (z_min - c̃/w)²:
        # three non-negative terms (no cancellation even when ε - e_min is tiny against k)
        cinv = self.ct[None, :] * inv
        dev = self.z_min[None, :] - cinv
        rho2 = self.slack + t * self.ball_slack + np.einsum("ij,ij->i", w, dev * dev)
        root = np.sqrt(rho2) * np.sqrt(sbb)
        G = sbc - root
        ok = sbb > 0
        step = np.where(ok, np.sqrt(rho2) / np.sqrt(np.where(ok, sbb, 1.0)), 0.0)
        z = np.where(free, self.z_min[None, :], cinv - step[:, None] * bw)
        if not slope:
            return G, z
        # dψ/dt with ψ = Σ s z² - r: dz/dt = -s z/w - step'·b/w (see the module notes for G, z_t)
        sinv = s * inv
        drho2 = self.ball_slack + (dev * dev) @ self.s + 2 * np.einsum("ij,ij->i", dev, cinv * s)
        dsbb = -np.einsum("ij,ij->i", bw * bw, s)
        with np.errstate(divide="ignore", invalid="ignore"):
            dstep = np.where(ok & (step > 0), (drho2 * sbb - rho2 * dsbb) / (2 * step * sbb * sbb), 0.0)
        sz = s * z
        dpsi = -2 * np.einsum("ij,ij->i", sz * sinv, z) - 2 * dstep * np.einsum("ij,ij->i", sz, bw)
        return G, z, dpsi

    def _psi(self, z):
        return z**2 @ self.s - self.r

    def _feasible(self, z):
        """Move each z toward the interior point until both constraints hold (z unchanged when they do)."""
        zi = self.z_int
        dz = z - zi[None, :]
        s = np.ones(z.shape[0])
        zc = (zi - self.z_min)[None, :]
        for h, g, slack in self.constraints:
            a2, b2, c2 = self.chord(zc, dz, h, g, slack)  # c2 < 0: the interior point
            sig = quadratic_roots(a2, b2, np.minimum(c2, 0.0))[1]
            s = np.minimum(s, np.where(np.isfinite(sig), np.maximum(sig, 0.0), 1.0))
        return zi[None, :] + s[:, None] * dz

    # ---------------------------------------------------------------- solve
    def minimize(self, A: np.ndarray, *, tol: float = 1e-10, max_iter: int = 200):
        """``min_S a'θ`` for every row a of A.

        Returns
        -------
        bound : ndarray (m,)
            Certified: every member has ``a'θ >= bound``.
        theta : ndarray (m, d)
            Members of S (to rounding) attaining ``value``.
        value : ndarray (m,)
            ``a'θ`` of the returned members (``value - bound`` is the certified gap).
        """
        if self._closed is not None:
            return self._closed_form(np.atleast_2d(A))
        b = np.atleast_2d(A) @ self.V
        m = b.shape[0]
        bound = np.full(m, -np.inf)
        z_best = np.zeros_like(b)
        done = np.zeros(m, dtype=bool)
        bscale = np.abs(b).max(axis=1, initial=0.0)
        # the ball alone (loss constraint inactive): only when b lies in the range of B
        qmax = max(self.q.max(), _TINY)
        in_s = np.all((self.s[None, :] > 1e-12) | (np.abs(b) <= 1e-14 * bscale[:, None]), axis=1)
        if np.any(in_s):
            idx = np.where(in_s)[0]
            bs = b[idx] / np.where(self.s > 1e-12, self.s, np.inf)[None, :]
            nrm = np.sqrt(np.einsum("ij,ij->i", b[idx], bs))
            z = -np.sqrt(self.r) * bs / np.where(nrm > 0, nrm, 1.0)[:, None]
            # coordinates the norm leaves free do not move the objective: set them to lower the loss
            free = (self.s <= 1e-12) & (self.q > 0)
            z[:, free] = (self.ct[free] / self.q[free])[None, :]
            h, g, slack = self.constraints[0]
            dz = z - self.z_min[None, :]
            ok = dz**2 @ h + dz @ g <= slack
            bound[idx[ok]] = -np.sqrt(self.r) * nrm[ok]
            z_best[idx[ok]] = z[ok]
            done[idx[ok]] = True
        # t = 0 (ball inactive): valid when b vanishes wherever q does
        valid0 = np.all((self.q[None, :] > 1e-12 * qmax) | (np.abs(b) <= 1e-14 * bscale[:, None]), axis=1) & ~done
        t_lo = np.zeros(m)
        p_lo = np.full(m, np.inf)
        if np.any(valid0):
            idx = np.where(valid0)[0]
            G, z = self._aggregated(b[idx], np.zeros(len(idx)))
            p = self._psi(z)
            fin = p <= 0
            bound[idx[fin]], z_best[idx[fin]], done[idx[fin]] = G[fin], z[fin], True
            p_lo[idx[~fin]] = p[~fin]
        todo = np.where(~done)[0]
        if todo.size:
            self._root(b, todo, t_lo, p_lo, bound, z_best, tol, max_iter)
        theta = self._feasible_theta(self._feasible(z_best) @ self.V.T)
        value = np.einsum("ij,ij->i", np.atleast_2d(A), theta)
        return bound, theta, value

    def _closed_form(self, A):
        """``min a'θ`` over the loss's ellipsoid (the ball certified inactive): bound, members, values."""
        centre, half, th_lo, _ = self.closed_ranges(A)
        return centre - half, th_lo, np.einsum("ij,ij->i", A, th_lo)

    def closed_ranges(self, A, a0=None, models: bool = True):
        """Every row's range in closed form (``loss_only`` only): ``[centre - half, centre + half]`` of ``a'θ +
        a0`` and, with ``models``, the members ``θ̂ ∓ (1 - 1e-12)·sqrt(δ/a'Q⁻¹a)·Q⁻¹a`` (1e-12 short of the
        boundary: inside the set to rounding; their values are ``centre ∓ (1 - 1e-12)·half``). Returns
        ``(centre, half, θ_lower, θ_upper)``."""
        centre, half, _, lo, hi = self._closed_with_reference(A, a0, None, models)
        return centre, half, lo, hi

    def _closed_with_reference(self, A, a0, reference, models: bool = True):
        """:meth:`closed_ranges` with the values ``a'θ_ref + a0`` of a reference θ_ref (None: not computed) from
        the same single product ``A [Q⁻¹ | θ̂ | θ_ref]``. Returns ``(centre, half, ref, θ_lower, θ_upper)``."""
        assert self._closed is not None
        th, Qinv, delta = self._closed
        d = len(th)
        M = self._closed_columns(reference)
        AM = A @ M
        QA = AM[:, :d]
        q = _rowdot(A, QA)
        np.maximum(q, 0.0, out=q)
        centre = AM[:, d].copy() if a0 is None else AM[:, d] + a0
        ref = None if reference is None else (AM[:, d + 1].copy() if a0 is None else AM[:, d + 1] + a0)
        half = q * delta
        np.sqrt(half, out=half)
        if not models:
            return centre, half, ref, None, None
        pos = q > 0
        step = np.sqrt(delta / np.where(pos, q, 1.0)) * (1 - 1e-12)
        step[~pos] = 0.0
        move = step[:, None] * QA
        return centre, half, ref, th[None, :] - move, th[None, :] + move

    def _closed_columns(self, reference):
        """``[Q⁻¹ | θ̂]``, or ``[Q⁻¹ | θ̂ | θ_ref]`` for a reference (rebuilt only when its values change)."""
        assert self._closed is not None
        th, Qinv, _ = self._closed
        if reference is None:
            if self._plain_cols is None:
                self._plain_cols = np.column_stack([Qinv, th])
            return self._plain_cols
        key = np.asarray(reference, dtype=float).tobytes()
        if self._ref_cols is None or self._ref_cols[0] != key:
            self._ref_cols = (key, np.column_stack([Qinv, th, reference]))
        return self._ref_cols[1]

    def _feasible_theta(self, thetas):
        """Shrink members toward the interior point until both constraints hold when evaluated in θ."""
        ti = self.theta_int
        dt = thetas - ti[None, :]
        sig = np.ones(len(thetas))
        ci = ti - self.theta_min
        for H, g, slack in self.theta_constraints:
            DH = dt @ H
            a = np.einsum("ij,ij->i", DH, dt)
            b = DH @ ci + 0.5 * (dt @ g)
            c = float(ci @ H @ ci + g @ ci - slack)
            viol = a + 2 * b + c > 0  # the member itself (σ = 1) breaks the constraint
            if np.any(viol):
                root = quadratic_roots(a[viol], b[viol], min(c, 0.0))[1]
                sig[viol] = np.minimum(sig[viol], np.clip(root * (1 - 1e-12), 0.0, 1.0))
        return ti[None, :] + sig[:, None] * dt

    def _root(self, b, todo, t_lo, p_lo, bound, z_best, tol, max_iter):
        """Bracket and solve ψ(t) = 0 on the rows ``todo`` (ψ(t_lo) > 0): safeguarded Newton."""
        bb = b[todo]
        n = len(todo)
        tl, pl = t_lo[todo].copy(), p_lo[todo].copy()
        # bracket [tl, th] with ψ(tl) > 0 >= ψ(th), in steps of 1e3 from t0 (roots span many decades)
        th = np.full(n, self.t0)
        ph = np.full(n, np.nan)
        G, z = self._aggregated(bb, th)
        p = self._psi(z)
        up = p > 0
        tl[up], pl[up], ph[~up] = th[up], p[up], p[~up]
        down = ~up  # the root may lie below t0: shrink while ψ <= 0 (tl stays 0 if it never turns positive)
        for _ in range(12):
            idx = np.where(down)[0]
            if not idx.size:
                break
            t_try = th[idx] * 1e-3
            G, z = self._aggregated(bb[idx], t_try)
            p = self._psi(z)
            pos = p > 0
            tl[idx[pos]], pl[idx[pos]] = t_try[pos], p[pos]
            th[idx[~pos]], ph[idx[~pos]] = t_try[~pos], p[~pos]
            down[idx[pos]] = False
        need = up
        for _ in range(60):
            idx = np.where(need)[0]
            if not idx.size:
                break
            th[idx] = tl[idx] * 1e3
            G, z = self._aggregated(bb[idx], th[idx])
            p = self._psi(z)
            pos = p > 0
            tl[idx[pos]], pl[idx[pos]] = th[idx[pos]], p[pos]
            ph[idx[~pos]] = p[~pos]
            need[idx[~pos]] = False
        G, z, dp = self._aggregated(bb, th, slope=True)
        best_G = G  # certified bounds (max of G over the iterates)
        best_z = self._feasible(z)  # members; keep the lowest value found
        best_v = np.einsum("ij,ij->i", bb, best_z)
        t_c, p_c, dp_c = th.copy(), ph.copy(), dp  # the last point evaluated (for Newton)
        active = np.ones(n, dtype=bool)
        it = 0
        for it in range(max_iter):
            idx = np.where(active)[0]
            if not idx.size:
                break
            a, c = tl[idx], th[idx]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # Newton on φ(t) = (z_t'Sz_t)^(-1/2) - r^(-1/2), nearly linear in t (as in trust-region
                # secular equations), where ψ itself varies over decades
                nrm = p_c[idx] + self.r
                phi = 1.0 / np.sqrt(nrm) - 1.0 / np.sqrt(self.r)
                newton = t_c[idx] - phi / (-0.5 * nrm**-1.5 * dp_c[idx])
                fa, fc = pl[idx], ph[idx]
                sec = c - fc * (c - a) / (fc - fa)  # regula falsi on the bracket
            # safeguards: the secant inside the bracket, else geometric bisection (arithmetic while a = 0)
            mid = np.where(a > 0, np.sqrt(a * c), 0.5 * c)
            inside_s = np.isfinite(fa) & (sec > a) & (sec < c)
            t_new = np.where((newton > a) & (newton < c), newton, np.where(inside_s, sec, mid))
            if it % 8 == 7:  # a guaranteed shrink now and then
                t_new = mid
            G, z, dp = self._aggregated(bb[idx], t_new, slope=True)
            p = self._psi(z)
            t_c[idx], p_c[idx], dp_c[idx] = t_new, p, dp
            best_G[idx] = np.maximum(best_G[idx], G)
            zf = self._feasible(z)
            val = np.einsum("ij,ij->i", bb[idx], zf)
            better = val < best_v[idx]
            best_v[idx[better]], best_z[idx[better]] = val[better], zf[better]
            pos = p > 0  # keep the bracket [tl, th] with ψ(tl) > 0 >= ψ(th)
            tl[idx[pos]], pl[idx[pos]] = t_new[pos], p[pos]
            th[idx[~pos]], ph[idx[~pos]] = t_new[~pos], p[~pos]
            # stop when a member attains the certified bound
            val = best_v[idx]
            scale = np.maximum(np.abs(val), np.abs(bb[idx] @ self.z_int - val)) + _TINY
            conv = (val - best_G[idx] <= tol * scale) | (th[idx] - tl[idx] <= 1e-15 * th[idx])
            active[idx[conv]] = False
        self.iterations_ = it
        bound[todo] = best_G
        z_best[todo] = best_z
