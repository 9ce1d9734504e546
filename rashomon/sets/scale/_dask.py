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

from ...model_classes import ClassMember, KernelModelClass, LinearModelClass, LinearParametrization
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
from ._dask_inputs import (  # noqa: F401
    _as_arrays,
    _as_columns,
    _as_vector,
    _frame_columns,
    _per_block,
    _reduce_rows,
    any_dask,
    is_dask,
)

__all__ = ["is_dask", "any_dask", "dask_row_statistics", "fit_dask", "linear_model_losses"]


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
    total = _reduce_rows(blocks, merge_statistics)
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
    """The body of :meth:`RashomonSet.fit` for Dask input: one branch per model class.

    :class:`KernelModelClass`: ``_dask_kernel.py``; the classifier classes (logistic): ``_dask_margin.py``;
    :class:`LinearModelClass` (squared loss): the row statistics below.
    """
    if isinstance(rs.model_class, KernelModelClass):  # kernel class: dictionary features, block sums
        from ._dask_kernel import fit_dask_kernel

        return fit_dask_kernel(rs, X, y, sample_weight, func)
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
            f"The 'model_class' parameter of {func} must be a LinearModelClass or a KernelModelClass "
            f"when X is a Dask collection. Got {type(rs.model_class).__name__} instead; compute X "
            "first (X.compute()) for this class."
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
