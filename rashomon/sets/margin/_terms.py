"""e_orig and the exact all-pairs e_switch of a linear classifier as margin-loss sums.

Scores are ``d'θ`` with the class's design rows d (intercept, standardised
features). The switched row of the pair (i, j), i ≠ j, takes the group's values from
row i and everything else from row j: its score is ``a_j + b_i`` with
``a = D_rest θ_rest`` and ``b = D_group θ_group``. Over the V distinct values of the
group with weights ``W_vj = #{i ≠ j : x1_i = v}/(n(n-1))`` every quantity the solvers
need is a V × m array operation, no pair loop and no n² design (rows j with the same rest of the
design and label are one column: m <= n row classes, their weights summed): the value, the gradient
(two matrix-vector products) and the Hessian (a weighted Gram in three blocks,
``D_rest' diag(K 1) D_rest``, ``G' diag(K' 1) G`` and ``G' K D_rest``), accumulated over blocks
of values so that memory stays bounded when V is large (a continuous feature: V ≈ n).

The same Gram with per-row curvatures builds the quadratic minorants / majorants of
the two losses used by the certified outer bounds (:mod:`._bounds`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ...model_classes import Quadratic

__all__ = ["MarginTerms", "orig_quadratic", "unique_rows"]

_BLOCK = 1 << 16  # pairs per block of the switched sums (512 KiB per float array: 2-3x faster elementwise
# loss evaluation than 4 MiB blocks here, which allocate fresh pages for every temporary)
_ROWS = 1 << 16  # rows above which the Hessian of e_orig is summed in blocks of this many rows
_MEMO = 32  # e_switch values kept per terms object (MarginTerms.e_switch)
_KEEP = 1 << 22  # the pair weights are kept (32 MiB at most) when V·n is at most this, else rebuilt per block


_FAR = 36.0  # |c - m| >= 36 s: ℓ = max(0, c - m) + O(s·e^-36), ℓ' in {0, -1} and ℓ'' = O(e^-36/s), below rounding
_SHARP = 1e-3  # smoothings this sharp touch only the margins near the kink with transcendental functions


def _sharp(loss, m, order):
    """``(ℓ, ℓ', ℓ'')`` of a sharp smoothing: the kink's neighbourhood exactly, the rest piecewise linear."""
    z = loss.c - m
    idx = np.flatnonzero(np.abs(z) < _FAR * loss.s)
    l0 = np.maximum(z, 0.0)
    if order == 0 and not idx.size:
        return l0, None, None
    u = z.ravel()[idx] / loss.s
    e = np.exp(-np.abs(u))
    l0.ravel()[idx] += loss.s * np.log1p(e)
    if order == 0:
        return l0, None, None
    inv = 1.0 / (1.0 + e)
    ei = e * inv
    l1 = -(z > 0).astype(float)
    l1.ravel()[idx] = -np.where(u >= 0, inv, ei)
    l2 = None
    if order > 1:
        l2 = np.zeros(z.shape)
        l2.ravel()[idx] = ei * inv / loss.s
    return l0, l1, l2


def _derivs(loss, m, order=2):
    """``(ℓ, ℓ', ℓ'')`` of ``s·softplus((c - m)/s)`` with one exponential (ℓ'' is None for ``order=1``)."""
    if loss.s <= _SHARP:
        return _sharp(loss, np.asarray(m, dtype=float), order)
    unit = loss.s == 1.0 and loss.c == 0.0  # the logistic loss: the same bits without the shift and scale
    u = np.negative(m) if unit else (loss.c - m) / loss.s
    e = np.abs(u)  # in place from here: exp(-|u|), 1/(1 + e), ... (fewer temporaries of the pairs' size)
    np.negative(e, out=e)
    np.exp(e, out=e)
    inv = 1.0 + e
    np.divide(1.0, inv, out=inv)
    ei = e * inv  # σ(-|u|)
    p = np.where(u >= 0, inv, ei)  # σ(u)
    np.negative(p, out=p)
    l2 = None
    if order > 1:
        l2 = np.multiply(ei, inv, out=ei)  # σ(u)σ(-u)/s
        if not unit:
            l2 /= loss.s
    np.log1p(e, out=e)
    l0 = np.maximum(u, 0.0)
    l0 += e
    if not unit:
        l0 *= loss.s
    return l0, p, l2


def _value(loss, m):
    if loss.s <= _SHARP:
        return _sharp(loss, np.asarray(m, dtype=float), 0)[0]
    u = (loss.c - m) / loss.s
    return loss.s * (np.maximum(u, 0.0) + np.log1p(np.exp(-np.abs(u))))


def orig_quadratic(D, y, w, theta0, loss, curv, offset=0.0) -> Quadratic:
    """``Σ w_i [ℓ(m0_i) + ℓ'(m0_i)(m_i - m0_i) + curv_i/2 (m_i - m0_i)²] - offset`` as a Quadratic in θ
    (margins ``m_i = y_i d_i'θ``, expansion at θ0)."""
    m0 = y * (D @ theta0)
    l0, l1, _ = _derivs(loss, m0)
    Q = 0.5 * (D.T * (w * curv)) @ D
    c = -0.5 * D.T @ (w * (l1 - curv * m0) * y)
    k = float(w @ (l0 - l1 * m0 + 0.5 * curv * m0 * m0)) - offset
    return Quadratic(0.5 * (Q + Q.T), c, k)


def unique_rows(A: np.ndarray):
    """``np.unique(A, axis=0, return_inverse=True, return_counts=True)`` (the same rows, order and classes) with
    O(n) memory besides A: one stable lexicographic sort of the rows and comparisons of neighbours in blocks (the
    axis form copies A several times: about 0.9 GB of temporaries at 10^6 x 21)."""
    A = np.asarray(A, dtype=float)
    n = A.shape[0]
    if n == 0 or A.ndim != 2 or A.shape[1] == 0:
        return np.unique(A, axis=0, return_inverse=True, return_counts=True)
    order = np.lexsort(A.T[::-1]) if A.shape[1] > 1 else np.argsort(A[:, 0], kind="stable")
    new = np.ones(n, dtype=bool)
    step = max(1, _BLOCK // A.shape[1])
    for a in range(1, n, step):
        b = min(a + step, n)
        new[a:b] = np.any(A[order[a:b]] != A[order[a - 1 : b - 1]], axis=1)
    starts = np.flatnonzero(new)
    inv = np.empty(n, dtype=np.intp)
    inv[order] = np.cumsum(new) - 1
    counts = np.diff(np.append(starts, n))
    return A[order[starts]], inv, counts


class MarginTerms:
    """The e_orig rows and the switched pairs of one feature group (see the module docstring).

    Parameters
    ----------
    D : ndarray of shape (n, d)
        Design rows of the class (``par.design(X)``).
    y : ndarray of shape (n,)
        Labels ±1.
    group : ndarray of int
        Coordinates of θ belonging to the switched group.
    """

    def __init__(self, D: np.ndarray, y: np.ndarray, group):
        n, d = D.shape
        self.D, self.y, self.n, self.d = D, y, n, d
        self.gi = np.asarray(group, dtype=int)
        self.ri = np.setdiff1d(np.arange(d), self.gi)
        vals, inv, counts = unique_rows(D[:, self.gi])
        self.G, self._inv, self._counts = vals, inv.ravel(), counts.astype(float)
        # rows sharing (rest of the design, label) share every switched pair: the pairs are summed over
        # these classes (Dr, ys: one row each) with the class sizes in the weights -- exact, and 5-14x fewer
        # pairs for COMPAS's priors and age
        rest, cls, size = unique_rows(np.column_stack([D[:, self.ri], y]))
        self.Dr, self.ys, self._cls, self._size = rest[:, :-1], rest[:, -1], cls.ravel(), size.astype(float)
        self._scale = 1.0 / (n * (n - 1.0))
        m = len(self.ys)
        step = max(1, _BLOCK // max(m, 1))  # rows of G per block: bounded memory whatever V
        self._blocks = [slice(a, min(a + step, len(vals))) for a in range(0, len(vals), step)]
        # the weights of every block are kept when they fit in a few blocks' memory, else rebuilt per use
        self._wkeep = [self._weights(sl) for sl in self._blocks] if len(vals) * m <= _KEEP else None

    def switch_is_orig(self) -> bool:
        """True when e_switch and e_orig are the same function of θ: the group's values and the row classes
        are exactly independent in the sample (``n·#{rows of class c with value v} = |c|·#{rows with value v}``
        for every v and c, in integers), so every switched pair's weight is that of an original row with
        the same design and label (a full factorial design; MR is then 1 for every model)."""
        V, m = len(self.G), len(self.ys)
        cells, cnt = np.unique(self._inv * m + self._cls, return_counts=True)
        if len(cells) != V * m:
            return False
        need = self._counts.astype(np.int64)[cells // m] * self._size.astype(np.int64)[cells % m]
        return bool(np.array_equal(cnt.astype(np.int64) * self.n, need))

    @property
    def W(self) -> np.ndarray:
        """The pair weights, shape (V, m) over the row classes (materialised on demand; the solvers work block by
        block): ``W_vc = #{(i, j) : i ≠ j, x1_i = v, row j in class c}/(n(n-1))``."""
        return self._weights(slice(0, len(self.G)))

    def _weights(self, sl: slice) -> np.ndarray:
        W = self._counts[sl, None] * self._size[None, :]
        own = (self._inv >= sl.start) & (self._inv < sl.stop)  # pairs (j, j) excluded: row j's own value
        np.subtract.at(W, (self._inv[own] - sl.start, self._cls[own]), 1.0)
        return W * self._scale

    # ------------------------------------------------------------------ scores
    def switched_scores(self, theta: np.ndarray) -> np.ndarray:
        """Scores of the switched pairs, shape (V, m): one column per row class (labels ``ys``)."""
        return (self.G @ theta[self.gi])[:, None] + (self.Dr @ theta[self.ri])[None, :]

    def _switched_blocks(self, theta: np.ndarray):
        """``(slice, W, M)`` per block of G: weights and switched margins (bounded memory)."""
        a, b = self.Dr @ theta[self.ri], self.G @ theta[self.gi]
        for k, sl in enumerate(self._blocks):
            W = self._weights(sl) if self._wkeep is None else self._wkeep[k]
            yield sl, W, (b[sl, None] + a[None, :]) * self.ys[None, :]

    def e_orig(self, theta: np.ndarray, loss, exact: bool = True) -> float:
        m = self.y * (self.D @ theta)
        return float(np.mean(loss.exact(m) if exact else _value(loss, m)))

    def e_switch(self, theta: np.ndarray, loss, exact: bool = True) -> float:
        # the last few values are kept: one MCR asks for the same members' e_switch from its searches and its
        # candidates (Pima, DiabetesPedigreeFunction: 30 calls, 19 distinct θ, 4 ms each on 517 x 768 pairs)
        key = (np.asarray(theta, dtype=float).tobytes(), loss, bool(exact))
        memo = self.__dict__.setdefault("_es_memo", {})
        if key not in memo:
            if len(memo) >= _MEMO:
                memo.pop(next(iter(memo)))
            f = loss.exact if exact else (lambda M: _value(loss, M))
            memo[key] = float(sum(np.sum(W * f(M)) for _, W, M in self._switched_blocks(theta)))
        return memo[key]

    # ------------------------------------------------------------------ derivatives
    def orig_parts(self, theta, loss, order):
        m = self.y * (self.D @ theta)
        if order == 0:
            return (float(np.mean(_value(loss, m))),)
        l0, l1, l2 = _derivs(loss, m)
        f, g = float(l0.mean()), self.D.T @ (l1 * self.y) / self.n
        if order == 1:
            return f, g
        if self.n <= _ROWS:
            return f, g, (self.D.T * (l2 / self.n)) @ self.D
        w, H = l2 / self.n, np.zeros((self.d, self.d))
        for a in range(0, self.n, _ROWS):  # in row blocks: no n x d temporary (168 MB at 10^6 x 21)
            H += (self.D[a : a + _ROWS].T * w[a : a + _ROWS]) @ self.D[a : a + _ROWS]
        return f, g, H

    def switch_parts(self, theta, loss, order, need_value=True):
        """``(value,)``, ``(value, gradient)`` or ``(value, gradient, Hessian)`` of the smooth e_switch, block by
        block over the distinct values of the group (one pass of the loss per pair)."""
        f, V = 0.0, len(self.G)
        if order:
            col, row = np.zeros(len(self.ys)), np.empty(V)
        if order > 1:
            kcol, krow, cross = np.zeros(len(self.ys)), np.empty(V), np.zeros((len(self.gi), len(self.ri)))
        for sl, W, M in self._switched_blocks(theta):
            if order == 0:
                f += float(np.sum(W * _value(loss, M)))
                continue
            l0, l1, l2 = _derivs(loss, M, order)
            f += float(np.sum(W * l0))
            T = W * l1 * self.ys[None, :]
            col += T.sum(axis=0)
            row[sl] = T.sum(axis=1)
            if order > 1:
                K = W * l2
                kcol += K.sum(axis=0)
                krow[sl] = K.sum(axis=1)
                cross += self.G[sl].T @ (K @ self.Dr)
        if order == 0:
            return (f,)
        g = np.empty(self.d)
        g[self.ri] = self.Dr.T @ col
        g[self.gi] = self.G.T @ row
        if order == 1:
            return f, g
        return f, g, self._assemble(kcol, krow, cross)

    def _assemble(self, kcol, krow, cross) -> np.ndarray:
        H = np.empty((self.d, self.d))
        ri, gi = self.ri, self.gi
        H[np.ix_(ri, ri)] = (self.Dr.T * kcol) @ self.Dr
        H[np.ix_(gi, gi)] = (self.G.T * krow) @ self.G
        H[np.ix_(gi, ri)] = cross
        H[np.ix_(ri, gi)] = cross.T
        return H

    def hinge_dual(self, theta, tau: float, w_orig: float, w_switch: float):
        """``(f, s, g)`` at θ for the hinge with the multipliers ``α_k = σ((1 - m_k)/τ)`` of the smoothed hinge:
        the exact objective ``f = w_orig·e_orig + w_switch·e_switch``, ``s = Σ_k w_k α_k`` and
        ``g = -Σ_k w_k α_k y_k d_k``; ``s + min_{z∈K} g'z`` is a lower bound on the exact-hinge minimum over K
        (weak duality, :mod:`._solve`)."""

        def parts(M):
            return np.maximum(0.0, 1.0 - M), expit((1.0 - M) / tau)

        f = s = 0.0
        g = np.zeros(self.d)
        if w_orig:
            hv, al = parts(self.y * (self.D @ theta))
            f, s = w_orig * float(hv.mean()), w_orig * float(al.mean())
            g -= (w_orig / self.n) * (self.D.T @ (al * self.y))
        if w_switch:
            col, row = np.zeros(len(self.ys)), np.empty(len(self.G))
            for sl, W, M in self._switched_blocks(theta):
                hv, al = parts(M)
                f += w_switch * float(np.sum(W * hv))
                T = W * al
                s += w_switch * float(T.sum())
                T *= self.ys[None, :]
                col += T.sum(axis=0)
                row[sl] = T.sum(axis=1)
            g[self.ri] -= w_switch * (self.Dr.T @ col)
            g[self.gi] -= w_switch * (self.G.T @ row)
        return f, s, g

    def gram(self, K: np.ndarray) -> np.ndarray:
        """``Σ_vj K_vj d_vj d_vj'`` over the switched rows d_vj = (group: G_v, rest: D_j)."""
        H = np.empty((self.d, self.d))
        ri, gi = self.ri, self.gi
        H[np.ix_(ri, ri)] = (self.Dr.T * K.sum(axis=0)) @ self.Dr
        H[np.ix_(gi, gi)] = (self.G.T * K.sum(axis=1)) @ self.G
        cross = self.G.T @ (K @ self.Dr)
        H[np.ix_(gi, ri)] = cross
        H[np.ix_(ri, gi)] = cross.T
        return H

    def oracle(self, loss, w_orig: float, w_switch: float, lin: np.ndarray | None = None):
        """``f(θ) = w_orig·e_orig + w_switch·e_switch (+ lin'θ)`` (smooth loss) as a solver oracle."""

        def f(theta, order):
            out: list = [0.0, np.zeros(self.d), np.zeros((self.d, self.d))][: order + 1]
            for w, parts in ((w_orig, self.orig_parts), (w_switch, self.switch_parts)):
                if w == 0:
                    continue
                for k, v in enumerate(parts(theta, loss, order)):
                    out[k] = out[k] + w * v
            if lin is not None:
                out[0] = out[0] + float(lin @ theta)
                if order:
                    out[1] = out[1] + lin
            return tuple(out)

        return f

    # ------------------------------------------------------------------ surrogates
    def switch_quadratic(self, theta0, loss, curv, offset=0.0) -> Quadratic:
        """Tangent quadratic of e_switch at θ0 with per-pair curvature ``curv`` (V × m), minus ``offset``."""
        M0 = self.switched_scores(theta0) * self.ys[None, :]
        l0, l1, _ = _derivs(loss, M0)
        W = self.W
        Q = 0.5 * self.gram(W * curv)
        T = W * (l1 - curv * M0) * self.ys[None, :]
        c = np.empty(self.d)
        c[self.ri] = -0.5 * self.Dr.T @ T.sum(axis=0)
        c[self.gi] = -0.5 * self.G.T @ T.sum(axis=1)
        k = float(np.sum(W * (l0 - l1 * M0 + 0.5 * curv * M0 * M0))) - offset
        return Quadratic(0.5 * (Q + Q.T), c, k)

    def switch_halfwidth(self, P: np.ndarray) -> np.ndarray:
        """``d_vj' P d_vj`` for every switched row (P symmetric d × d), shape (V, m)."""
        ri, gi = self.ri, self.gi
        qa = np.einsum("ij,jk,ik->i", self.Dr, P[np.ix_(ri, ri)], self.Dr)
        qb = np.einsum("ij,jk,ik->i", self.G, P[np.ix_(gi, gi)], self.G)
        cross = (self.G @ P[np.ix_(gi, ri)]) @ self.Dr.T
        return np.maximum(qb[:, None] + qa[None, :] + 2 * cross, 0.0)
