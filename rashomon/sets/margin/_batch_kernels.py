"""Kernels of the batched KKT-Newton solver (:mod:`._batch`): elementwise loss terms, Newton steps, K's corners."""

from __future__ import annotations

import numpy as np

__all__ = ["_softplus_sigmoid", "_solve_each", "corners"]


def _softplus_sigmoid(X: np.ndarray, w: np.ndarray, sigmoid: bool = True):
    """``(Σ_j w_j softplus(-X_ij), σ(-X))`` per row i of X (overwritten by σ(-X), which is returned): the sum as
    ``Σ w (log1p(exp(-|x|)) - min(x, 0))`` (each term within a few roundings of scipy's ``-log_expit``) and
    ``σ(-x) = 1/(1 + exp(x))`` (exp overflowing to inf gives 0): half the time of one exponential and a select."""
    A = np.abs(X)
    np.negative(A, out=A)
    np.exp(A, out=A)
    np.log1p(A, out=A)
    val = A @ w
    np.minimum(X, 0.0, out=A)
    val -= A @ w
    if not sigmoid:
        return val, X
    with np.errstate(over="ignore"):
        np.exp(X, out=X)
    X += 1.0
    np.divide(1.0, X, out=X)
    return val, X


def _solve_each(J: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Newton steps ``J⁻¹rhs`` per row; NaN where a system is singular or not finite (that row stops)."""
    fin = np.isfinite(J).all((1, 2)) & np.isfinite(rhs).all(1)
    out = np.full_like(rhs, np.nan)
    try:
        out[fin] = np.linalg.solve(J[fin], rhs[fin][..., None])[..., 0]
    except np.linalg.LinAlgError:
        for i in np.where(fin)[0]:
            try:
                out[i] = np.linalg.solve(J[i], rhs[i])
            except np.linalg.LinAlgError:
                pass
    return out


def corners(eng, A: np.ndarray):
    """``(min_K a'θ, a minimiser)`` for every row a (see :meth:`MarginFunctionalRange.corner`), vectorised."""
    ms = eng.ms
    pen = eng.pen
    Ap = A[:, pen]
    W = Ap @ eng._Bp_inv  # B_p⁻¹ symmetric
    q = np.maximum((W * Ap).sum(1), 0.0)
    th = np.tile(ms.theta_min, (len(A), 1))
    pos = q > 0
    th[np.ix_(pos, pen)] = -(np.sqrt(ms.r / q[pos]) * (1 - 1e-15))[:, None] * W[pos]
    val = -np.sqrt(ms.r * q)
    if ms.o:
        c0 = A[:, 0]
        th[:, 0] = np.where(c0 > 0, eng.lo[0], np.where(c0 < 0, eng.hi[0], th[:, 0]))
        val = val + c0 * th[:, 0]
    return val, th
