"""Kernels of the batched KKT-Newton solver (:mod:`._batch`): elementwise loss terms, Newton steps, K's corners."""

from __future__ import annotations

import numpy as np

__all__ = [
    "_bfgs",
    "_multipliers",
    "_softplus_sigmoid",
    "_softplus_sigmoid_into",
    "_solve_each",
    "capped_loss",
    "corners",
    "hessians",
    "second_order_model",
]

_CHUNK = 512  # functionals per block of Hessians (memory: _CHUNK x d(d+1)/2 floats)
_PARTS = 8  # a membership test sums the loss over this many strided shares of the rows, dropping columns over ε


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


def _softplus_sigmoid_into(X: np.ndarray, w: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``Σ_j w_j softplus(-X_ij)`` per row i of X, with X overwritten by ``σ(-X)``: the values of
    :func:`_softplus_sigmoid` to the bit, with two work arrays of X's shape (A, B) and no allocation of that size.
    ``Σ w min(x, 0)`` is half of ``Σ w (x - |x|)``: ``x - |x|`` is ``2 min(x, 0)`` exactly, and so is the sum
    (scaling by 2 commutes with rounding), in one addition where a ``minimum`` costs three times as much."""
    np.abs(X, out=A)
    np.negative(A, out=A)
    np.add(X, A, out=B)
    half = B @ w
    np.exp(A, out=A)
    np.log1p(A, out=A)
    val = A @ w
    val -= 0.5 * half
    with np.errstate(over="ignore"):
        np.exp(X, out=X)
    X += 1.0
    np.divide(1.0, X, out=X)
    return val


def _bfgs(H: np.ndarray, dT: np.ndarray, dG: np.ndarray) -> np.ndarray:
    """BFGS updates ``H - Hs s'H/(s'Hs) + y y'/(y's)`` of the Hessians H (k x d x d) by the steps s (columns of dT,
    d x k) and gradient changes y (columns of dG); a pair without positive curvature (``y's <= 0``, rounding on a
    tiny step) or not finite leaves its Hessian as it is. Positive definite Hessians stay so."""
    Hs = np.einsum("kij,jk->ki", H, dT)
    sHs = (dT.T * Hs).sum(1)
    ys = (dT * dG).sum(0)
    ok = (sHs > 0) & (ys > 0) & np.isfinite(ys) & np.isfinite(sHs)
    if ok.any():
        Hs, y = Hs[ok], dG[:, ok].T
        H[ok] += y[:, :, None] * (y / ys[ok, None])[:, None, :] - Hs[:, :, None] * (Hs / sHs[ok, None])[:, None, :]
    return H


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


def hessians(bat, s: np.ndarray, exact: bool = False, out: np.ndarray | None = None, rows: int = 65536) -> np.ndarray:
    """``Z'diag(w σ(m)σ(-m))Z`` per column of s (= σ(-m)) for the batch solver ``bat``: one product with the
    row-wise outer products (those of every ``stride``-th row when they are not all kept, unless ``exact``: then
    built a block at a time). ``out``: an array of at least s's transposed shape for the weights; ``rows``: rows
    per block of outer products when they are not kept."""
    St = s.T  # contiguous when s is the view :meth:`value_grad` returns
    sampled = bat.ZZ is None and not exact
    if sampled:
        St = St[:, :: bat.stride]
    if out is None or sampled:
        W = St * (1.0 - St)
    else:
        W = np.subtract(1.0, St, out=out[: len(St)])
        W *= St
    W *= (bat.ws if sampled else bat.w) / bat.tau
    k = s.shape[1]
    H = np.empty((k, bat.d, bat.d))
    for a in range(0, k, _CHUNK):
        if bat.ZZ is not None or sampled:
            U = W[a : a + _CHUNK] @ (bat.ZZs if sampled else bat.ZZ)
        else:  # bounded memory: the outer products of ``rows`` rows at a time
            U = np.zeros((min(_CHUNK, k - a), len(bat.iu[0])))
            for b in range(0, len(bat.Z), rows):
                Zb = bat.Z[b : b + rows]
                U += W[a : a + _CHUNK, b : b + rows] @ (Zb[:, bat.iu[0]] * Zb[:, bat.iu[1]])
        Hc = H[a : a + _CHUNK]
        Hc[:, bat.iu[0], bat.iu[1]] = U
        Hc[:, bat.iu[1], bat.iu[0]] = U
    return H


def _multipliers(C: np.ndarray, G: np.ndarray, BT: np.ndarray):
    """``(λ, ν, ball)`` per column: least squares of ``c + λg + ν·2B̃θ = 0`` (``BT = 2B̃θ``), the ball engaged where
    ν > 0 and λ = 1 where it is not positive and finite."""
    gg, gb, bb = (G * G).sum(0), (G * BT).sum(0), (BT * BT).sum(0)
    cg, cb = (C * G).sum(0), (C * BT).sum(0)
    det = gg * bb - gb * gb
    with np.errstate(divide="ignore", invalid="ignore"):
        two = det > 1e-12 * gg * bb
        lam = np.where(two, (-cg * bb + cb * gb) / det, -cg / gg)
        nu = np.where(two, (-cb * gg + cg * gb) / det, 0.0)
    ball = nu > 0
    nu = np.where(ball, nu, 0.0)
    lam = np.where(np.isfinite(lam) & (lam > 0), lam, 1.0)
    return lam, nu, ball


def second_order_model(bat):
    """``(model, H0)``: the ranges of the second-order model of L at θ_min cut by the ball (a
    :class:`~rashomon.sets.LinearFunctionalRange`, whose minimisers start Newton) and, for the logistic loss, L's
    Hessian at θ_min (None for the hinge); sets ``bat.tau`` to the smoothing whose curvature the model takes."""
    from ..rows import LinearFunctionalRange

    ms = bat.eng.ms
    bat.tau = max(bat.taus[0], 0.05) if bat.hinge else 1.0  # the hinge: a wide smoothing's curvature
    L0, g0, s0 = bat.value_grad(ms.theta_min[:, None])
    g0, H0, t0 = g0[:, 0], bat.hessians(s0)[0], ms.theta_min
    L0 = np.array([bat.e_min])
    # L(θ) ≈ e_min + g0'(θ - t0) + ½(θ - t0)'H0(θ - t0) = θ'Qθ - 2c'θ + k
    Q = 0.5 * H0
    c = -0.5 * (g0 - H0 @ t0)
    k = float(L0[0] - g0 @ t0 + 0.5 * t0 @ H0 @ t0)
    B = np.zeros_like(bat.Bt)
    B[bat.o :, bat.o :] = bat.Bt[bat.o :, bat.o :]
    return LinearFunctionalRange(Q, c, k, B, bat.r, bat.eps, t0, "margin ranges"), None if bat.hinge else H0


def capped_loss(bat, T: np.ndarray, cap: float | None = None) -> np.ndarray:
    """The exact L(θ) for every column θ of T (d x k) of the batch solver ``bat``, in blocks of columns (memory and
    cache). ``cap``: the rows are summed in _PARTS strided shares and a column stops once its partial sum (a lower
    bound: every term is >= 0) exceeds cap; its value is then that partial sum."""
    k = T.shape[1]
    out = np.zeros(k)
    parts = _PARTS if cap is not None and len(bat.w) >= 256 * _PARTS else 1
    live = np.arange(k)
    for j in range(parts):
        Zt, w = (bat.Zt, bat.w) if parts == 1 else (bat.Zt[:, j::parts], bat.w[j::parts])
        for a in range(0, live.size, bat.cols):
            idx = live[a : a + bat.cols]
            X = T[:, idx].T @ Zt
            out[idx] += np.maximum(0.0, 1.0 - X) @ w if bat.hinge else _softplus_sigmoid(X, w, False)[0]
        if cap is not None:
            live = live[out[live] <= cap]
    return out
