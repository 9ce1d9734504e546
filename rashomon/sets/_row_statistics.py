"""Sufficient statistics of the linear class: everything a linear Rashomon set needs, in O(p²).

For squared loss and ``f_θ(x) = μ + ((x - m)/s)'β̃`` the losses e_orig and e_switch are
quadratics in θ whose coefficients are weighted row sums: the mean and the centred
co-moment matrix of ``[x, y]`` (the all-pairs e_switch factorises into products of column
sums and per-row sums, :func:`~rashomon.model_classes.switched_design_moments`). So a
:class:`RowStatistics` -- row count, Σw, the weighted mean and the centred co-moment of
``[x, y]`` -- replaces the rows. Blocks of rows are summarised by :func:`block_statistics`
and merged exactly by :func:`merge_statistics` (pairwise-stable: each block is centred at its
own mean), so the same numbers come from memory, from a Dask array chunk by chunk or from a
cluster.

The ridge reference with leave-one-out penalty choice needs, besides those sums, one more
pass over the rows (per-row leverages for every penalty at once, :func:`loo_block`).
Every row is its own leave-out unit there: exact duplicate rows are *not* grouped as the
in-memory :func:`~rashomon.model_classes.ridge_loo` does (grouping needs all rows at once),
so the two agree on data without duplicate rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model_classes import ClassMember, LinearModelClass, LinearParametrization, Quadratic
from ..utils.validation import RashomonInputError

__all__ = [
    "RowStatistics",
    "StatisticsParametrization",
    "block_statistics",
    "merge_statistics",
    "loo_block",
    "statistics_parametrization",
]

_HEAD = 5  # packed layout: [n_rows, W, n_positive, n_nonfinite_y, n_bad_weights, nonfinite_x (p), mean (q), M2 (q*q)]


def packed_size(p: int) -> int:
    """Length of one packed block summary for p features (q = p + 1 columns ``[x, y]``)."""
    q = p + 1
    return _HEAD + p + q + q * q


def _columns_of(K: int) -> int:
    """q = p + 1 from the packed length K = HEAD + (q - 1) + q + q²."""
    return int(round(np.sqrt(K - _HEAD + 2) - 1))


def block_statistics(xb: Any, yb: Any, wb: Any = None) -> np.ndarray:
    """Summary of one block of rows as a (1, K) array (see :func:`packed_size`).

    Non-finite values and bad weights are counted (the caller raises on the merged counts);
    the block is centred at its own weighted mean.
    """
    xb = np.asarray(xb, dtype=float)
    yb = np.asarray(yb, dtype=float).reshape(-1)
    if xb.ndim != 2 or xb.shape[0] != yb.shape[0]:
        raise RashomonInputError(
            f"The 'y' parameter of RashomonSet.fit must have one value per row of X in every "
            f"chunk (Dask partitions of X and y must align). Got a chunk of X of shape {xb.shape} "
            f"with {yb.shape[0]} values of y instead."
        )
    m, p = xb.shape
    wb = np.ones(m) if wb is None else np.asarray(wb, dtype=float).reshape(-1)
    if wb.shape[0] != m:
        raise RashomonInputError(
            f"The 'sample_weight' parameter of RashomonSet.fit must have one value per row of X "
            f"in every chunk. Got {wb.shape[0]} for a chunk of {m} rows instead."
        )
    a = np.column_stack([xb, yb])
    bad_w = ~np.isfinite(wb) | (wb < 0)
    out = np.zeros(packed_size(p))
    q = p + 1
    W = float(wb.sum())
    mean = (wb @ a) / W if W > 0 else np.zeros(q)
    ac = a - mean
    out[:_HEAD] = m, W, np.count_nonzero(wb > 0), np.count_nonzero(~np.isfinite(yb)), np.count_nonzero(bad_w)
    out[_HEAD : _HEAD + p] = np.count_nonzero(~np.isfinite(xb), axis=0)
    out[_HEAD + p : _HEAD + p + q] = mean
    out[_HEAD + p + q :] = (ac.T @ (ac * wb[:, None])).ravel()
    return out[None, :]


def merge_statistics(rows: np.ndarray, axis: Any = None, keepdims: bool = True) -> np.ndarray:
    """Merge packed block summaries (rows of a 2-D array) into one, exactly.

    ``M2 = Σ_b M2_b + Σ_b W_b (m_b - m)(m_b - m)'`` with ``m = Σ_b W_b m_b / W`` (the
    multi-block form of Chan et al.'s update). The signature fits ``dask.array.reduction``.
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    K = rows.shape[1]
    q = _columns_of(K)
    p = q - 1
    out = np.zeros(K)
    out[: _HEAD + p] = rows[:, : _HEAD + p].sum(axis=0)
    Wb = rows[:, 1]
    W = float(Wb.sum())
    means = rows[:, _HEAD + p : _HEAD + p + q]
    mean = (Wb @ means) / W if W > 0 else np.zeros(q)
    dm = means - mean
    M2 = rows[:, _HEAD + p + q :].sum(axis=0).reshape(q, q) + dm.T @ (dm * Wb[:, None])
    out[_HEAD + p : _HEAD + p + q] = mean
    out[_HEAD + p + q :] = M2.ravel()
    return out[None, :] if keepdims else out


