"""The kernel class on Dask input: ``RashomonSet(KernelModelClass(dictionary=m), ε).fit(dask_X, dask_y)``.

The set is the in-memory set, built from passes over the partitions (whatever scheduler is active):

1. one pass gives the row statistics of ``[X, y, w]`` (checks, the mean of y for μ, the mean
   variance of X for the default bandwidth grid) and a sample of every partition's unique rows; with
   ``dictionary`` an int, two more passes draw the seeded subset of the sorted unique rows range by range
   (``_dask_draw.py``): the same dictionary as in memory, with memory bounded per task. ``dictionary=None``
   (every unique row) merges them all on one worker; points given as an array need no pass;
2. one pass gives, for every bandwidth of the grid, the statistics of ``[Φ, y]`` with
   ``Φ = k(X, D)W`` the class's features (Σw, means, centred co-moments merged exactly);
3. when the penalty is chosen by leave-one-out error, one more pass sums the leave-one-out errors of
   every (bandwidth, penalty) at once. Every row is its own leave-out unit (as on the linear path):
   the in-memory fit leaves copies of a row out together, so the two agree on data without
   duplicate rows.

Then the bandwidth, the penalty, the reference, the norm bound, e_orig, e_min and ε_abs follow with
no further pass; every e_switch (a group, optionally within strata given as a Dask column) is one
pass of block sums (``_dask_kernel_rows.py``). Not on Dask: a callable kernel (its all-pairs
e_switch does not reduce), ``gamma="nadaraya_watson"`` (cross-validation over row pairs) and
``e_switch="divide"`` (pairs rows across partitions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model_classes import ClassMember, KernelModelClass, KernelParametrization, kernel_norm_bound
from ...utils.validation import RashomonInputError
from .._row_statistics import RowStatistics, block_statistics, loo_block, merge_statistics, packed_size
from ._dask_draw import capped_dictionary, draw_dictionary, partition_sample
from ._dask_inputs import _as_arrays, _per_block, _reduce_rows
from ._dask_kernel_rows import DaskKernelParametrization, DaskKernelRows, _key, _sub_rows, feature_statistics, orig_form

__all__ = ["fit_dask_kernel", "dask_dictionary", "kernel_member_loss"]


def _check_kernel_fit(rs: Any, func: str) -> None:
    mc = rs.model_class
    if rs.loss_ != "squared_error":
        raise RashomonInputError(
            f"The 'loss' parameter of {func} must be 'squared_error' for a KernelModelClass. Got {rs.loss_!r} instead."
        )
    mc._check(func)
    why = None
    if callable(mc.kernel):
        why = ("kernel", "'rbf' or 'laplacian'", "a callable (its all-pairs e_switch does not reduce over partitions)")
    elif mc.gamma == "nadaraya_watson":
        why = ("gamma", "a float > 0 or None", "'nadaraya_watson' (it cross-validates over pairs of rows)")
    elif mc.e_switch != "exact":
        why = ("e_switch", "'exact'", "'divide' (it pairs rows across partitions)")
    if why is not None:
        raise RashomonInputError(
            f"The '{why[0]}' parameter of KernelModelClass must be {why[1]} when X is a Dask collection. Got "
            f"{why[2]} instead; compute X first (X.compute()) for this class."
        )
    ref = rs.reference
    if ref is not None and not (
        isinstance(ref, ClassMember) and isinstance(ref.parametrization_, KernelParametrization)
    ):
        raise RashomonInputError(
            f"The 'reference' parameter of {func} must be None or a member fitted by a KernelModelClass "
            f"(model_class.fit_reference) when X is a Dask collection. Got {type(ref).__name__} instead."
        )


def _unique(*parts: Any) -> np.ndarray:
    return np.unique(np.concatenate([np.asarray(b, dtype=float) for b in parts]), axis=0)


def _unique_rows(Xd: Any, split_every: int = 8) -> Any:
    """The sorted unique rows of X (``np.unique(X, axis=0)``), merged up a tree of delayed tasks."""
    import dask

    parts = [dask.delayed(_unique)(b) for b in Xd.to_delayed().ravel()]
    while len(parts) > 1:
        parts = [dask.delayed(_unique)(*parts[i : i + split_every]) for i in range(0, len(parts), split_every)]
    return parts[0]


def _loo_pass(data: tuple, mc: KernelModelClass, D: np.ndarray, jobs: list) -> list:
    """Σ w (e / (1 - h))² of every job's penalties (``loo_block`` on the features): one pass."""
    import dask

    Xd, yd, wd = data

    def block_fn(g, W, mu_y, zm, ym, V, sv, uty, shrink, Wsum, free):
        def fn(xb, yb, wb=None):
            xb = np.asarray(xb, dtype=float)
            yb = np.asarray(yb, dtype=float).reshape(-1) - mu_y
            step, out = _sub_rows(len(D)), np.zeros((1, shrink.shape[1]))
            for s in range(0, len(yb), step):
                Z = mc._k(xb[s : s + step], D, g) @ W
                wsub = None if wb is None else wb[s : s + step]
                out += loo_block(Z, yb[s : s + step], wsub, 0.0, 1.0, zm, ym, V, sv, uty, shrink, Wsum, free)
            return out

        return fn

    lazy = [_per_block(block_fn(*job), Xd, yd, wd, job[8].shape[1]).sum(axis=0) for job in jobs]
    return [np.asarray(o) for o in dask.compute(*lazy)]


