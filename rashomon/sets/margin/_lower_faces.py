"""Row minorants of :mod:`._lower_bnb` that are affine in both the row's margin and the switched coefficient.

Notation of :mod:`._lower_bnb`: on the slab ``a <= b <= a'`` (b0 its middle, w its width) row j's function
``φ_j(m, b)`` is convex in b, so it lies above its tangent in b at b0,

    T_j(m, b) = φ_j(m, b0) + D_j(m)(b - b0),    D_j(m) ∈ ∂_b φ_j(m, b0).

The earlier minorant ``ψ_j(m) + κ_j(b - b0)`` pays ``(w/2)|D_j(m) - κ_j|`` for every m: first order in w, the
loss that made the slabs need to be narrow. Here the whole of T_j is kept: T_j is affine in b, so on the box
``[lo_j, hi_j] × [a, a']`` its greatest convex minorant is the convex hull of its two faces ``b = a`` and
``b = a'``, i.e. with ``F_a(m) = T_j(m, a)``, ``F_a'(m) = T_j(m, a')`` and s = (b - a)/w,

    conv T_j(m, b) = sup_β  β m - (1 - s) F_a*(β) - s F_a'*(β)      (F*: the conjugate on [lo_j, hi_j]),

and every β gives a valid affine minorant ``β m + (1 - s) c_a(β) + s c_a'(β)``, ``c_e(β) = min_m F_e(m) - β m``.
The β used are the slopes of the lower hulls of both faces (then the maximum of the pieces is the greatest convex
minorant itself, on the points sampled). What is left of the slab's width is T_j's own error, second order in w
for a smooth loss.

**Sampled faces.** Each face is evaluated on the grid of the row's range and lowered so that the piecewise-linear
function through the lowered values lies below the face on the whole range; then ``min`` over the grid points of
``F_e - β m`` bounds ``c_e(β)`` from below.

* Logistic: on the grid nodes ``φ_j(m, b0)`` (switched sums from the tabulated per-label functions, lowered by their
  interpolation error) and ``D_j`` (within ``eR_j``) as in :mod:`._lower_bnb`; face e is
  ``φ_j(m, b0) + (e - b0) D_j(m)`` lowered by ``(w/2) eR_j``. A function lies above its chord on a cell minus
  (its largest second derivative there)·h²/8 (h: the row's grid step). On a cell ``F_e'' <= F_s''/(n-1) +
  (w/2)|D_j''|``: the own losses ``-(Λ + 1/(n-1)) ℓ`` are concave and only help, ``F_s'' = Σ_v cnt_v ℓ''(·)`` is
  tabulated with F_s and read at the cell's middle, plus ``n·max|ℓ'''|·(hf + h/2)`` (interpolation on the fine
  grid of step hf, half a cell), at most n/4; ``|D_j''| <= max|ℓ'''| Σ_v cnt_v |G_v - g_j|/(n-1)``. Each node is
  lowered by the larger error of its two cells.
* Hinge: the three points per grid cell of :mod:`._lower_hinge` (nodes and the switched part's tangents'
  intersection) carry φ_j exactly (its own loss is affine on a cell); ``D_j`` is a step function whose value on a
  cell lies in ``[max(D_i, D_i+1) - TV_i, min(D_i, D_i+1) + TV_i]`` (TV_i: the total of its jumps in the closed
  cell), so face a is lowered by ``(w/2)(min(D_i, D_i+1) + TV_i)`` and face a' raised by ``(w/2)(max(D_i, D_i+1) -
  TV_i)`` on cell i (a node: the worse of its two cells).

The programme of :mod:`._lower_bnb` then minimises ``Σ_j w_j softmax_p(L_jp(θ))`` with ``L_jp = c_jp + β_jp m_j(θ) +
β^b_jp (θ_k - b0)`` (the soft-max lowered by ``T log P`` is below the maximum) plus the exact ``(μ - τ) e_orig``.
"""

from __future__ import annotations

import math

import numpy as np

from ._slabs import upper_hull

__all__ = ["face_pieces", "faces_objective"]
MID = True

_L3 = 1.0 / (6.0 * math.sqrt(3.0))  # max |third derivative| of the logistic loss


def _support(slopes, vx, vf, beta):
    """``min_v vf[j, v] - beta[j, p]·vx[j, v]`` over the vertices of row j's lower hull (slopes ``slopes[j]``,
    nondecreasing): attained at the vertex where the slopes cross β, found by one search over all rows at once
    (each row's slopes shifted into its own band of one sorted array)."""
    nr, P = slopes.shape
    span = 2.0 * max(float(np.abs(slopes).max()), float(np.abs(beta).max()), 1.0) + 1.0
    off = span * np.arange(nr)[:, None]
    idx = np.searchsorted((slopes + off).ravel(), (beta + off).ravel(), side="left").reshape(beta.shape)
    idx = idx - P * np.arange(nr)[:, None]  # the number of the row's slopes below β: its supporting vertex
    idx = np.clip(idx, 0, P)
    return np.take_along_axis(vf, idx, axis=1) - beta * np.take_along_axis(vx, idx, axis=1)


def _hull(P, F):
    """The lower convex hull of the points ``(P[j], F[j])`` per row: its slopes (increasing; repeats past a row's
    last piece) and its vertices ``(x, F)`` (the first point, then every piece's right end)."""
    x0, f0, s = upper_hull(P, -F)
    keep = int((np.diff(x0, axis=1) != 0).sum(axis=1).max()) + 1
    x0, f0, s = x0[:, :keep], f0[:, :keep], s[:, :keep]
    vx = np.concatenate([x0, P[:, -1:]], axis=1)
    last = np.where(P == P[:, -1:], F, np.inf).min(axis=1, keepdims=True)  # the least value at the last abscissa
    vf = np.concatenate([-f0, last], axis=1)
    return -s, vx, vf


