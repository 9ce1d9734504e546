"""Model reliance (MR) estimators (Fisher, Rudin & Dominici 2019, §3).

``e_orig   = 1/n Σ_i L(y_i, f(x1_i, x2_i))``
``e_switch = 1/(n(n-1)) Σ_i Σ_{j≠i} L(y_j, f(x1_i, x2_j))``   (exact U-statistic)
``e_divide``: pairs row i of the first half with row i + ⌊n/2⌋ of the second.
``permutation``: Breiman's random permutations averaged over ``n_repeats``.

The exact estimator is computed without materialising the n² switched rows:

* It rewrites the double sum over the *distinct* values v of the switched
  block X1 (counts c_v): ``Σ_{i≠j} L(y_j, f(x1_i, x2_j)) = Σ_v Σ_j (c_v − [x1_j = v]) L(y_j, f(v, x2_j))``.
  A binary or categorical group (race, sex) costs O(n·#values) predictions
  instead of n².
* Predictions are made in blocks of at most ``max_rows`` rows
  (default ``memory_limit / (8 · (n_features + 4))``), so extra memory stays
  near ``memory_limit`` (default 256 MB) whatever n is. The model's own
  ``predict`` may allocate more (scikit-learn forests allocate one output
  row per input row and tree).
* For linear regressors (``coef_``/``intercept_``, or a Pipeline of affine
  scalers ending in one) under squared loss, a closed form (:mod:`._linear`):
  one pass of sufficient statistics gives every feature and group.
* For scikit-learn tree ensembles, switched values are collapsed into the
  cells of the ensemble's thresholds (:mod:`._tree_cells`): one prediction per
  occupied cell instead of one per distinct value. On one feature, regressors
  and class probabilities follow each row's piecewise-constant output along the
  switched feature instead (:mod:`._tree_paths`), without calling ``predict``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from joblib import Parallel, delayed

from ..utils import permutation_indices
from ..utils.validation import (
    Boolean,
    Integral,
    NJobs,
    Options,
    RandomStateLike,
    RashomonInputError,
    check_choice,
    resolve_features,
    resolve_group,
    seed_from,
    validate_params,
)
from ._checks import check_not_rounding
from ._out_of_core import dask_reliance, is_dask_input
from ._prepared import DEFAULT_MEMORY_LIMIT, _divide_e_switch, _exact_value, _permuted_loss, _Prepared
from ._results import FeatureRelianceResult, ModelRelianceResult, _ratio

__all__ = ["ModelRelianceResult", "FeatureRelianceResult", "model_reliance", "feature_reliance"]


def _reliance_one(
    prep: _Prepared,
    group: tuple[int, ...],
    method: str,
    n_repeats: int,
    seed: int | None,
    shuffle: bool,
    closed_form: Any,
    memory_limit: int,
    n_jobs: int | None,
    func: str,
    groups: Sequence[tuple[int, ...]] | None = None,
) -> ModelRelianceResult:
    y_enc, n = prep.y_enc, prep.n_samples
    names = tuple(prep.columns[i] if prep.columns else f"x{i}" for i in group)
    reps = None
    algorithm = None
    if method == "exact":
        e_switch, algorithm = _exact_value(prep, group, closed_form, memory_limit, n_jobs, func, groups)
    e_orig = prep.e_orig
    check_not_rounding(prep, e_orig, func)
    if method == "divide":
        order = np.arange(n)
        if shuffle:
            order = np.random.RandomState(seed).permutation(n)
        e_switch = _divide_e_switch(prep.predictor, prep.X, y_enc, group, order)
    elif method == "permutation":
        perms, X = permutation_indices(n, n_repeats, seed), prep.X
        if n_jobs in (None, 1):
            vals = [_permuted_loss(prep.predictor, X, y_enc, group, p) for p in perms]
        else:
            vals = Parallel(n_jobs=n_jobs)(delayed(_permuted_loss)(prep.predictor, X, y_enc, group, p) for p in perms)
        reps = np.asarray(vals)
        e_switch = float(np.mean(reps))
    return ModelRelianceResult(
        features=names,
        feature_indices=tuple(group),
        method=method,
        loss=prep.loss.name,
        e_orig=e_orig,
        e_switch=float(e_switch),
        ratio=float(_ratio(e_switch, e_orig)),
        difference=float(e_switch - e_orig),
        n_samples=n,
        e_switch_repeats=reps,
        ratio_repeats=None if reps is None else _ratio(reps, e_orig),
        difference_repeats=None if reps is None else reps - e_orig,
        closed_form=algorithm == "linear",
        exact_algorithm=algorithm,
    )


# --------------------------------------------------------------------------- public API
#: the declared constraints of model_reliance and feature_reliance (closed_form keeps its own check:
#: ``True``/``False``/``"auto"`` compared by value, as before)
_MR_PARAMS = {
    "method": Options(("exact", "divide", "permutation")),
    "n_repeats": Integral(1),
    "shuffle": Boolean(),
    "random_state": RandomStateLike(),
    "n_jobs": NJobs(),
    "memory_limit": Integral(1024),
}


@validate_params(_MR_PARAMS)
def model_reliance(
    estimator: Any,
    X: Any,
    y: Any,
    features: Any,
    *,
    loss: str | Any = "auto",
    method: Literal["exact", "divide", "permutation"] = "exact",
    n_repeats: int = 5,
    shuffle: bool = False,
    random_state: Any = None,
    n_jobs: int | None = None,
    closed_form: Literal["auto"] | bool = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
) -> ModelRelianceResult:
    """Model reliance of a fitted model on a feature or feature group.

    Parameters
    ----------
    estimator : fitted estimator or callable
        Anything with ``predict`` (``predict_proba`` for ``loss="log_loss"``;
        ``decision_function`` is preferred for ``"hinge"``), a Pipeline, or a
        plain function ``f(X) -> predictions``.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Numeric data. A DataFrame is passed to the model as a DataFrame.
    y : array-like of shape (n_samples,)
    features : int, str or list of int/str
        The column (index or name) or group of columns X1 to switch.
    loss : {"auto", "squared_error", "absolute_error", "hinge", "log_loss", "zero_one"} or callable, default="auto"
        ``"auto"`` fits the estimator (``rashomon.utils.losses.default_loss``): squared
        error on ``predict`` for a regressor or a plain function, log loss on ``predict_proba``
        for a classifier that has it, otherwise hinge on ``decision_function`` (binary) or
        zero-one on ``predict``; the loss used is recorded as ``result.loss``. A callable is
        ``L(y, prediction) -> ndarray of shape (n,)`` applied to ``predict``. Hinge takes a
        binary classifier's labels (``classes_[1]`` is +1), or labels in {-1, +1} or {0, 1}.
    method : {"exact", "divide", "permutation"}, default="exact"
        The all-pairs U-statistic, the divide estimator, or Breiman's
        permutations.
    n_repeats : int, default=5
        Permutations for ``method="permutation"``.
    shuffle : bool, default=False
        Shuffle rows (seeded by ``random_state``) before the divide estimator pairs them.
    random_state : None, int, RandomState or Generator
        Seeds the permutations exactly as
        ``sklearn.inspection.permutation_importance`` does with the same
        ``random_state``.
    n_jobs : int, default=None
        Parallel jobs (joblib) over prediction blocks or repeats. Results are
        identical for any ``n_jobs``.
    closed_form : "auto" or bool, default="auto"
        ``"auto"``: use the closed form for linear regressors under squared loss
        (one pass of sufficient statistics for all features and groups) and, for
        scikit-learn tree ensembles, the threshold cells / prediction paths (exact,
        far fewer predictions; see the module notes). ``False`` forces the generic
        streamed path over distinct values; ``True`` requires the linear closed form.
    memory_limit : int, default=256 MiB
        Bound (bytes) on the switched rows built at once by the exact path.

    Returns
    -------
    ModelRelianceResult

    References
    ----------
    A. Fisher, C. Rudin and F. Dominici, "All Models are Wrong, but Many are
    Useful: Learning a Variable's Importance by Studying an Entire Class of
    Prediction Models Simultaneously", JMLR 20(177):1-81, 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from rashomon import model_reliance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = X @ [1.0, 0.5, 0.0] + rng.normal(size=200)
    >>> mr = model_reliance(LinearRegression().fit(X, y), X, y, 0)
    >>> bool(mr.ratio > 1.5)
    True
    """
    func = "model_reliance"
    check_choice(closed_form, ("auto", True, False), "closed_form", func)
    if is_dask_input(X, y):  # out of core: the linear closed form from one pass of row sums
        return dask_reliance(
            estimator, X, y, features, loss=loss, method=method, closed_form=closed_form, func=func, single=True
        )
    prep = _Prepared(estimator, X, y, loss, func)
    group = resolve_group(features, prep.columns, prep.n_features, func)
    seed = seed_from(random_state, func) if method in ("permutation", "divide") else None
    return _reliance_one(prep, group, method, n_repeats, seed, shuffle, closed_form, memory_limit, n_jobs, func)


@validate_params(_MR_PARAMS)
def feature_reliance(
    estimator: Any,
    X: Any,
    y: Any,
    features: Any = None,
    *,
    loss: str | Any = "auto",
    method: Literal["exact", "divide", "permutation"] = "exact",
    n_repeats: int = 5,
    shuffle: bool = False,
    random_state: Any = None,
    n_jobs: int | None = None,
    closed_form: Literal["auto"] | bool = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
) -> FeatureRelianceResult:
    """Model reliance for every feature, or for given features and groups, at once.

    Parameters
    ----------
    features : None, list or dict, default=None
        None: every column alone. A list: each item a column (index or name) or
        a group (list). A dict: ``{name: column or group}``.
    Other parameters
        As in :func:`model_reliance`. ``e_orig`` is computed once; permutations
        are shared by all features (as in scikit-learn).

    Returns
    -------
    FeatureRelianceResult
    """
    func = "feature_reliance"
    check_choice(closed_form, ("auto", True, False), "closed_form", func)
    if is_dask_input(X, y):
        return dask_reliance(
            estimator, X, y, features, loss=loss, method=method, closed_form=closed_form, func=func, single=False
        )
    prep = _Prepared(estimator, X, y, loss, func)
    if not (features is None or isinstance(features, (dict, list, tuple))):
        raise RashomonInputError(
            f"The 'features' parameter of {func} must be None, a list or a dict. Got {features!r} instead."
        )
    items = resolve_features(features, prep.columns, prep.n_features, func)
    seed = seed_from(random_state, func) if method in ("permutation", "divide") else None
    groups = list(items.values())
    results = [
        _reliance_one(prep, g, method, n_repeats, seed, shuffle, closed_form, memory_limit, n_jobs, func, groups)
        for g in groups
    ]
    reps = method == "permutation"
    return FeatureRelianceResult(
        names=list(items),
        results=results,
        e_orig=prep.e_orig,
        e_switch=np.array([r.e_switch for r in results]),
        ratio=np.array([r.ratio for r in results]),
        difference=np.array([r.difference for r in results]),
        method=method,
        loss=prep.loss.name,
        # permutations: every result has its repeats
        ratio_repeats=np.vstack([r.ratio_repeats for r in results if r.ratio_repeats is not None]) if reps else None,
        difference_repeats=(
            np.vstack([r.difference_repeats for r in results if r.difference_repeats is not None]) if reps else None
        ),
    )
