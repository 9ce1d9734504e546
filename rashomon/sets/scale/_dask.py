"""Out-of-core and distributed fits: Dask arrays and DataFrames through sufficient statistics.

``RashomonSet(LinearModelClass(), ε).fit(X, y)`` with X a ``dask.array.Array`` or a
``dask.dataframe.DataFrame`` (e.g. ``dask.dataframe.read_parquet``) never holds the rows:

1. one pass summarises every chunk of ``[X, y, w]`` (:func:`~._row_statistics.block_statistics`:
   Σw, weighted means, centred co-moments, counts of non-finite values) and merges the
   summaries with a ``dask.array.reduction`` tree (exact, each chunk centred at its own mean);
2. with ``norm_bound=None`` a second pass sums the leave-one-out errors of the ridge
   reference for every penalty at once (per-row leverages from the eigendecomposition of the
   p × p Gram matrix, :func:`~._row_statistics.loo_block`).

The set then keeps a :class:`~._row_statistics.RowStatistics` (O(p²)) in place of X and y,
and every unconditional query (``model_class_reliance``, ``envelope``, ``problem``) is
answered from it. Whatever scheduler is active runs the passes: threads on one machine by
default, a ``dask.distributed`` cluster when a ``Client`` exists (nothing here starts
workers). Dask is imported only when a Dask collection is passed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model_classes import ClassMember, LinearModelClass, LinearParametrization
from ...utils.validation import RashomonInputError
from .._row_statistics import (
    RowStatistics,
    StatisticsParametrization,
    block_statistics,
    loo_block,
    merge_statistics,
    packed_size,
    statistics_parametrization,
)

__all__ = ["is_dask", "any_dask", "dask_row_statistics", "fit_dask", "linear_model_losses"]


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
        return Xd, _as_vector(y, Xd, "y", func), _as_vector(w, Xd, "sample_weight", func), columns
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
        arr = X.assign(**extra).to_dask_array()
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


def dask_row_statistics(
    X: Any,
    y: Any,
    sample_weight: Any = None,
    *,
    func: str = "RashomonSet.fit",
    residual: tuple[np.ndarray, float] | None = None,
):
    """``(RowStatistics, (X, y, w) as dask arrays, columns)``: one pass over the rows.

    With ``residual=(coef, intercept)`` the last column summarised is the residual
    ``y - intercept - x'coef`` of that linear model instead of y.
    """
    import dask
    import dask.array as da

    Xd, yd, wd, columns = _as_arrays(X, y, sample_weight, func)
    K = packed_size(Xd.shape[1])
    fn = block_statistics
    if residual is not None:
        coef, icpt = np.asarray(residual[0], dtype=float), float(residual[1])
        if coef.shape != (Xd.shape[1],):
            raise RashomonInputError(
                f"The 'estimator' parameter of {func} has {coef.size} coefficients; X has {Xd.shape[1]} columns."
            )

        def fn(xb, yb, wb=None):
            xb = np.asarray(xb, dtype=float)
            return block_statistics(xb, np.asarray(yb, dtype=float).reshape(-1) - icpt - xb @ coef, wb)

    blocks = _per_block(fn, Xd, yd, wd, K)
    total = da.reduction(
        blocks,
        lambda b, axis, keepdims: b,
        merge_statistics,
        axis=0,
        keepdims=True,
        combine=merge_statistics,
        dtype=float,
        concatenate=True,
        meta=np.empty((0, 0)),
    )
    (packed,) = dask.compute(total)
    return RowStatistics(np.asarray(packed)[0], func, columns), (Xd, yd, wd), columns


def _loo_pass(data, st: RowStatistics):
    """The ``loo_errors`` callback of :func:`statistics_parametrization`: one more pass (a dask sum)."""
    import dask

    Xd, yd, wd = data

    def loo_errors(mu, sd, cz, cy, V, sv, uty, shrink, fit_intercept):
        def fn(xb, yb, wb=None):
            return loo_block(xb, yb, wb, mu, sd, cz, cy, V, sv, uty, shrink, st.weight_sum, fit_intercept)

        (out,) = dask.compute(_per_block(fn, Xd, yd, wd, shrink.shape[1]).sum(axis=0))
        return np.asarray(out)

    return loo_errors


def fit_dask(rs: Any, X: Any, y: Any, sample_weight: Any, func: str) -> Any:
    """The body of :meth:`RashomonSet.fit` for Dask input (squared loss, :class:`LinearModelClass`)."""
    if rs.loss_ in ("log_loss", "hinge"):  # the classifier classes: ._dask_margin
        from ._dask_margin import fit_dask_margin

        Xd, yd, _, columns = _as_arrays(X, y, None, func)
        return fit_dask_margin(rs, Xd, yd, columns, sample_weight, func)
    _check_statistics_fit(rs, func)
    st, data, columns = dask_row_statistics(X, y, sample_weight, func=func)
    return fit_statistics(rs, st, columns, func, data)


def _check_statistics_fit(rs: Any, func: str) -> None:
    if rs.loss_ != "squared_error":
        whose = "" if rs.loss is not None else f" (the loss of {type(rs.model_class).__name__})"
        raise RashomonInputError(
            f"The 'loss' parameter of {func} must be 'squared_error' when X is a Dask collection "
            f"(only the squared loss reduces to sufficient statistics). Got {rs.loss_!r}{whose} "
            "instead; compute X first (X.compute()) for this loss."
        )
    if not isinstance(rs.model_class, LinearModelClass):
        raise RashomonInputError(
            f"The 'model_class' parameter of {func} must be a LinearModelClass when X is a Dask "
            f"collection. Got {type(rs.model_class).__name__} instead; compute X first "
            "(X.compute()) for a kernel class."
        )
    ref = rs.reference
    if ref is not None and not isinstance(ref, ClassMember):
        raise RashomonInputError(
            f"The 'reference' parameter of {func} must be None or a member fitted by the class "
            "(model_class.fit_reference) when X is a Dask collection. Got "
            f"{type(ref).__name__} instead."
        )


def fit_statistics(rs: Any, st: RowStatistics, columns: list[str] | None, func: str, data: Any = None) -> Any:
    """Finish :meth:`RashomonSet.fit` from the rows' :class:`RowStatistics` (no pass over the rows).

    ``data`` (the dask arrays the statistics came from) is needed only for the ridge reference's
    leave-one-out pass (``norm_bound=None`` and no ``reference``).
    """
    if not hasattr(rs, "loss_"):
        rs.loss_ = rs._check_params(func)
        _check_statistics_fit(rs, func)
    ref = rs.reference
    rs.n_features_in_ = st.shape[1]
    if columns is not None:
        rs.feature_names_in_ = np.asarray(columns, dtype=object)
    if isinstance(ref, ClassMember):
        par = ref.parametrization_
        if par.n_features != st.shape[1]:
            raise RashomonInputError(
                f"The 'reference' parameter of {func} was fitted on {par.n_features} features; X has {st.shape[1]}."
            )
        if not isinstance(par, LinearParametrization):
            raise RashomonInputError(
                f"The 'reference' parameter of {func} must be a member of a LinearModelClass "
                f"when X is a Dask collection. Got a member of {par.class_name} instead."
            )
        par = StatisticsParametrization.wrap(par)
    else:
        par = statistics_parametrization(
            rs.model_class, st, None if data is None else _loo_pass(data, st), func, columns
        )
    # the rows are summarised: X_ and y_ are the O(p²) statistics (no weights left to apply)
    rs._columns, rs.X_, rs.y_, rs.sample_weight_ = columns, st, st, None
    rs._cache = {}
    rs.parametrization_ = par
    rs._finish_fit(func)
    return rs


def linear_model_losses(
    coef: Any, intercept: float, X: Any, y: Any, groups: list, *, func: str = "model_reliance"
) -> tuple[float, list[float], list[str] | None]:
    """Exact ``(e_orig, [e_switch of each group], columns)`` of ``f(x) = intercept + x'coef`` under
    squared loss, in one pass over Dask input.

    With residuals ``e = y - f(x)`` and ``u = x_G'coef_G`` (centred sums ``S``), the all-pairs
    ``e_switch = e_orig + 2 (S_uu + S_eu) / (n - 1)``: the centred co-moments of ``[x, e]``
    (one :func:`dask_row_statistics` pass with ``residual=``) give every group.
    """
    st, _, columns = dask_row_statistics(X, y, None, func=func, residual=(coef, intercept))
    coef = np.asarray(coef, dtype=float)
    n, p, C = st.weight_sum, st.shape[1], st.comoment
    e_orig = float(C[p, p] / n + st.mean[p] ** 2)
    out = []
    for g in groups:
        g = list(g)
        bg = coef[g]
        s_uu = float(bg @ C[np.ix_(g, g)] @ bg)
        s_eu = float(bg @ C[g, p])
        out.append(e_orig + 2.0 * (s_uu + s_eu) / (n - 1))
    return e_orig, out, columns
