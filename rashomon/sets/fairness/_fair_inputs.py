"""Checks of the fairness queries' inputs (:mod:`._fairness`), in one place: the sensitive labels (a pandas
Series aligned by index, missing and mixed labels), the ratio's denominator, the frontier's ε values and the
benchmark (a model of the set's kind, or predictions on the set's scale)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...utils.validation import RashomonInputError

__all__ = ["benchmark_predictions", "check_frontier_epsilons", "check_ratio", "finite_ratio"]


def _aligned(rs, sensitive, func):
    """The labels of ``sensitive`` in the order of the fitted rows: a pandas Series is aligned by index when the set
    was fitted on a DataFrame (as pandas aligns), and an index that is not a reordering of X's is an error."""
    index = getattr(rs, "_row_index", None)
    own = getattr(sensitive, "index", None)
    if index is None or own is None or not hasattr(sensitive, "reindex") or own.equals(index):
        return np.asarray(getattr(sensitive, "to_numpy", lambda: sensitive)())
    if own.is_unique and index.is_unique and len(own) == len(index) and own.isin(index).all():
        return np.asarray(sensitive.reindex(index).to_numpy())
    extra = [v for v in own[~own.isin(index)][:3]]
    raise RashomonInputError(
        f"The 'sensitive' parameter of {func} must be aligned with the rows the set was fitted on: a pandas Series "
        f"with the index of X (it is aligned by index, as pandas does). Got a Series whose index differs "
        f"({len(own)} labels; {'not in X: ' + repr(extra) if extra else 'repeated labels'}) instead; pass "
        "sensitive.to_numpy() to match rows by position."
    )


def _check_labels(vals, sensitive, func):
    """Object labels: no missing value (naming the column), and of one sortable kind."""
    if vals.dtype.kind != "O":
        return
    import pandas as pd

    name = getattr(sensitive, "name", None)
    col = f"column {name!r}" if name is not None else "labels"
    miss = pd.isna(vals)
    if miss.any():
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must not contain missing values. Got {int(miss.sum())} missing "
            f"(NaN or None) in the {col} instead; drop those rows or give them a label."
        )
    try:
        np.unique(vals)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in vals})
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must hold labels of one kind (all text or all numbers). Got "
            f"{' and '.join(kinds)} values in the {col} instead."
        ) from None


def check_ratio(rs, spec: Any, kind: str, func: str) -> None:
    """A ratio needs a positive denominator: the reference group's metric for the set's reference model."""
    if kind != "ratio":
        return
    gv = spec.group_values(rs.reference_theta_)[0]
    den = float(gv[spec.ref])
    if not den > 0:
        raise RashomonInputError(
            f"The 'kind' parameter of {func} is 'ratio', whose denominator, the {spec.metric} of the reference "
            f"group {spec.labels[spec.ref]!r}, is {den:.4g} for the set's reference model: the ratio is undefined "
            f"(x / 0). Got kind='ratio' instead; use kind='difference'"
            + (" or a threshold the reference model's scores cross." if spec.threshold is not None else ".")
        )


def finite_ratio(compute, kind: str, func: str):
    """Run a ratio query (``compute()``, returning a :class:`DisparityRange` or a result with one as ``range``):
    a group's metric that can be 0 for some member of the set makes the ratio unbounded (an outer end of inf,
    members at x / 0): an error stating so, not NaN values and NumPy's divide warnings."""
    if kind != "ratio":
        return compute()
    with np.errstate(divide="ignore", invalid="ignore"):
        out = compute()
    res = getattr(out, "range", out)
    vals = [res.lower, res.upper, res.lower_attained, res.upper_attained, res.reference]
    if all(np.all(np.isfinite(v)) for v in vals):
        return out
    rows = [nm for i, nm in enumerate(res.names) if not all(np.isfinite(v[i]) for v in vals)]
    raise RashomonInputError(
        f"The 'kind' parameter of {func} is 'ratio', but the {res.metric} of a group in the denominator of "
        f"{rows} can be 0 for members of the set (its certified lower end is 0), so the ratio is unbounded "
        "(x / 0). Got kind='ratio' instead; use kind='difference'"
        + (", or a threshold further from the scores' extremes." if res.threshold is not None else ".")
    )


