"""Model reliance of one feature (or group) of any fitted model on Dask input, for any loss of the model.

``model_reliance(model, dask_X, dask_y, feature)`` for a classifier (log loss, hinge) or a non-linear model:

* **exact** (the all-pairs U-statistic, the in-memory ``method="exact"``) when the group takes few distinct
  values: with ``S_v = Σ_j L(y_j, f(x_j with the group set to v))`` and ``c_v`` the count of v,
  ``e_switch = (Σ_v c_v S_v - Σ_j L(y_j, f(x_j))) / (n(n - 1))`` -- two passes (the distinct values with their
  counts, then every ``S_v`` and e_orig per partition, summed);
* otherwise the **divide** estimator (row i of the first half paired with row i + ⌊n/2⌋, the in-memory
  ``method="divide"`` without shuffling) in one pass over the two halves aligned block by block; the result's
  ``method`` says ``"divide"``.

Each partition returns sums only; the sums are added in a fixed tree, so the bits do not depend on the number
of workers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...utils.validation import RashomonInputError
from ._dask_inputs import _as_arrays, _per_block

__all__ = ["dask_reliance_losses", "MAX_DISTINCT"]

#: the largest number of distinct values of a group whose exact U-statistic is computed out of core
#: (one model evaluation per row and value)
MAX_DISTINCT = 64


def _finite(xb: Any, func: str) -> np.ndarray:
    xb = np.asarray(xb, dtype=float)
    if not np.all(np.isfinite(xb)):
        raise RashomonInputError(f"The 'X' parameter of {func} must be finite (no NaN or inf). Got NaN or inf instead.")
    return xb


def _distinct(Xg: Any, limit: int):
    """``(values (V x k), counts)`` of the rows of the dask array Xg, or None when there are more than ``limit``."""
    import dask

    def one(b):
        v, c = np.unique(np.asarray(b, dtype=float), axis=0, return_counts=True)
        return None if len(v) > limit else (v, c)

    parts = dask.compute(*[dask.delayed(one)(b) for b in Xg.to_delayed().ravel()])
    if any(p is None for p in parts):
        return None
    vals = np.concatenate([p[0] for p in parts])
    cnts = np.concatenate([p[1] for p in parts])
    v, inv = np.unique(vals, axis=0, return_inverse=True)
    if len(v) > limit:
        return None
    return v, np.bincount(inv.ravel(), weights=cnts, minlength=len(v))


def _known_chunks(a: Any) -> Any:
    return a.compute_chunk_sizes() if any(np.isnan(c) for c in a.chunks[0]) else a


def dask_reliance_losses(
    predictor: Any, X: Any, y: Any, group: tuple[int, ...], *, method: str, func: str
) -> tuple[float, float, str, int, str | None]:
    """``(e_orig, e_switch, method used, n, exact algorithm)`` of one group on Dask input (module docstring)."""
    import dask

    Xd, yd, _, _ = _as_arrays(X, y, None, func)
    if yd is None:
        raise RashomonInputError(f"The 'y' parameter of {func} must be given. Got None instead.")
    g = np.asarray(group, dtype=int)

    def enc(yb):
        return predictor.encode_y(np.asarray(yb).reshape(-1), func)

    found = _distinct(Xd[:, g], MAX_DISTINCT) if method == "exact" else None
    if found is not None:
        vals, counts = found

        def sums(xb, yb):
            xb = _finite(xb, func)
            ye = enc(yb)
            out = np.empty(len(vals) + 2)
            out[0], out[1] = len(ye), float(np.sum(predictor.losses(ye, xb)))
            xs = xb.copy()
            for k, v in enumerate(vals):
                xs[:, g] = v
                out[k + 2] = float(np.sum(predictor.losses(ye, xs)))
            return out[None, :]

        (tot,) = dask.compute(_per_block(sums, Xd, yd, None, len(vals) + 2).sum(axis=0))
        tot = np.asarray(tot, dtype=float)
        n = int(round(tot[0]))
        e_orig = tot[1] / n
        e_switch = (float(counts @ tot[2:]) - tot[1]) / (n * (n - 1.0))
        return float(e_orig), float(e_switch), "exact", n, "distinct-values"
    # the divide estimator: rows [0, h) against rows [h, 2h), aligned block by block
    Xd, yd = _known_chunks(Xd), _known_chunks(yd)
    n = int(Xd.shape[0])
    h = n // 2
    if h < 1:
        raise RashomonInputError(f"The 'X' parameter of {func} must have at least 2 rows. Got {n} instead.")
    A, yA = Xd[:h], yd[:h]
    Bx, yB = Xd[h : 2 * h].rechunk((A.chunks[0], A.chunks[1])), yd[h : 2 * h].rechunk((A.chunks[0],))

    def halves(xa, ya, xb, yb):
        xa, xb = _finite(xa, func), _finite(xb, func)
        sa, sb = xa.copy(), xb.copy()
        sa[:, g], sb[:, g] = xb[:, g], xa[:, g]
        return np.array([[float(np.sum(predictor.losses(enc(ya), sa))) + float(np.sum(predictor.losses(enc(yb), sb)))]])

    import dask.array as da

    parts = da.blockwise(
        halves,
        "ik",
        A,
        "ij",
        yA,
        "i",
        Bx,
        "ij",
        yB,
        "i",
        new_axes={"k": 1},
        adjust_chunks={"i": 1},
        concatenate=True,
        align_arrays=False,
        dtype=float,
        meta=np.empty((0, 0)),
    )

    def orig(xb, yb):
        return np.array([[float(np.sum(predictor.losses(enc(yb), _finite(xb, func))))]])

    sw, eo = dask.compute(parts.sum(axis=0), _per_block(orig, Xd, yd, None, 1).sum(axis=0))
    return float(eo[0] / n), float(sw[0] / (2 * h)), "divide", n, None
