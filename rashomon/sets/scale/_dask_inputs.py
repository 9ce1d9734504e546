"""Dask inputs of the out-of-core path: X, y and the weights as Dask arrays with matching row blocks, checked
from their metadata (no pass over the rows), and one summary row per block (``_per_block``).

The rows are re-blocked at fixed global offsets (``_canonical``: blocks of ``_block_rows(p)`` rows, a size that
depends on the number of columns only). Every block then holds the same rows whatever the partitioning of the
input, every reduction tree has the same shape, and so every sum, and every result, has the same bits for any
number of partitions or workers. Re-blocking costs one pass to count the rows of each partition when the
collection does not know them (a Dask DataFrame), and moves rows only between neighbouring partitions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...utils.validation import RashomonInputError

__all__ = ["is_dask", "any_dask"]

_BLOCK_BYTES = 1 << 23  # about 8 MB of X per canonical block


def _block_rows(p: int) -> int:
    """Rows per canonical block: the power of two (at least 1,024) nearest below ``_BLOCK_BYTES`` of X's rows."""
    rows = max(1, _BLOCK_BYTES // (8 * max(int(p), 1)))
    return 1 << max(10, rows.bit_length() - 1)


def _known(a: Any) -> Any:
    """``a`` with known row-chunk sizes (one counting pass when they are unknown)."""
    return a.compute_chunk_sizes() if any(np.isnan(c) for c in a.chunks[0]) else a


def _canonical(X: Any, *vs: Any) -> tuple:
    """X (2-D) and the row vectors ``vs`` (None kept) re-blocked at fixed global row offsets (module docstring)."""
    rows = _block_rows(X.shape[1])
    out = [X.rechunk({0: rows, 1: -1})]
    out += [None if v is None else v.rechunk({0: rows}) for v in vs]
    return tuple(out)


def is_dask(obj: Any) -> bool:
    """True for a Dask collection (checked through the collection protocol, without importing dask)."""
    return callable(getattr(obj, "__dask_graph__", None))


def any_dask(*objs: Any) -> bool:
    return any(is_dask(o) for o in objs)


def _frame_columns(X: Any, func: str) -> list[str]:
    """Column names of a Dask DataFrame X, checked numeric (from its metadata: no pass over the rows)."""
    import pandas as pd

    bad = [
        str(c)
        for c, dt in X.dtypes.items()
        if not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))
    ]
    if bad:
        raise RashomonInputError(
            f"The 'X' parameter of {func} must be numeric (encode categorical columns first). "
            f"Got non-numeric columns {bad} instead."
        )
    if len(X.columns) < 1:
        raise RashomonInputError(
            f"The 'X' parameter of {func} must be an array with at least one column. Got 0 columns instead."
        )
    return [str(c) for c in X.columns]


