"""Weight-independent sufficient statistics of the kernel class's quadratic forms.

A row weighting w (a bootstrap resample: counts) only re-weights row sums, so everything
that does not depend on w is built once and each weighting costs a few matrix products in
θ-space. With ``φ(x) = T'[1?; k(x, D)]`` the features of a row in the class's coordinates
(``d = rank (+1)`` columns, far fewer than the dictionary's m when K_D is numerically
low-rank):

* e_orig: ``Σ w_i φ_i φ_i'``, ``Σ w_i r_i φ_i`` over the distinct rows (Φ, kept; weights summed
  over copies).
* exact e_switch of a group, for a kernel that factorises, ``k = k₁(x1, d₁)·k₂(x2, d₂)``: with
  the distinct values u of X1 and v of X2 (counts ``c_u = Σ_{i: x1_i = u} w_i``, ``c_v``, and
  ``s_v = Σ_{j: x2_j = v} w_j r_j``), the ordered pairs of distinct positions give

      Σ_{u,v} c_u c_v φ_uv φ_uv' − Σ_i w_i φ_i φ_i',   Σ_{u,v} c_u s_v φ_uv − Σ_i w_i r_i φ_i,

  with ``φ_uv = φ((u, v))``. When the switched pairs are few (binary or coded features: n_u·n_v
  small) the φ_uv are built once ("pairs", n_u·n_v·d² per weighting, the diagonal taken out of the
  pair weights, and one Gram shared by a group and its complement); otherwise the Hadamard
  identity ``Σ c_u c_v (a_u∘b_v)(a_u∘b_v)' = (A'C_uA)∘(B'C_vB)`` is used in the dictionary's
  coordinates ("hadamard", (n_u + n_v)·m² per weighting, m × m memory; a group and its complement
  share it too).
* the divide estimator's switched rows (n of them) as e_orig on those rows; a kernel that does
  not factorise streams the pairs, O(n²·m) per weighting.

Without a cache nothing is materialised beyond O(block·m + m²) memory (rows in blocks).
"""

from __future__ import annotations

import numpy as np

from .quadratics import Quadratic

__all__ = ["KernelStatistics", "kernel_switch_block", "kernel_switch_from_sums", "kernel_switch_size"]

_BLOCK_BYTES = 64 * 2**20
_PAIR_BYTES = 256 * 2**20  # largest pair-feature matrix kept


def _distinct(Xc: np.ndarray):
    """Distinct rows of ``Xc`` and each row's index among them (one row when Xc has no columns).

    When fewer than half the rows repeat, the rows themselves are returned in their order.
    """
    if Xc.shape[1] == 0:
        return Xc[:1], np.zeros(len(Xc), dtype=np.intp)
    U, inv = np.unique(Xc, axis=0, return_inverse=True)
    if 2 * len(U) > len(Xc):
        return Xc, np.arange(len(Xc))
    return U, np.asarray(inv).ravel()


