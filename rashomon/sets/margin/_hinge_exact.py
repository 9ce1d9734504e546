"""The exact hinge KKT point of ``min c'θ`` over S by an active-set method, from a smoothed start (:mod:`._batch`).

With the rows split into those with margin below 1 (set A: loss active, α = 1), above 1 (α = 0) and at the kink
(set E: ``z_j'θ = 1``, α_j ∈ [0, 1]) the hinge set near θ is ``{a_A - g_A'θ <= ε}`` (``a_A = Σ_A w``, ``g_A = Σ_A
w z``) and the KKT conditions of ``min c'θ`` over it and the ball are a square system in (θ, λ, β = λα_E, ν):

    c - λ g_A - Σ_E β_j w_j z_j + 2ν B̃θ = 0,   z_j'θ = 1 (E),   a_A - g_A'θ = ε,   θ'B̃θ = r (ball active; else ν = 0),

linear but for the ball, solved by Newton on the small system alone (no pass over the rows). The partition is then
corrected as a simplex method would: a row that the new point moves across 1 stops the step at the first crossing
(ratio test along the segment from the current point) and joins E; a kink row whose α leaves [0, 1] leaves E (to the
side its multiplier asks for); a negative ball multiplier releases the ball, a violated ball engages it. The
partition is consistent when no row crosses and every multiplier has its sign: that point satisfies the exact KKT
conditions, so the weak-duality bound at its α (:meth:`._batch.MarginBatch.certify`) equals its value up to
rounding. Nothing here is trusted: the caller certifies every answer, and rows it leaves uncertified go on to the
per-row search.

The margins of all rows of a block are one product per round (the columns still moving); E starts from the rows the
smoothed multipliers put strictly between 0 and 1.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_hinge", "finish_hinge"]

_ROUNDS = 40  # partition corrections per row (each: one small solve, one pass over the margins)
_NEWTON = 30  # Newton steps of the small system per round (only the ball is nonlinear)


def _kkt(c, g, aA, ZE, wE, Bt, r, eps, th, lam, beta, nu, ball):
    """Newton on the partition's KKT system; ``(θ, λ, β, ν, ok)``."""
    d, k = len(th), len(wE)
    n = d + 1 + k + (1 if ball else 0)
    ok = False
    cs = max(1.0, float(np.max(np.abs(c))))
    for _ in range(_NEWTON):
        BT = 2.0 * Bt @ th
        F = np.concatenate(
            [
                c - lam * g - ZE.T @ (wE * beta) + nu * BT,
                ZE @ th - 1.0,
                [aA - g @ th - eps],
                [0.5 * th @ BT - r] if ball else [],
            ]
        )
        if not np.all(np.isfinite(F)):
            return th, lam, beta, nu, False
        if np.max(np.abs(F)) <= 4e-16 * cs * max(1.0, abs(lam) * float(np.max(np.abs(g)))):
            return th, lam, beta, nu, True
        R = np.zeros((n, n))
        R[:d, :d] = 2.0 * nu * Bt
        R[:d, d] = -g
        R[:d, d + 1 : d + 1 + k] = -(ZE * wE[:, None]).T
        R[d : d + k, :d] = ZE
        R[d + k, :d] = -g
        if ball:
            R[:d, n - 1] = BT
            R[d + k + 1, :d] = BT
        try:
            step = np.linalg.solve(R, -F)
        except np.linalg.LinAlgError:
            return th, lam, beta, nu, False
        if not np.all(np.isfinite(step)):
            return th, lam, beta, nu, False
        th = th + step[:d]
        lam = lam + step[d]
        beta = beta + step[d + 1 : d + 1 + k]
        if ball:
            nu = nu + step[-1]
        small = np.max(np.abs(step[:d])) <= 1e-15 * max(1.0, float(np.max(np.abs(th))))
        ok = True
        if small:
            break
    return th, lam, beta, nu, ok