def _as_columns(X: Any, func: str) -> tuple[Any, list[str] | None]:
    """X as a 2-D dask array (one chunk across columns) and its column names."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, dd.DataFrame):
        columns = _frame_columns(X, func)
        arr = X.to_dask_array()
    elif isinstance(X, da.Array):
        columns, arr = None, X
    else:
        raise RashomonInputError(
            f"The 'X' parameter of {func} must be a Dask array or DataFrame when any input is a "
            f"Dask collection. Got {type(X).__name__} instead."
        )
    if arr.ndim != 2:
        raise RashomonInputError(
            f"The 'X' parameter of {func} must be 2-D, of shape (n_samples, n_features). Got an "
            f"array with {arr.ndim} dimension(s) instead."
        )
    if arr.shape[1] < 1:
        raise RashomonInputError(
            f"The 'X' parameter of {func} must be an array with at least one column. Got 0 columns instead."
        )
    if arr.numblocks[1] > 1:
        arr = arr.rechunk({1: -1})
    return arr, columns


def _as_vector(v: Any, X: Any, param: str, func: str) -> Any:
    """A 1-D dask array with X's row blocks (a numpy vector is chunked like X when X's chunks are known)."""
    import dask.array as da
    import dask.dataframe as dd

    if v is None:
        return None
    if isinstance(v, dd.DataFrame):
        if len(v.columns) != 1:
            raise RashomonInputError(
                f"The '{param}' parameter of {func} must be 1-D. Got a DataFrame with {len(v.columns)} columns instead."
            )
        v = v[v.columns[0]]
    if isinstance(v, dd.Series):
        v = v.to_dask_array()
    elif not isinstance(v, da.Array):
        if any(np.isnan(c) for c in X.chunks[0]):
            raise RashomonInputError(
                f"The '{param}' parameter of {func} must be a Dask Series or array from the same "
                f"collection as X (X's partition lengths are unknown). Got {type(v).__name__} "
                "instead."
            )
        v = np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v)
        v = da.from_array(
            v.reshape(len(v), -1)[:, 0] if v.ndim == 2 and v.shape[1] == 1 else v,
            chunks=(X.chunks[0],) + ((-1,) * (v.ndim - 1)),
        )
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1:
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be 1-D. Got an array of shape {v.shape} instead."
        )
    known = not any(np.isnan(c) for c in X.chunks[0] + v.chunks[0])
    if known and v.shape[0] != X.shape[0]:
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be of the same length as X ({X.shape[0]} "
            f"rows). Got length {v.shape[0]} instead."
        )
    if known and v.chunks[0] != X.chunks[0]:
        v = v.rechunk((X.chunks[0],))
    if v.numblocks[0] != X.numblocks[0]:
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be partitioned like X ({X.numblocks[0]} "
            f"partitions). Got {v.numblocks[0]} instead; take X and {param} from the same "
            "DataFrame."
        )
    return v


def _as_arrays(X: Any, y: Any, w: Any, func: str):
    """``(X, y, w, columns)`` as dask arrays with matching row blocks.

    A DataFrame X with y (and w) Series of a Dask DataFrame is read as one frame
    (``X.assign(...)``), so a Parquet reader yields the same partitions for all of them (it may
    otherwise fuse the partitions of a single column differently).
    """
    import dask.dataframe as dd
    import pandas as pd

    for name, v in (("y", y), ("sample_weight", w)):  # from the metadata: no pass over the rows
        dtypes = [] if v is None else list(v.dtypes) if isinstance(v, dd.DataFrame) else [getattr(v, "dtype", None)]
        bad = [
            dt
            for dt in dtypes
            if dt is not None and not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))
        ]
        if bad or any(getattr(dt, "kind", "") == "c" for dt in dtypes):
            raise RashomonInputError(
                f"The '{name}' parameter of {func} must be numeric (real-valued). Got values of "
                f"type {(bad or dtypes)[0]} instead."
            )
    frames = isinstance(X, dd.DataFrame) and all(v is None or isinstance(v, (dd.Series, dd.DataFrame)) for v in (y, w))
    if not frames:
        Xd, columns = _as_columns(X, func)
        yd, wd = (_as_vector(v, Xd, name, func) for v, name in ((y, "y"), (w, "sample_weight")))
        Xd, yd, wd = (None if v is None else _known(v) for v in (Xd, yd, wd))
        return (*_canonical(Xd, yd, wd), columns)
    columns = _frame_columns(X, func)
    extra = {}
    for name, v in (("y", y), ("sample_weight", w)):
        if v is None:
            continue
        if isinstance(v, dd.DataFrame):
            if len(v.columns) != 1:
                raise RashomonInputError(
                    f"The '{name}' parameter of {func} must be 1-D. Got a DataFrame with "
                    f"{len(v.columns)} columns instead."
                )
            v = v[v.columns[0]]
        extra[f"__rashomon_{name}__"] = v
    try:
        frame = X.assign(**extra)
        arr = canonical_array(frame, list(frame.columns), len(columns))
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise RashomonInputError(
            f"The 'y' and 'sample_weight' parameters of {func} must be columns of the same Dask "
            f"DataFrame as X (partitioned alike). Got {exc} instead."
        ) from None
    p = len(columns)
    return arr[:, :p], arr[:, p], (arr[:, p + 1] if w is not None else None), columns


def _per_block(fn, X, y, w, size: int, **kwargs):
    """One row of ``size`` values per row block of (X, y, w) (blocks matched by position)."""
    import dask.array as da

    args = [X, "ij", y, "i"] + ([] if w is None else [w, "i"])
    return da.blockwise(
        fn,
        "ik",
        *args,
        new_axes={"k": size},
        adjust_chunks={"i": 1},
        concatenate=True,
        align_arrays=False,
        dtype=float,
        meta=np.empty((0, 0)),
        **kwargs,
    )


def _reduce_rows(blocks: Any, merge: Any) -> Any:
    """The summary rows of every block merged in one ``dask.array.reduction`` tree (lazy; ``merge`` merges rows)."""
    import dask.array as da

    return da.reduction(
        blocks,
        lambda b, axis, keepdims: b,
        merge,
        axis=0,
        keepdims=True,
        combine=merge,
        dtype=float,
        concatenate=True,
        meta=np.empty((0, 0)),
    )


def _merge_halves(merge: Any, K: int) -> Any:
    """``merge`` applied to rows holding two summaries side by side (columns ``[:K]`` and ``[K:]``)."""

    def both(rows, axis=None, keepdims=True):
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        out = np.concatenate([merge(rows[:, :K]), merge(rows[:, K:])], axis=1)
        return out if keepdims else out[0]

    return both


def canonical_array(frame: Any, columns: list, p: int | None = None) -> Any:
    """The columns of a Dask DataFrame as one Dask array re-blocked at fixed global row offsets.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The table (numeric columns).
    columns : list of str
        The columns to take, in this order.
    p : int, optional
        The number of columns that sets the block size (default: all of them; the design's columns when the
        others are its target, weights or strata, so that every pass over the design has the same blocks).

    Returns
    -------
    dask.array.Array
        Shape (n_rows, len(columns)), in blocks of ``_block_rows(p)`` rows from row 0: the same blocks whatever
        the partitioning of ``frame`` (one pass counts the partitions' rows).
    """
    arr = frame[list(columns)].to_dask_array(lengths=True)
    return arr.rechunk({0: _block_rows(len(columns) if p is None else p), 1: -1})


def block_sums(arr: Any, fn: Any, size: int) -> np.ndarray:
    """``fn`` of every row block of a Dask array (a vector of ``size`` sums each), added over a fixed tree.

    Parameters
    ----------
    arr : dask.array.Array
        A 2-D array, e.g. from :func:`canonical_array`.
    fn : callable
        ``fn(block) -> ndarray of shape (size,)`` for a NumPy block of rows.
    size : int
        The length of ``fn``'s output.

    Returns
    -------
    ndarray of shape (size,)
        The sum over blocks; the same bits for the same blocks, whatever the scheduler or the number of workers.
    """
    parts = arr.map_blocks(
        lambda b: np.asarray(fn(b), dtype=float).reshape(1, size),
        chunks=((1,) * arr.numblocks[0], (size,)),
        dtype=float,
    )
    return np.asarray(parts.sum(axis=0).compute(), dtype=float)
