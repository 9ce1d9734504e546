"""The regression branch of :func:`rashomon.audit` (kernel or linear class, squared loss): the reference fit,
MR, MCR and the refit without each group, bootstrap intervals, the user's model and fairness, assembled
into an :class:`~rashomon.audit.AuditResult`."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from ._audit_binary import compare_user_model
from ._audit_classifier import resample_weights
from ._audit_fairness import fairness_audit
from ._fit import MCR_TOL as _TOL
from ._fit import _fit_reference, class_set, group_mcrs
from ._results import AuditResult, GroupAudit, audit_meta

__all__ = ["audit_regression"]


def audit_regression(
    prep: dict,
    X: np.ndarray,
    y: np.ndarray,
    tr: np.ndarray,
    te: np.ndarray,
    scaled: Any,
    *,
    target: str,
    model_class: str,
    epsilon: float,
    epsilon_kind: str,
    cv: int,
    bootstrap: int,
    confidence_level: float,
    rng: np.random.RandomState,
    pg: Any,
    estimator: Any,
    random_state: Any,
    provenance: str,
    split: str | None,
    mask: np.ndarray | None,
    t_start: float,
    func: str,
    fair: Any,
    n_jobs: int | None,
) -> AuditResult:
    """Everything :func:`audit` computes for a regression class, once the inputs are checked and split."""
    work, features, groups, encoding = prep["work"], prep["features"], prep["groups"], prep["encoding"]
    n_input, missing_by_column, digest, input_name = (
        prep["n_input"],
        prep["missing_by_column"],
        prep["digest"],
        prep["input_name"],
    )
    n = len(work)
    Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    timings = {}
    t0 = time.perf_counter()
    with pg.phase(f"fitting reference ({model_class}, {cv}-fold CV, {len(tr)} rows)") as tick:
        reference, mc, cv_loss, ref_info = _fit_reference(
            Xtr, ytr, model_class, cv, int(rng.randint(2**31 - 1)), n_jobs
        )
        tick(1)
    ref_info["standardised_features"] = scaled
    timings["reference_fit_s"] = time.perf_counter() - t0
    rs = class_set(mc, reference, epsilon, epsilon_kind, cv_loss, Xte, yte, features)
    e_ref, eps_abs = rs.e_ref_, rs.epsilon_abs_

    def refit(keep):
        if not keep:
            return float(np.mean((yte - ytr.mean()) ** 2)) / e_ref
        ref_wo, _, _, _ = _fit_reference(Xtr[:, keep], ytr, model_class, cv, int(rng.randint(2**31 - 1)), n_jobs)
        return float(np.mean((yte - ref_wo.predict(Xte[:, keep])) ** 2)) / e_ref

    t0 = time.perf_counter()
    gidx, results = group_mcrs(rs, features, groups, pg, refit)
    timings["mr_mcr_s"] = time.perf_counter() - t0
    draws: dict = {name: {"mr_ref": [], "mcr_lower": [], "mcr_upper": []} for name in gidx}
    if bootstrap:
        from ..sets import bootstrap_mcr as _bootstrap_mcr  # the parameter bootstrap_mcr is a bool

        t0 = time.perf_counter()
        # resamples as row weights on the set's cached statistics, γ-searches warm-started at the
        # full-data γ; seeds drawn from rng as before (same resamples), identical for any n_jobs
        with pg.phase("bootstrap resamples", total=bootstrap) as tick:
            boot = _bootstrap_mcr(
                rs,
                {name: list(g) for name, g in gidx.items()},
                bootstrap,
                random_state=rng,
                n_jobs=n_jobs,
                tol=_TOL,
                callback=tick,
            )
        for name in gidx:
            for key, src in (("mr_ref", "mr_ref"), ("mcr_lower", "lower"), ("mcr_upper", "upper")):
                draws[name][key] = list(boot.draws[name][src])
        timings["bootstrap_s"] = time.perf_counter() - t0
    a = (1 - confidence_level) / 2
    groups_out = {}
    for name, g in gidx.items():
        r = results[name]
        ci = {}
        if bootstrap:
            for k, v in draws[name].items():
                v = np.asarray(v, dtype=float)
                ci[k] = (float(np.quantile(v, a)), float(np.quantile(v, 1 - a)))
        groups_out[name] = GroupAudit(
            name,
            tuple(features[j] for j in g),
            float(r["mr"]),
            r["mcr"].lower,
            r["mcr"].upper,
            r["refit"],
            r["mcr"],
            ci,
            {k: np.asarray(v) for k, v in draws[name].items()},
        )
    user_meta = None
    if estimator is not None:  # the user's model beside the class, on the same held-out rows and resamples
        weights = resample_weights(rng, len(te), bootstrap)
        user, user_meta = compare_user_model(
            estimator,
            prep["raw"],
            te,
            list(prep["groups_raw_features"]),
            target,
            y,
            prep["groups_raw"],
            groups_out,
            weights,
            float(confidence_level),
            "squared_error",
            pg,
            func,
        )
        groups_out = {name: dataclasses.replace(g, extra=user[name]) for name, g in groups_out.items()}
        timings["user_model_s"] = user_meta["seconds"]
    fairness = (
        None
        if fair is None
        else fairness_audit(
            rs,
            fair,
            te,
            model_class=model_class,
            threshold=0.5,
            group_audits=groups_out,
            estimator=estimator,
            prep=prep,
            pg=pg,
        )
    )
    timings.update({} if fairness is None else {"fairness_s": fairness["seconds"]["total_s"]})
    timings["total_s"] = time.perf_counter() - t_start
    if model_class == "kernel":
        hyper = {
            "kernel": "rbf",
            "gamma": ref_info["gamma"],
            "penalty_alpha": ref_info["alpha"],
            "dictionary_size": ref_info["dictionary_size"],
            "norm_bound": ref_info["rkhs_norm"],
        }
    else:
        hyper = {
            "kernel": "linear",
            "gamma": None,
            "penalty_alpha": ref_info["alpha"],
            "dictionary_size": None,
            "norm_bound": ref_info["norm"],
        }
    meta = audit_meta(
        epsilon,
        epsilon_kind,
        f"{cv}-fold",
        hyper,
        encoding,
        scaled,
        n_input,
        n,
        missing_by_column,
        len(tr),
        digest,
        input_name,
        bootstrap,
    )
    meta.update({"notes": prep["notes"]} if prep["notes"] else {})  # e.g. repeated header names merged
    if mask is not None:
        meta.update(
            split_rule=f"a row fits the reference iff the column {split!r} is True (or 1)",
            split_rule_short=f"column {split}",
        )
    meta.update({"user_model": user_meta} if user_meta is not None else {})
    meta.update({"fairness": fairness} if fairness is not None else {})
    return AuditResult(
        groups_out,
        target,
        tuple(features),
        model_class,
        len(tr),
        len(te),
        float(eps_abs),
        e_ref,
        cv_loss,
        ref_info,
        int(random_state) if isinstance(random_state, (int, np.integer)) else -1,
        bootstrap,
        float(confidence_level),
        timings,
        provenance,
        rs,
        meta,
    )
