"""The classifier branch of :func:`rashomon.audit` (binary target, logistic or hinge class): fits, MCR per
group, the reference's metrics, ambiguity, sign stability and bootstrap intervals; and the comparison of
a user's fitted model with the class (both branches)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from ._audit_classifier import (
    bootstrap_classifier_mcr,
    classifier_extras,
    drop_constant_columns,
    fit_classifier_reference,
    reference_metrics,
    reference_model,
)
from ._estimator import estimator_model, weighted_mr
from ._fit import MCR_TOL, class_set, group_mcrs

__all__ = ["run_classifier", "compare_user_model", "quantile_ci"]


def quantile_ci(draws: Any, confidence_level: float) -> tuple[float, float]:
    a = (1 - confidence_level) / 2
    v = np.asarray(draws, dtype=float)
    v = v[np.isfinite(v)]
    return (float(np.quantile(v, a)), float(np.quantile(v, 1 - a))) if len(v) else (float("nan"), float("nan"))


def run_classifier(
    X,
    y,
    tr,
    te,
    features,
    groups,
    *,
    model_class,
    epsilon,
    epsilon_kind,
    cv,
    weights,
    bootstrap_mcr,
    confidence_level,
    rng,
    pg,
    threshold,
    amb_rows,
    func,
    hashes=None,
) -> dict:
    """Everything the classifier audit computes; returns a dict of the pieces :func:`audit` assembles.
    ``hashes``: ``(fold hash, sample hash)`` of every row for the hash fold rule (None: stratified folds)."""
    X, features, groups, dropped = drop_constant_columns(X, features, groups, tr, func)
    Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    fold_u, sample_u = (None, None) if hashes is None else (hashes[0][tr], hashes[1][te])
    timings: dict = {}
    t0 = time.perf_counter()
    with pg.phase(f"fitting reference ({model_class}, {cv}-fold CV, {len(tr)} rows)") as tick:
        ref, mc, cv_loss, info = fit_classifier_reference(
            Xtr, ytr, features, model_class, cv, int(rng.randint(2**31 - 1)), fold_u
        )
        tick(1)
    timings["reference_fit_s"] = time.perf_counter() - t0
    margin = epsilon * cv_loss if epsilon_kind == "cv" else None
    rs = class_set(mc, ref, epsilon, epsilon_kind, cv_loss, Xte, yte, features)
    e_ref, eps_abs = rs.e_ref_, rs.epsilon_abs_

    def refit(keep):
        if not keep:
            p = float(np.clip(ytr.mean(), 1e-12, 1 - 1e-12))
            return float(np.mean(-(yte * np.log(p) + (1 - yte) * np.log(1 - p)))) / e_ref
        names = [features[j] for j in keep]
        ref_wo, _, _, _ = fit_classifier_reference(
            Xtr[:, keep], ytr, names, model_class, cv if fold_u is not None else 0, 0, fold_u
        )
        ml = ref_wo.parametrization_.info["margin_loss"]
        rows = Xte[:, keep]  # with names only where the reference was fitted with them (no feature-name warning)
        if hasattr(ref_wo, "feature_names_in_"):
            rows = pd.DataFrame(rows, columns=names)
        s = np.asarray(ref_wo.decision_function(rows))
        return float(np.mean(ml.exact((2 * yte - 1) * s))) / e_ref

    t0 = time.perf_counter()
    gidx, results = group_mcrs(rs, features, groups, pg, refit)
    timings["mr_mcr_s"] = time.perf_counter() - t0
    metrics = reference_metrics(ref, Xte, yte, features)
    extras = classifier_extras(
        rs, Xte, features, model_class, threshold, amb_rows, int(rng.randint(2**31 - 1)), pg, sample_u
    )
    timings["ambiguity_s"] = extras["ambiguity"]["seconds"]
    timings["coef_range_s"] = extras["coefficients_seconds"]
    # ------------------------------------------------------------ bootstrap
    draws: dict = {name: {} for name in gidx}
    boot_info: dict = {"n_resamples": int(len(weights)), "mcr": bool(bootstrap_mcr and len(weights))}
    if len(weights):
        t0 = time.perf_counter()
        fixed = reference_model(ref, Xte, yte, features)
        with pg.phase("bootstrap: the reference's MR", total=len(gidx)) as tick:
            for name, g in gidx.items():
                draws[name]["mr_ref"] = weighted_mr(fixed, [features[j] for j in g], weights)
                tick(1)
        timings["bootstrap_mr_s"] = time.perf_counter() - t0
        if bootstrap_mcr:
            t0 = time.perf_counter()
            with pg.phase("bootstrap: MCR on each resample", total=len(weights)) as tick:
                mcr_draws, secs = (
                    bootstrap_classifier_mcr(mc, ref, margin, Xte, yte, features, gidx, weights, MCR_TOL, tick)
                    if margin is not None
                    else ({}, [])
                )
            for name, d in mcr_draws.items():
                draws[name].update({k: np.asarray(v) for k, v in d.items()})
            boot_info["seconds_per_resample"] = float(np.mean(secs)) if secs else None
            timings["bootstrap_mcr_s"] = time.perf_counter() - t0
    boot_info["mcr_search_seconds"] = timings["mr_mcr_s"]
    return dict(
        X=X,
        features=features,
        groups=groups,
        dropped=dropped,
        rs=rs,
        ref=ref,
        e_ref=e_ref,
        eps_abs=eps_abs,
        cv_loss=cv_loss,
        info=info,
        results=results,
        gidx=gidx,
        metrics=metrics,
        extras=extras,
        draws=draws,
        timings=timings,
        bootstrap=boot_info,
    )


def compare_user_model(
    estimator,
    raw: pd.DataFrame,
    te: np.ndarray,
    raw_features: list,
    target: str,
    y01,
    groups_raw: dict,
    group_audits: dict,
    weights: np.ndarray,
    confidence_level: float,
    class_loss: str,
    pg,
    func: str,
) -> tuple[dict, dict]:
    """MR of the user's model per group on the held-out rows (and on each resample), beside the class's MCR.

    Returns ``({group: figures}, meta)``."""
    t0 = time.perf_counter()
    fm = estimator_model(estimator, raw, te, raw_features, raw[target].to_numpy(), y01, func)
    W = np.vstack([np.ones(len(te)), weights]) if len(weights) else None
    out = {}
    with pg.phase(f"your model's MR ({fm.name})", total=len(groups_raw)) as tick:
        for name, cols in groups_raw.items():
            vals = weighted_mr(fm, list(cols), W)
            mr = float(vals[0])
            g = group_audits[name]
            lo_att = g.mcr.lower_model.mr if g.mcr.lower_model is not None else g.mcr_lower
            up_att = g.mcr.upper_model.mr if g.mcr.upper_model is not None else g.mcr_upper
            d: dict[str, Any] = {
                "model_mr": mr,
                "bracketed": bool(g.mcr_lower <= mr <= g.mcr_upper),
                "within_attained": bool(lo_att <= mr <= up_att),
            }
            if len(weights):
                d["model_mr_ci"] = quantile_ci(vals[1:], confidence_level)
                d["model_mr_draws"] = vals[1:]
            out[name] = d
            tick(1)
    meta = {
        "name": fm.name,
        "loss": fm.loss,
        "columns": list(fm.frame.columns),
        "n_rows": int(len(te)),
        "same_loss_as_class": fm.loss == class_loss,
        "seconds": time.perf_counter() - t0,
    }
    return out, meta


def audit_binary(
    prep: dict,
    X,
    y,
    tr,
    te,
    scaled,
    *,
    target,
    model_class,
    epsilon,
    epsilon_kind,
    cv,
    bootstrap,
    bootstrap_mcr,
    confidence_level,
    rng,
    pg,
    threshold,
    amb_rows,
    estimator,
    random_state,
    provenance,
    split,
    mask,
    t_start,
    func,
    fair=None,
    cv_rule=None,
):
    """:func:`audit` for a classifier class, from the checked and split table to the :class:`AuditResult`."""
    import dataclasses

    from ._audit_classifier import resample_weights
    from ._results import AuditResult, GroupAudit, audit_meta

    weights = resample_weights(rng, len(te), bootstrap)  # drawn first: the same resamples for every figure
    hashes = None
    if cv_rule == "hash":  # the rule of the audit on Dask (logistic class)
        from ..utils.validation import seed_from
        from ._dask_table import FOLD_SALT, SAMPLE_SALT, encoded_uniform

        seed, cols = seed_from(random_state, func), list(prep["features"]) + [target]
        hashes = tuple(encoded_uniform(prep["work"], cols, seed, salt) for salt in (FOLD_SALT, SAMPLE_SALT))
    out = run_classifier(
        X,
        y,
        tr,
        te,
        list(prep["features"]),
        dict(prep["groups"]),
        model_class=model_class,
        epsilon=epsilon,
        epsilon_kind=epsilon_kind,
        cv=cv,
        weights=weights,
        bootstrap_mcr=bootstrap_mcr,
        confidence_level=confidence_level,
        rng=rng,
        pg=pg,
        threshold=threshold,
        amb_rows=amb_rows,
        func=func,
        hashes=hashes,
    )
    features, timings = out["features"], out["timings"]
    groups_out = {}
    for name, g in out["gidx"].items():
        r = out["results"][name]
        m = r["mcr"]
        draws = out["draws"][name]
        ci = {k: quantile_ci(v, confidence_level) for k, v in draws.items()}
        extra = {
            "mcr_lower_attained": float(m.lower_model.mr) if m.lower_model is not None else None,
            "mcr_upper_attained": float(m.upper_model.mr) if m.upper_model is not None else None,
            "upper_certified": bool(getattr(m, "upper_certified", True)),
            "lower_certified": bool(getattr(m, "lower_certified", True)),
        }
        groups_out[name] = GroupAudit(
            name,
            tuple(features[j] for j in g),
            r["mr"],
            m.lower,
            m.upper,
            r["refit"],
            m,
            ci,
            {k: np.asarray(v) for k, v in draws.items()},
            extra,
        )
    user_meta = None
    if estimator is not None:
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
            "log_loss" if model_class == "logistic" else "hinge",
            pg,
            func,
        )
        groups_out = {name: dataclasses.replace(g, extra={**g.extra, **user[name]}) for name, g in groups_out.items()}
        timings["user_model_s"] = user_meta["seconds"]
    fairness = None
    if fair is not None:
        from ._audit_fairness import fairness_audit

        fairness = fairness_audit(
            out["rs"],
            fair,
            te,
            model_class=model_class,
            threshold=threshold,
            group_audits=groups_out,
            estimator=estimator,
            prep=prep,
            pg=pg,
        )
        timings["fairness_s"] = fairness["seconds"]["total_s"]
    timings["total_s"] = time.perf_counter() - t_start
    info = out["info"]
    hyper = {"norm_bound": info["norm"], "cv": cv}
    meta = audit_meta(
        epsilon,
        epsilon_kind,
        f"{cv}-fold",
        hyper,
        prep["encoding"],
        scaled,
        prep["n_input"],
        len(y),
        prep["missing_by_column"],
        len(tr),
        prep["digest"],
        prep["input_name"],
        bootstrap,
    )
    meta["loss"] = "log loss" if model_class == "logistic" else "hinge"
    if bootstrap:
        meta["ci_method"] = (
            "percentile bootstrap over held-out rows (MR of the reference"
            + (", MCR−/MCR+" if bootstrap_mcr else "")
            + (", your model's MR" if estimator is not None else "")
            + ")"
        )
    meta["classifier"] = {
        "labels": prep["labels"],
        "reference_metrics": out["metrics"],
        **out["extras"],
        "dropped_constant_columns": out["dropped"],
        "bootstrap": out["bootstrap"],
        "cv_rule": info["cv_rule"],
    }
    meta["fold_rule"], meta["cv_rule"] = cv_rule or "stratified", info["cv_rule"]
    if mask is not None:
        meta.update(
            split_rule=f"a row fits the reference iff the column {split!r} is True (or 1)",
            split_rule_short=f"column {split}",
        )
    if user_meta is not None:
        meta["user_model"] = user_meta
    if fairness is not None:
        meta["fairness"] = fairness
    return AuditResult(
        groups_out,
        target,
        tuple(features),
        model_class,
        len(tr),
        len(te),
        float(out["eps_abs"]),
        float(out["e_ref"]),
        float(out["cv_loss"]),
        info,
        int(random_state) if isinstance(random_state, (int, np.integer)) else -1,
        bootstrap,
        float(confidence_level),
        timings,
        provenance,
        out["rs"],
        meta,
    )
