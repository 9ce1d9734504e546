"""Fairness over the Rashomon set in the audit (``audit(..., sensitive=COLUMN)``, ``--sensitive COLUMN``).

On the audit's own set (the held-out rows, the class and ε of the audit), with the groups of the sensitive
column (which need not be a feature: COMPAS's race can sit in the inadmissible group or be left out):

1. the disparity ranges of :meth:`RashomonSet.disparity_range`: ``"mean_prediction"`` for every class (exact for
   the regression classes and the hinge score; on the probability scale for the logistic class, a certified outer
   bound beside the attained value), plus ``"positive_rate"`` at the audit's probability threshold for the
   classifier classes (combinatorial: outer bound and attained value); each group against the reference group
   (the first label in sorted order) and the between-groups ``max - min`` row;
2. :meth:`RashomonSet.least_disparate` on the mean prediction (no frontier: its ε grid would cost nine more
   ranges), its held-out loss beside the reference's and its MR on each audited group;
3. where the deployed score (``benchmark_column``) and the user's model (``estimator``) sit in those ranges;
4. the certified order of the audited groups: :meth:`RashomonSet.reliance_order` with critical ε for the
   quadratic classes; for the classifier classes the outer bounds from the audit's own MCR intervals
   (``[MCR-(a) - MCR+(b), MCR+(a) - MCR-(b)]``, what ``reliance_difference`` gives there) without rerunning the
   searches.

Every input is checked before any computing (:func:`check_sensitive`, :func:`check_sensitive_rows`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pandas as pd

from ..utils.validation import RashomonInputError

__all__ = ["check_sensitive", "check_sensitive_rows", "fairness_audit", "MAX_SENSITIVE_LEVELS", "MIN_GROUP_ROWS"]

MAX_SENSITIVE_LEVELS = 20
MIN_GROUP_ROWS = 10  # held-out rows per group of the sensitive column
ROWWISE_MAX_ROWS = 200_000  # classifier rates / probabilities: per-row ranges, skipped above this many rows


def _jsonable(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else (None if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def check_sensitive(
    prep: dict, sensitive: Any, benchmark_column: Any, model_class: str, target: str, func: str = "audit"
) -> dict | None:
    """The sensitive column and the benchmark column, checked on the table's kept rows (before any computing).

    Returns None without ``sensitive``, else ``{"column", "labels" (one per kept row), "benchmark_column",
    "benchmark" (floats or None)}``."""
    raw = prep["raw"]
    if sensitive is None:
        if benchmark_column is not None:
            raise RashomonInputError(
                f"The 'benchmark_column' parameter of {func} needs 'sensitive' (the groups its "
                f"disparity is measured between). Got benchmark_column={benchmark_column!r} "
                "and sensitive=None instead."
            )
        return None
    shown = list(map(str, raw.columns[:12])) + (["..."] if raw.shape[1] > 12 else [])
    if not isinstance(sensitive, str) or sensitive not in raw.columns:
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must name a column of the data (it need not be "
            f"a feature). Got {sensitive!r} instead; columns are {shown}."
        )
    if sensitive == target:
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must not be the target. Got the target column {target!r} instead."
        )
    s = raw[sensitive]
    if s.isna().any():
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must name a column without missing values on "
            f"the audited rows. Got {int(s.isna().sum())} missing value(s) in {sensitive!r} "
            "instead; fill them (e.g. with a level 'unknown') or drop those rows."
        )
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        labels = s.to_numpy()
    else:
        labels = s.astype(str).to_numpy(dtype=object)
    levels = pd.unique(labels)
    if len(levels) < 2:
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must name a column with two or more groups. "
            f"Got {sensitive!r} with the single value {levels[0]!r} instead."
        )
    if len(levels) > MAX_SENSITIVE_LEVELS:
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must name a group column with at most "
            f"{MAX_SENSITIVE_LEVELS} levels. Got {sensitive!r} with {len(levels)} distinct values "
            "instead (a continuous column? bin it first)."
        )
    bench = None
    if benchmark_column is not None:
        if not isinstance(benchmark_column, str) or benchmark_column not in raw.columns:
            raise RashomonInputError(
                f"The 'benchmark_column' parameter of {func} must name a column of the data (a "
                f"deployed score). Got {benchmark_column!r} instead; columns are {shown}."
            )
        b = raw[benchmark_column]
        if pd.api.types.is_bool_dtype(b) or not pd.api.types.is_numeric_dtype(b):
            raise RashomonInputError(
                f"The 'benchmark_column' parameter of {func} must name a numeric score column. "
                f"Got {benchmark_column!r} with dtype {b.dtype} instead."
            )
        bench = b.to_numpy(dtype=float)
        if not np.all(np.isfinite(bench)):
            raise RashomonInputError(
                f"The 'benchmark_column' parameter of {func} must name a column of finite "
                f"values on the audited rows. Got {int(np.sum(~np.isfinite(bench)))} missing or "
                f"infinite value(s) in {benchmark_column!r} instead."
            )
        if model_class == "logistic" and (bench.min() < 0 or bench.max() > 1):
            raise RashomonInputError(
                f"The 'benchmark_column' parameter of {func} must name probabilities in [0, 1] for "
                "model_class='logistic' (the set's mean prediction is on the probability scale). "
                f"Got {benchmark_column!r} with values in [{bench.min():g}, {bench.max():g}] "
                "instead; rescale it first (e.g. a decile score d as (d - 0.5) / 10)."
            )
    return {"column": sensitive, "labels": labels, "benchmark_column": benchmark_column, "benchmark": bench}


def check_sensitive_rows(fair: dict | None, te: np.ndarray, func: str = "audit") -> None:
    """Every group of the sensitive column needs ``MIN_GROUP_ROWS`` held-out rows (after the split, before fitting)."""
    if fair is None:
        return
    vals, counts = np.unique(
        fair["labels"][te].astype(str) if fair["labels"].dtype == object else fair["labels"][te], return_counts=True
    )
    all_levels = pd.unique(fair["labels"])
    if len(vals) < len(all_levels) or counts.min() < MIN_GROUP_ROWS:
        held = dict(zip(map(str, vals), map(int, counts)))
        small = next(str(v) for v in all_levels if held.get(str(v), 0) < MIN_GROUP_ROWS)
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must have at least {MIN_GROUP_ROWS} held-out "
            f"rows in every group. Got group {small!r} of {fair['column']!r} with "
            f"{held.get(small, 0)} held-out row(s) instead (held-out rows per group: {held}); "
            "merge or drop the rare groups."
        )


def _user_predictions(estimator: Any, prep: dict, te: np.ndarray, model_class: str) -> tuple[np.ndarray | None, str]:
    """The user's model's predictions on the held-out rows on the set's scale, or (None, why not)."""
    from ._estimator import _model_columns

    frame = prep["raw"].iloc[te][_model_columns(estimator, prep["raw"], list(prep["groups_raw_features"]), "audit")]
    frame = frame.reset_index(drop=True)
    try:
        if model_class in ("kernel", "linear"):
            return np.asarray(estimator.predict(frame), dtype=float).ravel(), ""
        if model_class == "logistic":
            if not hasattr(estimator, "predict_proba"):
                return None, "your model has no predict_proba (the set's mean prediction is a probability)"
            classes = list(getattr(estimator, "classes_", [0, 1]))
            pos = next((c for c in (prep["labels"]["positive"], 1, True) if c in classes), None)
            if pos is None:
                return None, f"the positive label is not among your model's classes {classes}"
            return np.asarray(estimator.predict_proba(frame), dtype=float)[:, classes.index(pos)], ""
        if hasattr(estimator, "decision_function"):
            return np.asarray(estimator.decision_function(frame), dtype=float).ravel(), ""
        return None, "your model has no decision_function (the hinge set's mean prediction is a score)"
    except Exception as exc:  # noqa: BLE001 - the user's model refused its inputs: say so in the report
        return None, f"your model failed to predict ({type(exc).__name__}: {exc})"