def _ridge_pieces(st: RowStatistics, mu_y: float, free: bool):
    """``(zm, ym, G, h)``: the (centred when the intercept is free) Gram matrix and cross-product of ridge on Φ."""
    W, m, C = st.weight_sum, st.mean, st.comoment
    d = len(m) - 1
    zm = m[:d].copy() if free else np.zeros(d)
    ym = float(m[d] - mu_y) if free else 0.0
    dz, dy = m[:d] - zm, (m[d] - mu_y) - ym
    return zm, ym, C[:d, :d] + W * np.outer(dz, dz), C[:d, d] + W * dz * dy


def _select(mc, st, fst, grid, maps, data, D, mu, free) -> dict:
    """``KernelModelClass.select`` from the feature statistics (``ridge_loo`` / ``ridge_fixed`` on Φ)."""
    alphas = np.logspace(-4, 3, 36) if mc.alphas is None else np.asarray(mc.alphas, dtype=float)
    if mc.alpha is not None:
        alphas = np.array([float(mc.alpha)])
    mult = st.weight_sum / st.n_positive  # each row its own leave-out unit
    a_eff = alphas * mult
    fits, jobs = [], []
    for (g, W), s in zip(maps, fst):
        zm, ym, G, h = _ridge_pieces(s, mu, free)
        s2, V = np.linalg.eigh(G)
        keep = s2 > s2.max() * G.shape[0] * np.finfo(float).eps
        s2, V = s2[keep], V[:, keep]
        sv = np.sqrt(s2)
        uty = (V.T @ h) / sv
        shrink = s2[:, None] / (s2[:, None] + a_eff[None, :])
        fits.append((zm, ym, G, h, s2, V, sv, uty))
        if mc.alpha is None or len(grid) > 1:
            jobs.append((g, W, mu, zm, ym, V, sv, uty, shrink, st.weight_sum, free))
    loos = _loo_pass(data, mc, D, jobs) if jobs else [np.array([np.nan])] * len(maps)
    best: dict = {}
    for (g, W), (zm, ym, G, h, s2, V, sv, uty), errs in zip(maps, fits, loos):
        errs = np.asarray(errs, dtype=float).reshape(-1) / st.weight_sum
        if mc.alpha is not None:
            a = float(mc.alpha)
            theta = np.linalg.solve(G + a * np.eye(len(h)), h)
            loo = float(errs[0]) if len(grid) > 1 else np.nan
        else:
            i = int(np.argmin(errs))
            a, loo = float(a_eff[i]), float(errs[i])
            theta = V @ (uty * sv / (s2 + a_eff[i]))
        icpt = ym - float(zm @ theta)
        if not best or loo < best["loo_mse"]:
            best = dict(gamma=g, alpha=a, theta=theta, intercept=mu + icpt, loo_mse=loo, W=W)
    return best


def _dictionary(mc: KernelModelClass, st: DaskKernelRows, out: dict) -> np.ndarray:
    """The dictionary: every unique row (None), the seeded draw (an int; ``_dask_draw.py``) or the given points."""
    p = st.shape[1]
    if "S" in out:
        return draw_dictionary(st.data[0], np.asarray(out["S"]), int(mc.dictionary), mc.random_state, st.n_rows)
    return mc.dictionary_points(np.asarray(out["U"]) if "U" in out else np.empty((0, p)))


def _parametrize(mc: KernelModelClass, st: DaskKernelRows, D: np.ndarray, st0: Any, func: str):
    """``KernelModelClass.parametrize`` from the statistics and the dictionary D."""
    p = st.shape[1]
    if mc.intercept == "mean":
        mu, free = float(st.mean[-1]), False
    elif mc.intercept == "free":
        mu, free = 0.0, True
    else:
        mu, free = float(mc.intercept), False
    select = mc.gamma is None or mc.norm_bound is None
    if mc.gamma is not None:
        grid = [float(mc.gamma)]
    elif mc.gammas is not None:
        grid = list(np.asarray(mc.gammas, dtype=float))
    else:
        var = np.diag(st0.comoment)[:p] / st0.weight_sum  # X.var(0) of every row (unweighted, as in memory)
        base = 1.0 / (p * max(float(var.mean()), 1e-12))
        grid = [base * f for f in (0.1, 0.3, 1.0, 3.0, 10.0)]
    maps = [(g, mc.feature_map(D, g)[0]) for g in grid]
    fst = feature_statistics(st.data, mc, D, maps, func)
    ref = _select(mc, st, fst, grid, maps, st.data, D, mu, free) if select else {}
    gamma = ref["gamma"] if ref else grid[0]
    W = ref["W"] if ref else maps[0][1]
    info: dict = {"gamma": gamma, "dictionary_size": len(D), "rank": W.shape[1], "intercept": mu}
    r, theta_ref = kernel_norm_bound(mc, ref, mu, free, info, func)
    par = DaskKernelParametrization(mc, D, gamma, W, mu, free, r, theta_ref, info)
    chosen = [i for i, (g, _) in enumerate(maps) if g == gamma][0]
    st.forms[("e_orig",) + _key(par)] = orig_form(fst[chosen], free, mu)  # no second pass for e_orig
    return par


