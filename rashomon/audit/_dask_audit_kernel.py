"""The kernel audit on a Dask DataFrame (out of core): the in-memory kernel audit's steps, from passes.

After the checks and the train/held-out statistics of :func:`~._dask_audit.audit_dask` (the same split
rule and standardisation as the linear audit on Dask):

1. the dictionary: the unique standardised training rows (all of them, as in memory, up to
   ``KERNEL_DICTIONARY`` rows, else a seeded subset of that many; three passes with memory bounded per task,
   ``dask_dictionary``), for the full design and for every group's refit without it;
2. the reference: RBF kernel ridge with intercept the training mean, bandwidth ``1/p`` × ``KERNEL_GAMMA_FACTORS``
   and penalty ``KERNEL_ALPHAS`` (the in-memory grids), chosen by the exact leave-one-out MSE on the training
   rows in place of k-fold cross-validation (``KernelModelClass`` fitted on Dask input with the training
   mask as row weights; each row its own leave-out unit); that MSE is the CV loss of the ε rule;
3. the set on the held-out rows (weights 1 - mask) with that reference: MR, MCR- and MCR+ of every group
   (one pass per group), and the held-out loss of the reference refitted without the group.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..model_classes import KernelModelClass
from ..sets import RashomonSet
from ..sets.out_of_core import dask_dictionary, kernel_member_loss
from . import _fit
from ._fit import MCR_TOL
from ._results import AuditResult, GroupAudit, audit_meta

__all__ = ["kernel_audit_dask", "kernel_result", "KERNEL_DICTIONARY"]

#: the largest dictionary of the out-of-core kernel audit (the in-memory audit takes every unique training row)
KERNEL_DICTIONARY = 1000


def _reference(Z: Any, y: Any, mask: Any, D: np.ndarray, ybar: float, seed: int, func: str) -> tuple:
    """``(member, info)``: the kernel-ridge reference on the training rows (mask 1), chosen by leave-one-out."""
    p = D.shape[1]
    mc = KernelModelClass(
        dictionary=D,
        gammas=[f / p for f in _fit.KERNEL_GAMMA_FACTORS],
        alphas=np.asarray(_fit.KERNEL_ALPHAS, dtype=float),
        intercept=ybar,
        random_state=seed,
    )
    rs = RashomonSet(mc, 0.0).fit(Z, y, mask)  # ε = 0: only the class's pieces are used
    par = getattr(rs.parametrization_, "untightened", rs.parametrization_)
    member = par.estimator(par.reference_theta)
    info = par.info
    return member, {
        "kind": "kernel ridge (rbf)",
        "gamma": float(info["gamma"]),
        "alpha": float(info["ridge_alpha"]),
        "rkhs_norm": float(par.r),
        "intercept": ybar,
        "dictionary_size": int(info["dictionary_size"]),
        "loo_mse": float(info["ridge_loo_mse"]),
    }


def kernel_audit_dask(
    enc: Any,
    features: list,
    target: str,
    mask: str,
    st_tr: Any,
    st_te: Any,
    shift: np.ndarray,
    scale: np.ndarray,
    gidx: dict,
    keeps: dict,
    *,
    epsilon: float,
    epsilon_kind: str,
    seed: int,
    n: int,
    progress: Any,
    func: str,
) -> dict:
    """MR, MCR and refits of every group for the kernel class; returns the pieces of the audit's result."""
    p = len(features)
    cols = {c: (enc[c] - shift[j]) / scale[j] for j, c in enumerate(features) if scale[j] != 1.0 or shift[j] != 0.0}
    Z = enc[features].assign(**cols) if cols else enc[features]
    y, m_tr = enc[target], enc[mask]
    m_te = 1.0 - enc[mask]
    ybar = float(st_tr.mean[p])
    t0 = time.perf_counter()
    sets = [list(range(p))] + [k for k in keeps.values() if k]
    with progress.phase("dictionaries: unique training rows (3 passes)") as tick:
        dicts = dask_dictionary(Z, m_tr, KERNEL_DICTIONARY, columns=sets, random_state=seed, n_rows=n, func=func)
        tick(1)
    with progress.phase("kernel ridge reference, leave-one-out (3 passes)") as tick:
        reference, ref_info = _reference(Z, y, m_tr, dicts[0], ybar, seed, func)
        tick(1)
    cv_loss = ref_info["loo_mse"]
    mc = KernelModelClass(
        dictionary=dicts[0], gamma=ref_info["gamma"], alpha=ref_info["alpha"], intercept=ybar, random_state=seed
    )
    rs = RashomonSet(
        mc,
        epsilon * cv_loss if epsilon_kind == "cv" else float(epsilon),
        epsilon_kind="additive" if epsilon_kind == "cv" else "absolute",
        reference=reference,
    ).fit(Z, y, m_te)
    timings = {"reference_fit_s": time.perf_counter() - t0}
    e_ref = rs.e_ref_
    results, t0, refits = {}, time.perf_counter(), iter(zip(sets[1:], dicts[1:]))
    for name, g in gidx.items():
        with progress.phase(f"MCR search: {name}", total=2) as tick:
            mcr = rs.model_class_reliance(list(g), tol=MCR_TOL)
            tick(1)
            if keeps[name]:
                keep, D = next(refits)
                names = [features[j] for j in keep]
                ref_g, _ = _reference(Z[names], y, m_tr, D, ybar, seed, func)
                loss = kernel_member_loss(ref_g, Z[names], y, m_te, func=func)
            else:  # the training mean predicts every row
                loss = st_te.comoment[p, p] / st_te.weight_sum + (st_te.mean[p] - ybar) ** 2
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
    hyper = {
        "kernel": "rbf",
        "gamma": ref_info["gamma"],
        "penalty_alpha": ref_info["alpha"],
        "dictionary_size": ref_info["dictionary_size"],
        "norm_bound": ref_info["rkhs_norm"],
    }
    return {
        "rs": rs,
        "results": results,
        "ref_info": ref_info,
        "hyper": hyper,
        "cv_loss": cv_loss,
        "timings": timings,
        "passes": 2 + 6 * len(sets) + 2 + len(gidx) + (len(sets) - 1),  # checks, split statistics: 2
    }