def exact_hinge(bat, A, T, lam, nu, ball, tau):
    """``(θ (d x m), λ, ∇ (d x m), Σ_j w_j α_j (m,), converged)`` per row of A from the solution of the hinge
    smoothed at τ (θ: columns of T; ∇ = -Σ_j w_j α_j z_j, the gradient at the exact multipliers)."""
    Z, Zw, w, eps, Bt, r, d = bat.Z, bat.Zw, bat.w, bat.eps, bat.Bt, bat.r, bat.d
    m = A.shape[0]
    Tn, ln = T.copy(), lam.copy()
    Gn, Sn = np.zeros((d, m)), np.zeros(m)
    conv = np.zeros(m, dtype=bool)
    window = tau * np.log(49.0)  # the smoothed multiplier σ((1 - m)/τ) strictly inside (0.02, 0.98)
    for i in range(m):
        c, th, la, nv, bl = A[i], T[:, i].copy(), float(lam[i]), float(nu[i]), bool(ball[i])
        mg = Z @ th
        E = np.where(np.abs(1.0 - mg) < window)[0]
        cap = 0 if bl else d - 1  # the ball engaged: E grows by ratio tests; free: a vertex's d - 1 kinks
        if E.size > cap:
            E = E[np.argsort(np.abs(1.0 - mg[E]))[:cap]]
        inE = np.zeros(len(w), dtype=bool)
        inE[E] = True
        act = (mg < 1.0) & ~inE
        beta = la / (1.0 + np.exp((mg[E] - 1.0) / tau))
        done = False
        for _ in range(_ROUNDS):
            E = np.where(inE)[0]
            g = Zw.T @ act
            aA = float(w @ act)
            th2, la2, b2, nv2, ok = _kkt(c, g, aA, Z[E], w[E], Bt, r, eps, th, la, beta, nv if bl else 0.0, bl)
            if not ok:
                if bl:
                    break
                # without the ball the partition leaves an edge (fewer than d - 1 kinks): move along it, c'θ
                # decreasing and the loss constant, to the first row reaching 1 (it joins E) or to the ball
                M = np.vstack([Z[E], g[None, :]])
                p = -(c - M.T @ np.linalg.lstsq(M.T, c, rcond=None)[0])
                if not float(c @ p) < -1e-14 * float(np.abs(c) @ np.abs(p)):
                    break
                dm = Z @ p
                with np.errstate(divide="ignore", invalid="ignore"):
                    t = np.where(~inE & (((mg < 1.0) & (dm > 0)) | ((mg > 1.0) & (dm < 0))), (1.0 - mg) / dm, np.inf)
                j = int(np.argmin(t))
                pb, tb, rb = p @ Bt @ p, th @ Bt @ p, th @ Bt @ th - r
                t_ball = (-tb + np.sqrt(max(tb * tb - pb * rb, 0.0))) / pb if pb > 0 else np.inf
                if not np.isfinite(min(t[j], t_ball)):
                    break
                if t_ball < t[j]:
                    th, mg = th + t_ball * p, mg + t_ball * dm
                    bl, nv = True, 1e-3 * la
                else:
                    th, mg = th + t[j] * p, mg + t[j] * dm
                    beta = np.insert(beta, int(np.searchsorted(E, j)), 0.0)
                    inE[j], act[j] = True, False
                continue
            if bl and nv2 < 0:  # release the ball
                bl, nv = False, 0.0
                th, la, beta = th2, la2, b2
                mg = Z @ th
                continue
            if not bl and th2 @ Bt @ th2 > r * (1 + 1e-12):
                bl, nv = True, max(nv, 1e-3 * la2)
                continue
            m2 = Z @ th2
            cross = (act & (m2 >= 1.0)) | (~act & ~inE & (m2 <= 1.0))
            if cross.any():  # ratio test: the first row to reach 1 on the segment joins E
                cj = np.where(cross)[0]
                dm = m2[cj] - mg[cj]
                with np.errstate(divide="ignore", invalid="ignore"):
                    t = np.where(dm != 0, (1.0 - mg[cj]) / dm, 0.0)
                t = np.clip(t, 0.0, 1.0)
                s = int(np.argmin(t))
                ts, js = float(t[s]), int(cj[s])
                th = th + ts * (th2 - th)
                la = la + ts * (la2 - la)
                beta = np.insert(beta + ts * (b2 - beta), int(np.searchsorted(E, js)), 0.0)
                nv = nv + ts * (nv2 - nv) if bl else 0.0
                mg = mg + ts * (m2 - mg)
                inE[js], act[js] = True, False
                if not bl and inE.sum() > d - 1:  # a vertex has d - 1 kinks: the one whose α is worst leaves
                    E2 = np.where(inE)[0]
                    al = beta / la if la > 0 else beta
                    pos = np.searchsorted(E2, js)
                    worst = np.argmin(np.where(np.arange(len(E2)) == pos, np.inf, np.minimum(al, 1.0 - al)))
                    jw = E2[worst]
                    inE[jw], act[jw] = False, al[worst] > 1.0
                    beta = np.delete(beta, worst)
                continue
            th, la, beta, nv, mg = th2, la2, b2, nv2, m2
            if la <= 0:
                break
            al = beta / la
            bad = np.where((al < -1e-13) | (al > 1 + 1e-13))[0]
            if not bad.size:
                done = True
                break
            k = bad[np.argmax(np.maximum(-al[bad], al[bad] - 1.0))]
            j = E[k]
            inE[j] = False
            act[j] = al[k] > 1.0
            beta = np.delete(beta, k)
        if done:
            E = np.where(inE)[0]
            aE = np.clip(beta / la, 0.0, 1.0)
            Tn[:, i], ln[i] = th, la
            Gn[:, i] = -(Zw.T @ act + Zw[E].T @ aE)
            Sn[i] = float(w @ act + w[E] @ aE)
            conv[i] = True
    return Tn, ln, Gn, Sn, conv


def finish_hinge(bat, A, corner, T, lam, nu, ball, out, tol) -> None:
    """Replace in ``out`` (``(bound, θ, value, ok)`` of the smoothed solutions, certified) every row whose exact
    KKT point (:func:`exact_hinge`; where it fails with the ball free, the reduced linear programme of
    :func:`._hinge_lp.hinge_lp`) certifies better."""
    Tp, lp, Gp, Sp, conv = exact_hinge(bat, A, T, lam, nu, ball, bat.tau)
    for i in np.where(~conv & ~ball)[0]:
        got = _lp(bat, A[i], T[:, i])
        if got is not None:
            Tp[:, i], lp[i], Gp[:, i], Sp[i] = got
            conv[i] = True
    rows = np.where(conv)[0]
    again = bat.certify(A[rows], corner[rows], Tp[:, rows], lp[rows], None, Gp[:, rows], Sp[rows], tol)
    better = again[3] | (again[2] - again[0] < out[2][rows] - out[0][rows])
    for k in range(4):
        out[k][rows[better]] = again[k][better]


def _lp(bat, c, th):
    """:func:`._hinge_lp.hinge_lp` with θ boxed by K's coordinate extremes (built once per batch)."""
    from ._hinge_lp import hinge_lp

    if getattr(bat, "_box", None) is None:
        eng = bat.eng
        half = np.zeros(bat.d)
        half[eng.pen] = np.sqrt(bat.r * np.diag(eng._Bp_inv))
        lo, hi = -half, half.copy()
        if bat.o:
            lo[0], hi[0] = eng.lo[0], eng.hi[0]
        bat._box = (lo, hi)
    return hinge_lp(bat, c, th, bat._box)
