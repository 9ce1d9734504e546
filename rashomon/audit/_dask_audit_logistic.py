"""The logistic audit on a Dask DataFrame (out of core): the in-memory classifier audit's steps, from passes.

After the checks and the train/held-out statistics of :func:`~._dask_audit.audit_dask` (the same split rule
and standardisation as the linear audit on Dask), with the target 0/1 or boolean:

1. columns constant on the training rows (a level absent there) are dropped, as in memory;
2. the norm bound: L2 logistic regression with the penalty chosen by ``cv``-fold cross-validated log loss on
   the training rows, folds from a seeded row hash (:func:`~._dask_table.encoded_uniform`), every fit of every
   fold and penalty advanced together by Newton steps, one pass per step
   (:func:`rashomon.sets.scale.penalised_logistic_cv`); the class's bound is the squared norm of the fit on all
   the training rows at that penalty, and the CV log loss at it is the CV loss of the ε rule;
3. the reference: the class's loss minimiser over that ball on the training rows (``RashomonSet.fit`` on Dask
   input: projected Newton, one pass per oracle call);
4. the set on the held-out rows with that reference (:func:`rashomon.sets.scale.fit_dask_margin_reference`);
5. per group: MR of the reference (``model_reliance`` on Dask: the exact U-statistic when the group takes at
   most 64 values, else the divide estimator, named), the refit without the group (steps 2-3 on the other
   columns) and its held-out loss ratio; MCR is **not run** (no certified method on O(d²) statistics);
6. the reference's held-out log loss and accuracy (sums over partitions; AUC needs the rows sorted, not run),
   ambiguity by ``multiplicity`` (screened passes) on the held-out rows with the smallest sample hash, and
   the coefficient ranges (batched Newton passes).

``audit(..., model_class="logistic", cv_rule="hash")`` on a pandas table gives the same numbers with the same
split (the hash rule is the only one out of core, and its default there).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from ..model_classes import LogisticModelClass
from ..sets import RashomonSet
from ..sets.scale import (
    block_sums,
    canonical_array,
    dask_reducer,
    fit_dask_margin_reference,
    folds_from_hash,
    penalised_logistic_cv,
)
from ..utils.validation import RashomonInputError
from ._audit_classifier import hash_rule_text
from ._dask_table import FOLD_SALT, SAMPLE_SALT, TARGET, encoded_uniform
from ._results import AuditResult, GroupAudit, audit_meta

__all__ = ["logistic_audit_dask", "check_binary_target"]

FOLD, SAMPLE = "__rashomon_fold__", "__rashomon_sample__"
NOT_RUN = (
    "MCR of the logistic class (no certified method on O(d²) statistics; run the audit on an in-memory sample for it)"
)


def check_binary_target(tab: dict, target: str, model_class: str, positive_label: Any, func: str) -> None:
    """The classifier classes on Dask: the logistic class only, a 0/1 or boolean target, no positive_label."""
    if model_class == "hinge":
        raise RashomonInputError(
            f"The 'model_class' parameter of {func} must be 'linear', 'kernel' or 'logistic' when data is a Dask "
            "DataFrame (or a Parquet path read through Dask): the hinge loss is not smooth, so its fit needs every "
            "row in memory. Got 'hinge' instead; sample the table into memory (data.sample(frac=...).compute())."
        )
    if positive_label is not None:
        raise RashomonInputError(
            f"The 'positive_label' parameter of {func} must be None when data is a Dask DataFrame (the target "
            f"must be 0/1 or True/False out of core). Got {positive_label!r} instead; recode the target column."
        )
    kind = tab["kinds"][target]
    values = sorted(tab["target_values"])
    if kind == "cat" or not set(values) <= {0.0, 1.0} or len(values) < 2:
        what = f"dtype {tab['frame'].dtypes[target]}" if kind == "cat" else f"values {values[:4]}"
        raise RashomonInputError(
            f"The 'target' parameter of {func} must name a binary column (0/1 or True/False) for "
            f"model_class='logistic' on a Dask DataFrame. Got {target!r} with {what} instead."
        )


def _with_hashes(pdf: pd.DataFrame, columns: list, seed: int, n_folds: int) -> pd.DataFrame:
    """One partition with its fold (from the fold hash) and its sample hash."""
    fold = folds_from_hash(encoded_uniform(pdf, columns, seed, FOLD_SALT), n_folds)
    return pdf.assign(**{FOLD: fold, SAMPLE: encoded_uniform(pdf, columns, seed, SAMPLE_SALT)})


def _standardisation(st: Any, keep: list, shift: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Training mean and population sd of the audit's (standardised) columns ``keep``, from the statistics."""
    p = len(shift)
    sd = np.sqrt(np.diag(st.comoment)[:p] / st.weight_sum)
    return ((st.mean[:p] - shift) / scale)[keep], (sd / scale)[keep]


