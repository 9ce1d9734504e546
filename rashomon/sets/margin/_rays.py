"""Each row's own ray: a member and a tangent half-space of a logistic set, O(n·p) per row, no Hessian.

For a row's flip-side functional f, the exact minimiser of ``f'θ`` over ``S = {θ ∈ K : L(θ) <= ε}`` lies near the
minimiser of f'θ over the second-order model of L at θ_min (closed form per row, :meth:`._batch.MarginBatch._start`).
Along the ray ``θ(s) = θ_min + s·d`` toward that point the loss is convex with its minimum at s = 0, hence
nondecreasing for s >= 0; the last s with ``L(θ(s)) <= ε`` (and θ(s) in the ball) is found by Newton steps from
outside (they stay outside) alternated with chords between the inside and outside points (they stay inside),
on the margins ``m₀ + s·Zd`` (one product per row, then O(n) per step). The inside point is checked by the batch's
exact membership test: a **member**, whose value f'θ decides a flip when it crosses the threshold.

At that point θ₀ the tangent plane of the convex loss gives the half-space ``L(θ₀) + ∇L(θ₀)'(θ - θ₀) <= ε``
containing S, nearly the supporting one of the row's own minimiser; with the enclosing ellipsoid E its minimum of
f'θ is closed form (:meth:`._screen.RowScreen._halfspaces`, paired row by row): a **certified bound**, which decides
that no member flips the row when it does not cross. Rows neither settles are solved exactly by the caller.
"""

from __future__ import annotations

import numpy as np

from ._batch_kernels import _softplus_sigmoid

__all__ = ["ray_points"]

_STEPS = 3  # loss evaluations per row: the model's point, a Newton step from outside, a chord inside
_LOSS_ROUNDING = 1e-13  # relative allowance for the rounding of a loss value (a tangent's offset is lowered by it)


def ray_points(bat, A: np.ndarray):
    """``(θ, inside, θ₀, L, G)`` for the rows a of A: the last point of S found on each row's ray (rows x d; ``inside``
    marks those confirmed members of S), and the point θ₀ of the tangent plane with the loss there (lowered by its
    rounding allowance) and its gradient (rows x d).

    Parameters
    ----------
    bat : MarginBatch
        The engine's batched solver of a logistic set (its deduplicated rows, weights and membership test).
    A : ndarray of shape (m, d)
        The functionals.

    Returns
    -------
    tuple of ndarray
        Points, membership, tangent points, loss lower bounds and gradients there.
    """
    ms = bat.eng.ms
    t0, eps, e_min = ms.theta_min, bat.eps, bat.e_min
    m, d = A.shape
    T = np.empty((m, d))
    inside = np.zeros(m, dtype=bool)
    P, Ls, Gs = np.empty((m, d)), np.empty(m), np.empty((m, d))
    if not m:
        return T, inside, P, Ls, Gs
    Dir = bat._start(A) - t0[None, :]
    # the ball: (t0 + s·d)'B̃(t0 + s·d) <= r(1 - 1e-12), the larger root of a quadratic in s (t0 is inside)
    Bt, r = bat.Bt, bat.r * (1 - 1e-12)
    qa = ((Dir @ Bt) * Dir).sum(1)
    qb = Dir @ (Bt @ t0)
    qc = float(t0 @ Bt @ t0) - r
    with np.errstate(divide="ignore", invalid="ignore"):
        s_ball = np.where(qa > 0, (-qb + np.sqrt(np.maximum(qb * qb - qa * qc, 0.0))) / qa, np.inf)
    s_ball = np.maximum(s_ball, 0.0)
    target = eps - 1e-10 * max(eps - e_min, 0.0)  # a margin for the membership test's rounding band
    m0 = t0 @ bat.Zt
    w = bat.w
    step = int(max(8, min(256, (1 << 22) // max(len(w), 1))))
    for a in range(0, m, step):
        D = Dir[a : a + step]
        dM = D @ bat.Zt  # k x n: each row's margin direction
        sb = s_ball[a : a + step]
        k = len(D)
        s_in, f_in = np.zeros(k), np.full(k, e_min - target)
        s_out, f_out, g_out = np.full(k, np.inf), np.full(k, np.inf), np.ones(k)
        s = np.minimum(1.0, sb)
        for it in range(_STEPS):
            with np.errstate(all="ignore"):
                X = m0[None, :] + s[:, None] * dM
                val, Sg = _softplus_sigmoid(X, w)
                slope = -(Sg * dM) @ w
            f = val - target
            ok = np.isfinite(f)
            inn = ok & (f <= 0) & (s >= s_in)
            s_in, f_in = np.where(inn, s, s_in), np.where(inn, f, f_in)
            out = ok & (f > 0) & (s < s_out)
            s_out, f_out, g_out = np.where(out, s, s_out), np.where(out, f, f_out), np.where(out, slope, g_out)
            if it == _STEPS - 1:
                break
            with np.errstate(all="ignore"):
                chord = s_in - f_in * (s_out - s_in) / (f_out - f_in)  # between an inside and an outside point: inside
                # Newton from the outside point stays outside (L convex and increasing along the ray); from the
                # inside point (no outside point yet) it steps past the boundary
                newton = np.where(np.isfinite(s_out), s_out - f_out / g_out, s - f / slope)
            nxt = chord if it == _STEPS - 2 else newton  # the last step inside, the others toward the boundary
            bad = ~(np.isfinite(nxt) & (nxt > s_in) & (nxt <= s_out))
            nxt = np.where(bad, 0.5 * (s_in + np.minimum(s_out, 2.0 * np.maximum(s_in, 1.0))), nxt)
            s = np.minimum(nxt, sb)
        # the member: the last inside point (its loss from the margins above, allowed for their rounding); the
        # tangent: at the last point evaluated (any point gives a valid half-space)
        T[a : a + step] = t0[None, :] + s_in[:, None] * D
        inside[a : a + step] = bat.members(T[a : a + step], (f_in + target) * (1 + _LOSS_ROUNDING))
        Gs[a : a + step] = -(Sg @ bat.Zw)
        Ls[a : a + step] = val
        P[a : a + step] = t0[None, :] + s[:, None] * D
    return T, inside, P, Ls - _LOSS_ROUNDING * np.maximum(np.abs(Ls), 1.0), Gs
