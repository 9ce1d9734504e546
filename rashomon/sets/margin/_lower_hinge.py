"""The row minorants of :mod:`._lower_bnb` for the hinge loss ``ℓ(m) = max(0, 1 - m)`` (exact, no smoothing).

Same relaxation as for the logistic loss (module docstring of :mod:`._lower_bnb`), with exact piecewise-linear
arithmetic in place of the interpolation errors. For label s, with thresholds ``u_v = 1 - s G_v b0``,

    F_s(z) = Σ_v cnt_v ℓ(z + s G_v b0) = Σ_{u_v > z} cnt_v (u_v - z),   F_s'(z) ∋ -Σ_{u_v > z} cnt_v,

and the b-subgradient of row j's switched part at b0 is ``s (g_j S0 - SG)`` (``S0 = Σ_{u_v > z} cnt_v``,
``SG = Σ_{u_v > z} cnt_v G_v``, z = m - s g_j b0): exact suffix sums over the sorted thresholds. Any subgradient
gives the tangent inequality in b (φ_j is convex in b); its step function's jumps on a grid cell total at most
``Σ_{u_v in cell} cnt_v (|G_v| + |g_j|)/(n - 1)`` (the jump at u_v is ``cnt_v |G_v - g_j|/(n - 1)``), which bounds it on
the cell from its values at the ends (:mod:`._lower_faces`).

Between grid nodes x_i < x_{i+1}: F_s is convex, so it lies above its tangents at both nodes (slopes: any
subgradients), hence above the piecewise-linear function through the nodes and the tangents' intersection
(clipped into the cell; the maximum of the two tangents there). The concave part ``-(Λ + 1/(n-1)) ℓ(m)`` is
affine on every cell (the kink m = 1 is a node). So the row function at b0 on the cell lies above the piecewise-linear function through three points per cell (nodes and
intersection), on which :mod:`._lower_faces` builds the two faces of the tangent in b.
"""

from __future__ import annotations

import numpy as np

__all__ = ["hinge_slab"]


def _grid(mlo, mhi, K):
    """K nodes per row: K - 1 uniform ones and the kink m = 1 (strictly inside the range; else the middle of
    the last cell), sorted, strictly increasing where the range is not a point."""
    t = np.linspace(0.0, 1.0, K - 1)
    X = mlo[:, None] + (mhi - mlo)[:, None] * t[None, :]
    inside = (mlo < 1.0) & (1.0 < mhi)
    on_node = np.any(X == 1.0, axis=1)
    extra = np.where(inside & ~on_node, 1.0, 0.5 * (X[:, -2] + X[:, -1]))
    return np.sort(np.column_stack([X, extra]), axis=1)


def hinge_slab(sl, a, b, mlo, mhi, K):
    """The τ-independent data of a slab for the hinge (see :meth:`._lower_bnb._Slabs.slab`)."""
    n, nr, b0 = sl.n, sl.nr, 0.5 * (a + b)
    X = _grid(mlo, mhi, K)
    Fn, Gn, DB = np.empty((nr, K)), np.empty((nr, K)), np.empty((nr, K))
    Fx, Xs, TV = np.empty((nr, K - 1)), np.empty((nr, K - 1)), np.empty((nr, K - 1))
    for s in (1.0, -1.0):
        rows = sl.y == s
        if not rows.any():
            continue
        u = 1.0 - s * b0 * sl.G
        o = np.argsort(u)
        us, cs, Gs = u[o], sl.cnt[o], sl.G[o]

        def suffix(v):
            return np.concatenate([np.cumsum(v[::-1])[::-1], [0.0]])

        S0, S1, SG, SA = suffix(cs), suffix(cs * us), suffix(cs * Gs), suffix(cs * np.abs(Gs))
        g = sl.g[rows]
        Z = X[rows] - (s * b0) * g[:, None]
        i_gt = np.searchsorted(us, Z, side="right")  # first threshold > z
        Fn[rows] = S1[i_gt] - Z * S0[i_gt]
        Gn[rows] = -S0[i_gt]  # a subgradient of F_s at z
        DB[rows] = s * (g[:, None] * S0[i_gt] - SG[i_gt]) / (n - 1.0)
        # total jump of the b-subgradient over each closed cell [z_i, z_i+1]
        lo_i = np.searchsorted(us, Z[:, :-1], side="left")  # first threshold >= z_i
        hi_i = np.searchsorted(us, Z[:, 1:], side="right")  # first threshold > z_i+1
        TV[rows] = ((SA[lo_i] - SA[hi_i]) + np.abs(g)[:, None] * (S0[lo_i] - S0[hi_i])) / (n - 1.0)
        # the tangents' intersection in each cell (a point strictly inside; the larger tangent there)
        x0, x1, f0, f1, g0, g1 = X[rows, :-1], X[rows, 1:], Fn[rows, :-1], Fn[rows, 1:], Gn[rows, :-1], Gn[rows, 1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            xi = (f1 - f0 + g0 * x0 - g1 * x1) / (g0 - g1)
        mid = 0.5 * (x0 + x1)
        ok = np.isfinite(xi) & (xi > x0 + 1e-9 * (x1 - x0)) & (xi < x1 - 1e-9 * (x1 - x0))
        xi = np.where(ok, xi, mid)
        Xs[rows] = xi
        Fx[rows] = np.maximum(f0 + g0 * (xi - x0), f1 + g1 * (xi - x1))
    own = np.maximum(0.0, 1.0 - X)
    own_x = np.maximum(0.0, 1.0 - Xs)
    return {
        "a": a,
        "b": b,
        "mlo": mlo,
        "mhi": mhi,
        "X": X,
        "Xs": Xs,
        "base": (Fn - own) / (n - 1.0),
        "own": own,
        "base_x": (Fx - own_x) / (n - 1.0),
        "own_x": own_x,
        "DB": DB,
        "TV": TV,
    }
