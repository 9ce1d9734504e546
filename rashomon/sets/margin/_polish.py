"""The exact hinge's KKT point of ``min c'θ`` over S from a smoothed one (:mod:`._batch`), by Newton on its active set.

Near the solution of the hinge's range problem the rows split into those with margin below 1 (loss active, α = 1),
above 1 (α = 0) and at the kink (``z_j'θ = 1``, α_j ∈ [0, 1]). With that partition read off the smoothed solution
(kink: ``|1 - m_j| <= 5τ``) the KKT conditions are a square system in (θ, λ, β = λα on the kink rows, ν):

    c - λ Σ_{m<1} w_j z_j - Σ_kink β_j w_j z_j + 2ν B̃θ = 0,   z_j'θ = 1 (kink),
    Σ_{m<1} w_j (1 - z_j'θ) = ε,   θ'B̃θ = r (ball active; else ν = 0),

linear but for the ball, solved by Newton from the smoothed point. Its answer is only a candidate: the caller
certifies it (weak duality at α clipped to [0, 1]; the member checked in S), exactly as the smoothed one.
"""

from __future__ import annotations

import numpy as np

__all__ = ["polish_hinge"]


def polish_hinge(bat, A, T, lam, nu, ball, n_iter: int = 12):
    """``(θ (d x m), λ, α (rows x m))`` per row of A from the smoothed solution (θ: columns of T)."""
    Z, w, eps, Bt, r, d = bat.Z, bat.w, bat.eps, bat.Bt, bat.r, bat.d
    tau = bat.taus[-1]
    Tn, ln = T.copy(), lam.copy()
    Al = np.clip(np.asarray(bat.value_grad(T)[2]), 0.0, 1.0)  # smoothed multipliers (bat.tau is the last τ)
    for i in range(A.shape[0]):
        c, th, la, nv, bl = A[i], T[:, i].copy(), float(lam[i]), float(nu[i]), bool(ball[i])
        mg = Z @ th
        kink = np.abs(1.0 - mg) <= 5 * tau
        act = (mg < 1.0) & ~kink
        ZE, wE, ZA, wA = Z[kink], w[kink], Z[act], w[act]
        gA = ZA.T @ wA
        k = int(kink.sum())
        beta = la * Al[kink, i]
        n = d + 1 + k + (1 if bl else 0)
        ok = False
        for _ in range(n_iter):
            BT = 2.0 * Bt @ th
            F = np.concatenate(
                [
                    c - la * gA - ZE.T @ (wE * beta) + nv * BT,
                    ZE @ th - 1.0,
                    [wA @ (1.0 - ZA @ th) - eps],
                    [0.5 * th @ BT - r] if bl else [],
                ]
            )
            if np.max(np.abs(F)) <= 1e-15 * max(1.0, np.max(np.abs(c))):
                ok = True
                break
            # unknowns θ (d), λ, β (k), ν; rows: stationarity (d), kink equalities (k), loss (1), ball (1)
            R = np.zeros((n, n))
            R[:d, :d] = 2.0 * nv * Bt
            R[:d, d] = -gA
            R[:d, d + 1 : d + 1 + k] = -(ZE * wE[:, None]).T
            R[d : d + k, :d] = ZE
            R[d + k, :d] = -gA
            if bl:
                R[:d, n - 1] = BT
                R[d + k + 1, :d] = BT
            try:
                step = np.linalg.solve(R, -F)
            except np.linalg.LinAlgError:
                break
            if not np.all(np.isfinite(step)):
                break
            th = th + step[:d]
            la = la + step[d]
            beta = beta + step[d + 1 : d + 1 + k]
            if bl:
                nv = nv + step[-1]
            ok = True
        if ok and la > 0 and (not bl or nv >= 0):
            Tn[:, i], ln[i] = th, la
            Al[:, i] = 0.0
            Al[act, i] = 1.0
            Al[kink, i] = np.clip(beta / la, 0.0, 1.0)
    return Tn, ln, Al