def check_frontier_epsilons(rs, epsilons, func: str):
    """``epsilons`` of a frontier: None, or finite ε values read by the set's ``epsilon_kind`` (capped as the
    set's own ε)."""
    if epsilons is None:
        return None
    from .._set_inputs import check_epsilons

    return check_epsilons(epsilons, rs.epsilon_kind, func, "epsilons")


def benchmark_predictions(rs, spec: Any, benchmark, func: str):
    """A benchmark's predictions on the set's rows, on the set's scale: a model of the same kind
    (``predict_proba`` on the probability scale, ``decision_function`` on the score scale, ``predict`` for a
    regression class), or a finite array of one prediction per row; probabilities must lie in [0, 1]."""
    if benchmark is None:
        return None
    n = rs.X_.shape[0]
    scale = spec.scale
    is_model = any(hasattr(benchmark, m) for m in ("predict", "predict_proba", "decision_function"))
    what = {
        "probability": "a classifier with predict_proba or probabilities in [0, 1]",
        "score": "a classifier with decision_function or scores",
        "prediction": "a model with predict or predictions",
    }[scale]
    if is_model:
        need = {"probability": "predict_proba", "score": "decision_function", "prediction": "predict"}[scale]
        if not hasattr(benchmark, need):
            raise RashomonInputError(
                f"The 'benchmark' parameter of {func} must be {what} (the set's {scale} scale). Got "
                f"{type(benchmark).__name__}, which has no {need}, instead."
            )
        import pandas as pd

        X = rs.X_ if not rs._columns else pd.DataFrame(rs.X_, columns=list(rs._columns))
        try:
            out = np.asarray(getattr(benchmark, need)(X))
        except Exception as exc:  # the user's model refused the rows
            raise RashomonInputError(
                f"The 'benchmark' parameter of {func} failed to predict on the set's rows: {type(exc).__name__}: {exc}"
            ) from None
        if need == "predict_proba" and out.ndim == 2:
            if out.shape[1] != 2:
                raise RashomonInputError(
                    f"The 'benchmark' parameter of {func} must be a binary classifier. Got "
                    f"{type(benchmark).__name__} with {out.shape[1]} classes instead."
                )
            out = out[:, 1]
    else:
        if isinstance(benchmark, (str, bytes)) or np.isscalar(benchmark):
            raise RashomonInputError(
                f"The 'benchmark' parameter of {func} must be {what}: a finite 1-d array of {n} values (one per "
                f"row of the set). Got {benchmark!r:.40} instead."
            )
        else:
            out = np.asarray(getattr(benchmark, "to_numpy", lambda: benchmark)())
    try:
        pred = out.astype(float)
    except (TypeError, ValueError):
        pred = None
    if pred is None or pred.ndim != 1 or len(pred) != n or not np.all(np.isfinite(pred)):
        raise RashomonInputError(
            f"The 'benchmark' parameter of {func} must be {what}: a finite 1-d array of {n} values (one per "
            f"row of the set). Got {type(benchmark).__name__} of shape {np.shape(out)}"
            f"{' with non-finite values' if pred is not None and pred.shape == (n,) else ''} instead."
        )
    if scale == "probability" and (pred.min() < 0 or pred.max() > 1):
        raise RashomonInputError(
            f"The 'benchmark' parameter of {func} must be probabilities in [0, 1] on the set's probability "
            f"scale ({type(rs.model_class).__name__}). Got values in [{pred.min():.4g}, {pred.max():.4g}] instead "
            "(scores such as deciles, or a regression model's output?); rescale them to probabilities, or pass "
            "scale='score' with log-odds."
        )
    return pred
