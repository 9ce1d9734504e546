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

Sums are taken about an origin near the column means (sampled rows; the exact
means in a second pass when the sample misled), so a large offset in a column
does not cancel, and the same pass proves X finite and bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..utils.losses import Predictor
from ..utils.validation import MAX_MAGNITUDE, RashomonInputError

__all__ = ["linear_coefficients", "linear_squared_e_switch", "LinearSwitchStats"]

_AFFINE_STEPS = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")
_CHUNK_BYTES = 2**20
#: rows sampled (evenly spaced) to choose the origin of the sums
_SAMPLE_ROWS = 1024
#: Σ(x − s)² / Σ(x − x̄)² allowed before the sums are taken again about the exact means
_MAX_CANCELLATION = 10.0


def linear_coefficients(estimator: Any, X: np.ndarray, predictor: Predictor) -> tuple[np.ndarray, float] | None:
    """Effective ``(coef, intercept)`` when ``estimator.predict`` is affine in x, else None.

    Accepts a regressor with ``coef_`` and ``intercept_`` or a Pipeline whose
    earlier steps are column-wise affine scalers. A regressor's own ``coef_`` and
    ``intercept_`` are used as they are; a Pipeline's effective coefficients are
    read off by probing it at 0 and at steps ``h_j e_j`` as large as the data
    (``h_j`` a power of 2 ≥ max |x_j|: the error of a difference of two
    predictions, relative to the larger, is divided by ``h_j``, not by 1, so a
    large intercept does not cost the coefficients their digits). Then verified
    on up to 256 data rows (relative tolerance 1e-9), so a wrongly whitelisted
    step can never give a silent wrong answer.
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
    rows = X[: min(256, X.shape[0])]
    intercept = np.asarray(final.intercept_, dtype=float)
    if final is estimator and coef.size == p and intercept.size == 1:
        beta, b = coef.ravel(), float(intercept.ravel()[0])
    else:
        h = 2.0 ** np.ceil(np.log2(np.maximum(np.max(np.abs(rows), axis=0), 1.0)))
        out = np.asarray(predictor(np.vstack([np.zeros((1, p)), np.diag(h)])), dtype=float).ravel()
        if out.shape[0] != p + 1:
            return None
        b = float(out[0])
        beta = (out[1:] - b) / h
    direct = np.asarray(predictor(rows), dtype=float).ravel()
    scale = np.max(np.abs(direct)) + np.abs(rows) @ np.abs(beta) + abs(b) + 1.0
    if not np.all(np.abs(rows @ beta + b - direct) <= 1e-9 * scale):
        return None
    return beta, b


def linear_squared_e_switch(
    X: np.ndarray, y: np.ndarray, pred: np.ndarray, beta: np.ndarray, group: Sequence[int]
) -> tuple[float, float]:
    """Exact ``(e_orig, e_switch)`` of a linear model under squared loss, one group.

    ``pred = X @ beta + b``; costs O(n·|group|). For many groups of the same
    data use :class:`LinearSwitchStats` (one pass for all of them).
    """
    n = X.shape[0]
    g = list(group)
    e = y - pred
    diag = float(e @ e)
    # centre the group's columns before they meet beta (two passes: the second removes the first's
    # rounding), so columns far from 0 lose no digits; r = e + u, and mean(r) - mean(u) = mean(e)
    Xg = X[:, g] - X[:, g].mean(axis=0)
    uc = (Xg - Xg.mean(axis=0)) @ beta[g]
    uc -= uc.mean()
    ec = e - e.mean()
    rc = ec + uc
    total = n * float(rc @ rc) + n * float(uc @ uc) + n * n * float(e.mean()) ** 2
    return diag / n, (total - diag) / (n * (n - 1))


def _origin(X: np.ndarray, y: np.ndarray, beta: np.ndarray, b: float) -> tuple[np.ndarray | None, float]:
    """Origin ``(s, t)`` of the sums of X's columns and of the residual, from evenly spaced sample rows.

    ``s`` is None (no shift, no copy of X) when every column's sampled mean is within three sampled
    standard deviations of 0 (sums about 0 then lose at most one digit) or the column is 0 on the
    sample; otherwise the sampled means, a column constant on the sample taking its value (its sums
    are then exactly 0 when it is constant).
    """
    n = X.shape[0]
    rows = np.unique(np.linspace(0, n - 1, min(n, _SAMPLE_ROWS)).astype(np.intp))
    S = X[rows]
    e = y[rows] - (S @ beta + b)
    lo, hi = S.min(axis=0), S.max(axis=0)
    mean = np.where(lo == hi, lo, S.mean(axis=0))
    if np.all((mean * mean <= 9.0 * S.var(axis=0)) | (mean == 0)):  # False on NaN: the pass then finds it
        return None, float(e.mean())
    return mean, float(e.mean())


def _sums(
    X: np.ndarray, y: np.ndarray, beta: np.ndarray, b: float, s: np.ndarray | None, t: float, multi: np.ndarray
) -> tuple:
    """Sums over the rows of ``a = x − s`` and ``r = y − f(x) − t``: Σa, Σa², Σ r·a, Σr, Σr², Σ a_M a_M'.

    Row chunks of about ``_CHUNK_BYTES`` stay in cache while they are used four times (the residual,
    the column sums, the squares, the cross-products with the residual): X is read from memory once.
    """
    n, p = X.shape
    step = max(1, _CHUNK_BYTES // (8 * p))
    ones = np.ones(min(step, n))
    buf = np.empty((min(step, n) if s is not None else 0, p))
    sa, saa, sra = np.zeros(p), np.zeros(p), np.zeros(p)
    sr = srr = 0.0
    gram = np.zeros((len(multi), len(multi)))
    for i in range(0, n, step):
        A = X[i : i + step]
        m = A.shape[0]
        r = A @ beta  # the residual from the data itself, as y - predict(X) is
        r += b
        np.subtract(y[i : i + m], r, out=r)
        r -= t
        if s is not None:
            A = np.subtract(A, s, out=buf[:m])
        sr += float(r.sum())
        srr += float(r @ r)
        sa += ones[:m] @ A
        sra += r @ A
        saa += np.einsum("ij,ij->j", A, A)
        if len(multi):
            Am = A[:, multi]
            gram += Am.T @ Am
    return sa, saa, sra, sr, srr, gram


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
    check : callable, optional
        Called when the pass cannot prove every value of X finite and of magnitude at most
        ``MAX_MAGNITUDE`` (so X need not be checked beforehand): it raises the caller's clear
        error, or returns when the values are fine after all. ``bounded`` records the proof.
    func : str, default="feature_reliance"
        Named in the error raised when a sum of squares overflows.

    Notes
    -----
    One pass over X in row chunks of about 1 MiB, each used while it is in cache: the
    residuals ``r = y − f(x)``, and for ``a = x − s`` the sums Σa, Σa², Σr·a (and Σa a' on
    the columns of multi-column groups). The origin ``s`` (and ``t`` for r) comes from evenly
    spaced sample rows; s = 0, without copying X, when the columns are centred near 0. The
    centred sums follow as ``Σa² − n ā²``; when that cancels more than one digit
    (``Σa² > 10 (Σa² − n ā²)``: a sample unlike the data) the pass is made again about the exact
    means. O(n·(p + m²)) for m columns in multi-column groups; each :meth:`e_switch` is then
    O(|G|²). ``e_orig`` is the mean squared residual.

    The pass also validates X: a NaN or ±inf in column j makes Σa_j² NaN or +inf, and a
    finite ``Σa_j² ≤ 0.99 (MAX_MAGNITUDE − |s_j|)²`` proves every ``|x_ij| ≤ MAX_MAGNITUDE``.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        beta: np.ndarray,
        intercept: float,
        groups: Iterable[Sequence[int]],
        *,
        check: Callable[[], Any] | None = None,
        func: str = "feature_reliance",
    ):
        groups = [tuple(int(j) for j in g) for g in groups]
        n, p = X.shape
        multi = np.array(sorted({j for g in groups if len(g) > 1 for j in g}), dtype=np.intp)
        self.n = n
        self.beta = np.asarray(beta, dtype=float)
        y = np.asarray(y, dtype=float)
        b = float(intercept)
        with np.errstate(all="ignore"):  # non-finite values and overflow: found by the checks below
            s, t = _origin(X, y, self.beta, b)
            sums = _sums(X, y, self.beta, b, s, t, multi)
            room = np.maximum(MAX_MAGNITUDE - (0.0 if s is None else np.abs(s)), 0.0)
            self.bounded = bool(np.all(sums[1] <= 0.99 * room * room))  # False for NaN and inf
            if not self.bounded and check is not None:
                check()
            sa, saa, sra, sr, srr, gram = sums
            d, dr = sa / n, sr / n
            if np.any(saa > _MAX_CANCELLATION * (saa - n * d * d)) or srr > _MAX_CANCELLATION * (srr - n * dr * dr):
                s = (0.0 if s is None else s) + d  # the sample was unlike the data: sums about the exact means
                t += dr
                sa, saa, sra, sr, srr, gram = _sums(X, y, self.beta, b, s, t, multi)
                d, dr = sa / n, sr / n
            self._ss = np.maximum(saa - n * d * d, 0.0)
            self._xe = sra - n * dr * d
            self._gram = gram - n * np.outer(d[multi], d[multi])
            self.e_orig = max(srr - n * dr * dr, 0.0) / n + (t + dr) ** 2
        if not (
            np.all(np.isfinite(self._ss))
            and np.all(np.isfinite(self._xe))
            and np.all(np.isfinite(self._gram))
            and np.isfinite(self.e_orig)
        ):
            raise RashomonInputError(
                f"The 'X' parameter of {func} must give sums of squares (of its centred columns and of the residuals "
                "y - f(X)) that fit in double precision; rescale X, y or the model. Got an overflow instead."
            )
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
