"""e_orig and the exact all-pairs e_switch of a linear classifier as margin-loss sums.

Scores are ``d'θ`` with the class's design rows d (intercept, standardised
features). The switched row of the pair (i, j), i ≠ j, takes the group's values from
row i and everything else from row j: its score is ``a_j + b_i`` with
``a = D_rest θ_rest`` and ``b = D_group θ_group``. Over the V distinct values of the
group with weights ``W_vj = #{i ≠ j : x1_i = v}/(n(n-1))`` every quantity the solvers
need is a V × n array operation (no pair loop, no n² design): the value, the gradient
(two matrix-vector products) and the Hessian (a weighted Gram in three blocks,
``D_rest' diag(K 1) D_rest``, ``G' diag(K' 1) G`` and ``G' K D_rest``).

The same Gram with per-row curvatures builds the quadratic minorants / majorants of
the two losses used by the certified outer bounds (:mod:`._margin_bounds`).
"""
from __future__ import annotations

import numpy as np

from ..model_classes import Quadratic

__all__ = ["MarginTerms", "orig_quadratic"]


def _derivs(loss, m):
    """``(ℓ, ℓ', ℓ'')`` of ``s·softplus((c - m)/s)`` with one exponential."""
    u = (loss.c - m) / loss.s
    e = np.exp(-np.abs(u))
    inv = 1.0 / (1.0 + e)
    p = np.where(u >= 0, inv, e * inv)  # σ(u)
    return loss.s * (np.maximum(u, 0.0) + np.log1p(e)), -p, p * (1.0 - p) / loss.s


def _value(loss, m):
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
        self.Dr = D[:, self.ri]
        vals, inv, counts = np.unique(D[:, self.gi], axis=0, return_inverse=True, return_counts=True)
        inv = inv.ravel()
        self.G = vals
        W = counts[:, None] - (inv[None, :] == np.arange(len(vals))[:, None])
        self.W = W / (n * (n - 1.0))
        self.w_orig = np.full(n, 1.0 / n)

    @property
    def n_pairs(self) -> int:
        return int(self.W.size)

    # ------------------------------------------------------------------ scores
    def switched_scores(self, theta: np.ndarray) -> np.ndarray:
        """Scores of the switched pairs, shape (V, n)."""
        return (self.G @ theta[self.gi])[:, None] + (self.Dr @ theta[self.ri])[None, :]

    def e_orig(self, theta: np.ndarray, loss, exact: bool = True) -> float:
        m = self.y * (self.D @ theta)
        return float(np.mean(loss.exact(m) if exact else _value(loss, m)))

    def e_switch(self, theta: np.ndarray, loss, exact: bool = True) -> float:
        M = self.switched_scores(theta) * self.y[None, :]
        return float(np.sum(self.W * (loss.exact(M) if exact else _value(loss, M))))

    # ------------------------------------------------------------------ derivatives
    def orig_parts(self, theta, loss, order):
        m = self.y * (self.D @ theta)
        if order == 0:
            return (float(np.mean(_value(loss, m))),)
        l0, l1, l2 = _derivs(loss, m)
        f, g = float(l0.mean()), self.D.T @ (l1 * self.y) / self.n
        if order == 1:
            return f, g
        return f, g, (self.D.T * (l2 / self.n)) @ self.D

    def switch_parts(self, theta, loss, order, need_value=True):
        M = self.switched_scores(theta) * self.y[None, :]
        if order == 0:
            return (float(np.sum(self.W * _value(loss, M))),)
        l0, l1, l2 = _derivs(loss, M)
        f = float(np.sum(self.W * l0)) if need_value else np.nan
        T = self.W * l1 * self.y[None, :]
        g = np.empty(self.d)
        g[self.ri] = self.Dr.T @ T.sum(axis=0)
        g[self.gi] = self.G.T @ T.sum(axis=1)
        if order == 1:
            return f, g
        return f, g, self.gram(self.W * l2)

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
            out = [0.0, np.zeros(self.d), np.zeros((self.d, self.d))][: order + 1]
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
        """Tangent quadratic of e_switch at θ0 with per-pair curvature ``curv`` (V × n), minus ``offset``."""
        M0 = self.switched_scores(theta0) * self.y[None, :]
        l0, l1, _ = _derivs(loss, M0)
        Q = 0.5 * self.gram(self.W * curv)
        T = self.W * (l1 - curv * M0) * self.y[None, :]
        c = np.empty(self.d)
        c[self.ri] = -0.5 * self.Dr.T @ T.sum(axis=0)
        c[self.gi] = -0.5 * self.G.T @ T.sum(axis=1)
        k = float(np.sum(self.W * (l0 - l1 * M0 + 0.5 * curv * M0 * M0))) - offset
        return Quadratic(0.5 * (Q + Q.T), c, k)

    def switch_halfwidth(self, P: np.ndarray) -> np.ndarray:
        """``d_vj' P d_vj`` for every switched row (P symmetric d × d), shape (V, n)."""
        ri, gi = self.ri, self.gi
        qa = np.einsum("ij,jk,ik->i", self.Dr, P[np.ix_(ri, ri)], self.Dr)
        qb = np.einsum("ij,jk,ik->i", self.G, P[np.ix_(gi, gi)], self.G)
        cross = (self.G @ P[np.ix_(gi, ri)]) @ self.Dr.T
        return np.maximum(qb[:, None] + qa[None, :] + 2 * cross, 0.0)
