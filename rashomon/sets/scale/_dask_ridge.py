"""Out-of-core pieces for a train/test analysis on one Dask table (used by the audit).

The rows of a training part and a held-out part are marked by a 0/1 column of the same
table, so both parts are summarised in **one** pass (:func:`dask_split_statistics`, the
mask and its complement as row weights: rows of weight 0 add nothing to any sum). Affine
maps of the columns (a standardisation) and column subsets are applied to the summaries
(:func:`transform_statistics`), not to the rows. Ridge fits with the penalty ``α·||β||²``
on the transformed columns, for several column subsets at once, choose α by the exact
leave-one-out error in one more pass (:func:`ridge_loo_statistics`); the class's reference
on the training part is the e_orig minimiser over its ball from the summaries
(:func:`reference_from_statistics`, what ``fit_reference`` does in memory).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model_classes import ClassMember, LinearModelClass
from ...solvers import QCQPSequence
from ...utils.validation import RashomonInputError
from .._row_statistics import (
    _HEAD,
    RowStatistics,
    block_statistics,
    loo_block,
    merge_statistics,
    packed_size,
    statistics_parametrization,
)
from ._dask_inputs import _as_arrays, _merge_halves, _per_block, _reduce_rows

__all__ = ["dask_split_statistics", "transform_statistics", "ridge_loo_statistics", "reference_from_statistics"]


def dask_split_statistics(X: Any, y: Any, mask: Any, *, func: str = "audit", on_counts: Any = None):
    """``(RowStatistics of the rows with mask 1, RowStatistics of the rows with mask 0, (X, y, mask), columns)``.

    One pass: the rows of each block with mask 1 and those with mask 0 are summarised apart and
    the two summaries are merged side by side in one ``dask.array.reduction`` tree. ``mask`` holds
    0/1 values (a Dask Series of the same frame as X, or a Dask array with X's row blocks).
    ``on_counts(n_in, n_out)``, if given, sees the two row counts first (to raise a clear error).
    """
    import dask

    Xd, yd, md, columns = _as_arrays(X, y, mask, func)
    K = packed_size(Xd.shape[1])

    def both(xb, yb, mb):
        xb, yb, sel = np.asarray(xb, dtype=float), np.asarray(yb, dtype=float).reshape(-1), _mask(mb)
        return np.concatenate([block_statistics(xb[sel], yb[sel]), block_statistics(xb[~sel], yb[~sel])], axis=1)

    blocks = _per_block(both, Xd, yd, md, 2 * K)
    total = _reduce_rows(blocks, _merge_halves(merge_statistics, K))
    (packed,) = dask.compute(total)
    packed = np.asarray(packed)[0]
    if on_counts is not None:
        on_counts(int(round(packed[1])), int(round(packed[K + 1])))
    return (RowStatistics(packed[:K], func, columns), RowStatistics(packed[K:], func, columns), (Xd, yd, md), columns)


def _mask(mb: Any) -> np.ndarray:
    mb = np.asarray(mb, dtype=float).reshape(-1)
    if not np.all((mb == 0.0) | (mb == 1.0)):
        raise RashomonInputError("The mask of dask_split_statistics must hold 0/1 values only.")
    return mb == 1.0


def transform_statistics(st: RowStatistics, columns: Any = None, shift: Any = None, scale: Any = None) -> RowStatistics:
    """The statistics of ``[(x_S - shift_S) / scale_S, y]`` from those of ``[x, y]`` (exact, no pass).

    ``columns`` selects S (default all; ``shift``/``scale`` are given for all p columns,
    default 0 and 1).
    """
    p = st.shape[1]
    S = np.arange(p) if columns is None else np.asarray(columns, dtype=int)
    shift = np.zeros(p) if shift is None else np.asarray(shift, dtype=float)
    scale = np.ones(p) if scale is None else np.asarray(scale, dtype=float)
    idx = np.r_[S, p]
    s = np.r_[scale[S], 1.0]
    mean = (st.mean[idx] - np.r_[shift[S], 0.0]) / s
    C = st.comoment[np.ix_(idx, idx)] / np.outer(s, s)
    packed = np.zeros(packed_size(len(S)))
    packed[:3] = st.n_rows, st.weight_sum, st.n_positive
    q = len(S) + 1
    packed[_HEAD + q - 1 : _HEAD + 2 * q - 1] = mean
    packed[_HEAD + 2 * q - 1 :] = C.ravel()
    return RowStatistics(packed, "transform_statistics")


def ridge_loo_statistics(
    data: Any, st: RowStatistics, column_sets: list, alphas: Any, *, shift: Any = None, scale: Any = None
) -> list[dict]:
    """Ridge ``min Σ w (y - μ - z_S'β)² + α·||β||²`` on ``z = (x - shift)/scale``, α by exact leave-one-out error.

    For each column set S (non-empty) of ``column_sets``, with ``data = (X, y, w)`` the dask
    arrays of the raw rows and ``st`` their statistics: one eigendecomposition of the p_S × p_S
    centred Gram matrix each, then **one** pass over the rows for all sets and all penalties
    (:func:`~._row_statistics.loo_block`: residual and leverage per row, each row its own
    leave-out unit). Returns per set ``{"alpha", "coef" (on z), "intercept", "loo_mse",
    "statistics" (of [z_S, y])}``.
    """
    import dask

    Xd, yd, wd = data
    p = st.shape[1]
    shift = np.zeros(p) if shift is None else np.asarray(shift, dtype=float)
    scale = np.ones(p) if scale is None else np.asarray(scale, dtype=float)
    alphas = np.asarray(alphas, dtype=float)
    W = st.weight_sum
    specs = []
    for S in column_sets:
        S = np.asarray(S, dtype=int)
        sub = transform_statistics(st, S, shift, scale)
        k = len(S)
        m, C = sub.mean, sub.comoment
        s2, V = np.linalg.eigh(C[:k, :k])
        keep = s2 > s2.max() * k * np.finfo(float).eps
        s2, V = s2[keep], V[:, keep]
        sv = np.sqrt(s2)
        uty = (V.T @ C[:k, k]) / sv
        shrink = s2[:, None] / (s2[:, None] + alphas[None, :])
        # (x - mu)/sd = z - mean(z): the block function standardises the raw columns itself
        specs.append((S, shift[S] + scale[S] * m[:k], scale[S], m[k], V, sv, uty, shrink, s2, sub))

    def fn(xb, yb, wb):
        xb, yb = np.asarray(xb, dtype=float), np.asarray(yb, dtype=float).reshape(-1)
        wb = np.asarray(wb, dtype=float).reshape(-1)
        sel = wb > 0  # rows of weight 0 add nothing: skip them
        xb, yb, wb = xb[sel], yb[sel], wb[sel]
        return np.concatenate(
            [
                loo_block(xb[:, S], yb, wb, mu, sd, 0.0, cy, V, sv, uty, shrink, W, True)
                for S, mu, sd, cy, V, sv, uty, shrink, _, _ in specs
            ],
            axis=1,
        )

    (total,) = dask.compute(_per_block(fn, Xd, yd, wd, len(specs) * len(alphas)).sum(axis=0))
    loo_all = np.asarray(total).reshape(len(specs), len(alphas)) / W
    out = []
    for (_, _, _, cy, V, sv, uty, _, s2, sub), loo in zip(specs, loo_all):
        best = int(np.argmin(loo))
        coef = V @ (uty * sv / (s2 + alphas[best]))
        out.append(
            {
                "alpha": float(alphas[best]),
                "coef": coef,
                "intercept": float(cy - sub.mean[:-1] @ coef),
                "loo_mse": float(loo[best]),
                "statistics": sub,
            }
        )
    return out


def reference_from_statistics(
    mc: LinearModelClass, st: RowStatistics, func: str, columns: list[str] | None = None
) -> ClassMember:
    """``mc.fit_reference`` on the rows summarised by ``st`` (``mc.norm_bound`` given): the e_orig
    minimiser over the class's ball, a member whose parametrisation travels with it."""
    par = statistics_parametrization(mc, st, None, func, columns)
    eo = par.e_orig(st, st)
    if np.isinf(par.r):  # the loss's own set
        from ...model_classes.norm_bounds import squared_loss_minimiser

        return par.estimator(squared_loss_minimiser(eo, "LinearModelClass", func))
    return par.estimator(QCQPSequence(eo.Q, eo.c, par.B, par.r).solve(0.0).x)
