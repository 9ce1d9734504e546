"""The rows of a kernel set fitted on Dask input: statistics in memory, the rows left on the cluster.

A :class:`DaskKernelRows` is what such a set keeps as ``X_`` and ``y_``: the
:class:`~rashomon.sets._row_statistics.RowStatistics` of ``[X, y]`` (Σw, means, centred
co-moments: what e_null and the checks need) and the Dask arrays the statistics came from.
:class:`DaskKernelParametrization` answers e_orig from the feature statistics of the fit, and the
exact e_switch of a group (conditional on a stratum column or not) by one pass in which every
partition contributes its block sums (:func:`~rashomon.model_classes.kernel_switch_block`, O(n·m²)
work, O(block·m + m²) memory per task); the pass's result is kept, so a group's second query costs
nothing. Row weights, projections of other estimators and queries on the fitting rows themselves
(PD band, multiplicity) need the rows and raise the error of :class:`RowStatistics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model_classes import (
    KernelModelClass,
    KernelParametrization,
    Quadratic,
    kernel_switch_block,
    kernel_switch_from_sums,
    kernel_switch_size,
)
from ...utils.validation import RashomonInputError
from .._row_statistics import RowStatistics, block_statistics, member_theta, merge_statistics, packed_size
from ._dask_inputs import _as_vector, _per_block, _reduce_rows, canonical_array, is_dask

__all__ = ["DaskKernelRows", "DaskKernelParametrization", "dask_strata", "feature_statistics"]

_SUB_BYTES = 32 * 2**20  # kernel rows of one sub-block of a partition


class DaskKernelRows(RowStatistics):
    """:class:`RowStatistics` of ``[X, y]`` with the Dask arrays ``(X, y, w)`` they summarise.

    ``forms`` keeps the quadratics already computed (e_orig of a parametrisation, e_switch of a
    group), keyed by the parametrisation's bandwidth, dictionary and feature map.
    """

    def __init__(self, packed: np.ndarray, func: str, columns: list[str] | None, data: tuple, frames: Any = None):
        super().__init__(packed, func, columns)
        self.data, self.frames = data, frames  # frames: (X, y, w) as Dask DataFrame / Series, when given so
        self.forms: dict = {}

    def __repr__(self) -> str:
        return f"DaskKernelRows(n_rows={self.n_rows}, n_features={self.shape[1]})"


def _key(par: KernelParametrization) -> tuple:
    return (float(par.gamma), par.D.tobytes(), par.W.tobytes(), bool(par.free), float(par.mu))


def dask_strata(strata: Any, rows: Any, func: str) -> Any:
    """``strata`` (a Dask Series or 1-D array partitioned like X) checked against a set's rows."""
    if not isinstance(rows, DaskKernelRows):
        raise RashomonInputError(
            f"The 'strata' parameter of {func} may be a Dask collection only for a kernel set fitted on Dask "
            f"input. Got a Dask {type(strata).__name__} instead; compute it first (strata.compute())."
        )
    import dask.dataframe as dd

    if isinstance(strata, dd.DataFrame):
        raise RashomonInputError(
            f"The 'strata' parameter of {func} must be one label per row (a Dask Series). Got a Dask DataFrame "
            f"with {len(strata.columns)} columns instead."
        )
    if isinstance(strata, dd.Series) and rows.frames is not None:
        return strata  # read with X as one frame in the pass (a Parquet reader may fuse one column's partitions)
    return _as_vector(strata, rows.data[0], "strata", func)


def _coded(levels: np.ndarray):
    def fn(b):
        return np.searchsorted(levels, np.asarray(b).reshape(-1)).astype(float)

    return fn


