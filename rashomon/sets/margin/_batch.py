"""Ranges of many linear functionals over a classifier Rashomon set at once: batched Newton on the KKT system.

For each functional c, ``min c'θ`` over ``S = {θ ∈ K : L(θ) <= ε}`` (L the mean loss, K the class's ball
``θ_p'B_pθ_p <= r`` with the intercept in an interval containing S) is a convex programme whose solution is a KKT
point ``c + λ∇L(θ) + 2νB̃θ = 0``, ``L(θ) = ε``, ``θ'B̃θ = r`` (or ``ν = 0``), with ``λ > 0, ν >= 0`` (B̃: B on the
penalised coordinates, 0 on the intercept). All functionals are solved together by Newton's method on this system
(backtracking on the residual norm; the ball engaged or released per row by its multiplier's sign), started from
the exact ranges of the second-order model of L at θ_min (:class:`~rashomon.sets.LinearFunctionalRange`, closed
form per row); the Hessians ``Z'diag(w)Z`` of all rows are one matrix product with the row-wise outer products of
the (deduplicated) signed design Z. The logistic loss is solved as is (5 Newton steps per row on average on
breast cancer and COMPAS); where rows stop once certified, a row's Hessian is reused while its steps are small,
corrected by a BFGS update from each accepted step (Δθ, Δ∇L), and the first step takes θ_min's Hessian. The hinge runs three smoothings ``τ·softplus((1 - m)/τ)`` (τ from a quarter of the
slack ε - e_min, divided by 10 twice; ``L_τ >= hinge`` so S_τ ⊆ S), each warm-started and solved coarsely, and
then :func:`._hinge_exact.exact_hinge` finds the exact hinge's KKT point by an active-set method from the smoothed
point (kink rows ``z_j'θ = 1`` added by ratio tests, released by their multipliers' signs); a row it leaves with
the ball free is solved as a reduced linear programme (:func:`._hinge_lp.hinge_lp`). Every end is then exact to
rounding (gaps about 1e-13 relative).

Nothing of Newton's is trusted. With ``μ = 1/λ`` and the final θ, ``h(μ) = min_K L + μc'θ`` is bounded below by
the Frank–Wolfe bound ``f(θ) + min_{z∈K} ∇f(θ)'(z - θ)`` (logistic) or by weak duality of the exact hinge at any
``α ∈ [0, 1]^n`` (:mod:`._solve`); less its rounding (64 ulp of its terms: 1/μ multiplies it), ``(h_lb - ε)/μ``
bounds c'θ over S. θ, moved into S (the ball by a radial factor, the loss along the segment to θ_min) and checked
by the engine's membership test, is the attaining member; a row whose gap exceeds the tolerance goes to the
per-row certified search.
"""

from __future__ import annotations

import numpy as np

from ._batch_kernels import (
    _bfgs,
    _multipliers,
    _softplus_sigmoid_into,
    _solve_each,
    capped_loss,
    corners,
    hessians,
    second_order_model,
)

__all__ = ["MarginBatch"]

_ROUND, _ALLOW = 64 * np.finfo(float).eps, 1e-6  # a dual value's relative rounding; the widest gap `allow` accepts
# the hinge's smoothings (they only start ._hinge_exact): Newton steps and KKT residual to stop (before/at the last)
_STAGES, _HINGE_ITS, _HINGE_LAST, _HINGE_PATH, _HINGE_RTOL = 3, 4, 40, 1e-3, 1e-10
_FLAT = 40.0  # the hinge's smoothed terms are evaluated with the scaled margins clipped to ±_FLAT
_COLS = 256  # functionals per block of margins (n x 256 floats; COMPAS: 15% faster than 1,024, cache)
# the rows' outer products are kept up to 256 MB (10^5 rows x 20 features: 185 MB); above, those of every k-th row
# (weights scaled, 128 MB): the Hessian only steers Newton (every row is certified), and a sampled one costs O(2^25)
_ZZ_FLOATS, _ZZ_SAMPLE = 1 << 25, 1 << 24
_FAR = 1e4  # θ'B̃θ beyond this multiple of r: the iterate is too far outside K for its Frank–Wolfe bound
_MARGIN_FLOATS = 1 << 22  # margins of a block of functionals (k x n floats) up to 32 MB: fewer columns at large n
_ROWS = 65536  # rows per block of outer products when they are not kept
_REUSE = 1e-2  # a row's Hessian is reused while its Newton steps are below this share of its largest coordinate
# logistic rows whose Hessian is reused take BFGS updates from each accepted step (the pair Δθ, Δ∇L); their first
# step starts from θ_min's Hessian: 10^4 x 10, 1,000 rows, 20% fewer CPU seconds than fresh Hessians and chord steps
_SECANT = True
_STOP = 0.3  # rows stop once certified within this share of tol: ends about as tight as exact Newton's


