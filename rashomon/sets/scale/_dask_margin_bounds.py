"""Outer bounds of a logistic set fitted on Dask input: the self-concordant minorant around θ_min, by passes.

As :func:`rashomon.model_classes.norm_bounds.margin_norm_bound` in memory: around θ0 the loss is bounded below by
``e(θ0) + g'u + ½u'H_low u`` on a region ``‖u‖_P <= ρ``, with ``H_low = Σ κ_i d_i d_i'/n`` and κ_i the least
curvature the margin of row i can have there (generalised self-concordance: the third derivative is bounded by
the second); the sublevel set of the minorant is an ellipsoid, and when it lies inside the region it contains the
whole set. Every row sum is a pass (the Hessian sums at θ0, then one pass per step of the fixed point on ρ).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["dask_margin_norm_bound", "dask_outer_ellipsoid", "score_ellipsoids"]


def dask_margin_norm_bound(rows, theta0, level, B, loss) -> float:
    """:func:`rashomon.model_classes.norm_bounds.margin_norm_bound` with every row sum a pass (the Hessian
    sums at θ0, then one pass per step of the fixed point)."""
    from scipy import linalg

    from ...model_classes.norm_bounds import ellipsoid_norm_bound, penalty_factor

    ell = dask_outer_ellipsoid(rows, theta0, level, loss)
    if ell is None:
        return math.inf
    centre, C, rad2, grow = ell
    F = penalty_factor(B)
    A = F @ linalg.solve_triangular(C.T, np.eye(len(theta0)), lower=False) * math.sqrt(rad2)
    return ellipsoid_norm_bound(F @ centre, A) * grow


def dask_outer_ellipsoid(rows, theta0, level, loss):
    """``(centre, C, rad2, grow)`` of an ellipsoid ``(θ - centre)'CC'(θ - centre) <= rad2`` containing
    ``{θ : e(θ) <= level}`` (the self-concordant minorant around θ0 of ``margin_norm_bound``; ``grow`` the widening
    for rounding), or None when its fixed point does not close within 40 steps."""
    from scipy import linalg

    from ...model_classes.norm_bounds import rounding_factor

    d = len(theta0)
    f0, g, P = rows.loss_parts(theta0, loss, 2)
    delta = float(level) - f0
    if not delta >= 0:
        return None
    P = P + 1e-12 * np.trace(P) / d * np.eye(d)
    try:
        Lp = np.linalg.cholesky(P)
    except np.linalg.LinAlgError:
        return None
    rho = 2.0 * math.sqrt(2.0 * delta + float(g @ np.linalg.solve(P, g)) + 1e-300)
    for _ in range(40):

        def fn(D, ye, rho=rho):
            lev = np.sqrt(np.sum(linalg.solve_triangular(Lp, D.T, lower=True) ** 2, axis=0))
            k_low = loss.sc_curvatures(ye * (D @ theta0), rho * lev)[0]
            return ((D.T * k_low) @ D).ravel()

        H = rows.reduce(fn, d * d).reshape(d, d) / rows.n_rows
        try:
            C = np.linalg.cholesky(0.5 * (H + H.T))
        except np.linalg.LinAlgError:
            return None
        Cinv_g = linalg.solve_triangular(C, g, lower=True)
        centre = -linalg.solve_triangular(C.T, Cinv_g, lower=False)
        rad2 = 2.0 * delta + float(Cinv_g @ Cinv_g)
        W = linalg.solve_triangular(C, Lp, lower=True)
        grow = rounding_factor(H)
        reach = math.sqrt(float(centre @ P @ centre)) + math.sqrt(rad2) * float(np.linalg.norm(W, 2))
        reach *= grow * (1 + 1e-9)
        if not math.isfinite(reach):
            return None
        if reach < rho:
            return theta0 + centre, C, rad2, grow
        rho = max(1.5 * reach, 2.0 * rho)
    return None


def _box(par, lo, hi):
    """``(mid, fw, Pball)``: the centre, intercept half-width and inverse penalty of K (the ball and the intercept
    interval), whose margins are ``y·d'mid ± (sqrt(r·d'Pball d) + |d|'fw)``."""
    B, d = par.B, par.B.shape[0]
    free = np.where(np.all(B == 0, axis=1))[0]
    pen = np.setdiff1d(np.arange(d), free)
    Pball = np.zeros((d, d))
    Pball[np.ix_(pen, pen)] = np.linalg.inv(B[np.ix_(pen, pen)])
    mid, fw = np.zeros(d), np.zeros(d)
    mid[free], fw[free] = 0.5 * (lo + hi), 0.5 * (hi - lo)
    return mid, fw, Pball


