"""Closed forms of the exact e_switch for linear regressors under squared loss.

For ``f(x) = b + x'β``, residuals ``e = y − f(X)`` and a switched group G with
``u = X_G β_G`` (centred sums ``S_ab = Σ (a − ā)(b − b̄)``), the all-pairs
U-statistic is

``e_switch = e_orig + 2 (S_uu + S_eu) / (n − 1)``,

because ``Σ_{i≠j} (e_j + u_j − u_i)² = n Σ e² + 2n (S_uu + S_eu) − Σ e²``. With
the centred cross-products of the columns (``C = Xc'Xc``) and of the columns
with the residual (``c = Xc'e``), ``S_uu = β_G' C_GG β_G`` and ``S_eu = β_G' c_G``:
one pass over the data gives every feature (only the diagonal of C) and every
group (the block of C on the grouped columns), each then in O(|G|²).

Sums are taken about the column means (computed first, then the data is
centred chunk by chunk), so a large offset in a column does not cancel.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from ..utils.losses import Predictor

__all__ = ["linear_coefficients", "linear_squared_e_switch", "LinearSwitchStats"]

_AFFINE_STEPS = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")
_CHUNK_BYTES = 2**20


def linear_coefficients(estimator: Any, X: np.ndarray, predictor: Predictor) -> tuple[np.ndarray, float] | None:
    """Effective ``(coef, intercept)`` when ``estimator.predict`` is affine in x, else None.

    Accepts a regressor with ``coef_`` and ``intercept_`` or a Pipeline whose
    earlier steps are column-wise affine scalers. The effective coefficients are
    read off by probing the model at 0 and the unit vectors, then verified on
    up to 256 data rows (relative tolerance 1e-9), so a wrongly whitelisted step
    can never give a silent wrong answer.
    """
    from sklearn.base import is_regressor
    from sklearn.pipeline import Pipeline

    if predictor.method_name != "predict":
        return None
    final = estimator
    if isinstance(estimator, Pipeline):
        for _, step in estimator.steps[:-1]:
            if step not in (None, "passthrough") and type(step).__name__ not in _AFFINE_STEPS:
                return None
        final = estimator.steps[-1][1]
    if not (is_regressor(final) and hasattr(final, "coef_") and hasattr(final, "intercept_")):
        return None
    coef = np.asarray(final.coef_, dtype=float)
    if coef.ndim == 2 and coef.shape[0] != 1:
        return None
    p = X.shape[1]
    probe = np.vstack([np.zeros((1, p)), np.eye(p)])
    out = np.asarray(predictor(probe), dtype=float).ravel()
    if out.shape[0] != p + 1:
        return None
    b = float(out[0])
    beta = out[1:] - b
    rows = X[: min(256, X.shape[0])]
    direct = np.asarray(predictor(rows), dtype=float).ravel()
    scale = np.max(np.abs(direct)) + np.abs(rows) @ np.abs(beta) + abs(b) + 1.0
    if not np.all(np.abs(rows @ beta + b - direct) <= 1e-9 * scale):
        return None
    return beta, b


def linear_squared_e_switch(X: np.ndarray, y: np.ndarray, pred: np.ndarray, beta: np.ndarray, group: Sequence[int]) -> tuple[float, float]:
    """Exact ``(e_orig, e_switch)`` of a linear model under squared loss, one group.

    ``pred = X @ beta + b``; costs O(n·|group|). For many groups of the same
    data use :class:`LinearSwitchStats` (one pass for all of them).
    """
    n = X.shape[0]
    g = list(group)
    u = X[:, g] @ beta[g]
    r = y - pred + u
    diag = float(np.sum((y - pred) ** 2))
    rc = r - r.mean()
    uc = u - u.mean()
    total = n * float(rc @ rc) + n * float(uc @ uc) + n * n * float(r.mean() - u.mean()) ** 2
    return diag / n, (total - diag) / (n * (n - 1))


class LinearSwitchStats:
    """Sufficient statistics of a linear model's exact e_switch for many groups.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
    beta : ndarray of shape (p,)
    intercept : float
        The model is ``f(x) = intercept + x @ beta``.
    groups : iterable of sequences of int
        The groups that will be asked for; the cross-products between columns
        are formed only for the columns of groups of two or more.

    Notes
    -----
    One pass over X in row chunks of about 1 MiB: per chunk the residuals, the
    chunk means and the sums about them, merged with the pairwise update of
    Chan, Golub & LeVeque (1979). The data is first shifted by the first chunk's
    means, so neither a sum nor a chunk mean is taken about a distant origin.
    O(n·(p + m²)) for m columns in multi-column groups; each :meth:`e_switch`
    is then O(|G|²). ``e_orig`` is the mean squared residual.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, beta: np.ndarray, intercept: float,
                 groups: Iterable[Sequence[int]]):
        groups = [tuple(int(j) for j in g) for g in groups]
        n, p = X.shape
        multi = np.array(sorted({j for g in groups if len(g) > 1 for j in g}), dtype=np.intp)
        self.n = n
        self.beta = np.asarray(beta, dtype=float)
        y = np.asarray(y, dtype=float)
        mean, e_mean, count = np.zeros(p), 0.0, 0
        ss, xe, gram = np.zeros(p), np.zeros(p), np.zeros((len(multi), len(multi)))
        sq = 0.0
        step = max(1, _CHUNK_BYTES // (8 * p))
        buf, ones = np.empty((min(step, n), p)), np.ones(min(step, n))
        shift = e_shift = None
        for s in range(0, n, step):
            Xc = X[s:s + step]
            m = Xc.shape[0]
            e = y[s:s + m] - (Xc @ self.beta + intercept)
            sq += float(e @ e)
            if shift is None:  # the first chunk's means: later means are taken of the shifted data
                shift, e_shift = (ones[:m] @ Xc) / m, float(e.sum()) / m
            A = np.subtract(Xc, shift, out=buf[:m])
            e = e - e_shift
            cm, ce = (ones[:m] @ A) / m, float(e.sum()) / m
            A -= cm
            ec = e - ce
            # merge the chunk's centred sums into the running ones (Chan et al.)
            f = count * m / (count + m)
            d, de = cm - mean, ce - e_mean
            ss += np.einsum("ij,ij->j", A, A) + f * d * d
            xe += ec @ A + f * de * d
            if len(multi):
                Am = A[:, multi]
                gram += Am.T @ Am + f * np.outer(d[multi], d[multi])
            mean += d * (m / (count + m))
            e_mean += de * (m / (count + m))
            count += m
        self.e_orig = sq / n
        self._ss, self._xe, self._gram = ss, xe, gram
        self._mpos = {int(j): k for k, j in enumerate(multi)}

    def covers(self, groups: Iterable[Sequence[int]]) -> bool:
        """True when every group can be answered from these statistics."""
        return all(len(g) == 1 or all(int(j) in self._mpos for j in g) for g in groups)

    def e_switch(self, group: Sequence[int]) -> float:
        """Exact all-pairs e_switch of ``group`` (a column of ``groups`` or a group given at construction)."""
        g = [int(j) for j in group]
        bg = self.beta[g]
        s_eu = float(bg @ self._xe[g])
        if len(g) == 1:
            s_uu = float((bg[0] * np.sqrt(self._ss[g[0]])) ** 2)  # (β√ss)²: no overflow for huge β, tiny x
        else:
            idx = [self._mpos[j] for j in g]
            G = self._gram[np.ix_(idx, idx)]
            d = np.sqrt(np.maximum(np.diag(G), 0.0))
            v = bg * d  # scaled: the Gram's correlation form times (β·sd) on both sides
            C = G / np.where(np.outer(d, d) > 0, np.outer(d, d), 1.0)
            s_uu = float(v @ C @ v)
        return self.e_orig + 2.0 * (s_uu + s_eu) / (self.n - 1)