def _reference(tr: Any, names: list, mean: np.ndarray, sd: np.ndarray, cv: int, func: str) -> tuple:
    """``(member, cv result)``: the norm bound by hash-fold CV, then the class's minimiser over that ball."""
    arr = canonical_array(tr, names + [TARGET, FOLD])  # fixed row blocks: the same bits for any partitioning
    p = len(names)
    res = penalised_logistic_cv(dask_reducer(arr[:, :p], arr[:, p], arr[:, p + 1]), mean, sd, cv, func=func)
    rs = RashomonSet(LogisticModelClass(norm_bound=max(res["norm"], 1e-12)), 0.0, epsilon_kind="additive")
    rs.fit(tr[names], tr[TARGET])
    return rs.reference_, res, rs


def _held_out_loss(member: Any, te: Any, names: list) -> float:
    """Mean log loss of a member on the held-out rows: sums over fixed row blocks (the same for any partitioning)."""
    ml = member.parametrization_.info["margin_loss"]

    def part(b: np.ndarray) -> np.ndarray:
        s = np.asarray(member.decision_function(pd.DataFrame(b[:, :-1], columns=names)), dtype=float)
        y = b[:, -1]
        return np.array([float(np.sum(ml.exact((2.0 * y - 1.0) * s))), len(y)])

    tot = block_sums(canonical_array(te, names + [TARGET]), part, 2)
    return float(tot[0] / tot[1])


def _metrics(ref: Any, te: Any, names: list) -> dict:
    """Held-out log loss, accuracy and base rate of the reference (sums over fixed row blocks)."""

    def part(b: np.ndarray) -> np.ndarray:
        s = np.asarray(ref.decision_function(pd.DataFrame(b[:, :-1], columns=names)), dtype=float)
        y = b[:, -1]
        return np.array(
            [float(np.sum(np.logaddexp(0.0, -(2.0 * y - 1.0) * s))), float(np.sum((s > 0) == (y > 0))), y.sum(), len(y)]
        )

    tot = block_sums(canonical_array(te, names + [TARGET]), part, 4)
    n = tot[3]
    return {
        "accuracy": float(tot[1] / n),
        "auc": None,
        "log_loss": float(tot[0] / n),
        "hinge_loss": None,
        "positive_rate": float(tot[2] / n),
        "n": int(n),
    }


_UNCHECKED = (
    "not certified out of core: the batched Newton of the Dask class failed its consistency check; run it in memory"
)


def _attempt(query: Any) -> Any:
    """``query()``, or None when the Dask class's range engine does not certify its answer."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow on the way to the failed check
        try:
            return query()
        except RashomonInputError as exc:
            if "consistency check failed" not in str(exc):
                raise
            return None


def _not_run(rs: Any, g: tuple, names: tuple, mr: Any) -> Any:
    """An MCR result that says MCR was not run (NaN ends), with the reference's MR."""
    from ..sets import MCRModel, MCRResult

    ref = MCRModel(np.asarray(rs.reference_theta_), float(mr.e_orig), float(mr.e_switch), float(mr.ratio), {})
    nan = float("nan")
    return MCRResult(
        nan, nan, None, None, nan, nan, False, False, nan, nan, "ratio", names, float(rs.epsilon_abs_),
        float(rs.e_ref_), float(rs.e_min_), ref, model_class=repr(rs.model_class), certified=False,
        lower_certified=False, upper_certified=False, loss="log_loss", notes="not run out of core: " + NOT_RUN,
    )  # fmt: skip


