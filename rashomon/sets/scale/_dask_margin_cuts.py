"""Tangent cuts combined: a certified lower bound of ``min f'θ`` over the outer ellipsoid cut by many half-spaces.

Every point whose exact loss and gradient a pass returned gives a half-space ``h'θ <= b`` containing the set S
(:mod:`._dask_margin_points`). One cut alone bounds only the rows whose own end lies near its point; together
they bound rows between the points. For ``E = {(θ - c)'A(θ - c) <= 1}`` and any multipliers ``μ >= 0``,

    min {f'θ : θ ∈ E, Hθ <= b} >= min_E (f + H'μ)'θ - μ'b = (f + H'μ)'c - ‖f + H'μ‖_{A⁻¹} - μ'b,

so any μ gives a certified bound (weak duality). Per row, μ lives on the k cuts whose normals point most
against f (in the metric of A⁻¹) and climbs this concave function by projected gradient steps (the gradient is
``Hθ_E(μ) - b``, the cuts' violations at the ellipsoid's minimiser of the combined direction); the best value
met is kept, widened for the rounding of its terms.
"""

from __future__ import annotations

import numpy as np

__all__ = ["combined_bounds"]

_ROWS = 1024  # rows per block (temporaries of rows x cuts and rows x k x d)


def combined_bounds(F: np.ndarray, ell: tuple, Hs: np.ndarray, b: np.ndarray, k: int = 32, iters: int = 150):
    """Certified lower bounds of ``min f'θ`` over ``E ∩ {Hθ <= b}`` for the rows f of F (``ell = (c, A⁻¹)``, the
    rows of ``Hs`` the cuts' normals); ``-inf`` where no cut is given."""
    c, M = ell
    out = np.full(len(F), -np.inf)
    if not len(Hs) or not len(F):
        return out
    HM = Hs @ M
    hMh = np.maximum(np.einsum("ij,ij->i", HM, Hs), 1e-300)
    hn = np.sqrt(hMh)
    kk = min(k, len(Hs))
    for a in range(0, len(F), _ROWS):
        Fb = F[a : a + _ROWS]
        FM = Fb @ M
        fn = np.sqrt(np.maximum(np.einsum("ij,ij->i", FM, Fb), 1e-300))
        J = np.argpartition((FM @ Hs.T) / hn[None, :], kk - 1, axis=1)[:, :kk]  # the most opposed normals
        HJ, bJ = Hs[J], b[J]
        step = fn[:, None] / hMh[J]  # μ in units of |f| / |h|
        mu = np.zeros(J.shape)
        best, err = np.full(len(Fb), -np.inf), np.zeros(len(Fb))
        for it in range(iters):
            w = Fb + np.einsum("rk,rkd->rd", mu, HJ)
            wM = w @ M
            q = np.sqrt(np.maximum(np.einsum("rd,rd->r", wM, w), 0.0))
            wc, mb = w @ c, np.einsum("rk,rk->r", mu, bJ)
            val = wc - q - mb
            up = val > best
            best = np.where(up, val, best)
            err = np.where(up, np.abs(wc) + q + np.einsum("rk,rk->r", mu, np.abs(bJ)), err)
            th = c[None, :] - wM / np.maximum(q, 1e-300)[:, None]
            g = np.einsum("rkd,rd->rk", HJ, th) - bJ
            mu = np.maximum(mu + 0.3 / np.sqrt(it + 1.0) * g * step, 0.0)
        out[a : a + _ROWS] = best - 1e-12 * err - 1e-10 * np.maximum(1.0, np.abs(best))
    return out
