"""Inference over refits: learner-PFI and learner-PD with corrected confidence intervals,
model-PFI confidence intervals, the Nadeau–Bengio corrected resampled t-test, and PIMP.

A PFI or PD computed on one fitted model ignores that another sample gives another model
(Molnar et al., "Relating the partial dependence plot and permutation feature importance to
the data generating process", 2023). The *learner* versions refit on m resampled training
parts and evaluate on the held-out parts; because training parts overlap, the naive variance
``s²/m`` is too small, and the Nadeau–Bengio correction ``(1/m + n_test/n_train)·s²`` repairs
most of it. Confidence intervals use the t quantile with m - 1 degrees of freedom.

Resampling: ``"subsampling"`` trains on ``round(train_fraction·n)`` rows drawn without
replacement and tests on the rest; ``"bootstrap"`` trains on n rows drawn with replacement and
tests on the out-of-bag rows. Seeds for every refit and permutation are drawn before joblib
dispatch, and BLAS runs single-threaded inside each task, so the numbers do not depend on
``n_jobs`` or the joblib backend (a Dask cluster included).

The corrected t-test and PIMP (Altmann et al. 2010), which reuse these refits and PFIs, are in
``_pvalues.py``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from ..utils import permutation_indices, permuted, single_blas_thread
from ..utils.losses import Predictor, resolve_loss
from ..utils.validation import (
    Boolean,
    Integral,
    NJobs,
    Options,
    Percentiles,
    RandomStateLike,
    RashomonInputError,
    Real,
    check_grid,
    check_X,
    check_y,
    resolve_features,
    resolve_group,
    seed_from,
    validate_params,
)
from ._results import LearnerImportanceResult, LearnerPDResult

__all__ = ["learner_importance", "learner_pd", "model_importance_ci", "LearnerImportanceResult", "LearnerPDResult"]


def _frame(X, columns):
    return pd.DataFrame(X, columns=columns) if columns is not None else X


def _pfi_rows(model, X, y, groups, perms, loss, columns, func):
    """Per-row loss increase, averaged over the permutations: array (n_groups, n_rows).

    The loss is applied to the response it needs (``predict_proba`` for log loss,
    ``decision_function`` for hinge) with y encoded for it, as in :func:`rashomon.model_reliance`.
    """
    pred = Predictor(model, loss, columns, func)
    y_enc = pred.encode_y(y, func)
    base = pred.losses(y_enc, X)
    out = np.empty((len(groups), len(y)))
    for k, g in enumerate(groups):
        acc = np.zeros(len(y))
        for perm in perms:
            acc += pred.losses(y_enc, permuted(X, g, perm))
        out[k] = acc / len(perms) - base
    return out


def _held_out_loss(model, X, y, loss, columns, func):
    pred = Predictor(model, loss, columns, func)
    return float(np.mean(pred.losses(pred.encode_y(y, func), X)))


def _split(n, resampling, train_fraction, rng):
    if resampling == "bootstrap":
        tr = rng.randint(0, n, size=n)
        te = np.setdiff1d(np.arange(n), tr)
    else:
        m = int(round(train_fraction * n))
        perm = rng.permutation(n)
        tr, te = np.sort(perm[:m]), np.sort(perm[m:])
    return tr, te


def _refit_task(
    learner,
    X,
    y,
    columns,
    seed,
    resampling,
    train_fraction,
    groups,
    n_repeats,
    loss,
    pd_spec,
    func="learner_importance",
):
    from sklearn.base import clone

    rng = np.random.RandomState(seed)
    tr, te = _split(len(y), resampling, train_fraction, rng)
    if len(np.unique(tr)) < 2:
        raise RashomonInputError(
            f"The 'train_fraction' parameter of {func} leaves {len(np.unique(tr))} training "
            f"row(s) in a resample of {len(y)} rows; it must leave at least 2 (use a larger "
            "train_fraction or more rows)."
        )
    if len(te) < 2:
        raise RashomonInputError(
            f"The 'train_fraction' parameter of {func} leaves {len(te)} held-out row(s) in a "
            f"resample of {len(y)} rows; it must leave at least 2 (use a smaller train_fraction "
            "or more rows)."
        )
    model = clone(learner).fit(_frame(X[tr], columns), y[tr])
    out: dict[str, Any] = {"n_train": len(tr), "n_test": len(te)}
    if groups is not None:
        perms = permutation_indices(len(te), n_repeats, int(rng.randint(2**31 - 1)))
        out["pfi"] = _pfi_rows(model, X[te], y[te], groups, perms, loss, columns, func).mean(axis=1)
    if pd_spec is not None:
        j, grid = pd_spec
        vals = []
        for v in grid:
            Z = X[te].copy()
            Z[:, j] = v
            vals.append(float(np.mean(model.predict(_frame(Z, columns)))))
        out["pd"] = np.asarray(vals)
    if loss is not None:
        out["loss"] = _held_out_loss(model, X[te], y[te], loss, columns, func)
    return out


def _run_refits(
    learner,
    X,
    y,
    columns,
    n_refits,
    resampling,
    train_fraction,
    groups,
    n_repeats,
    loss,
    pd_spec,
    random_state,
    n_jobs,
    func,
    progress=False,
):
    seeds = np.random.RandomState(seed_from(random_state, func)).randint(0, 2**31 - 1, size=n_refits)
    tasks = (
        delayed(single_blas_thread)(
            _refit_task,
            learner,
            X,
            y,
            columns,
            int(s),
            resampling,
            train_fraction,
            groups,
            n_repeats,
            loss,
            pd_spec,
            func,
        )
        for s in seeds
    )
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    if progress:
        from tqdm.auto import tqdm

        gen = tqdm(gen, total=n_refits, desc="refits")
    return list(gen)


def _corrected_ci(values, c, confidence_level):
    """Mean, corrected standard error and t interval over the refit axis (last axis)."""
    m = values.shape[-1]
    mean = values.mean(axis=-1)
    s2 = values.var(axis=-1, ddof=1)
    se = np.sqrt((1.0 / m + c) * s2)
    t = stats.t.ppf(0.5 + confidence_level / 2, m - 1)
    return mean, se, mean - t * se, mean + t * se


def _check_learner(learner, func, param="learner"):
    """A scikit-learn estimator that can be cloned and refitted (not a fitted model's predictions or a string)."""
    if not (hasattr(learner, "fit") and hasattr(learner, "get_params")):
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be a scikit-learn estimator (with fit and "
            f"get_params; it is cloned and refitted). Got {type(learner).__name__} instead."
        )


def _check_data(X, y, func):
    """The data checks of the refit functions (their parameters are declared by validate_params)."""
    Xa, columns = check_X(X, func, min_rows=4)
    return Xa, check_y(y, Xa.shape[0], func, numeric=False), columns


@validate_params(
    {
        "n_refits": Integral(2),
        "resampling": Options(("bootstrap", "subsampling")),
        "train_fraction": Real(0.0, 1.0, "neither"),
        "correction": Boolean(),
        "confidence_level": Real(0.0, 1.0, "neither"),
        "n_repeats": Integral(1),
        "random_state": RandomStateLike(),
        "n_jobs": NJobs(),
        "progress": Boolean(),
    }
)
def learner_importance(
    learner: Any,
    X: Any,
    y: Any,
    *,
    features: Any = None,
    n_refits: int = 15,
    resampling: Literal["bootstrap", "subsampling"] = "bootstrap",
    train_fraction: float = 0.632,
    correction: bool = True,
    confidence_level: float = 0.95,
    loss: str | Any = "auto",
    n_repeats: int = 5,
    random_state: Any = None,
    n_jobs: int | None = None,
    progress: bool = False,
) -> LearnerImportanceResult:
    """Learner-PFI: refit ``learner`` on resampled training parts, PFI on each held-out part.

    Returns the mean over refits with a t interval whose variance is ``(1/m + c)·s²``,
    ``c = n_test / n_train`` when ``correction=True`` (Nadeau & Bengio 2003), else ``c = 0``.

    ``loss="auto"`` (here and in :func:`model_importance_ci`, :func:`corrected_resampled_ttest`
    and :func:`pimp`) fits the learner (``rashomon.utils.losses.default_loss``): squared
    error for a regressor, log loss on ``predict_proba`` for a classifier that has it, hinge on
    ``decision_function`` (binary) or zero-one otherwise; the result records it as ``loss``.
    """
    func = "learner_importance"
    _check_learner(learner, func)
    Xa, ya, columns = _check_data(X, y, func)
    L = resolve_loss(loss, learner, func, ya)
    items = resolve_features(features, columns, Xa.shape[1], func)
    outs = _run_refits(
        learner,
        Xa,
        ya,
        columns,
        n_refits,
        resampling,
        train_fraction,
        list(items.values()),
        n_repeats,
        L,
        None,
        random_state,
        n_jobs,
        func,
        progress,
    )
    vals = np.column_stack([o["pfi"] for o in outs])
    c = float(np.mean([o["n_test"] / o["n_train"] for o in outs])) if correction else 0.0
    mean, se, lo, hi = _corrected_ci(vals, c, confidence_level)
    return LearnerImportanceResult(list(items), vals, mean, se, lo, hi, c, resampling, confidence_level, L.name)


@validate_params(
    {
        "grid_resolution": Integral(2),
        "percentiles": Percentiles(),
        "n_refits": Integral(2),
        "resampling": Options(("bootstrap", "subsampling")),
        "train_fraction": Real(0.0, 1.0, "neither"),
        "correction": Boolean(),
        "confidence_level": Real(0.0, 1.0, "neither"),
        "random_state": RandomStateLike(),
        "n_jobs": NJobs(),
    }
)
def learner_pd(
    learner: Any,
    X: Any,
    y: Any,
    feature: Any,
    *,
    grid: Any = None,
    grid_resolution: int = 20,
    percentiles: tuple[float, float] = (0.05, 0.95),
    n_refits: int = 15,
    resampling: Literal["bootstrap", "subsampling"] = "bootstrap",
    train_fraction: float = 0.632,
    correction: bool = True,
    confidence_level: float = 0.95,
    random_state: Any = None,
    n_jobs: int | None = None,
) -> LearnerPDResult:
    """Learner-PD: the PD of each refit on its held-out part; mean and pointwise corrected t bands."""
    from ..utils import feature_grid

    func = "learner_pd"
    _check_learner(learner, func)
    Xa, ya, columns = _check_data(X, y, func)
    group = resolve_group(feature, columns, Xa.shape[1], func)
    if len(group) != 1:
        raise RashomonInputError(f"The 'feature' parameter of {func} must be one feature.")
    j = group[0]
    g = feature_grid(Xa[:, j], grid_resolution, percentiles, False) if grid is None else check_grid(grid, 1, func)[0]
    outs = _run_refits(
        learner,
        Xa,
        ya,
        columns,
        n_refits,
        resampling,
        train_fraction,
        None,
        1,
        None,
        (j, g),
        random_state,
        n_jobs,
        func,
    )
    curves = np.vstack([o["pd"] for o in outs])
    c = float(np.mean([o["n_test"] / o["n_train"] for o in outs])) if correction else 0.0
    mean, se, lo, hi = _corrected_ci(curves.T, c, confidence_level)
    name = columns[j] if columns else f"x{j}"
    return LearnerPDResult(name, g, curves, mean, se, lo, hi, c, resampling, confidence_level)


@validate_params(
    {"n_repeats": Integral(2), "confidence_level": Real(0.0, 1.0, "neither"), "random_state": RandomStateLike()}
)
def model_importance_ci(
    model: Any,
    X: Any,
    y: Any,
    *,
    features: Any = None,
    n_repeats: int = 10,
    confidence_level: float = 0.95,
    loss: str | Any = "auto",
    random_state: Any = None,
) -> LearnerImportanceResult:
    """Model-PFI of one fitted model with a Monte-Carlo t interval.

    For each row the loss increase is averaged over ``n_repeats`` permutations; the PFI is the
    mean of these per-row differences and the interval is ``mean ± t_{n-1}·sd/√n`` over rows.
    """
    func = "model_importance_ci"
    Xa, columns = check_X(X, func)
    ya = check_y(y, Xa.shape[0], func, numeric=False)
    L = resolve_loss(loss, model, func, ya)
    items = resolve_features(features, columns, Xa.shape[1], func)
    perms = permutation_indices(len(ya), n_repeats, seed_from(random_state, func))
    rows = _pfi_rows(model, Xa, ya, list(items.values()), perms, L, columns, func)
    n = rows.shape[1]
    mean = rows.mean(1)
    se = rows.std(1, ddof=1) / math.sqrt(n)
    t = stats.t.ppf(0.5 + confidence_level / 2, n - 1)
    return LearnerImportanceResult(
        list(items), rows, mean, se, mean - t * se, mean + t * se, 0.0, "rows", confidence_level, L.name
    )
