"""Ridge fits of the linear and kernel classes: leave-one-(distinct-)row-out over a penalty grid, and one penalty."""

from __future__ import annotations

import numpy as np

__all__ = ["ridge_loo", "ridge_fixed", "distinct_rows"]


def ridge_loo(
    Z: np.ndarray,
    y: np.ndarray,
    alphas: np.ndarray,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
):
    """Ridge ``min Σ w_i (y_i - μ - z_i'β)² + α·m̄·||β||²`` with α chosen by leave-one-out error.

    Rows with identical z are left out *together* (leave-one-distinct-row-out):
    otherwise a copy of the left-out row stays in the fit, the error of an
    interpolating penalty looks like zero, and stacking the same rows twice would
    choose a far smaller penalty. The penalty is scaled by the mean multiplicity
    m̄ = Σw / #distinct rows, so replicating every row leaves the fit unchanged;
    without duplicates or weights m̄ = 1 and this is plain ridge with exact LOO.

    For a weighted penalised least-squares fit the deletion residual of unit u is
    ``e_u / (1 - h_uu)`` exactly. With the weighted, centred design ``Z̃ = √w (Z - z̄)``
    and ``Z̃ = U S V'``, ``h_uu = w_u/Σw + Σ_k u_uk² s_k²/(s_k² + α)``: O(n·p²) once,
    then O(n·p·#alphas). Equals scikit-learn's ``RidgeCV`` (efficient LOO) when there
    are no duplicate rows; on n = 100,000, p = 50 that took 7.5 s against about 0.25 s here.

    Returns ``(alpha, beta, intercept, loo_mse)`` for the best α; alpha is the penalty actually used
    (``α·m̄``) in ``Σ w_i (y_i - μ - z_i'β)² + alpha·||β||²``.
    """
    n = Z.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    U0 = None if sample_weight is not None or not distinct_rows(Z) else Z  # no copies: np.unique not needed
    if U0 is None:
        U0, inv = np.unique(Z, axis=0, return_inverse=True)
        inv = inv.ravel()
    if len(U0) < n or sample_weight is not None:
        wu: np.ndarray = np.bincount(inv, weights=w, minlength=len(U0))
        keep_u = wu > 0
        yfull = np.bincount(inv, weights=w * y, minlength=len(U0)) / np.where(keep_u, wu, 1.0)
        within = float(w @ (y - yfull[inv]) ** 2)  # spread of y within copies: the same for every α
        Zu, yu, wu = U0[keep_u], yfull[keep_u], wu[keep_u]
    else:
        Zu, yu, wu, within = Z, y, w, 0.0
    W = float(wu.sum())
    mult = W / len(Zu)
    a_eff = np.asarray(alphas, dtype=float) * mult
    zm = (wu @ Zu) / W if fit_intercept else np.zeros(Z.shape[1])
    ym = float(wu @ yu) / W if fit_intercept else 0.0
    sw = np.sqrt(wu)
    Zc, yc = (Zu - zm) * sw[:, None], (yu - ym) * sw
    # Thin SVD through the p × p Gram matrix (as scikit-learn's n > p path does): one O(n·p²)
    # product and an O(p³) eigh instead of an O(n·p²) SVD with a larger constant.
    s2, V = np.linalg.eigh(Zc.T @ Zc)
    keep = s2 > s2.max() * Z.shape[1] * np.finfo(float).eps
    s2, V = s2[keep], V[:, keep]
    sv = np.sqrt(s2)
    Uu = (Zc @ V) / sv
    Wsh = s2[:, None] / (s2[:, None] + a_eff[None, :])  # shrinkage factors, rank × A
    Uty = Uu.T @ yc
    fitted = Uu @ (Wsh * Uty[:, None])  # n × A, on the √w scale
    lev = (Uu * Uu) @ Wsh + ((wu / W)[:, None] if fit_intercept else 0.0)
    resid = (yc[:, None] - fitted) / sw[:, None]
    loo = (wu @ ((resid / (1.0 - lev)) ** 2) + within) / W
    best = int(np.argmin(loo))
    beta = V @ (Uty * sv / (s2 + a_eff[best]))
    return float(a_eff[best]), beta, ym - float(zm @ beta), float(loo[best])


def distinct_rows(Z: np.ndarray) -> bool:
    """True when no two rows of Z are equal (compared as ``np.unique`` does: -0.0 equals 0.0).

    Decided from a 64-bit hash of each row's bytes (O(n·p), about 20 ms at n = 10⁵, p = 50, against
    0.37 s for ``np.unique(Z, axis=0)``): equal rows have equal hashes, so distinct hashes prove distinct
    rows; a repeated hash (copies, or a collision) returns False and the caller takes ``np.unique``'s exact
    path, so the answer never depends on the hash.
    """
    n = Z.shape[0]
    if n < 2:
        return True
    h = np.full(n, 0xCBF29CE484222325, dtype=np.uint64)
    mul = np.uint64(0x100000001B3)
    for j in range(Z.shape[1]):
        h ^= (Z[:, j] + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0
        h *= mul
        h ^= h >> np.uint64(29)
    h.sort()
    return not bool(np.any(h[1:] == h[:-1]))


def ridge_fixed(
    Z: np.ndarray, y: np.ndarray, alpha: float, fit_intercept: bool = True, sample_weight: np.ndarray | None = None
):
    """``argmin Σ w_i (y_i - μ - z_i'β)² + alpha·||β||²``; returns ``(beta, intercept)``."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    W = float(w.sum())
    zm = (w @ Z) / W if fit_intercept else np.zeros(Z.shape[1])
    ym = float(w @ y) / W if fit_intercept else 0.0
    Zc = Z - zm
    A = Zc.T @ (Zc * w[:, None]) + alpha * np.eye(Z.shape[1])
    beta = np.linalg.solve(A, Zc.T @ (w * (y - ym)))
    return beta, ym - float(zm @ beta)