def logistic_audit_dask(
    enc: Any,
    tab: dict,
    features: list,
    st_tr: Any,
    shift: np.ndarray,
    scale: np.ndarray,
    gidx_names: dict,
    *,
    epsilon: float,
    epsilon_kind: str,
    cv: int,
    seed: int,
    threshold: float,
    amb_rows: int | None,
    progress: Any,
    func: str,
) -> dict:
    """Everything the logistic audit computes on Dask; returns the pieces of the result (module docstring)."""
    from ..reliance import model_reliance

    p = len(features)
    sd_tr = np.sqrt(np.diag(st_tr.comoment)[:p] / st_tr.weight_sum)
    dropped = [c for c, s in zip(features, sd_tr) if not s > 0]
    keep = [j for j in range(p) if sd_tr[j] > 0]
    names = [features[j] for j in keep]
    groups = {name: [c for c in cols if c not in dropped] for name, cols in gidx_names.items()}
    empty = [name for name, cols in groups.items() if not cols]
    if empty:
        raise RashomonInputError(
            f"The 'groups' parameter of {func} must name columns that vary on the training rows. Got group "
            f"{empty[0]!r}, all of whose columns {gidx_names[empty[0]]} are constant there, instead."
        )
    H = enc.map_partitions(_with_hashes, features + [TARGET], seed, cv)  # hashes of the unstandardised values
    cols = {c: (H[c] - shift[j]) / scale[j] for j, c in enumerate(features) if scale[j] != 1.0 or shift[j] != 0.0}
    Z = H.assign(**cols) if cols else H
    tr, te = Z[Z["__rashomon_train__"] == 1.0], Z[Z["__rashomon_train__"] == 0.0]
    mean, sd = _standardisation(st_tr, keep, shift, scale)
    timings: dict = {}
    t0 = time.perf_counter()
    with progress.phase(f"logistic reference: norm bound by {cv}-fold CV (hash folds), fit by Newton passes") as tick:
        ref, cvres, rs_tr = _reference(tr, names, mean, sd, cv, func)
        tick(1)
    cv_loss = cvres["cv_loss"]
    rs = RashomonSet(
        LogisticModelClass(),
        epsilon * cv_loss if epsilon_kind == "cv" else float(epsilon),
        epsilon_kind="additive" if epsilon_kind == "cv" else "absolute",
        reference=ref,
    )
    fit_dask_margin_reference(rs, te[names], te[TARGET], func)
    timings["reference_fit_s"] = time.perf_counter() - t0
    e_ref = rs.e_ref_
    results, mr_methods, t0 = {}, {}, time.perf_counter()
    gidx = {name: tuple(sorted(names.index(c) for c in cs)) for name, cs in groups.items()}
    for name, g in gidx.items():
        with progress.phase(f"MR and refit: {name}", total=2) as tick:
            mr = model_reliance(ref, te[names], te[TARGET], [names[j] for j in g])
            tick(1)
            kept = [j for j in range(len(names)) if j not in g]
            if kept:
                ref_g, _, _ = _reference(tr, [names[j] for j in kept], mean[kept], sd[kept], cv, func)
                loss = _held_out_loss(ref_g, te, [names[j] for j in kept])
            else:  # the training base rate predicts every row
                q = float(np.clip(st_tr.mean[p], 1e-12, 1 - 1e-12))
                yb = float(rs.X_.n_positive / rs.X_.n_rows)
                loss = -(yb * np.log(q) + (1 - yb) * np.log(1 - q))
            tick(1)
        mr_methods[name] = mr.method
        results[name] = GroupAudit(
            name,
            tuple(names[j] for j in g),
            float(mr.ratio),
            float("nan"),
            float("nan"),
            float(loss) / e_ref,
            _not_run(rs, g, tuple(names[j] for j in g), mr),
            {},
            {},
            {"mr_method": mr.method, "mcr_not_run": NOT_RUN, "upper_certified": False, "lower_certified": False},
        )
    timings["mr_mcr_s"] = time.perf_counter() - t0
    metrics = _metrics(ref, te, names)
    extras: dict[str, Any] = {}
    t0 = time.perf_counter()
    k = int(rs.X_.n_rows) if amb_rows is None else min(int(amb_rows), int(rs.X_.n_rows))
    skipped = []
    with progress.phase(f"ambiguity on {k} held-out rows (smallest sample hash)") as tick:
        sample = te.nsmallest(k, SAMPLE).compute() if k < rs.X_.n_rows else te.compute().sort_values(SAMPLE)
        summ = _attempt(lambda: rs.multiplicity(sample[names], threshold=threshold, scale="probability").summary())
        tick(1)
    nan = float("nan")
    extras["ambiguity"] = {
        "threshold": float(threshold),
        "scale": "probability",
        "n_rows": int(k),
        "n_held_out": int(rs.X_.n_rows),
        "ambiguity": float(summ["ambiguity"]) if summ is not None else nan,
        "n_flippable": int(summ["n_flippable"]) if summ is not None else 0,
        "discrepancy_lower": float(summ["discrepancy_lower"]) if summ is not None else nan,
        "discrepancy_upper": float(summ["discrepancy_upper"]) if summ is not None else nan,
        "seconds": time.perf_counter() - t0,
        "rows": "the held-out rows with the smallest sample hash",
    }
    if summ is None:
        skipped.append(f"ambiguity ({_UNCHECKED})")
    t0 = time.perf_counter()
    with progress.phase("coefficient ranges (batched Newton passes)") as tick:
        df = _attempt(lambda: rs.coef_range().to_frame())
        tick(1)
    if df is None:
        skipped.append(f"coefficient ranges ({_UNCHECKED})")
    extras["coefficients"] = [
        {
            "coefficient": str(r["coefficient"]),
            "lower": float(r["lower"]),
            "upper": float(r["upper"]),
            "sign_stable": bool(r["sign_stable"]),
        }
        for _, r in (df.iterrows() if df is not None else [])
    ]
    extras["coefficients_seconds"] = time.perf_counter() - t0
    timings["ambiguity_s"], timings["coef_range_s"] = extras["ambiguity"]["seconds"], extras["coefficients_seconds"]
    return {
        "rs": rs,
        "rs_train": rs_tr,
        "results": results,
        "features": names,
        "dropped": dropped,
        "cv": cvres,
        "cv_loss": cv_loss,
        "metrics": metrics,
        "extras": extras,
        "mr_methods": mr_methods,
        "timings": timings,
        "skipped": skipped,
    }


