"""Closed-form pieces of the slab bound (:mod:`._secant`): row ranges on an ellipsoid cut by a slab of one
coordinate, and least concave majorants of sampled row functions, all rows at once."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["ROW_BLOCK", "SignedRows", "logistic_loss", "slab_ranges", "soft_min", "upper_hull"]

ROW_BLOCK = 1 << 15  # rows per block where the slab bound runs in row blocks (large sets)
_ROUNDS_ROWS = 300  # rows up to which the removal rounds beat the monotone chain (60 x 48 points: 0.7 ms vs 1.8 ms)


class SignedRows:
    """The rows ``y_j d_j`` of the design (column ``zero`` set to 0: the rest margins) as an operator, without the
    n x d copy (at 10^6 x 21, 168 MB each): ``C @ θ``, ``C.T @ v``, the weighted Gram and row blocks."""

    def __init__(self, D, y, zero=None):
        self.D, self.y, self.zero = D, y, zero
        self.shape = D.shape

    def __matmul__(self, x):
        if self.zero is not None:
            x = np.array(x, dtype=float)
            x[self.zero] = 0.0
        return self.y * (self.D @ x)

    def rmatvec(self, v):
        g = self.D.T @ (self.y * v)
        if self.zero is not None:
            g[self.zero] = 0.0
        return g

    def gram(self, w):
        """``Σ_j w_j c_j c_j'`` in row blocks (y_j² = 1)."""
        d = self.D.shape[1]
        H = np.zeros((d, d))
        for a in range(0, self.D.shape[0], ROW_BLOCK):
            Db = self.D[a : a + ROW_BLOCK]
            H += (Db.T * w[a : a + ROW_BLOCK]) @ Db
        if self.zero is not None:
            H[self.zero, :] = 0.0
            H[:, self.zero] = 0.0
        return H

    def block(self, sl):
        C = self.y[sl, None] * self.D[sl]
        if self.zero is not None:
            C[:, self.zero] = 0.0
        return C


def logistic_loss(z):
    """``log(1 + exp(-z))`` elementwise as ``max(-z, 0) + log1p(exp(-|z|))``: one exponential and one logarithm, about
    half the CPU of ``np.logaddexp(0, -z)`` (within 2.3e-16 relative of it); the tables of the slab bounds."""
    e = np.abs(z)
    np.negative(e, out=e)
    np.exp(e, out=e)
    np.log1p(e, out=e)
    e += np.maximum(-z, 0.0)
    return e


def soft_min(pieces, m, temp, order, rows=slice(None)) -> tuple[np.ndarray, Any, Any]:
    """``(ψ, ψ', ψ'')`` at the margins m of the rows ``rows``: the soft-min at temperature ``temp`` of each row's affine
    pieces ``(x0, f0, slope)`` (:func:`upper_hull`), ``ψ = min_p L_p - T log Σ_p exp(-(L_p - min)/T)``, and for
    ``order`` >= 1 (>= 2) its first (second) derivative in m (None otherwise)."""
    x0, f0, sl = pieces
    L = f0[rows] + sl[rows] * (m[rows, None] - x0[rows])
    lmin = L.min(axis=1)
    z = np.exp(-(L - lmin[:, None]) / temp)
    Z = z.sum(axis=1)
    psi = lmin - temp * np.log(Z)
    if order == 0:
        return psi, None, None
    p = z / Z[:, None]
    d1 = (p * sl[rows]).sum(axis=1)
    d2 = -((p * sl[rows] * sl[rows]).sum(axis=1) - d1 * d1) / temp if order > 1 else None
    return psi, d1, d2