def _with_strata(rows: DaskKernelRows, strata: Any, levels: np.ndarray, func: str) -> tuple:
    """``(X, y, w, codes)`` as Dask arrays from one frame: X's frame with y, w and the strata's codes."""
    X, y, w = rows.frames
    p = len(X.columns)
    extra = {"__rashomon_y__": y, "__rashomon_strata__": strata.map_partitions(_coded(levels), meta=(None, float))}
    if w is not None:
        extra["__rashomon_w__"] = w
    try:
        frame = X.assign(**extra)
        arr = canonical_array(frame, list(frame.columns), p)  # the fit's blocks (._dask_inputs)
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise RashomonInputError(
            f"The 'strata' parameter of {func} must be a column of the same Dask DataFrame as X (partitioned "
            f"alike). Got {exc} instead."
        ) from None
    return arr[:, :p], arr[:, p], (arr[:, p + 2] if w is not None else None), arr[:, p + 1]


def _levels(strata: Any) -> np.ndarray:
    import dask

    if not is_dask(strata):
        return np.unique(np.asarray(strata))
    (parts,) = dask.compute([dask.delayed(np.unique)(b) for b in np.ravel(strata.to_delayed())])
    return np.unique(np.concatenate(parts))


def switch_pass(par: KernelParametrization, rows: DaskKernelRows, group: tuple, strata: Any, func: str) -> Quadratic:
    """The exact e_switch of ``group`` over every row (within ``strata`` when given): one pass."""
    import dask
    import dask.array as da
    import dask.dataframe as dd

    Xd, yd, wd = rows.data
    levels = None
    if strata is not None:
        if not is_dask(strata):
            strata = _as_vector(np.asarray(strata), Xd, "strata", func)
        levels = _levels(strata)
        if isinstance(strata, dd.Series):
            Xd, yd, wd, strata = _with_strata(rows, strata, levels, func)
        else:
            strata = strata.map_blocks(_coded(levels), dtype=float)
    n_lev = 1 if levels is None else len(levels)
    size = kernel_switch_size(par.D.shape[0], par.dim)
    mu = float(par.mu)

    def fn(xb, yb, *rest):
        xb = np.asarray(xb, dtype=float)
        res = np.asarray(yb, dtype=float).reshape(-1) - mu
        wb = np.asarray(rest[0], dtype=float).reshape(-1) if wd is not None else np.ones(len(res))
        codes = None if levels is None else np.asarray(rest[-1], dtype=float).reshape(-1).astype(np.intp)
        if codes is not None and len(codes) != len(res):
            raise RashomonInputError(
                f"The 'strata' parameter of {func} must have one label per row of X in every partition (the same "
                f"length as X). Got {len(codes)} labels for a partition of {len(res)} rows instead."
            )
        return kernel_switch_block(par, xb, res, wb, group, codes, n_lev).reshape(1, -1)

    args = [Xd, "ij", yd, "i"] + ([] if wd is None else [wd, "i"]) + ([] if strata is None else [strata, "i"])
    blocks = da.blockwise(
        fn,
        "ik",
        *args,
        new_axes={"k": n_lev * size},
        adjust_chunks={"i": 1},
        concatenate=True,
        align_arrays=False,
        dtype=float,
        meta=np.empty((0, 0)),
    )
    (sums,) = dask.compute(blocks.sum(axis=0))
    sums = np.asarray(sums).reshape(n_lev, size)
    if levels is None:
        nw, q = kernel_switch_from_sums(par, sums[0])
        if q is None:  # pragma: no cover - the fit already needs Σw > 1
            raise RashomonInputError(f"{func}: fewer than two weighted rows; nothing can be switched.")
        return q
    acc, total = None, 0.0
    for s in range(n_lev):  # strata with at least two rows, weights n_s / n' (as in memory)
        ng, q = kernel_switch_from_sums(par, sums[s])
        if q is None:
            continue
        acc = (
            [ng * q.Q, ng * q.c, ng * q.k] if acc is None else [acc[0] + ng * q.Q, acc[1] + ng * q.c, acc[2] + ng * q.k]
        )
        total += ng
    if acc is None:
        raise RashomonInputError("The 'strata' have no stratum with two or more rows; nothing can be switched.")
    return Quadratic(acc[0] / total, acc[1] / total, float(acc[2] / total))