def _placement(pred: np.ndarray, dr, threshold: float | None = None) -> dict:
    """Where a score's disparities sit in a :class:`DisparityRange` (difference rows and the max - min row)."""
    codes = dr.spec.codes
    vals = (pred > threshold).astype(float) if threshold is not None else pred
    gv = np.array([vals[codes == g].mean() for g in range(len(dr.groups))])
    ref = dr.spec.ref
    disp = [gv[g] - gv[ref] for g in range(len(gv)) if g != ref] + [gv.max() - gv.min()]
    rows = []
    for name, d, lo, hi, la, ua in zip(dr.names, disp, dr.lower, dr.upper, dr.lower_attained, dr.upper_attained):
        pos = "below" if d < lo else ("above" if d > hi else "inside")
        rows.append(
            {
                "disparity": name,
                "value": float(d),
                "lower": float(lo),
                "upper": float(hi),
                "position": pos,
                "lower_attained": float(la),
                "upper_attained": float(ua),
            }
        )
    return {
        "rows": rows,
        "group_values": [float(v) for v in gv],
        "more_disparate_than_every_member": bool(disp[-1] > dr.upper[-1]),
        "more_disparate_than_every_member_found": bool(disp[-1] > dr.upper_attained[-1]),
    }


def _classifier_order(group_audits: dict) -> dict:
    """The order from the audit's certified MCR intervals (classifier classes): a ≻ b if MCR-(a) > MCR+(b)."""
    names = list(group_audits)
    rels, diffs = [], []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ga, gb = group_audits[a], group_audits[b]
            lo, hi = ga.mcr_lower - gb.mcr_upper, ga.mcr_upper - gb.mcr_lower
            diffs.append({"a": a, "b": b, "lower": lo, "upper": hi, "exact": False})
            for x, y, low in ((a, b, lo), (b, a, -hi)):
                if low > 0:
                    rels.append(
                        {
                            "a": x,
                            "b": y,
                            "lower": low,
                            "critical_epsilon_abs_lower": None,
                            "critical_epsilon_abs_upper": None,
                            "note": "critical ε not computed in the audit (two classifier MCRs per "
                            "step; RashomonSet.reliance_order brackets it)",
                        }
                    )
    return {
        "features": names,
        "kind": "ratio",
        "relations": rels,
        "differences": diffs,
        "method": "outer bounds from the audit's two certified MCR intervals [MCR−(a) − MCR+(b), MCR+(a) − "
        "MCR−(b)] (no search rerun; what reliance_difference gives for a classifier class)",
    }