def slab_ranges(C, centre, P, delta, k, a, b):
    """Range of each row c of C of ``c'θ`` on ``{(θ-centre)'P⁻¹(θ-centre) <= δ, a <= θ_k <= b}``.

    Slice formula: on the hyperplane θ_k = t the ellipsoid is the ellipsoid with centre
    ``centre + P e_k (t - centre_k)/P_kk``, shape ``P - P e_k e_k'P/P_kk`` and level ``δ - (t - centre_k)²/P_kk``.
    The maximum of ``c'θ`` over the ellipsoid is at θ*; if θ*_k leaves [a, b] the maximum over the cut
    ellipsoid is on the violated face (concavity of the slice maximum in t). Returns ``(lo, hi)``; rows
    where the cut is empty get ``lo > hi``.
    """
    s = C @ centre
    cPc = np.maximum(np.einsum("ij,jk,ik->i", C, P, C), 0.0)
    cPe = C @ P[:, k]
    Pkk = float(P[k, k])
    h = np.sqrt(delta * cPc)
    lo, hi = s - h, s + h
    q = np.maximum(cPc - cPe**2 / Pkk, 0.0)
    root = np.sqrt(np.maximum(cPc, 1e-300))
    for sign in (1.0, -1.0):
        tk = centre[k] + sign * math.sqrt(delta) * cPe / root  # θ_k of the extreme point
        for t, mask in ((a, tk < a), (b, tk > b)):
            if not (np.isfinite(t) and mask.any()):
                continue
            rem = delta - (t - centre[k]) ** 2 / Pkk
            val = s + cPe * (t - centre[k]) / Pkk + sign * np.sqrt(max(rem, 0.0) * q)
            if rem < 0:
                val = np.full_like(s, -np.inf if sign > 0 else np.inf)
            if sign > 0:
                hi = np.where(mask, val, hi)
            else:
                lo = np.where(mask, val, lo)
    return lo, hi


def upper_hull(X, F):
    """Least concave majorant of the points ``(X[j, i], F[j, i])`` (X sorted along each row), all rows at once.

    Returns ``(x0, f0, slope)`` of shape (n, K - 1): piece i of row j is ``f0 + slope·(m - x0)``; the
    minimum over i is the majorant on [X[j, 0], X[j, -1]] (and a concave extension beyond). Points sharing an
    abscissa first all take the largest of their values (the majorant must reach it; the chain's pop test has a
    zero cross product there and would keep whichever came last).
    """
    n, K = X.shape
    F = _equal_x_max(X, F)
    # rows strictly concave already (every point above the chord of its two neighbours) are their own hull: on the
    # slab bounds' grids about half the rows, often all of them; the others go to a vertex search
    need = np.zeros(0, dtype=int)
    if K > 2:
        xp, fp = X[:, :-2], F[:, :-2]
        need = np.flatnonzero(
            np.any((F[:, 1:-1] - fp) * (X[:, 2:] - xp) <= (F[:, 2:] - fp) * (X[:, 1:-1] - xp), axis=1)
        )
    if not need.size:  # every row its own hull: piece i joins points i and i + 1
        xl, xr, fl, fr = X[:, :-1], X[:, 1:], F[:, :-1], F[:, 1:]
    else:
        stack, top = np.tile(np.arange(K), (n, 1)), np.full(n, K - 1)
        Xs, Fs = X[need], F[need]
        stack[need], top[need] = _rounds(Xs, Fs) if need.size <= _ROUNDS_ROWS else _monotone_chain(Xs, Fs)
        # piece i of row j joins its vertices i and i + 1 (the last piece repeated); flat indices, one gather each
        cols = np.minimum(np.arange(K - 1)[None, :], np.maximum(top - 1, 0)[:, None])
        base = (K * np.arange(n))[:, None]
        sf = stack.ravel()
        left = sf[cols + base] + base
        right = np.where(top[:, None] >= 1, sf[cols + 1 + base] + base, left)
        Xf, Ff = X.ravel(), F.ravel()
        xl, xr, fl, fr = Xf[left], Xf[right], Ff[left], Ff[right]
    dx = xr - xl
    pos = dx > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(pos, (fr - fl) / np.where(pos, dx, 1.0), 0.0)
    f0 = np.where(pos, fl, np.maximum(fl, fr))
    return xl, f0, slope


