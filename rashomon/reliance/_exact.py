"""The generic exact e_switch, streamed over the distinct values (or cells) of the switched block.

``Σ_{i≠j} L(y_j, f(x1_i, x2_j)) = Σ_v Σ_j (c_v − [x1_j = v]) L(y_j, f(v, x2_j))`` over the
distinct values v of X1 (counts c_v). The same identity holds for any partition of
the rows into *cells* on which ``f(·, x2)`` is constant for every x2 (a tree
ensemble's threshold cells, :mod:`._tree_cells`): v is then one representative
value of the cell and c_v the cell's count.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from ..utils.losses import Predictor

__all__ = ["exact_e_switch", "distinct_cells"]


def distinct_cells(X: np.ndarray, group: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values, inverse, counts)`` of the distinct rows of ``X[:, group]``."""
    values, inverse, counts = np.unique(X[:, list(group)], axis=0, return_inverse=True, return_counts=True)
    return values, inverse.ravel(), counts


def _block_sum(
    predictor: Predictor,
    X: np.ndarray,
    y_enc: np.ndarray,
    group: np.ndarray,
    values: np.ndarray,
    counts: np.ndarray,
    inverse: np.ndarray,
    v0: int,
    v1: int,
    j0: int,
    j1: int,
) -> float:
    """Σ over cells v in [v0, v1) and rows j in [j0, j1) of w(v, j)·L(y_j, f(v, x2_j)),
    with w(v, j) = #{i ≠ j : x1_i in cell v}."""
    nv, nj = v1 - v0, j1 - j0
    rows = np.tile(X[j0:j1], (nv, 1))
    rows[:, group] = np.repeat(values[v0:v1], nj, axis=0)
    losses = predictor.losses(np.tile(y_enc[j0:j1], nv), rows).reshape(nv, nj)
    w = counts[v0:v1, None] - (inverse[None, j0:j1] == np.arange(v0, v1)[:, None])
    return float(np.sum(losses * w))


def exact_e_switch(
    predictor: Predictor,
    X: np.ndarray,
    y_enc: np.ndarray,
    group: tuple[int, ...],
    max_rows: int,
    n_jobs: int | None,
    cells: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> float:
    """Exact all-pairs e_switch, predicting at most ``max_rows`` switched rows at once.

    ``cells = (values, inverse, counts)``: one representative value of X1 per
    cell, the cell of each row and the cell sizes; default the distinct values.
    Blocks are summed in a fixed order, so any ``n_jobs`` gives identical results.
    """
    n = X.shape[0]
    g = np.asarray(group)
    values, inverse, counts = distinct_cells(X, group) if cells is None else cells
    n_values = values.shape[0]
    bj = min(n, max(1, max_rows))
    bv = max(1, max_rows // bj)
    tasks = [
        (v0, min(n_values, v0 + bv), j0, min(n, j0 + bj)) for v0 in range(0, n_values, bv) for j0 in range(0, n, bj)
    ]
    args = (predictor, X, y_enc, g, values, counts, inverse)
    if n_jobs in (None, 1) or len(tasks) == 1:
        sums = [_block_sum(*args, *t) for t in tasks]
    else:
        sums = Parallel(n_jobs=n_jobs)(delayed(_block_sum)(*args, *t) for t in tasks)
    return float(np.sum(sums)) / (n * (n - 1))