class DaskKernelParametrization(KernelParametrization):
    """A :class:`~rashomon.model_classes.KernelParametrization` that also builds its quadratics from
    :class:`DaskKernelRows` (passed in place of X); on arrays it behaves as its parent."""

    @classmethod
    def wrap(cls, par: KernelParametrization) -> DaskKernelParametrization:
        if isinstance(par, cls):
            return par
        new = cls(par.mc, par.D, par.gamma, par.W, par.mu, par.free, par.r, par.reference_theta, par.info)
        for name in ("feature_names_in_",):
            if hasattr(par, name):
                setattr(new, name, getattr(par, name))
        new.base = par
        return new

    def e_orig(self, X, y, w=None, cache=None) -> Quadratic:
        if not isinstance(X, DaskKernelRows):
            return super().e_orig(X, y, w, cache)
        if w is not None:
            X._raw_rows()
        key = ("e_orig",) + _key(self)
        if key not in X.forms:
            (st,) = feature_statistics(X.data, self.mc, self.D, [(self.gamma, self.W)], "RashomonSet.fit")
            X.forms[key] = orig_form(st, self.free, float(self.mu))
        return X.forms[key]

    def e_switch(self, X, y, w, group, strata=None, cache=None) -> Quadratic:
        if not isinstance(X, DaskKernelRows):
            return super().e_switch(X, y, w, group, strata, cache)
        if w is not None:
            X._raw_rows()
        func = "RashomonSet.model_class_reliance"
        if strata is not None:
            return switch_pass(self, X, tuple(group), strata, func)
        key = ("e_switch", tuple(group)) + _key(self)
        if key not in X.forms:
            X.forms[key] = switch_pass(self, X, tuple(group), None, func)
        return X.forms[key]

    def prediction_map(self, X):
        if isinstance(X, DaskKernelRows):
            X._raw_rows()
        return super().prediction_map(X)

    def project(self, estimator: Any, X: Any, func: str, columns: list[str] | None = None, rtol: float = 1e-6):
        if not isinstance(X, DaskKernelRows):
            return super().project(estimator, X, func, columns, rtol)
        return member_theta(self, estimator, func)


def orig_form(st: RowStatistics, free: bool, mu: float) -> Quadratic:
    """e_orig from the statistics of ``[Φ, y]`` (Φ = k(X, D)W): ``Σ w φφ'``, ``Σ w rφ``, ``Σ w r²`` over Σw,
    with ``φ = [1, Φ]`` when the intercept is free and r = y - μ."""
    W, m, C = st.weight_sum, st.mean, st.comoment
    d = len(m) - 1
    mz, dy = m[:d], m[d] - mu
    G = C[:d, :d] + W * np.outer(mz, mz)
    g = C[:d, d] + W * mz * dy
    if free:
        G = np.block([[np.full((1, 1), W), W * mz[None]], [W * mz[:, None], G]])
        g = np.r_[W * dy, g]
    return Quadratic(G / W, g / W, float(C[d, d] / W + dy * dy))


def _sub_rows(m: int) -> int:
    return max(1, int(_SUB_BYTES // (8 * max(m, 1))))


def _features_block(mc: KernelModelClass, D: np.ndarray, gamma: float, W: np.ndarray):
    def fn(xb, yb, wb=None):
        xb = np.asarray(xb, dtype=float)
        yb = np.asarray(yb, dtype=float).reshape(-1)
        step = _sub_rows(len(D))
        rows = [
            block_statistics(
                mc._k(xb[s : s + step], D, gamma) @ W, yb[s : s + step], None if wb is None else wb[s : s + step]
            )
            for s in range(0, max(len(yb), 1), step)
        ]
        return merge_statistics(np.vstack(rows))

    return fn


def feature_statistics(data: tuple, mc: KernelModelClass, D: np.ndarray, maps: list, func: str) -> list:
    """:class:`RowStatistics` of ``[k(X, D; γ)W, y]`` for every ``(γ, W)`` of ``maps``: one pass."""
    import dask

    Xd, yd, wd = data
    lazy = [
        _reduce_rows(_per_block(_features_block(mc, D, g, W), Xd, yd, wd, packed_size(W.shape[1])), merge_statistics)
        for g, W in maps
    ]
    out = dask.compute(*lazy)
    return [RowStatistics(np.asarray(o)[0], func) for o in out]