def logistic_result(
    pieces: dict,
    tab: dict,
    scaled: list,
    rule: str,
    split: str | None,
    target: str,
    n: int,
    cv: int,
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
    """The :class:`AuditResult` of the logistic audit on Dask (the in-memory classifier audit's fields)."""
    rs, cvres = pieces["rs"], pieces["cv"]
    n_te = int(rs.X_.n_rows)
    n_tr = n - n_te
    timings["total_s"] = time.perf_counter() - t_start
    par_tr = pieces["rs_train"].parametrization_
    info = {
        "kind": "logistic regression (the class's loss minimiser)",
        "norm": float(par_tr.r),
        "training_loss": float(pieces["rs_train"].e_min_),
        "cv_folds": int(cv),
        "cv_rule": hash_rule_text(cvres["lambdas"], cv) + " (one pass over the rows per Newton step)",
        "cv_lambda": cvres["lambda"],
        "cv_passes": cvres["passes"],
        "standardised_features": scaled,
    }
    hyper = {"norm_bound": info["norm"], "cv": cv}
    meta = audit_meta(
        epsilon, epsilon_kind, f"{cv}-fold", hyper, tab["encoding"], scaled, tab["n_input"], n,
        tab["missing_by_column"], n_tr, digest, input_name, 0,
    )  # fmt: skip
    meta["loss"] = "log loss"
    meta["classifier"] = {
        "labels": {"positive": 1, "negative": 0, "n_positive": None, "n": n},
        "reference_metrics": pieces["metrics"],
        **pieces["extras"],
        "dropped_constant_columns": pieces["dropped"],
        "bootstrap": {"n_resamples": 0, "mcr": False, "mcr_search_seconds": timings.get("mr_mcr_s")},
        "cv_rule": info["cv_rule"],
        "mr_methods": pieces["mr_methods"],
    }
    meta.update(
        {
            "engine": "out-of-core (Dask)",
            "n_partitions": tab["n_partitions"],
            "split_rule": rule,
            "split_rule_short": f"column {split}" if split is not None else "seeded row hash",
            "cv_rule": info["cv_rule"],
            "fold_rule": "hash",
            "skipped": [
                NOT_RUN,
                *pieces["skipped"],
                "AUC of the reference (it needs the held-out scores sorted)",
                "bootstrap intervals (they resample held-out rows in memory)",
            ],
        }
    )
    return AuditResult(
        pieces["results"],
        target,
        tuple(pieces["features"]),
        "logistic",
        n_tr,
        n_te,
        float(rs.epsilon_abs_),
        float(rs.e_ref_),
        float(pieces["cv_loss"]),
        info,
        int(random_state) if isinstance(random_state, (int, np.integer)) else -1,
        0,
        float(confidence_level),
        timings,
        provenance,
        rs,
        meta,
    )
