"""The audit on a Dask DataFrame (out of core): the linear class from sufficient statistics, in three passes.

1. Checks (:func:`~._dask_table.check_table`): dtypes, missing and infinite values, categorical levels,
   0/1 columns, row counts.
2. One pass over the encoded partitions gives the statistics (Σw, means, centred co-moments of
   ``[x, y]``) of the training part and of the held-out part at once (the split as 0/1 row weights).
   The standardisation of the numeric non-0/1 columns (training mean and population sd, as in memory)
   is applied to these statistics, not to the rows.
3. One pass gives the exact leave-one-out error of ridge (penalty ``α·||β||²`` on the standardised
   design, dummies kept 0/1: the in-memory audit's ``Ridge``) for every α of the grid, for the full
   design and for every group's refit without it.

Then, with no further pass: α minimises the leave-one-out MSE, which is the CV loss of the ε rule
(ε_abs = held-out loss of the reference + ``epsilon`` × that MSE); the class is ``||β||² <=`` the ridge
fit's; its reference is the training loss minimiser over that ball (``fit_reference`` from statistics)
and is passed as ``reference=`` to the set on the held-out statistics; MR, MCR− and MCR+ per group as in
memory. No bootstrap (the resamples would need the held-out rows in memory).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from ..model_classes import LinearModelClass
from ..sets import RashomonSet
from ..sets.out_of_core import (
    dask_split_statistics,
    fit_statistics,
    reference_from_statistics,
    ridge_loo_statistics,
    transform_statistics,
)
from ..utils.validation import RashomonInputError, seed_from
from . import _fit
from ._checks import _check_train_size, check_split_train_size
from ._dask_audit_kernel import kernel_audit_dask, kernel_result
from ._dask_audit_logistic import check_binary_target, logistic_audit_dask, logistic_result
from ._dask_table import MASK, TARGET, check_table, encode_partition
from ._fit import MCR_TOL
from ._results import AuditResult, GroupAudit, audit_meta

__all__ = ["audit_dask"]


def _check_supported(model_class: str, bootstrap: int, func: str) -> None:
    if model_class not in ("linear", "kernel", "logistic", "hinge"):
        raise RashomonInputError(
            f"The 'model_class' parameter of {func} must be 'linear', 'kernel' or 'logistic' when data is a Dask "
            f"DataFrame (or a Parquet path read through Dask): out of core, these classes reduce to sums over rows. "
            f"Got {model_class!r} instead; pass model_class='linear' (--model-class linear), or sample the table "
            "into memory (data.sample(frac=...).compute())."
        )
    if bootstrap:
        raise RashomonInputError(
            f"The 'bootstrap' parameter of {func} must be 0 when data is a Dask DataFrame: bootstrap intervals resample "
            f"the held-out rows, which an out-of-core audit never holds. Got {bootstrap} instead; pass bootstrap=0, or "
            "run the bootstrap on an in-memory sample of the table."
        )


def audit_dask(
    ddf: Any,
    target: Any,
    groups: Any,
    *,
    features: Any,
    model_class: str,
    epsilon: float,
    epsilon_kind: str,
    train_size: Any,
    bootstrap: int,
    confidence_level: float,
    random_state: Any,
    progress: Any,
    provenance: str,
    drop_missing: bool,
    split: str | None,
    digest: str | None,
    input_name: str,
    t_start: float,
    func: str = "audit",
    cv: int = 10,
    positive_label: Any = None,
    classifier_options: tuple = (0.5, 500),
) -> AuditResult:
    """The body of :func:`~rashomon.audit` for a Dask DataFrame (options already checked)."""
    import dask.dataframe as dd

    if not isinstance(ddf, dd.DataFrame):
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be a DataFrame, a Dask DataFrame or a CSV or "
            f"Parquet path. Got {type(ddf).__name__} instead."
        )
    _check_supported(model_class, bootstrap, func)
    check_split_train_size(split, train_size, func)
    timings: dict = {}
    t0 = time.perf_counter()
    with progress.phase("checking the table (pass 1 of 3)") as tick:
        tab = check_table(ddf, target, groups, features, drop_missing=drop_missing, split=split, func=func)
        tick(1)
    if model_class in ("logistic", "hinge"):
        check_binary_target(tab, target, model_class, positive_label, func)
    elif positive_label is not None:
        raise RashomonInputError(
            f"The 'positive_label' parameter of {func} applies to a binary target with a classifier class "
            f"(model_class 'logistic'). Got {positive_label!r} with model_class={model_class!r} instead."
        )
    timings["checks_s"] = time.perf_counter() - t0
    n, features, gidx_names = tab["n_used"], tab["features"], tab["groups"]
    seed = seed_from(random_state, func)
    fraction = (
        None if split is not None else _check_train_size(n // 2 if train_size is None else train_size, n, func) / n
    )
    meta = pd.DataFrame(
        {**{c: pd.Series(dtype=float) for c in features}, TARGET: pd.Series(dtype=float), MASK: pd.Series(dtype=float)}
    )
    enc = tab["frame"].map_partitions(
        encode_partition, tab["raw_features"], tab["kinds"], tab["encoding"], target, split, seed, fraction, meta=meta
    )

    def enough(n_tr: int, n_te: int) -> None:
        if min(n_tr, n_te) < 10:
            what = (
                f"the column {split!r} marks {n_tr} training and {n_te} held-out rows"
                if split is not None
                else f"the split rule gave {n_tr} training and {n_te} held-out rows"
            )
            param = "split" if split is not None else "train_size"
            raise RashomonInputError(
                f"The '{param}' parameter of {func} must leave at least 10 rows on each side "
                f"(n = {n} usable rows). Got {train_size if split is None else split!r} instead: "
                f"{what}."
            )

    t0 = time.perf_counter()
    with progress.phase(f"train/held-out statistics (pass 2 of 3, {n:,} rows)") as tick:
        st_tr, st_te, data, _ = dask_split_statistics(
            enc[features], enc[TARGET], enc[MASK], func=func, on_counts=enough
        )
        tick(1)
    p = len(features)
    sd_tr = np.sqrt(np.diag(st_tr.comoment)[:p] / st_tr.weight_sum)
    shift, scale, scaled = np.zeros(p), np.ones(p), []
    for j, c in enumerate(features):
        if not tab["binary"][c]:
            if sd_tr[j] == 0:
                raise RashomonInputError(
                    f"The 'features' parameter of audit names a column ({c!r}) that is constant on the training part."
                )
            shift[j], scale[j] = st_tr.mean[j], sd_tr[j]
            scaled.append(c)
    gidx = {name: tuple(sorted(features.index(c) for c in cols)) for name, cols in gidx_names.items()}
    keeps = {name: [j for j in range(p) if j not in g] for name, g in gidx.items()}
    sets = [list(range(p))] + [k for k in keeps.values() if k]
    rule = (
        f"a row fits the reference iff the column {split!r} is True (or 1)"
        if split is not None
        else f"a row fits the reference iff u < {fraction:.6g}, u in [0, 1) a 64-bit hash of its values (numeric "
        f"columns as float64, categorical ones as strings) mixed with the seed {seed} (SplitMix64): the same "
        f"seed gives the same split whatever the partitioning or row order, identical rows fall on the same side"
    )
    if model_class == "logistic":  # the logistic class: _dask_audit_logistic.py
        pieces = logistic_audit_dask(
            enc, tab, features, st_tr, shift, scale, gidx_names, epsilon=epsilon, epsilon_kind=epsilon_kind, cv=cv,
            seed=seed, threshold=classifier_options[0], amb_rows=classifier_options[1], progress=progress, func=func,
        )  # fmt: skip
        timings.update(pieces["timings"])
        return logistic_result(
            pieces, tab, scaled, rule, split, target, n, cv, epsilon, epsilon_kind, digest, input_name,
            random_state, confidence_level, provenance, timings, t_start,
        )  # fmt: skip
    if model_class == "kernel":  # the kernel class: _dask_audit_kernel.py
        pieces = kernel_audit_dask(
            enc, features, TARGET, MASK, st_tr, st_te, shift, scale, gidx, keeps, epsilon=epsilon,
            epsilon_kind=epsilon_kind, seed=seed, n=n, progress=progress, func=func,
        )  # fmt: skip
        timings.update(pieces["timings"])
        return kernel_result(
            pieces, tab, scaled, rule, split, target, features, n, epsilon, epsilon_kind, digest, input_name,
            random_state, confidence_level, provenance, timings, t_start,
        )  # fmt: skip
    with progress.phase("ridge leave-one-out (pass 3 of 3)") as tick:
        alphas = _fit.RIDGE_ALPHAS
        fits = ridge_loo_statistics(data, st_tr, sets, alphas, shift=shift, scale=scale)
        tick(1)
    full, refits = fits[0], iter(fits[1:])
    norm = float(full["coef"] @ full["coef"])
    mc = LinearModelClass(norm_bound=max(norm, 1e-12), standardize=False, penalty_matrix=np.eye(p))
    reference = reference_from_statistics(mc, full["statistics"], func, features)
    cv_loss = float(full["loo_mse"])
    st_te_z = transform_statistics(st_te, None, shift, scale)
    rs = RashomonSet(
        mc,
        epsilon * cv_loss if epsilon_kind == "cv" else float(epsilon),
        epsilon_kind="additive" if epsilon_kind == "cv" else "absolute",
        reference=reference,
    )
    fit_statistics(rs, st_te_z, features, func)
    timings["reference_fit_s"] = time.perf_counter() - t0
    e_ref, eps_abs = rs.e_ref_, rs.epsilon_abs_
    results, t0 = {}, time.perf_counter()
    for name, g in gidx.items():
        with progress.phase(f"MCR search: {name}", total=2) as tick:
            mcr = rs.model_class_reliance(list(g), tol=MCR_TOL)
            tick(1)
            if keeps[name]:
                fit = next(refits)
                mc_g = LinearModelClass(
                    norm_bound=max(float(fit["coef"] @ fit["coef"]), 1e-12),
                    standardize=False,
                    penalty_matrix=np.eye(len(keeps[name])),
                )
                ref_g = reference_from_statistics(mc_g, fit["statistics"], func)
                st_g = transform_statistics(st_te, keeps[name], shift, scale)
                loss = ref_g.parametrization_.e_orig(st_g, st_g)(ref_g.theta_)
            else:  # the training mean predicts every row
                loss = st_te.comoment[p, p] / st_te.weight_sum + (st_te.mean[p] - st_tr.mean[p]) ** 2
            tick(1)
        results[name] = GroupAudit(
            name,
            tuple(features[j] for j in g),
            float(mcr.reference_model.mr),
            mcr.lower,
            mcr.upper,
            float(loss) / e_ref,
            mcr,
            {},
            {},
        )
    timings["mr_mcr_s"] = time.perf_counter() - t0
    timings["total_s"] = time.perf_counter() - t_start
    n_tr, n_te = int(round(st_tr.weight_sum)), int(round(st_te.weight_sum))
    ref_info = {
        "kind": "ridge",
        "alpha": full["alpha"],
        "norm": norm,
        "loo_mse": cv_loss,
        "standardised_features": scaled,
    }
    hyper = {
        "kernel": "linear",
        "gamma": None,
        "penalty_alpha": full["alpha"],
        "dictionary_size": None,
        "norm_bound": norm,
    }
    meta = audit_meta(
        epsilon,
        epsilon_kind,
        "leave-one-out",
        hyper,
        tab["encoding"],
        scaled,
        tab["n_input"],
        n,
        tab["missing_by_column"],
        n_tr,
        digest,
        input_name,
        0,
    )
    meta.update(
        {
            "engine": "out-of-core (Dask)",
            "n_partitions": tab["n_partitions"],
            "n_passes": 3,
            "split_rule": rule,
            "split_rule_short": f"column {split}" if split is not None else "seeded row hash",
            "cv_rule": (
                f"ridge penalty α among {len(alphas)} values from {alphas[0]:g} to {alphas[-1]:g} by exact "
                "leave-one-out MSE on the training part (each row its own "
                "leave-out unit), in place of k-fold cross-validation; that MSE is the CV loss of the ε rule"
            ),
            "skipped": ["bootstrap intervals (they resample held-out rows in memory)"],
        }
    )
    return AuditResult(
        results,
        target,
        tuple(features),
        "linear",
        n_tr,
        n_te,
        float(eps_abs),
        float(e_ref),
        cv_loss,
        ref_info,
        int(random_state) if isinstance(random_state, (int, np.integer)) else -1,
        0,
        float(confidence_level),
        timings,
        provenance,
        rs,
        meta,
    )