def _monotone_chain(X, F):
    """The vertices of each row's upper hull by Andrew's monotone chain, all rows in lock-step: ``(stack, top)``
    with row j's vertices ``stack[j, :top[j] + 1]`` in order (K steps; the cheaper for many rows; flat indices)."""
    n, K = X.shape
    Xf, Ff = X.ravel(), F.ravel()
    ar = np.arange(n)
    base = ar * K
    stack = np.zeros((n, K), dtype=int)
    sf = stack.ravel()
    top = np.zeros(n, dtype=int)
    for i in range(1, K):
        act = ar[top >= 1]  # the chain's pop test, only on the rows that may still pop (the same arithmetic per row)
        while act.size:
            t, b = top[act], base[act]
            i1, i2, ii = sf[b + t - 1] + b, sf[b + t] + b, b + i
            x1, f1 = Xf[i1], Ff[i1]
            pop = (Ff[i2] - f1) * (Xf[ii] - x1) <= (Ff[ii] - f1) * (Xf[i2] - x1)
            act = act[pop]
            top[act] -= 1
            act = act[top[act] >= 1]
        top += 1
        sf[base + top] = i
    return stack, top


def _rounds(X, F):
    """The vertices of each row's upper hull: ``(stack, top)`` with row j's vertices ``stack[j, :top[j] + 1]`` in
    order. Rounds of removals, all rows and points at once: a point on or below the chord of its live neighbours is
    not a vertex (the hull lies above that chord whatever else is removed), so every such point of a round goes;
    the first and last points stay; when a round removes none, the live points are concave at every vertex: the
    hull (the same vertices as :func:`_monotone_chain`). Only the neighbours of a removed point are tested again: a
    few rounds typically, where the monotone chain takes K steps (for few rows, its interpreter cost)."""
    n, K = X.shape
    alive = np.ones((n, K), dtype=bool)
    alive[:, 1:] = X[:, 1:] != X[:, :-1]  # one point per abscissa (F is the run's largest value at each)
    idx = np.arange(K)
    Xf, Ff = X.ravel(), F.ravel()
    test = alive.copy()
    test[:, 0] = test[:, -1] = False
    while K > 2:
        cand = np.flatnonzero(test & alive)  # flat indices of the points tested this round
        if not cand.size:
            break
        prev = np.maximum.accumulate(np.where(alive, idx, -1), axis=1).ravel()
        nxt = np.minimum.accumulate(np.where(alive, idx, K)[:, ::-1], axis=1)[:, ::-1].ravel()
        pc, qc = prev[cand - 1], nxt[cand + 1]  # the live neighbours' columns (a row's ends are never tested)
        ok = (pc >= 0) & (qc < K)  # a row's first and last live points stay
        cand, pc, qc = cand[ok], pc[ok], qc[ok]
        rk = cand - cand % K
        p, q = rk + pc, rk + qc
        xp, fp = Xf[p], Ff[p]
        pop = (Ff[cand] - fp) * (Xf[q] - xp) <= (Ff[q] - fp) * (Xf[cand] - xp)
        test[:] = False
        if not pop.any():
            break
        alive.ravel()[cand[pop]] = False
        tf = test.ravel()
        tf[p[pop]] = tf[q[pop]] = True  # a removal changes only the chords of its two neighbours
        test[:, 0] = test[:, -1] = False
    order = np.argsort(~alive, axis=1, kind="stable")  # the live indices first, in order
    return order, alive.sum(axis=1) - 1


def _equal_x_max(X, F):
    """F with every run of equal abscissae in a row (X sorted along rows) set to the run's largest value."""
    same = X[:, 1:] == X[:, :-1]
    if not same.any():
        return F
    n, K = X.shape
    start = np.ones((n, K), dtype=bool)
    start[:, 1:] = ~same
    seg = np.cumsum(start.ravel()) - 1  # runs never cross rows: each row's first point starts a run
    top = np.maximum.reduceat(F.ravel(), np.flatnonzero(start.ravel()))
    return top[seg].reshape(n, K)
