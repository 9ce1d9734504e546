"""The row envelopes of the slab bound (:mod:`._secant`): each row's switched part on a fine grid of the tabulated
per-label functions, and (logistic) the pieces in the rest margins, by blocks of rows on large sets.

Proofs in :mod:`._secant` ((iii) and (iii')). On large sets (``SecantBound.lean``) the rows are taken in blocks of
``ROW_BLOCK``: the rows' pieces are independent of each other, and the fine grid of each (slab end, label) is laid
first over every block's switched margins, so every block reads the same grid (the bits do not depend on the blocks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._slabs import ROW_BLOCK, logistic_loss, upper_hull

__all__ = ["RowEnvelopes"]

_PAD = 1e-12
_HINGE_ELEM = 0.55  # work per hinge loss evaluation (the unit: one logistic loss evaluation, ~25 ns here)


class RowEnvelopes:
    """The envelope pieces of :class:`._secant.SecantBound` (its attributes: rows, grids, caches, work)."""

    # set by SecantBound.__init__
    n: int
    y: np.ndarray
    g: np.ndarray
    G: np.ndarray
    cnt: np.ndarray
    fine: int
    grid: int
    work: float
    hinge: bool
    lean: bool
    lossv: Any
    R: Any
    Cr: Any
    _fcache: dict

    def _ranges(self, C, a, b, ilo=None, ihi=None):  # SecantBound's
        raise NotImplementedError

    def _switch_part(self, M, b, sl=slice(None)):
        """Upper bound at M (n × K) on ``Σ_v cnt_v ℓ(m + y_j (G_v - g_j) b)/(n - 1)``, every value of the group
        included (the row's own value's term ``ℓ(m)/(n - 1)`` is subtracted exactly in :meth:`pieces`). For the
        rows of label s it is ``F_s(m - s g_j b)/(n - 1)`` with ``F_s(z) = Σ_v cnt_v ℓ(z + s G_v b)``, convex in z,
        replaced by its linear interpolation on one fine grid per label (>= F_s on the grid's span): each row's
        bound is convex and piecewise linear in m. The grid of each (b, label) is kept and reused while it spans
        the margins asked for (slab ends are shared by neighbouring slabs and by the multiplier pairs)."""
        out = np.empty_like(M)
        y, g = self.y[sl], self.g[sl]  # the rows of M (a block of rows where the bound is lean)
        for s in (1.0, -1.0):
            rows = y == s
            if not rows.any():
                continue
            Z = M[rows] - (s * b) * g[rows, None]
            zf, vals = self._fine_grid(b, s, float(Z.min()), float(Z.max()))
            self.work += 2.0 * Z.size
            out[rows] = np.interp(Z, zf, vals) / (self.n - 1.0)
        return out

    def _fine_grid(self, b, s, z0, z1):
        """The fine grid of F_s at b and its values, kept per (b, s) and widened when [z0, z1] leaves it."""
        zf, vals = self._fcache.get((b, s), (None, None))
        if zf is None or z0 < zf[0] or z1 > zf[-1]:
            if zf is not None:  # widen to cover both the old span and the new one
                z0, z1 = min(z0, float(zf[0])), max(z1, float(zf[-1]))
            zf = np.linspace(z0, z1, self.fine) if z1 > z0 else np.array([z0, z0 + 1.0])
            Z = zf[None, :] + (s * b) * self.G[:, None]
            vals = self.cnt @ (self.lossv(Z) if self.hinge else logistic_loss(Z))  # the same loss, faster
            self.work += len(self.G) * len(zf) * (_HINGE_ELEM if self.hinge else 1.0)
            self._fcache[(b, s)] = (zf, vals)
        return zf, vals

    def _rest_pieces(self, a, b, own_w, ilo, ihi, end_only):
        """Pieces in the rest margins ``r_j`` (logistic; module docstring, (iii')): the own term's tangent in b
        at the slab's middle b0 makes each row's bound convex in b, and the switched parts are F_s(r_j)."""
        rlo, rhi = self._ranges(self.Cr, a, b, ilo, ihi)
        # r_j = m_j - y_j g_j b with m_j in the set's row range and b in [a, b] (interval arithmetic)
        if np.isfinite(a) and np.isfinite(b):
            yg = self.y * self.g
            rlo = np.maximum(rlo, self.R.lo_o - np.maximum(yg * a, yg * b))
            rhi = np.minimum(rhi, self.R.hi_o - np.minimum(yg * a, yg * b))
        ends = (a, b) if end_only is None else (end_only,)
        if not self.lean:
            return self._rest_block(a, b, own_w, ends, rlo, rhi, slice(None))
        yg, g = self.y * self.g, self.g
        for e in ends:  # the fine grids first, spanning every block's switched margins (no widening between blocks)
            for s in (1.0, -1.0):
                rows = self.y == s
                if rows.any():  # Z is nondecreasing along a row's grid: its least and largest at the two ends
                    z_lo = (rlo[rows] + (yg[rows] * e)) - (s * e) * g[rows]
                    z_hi = (rlo[rows] + np.maximum(rhi[rows] - rlo[rows], 0.0) + (yg[rows] * e)) - (s * e) * g[rows]
                    self._fine_grid(e, s, float(z_lo.min()), float(z_hi.max()))
        out = tuple(np.empty((self.n, self.grid - 1)) for _ in range(3))  # filled block by block: no second copy
        for r in range(0, self.n, ROW_BLOCK):
            part = self._rest_block(
                a, b, own_w, ends, rlo[r : r + ROW_BLOCK], rhi[r : r + ROW_BLOCK], slice(r, r + ROW_BLOCK)
            )
            for o, v in zip(out, part):
                o[r : r + ROW_BLOCK] = v
        return out

    def _rest_block(self, a, b, own_w, ends, rlo, rhi, sl):
        """The pieces of the rows ``sl`` (:meth:`_rest_pieces`)."""
        K, yg = self.grid, self.y[sl] * self.g[sl]
        n = len(rlo)
        w = np.maximum(rhi - rlo, 0.0)
        X = rlo[:, None] + w[:, None] * np.linspace(0.0, 1.0, K)[None, :]
        h = w / (K - 1)
        b0 = 0.5 * (a + b)
        u = X + (yg * b0)[:, None]
        lv, l1 = self.lossv(u), -1.0 / (1.0 + np.exp(np.clip(u, -700, 700)))  # ℓ and ℓ' = -σ(-u)
        # max of ℓ'' on each cell of u: at the point nearest 0; |ℓ'''| <= ℓ'' for the logistic loss
        near = np.clip(0.0, u[:, :-1], u[:, 1:])
        en = np.exp(-np.abs(near))
        l2max = en / (1.0 + en) ** 2
        F: Any = None
        corr = np.zeros((n, K))
        for end in ends:
            delta = (yg * (end - b0))[:, None]
            Fe = self._switch_part(X + (yg * end)[:, None], end, sl) - own_w * (lv + delta * l1)
            F = Fe if F is None else np.maximum(F, Fe)
            cell = own_w * l2max * (1.0 + np.abs(delta)) * (h[:, None] ** 2) / 8.0
            corr[:, :-1] = np.maximum(corr[:, :-1], cell)
            corr[:, 1:] = np.maximum(corr[:, 1:], cell)
        F = F + corr
        F = F + _PAD * (1.0 + np.abs(F))
        return upper_hull(X, F)