def _intervals(D, ye, r, box, ells):
    """Each row's margin interval on K cut by every ellipsoid ``(c, A⁻¹)`` of ``ells``."""
    mid, fw, Pball = box
    h = np.sqrt(r * np.maximum(np.einsum("ij,jk,ik->i", D, Pball, D), 0.0)) + np.abs(D) @ fw
    s = ye * (D @ mid)
    lo, hi = s - h, s + h
    for c, Ainv in ells:
        s = ye * (D @ c)
        hw = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", D, Ainv, D), 0.0))
        lo, hi = np.maximum(lo, s - hw), np.minimum(hi, s + hw)
    return lo, hi


def score_ellipsoids(rows, par, theta_c, eps, loss, lo, hi, iterations: int = 6):
    """``(outer, inner)`` ellipsoids ``(centre, A⁻¹)`` with ``outer ⊇ S`` (``(θ - c)'A(θ - c) <= 1``) and every point
    of ``inner`` in the ball a member of S (either None), one pass per step (the in-memory ``ScoreRanges``).

    Outer: on the margin intervals every row's loss is at least its tangent quadratic with the least curvature
    there (the interval's extreme, or the self-concordance bound, whichever is larger), so ``S ⊆ {M(θ) + ν(θ'Bθ - r) <= ε}`` (ν >= 0, the ball's multiplier at θ_c): an ellipsoid; its margin
    intervals cut the next step's. Inner: with the largest curvature on the outer ellipsoid's intervals (the
    least of the extreme, the self-concordance bound and Jaakkola-Jordan's) the
    quadratic bounds the loss from above on it; its level set at ε, shrunk into the outer ellipsoid.
    """
    from scipy.linalg import eigh

    B, r, d, n = par.B, float(par.r), par.B.shape[0], rows.n_rows
    box = _box(par, lo, hi)
    e0, g = rows.loss_parts(theta_c, loss, 1)
    bt = B @ theta_c
    nu = max(-float(g @ bt) / max(2 * float(bt @ bt), 1e-300), 0.0)
    ells: list = []

    def curvature_pass(upper):
        frozen = list(ells)

        def fn(D, ye):
            a, b = _intervals(D, ye, r, box, frozen)
            m0 = ye * (D @ theta_c)
            a, b = np.minimum(a, m0), np.maximum(b, m0)
            k_lo, k_hi = loss.sc_curvatures(m0, np.maximum(m0 - a, b - m0))  # and self-concordance
            if upper:
                k = np.minimum(np.minimum(loss.max_curvature(a, b), loss.jj_curvature(m0)), k_hi)
            else:
                k = np.maximum(loss.min_curvature(a, b), k_lo)
            return ((D.T * k) @ D).ravel()

        return rows.reduce(fn, d * d).reshape(d, d) / n

    for _ in range(iterations):
        H = curvature_pass(False)
        Q = 0.5 * (H + H.T) + 2 * nu * B
        G = g + 2 * nu * bt
        const = e0 + nu * (float(theta_c @ bt) - r)
        try:
            Qinv = np.linalg.inv(Q)
        except np.linalg.LinAlgError:
            break
        delta = 2.0 * (eps - const) + float(G @ Qinv @ G)  # ½(u - u*)'Q(u - u*) <= δ/2
        if not delta > 0:
            break
        Ainv = delta * 0.5 * (Qinv + Qinv.T) * (1 + 1e-9)  # widened for rounding
        ells.append((theta_c - Qinv @ G, Ainv))
        if len(ells) > 1:
            shrink = float(np.trace(ells[-2][1]) / max(np.trace(Ainv), 1e-300))
            if shrink < 1.02:
                break
    if not ells:
        return None, None
    outer = ells[-1]
    if loss.name != "logistic":
        return outer, None
    Hu = curvature_pass(True)  # majorant on the outer ellipsoid (the intervals of every step)
    Hu = 0.5 * (Hu + Hu.T)
    try:
        Huinv = np.linalg.inv(Hu)
        A = np.linalg.inv(outer[1])
        lam = float(eigh(0.5 * (A + A.T), Hu, eigvals_only=True)[-1])
    except (np.linalg.LinAlgError, ValueError):
        return outer, None
    centre = theta_c - Huinv @ g
    rho2 = 2.0 * (eps - e0) + float(g @ Huinv @ g)
    dc = centre - outer[0]
    off = math.sqrt(max(float(dc @ A @ dc), 0.0))
    if not (rho2 > 0 and lam > 0 and off < 1.0):
        return outer, None
    rho2 = min(rho2, (1.0 - off) ** 2 / lam) * (1 - 1e-8)
    return outer, (centre, rho2 * 0.5 * (Huinv + Huinv.T))
