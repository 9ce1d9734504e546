"""Each row's own ray over a hinge set: a member and a subgradient half-space, O(n·p) per row, no Hessian.

The hinge analogue of :mod:`._rays`. For a row's flip-side functional f, the ray ``θ(s) = θ_min + s·d`` runs toward
the minimiser of f'θ over the second-order model of a smoothing of the loss at θ_min (closed form per row,
:meth:`._batch.MarginBatch._start`). Along it the hinge loss ``L(s) = Σ_j w_j max(0, 1 - m_j - s·dm_j)`` is convex
and piecewise linear with its minimum over the ball at s = 0, hence nondecreasing up to the ball. The last s with
``L(θ(s)) <= ε`` (and θ(s) in the ball) is searched on a sample of the rows by Newton steps from outside (on a convex
increasing function they stay outside, and on a piecewise-linear one they end on its piece) and a final chord
(inside), aimed 0.5% of the slack inside. The point is then evaluated exactly on every row; above ε it is moved
toward θ_min to where the convex loss's chord reaches ε, and the batch's exact membership test confirms a **member**.

At the point evaluated, θ₀, any subgradient of the convex loss gives the half-space ``L(θ₀) + g'(θ - θ₀) <= ε``
containing S; here ``g = -Σ_{m_j < 1} w_j z_j`` with L(θ₀) lowered by its rounding. Cut with the enclosing
ellipsoid, its minimum of f'θ is a **certified bound** (:meth:`._screen.RowScreen.tangents`). Rows neither settles
are solved exactly by the caller.
"""

from __future__ import annotations

import numpy as np

from ._rays import _LOSS_ROUNDING, _STEPS, ray_setup

__all__ = ["ray_points"]


def ray_points(bat, A: np.ndarray, want=None):
    """``(θ, inside, θ₀, L, G)`` for the rows a of A over a hinge set: the last point of S found on each row's ray
    (rows x d; ``inside`` marks confirmed members), the point θ₀ of the half-space, a lower bound of the exact loss
    there and a subgradient (rows x d; NaN where ``want`` declines it). The same contract as
    :func:`._rays.ray_points`.

    Parameters
    ----------
    bat : MarginBatch
        The engine's batched solver of a hinge set (its deduplicated rows, weights and membership test).
    A : ndarray of shape (m, d)
        The functionals.
    want : callable, optional
        ``want(start, values, inside)`` for a block of rows from ``start``: which rows need the subgradient (their
        member's values and membership given); all rows by default.

    Returns
    -------
    tuple of ndarray
        Points, membership, tangent points, loss lower bounds and subgradients there.
    """
    ms = bat.eng.ms
    t0, e_min = ms.theta_min, bat.e_min
    m, d = A.shape
    T = np.empty((m, d))
    inside = np.zeros(m, dtype=bool)
    P, Ls, Gs = np.empty((m, d)), np.empty(m), np.full((m, d), np.nan)
    if not m:
        return T, inside, P, Ls, Gs
    tau = bat.tau
    try:
        Dir = bat._start(A) - t0[None, :]
    finally:
        bat.tau = tau
    s_ball, target, Zs, ws = ray_setup(bat, t0, Dir)
    Zt, w = bat.Zt, bat.w
    ms0 = t0 @ Zs
    zabs = np.abs(bat.Z).T @ w  # Σ_j w_j |z_j|: the loss's rounding through the margins, (d + 2) ulp each
    step = int(max(8, min(256, (1 << 22) // max(len(w), 1))))
    for a in range(0, m, step):
        D = Dir[a : a + step]
        dM = D @ Zs  # k x (sampled rows): each row's margin direction
        sb = s_ball[a : a + step]
        k = len(D)
        s_in, f_in = np.zeros(k), np.full(k, e_min - target)
        s_out, f_out, g_out = np.full(k, np.inf), np.full(k, np.inf), np.ones(k)
        s = np.minimum(1.0, sb)
        for it in range(_STEPS):
            with np.errstate(all="ignore"):
                U = 1.0 - ms0[None, :] - s[:, None] * dM
                on = U > 0
                f = np.where(on, U, 0.0) @ ws - target
                slope = -((on * dM) @ ws)
            ok = np.isfinite(f)
            inn = ok & (f <= 0) & (s >= s_in)
            s_in, f_in = np.where(inn, s, s_in), np.where(inn, f, f_in)
            out = ok & (f > 0) & (s < s_out)
            s_out, f_out, g_out = np.where(out, s, s_out), np.where(out, f, f_out), np.where(out, slope, g_out)
            with np.errstate(all="ignore"):
                chord = s_in - f_in * (s_out - s_in) / (f_out - f_in)  # between an inside and an outside point: inside
                newton = np.where(np.isfinite(s_out), s_out - f_out / g_out, s - f / slope)
            nxt = chord if it == _STEPS - 1 else newton
            bad = ~(np.isfinite(nxt) & (nxt > s_in) & (nxt <= s_out))
            nxt = np.where(bad, 0.5 * (s_in + np.minimum(s_out, 2.0 * np.maximum(s_in, 1.0))), nxt)
            s = np.minimum(nxt, sb)
        # the exact loss at the point found (every row); above ε, the point on the segment to θ_min where the chord
        # of the convex loss reaches the target is inside, with that chord's value as its loss bound
        Tb = t0[None, :] + s[:, None] * D
        X = Tb @ Zt
        L = np.maximum(1.0 - X, 0.0) @ w
        P[a : a + step] = Tb
        Ls[a : a + step] = L - (d + 2) * np.finfo(float).eps * (np.abs(Tb) @ zabs)
        f = np.where(L > target, (target - e_min) / np.maximum(L - e_min, 1e-300), 1.0)
        T[a : a + step] = t0[None, :] + (f * s)[:, None] * D
        Lup = np.where(f < 1.0, e_min + f * (L - e_min), L) * (1 + _LOSS_ROUNDING)
        inside[a : a + step] = bat.members(T[a : a + step], Lup)
        need = np.arange(k)
        if want is not None:
            need = np.flatnonzero(want(a, (A[a : a + step] * T[a : a + step]).sum(1), inside[a : a + step]))
        if need.size:
            Gs[a + need] = -((X[need] < 1.0) @ bat.Zw)
    fin = np.isfinite(Ls) & np.isfinite(Gs).all(1)
    Gs[~fin] = np.nan
    return T, inside & np.isfinite(T).all(1), P, Ls - _LOSS_ROUNDING * np.maximum(np.abs(Ls), 1.0), Gs
