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
smoothed multipliers put strictly between 0 and 1. Above 1,024 rows each end is followed first on the rows nearest
their kink only, the others held as fixed sums while θ stays within the radius that keeps them on their side
(:func:`_row`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_hinge", "finish_hinge"]

_ROUNDS = 40  # partition corrections per row (each: one small solve, one pass over the margins)
_FINER = 30  # Newton steps per further smoothing of the rows the first start leaves
_NEWTON = 30  # Newton steps of the small system per round (only the ball is nonlinear)
_NEAR_MIN, _NEAR_SHARE = 512, 8  # rows followed first: those nearest their kink, max(512, n/32) of them
_FAR = object()  # a point left the radius within which the other rows keep their sides


def _kkt(c, g, aA, ZE, wE, Bt, r, eps, th, lam, beta, nu, ball):
    """Newton on the partition's KKT system; ``(θ, λ, β, ν, ok)``. The Jacobian is built once and only its ball
    blocks are updated per step (the system is linear but for the ball)."""
    d, k = len(th), len(wE)
    n = d + 1 + k + (1 if ball else 0)
    ok = False
    cs = max(1.0, float(np.abs(c).max()))
    R = np.zeros((n, n))
    R[:d, d] = -g
    R[:d, d + 1 : d + 1 + k] = -(ZE * wE[:, None]).T
    R[d : d + k, :d] = ZE
    R[d + k, :d] = -g
    ZWt = R[:d, d + 1 : d + 1 + k]  # -(Z_E' diag(w_E)), a view
    F = np.empty(n)
    gmax = float(np.abs(g).max()) if d else 0.0
    for _ in range(_NEWTON):
        BT = 2.0 * (Bt @ th)
        F[:d] = c - lam * g + ZWt @ beta + nu * BT
        F[d : d + k] = ZE @ th - 1.0
        F[d + k] = aA - g @ th - eps
        if ball:
            F[d + k + 1] = 0.5 * (th @ BT) - r
        fmax = float(np.abs(F).max())
        if not np.isfinite(fmax):
            return th, lam, beta, nu, False
        if fmax <= 4e-16 * cs * max(1.0, abs(lam) * gmax):
            return th, lam, beta, nu, True
        R[:d, :d] = 2.0 * nu * Bt
        if ball:
            R[:d, n - 1] = BT
            R[d + k + 1, :d] = BT
        try:
            step = np.linalg.solve(R, -F)
        except np.linalg.LinAlgError:
            return th, lam, beta, nu, False
        if not np.isfinite(step).all():
            return th, lam, beta, nu, False
        th = th + step[:d]
        lam = lam + step[d]
        beta = beta + step[d + 1 : d + 1 + k]
        if ball:
            nu = nu + step[-1]
        ok = True
        if not ball:  # linear: one step solves it (to rounding)
            break
        if float(np.abs(step[:d]).max()) <= 1e-15 * max(1.0, float(np.abs(th).max())):
            break
    return th, lam, beta, nu, ok


def exact_hinge(bat, A, T, lam, nu, ball, tau, cap=None):
    """``(θ (d x m), λ, ∇ (d x m), Σ_j w_j α_j (m,), converged)`` per row of A from the solution of the hinge
    smoothed at τ (θ: columns of T; ∇ = -Σ_j w_j α_j z_j, the gradient at the exact multipliers)."""
    Zw, w, d = bat.Zw, bat.w, bat.d
    m = A.shape[0]
    Tn, ln = T.copy(), lam.copy()
    Gn, Sn = np.zeros((d, m)), np.zeros(m)
    conv = np.zeros(m, dtype=bool)
    for i in range(m):
        with np.errstate(all="ignore"):  # a singular or diverging system fails the row
            got = _row(bat, A[i], T[:, i], float(lam[i]), float(nu[i]), bool(ball[i]), tau, cap)
        if got is not None:
            th, la, g, aA, E, aE = got
            Tn[:, i], ln[i] = th, la
            Gn[:, i] = -(g + Zw[E].T @ aE)
            Sn[i] = aA + float(w[E] @ aE)
            conv[i] = True
    return Tn, ln, Gn, Sn, conv


def _row(bat, c, th, la, nv, bl, tau, cap=None, E0=None):
    """``(θ, λ, g_A, a_A, E, α_E)`` at the exact KKT point of one row (see the module docstring), or None. E starts
    empty with the ball engaged (it grows by ratio tests), else from the d - 1 rows nearest the kink among those the
    smoothed multiplier puts in (0.02, 0.98).

    With many rows, the method runs first on the rows near their kink only: a row whose hyperplane ``z_j'θ = 1`` is
    at distance ρ_j from the start cannot change side while θ stays within ρ_j of it, so the rows with ρ_j below a
    radius R are followed exactly and the others enter as fixed sums (``g_A``, ``a_A``) while every point the method
    visits stays within R of the start (checked at each step; past it, the method restarts on every row)."""
    n, k = len(bat.w), max(_NEAR_MIN, len(bat.w) // _NEAR_SHARE)
    if E0 is None and n > 2 * k:
        if getattr(bat, "_znorm", None) is None:
            bat._znorm = np.sqrt((bat.Z * bat.Z).sum(1))
        mg = bat.Z @ th
        rho = np.abs(1.0 - mg) / np.maximum(bat._znorm, 1e-300)
        near = np.argpartition(rho, k)[:k]
        R = float(rho[near].max())
        far = np.ones(n, dtype=bool)
        far[near] = False
        lo = far & (mg < 1.0)
        g0, a0 = bat.Zw.T @ lo, float(bat.w @ lo)
        got = _row_on(bat, bat.Z[near], bat.Zw[near], bat.w[near], g0, a0, c, th, la, nv, bl, tau, cap, None, (th, R))
        if got is not _FAR:
            if got is not None:
                got = (*got[:4], near[got[4]], got[5])
            return got
    return _row_on(bat, bat.Z, bat.Zw, bat.w, 0.0, 0.0, c, th, la, nv, bl, tau, cap, E0, None)


def _row_on(bat, Z, Zw, w, g0, a0, c, th, la, nv, bl, tau, cap, E0, guard):
    """:func:`_row` on the rows Z (weights w) with the others' sums g0, a0 fixed; ``guard = (θ₀, R)``: return _FAR
    as soon as a point would leave the ball of radius R about θ₀ (the fixed rows could then change side)."""
    eps, Bt, r, d = bat.eps, bat.Bt, bat.r, bat.d

    def out(x):
        return guard is not None and float(np.linalg.norm(x - guard[0])) >= guard[1] * (1 - 1e-9)

    th = th.copy()
    window = tau * np.log(49.0)
    mg = Z @ th
    E = np.where(np.abs(1.0 - mg) < window)[0]
    if cap is None:
        cap = 0 if bl else d - 1
    if E.size > cap:
        E = E[np.argsort(np.abs(1.0 - mg[E]))[:cap]]
    if E0 is not None:  # the kink rows of a linear programme's vertex
        E = np.asarray(E0[: d - 1], dtype=int)
    inE = np.zeros(len(w), dtype=bool)
    inE[E] = True
    act = (mg < 1.0) & ~inE
    g, aA = Zw.T @ act + g0, float(w @ act) + a0  # kept up to date as rows change sides
    beta = la / (1.0 + np.exp((mg[E] - 1.0) / tau))
    done = False
    for _ in range(_ROUNDS):
        E = np.where(inE)[0]
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
            if out(th + min(t[j], t_ball) * p):
                return _FAR
            if t_ball < t[j]:
                th, mg = th + t_ball * p, mg + t_ball * dm
                bl, nv = True, 1e-3 * la
            else:
                th, mg = th + t[j] * p, mg + t[j] * dm
                beta = np.insert(beta, int(np.searchsorted(E, j)), 0.0)
                if act[j]:
                    g, aA = g - Zw[j], aA - w[j]
                inE[j], act[j] = True, False
            continue
        if bl and nv2 < 0:  # release the ball (θ stays: the new point may put rows on the wrong side)
            bl, nv = False, 0.0
            continue
        if not bl and th2 @ Bt @ th2 > r * (1 + 1e-12):
            bl, nv = True, max(nv, 1e-3 * la2)
            continue
        if out(th2):
            return _FAR
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
            if act[js]:
                g, aA = g - Zw[js], aA - w[js]
            inE[js], act[js] = True, False
            if not bl and inE.sum() > d - 1:  # a vertex has d - 1 kinks: one leaves (to the side its α asks
                E2 = np.where(inE)[0]  # for); the one whose vertex has every α in [0, 1] and the least c'θ
                pos = int(np.searchsorted(E2, js))
                best, pick = np.inf, -1
                for q in range(len(E2)):
                    if q == pos:
                        continue
                    keep = np.delete(E2, q)
                    side = 1.0 if beta[q] > la else 0.0
                    t3, l3, b3, _n, ok3 = _kkt(
                        c,
                        g + side * Zw[E2[q]],
                        aA + side * w[E2[q]],
                        Z[keep],
                        w[keep],
                        Bt,
                        r,
                        eps,
                        th,
                        la,
                        np.delete(beta, q),
                        0.0,
                        False,
                    )
                    if ok3 and l3 > 0 and np.all((b3 >= 0) & (b3 <= l3)) and c @ t3 < best:
                        best, pick = float(c @ t3), q
                if pick < 0:
                    al = beta / la if la > 0 else beta
                    pick = int(np.argmin(np.where(np.arange(len(E2)) == pos, np.inf, np.minimum(al, 1.0 - al))))
                jw = E2[pick]
                inE[jw], act[jw] = False, beta[pick] > la
                if act[jw]:
                    g, aA = g + Zw[jw], aA + w[jw]
                beta = np.delete(beta, pick)
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
        if act[j]:
            g, aA = g + Zw[j], aA + w[j]
        beta = np.delete(beta, k)
    if not done:
        return None
    E = np.where(inE)[0]
    return th, la, g, aA, E, np.clip(beta / la, 0.0, 1.0)


def finish_hinge(bat, A, corner, T, lam, nu, ball, out, tol, decide=None) -> None:
    """Replace in ``out`` (``(bound, θ, value, ok)`` of the smoothed solutions, certified) every row whose exact
    KKT point certifies better: :func:`exact_hinge` from the smoothed solution; where it fails, from that of two
    further smoothings (τ/10, τ/100, warm-started) with the ball's state as found and flipped; where that fails
    with the ball free, the reduced linear programme of :func:`._hinge_lp.hinge_lp`. ``decide = (corner, τ,
    strict)``: only the rows whose question ``min a'θ <= τ`` (``< τ`` where strict) the smoothed bound or member
    does not already answer."""
    rows_of = np.ones(len(A), dtype=bool)
    if decide is not None:
        _c, tau_q, strict = decide
        below = lambda x: np.where(strict, x < tau_q, x <= tau_q)  # noqa: E731
        rows_of = ~((np.isfinite(out[0]) & ~below(out[0])) | below(out[2]))
    A, corner, T, lam, nu, ball = A[rows_of], corner[rows_of], T[:, rows_of], lam[rows_of], nu[rows_of], ball[rows_of]
    Tp, lp, Gp, Sp, conv = exact_hinge(bat, A, T, lam, nu, ball, bat.tau)
    redo = np.where(~conv)[0]
    if redo.size:
        tau0, C = bat.tau, A[redo].T
        Tr, lr, nr, br = T[:, redo].copy(), lam[redo].copy(), nu[redo].copy(), ball[redo].copy()
        try:
            for tau in (tau0 / 10, tau0 / 100):
                bat.tau = tau
                with np.errstate(all="ignore"):
                    Tr, lr, nr, br = bat._solve_block(C, Tr, _FINER, lr, nr, br, 1e-12)[:4]
                for flip, cap in ((False, None), (True, None), (None, bat.d - 2)):
                    left = ~conv[redo]
                    if not left.any():
                        break
                    nb = br[left] ^ flip if flip is not None else np.ones(int(left.sum()), dtype=bool)
                    nv = np.where(nb, np.maximum(nr[left], 1e-3 * lr[left]), 0.0)
                    got = exact_hinge(bat, A[redo[left]], Tr[:, left], lr[left], nv, nb, tau, cap)
                    idx = redo[left][got[4]]
                    for k, z in enumerate((Tp, lp, Gp, Sp)):
                        z[..., idx] = got[k][..., got[4]]
                    conv[idx] = True
        finally:
            bat.tau = tau0
    for i in np.where(~conv)[0]:
        got = _lp(bat, A[i], T[:, i])
        if got is not None and len(got) == 3:  # the ball binds: the exact finish from the cut programme's kinks
            x, la, E = got
            with np.errstate(all="ignore"):
                got = _row(bat, A[i], x, la, 1e-3 * la, True, bat.tau, E0=E)
            if got is not None:
                th, la, g, aA, E, aE = got
                got = th, la, -(g + bat.Zw[E].T @ aE), aA + float(bat.w[E] @ aE)
        if got is not None:
            Tp[:, i], lp[i], Gp[:, i], Sp[i] = got
            conv[i] = True
    rows = np.where(conv)[0]
    again = bat.certify(A[rows], corner[rows], Tp[:, rows], lp[rows], None, Gp[:, rows], Sp[rows], tol)
    at = np.where(rows_of)[0][rows]
    better = again[3] | (again[2] - again[0] < out[2][at] - out[0][at])
    for k in range(4):
        out[k][at[better]] = again[k][better]


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
