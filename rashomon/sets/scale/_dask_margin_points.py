"""Batched exact points for the Dask screen of a logistic set: one pass evaluates K points, each serving every row.

Between the closed-form screen (:mod:`._dask_margin_screen`) and the exact per-row Newton solves, the rows still
undecided take rounds of **one pass each**: a batch of K candidate points (one per picked row) has its exact loss
and gradient summed over every row of the table (``X·Θ`` per block, then the softplus sums; no Hessian). Each
evaluated point θ₀ then serves **every** undecided row twice:

* **a member**: θ₀ itself when its loss is at most ε (and it lies in the ball), else the point of the segment to
  θ_min where the chord of the convex loss reaches ε (halved for rounding, as the Newton engine's members); a row
  it puts across its threshold flips;
* **a tangent half-space** ``e(θ₀) + ∇e(θ₀)'(θ - θ₀) <= ε`` containing S (convexity), cut with the certified outer
  ellipsoid of the screen: the least ``f'θ`` over the cut is closed form; a row whose bound stays on its side of
  the threshold cannot flip (the offset widened for rounding).

The cuts found so far are also combined for the rows still open (:mod:`._dask_margin_cuts`, weak duality), which
bounds rows lying between the points. A picked row's next point is the minimiser of its functional over the
quadratic model ``e(θ₀) + g'Δ + ½Δ'H₀Δ <= ε`` (H₀ the Hessian at θ_min, one factor for all rows) around its last
point; its first point is that model around the evaluated point whose gradient is most opposed to it (the model
at θ_min in the first round); at the fixed point the exact KKT conditions hold, so the points approach the
row's own end and its two certificates close around it. A row still open after a few of its own points is left to the exact
solves. Nothing here is trusted without the pass: every member and every half-space comes from exact sums.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["axis_members", "points_stage", "value_grad"]

_K = 256  # points evaluated per pass
_OWN = 4  # points of its own a row takes before it is left to the exact solves
_BLOCK = 4096  # rows of F per block of the closed forms (bounded |rows| x K temporaries)
_SLICE = 4096  # rows per slice of a block in the pass (temporaries of slice x K)
_WARM = True  # a fresh row's first point from the exact point nearest its end (else the model at θ_min)
_COMBINE = True  # combine every cut found so far for the rows still undecided (:mod:`._dask_margin_cuts`)
_MARGIN = 1e-10  # relative widening of every certified bound (rounding of the closed forms)


def _cut_bounds(F: np.ndarray, ell: tuple, Hs: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``max_j min {f'θ : (θ - c)'A(θ - c) <= 1, h_j'θ <= b_j}`` for every row f of F (``ell = (c, A⁻¹)``),
    widened for rounding: the outer ellipsoid cut by each half-space, the best cut per row."""
    c, M = ell
    hc = Hs @ c
    HM = Hs @ M
    hMh = np.maximum(np.einsum("ij,ij->i", HM, Hs), 1e-300)
    s = b - hc  # the half-space's offset from the centre
    rho2 = 1.0 - np.where(s < 0, s * s / hMh, 0.0)
    out = np.empty(len(F))
    for a in range(0, len(F), _BLOCK):
        Fb = F[a : a + _BLOCK]
        fc = Fb @ c
        fMf = np.maximum(np.einsum("ij,jk,ik->i", Fb, M, Fb), 0.0)
        sq = np.sqrt(np.maximum(fMf, 1e-300))
        fMh = Fb @ HM.T  # (rows, K)
        # the ellipsoid's own minimiser c - Mf/sqrt(f'Mf) in the half-space: the cut does not bind
        free = (hc[None, :] - fMh / sq[:, None]) <= b[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            on = (
                fc[:, None]
                + fMh / hMh[None, :] * s[None, :]
                - np.sqrt(np.maximum(rho2, 0.0))[None, :]
                # the part of f across h, widened by 4 ulp of f'Mf: it cancels when f is nearly parallel to h
                * np.sqrt(np.maximum(fMf[:, None] - fMh**2 / hMh[None, :], 0.0) + 1e-15 * fMf[:, None])
            )
        val = np.where(free | ~(rho2 >= 0)[None, :] | ~np.isfinite(on), (fc - sq)[:, None], on)
        out[a : a + _BLOCK] = val.max(axis=1)
    return out - _MARGIN * np.maximum(1.0, np.abs(out))


def value_grad(eng: Any, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(e (k,), G (k, d))``: the mean logistic loss and its gradient at the k points T (rows), one pass.

    Per block: the signed design ``ye·D`` times Θ' (one product), then ``softplus(-m)`` and ``σ(-m)`` from one
    exponential each, in slices of rows (bounded temporaries); the loss of a margin m is ``s·softplus((c - m)/s)``.
    """
    k, d = T.shape
    loss = eng.loss
    c, s = float(loss.c), float(loss.s)
    Tt = np.ascontiguousarray(T.T) / s

    def fn(D, ye):
        out = np.zeros((k, 1 + d))
        Dy = D * ye[:, None]
        for a in range(0, len(ye), _SLICE):
            Ds = Dy[a : a + _SLICE]
            U = Ds @ Tt  # m/s
            np.subtract(c / s, U, out=U)  # u = (c - m)/s
            E = np.abs(U)
            np.negative(E, out=E)
            np.exp(E, out=E)  # exp(-|u|)
            L = np.log1p(E)
            L += np.maximum(U, 0.0)
            out[:, 0] += L.sum(axis=0)
            S = np.where(U >= 0, 1.0, E)
            E += 1.0
            S /= E  # σ(u) = -ℓ'(m)
            out[:, 1:] -= S.T @ Ds
        out[:, 0] *= s
        return out.ravel()

    v = eng.rows.reduce(fn, k * (1 + d)).reshape(k, 1 + d) / eng.rows.n_rows
    eng.passes += 1
    return v[:, 0], v[:, 1:]


def _outside(eng: Any, T: np.ndarray) -> np.ndarray:
    """Points (rows) outside the ball ``θ'Bθ <= r`` (where the quadratic model's steps, blind to it, stop)."""
    return np.einsum("ij,jk,ik->i", T, eng.B, T) > eng.r * (1 + 1e-9)


def axis_members(eng: Any, C: np.ndarray, steps: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """``(members, ball)``: members of S near the ends of the directions C (rows), the quadratic model's ends at
    θ_min refined by ``steps`` model steps around exact points (one pass each), each pulled into the set (no
    Hessian pass); ``ball`` marks the directions whose points left the ball (their ends are left to the caller)."""
    Hinv = _model_inverse(eng)
    T = eng._start(C)[0]
    for it in range(steps + 1):
        e, G = value_grad(eng, T)
        ok = np.isfinite(e) & np.isfinite(G).all(axis=1)
        if it == steps:
            break
        T = np.where(ok[:, None], _model_points(eng, C, T, e, G, Hinv), T)
    ball = _outside(eng, T) | ~ok
    keep = np.flatnonzero(~ball)
    return np.array([eng._member(T[j], e[j]) for j in keep]).reshape(-1, C.shape[1]), ball


def _model_inverse(eng: Any) -> np.ndarray:
    """H₀⁻¹ (with a ridge of 1e-10 of the scale: the steps only propose points; all is checked)."""
    H0 = 0.5 * (eng.H0 + eng.H0.T)
    scale = max(float(np.trace(H0)) / len(H0), 1e-300)
    Hinv = np.linalg.inv(H0 + 1e-10 * scale * np.eye(len(H0)))
    return 0.5 * (Hinv + Hinv.T)


def _model_points(eng: Any, F: np.ndarray, T0: np.ndarray, e0: np.ndarray, G: np.ndarray, Hinv: np.ndarray):
    """The minimiser of each f'θ over ``e0 + g'Δ + ½Δ'H₀Δ <= ε`` around its point T0 (rows paired)."""
    a, bb = F @ Hinv, G @ Hinv
    fa = np.maximum(np.einsum("ij,ij->i", a, F), 1e-300)
    den = 2.0 * (eng.eps - e0) + np.einsum("ij,ij->i", bb, G)
    inv_lam = np.sqrt(np.maximum(den, 0.0) / fa)  # 1/λ; 0 where the model's sublevel set is empty
    return T0 - inv_lam[:, None] * a - bb


def points_stage(scr: Any, F, tau, strict, value, theta, bound, left, tick) -> tuple[np.ndarray, list, dict]:
    """Rounds of K exact points (one pass each) on the undecided rows ``left`` (see the module docstring).

    ``value``, ``theta`` and ``bound`` are updated in place for every row the points reach. Returns the rows still
    undecided, the members found (arrays of rows x d) and the counts ``{"by exact points": rows settled,
    "points": points evaluated, "passes": passes}``.
    """
    eng = scr.eng
    crosses = lambda v, tt, s: np.where(s, v < tt, v <= tt)  # noqa: E731
    Hinv = _model_inverse(eng)
    own = np.zeros(len(F), dtype=int)
    point: dict[int, np.ndarray] = {}
    members: list = []
    cuts_h: list = []
    seen_T: list = []
    seen_e: list = []
    seen_G: list = []
    cuts_b: list = []
    counts = {"by exact points": 0, "points": 0, "passes": 0}
    n0 = left.size
    if scr.ell is None:
        return left, members, counts
    radius = float(np.linalg.norm(scr.ell[0])) + float(np.sqrt(max(np.linalg.eigvalsh(scr.ell[1])[-1], 0.0)))
    while left.size:
        fresh = left[(own[left] == 0)]
        cont = np.array([i for i in left if i in point], dtype=int)
        room = max(_K - cont.size, 0)
        if fresh.size > room:
            fresh = fresh[np.unique(np.linspace(0, fresh.size - 1, room).round().astype(int))] if room else fresh[:0]
        pick = np.concatenate([cont, fresh]).astype(int)
        if not pick.size:
            break
        T = np.empty((pick.size, F.shape[1]))
        for j, i in enumerate(pick):
            T[j] = point[i] if i in point else eng._start(F[i : i + 1])[0][0]
        new = np.array([j for j, i in enumerate(pick) if i not in point], dtype=int)
        if _WARM and new.size and seen_T:  # a fresh row starts from the model around the evaluated point nearest
            PT, Pe, PG = np.vstack(seen_T), np.concatenate(seen_e), np.vstack(seen_G)  # to its end
            FH = F[pick[new]] @ Hinv
            near = np.argmax(-(FH @ PG.T) / np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", PG, Hinv, PG), 1e-300)), axis=1)
            W = _model_points(eng, F[pick[new]], PT[near], Pe[near], PG[near], Hinv)
            inb = ~_outside(eng, W)
            T[new[inb]] = W[inb]
        e, G = value_grad(eng, T)
        counts["points"] += pick.size
        counts["passes"] += 1
        own[pick] += 1
        ok = np.isfinite(e) & np.isfinite(G).all(axis=1)
        Mb = np.array([eng._member(T[j], e[j]) for j in np.flatnonzero(ok)]).reshape(-1, F.shape[1])
        members.append(Mb)
        before = left.size
        for a in range(0, left.size if Mb.size else 0, _BLOCK):  # rows x members in bounded blocks
            rows = left[a : a + _BLOCK]
            V = F[rows] @ Mb.T
            k = np.argmin(V, axis=1)
            v = V[np.arange(rows.size), k]
            better = v < value[rows]
            value[rows[better]], theta[rows[better]] = v[better], Mb[k[better]]
        Hs, Tk, ek = G[ok], T[ok], e[ok]
        seen_T.append(Tk)
        seen_e.append(ek)
        seen_G.append(Hs)
        # S ⊆ {e(θ₀) + g'(θ - θ₀) <= ε}: offset raised for the rounding of the sums and of the product
        slack = 1e-12 * (1.0 + np.abs(ek) + np.linalg.norm(Hs, axis=1) * (np.linalg.norm(Tk, axis=1) + radius))
        b = np.einsum("ij,ij->i", Hs, Tk) + eng.eps - ek + slack
        if Hs.size:
            bound[left] = np.maximum(bound[left], np.minimum(_cut_bounds(F[left], scr.ell, Hs, b), value[left]))
            cuts_h.append(Hs)
            cuts_b.append(b)
        undecided = ~crosses(value[left], tau[left], strict[left]) & crosses(bound[left], tau[left], strict[left])
        if _COMBINE and undecided.any() and cuts_h:  # every cut so far, combined (weak duality): rows between points
            from ._dask_margin_cuts import combined_bounds

            rest = left[undecided]
            cb = combined_bounds(F[rest], scr.ell, np.vstack(cuts_h), np.concatenate(cuts_b))
            bound[rest] = np.maximum(bound[rest], np.minimum(cb, value[rest]))
            undecided = ~crosses(value[left], tau[left], strict[left]) & crosses(bound[left], tau[left], strict[left])
        left = left[undecided]
        counts["by exact points"] += before - left.size
        tick(before - left.size)
        nxt = {}
        still = set(left.tolist())
        for j, i in enumerate(pick):
            if i in still and ok[j] and own[i] < _OWN:
                P = _model_points(eng, F[i : i + 1], T[j : j + 1], e[j : j + 1], G[j : j + 1], Hinv)
                if not _outside(eng, P)[0]:  # an end on the ball: left to the exact solves
                    nxt[int(i)] = P[0]
        point = nxt
        if not point and not (own[left] == 0).any():
            break
    counts["by exact points"] = n0 - left.size
    return left, members, counts