class MarginBatch:
    """Batched KKT-Newton ranges of a logistic or hinge set (see the module docstring); built once per engine."""

    def __init__(self, eng):
        ms = eng.ms
        self.eng, self.eps, self.e_min = eng, eng.eps, eng.e_min
        Z, cnt = np.unique(ms.y[:, None] * ms.D, axis=0, return_counts=True)
        self.w = cnt.astype(float) / len(ms.y)
        self.Zt = np.ascontiguousarray(Z.T)  # margins of k functionals: (k x d)(d x n), rows contiguous
        self.Z = Z = self.Zt.T  # a view: one copy of the rows kept (10^6 x 20: 168 MB each)
        self.Zw = Z * self.w[:, None]
        d = Z.shape[1]
        self.d, self.o, self.r = d, ms.o, ms.r
        self.Bt = np.zeros((d, d))
        self.Bt[ms.o :, ms.o :] = 0.5 * (ms.B[ms.o :, ms.o :] + ms.B[ms.o :, ms.o :].T)
        self.iu = np.triu_indices(d)
        # row-wise outer products (upper triangle), kept when they fit in _ZZ_FLOATS; else those of every k-th row
        self.ZZ = Z[:, self.iu[0]] * Z[:, self.iu[1]] if len(Z) * len(self.iu[0]) <= _ZZ_FLOATS else None
        self.stride = 1 if self.ZZ is not None else -(-len(Z) * len(self.iu[0]) // max(_ZZ_SAMPLE, 1))
        if self.ZZ is None:
            Zs, ws = Z[:: self.stride], self.w[:: self.stride]
            self.ZZs, self.ws = Zs[:, self.iu[0]] * Zs[:, self.iu[1]], ws * (self.w.sum() / ws.sum())
        self.hinge, self.lc = ms.loss.name == "hinge", ms.loss.c
        self.cols = int(max(8, min(_COLS, _MARGIN_FLOATS // max(len(Z), 1))))
        self._cache_rows = min(32, self.cols)  # in cache at 10^4 rows; at 10^5 fewer would reread Z per product
        # L at θ with the penalised part zeroed is at most log 2 + |θ_0|·Σw|z_0| (softplus(-x) <= log 2 + |x|)
        self.a0 = float(self.w @ np.abs(Z[:, 0])) if ms.o else 0.0
        if self.hinge:  # smoothings: the first within a quarter of the slack (S_τ ⊆ S not empty), down to the class's
            t0 = min(0.1, 0.25 * max(self.eps - self.e_min, 0.0) / np.log(2.0))
            taus = [t0]
            while taus[-1] > 10 * ms.loss.s and len(taus) < _STAGES:
                taus.append(taus[-1] / 10)
            self.taus = taus if len(taus) == _STAGES else taus + [ms.loss.s]
        else:
            self.taus = [1.0]
        self.tau = self.taus[0]
        self._quad = None
        self._H0 = None  # the logistic loss's Hessian at θ_min (set with the second-order model)
        self._work = self._bufs = None  # work arrays of value_grad, margins of a block and its trials (solve)
        self.n_eval = 0
        self.tick = None  # progress callback (rows done), set by the caller
        self._decide = None  # (corner, τ, strict) of the block being solved, when rows stop once decided
        self._tol = None  # logistic: rows stop once certified within this tolerance

    # ------------------------------------------------------------------ the loss, vectorised over columns
    def loss(self, T: np.ndarray, cap: float | None = None) -> np.ndarray:
        """The exact L(θ) for every column θ of T (d x k); ``cap``: see :func:`._batch_kernels.capped_loss`."""
        return capped_loss(self, T, cap)

    def value_grad(self, T: np.ndarray, out: np.ndarray | None = None):
        """``(L, ∇L, s)`` of the loss smoothed at τ (``τ·softplus((c - m)/τ)``; the logistic loss is τ = 1, c = 0)
        for the columns of T, with ``s = -ℓ'(m) = σ((c - m)/τ)`` (written into the first rows of ``out``, k x n, if
        given: then s is a view of it)."""
        k, n = T.shape[1], len(self.w)
        self.n_eval += k
        St = np.empty((k, n)) if out is None else out[:k]  # k x n: a functional's margins contiguous (selected and
        val, G = np.empty(k), np.empty((k, self.d))  # replaced by row); a few rows at a time stay in cache, their
        rows = min(k, self._cache_rows)  # gradients taken while they are there
        work = self._work if self._work is not None and len(self._work[0]) >= rows else None
        A, B = (np.empty((rows, n)), np.empty((rows, n))) if work is None else work
        for a in range(0, k, rows):
            X = St[a : a + rows]
            np.matmul(T[:, a : a + rows].T, self.Zt, out=X)
            if self.hinge:  # beyond |x| = 40 the terms are linear (or 0) to 4e-18: exp's slow range is skipped
                X -= self.lc
                X /= self.tau
                lin = np.minimum(X + _FLAT, 0.0) @ self.w
                np.clip(X, -_FLAT, _FLAT, out=X)
            val[a : a + len(X)] = _softplus_sigmoid_into(X, self.w, A[: len(X)], B[: len(X)])
            if self.hinge:
                val[a : a + len(X)] -= lin
            np.matmul(X, self.Zw, out=G[a : a + len(X)])
        return self.tau * val, -G.T, St.T

    def hessians(self, s: np.ndarray, exact: bool = False, out: np.ndarray | None = None) -> np.ndarray:
        """``Z'diag(w σ(m)σ(-m))Z`` per column of s (= σ(-m)): one product with the row-wise outer products (those
        of every ``stride``-th row when they are not all kept, unless ``exact``: then built a block at a time)."""
        return hessians(self, s, exact, out, _ROWS)

    def _start(self, A: np.ndarray) -> np.ndarray:
        """Exact minimisers over the second-order model of L at θ_min cut by the ball (rows of A)."""
        if self._quad is None:
            self._quad, self._H0 = second_order_model(self)
        return self._quad.minimize(A, tol=1e-8)[1]

    # ------------------------------------------------------------------ Newton
    def solve(self, A: np.ndarray, n_iter: int = 40, block: int = _COLS, decide=None, tol=None):
        """``(θ, λ, L, ∇L, Σ_j w_j s_j, ν, ball)`` near the KKT points of ``min a'θ`` over S, one per row a of A
        (θ: d x m; λ, ν: (m,); s = -ℓ'(m)), in blocks of rows (memory: the margins of a block). ``decide = (corner,
        τ, strict)`` (logistic): a row stops as soon as its certified bound or a member decides ``min a'θ <= τ``
        (``< τ`` where strict); ``tol`` (logistic): a row stops once certified within tol (:meth:`certify`). Σ w s
        is NaN for a logistic row whose last σ(-m) was not kept (the certificate uses it for the hinge only)."""
        T0 = self._start(A).T.copy()
        block = max(1, min(block, self.cols, len(A)))
        n, rows = len(self.w), min(block, self._cache_rows)
        # the margins of a block and of its trial steps, and the kernel's work arrays, allocated once per call: fresh
        # arrays of this size cost their page faults at every evaluation (10^4 x 10, 1,000 rows: a quarter of the time)
        self._work, self._bufs = (
            (np.empty((rows, n)), np.empty((rows, n))),
            (np.empty((block, n)), np.empty((block, n))),
        )
        try:
            return self._solve(A, T0, block, n_iter, decide, tol)
        finally:
            self._work = self._bufs = None

    def _solve(self, A, T0, block, n_iter, decide, tol):
        out: list = []
        self._tol = None if self.hinge or tol is None else tol * _STOP
        for a in range(0, len(A), block):
            C, T, lam, nu, ball = A[a : a + block].T, T0[:, a : a + block], None, None, None
            self._decide = None if decide is None else tuple(z[a : a + block] for z in decide)
            for k, tau in enumerate(self.taus):  # the hinge: decreasing smoothings, each warm-started and solved
                self.tau = tau  # coarsely (the exact active-set method of ._hinge_exact finishes)
                last = k == len(self.taus) - 1
                its = (n_iter if not self.hinge else _HINGE_LAST) if last else _HINGE_ITS
                with np.errstate(all="ignore"):  # rejected trial steps may overflow; non-finite ones are discarded
                    T, lam, nu, ball, L, G, S, have = self._solve_block(
                        C, T, its, lam, nu, ball, (_HINGE_RTOL if last else _HINGE_PATH) if self.hinge else 1e-14
                    )
            out.append((T, lam, L, G, np.where(have, self.w @ S, np.nan), nu, ball))
            self._decide = None
            if self.tick is not None:
                self.tick(len(lam))  # type: ignore[arg-type]  # set: self.taus is never empty
        self._tol = None
        return tuple(np.concatenate(z, axis=-1) for z in zip(*out))

    def _solve_block(self, C, T, n_iter, lam=None, nu=None, ball=None, rtol=1e-14):
        eps, Bt, r, d = self.eps, self.Bt, self.r, self.d
        m = C.shape[1]
        bufs = (None, None) if self._bufs is None else self._bufs
        L, G, S = self.value_grad(T, bufs[0])
        St = S.T  # k x n, rows contiguous (selected and replaced by row)
        BT = 2.0 * Bt @ T
        first = lam is None
        if lam is None:
            lam, nu, ball = _multipliers(C, G, BT)
        lam, nu, ball = lam.copy(), nu.copy(), ball.copy()
        scale = np.maximum(np.abs(C).max(0), 1e-300)
        epsn = max(eps, 1e-300)

        def residual(idx, T, lam, nu, ball, L, G):
            BT = 2.0 * Bt @ T
            F1 = C[:, idx] + lam * G + nu * BT
            F3 = np.where(ball, 0.5 * (T * BT).sum(0) - r, 0.0)
            res = np.sqrt(((F1 / scale[idx]) ** 2).sum(0) + ((L - eps) / epsn) ** 2 + (F3 / r) ** 2)
            return res, F1, L - eps, F3, BT

        res, F1, F2, F3, BT = residual(slice(None), T, lam, nu, ball, L, G)
        act = np.arange(m)
        # a row's Hessian is kept while its steps are small (chord steps; a failed one recomputes it)
        reuse = _REUSE if self._decide is not None or self._tol is not None else 0.0
        Hs, fresh = np.empty((m, d, d)), np.ones(m, dtype=bool)
        secant = _SECANT and reuse > 0 and not self.hinge
        if secant and first and self._H0 is not None:  # the first step with θ_min's Hessian (its secant updates
            Hs[:], fresh[:] = self._H0, False  # correct it): a chord step costs no product over the rows
        have = np.ones(m, dtype=bool)  # St holds σ(-m) at the row's θ (kept only where a Hessian is due: secant)
        for it in range(n_iter):  # noqa: B007  (it is read after the loop)
            if not act.size:
                break
            need = act[fresh[act]]
            if need.size:
                miss = need[~have[need]]
                if miss.size:  # a failed chord step's row whose σ(-m) was not kept: evaluated again
                    St[miss], have[miss] = self.value_grad(T[:, miss])[2].T, True
                Hs[need] = self.hessians(St[need].T, out=bufs[1])  # (the trial steps' array is free)
            H = Hs[act]
            chord = ~fresh[act]
            la, na, ba = lam[act], nu[act], ball[act]
            k = len(act)
            J = np.zeros((k, d + 2, d + 2))
            J[:, :d, :d] = la[:, None, None] * H + 2.0 * na[:, None, None] * Bt[None]
            J[:, :d, d] = J[:, d, :d] = G[:, act].T
            J[:, :d, d + 1] = BT[:, act].T
            J[:, d + 1, :d] = np.where(ba[:, None], BT[:, act].T, 0.0)
            J[:, d + 1, d + 1] = np.where(ba, 0.0, 1.0)
            rhs = -np.concatenate([F1[:, act], F2[None, act], F3[None, act]], axis=0).T
            step = _solve_each(J, rhs)
            good = np.isfinite(step).all(1)
            act, step, chord = act[good], step[good], chord[good]
            fresh[act] = np.abs(step[:, :d]).max(1) > reuse * np.maximum(np.abs(T[:, act]).max(0), 1e-300)
            t = 1.0
            todo, st, retry = act, step, act[:0]
            for _bt in range(24):  # backtracking on the residual norm, only the rows not yet decreased
                if _bt:  # rows at the rounding floor stop (the certificate judges them)
                    keep = res[todo] >= 1e-11
                    if _bt == 1:  # a chord step that failed: again with the row's own Hessian
                        retry = todo[keep & np.isin(todo, act[chord])]
                        keep &= ~np.isin(todo, retry)
                    todo, st = todo[keep], st[keep]
                if not todo.size:
                    break
                Tn = T[:, todo] + t * st[:, :d].T
                ln = lam[todo] + t * st[:, d]
                ln = np.where(ln > 0, ln, 0.5 * lam[todo])
                nn = np.where(ball[todo], nu[todo] + t * st[:, d + 1], 0.0)
                Ln, Gn, Sn = self.value_grad(Tn, bufs[1])
                rn, f1, f2, f3, btn = residual(todo, Tn, ln, nn, ball[todo], Ln, Gn)
                ok = np.isfinite(rn) & (rn < res[todo] * (1 - 1e-4 * t))
                if _bt == 23:
                    ok = np.isfinite(rn) & (rn < res[todo])
                sel = todo[ok]
                if secant:  # the rows whose next step reuses their Hessian: corrected by this step's secant pair
                    up = sel[~fresh[sel]]
                    Hs[up] = _bfgs(Hs[up], Tn[:, ok][:, ~fresh[sel]] - T[:, up], Gn[:, ok][:, ~fresh[sel]] - G[:, up])
                T[:, sel], lam[sel], nu[sel], G[:, sel] = Tn[:, ok], ln[ok], nn[ok], Gn[:, ok]
                keep = ok & fresh[todo] if secant else ok  # σ(-m) kept for the rows whose next step takes a Hessian
                St[todo[keep]] = Sn.T if keep.all() else Sn.T[keep]  # (a copy of n floats per row: 13% of the time)
                have[sel] = keep[ok]
                res[sel], F1[:, sel], F2[sel], F3[sel], BT[:, sel] = rn[ok], f1[:, ok], f2[ok], f3[ok], btn[:, ok]
                todo, st, t = todo[~ok], st[~ok], 0.5 * t
            stuck = np.isin(act, todo)
            fresh[retry] = True
            # active set: a negative ball multiplier releases the ball; the ball violated without it engages it
            q = 0.5 * (T[:, act] * BT[:, act]).sum(0)
            rel = ball[act] & (nu[act] < 0)
            eng = ~ball[act] & (q > r * (1 + 1e-12))
            ch = act[rel | eng]
            if ch.size:
                ball[act[rel]], nu[act[rel]] = False, 0.0
                ball[act[eng]] = True
                res[ch], F1[:, ch], F2[ch], F3[ch], BT[:, ch] = residual(
                    ch, T[:, ch], lam[ch], nu[ch], ball[ch], F2[ch] + eps, G[:, ch]
                )
                stuck &= ~(rel | eng)
            act = act[~stuck & (res[act] >= rtol)]
            if (self._decide is not None or self._tol is not None) and act.size:
                act = act[~self._decided(act, C, T, lam, F2 + eps, G, St)]
        self.n_iter = it
        return T, lam, nu, ball, F2 + eps, G, St.T, have

    def _decided(self, act, C, T, lam, L, G, St) -> np.ndarray:
        """Rows of ``act`` whose question ``min c'θ <= τ`` the current iterate already answers (its certified bound
        is above τ, or its member is at or below), or, without a question, that are certified within ``_tol``
        (:meth:`certify`: no loss evaluation, the logistic member's loss bounded by convexity)."""
        if self._decide is None:
            Ca = C[:, act].T
            return self.certify(
                Ca, self.corners(Ca)[0], T[:, act].copy(), lam[act], L[act], G[:, act], None, self._tol, cheap=True
            )[3]
        corner, tau, strict = (z[act] for z in self._decide)
        S = St[act] @ self.w if self.hinge else None  # the hinge: weak duality at the smoothed multipliers
        b, _t, v, _ok, inside = self.certify(
            C[:, act].T, corner, T[:, act].copy(), lam[act], L[act], G[:, act], S, 0.0, full=True, above=tau
        )
        below = lambda x: np.where(strict, x < tau, x <= tau)  # noqa: E731
        return (inside & below(v)) | (np.isfinite(b) & ~below(b))  # certify: no bound from an iterate far outside K

    # ------------------------------------------------------------------ certificate and member
    def corners(self, A: np.ndarray):
        """``(min_K a'θ, a minimiser)`` for every row a (see :meth:`MarginFunctionalRange.corner`), vectorised."""
        return corners(self.eng, A)

    def members(self, T: np.ndarray, L: np.ndarray | None = None) -> np.ndarray:
        """Rows of T (m x d) in S, each by a margin far above rounding, checked exactly where it is close (``L``: an
        upper bound on each row's loss, else computed)."""
        eng, ms, eps = self.eng, self.eng.ms, self.eps
        pen = eng.pen
        Bp = ms.B[np.ix_(pen, pen)]
        q = ((T[:, pen] @ Bp) * T[:, pen]).sum(1)
        band = max(1e-14 * (eps - self.e_min), 1e-15 * eps, 1e-300)
        L = self.loss(T.T, cap=eps + band) if L is None else L  # a partial sum over eps + band: outside
        ok = (q <= ms.r * (1 - 1e-15)) & (L <= eps - band)
        for i in np.where(~ok & (q <= ms.r * (1 + 1e-11)) & (L <= eps + band))[0]:  # too close to call: exactly
            ok[i] = eng.in_set(T[i])
        return ok

    def minimize(self, A: np.ndarray, tol: float, decide=None):
        """``(bound, θ, value, ok)`` for the rows of A; ``ok`` marks rows certified within tol. ``decide = (τ,
        strict)`` (logistic): stop each row once ``min a'θ <= τ`` (``< τ`` where strict) is answered, certified
        either way (such rows may end with ``ok`` False: their bound and member still stand)."""
        m = len(A)
        bound, value, theta = np.empty(m), np.empty(m), np.empty((m, self.d))
        # the ball alone (the loss constraint inactive): K's minimum is a member
        corner, th = self.corners(A)
        done = self.members(th)
        bound[done] = value[done] = (A[done] * th[done]).sum(1)
        theta[done] = th[done]
        if self.tick is not None:
            self.tick(int(done.sum()))
        rest = np.where(~done)[0]
        if rest.size:
            dec = None if decide is None else (corner[rest], decide[0][rest], decide[1][rest])
            b, th, v, ok = self._newton(A[rest], corner[rest], tol, dec)
            bound[rest], theta[rest], value[rest] = b, th, v
            done[rest] = ok
        return bound, theta, value, done

    def _newton(self, A, corner, tol, decide=None):
        T, lam, L, G, S, nu, ball = self.solve(A, decide=decide, tol=tol)
        out = self.certify(A, corner, T.copy(), lam, L, G, S, tol)
        if self.hinge and len(A):  # the exact hinge's KKT point (._hinge_exact) where the question is still open
            from ._hinge_exact import finish_hinge

            finish_hinge(self, A, corner, T, lam, nu, ball, out, tol, decide)
        return out

    def certify(self, A, corner, T, lam, L, G, S, tol, full=False, cheap=False, above=None):
        """``(bound, θ, value, ok)`` from the solver's θ (columns of T) and multipliers λ (see the module notes);
        ``full``: also whether each member is in S. ``L`` (the exact loss at T, logistic) spares its evaluation:
        where the ball moves θ by a factor f >= 1 - 1e-6 on the penalised part, L at fθ is at most ``fL + (1 -
        f)(log 2 + |θ_0|Σw|z_0|)`` (convexity; the other end has the penalised part zeroed); ``cheap``: no loss
        evaluated, a member moved further is not found (θ_min stands for it). ``S``: the hinge's
        ``Σ_j w_j α_j`` per column (unused for the logistic loss). ``above``: see where L is evaluated."""
        eng, eps = self.eng, self.eps
        ms = eng.ms
        mu = 1.0 / lam
        C = A.T
        G = G + mu * C  # ∇f at θ, f = L + μc'θ (the hinge: -Σ w α z + μc at the smoothed multipliers α = S)
        # min over K of g'z (ball on the penalised part, the intercept at the end g favours)
        pen = eng.pen
        Gp = G[pen]
        supp = -np.sqrt(np.maximum(ms.r * (Gp * (eng._Bp_inv @ Gp)).sum(0), 0.0))
        if ms.o:
            supp += np.where(G[0] > 0, G[0] * eng.lo[0], G[0] * eng.hi[0])
        if self.hinge:  # weak duality of the exact hinge at α ∈ [0, 1]: h(μ) >= Σ w α + min_K g'z
            lb, mag = S + supp, np.abs(S) + np.abs(supp)
        else:  # Frank–Wolfe: h(μ) >= f(θ) + min_K g'(z - θ)
            lb = L + mu * (C * T).sum(0) - (G * T).sum(0) + supp
            mag = np.abs(L) + mu * (np.abs(C) * np.abs(T)).sum(0) + (np.abs(G) * np.abs(T)).sum(0) + np.abs(supp)
        # lb's rounding, which 1/μ multiplies (huge without slack, e.g. ε = e_min = 0 on separable rows), allowed for
        bound = np.maximum((lb - _ROUND * (mag + abs(eps)) - eps) / mu, corner)
        # members: the ball by a radial factor, then L along the segment to θ_min to ε - 1e-13·(ε - e_min)
        q = (T[pen] * (ms.B[np.ix_(pen, pen)] @ T[pen])).sum(0)
        if not self.hinge:  # an iterate far outside K (a rank-deficient design's null direction: |θ| ~ 1e7 and more)
            # computes the Frank–Wolfe terms with cancelling digits (bounds up to 2.6e-8 too high): K's bound instead
            bound = np.where(q > ms.r * _FAR, corner, bound)
        f = np.where(q > ms.r * (1 - 1e-14), np.sqrt(ms.r * (1 - 1e-14) / np.maximum(q, 1e-300)), 1.0)
        T[pen] *= f
        moved, t0_ = f < 1.0, ms.theta_min
        if self.hinge or L is None:  # above: θ and θ_min both above, so is their segment (L: 1e300 bounds it in K)
            keep = np.ones(T.shape[1], bool) if above is None else ((C * T).sum(0) <= above) | (A @ t0_ <= above)
            L = np.where(keep, 0.0, 1e300)
            L[keep] = self.loss(T[:, keep])
        elif moved.any():
            near = moved & (f >= 1 - 1e-6)
            far = moved & ~near
            L = L.copy()
            th0 = np.abs(T[0]) if ms.o else 0.0
            L[near] = (f * L + (1.0 - f) * (np.log(2.0) + th0 * self.a0))[near] * (1 + 1e-15)
            if far.any():
                L[far] = np.inf if cheap else self.loss(T[:, far])
        t0 = ms.theta_min[:, None]
        slack = eps - self.e_min
        s = np.minimum(1.0, slack * (1 - 1e-13) / np.maximum(L - self.e_min, 1e-300))
        T = (t0 + s * (T - t0)).T.copy()
        # L on the segment is convex: L(θ_min + s(θ - θ_min)) <= (1 - s)e_min + sL(θ) = ε - 1e-13·slack when s < 1
        inside = self.members(T, np.where(s < 1, self.e_min + s * (L - self.e_min), L))
        value = (A * T).sum(1)
        fin = np.isfinite(bound) & np.isfinite(value) & inside
        allow = np.minimum(4 * ms.loss.offset / mu, _ALLOW * np.maximum(1.0, np.abs(bound)))  # tiny μ: no wide gap
        ok = fin & (value - bound <= tol * np.maximum(1.0, np.abs(bound)) + allow)
        bound = np.where(ok & (bound > value), value, bound)
        return (bound, T, value, ok, inside) if full else (bound, T, value, ok)