class RowStatistics:
    """The rows of ``(X, y, w)`` summarised: what a linear Rashomon set keeps instead of the data.

    Attributes
    ----------
    n_rows : int
    shape : tuple of int
        ``(n_rows, n_features)``, like the array it replaces.
    weight_sum : float
        Σw (the number of rows without weights).
    n_positive : int
        Rows with positive weight.
    mean : ndarray of shape (p + 1,)
        Weighted means of ``[x, y]``.
    comoment : ndarray of shape (p + 1, p + 1)
        ``Σ w (a - mean)(a - mean)'`` for ``a = [x, y]``.
    """

    def __init__(self, packed: np.ndarray, func: str, columns: list[str] | None = None):
        packed = np.asarray(packed, dtype=float).reshape(-1)
        q = _columns_of(len(packed))
        p = q - 1
        n_rows, W, n_pos, nf_y, bad_w = packed[:_HEAD]
        nf_x = packed[_HEAD : _HEAD + p]
        if np.any(nf_x > 0):
            names = [columns[i] if columns else int(i) for i in np.where(nf_x > 0)[0]]
            raise RashomonInputError(
                f"The 'X' parameter of {func} must be finite (no NaN or inf). Got NaN or inf in "
                f"column(s) {names} instead."
            )
        if nf_y > 0:
            raise RashomonInputError(
                f"The 'y' parameter of {func} must be finite (no NaN or inf). Got {int(nf_y)} "
                "non-finite value(s) instead."
            )
        if bad_w > 0 or not W > 1:
            raise RashomonInputError(
                f"The 'sample_weight' parameter of {func} must be non-negative counts summing to "
                f"more than 1. Got {int(bad_w)} negative or non-finite weight(s), sum {W:g} instead."
            )
        if n_rows < 3:
            raise RashomonInputError(
                f"The 'X' parameter of {func} must be an array with at least 3 rows. Got {int(n_rows)} row(s) instead."
            )
        self.n_rows, self.weight_sum, self.n_positive = int(n_rows), float(W), int(n_pos)
        self.shape = (self.n_rows, p)
        self.mean = packed[_HEAD + p : _HEAD + p + q].copy()
        self.comoment = packed[_HEAD + p + q :].reshape(q, q).copy()

    def __repr__(self) -> str:
        return f"RowStatistics(n_rows={self.n_rows}, n_features={self.shape[1]})"

    def _raw_rows(self, *_: Any, **__: Any):
        raise RashomonInputError(
            "This RashomonSet was fitted on Dask input and keeps only the sufficient statistics of the rows (O(p²)), "
            "not the rows: conditional MCR, pd_band, reweighted and projections of other estimators need the rows. "
            "Compute them on an in-memory sample (X.compute()) or fit a new set (sample_weight= a Dask array)."
        )

    __array__ = __getitem__ = __iter__ = _raw_rows

    @property
    def mean_square(self) -> float:
        """Σ w y² / Σ w."""
        return float(self.comoment[-1, -1] / self.weight_sum + self.mean[-1] ** 2)

    def moments(self, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
        """``Σ w a a'`` for ``a = [1, (x - mu)/sd, y]``, shape (p + 2, p + 2)."""
        W = self.weight_sum
        p = len(mu)
        scale = np.r_[1.0 / np.asarray(sd, dtype=float), 1.0]
        dm = np.r_[(self.mean[:p] - mu) / sd, self.mean[p]]
        A = np.empty((p + 2, p + 2))
        A[0, 0] = W
        A[0, 1:] = A[1:, 0] = W * dm
        A[1:, 1:] = self.comoment * np.outer(scale, scale) + W * np.outer(dm, dm)
        return A


def _design_sums(par: LinearParametrization, st: RowStatistics):
    """``(n, s, S, b, sy, syy)``: Σw, Σw·d, Σw·dd', Σw·d·y, Σw·y, Σw·y² of the design d of ``par``."""
    A = st.moments(par.mean, par.sd)
    p = len(par.mean)
    idx = np.arange(0 if par.o else 1, p + 1)
    return st.weight_sum, A[0, idx], A[np.ix_(idx, idx)], A[idx, p + 1], A[0, p + 1], A[p + 1, p + 1]


class StatisticsParametrization(LinearParametrization):
    """A :class:`~rashomon.model_classes.LinearParametrization` that also builds its quadratics from
    :class:`RowStatistics` (passed in place of X); on arrays it behaves as its parent."""

    @classmethod
    def wrap(cls, par: LinearParametrization) -> StatisticsParametrization:
        if isinstance(par, cls):
            return par
        new = cls(par.mean, par.sd, par.B, par.r, par.reference_theta, par.info, par.class_name, par.o)
        new.base = par
        return new

    def e_orig(self, X, y, w=None, cache=None) -> Quadratic:
        if not isinstance(X, RowStatistics):
            return super().e_orig(X, y, w, **({} if cache is None else {"cache": cache}))
        if w is not None:
            X._raw_rows()
        n, _, S, b, _, syy = _design_sums(self, X)
        return Quadratic(S / n, b / n, float(syy / n))

    def e_switch(self, X, y, w, group, strata=None, cache=None) -> Quadratic:
        if not isinstance(X, RowStatistics):
            return super().e_switch(X, y, w, group, strata, cache)
        if w is not None or strata is not None:
            X._raw_rows()
        n, s, S, b, sy, syy = _design_sums(self, X)
        sw = np.asarray(group, dtype=int) + self.o
        keep = np.setdiff1d(np.arange(len(s)), sw)
        G, g = (n - 1) * S, (n - 1) * b
        G[np.ix_(sw, keep)] = np.outer(s[sw], s[keep]) - S[np.ix_(sw, keep)]
        G[np.ix_(keep, sw)] = G[np.ix_(sw, keep)].T
        g[sw] = s[sw] * sy - b[sw]
        nn = n * (n - 1)
        return Quadratic(G / nn, g / nn, float((n - 1) * syy / nn))

    def prediction_map(self, X):
        if isinstance(X, RowStatistics):
            X._raw_rows()
        return super().prediction_map(X)

    def project(self, estimator: Any, X: Any, func: str, columns: list[str] | None = None, rtol: float = 1e-6):
        if not isinstance(X, RowStatistics):
            return super().project(estimator, X, func, columns, rtol)
        return member_theta(self, estimator, func)


def member_theta(par: Any, estimator: Any, func: str) -> np.ndarray:
    """θ of a reference given on Dask input: only a member of the class itself (its θ is known); projecting
    another estimator needs its predictions on every row."""
    if isinstance(estimator, ClassMember) and estimator.parametrization_ in (par, getattr(par, "base", None)):
        return estimator.theta_.copy()
    raise RashomonInputError(
        f"The 'reference' parameter of {func} must be None or a member fitted by the class "
        "(model_class.fit_reference) when X is a Dask collection: projecting another "
        "estimator needs its predictions on every row."
    )


def loo_block(xb, yb, wb, mu, sd, cz, cy, V, sv, uty, shrink, W, fit_intercept, rows=16384) -> np.ndarray:
    """``Σ w (e / (1 - h))²`` over one block of rows for every penalty (columns of ``shrink``), shape (1, A).

    e is the ridge residual and h the leverage (plus ``w/W`` for the intercept), as in
    :func:`~rashomon.model_classes.ridge_loo` without duplicate rows; ``rows`` bounds the
    temporaries to ``rows × A``.
    """
    xb = np.asarray(xb, dtype=float)
    yb = np.asarray(yb, dtype=float).reshape(-1)
    wb = np.ones(len(yb)) if wb is None else np.asarray(wb, dtype=float).reshape(-1)
    coef = shrink * uty[:, None]  # rank × A
    out = np.zeros(shrink.shape[1])
    for i in range(0, len(yb), rows):
        sl = slice(i, i + rows)
        T = (((xb[sl] - mu) / sd - cz) @ V) / sv
        w = wb[sl]
        resid = (yb[sl] - cy)[:, None] - T @ coef
        lev = w[:, None] * ((T * T) @ shrink) + ((w / W)[:, None] if fit_intercept else 0.0)
        out += w @ ((resid / (1.0 - lev)) ** 2)
    return out[None, :]


def statistics_parametrization(
    mc: LinearModelClass, st: RowStatistics, loo_errors, func: str, columns: list[str] | None = None
) -> StatisticsParametrization:
    """:meth:`LinearModelClass.parametrize` from :class:`RowStatistics`.

    ``loo_errors(mu, sd, cz, cy, V, sv, uty, shrink, fit_intercept)`` returns the summed
    :func:`loo_block` over all rows (one more pass); it is called only when
    ``norm_bound=None``.
    """
    p = st.shape[1]
    W, m, C = st.weight_sum, st.mean, st.comoment
    mu = m[:p].copy() if mc.fit_intercept else np.zeros(p)
    sd = np.sqrt(np.diag(C)[:p] / W + (m[:p] - mu) ** 2)
    if np.any(sd <= 0):
        bad = [columns[i] if columns else int(i) for i in np.where(sd <= 0)[0]]
        raise RashomonInputError(f"The 'X' parameter of {func} has constant (or all-zero) column(s) {bad}; drop them.")
    Ms = mc.standard_penalty(sd)
    o = 1 if mc.fit_intercept else 0
    B = mc.ball(Ms)
    info: dict = {}
    ref = None
    if mc.norm_bound is None:
        a_eff = mc.alpha_grid() * (W / st.n_positive)
        cz = (m[:p] - mu) / sd if mc.fit_intercept else np.zeros(p)
        cy = m[p] if mc.fit_intercept else 0.0
        dz, dy = (m[:p] - mu) / sd - cz, m[p] - cy
        G = C[:p, :p] / np.outer(sd, sd) + W * np.outer(dz, dz)
        h = C[:p, p] / sd + W * dz * dy
        s2, V = np.linalg.eigh(G)
        keep = s2 > s2.max() * p * np.finfo(float).eps
        s2, V = s2[keep], V[:, keep]
        sv = np.sqrt(s2)
        uty = (V.T @ h) / sv
        shrink = s2[:, None] / (s2[:, None] + a_eff[None, :])
        loo = np.asarray(loo_errors(mu, sd, cz, cy, V, sv, uty, shrink, mc.fit_intercept), dtype=float) / W
        best = int(np.argmin(loo))
        beta = V @ (uty * sv / (s2 + a_eff[best]))
        r, ref = mc.ridge_reference(beta, cy - float(cz @ beta), Ms, a_eff[best], loo[best], info, func)
    else:
        from ..utils.validation import check_norm_bound

        r = check_norm_bound(mc.norm_bound, "LinearModelClass")
    info["norm_bound"] = r
    return StatisticsParametrization(mu, sd, B, r, ref, info, repr(mc), o)