def fairness_audit(
    rs,
    fair: dict,
    te: np.ndarray,
    *,
    model_class: str,
    threshold: float,
    group_audits: dict,
    estimator: Any,
    prep: dict,
    pg,
) -> dict:
    """The report's "Fairness over the Rashomon set" section as a JSON-ready dict (see the module's docs)."""
    t_all = time.perf_counter()
    sens = fair["labels"][te]
    n = len(te)
    classifier = model_class in ("logistic", "hinge")
    seconds: dict = {}
    skipped: list = []
    out: dict = {"sensitive": fair["column"], "n_held_out": int(n)}
    feats = {name: list(g.features) for name, g in group_audits.items()}
    rowwise_ok = not (model_class == "logistic" and n > ROWWISE_MAX_ROWS)
    # ------------------------------------------------------------ least disparate (its range is the mean-prediction range)
    ld = None
    if rowwise_ok:
        t0 = time.perf_counter()
        with pg.phase("fairness: mean-prediction range and least disparate member") as tick:
            ld = rs.least_disparate(sens, "mean_prediction", features=list(feats.values()), frontier=False)
            tick(1)
        seconds["mean_prediction_and_least_disparate_s"] = time.perf_counter() - t0
    else:
        skipped.append(
            f"mean probability and least disparate member: the logistic class ranges them row by row "
            f"(certified per-row score ranges), skipped above {ROWWISE_MAX_ROWS:,} held-out rows ({n:,})"
        )
    ranges = {}
    if ld is not None:
        ranges["mean_prediction"] = ld.range
    if classifier and rowwise_ok:
        t0 = time.perf_counter()
        with pg.phase("fairness: positive-rate range") as tick:
            thr = threshold if model_class == "logistic" else None
            ranges["positive_rate"] = rs.disparity_range(sens, "positive_rate", threshold=thr)
            tick(1)
        seconds["positive_rate_s"] = time.perf_counter() - t0
    elif classifier:
        skipped.append(
            f"positive rate: combinatorial, ranged row by row; skipped above {ROWWISE_MAX_ROWS:,} held-out rows"
        )
    out["disparity"] = {k: v.to_dict() for k, v in ranges.items()}
    if ld is not None:
        d = ld.to_dict()
        d.pop("range")  # the same as disparity["mean_prediction"]
        d["reliance"] = [{**r, "group": name} for r, name in zip(d["reliance"], feats)]
        d["loss_name"] = "squared error" if not classifier else ("log loss" if model_class == "logistic" else "hinge")
        out["least_disparate"] = d
        dr = ld.range
        out["groups"] = [_jsonable(v) for v in dr.groups]
        out["reference_group"] = _jsonable(dr.reference_group)
        out["group_rows"] = [
            {"group": _jsonable(g), "n_rows": int(k)} for g, k in zip(dr.groups, dr.group_values["n_rows"])
        ]
    # ------------------------------------------------------------ the deployed score and the user's model
    benches = []
    cands = []
    if fair["benchmark"] is not None:
        cands.append((f"column {fair['benchmark_column']}", "column", fair["benchmark"][te], ""))
    if estimator is not None:
        pred, why = _user_predictions(estimator, prep, te, model_class)
        cands.append((f"your model ({type(estimator).__name__})", "estimator", pred, why))
    for name, kind, pred, why in cands:
        if pred is None or not ranges:
            skipped.append(f"{name}: {why or 'no range to place it in'}")
            continue
        b: dict[str, Any] = {"name": name, "kind": kind, "metrics": {}}
        for metric, dr in ranges.items():
            thr = dr.threshold if metric == "positive_rate" else None
            b["metrics"][metric] = _placement(pred, dr, thr)
        if model_class in ("kernel", "linear"):
            b["loss"] = float(np.mean((rs.y_ - pred) ** 2))
        elif model_class == "logistic":
            p = np.clip(pred, 1e-15, 1 - 1e-15)
            yb = (np.asarray(rs.y_) == np.max(rs.y_)).astype(float)
            b["loss"] = float(-np.mean(yb * np.log(p) + (1 - yb) * np.log1p(-p)))
        benches.append(b)
    out["benchmarks"] = benches
    # ------------------------------------------------------------ the certified order of the audited groups
    if len(feats) < 2:
        skipped.append("the order of the groups: the audit has one group")
    elif classifier:
        out["order"] = _classifier_order(group_audits)
    else:
        t0 = time.perf_counter()
        with pg.phase("fairness: certified order of the groups") as tick:
            order = rs.reliance_order(feats, critical=True)
            tick(1)
        d = order.to_dict()
        d["differences"] = [
            {**rd.to_dict(), "a": na, "b": nb, "a_features": list(map(str, rd.a)), "b_features": list(map(str, rd.b))}
            for (na, nb), rd in order.differences.items()
        ]
        d["method"] = "exact γ-searches of MR(a) − MR(b) (reliance_order), critical ε by bisection over ε"
        out["order"] = d
        seconds["order_s"] = time.perf_counter() - t0
    out["skipped"] = skipped
    seconds["total_s"] = time.perf_counter() - t_all
    out["seconds"] = seconds
    return out
