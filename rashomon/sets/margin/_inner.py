"""Members of a logistic set for many rows at once: an inner ellipsoid about every point where the loss is known.

The logistic loss has ``ℓ'' = σ(m)σ(-m) <= 1/4`` everywhere, so at any point θ₀ where the loss L₀ and its gradient
g are known exactly (on every row),

    L(θ₀ + Δ) <= L₀ + g'Δ + ½Δ'HΔ,    H = ¼ Σ_i w_i z_i z_i'  (one matrix for every point).

Its level set at ε is the ellipsoid ``{θ : (θ - c)'H(θ - c) <= ρ²}`` with ``c = θ₀ - H⁻¹g`` and
``ρ² = 2(ε - L₀) + g'H⁻¹g``, inside ``{L <= ε}``: its points in the ball are members of S, found without another
pass over the rows. The least f'θ over it is ``f'c - ρ·sqrt(f'H⁻¹f)``, at ``θ = c - ρ·H⁻¹f / sqrt(f'H⁻¹f)``. Every
row takes the best of all the ellipsoids (one product of the rows with the centres), so each O(n·p) evaluation of
the loss serves every row, not only the row it was made for. The level is lowered by 10⁻⁶ of the slack ε - L(θ_min)
and L₀ raised by its rounding, which covers the rounding of the sums over the rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["InnerPoints", "of_batch"]

_SLACK = 1e-6  # share of the slack ε - e_min the level is lowered by (rounding of L₀, g and the closed form)
_LOSS_ROUNDING = 1e-13  # relative rounding of a computed loss value
_CELLS = 1 << 20  # rows x ellipsoids per block (memory)


class InnerPoints:
    """The inner ellipsoids of a logistic set about the points evaluated so far (see the module docstring).

    Parameters
    ----------
    gram : ndarray of shape (d, d)
        ``Σ_i w_i z_i z_i'`` over the rows (weights summing to 1, as the loss's mean), for H = gram / 4.
    Bt : ndarray of shape (d, d)
        The ball's matrix on θ (zero on the intercept).
    r : float
        The ball's radius: ``θ'Btθ <= r``.
    eps, e_min : float
        The set's loss level and the least loss (its slack sets the rounding allowance).
    o : int
        Number of leading coordinates outside the ball (the intercept).

    Notes
    -----
    Only "the loss and its gradient at a batch of points" is needed (:meth:`add`), so an engine whose rows are
    elsewhere (Dask) can feed it with its own passes; :func:`of_batch` builds it for the in-memory batch.
    """

    def __init__(self, gram, Bt, r: float, eps: float, e_min: float, o: int):
        from scipy.linalg import cho_factor

        H = 0.25 * np.asarray(gram, dtype=float)
        H = 0.5 * (H + H.T)
        try:
            self.chol = cho_factor(H, lower=True)
        except np.linalg.LinAlgError:  # a rank-deficient design: no inner ellipsoids (members come from elsewhere)
            self.chol = None
        self.level = eps - _SLACK * max(eps - e_min, 0.0)
        self.Bt, self.r, self.o = Bt, r, o
        d = len(H)
        self.C, self.rho = np.empty((0, d)), np.empty(0)

    def __len__(self) -> int:
        return len(self.rho)

    def _hinv(self, V: np.ndarray) -> np.ndarray:
        from scipy.linalg import cho_solve

        return cho_solve(self.chol, V.T).T

    def add(self, T0: np.ndarray, L0: np.ndarray, G: np.ndarray) -> None:
        """Keep the ellipsoids about the points T0 (rows) with exact losses L0 and gradients G (NaN rows skipped)."""
        if self.chol is None or not len(T0):
            return
        ok = np.isfinite(L0) & np.isfinite(G).all(1) & np.isfinite(T0).all(1)
        if not ok.any():
            return
        T0, L0, G = T0[ok], L0[ok], G[ok]
        HiG = self._hinv(G)
        Lup = L0 + _LOSS_ROUNDING * np.maximum(np.abs(L0), 1.0)
        rho2 = (2.0 * (self.level - Lup) + (G * HiG).sum(1)) * (1 - 1e-9)
        keep = rho2 > 0
        self.C = np.vstack([self.C, (T0 - HiG)[keep]])
        self.rho = np.concatenate([self.rho, np.sqrt(rho2[keep])])

    def best(self, F: np.ndarray, base: np.ndarray | None = None, start: int = 0):
        """``(value, θ)``: for each row f of F the least f'θ over the ellipsoids and that point, a member of S
        (``inf`` and θ = 0 where there is none).

        Where the ellipsoid's point T leaves the ball and ``base`` gives a member θ_b of S for each row (rows x d),
        the point is the last one in the ball on the segment from θ_b to T: the loss is convex, so it stays at most
        ε on the segment. ``start``: only the ellipsoids from that one on (those added since the rows were last
        screened).
        """
        m, d = F.shape
        value, theta = np.full(m, np.inf), np.zeros((m, d))
        C, rho = self.C[start:], self.rho[start:]
        if not len(rho) or not m:
            return value, theta
        step = max(1, _CELLS // len(rho))
        r = self.r * (1 - 1e-15)  # as the batch's membership test
        for a in range(0, m, step):
            Fb = F[a : a + step]
            FH = self._hinv(Fb)
            sq = np.sqrt(np.maximum((Fb * FH).sum(1), 1e-300))
            V = Fb @ C.T - sq[:, None] * rho[None, :]
            k = np.argmin(V, axis=1)
            T = C[k] - (rho[k] / sq)[:, None] * FH
            ok = ((T @ self.Bt) * T).sum(1) <= r
            if base is not None and not ok.all():
                M0 = base[a : a + step][~ok]
                Dd = T[~ok] - M0
                qa = ((Dd @ self.Bt) * Dd).sum(1)
                qb = ((Dd @ self.Bt) * M0).sum(1)
                qc = ((M0 @ self.Bt) * M0).sum(1) - r
                with np.errstate(divide="ignore", invalid="ignore"):
                    s = (-qb + np.sqrt(np.maximum(qb * qb - qa * qc, 0.0))) / qa
                s = np.where(np.isfinite(s) & (qc <= 0), np.clip(s * (1 - 1e-9), 0.0, 1.0), 0.0)
                Ts = M0 + s[:, None] * Dd
                T[~ok] = Ts
                ok[~ok] = ((Ts @ self.Bt) * Ts).sum(1) <= r
            v = (Fb * T).sum(1)
            value[a : a + step] = np.where(ok & np.isfinite(v), v, np.inf)
            theta[a : a + step] = T
        return value, theta


def of_batch(bat) -> InnerPoints:
    """:class:`InnerPoints` of the in-memory batched solver of a logistic set.

    Parameters
    ----------
    bat : MarginBatch
        The engine's batched solver (its deduplicated rows and weights, ball and ε).

    Returns
    -------
    InnerPoints
        With no ellipsoid yet.
    """
    return InnerPoints(bat.Zw.T @ bat.Z, bat.Bt, bat.r, bat.eps, bat.e_min, bat.o)