def fit_dask_kernel(rs: Any, X: Any, y: Any, sample_weight: Any, func: str) -> Any:
    """The body of :meth:`RashomonSet.fit` for Dask input and a :class:`KernelModelClass`."""
    import dask

    _check_kernel_fit(rs, func)
    mc, ref = rs.model_class, rs.reference
    Xd, yd, wd, columns = _as_arrays(X, y, sample_weight, func)
    p = Xd.shape[1]
    own = not isinstance(ref, ClassMember)
    lazy: dict = {"st": _reduce_rows(_per_block(block_statistics, Xd, yd, wd, packed_size(p)), merge_statistics)}
    if own and mc.dictionary is None:  # every unique row: merged up a tree (held on one worker)
        lazy["U"] = _unique_rows(Xd)
    elif own and isinstance(mc.dictionary, (int, np.integer)):  # a seeded draw: two more passes, bounded memory
        lazy["S"] = partition_sample(Xd)
    if own and wd is not None and mc.gamma is None and mc.gammas is None:
        lazy["st0"] = _reduce_rows(_per_block(block_statistics, Xd, yd, None, packed_size(p)), merge_statistics)
    (out,) = dask.compute(lazy)
    import dask.dataframe as dd

    frames = None
    if isinstance(X, dd.DataFrame) and all(v is None or isinstance(v, dd.Series) for v in (y, sample_weight)):
        frames = (X, y, sample_weight)  # strata given as a column are read with these (_dask_kernel_rows.py)
    st = DaskKernelRows(np.asarray(out["st"])[0], func, columns, (Xd, yd, wd), frames)
    if not st.comoment[-1, -1] > 0:
        raise RashomonInputError(
            f"The 'y' parameter of {func} must vary. Got the constant {st.mean[-1]!r} (on every weighted row): a "
            "class with an intercept fits it exactly, so every loss ratio is 0/0."
        )
    rs.n_features_in_ = p
    if columns is not None:
        rs.feature_names_in_ = np.asarray(columns, dtype=object)
    if own:
        st0 = RowStatistics(np.asarray(out["st0"])[0], func) if "st0" in out else st
        par = _parametrize(mc, st, _dictionary(mc, st, out), st0, func)
    else:
        if ref.parametrization_.n_features != p:
            raise RashomonInputError(
                f"The 'reference' parameter of {func} was fitted on {ref.parametrization_.n_features} features; "
                f"X has {p}."
            )
        par = DaskKernelParametrization.wrap(ref.parametrization_)
    rs._columns, rs.X_, rs.y_, rs.sample_weight_ = columns, st, st, None
    rs._cache = {}
    rs.parametrization_ = par
    rs._finish_fit(func)
    return rs


def dask_dictionary(
    X: Any,
    mask: Any,
    cap: int,
    *,
    columns: list | None = None,
    random_state: Any = 0,
    n_rows: int | None = None,
    func: str = "audit",
) -> list:
    """The kernel dictionary of the rows of Dask ``X`` where the 0/1 ``mask`` is 1, for each list of column
    positions in ``columns`` (default: all): every unique row (sorted, as ``np.unique``) when there are at most
    ``cap``, else the seeded draw of ``cap`` of them (``KernelModelClass(dictionary=cap)``); memory bounded per
    task (``_dask_draw.py``); ``n_rows`` (the rows of X, when known) sizes the ranges."""
    Xd, md, _, _ = _as_arrays(X, mask, None, func)  # the mask read with X as one frame (its partitions are X's)
    if n_rows is None:  # sizes the lexicographic ranges only (memory per task), never the result
        n_rows = int(Xd.shape[0]) if not np.isnan(Xd.shape[0]) else 10**6
    cols = [list(range(Xd.shape[1]))] if columns is None else [list(c) for c in columns]
    return [capped_dictionary(Xd[:, c], md, cap, random_state, n_rows) for c in cols]


def kernel_member_loss(member: ClassMember, X: Any, y: Any, sample_weight: Any = None, *, func: str = "audit") -> float:
    """``Σ w (y - f(x))² / Σ w`` of a member of a kernel class on Dask rows: one pass (the feature statistics)."""
    Xd, yd, wd, _ = _as_arrays(X, y, sample_weight, func)
    par = member.parametrization_
    (st,) = feature_statistics((Xd, yd, wd), par.mc, par.D, [(par.gamma, par.W)], func)
    return float(orig_form(st, par.free, float(par.mu))(member.theta_))
