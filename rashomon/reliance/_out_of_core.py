"""Model reliance on Dask input: the closed form of a linear model from one pass of row sums, and one group of any model.

``model_reliance`` and ``feature_reliance`` route Dask arrays / DataFrames here. The exact U-statistic of a
linear model under squared loss needs nothing but sums over rows (the centred co-moments of [x, residual]).
``model_reliance`` of one group of a classifier (log loss, hinge, 0-1; a logistic member, say) takes the exact
U-statistic when the group has few distinct values and the divide estimator otherwise
(:mod:`rashomon.sets.scale._dask_reliance`; the result's ``method`` names it). The rest (permutations,
``feature_reliance`` of such models) needs the rows: a clear error (compute a sample with ``X.compute()``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..utils.losses import Predictor, resolve_loss
from ..utils.validation import RashomonInputError, check_finite, resolve_features, resolve_group
from ._linear import linear_coefficients
from ._results import FeatureRelianceResult, ModelRelianceResult, _ratio

__all__ = ["is_dask_input", "dask_reliance"]


def is_dask_input(*objs: Any) -> bool:
    """True for a Dask array / DataFrame / Series (without importing dask when it is not loaded)."""
    import sys

    if "dask" not in sys.modules:
        return False
    from ..sets.out_of_core import any_dask

    return any_dask(*objs)


def _head(X: Any, rows: int = 256) -> np.ndarray:
    import dask.dataframe as dd

    if isinstance(X, dd.DataFrame):
        return X.head(rows, npartitions=-1).to_numpy(dtype=float)
    return np.asarray(X[:rows].compute(), dtype=float)


def dask_reliance(
    estimator: Any, X: Any, y: Any, features: Any, *, loss: Any, method: str, closed_form: Any, func: str, single: bool
):
    """The exact MR of a linear model on Dask input (one feature/group, or every feature/group)."""
    import dask.dataframe as dd

    lo = resolve_loss(loss, estimator, func)
    # one group of a classifier: the exact U-statistic over few distinct values, else the divide estimator
    generic = single and method in ("exact", "divide") and lo.name in ("log_loss", "hinge", "zero_one")
    if not generic and (method != "exact" or lo.name != "squared_error" or closed_form is False):
        raise RashomonInputError(
            f"The 'X' parameter of {func} is a Dask collection: out of core, {func} computes the exact MR of a linear "
            f"model under squared loss (method='exact', loss='squared_error', closed_form='auto'), and model_reliance "
            "of one feature of a classifier (method='exact' or 'divide'). Got method="
            f"{method!r}, loss={lo.name!r}, closed_form={closed_form!r}; compute an in-memory sample (X.compute()) "
            "for others."
        )
    columns = [str(c) for c in X.columns] if isinstance(X, dd.DataFrame) else None
    if columns is not None:  # from the metadata, before any pass over the rows
        import pandas as pd

        bad = [
            str(c)
            for c, dt in X.dtypes.items()
            if not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))
        ]
        if bad:
            raise RashomonInputError(
                f"The 'X' parameter of {func} must be numeric (encode categorical columns "
                f"first). Got non-numeric columns {bad} instead."
            )
    elif getattr(X, "dtype", np.dtype(float)).kind not in "biuf":
        raise RashomonInputError(f"The 'X' parameter of {func} must be numeric. Got values of type {X.dtype} instead.")
    p = len(columns) if columns is not None else int(X.shape[1])
    head = _head(X)
    if head.ndim == 2:  # the rows the model's coefficients are read on (the full pass checks every row)
        check_finite(head, func, "X", columns)
    if head.ndim != 2 or head.shape[1] != p or head.shape[0] < 1:
        raise RashomonInputError(
            f"The 'X' parameter of {func} must be a 2-D Dask collection with rows. Got shape "
            f"{getattr(X, 'shape', None)} instead."
        )
    predictor = Predictor(estimator, lo, columns, func)
    if generic:
        return _generic(predictor, X, y, resolve_group(features, columns, p, func), lo.name, method, columns, func)
    lin = linear_coefficients(estimator, head, predictor)
    if lin is None:
        raise RashomonInputError(
            f"The 'estimator' parameter of {func} must be a linear model (coef_/intercept_, or a "
            "Pipeline of affine scalers ending in one) when X is a Dask collection: only its "
            "exact MR follows from sums over rows. Compute an in-memory sample for other models."
        )
    coef, intercept = lin
    if single:
        items = {"": resolve_group(features, columns, p, func)}
    else:
        if not (features is None or isinstance(features, (dict, list, tuple))):
            raise RashomonInputError(
                f"The 'features' parameter of {func} must be None, a list or a dict. Got {features!r} instead."
            )
        items = resolve_features(features, columns, p, func)
    from ..sets.out_of_core import linear_model_losses

    groups = list(items.values())
    e_orig, e_sw, _ = linear_model_losses(coef, intercept, X, y, groups, func=func)
    n = int(X.shape[0]) if not isinstance(X, dd.DataFrame) else int(X.map_partitions(len).sum().compute())
    results = [
        ModelRelianceResult(
            tuple(columns[i] if columns else f"x{i}" for i in g),
            tuple(g),
            "exact",
            "squared_error",
            e_orig,
            float(es),
            _ratio(es, e_orig),
            float(es - e_orig),
            n,
            closed_form=True,
            exact_algorithm="linear",
        )
        for g, es in zip(groups, e_sw)
    ]
    if single:
        return results[0]
    return FeatureRelianceResult(
        names=list(items),
        results=results,
        e_orig=e_orig,
        e_switch=np.array([r.e_switch for r in results]),
        ratio=np.array([r.ratio for r in results]),
        difference=np.array([r.difference for r in results]),
        method="exact",
        loss="squared_error",
    )


def _generic(predictor, X, y, group, loss_name, method, columns, func) -> ModelRelianceResult:
    """MR of one group of any model on Dask input (the exact estimator where it reduces over partitions, else the
    divide estimator, named in the result's ``method``)."""
    from ..sets.out_of_core import dask_reliance_losses

    e_orig, e_sw, used, n, algorithm = dask_reliance_losses(predictor, X, y, tuple(group), method=method, func=func)
    return ModelRelianceResult(
        tuple(columns[i] if columns else f"x{i}" for i in group),
        tuple(group),
        used,
        loss_name,
        e_orig,
        e_sw,
        _ratio(e_sw, e_orig),
        float(e_sw - e_orig),
        n,
        closed_form=False,
        exact_algorithm=algorithm,
    )