def kernel_result(
    pieces: dict,
    tab: dict,
    scaled: list,
    rule: str,
    split: str | None,
    target: str,
    features: list,
    n: int,
    epsilon: float,
    epsilon_kind: str,
    digest: str | None,
    input_name: str,
    random_state: Any,
    confidence_level: float,
    provenance: str,
    timings: dict,
    t_start: float,
) -> AuditResult:
    """The :class:`AuditResult` of the kernel audit on Dask (the linear audit's fields and meta)."""
    rs, ref_info = pieces["rs"], dict(pieces["ref_info"], standardised_features=scaled)
    n_te = int(round(rs.X_.weight_sum))
    n_tr = n - n_te
    timings["total_s"] = time.perf_counter() - t_start
    meta = audit_meta(
        epsilon,
        epsilon_kind,
        "leave-one-out",
        pieces["hyper"],
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
    g, a = _fit.KERNEL_GAMMA_FACTORS, _fit.KERNEL_ALPHAS
    meta.update(
        {
            "engine": "out-of-core (Dask)",
            "n_partitions": tab["n_partitions"],
            "n_passes": pieces["passes"],
            "split_rule": rule,
            "split_rule_short": f"column {split}" if split is not None else "seeded row hash",
            "cv_rule": (
                f"RBF bandwidth among {len(g)} values ({g[0]:g} to {g[-1]:g} over p) and penalty α among {len(a)} "
                f"values from {a[0]:g} to {a[-1]:g} by exact leave-one-out MSE on the training part (each row its "
                "own leave-out unit), in place of k-fold cross-validation; that MSE is the CV loss of the ε rule; "
                f"dictionary: the unique training rows (a seeded subset of {KERNEL_DICTIONARY} when there are more)"
            ),
            "skipped": ["bootstrap intervals (they resample held-out rows in memory)"],
        }
    )
    return AuditResult(
        pieces["results"],
        target,
        tuple(features),
        "kernel",
        n_tr,
        n_te,
        float(rs.epsilon_abs_),
        float(rs.e_ref_),
        float(pieces["cv_loss"]),
        ref_info,
        int(random_state) if isinstance(random_state, (int, np.integer)) else -1,
        0,
        float(confidence_level),
        timings,
        provenance,
        rs,
        meta,
    )