def _envelope(P, Fa, Fb, w):
    """Pieces ``(c, β, β_b)`` of the convex hull of the two sampled faces (module docstring): row j is above
    ``max_p c + β m + β_b (b - b0)`` on the slab. The supporting line of a face at a slope is its minimum over the
    face's hull vertices (the lower hull of the points is the greatest convex function below them)."""
    sa, vxa, vfa = _hull(P, Fa)
    sb, vxb, vfb = _hull(P, Fb)
    if MID:
        beta = _hull(P, 0.5 * (Fa + Fb))[0]
    else:
        beta = np.concatenate([sa, sb], axis=1)
    ca, cb = _support(sa, vxa, vfa, beta), _support(sb, vxb, vfb, beta)
    wb = max(w, 1e-300)
    return 0.5 * (ca + cb), beta, (cb - ca) / wb


def face_pieces(sl, sd, tau):
    """``(c, β, β_b)`` of row j's minorant on the slab ``sd`` (from :meth:`._lower_bnb._Slabs.slab`) for Λ = t - τ;
    certified values are lowered by ``1e-12·(1 + |c|)``."""
    w = sd["b"] - sd["a"]
    half = 0.5 * w
    lam = sl.t - tau
    n = sl.n
    if sl.hinge:
        X, Xs = sd["X"], sd["Xs"]
        K = X.shape[1]
        node = sd["base"] - lam * sd["own"]
        cellv = sd["base_x"] - lam * sd["own_x"]
        D, TV = sd["DB"], sd["TV"]
        dmax = np.minimum(D[:, :-1], D[:, 1:]) + TV  # the largest D on each cell
        dmin = np.maximum(D[:, :-1], D[:, 1:]) - TV  # the smallest
        P = np.empty((X.shape[0], 2 * K - 1))
        P[:, 0::2], P[:, 1::2] = X, Xs
        Fa, Fb = np.empty(P.shape), np.empty(P.shape)
        la = np.empty(X.shape)  # the node's lowering on face a: the worse of its cells
        la[:, 0], la[:, -1] = dmax[:, 0], dmax[:, -1]
        la[:, 1:-1] = np.maximum(dmax[:, :-1], dmax[:, 1:])
        lb = np.empty(X.shape)
        lb[:, 0], lb[:, -1] = dmin[:, 0], dmin[:, -1]
        lb[:, 1:-1] = np.minimum(dmin[:, :-1], dmin[:, 1:])
        Fa[:, 0::2], Fa[:, 1::2] = node - half * la, cellv - half * dmax
        Fb[:, 0::2], Fb[:, 1::2] = node + half * lb, cellv + half * dmin
        c, beta, bb = _envelope(P, Fa, Fb, w)
    else:
        X = sd["X"]
        K = X.shape[1]
        phi0 = sd["base"] - lam * sd["own"]
        eR = sd["eR"][:, None]
        Fa = phi0 - half * (sd["DB"] + eR)
        Fb = phi0 + half * (sd["DB"] - eR)
        h = (sd["mhi"] - sd["mlo"]) / (K - 1)
        # between nodes a face is above its chord minus (its largest second derivative on the cell)·h²/8: at most
        # F_s''/(n-1) (the own losses are concave there) plus (w/2)|D''|; a node takes the larger of its two cells
        curv = sd["F2"] / (n - 1.0) + (half * _L3 * 4.0 * sl.lip)[:, None]  # sl.lip = Σ cnt|G-g|/(4(n-1))
        err = curv * (h * h / 8.0)[:, None]
        low = np.empty(X.shape)
        low[:, 0], low[:, -1] = err[:, 0], err[:, -1]
        low[:, 1:-1] = np.maximum(err[:, :-1], err[:, 1:])
        c, beta, bb = _envelope(X, Fa - low, Fb - low, w)
    return c - 1e-12 * (1.0 + np.abs(c)), beta, bb


def faces_objective(C, k, wr, pieces, b0, temp):
    """The smooth part of the slab programme: ``Σ_j w_j (T log Σ_p exp(L_jp/T)) - T log P`` (below
    ``Σ_j w_j max_p L_jp``), as an oracle ``f(θ, order)`` returning value, gradient, Hessian."""
    c, beta, bb = pieces
    P = c.shape[1]
    corr = temp * math.log(P)

    def f(theta, order):
        m = C @ theta
        db = float(theta[k]) - b0
        L = c + beta * m[:, None] + bb * db
        lmax = L.max(axis=1)
        z = np.exp((L - lmax[:, None]) / temp)
        Z = z.sum(axis=1)
        val = float(wr @ (lmax + temp * np.log(Z))) - corr
        if order == 0:
            return (val,)
        p = z / Z[:, None]
        gm = (p * beta).sum(axis=1)
        gb = (p * bb).sum(axis=1)
        grad = C.T @ (wr * gm)
        grad[k] += float(wr @ gb)
        if order == 1:
            return val, grad
        hmm = ((p * beta * beta).sum(axis=1) - gm * gm) / temp
        hmb = ((p * beta * bb).sum(axis=1) - gm * gb) / temp
        hbb = ((p * bb * bb).sum(axis=1) - gb * gb) / temp
        H = (C.T * (wr * hmm)) @ C
        cross = C.T @ (wr * hmb)
        H[:, k] += cross
        H[k, :] += cross
        H[k, k] += float(wr @ hbb)
        return val, grad, H

    return f