def _gram(F: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``F' diag(w) F``; as ``S'S`` with ``S = diag(√w) F`` (a symmetric rank-k product, half the work) when
    w >= 0."""
    if np.all(w >= 0):
        S = F * np.sqrt(w)[:, None]
        return S.T @ S
    return F.T @ (F * w[:, None])


def choose_mode(nu: int, nv: int, m: int, d: int) -> str:
    """ "pairs" when the n_u·n_v switched pairs cost less per weighting than the Hadamard route (and fit in
    memory), else "hadamard"."""
    pairs_cost, had_cost = nu * nv * d * d, (nu + nv) * m * m + m * m * d + m * d * d
    return "pairs" if pairs_cost <= had_cost and 8 * nu * nv * d <= _PAIR_BYTES else "hadamard"


class KernelStatistics:
    """The pieces of e_orig and e_switch of one kernel parametrisation on fixed rows (X, y).

    Parameters
    ----------
    par : KernelParametrization
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
    keep : bool
        Materialise Φ and the per-group pieces (a cache across weightings); False streams
        rows in blocks and keeps nothing.
    """

    def __init__(self, par, X: np.ndarray, y: np.ndarray, keep: bool = True):
        self.par, self.X, self.res, self.keep = par, X, np.asarray(y, dtype=float) - par.mu, keep
        self._rows, self._inv = _distinct(X)  # Φ is built on the distinct rows
        self._phi: np.ndarray | None = None
        self._groups: dict = {}
        self._memo: tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray] | None] = (None, None)
        self._gram: tuple = (None, None, None)  # (partition, w, pair Gram): complementary groups share it

    # ------------------------------------------------------------------ features
    def features(self, K: np.ndarray) -> np.ndarray:
        """θ-space features of kernel rows K (shape (k, m)): ``[1?, K W]``."""
        F = K @ self.par.W
        return np.hstack([np.ones((len(K), 1)), F]) if self.par.free else F

    def _block(self) -> int:
        return max(1, int(_BLOCK_BYTES // (8 * max(self.par.D.shape[0], 1) * 3)))

    def _phi_blocks(self):
        """Features of the distinct rows, in blocks (one kept block with a cache)."""
        if self._phi is not None:
            yield slice(0, len(self._rows)), self._phi
            return
        n = len(self._rows)
        bs = n if self.keep else self._block()
        for s in range(0, n, bs):
            sl = slice(s, min(n, s + bs))
            F = self.features(self.par.kernel_matrix(self._rows[sl]))
            if self.keep:
                self._phi = F
            yield sl, F

    def diagonal(self, w: np.ndarray):
        """``(Σ w_i φ_i φ_i', Σ w_i r_i φ_i)``; the last weighting's value is remembered."""
        if self._memo[0] is not None and np.array_equal(self._memo[0], w):
            return self._memo[1]
        d, nr = self.par.dim, len(self._rows)
        cw = np.bincount(self._inv, weights=w, minlength=nr)
        cr = np.bincount(self._inv, weights=w * self.res, minlength=nr)
        G, g = np.zeros((d, d)), np.zeros(d)
        for sl, F in self._phi_blocks():
            G += _gram(F, cw[sl])
            g += F.T @ cr[sl]
        self._memo = (w.copy(), (G, g))
        return G, g

    def seed_diagonal(self, other: KernelStatistics) -> None:
        """Take the remembered diagonal sums of ``other`` (the same rows, streamed) as this one's."""
        if other._memo[0] is not None:
            self._memo = other._memo

    # ------------------------------------------------------------------ forms
    def _weights(self, w):
        return np.ones(len(self.res)) if w is None else np.asarray(w, dtype=float)

    def e_orig(self, w: np.ndarray | None = None) -> Quadratic:
        """``Σ w_i (y_i − f_θ(x_i))² / Σ w_i`` as a quadratic in θ."""
        w = self._weights(w)
        nw = float(w.sum())
        G, g = self.diagonal(w)
        return Quadratic(G / nw, g / nw, float(w @ (self.res * self.res)) / nw)

    def e_switch(self, group: tuple[int, ...], w: np.ndarray | None = None) -> Quadratic:
        """The all-pairs (or divide) e_switch of ``group`` under weights w."""
        w = self._weights(w)
        pieces = self._groups.get(tuple(group))
        if pieces is None:
            pieces = self._pieces(tuple(group))
            if self.keep:
                self._groups[tuple(group)] = pieces
        mode = pieces["mode"]
        if mode == "divide":
            return self._divide(pieces, w)
        nw = float(w.sum())
        nn = nw * (nw - 1)
        if mode == "pairs":  # the diagonal is removed in the pair weights
            G, g = self._pairs(pieces, w)
        else:
            G, g = self._hadamard(pieces, w, nw) if mode == "hadamard" else self._streamed(pieces, w)
            G0, g0 = self.diagonal(w)
            G, g = G - G0, g - g0
        k1 = (nw - 1) * float(w @ (self.res * self.res)) / nn
        return Quadratic(G / nn, g / nn, k1)

    # ------------------------------------------------------------------ per-group pieces
    def _pieces(self, group: tuple[int, ...]) -> dict:
        par, X = self.par, self.X
        D, gamma, m, d = par.D, par.gamma, par.D.shape[0], par.dim
        g = np.asarray(group, dtype=int)
        rest = np.setdiff1d(np.arange(X.shape[1]), g)
        k = par.mc._k
        if par.mc.e_switch == "divide":
            h = len(X) // 2
            Xs = np.vstack([X[:h].copy(), X[h : 2 * h].copy()])
            Xs[:h, g], Xs[h:, g] = X[h : 2 * h][:, g], X[:h][:, g]
            pos = np.r_[np.arange(h), np.arange(h, 2 * h)]
            return {
                "mode": "divide",
                "F": self.features(par.kernel_matrix(Xs)),
                "pos": pos,
                "res": np.r_[self.res[:h], self.res[h : 2 * h]],
            }
        if callable(par.mc.kernel) or g.size == 0:
            return {"mode": "streamed", "g": g}
        part = frozenset((tuple(g), tuple(rest)))
        for other in self._groups.values():  # the complementary group switches the same pairs
            if other.get("part") == part and other["mode"] == "pairs":
                return dict(other, swap=not other["swap"])
            if other.get("part") == part and other["mode"] == "hadamard":  # the same Gram, the sides exchanged
                swapped = {"A": other["B"], "B": other["A"], "inv1": other["inv2"], "inv2": other["inv1"]}
                return dict(other, nu=other["nv"], nv=other["nu"], swap=not other["swap"], **swapped)
        U1, inv1 = _distinct(X[:, g])
        U2, inv2 = _distinct(X[:, rest])
        A = k(U1, D[:, g], gamma)
        B = k(U2, D[:, rest], gamma) if rest.size else np.ones((1, m))
        nu, nv = len(U1), len(U2)
        base = {"inv1": inv1, "inv2": inv2, "nu": nu, "nv": nv, "part": part, "swap": False}
        if choose_mode(nu, nv, m, d) == "pairs":
            step = max(1, _BLOCK_BYTES // (8 * nv * m))
            P = np.vstack(
                [self.features((A[s : s + step, None, :] * B[None, :, :]).reshape(-1, m)) for s in range(0, nu, step)]
            )
            return {"mode": "pairs", "P": P, "pos": inv1 * nv + inv2, **base}
        return {"mode": "hadamard", "A": A, "B": B, **base}

    def _pairs(self, pc, w):
        """Pairs of distinct positions by distinct pair ``(u, v)``: weight ``c_u·c_v`` less the rows'
        own ``Σ_{i ∈ (u, v)} w_i`` (exact for counts), so one Gram gives the differenced sum.

        The complementary group (X1 and X2 exchanged) has the same pairs and weights, so it shares
        the Gram; only the linear term changes (residuals summed over the non-switched side).
        """
        nu, nv, pos = pc["nu"], pc["nv"], pc["pos"]
        cu = np.bincount(pc["inv1"], weights=w, minlength=nu)
        cv = np.bincount(pc["inv2"], weights=w, minlength=nv)
        wr = w * self.res
        if pc["swap"]:  # the switched side is the v side
            lin = np.outer(np.bincount(pc["inv1"], weights=wr, minlength=nu), cv).ravel()
        else:
            lin = np.outer(cu, np.bincount(pc["inv2"], weights=wr, minlength=nv)).ravel()
        lin -= np.bincount(pos, weights=wr, minlength=nu * nv)
        P = pc["P"]
        g = P.T @ lin
        part, w0, G = self._gram
        if part == pc["part"] and np.array_equal(w0, w):
            return G, g
        om = np.outer(cu, cv).ravel() - np.bincount(pos, weights=w, minlength=nu * nv)
        G = np.zeros((P.shape[1],) * 2)
        for sel, sign in ((om > 0, 1.0), (om < 0, -1.0)):  # none negative for counts (w_i = 0 or >= 1)
            if sel.any():
                S = P[sel] * np.sqrt(sign * om[sel])[:, None]
                G += sign * (S.T @ S)
        self._gram = (pc["part"], w.copy(), G)
        return G, g

    def _hadamard(self, pc, w, nw):
        par = self.par
        W, A, B = par.W, pc["A"], pc["B"]
        cu = np.bincount(pc["inv1"], weights=w, minlength=pc["nu"])
        cv = np.bincount(pc["inv2"], weights=w, minlength=pc["nv"])
        sv = np.bincount(pc["inv2"], weights=w * self.res, minlength=pc["nv"])
        a1, b1 = A.T @ cu, B.T @ cv
        part, w0, Gk = self._gram
        if not (part == ("hadamard", pc["part"]) and np.array_equal(w0, w)):  # the complement's Gram is the same
            H = _gram(A, cu) * _gram(B, cv)
            Gk = W.T @ H @ W
            self._gram = (("hadamard", pc["part"]), w.copy(), Gk)
        gk = W.T @ (a1 * (B.T @ sv))
        if not par.free:
            return Gk, gk
        h1 = W.T @ (a1 * b1)
        G = np.block([[np.full((1, 1), nw * nw), h1[None]], [h1[:, None], Gk]])
        return G, np.r_[nw * float(w @ self.res), gk]

    def _streamed(self, pc, w):
        """Pairs row by row (a kernel that does not factorise): row i's switched block against every row."""
        X, g, d = self.X, pc["g"], self.par.dim
        G, gv = np.zeros((d, d)), np.zeros(d)
        for i in np.flatnonzero(w):
            Z = X.copy()
            Z[:, g] = X[i, g]
            F = self.features(self.par.kernel_matrix(Z))
            wz = w * w[i]  # pair (i, i) included: the diagonal is removed with the others' (e_switch)
            G += F.T @ (F * wz[:, None])
            gv += F.T @ (wz * self.res)
        return G, gv

    def _divide(self, pc, w):
        ws = w[pc["pos"]]
        F, rs = pc["F"], pc["res"]
        cnt = float(ws.sum())
        Fw = F * ws[:, None]
        return Quadratic(F.T @ Fw / cnt, Fw.T @ rs / cnt, float(ws @ (rs * rs)) / cnt)


# ---------------------------------------------------------------------- block reductions (rows never held at once)
def kernel_switch_size(m: int, d: int) -> int:
    """Length of one stratum's packed :func:`kernel_switch_block` sums.

    Parameters
    ----------
    m : int
        Number of dictionary points.
    d : int
        Dimension of θ in the class's coordinates.

    Returns
    -------
    int
        ``3 + 2m² + 3m + d² + d``.
    """
    return 3 + 2 * m * m + 3 * m + d * d + d


def kernel_switch_block(par, X: np.ndarray, res: np.ndarray, w: np.ndarray, group, codes=None, n_levels: int = 1):
    """The additive pieces of the exact e_switch of ``group`` on one block of rows, per stratum.

    For a kernel that factorises, ``k = k₁(x1, d₁)·k₂(x2, d₂)``, with ``a_i = k₁(x1_i, D₁)`` and
    ``b_i = k₂(x2_i, D₂)`` every piece of the Hadamard route is a weighted row sum: ``Σ w a a'``,
    ``Σ w b b'``, ``Σ w a``, ``Σ w b``, ``Σ w r b``, and the diagonal ``Σ w φφ'``, ``Σ w r φ``, with Σw,
    Σ w r, Σ w r² (r = y - μ). Blocks of rows add, so a sum over partitions (a Dask reduction) gives
    the whole rows' pieces; :func:`kernel_switch_from_sums` turns them into the quadratic. Shape
    ``(n_levels, kernel_switch_size(m, d))``; ``codes`` (integers in ``[0, n_levels)``) splits the rows by
    stratum. Memory O(block·m + m²) (rows taken in sub-blocks).

    Parameters
    ----------
    par : parametrisation of :class:`~rashomon.KernelModelClass`
        The fitted class's pieces (dictionary, bandwidth, feature map).
    X : ndarray of shape (n_block, p)
        The block's rows.
    res : ndarray of shape (n_block,)
        The rows' centred targets ``r = y - μ``.
    w : ndarray of shape (n_block,)
        The rows' weights.
    group : sequence of int
        The switched columns.
    codes : ndarray of shape (n_block,) of int, default=None
        The rows' strata (all in stratum 0 when None).
    n_levels : int, default=1
        Number of strata.

    Returns
    -------
    ndarray of shape (n_levels, kernel_switch_size(m, d))
        The packed sums of each stratum.
    """
    D, gamma, m, d = par.D, par.gamma, par.D.shape[0], par.dim
    g = np.asarray(group, dtype=int)
    rest = np.setdiff1d(np.arange(D.shape[1]), g)
    k = par.mc._k
    out = np.zeros((n_levels, kernel_switch_size(m, d)))
    step = max(1, int(_BLOCK_BYTES // (8 * max(m, 1) * 4)))
    for s in range(0, len(res), step):
        sl = slice(s, s + step)
        xb, rb, wb = X[sl], res[sl], w[sl]
        A = k(xb[:, g], D[:, g], gamma)
        B = k(xb[:, rest], D[:, rest], gamma) if rest.size else np.ones((len(xb), m))
        K = par.kernel_matrix(xb)
        F = np.hstack([np.ones((len(xb), 1)), K]) @ par.T if par.free else K @ par.W
        cb = np.zeros(len(xb), dtype=np.intp) if codes is None else np.asarray(codes[sl], dtype=np.intp)
        for lev in np.unique(cb):
            ws = np.where(cb == lev, wb, 0.0)
            wr = ws * rb
            out[lev] += np.concatenate(
                [
                    [ws.sum(), wr.sum(), wr @ rb],
                    (A.T @ (A * ws[:, None])).ravel(),
                    (B.T @ (B * ws[:, None])).ravel(),
                    A.T @ ws,
                    B.T @ ws,
                    B.T @ wr,
                    (F.T @ (F * ws[:, None])).ravel(),
                    F.T @ wr,
                ]
            )
    return out


def kernel_switch_from_sums(par, sums: np.ndarray) -> tuple[float, Quadratic | None]:
    """``(Σw, e_switch)`` of one stratum from its summed :func:`kernel_switch_block` pieces.

    Parameters
    ----------
    par : parametrisation of :class:`~rashomon.KernelModelClass`
        The fitted class's pieces, as given to :func:`kernel_switch_block`.
    sums : ndarray of shape (kernel_switch_size(m, d),)
        One stratum's pieces summed over every block of rows.

    Returns
    -------
    sum_w : float
        The stratum's total weight.
    e_switch : Quadratic or None
        The exact all-pairs e_switch of the group as a quadratic in θ; None below two rows.
    """
    m, d, W, free = par.D.shape[0], par.dim, par.W, par.free
    nw, swr, swr2 = (float(v) for v in sums[:3])
    if nw < 2:
        return nw, None
    o = 3
    AA = sums[o : o + m * m].reshape(m, m)
    BB = sums[o + m * m : o + 2 * m * m].reshape(m, m)
    o += 2 * m * m
    a1, b1, bs = sums[o : o + m], sums[o + m : o + 2 * m], sums[o + 2 * m : o + 3 * m]
    o += 3 * m
    G0, g0 = sums[o : o + d * d].reshape(d, d), sums[o + d * d : o + d * d + d]
    G, g = W.T @ (AA * BB) @ W, W.T @ (a1 * bs)
    if free:
        h1 = W.T @ (a1 * b1)
        G = np.block([[np.full((1, 1), nw * nw), h1[None]], [h1[:, None], G]])
        g = np.r_[nw * swr, g]
    nn = nw * (nw - 1)
    return nw, Quadratic((G - G0) / nn, (g - g0) / nn, (nw - 1) * swr2 / nn)
