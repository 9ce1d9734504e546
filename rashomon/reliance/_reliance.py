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

from ..utils import permutation_indices, permuted
from ..utils.losses import Loss, Predictor, resolve_loss
from ..utils.validation import (
    MAX_MAGNITUDE,
    Boolean,
    Integral,
    NJobs,
    Options,
    RandomStateLike,
    RashomonInputError,
    check_choice,
    check_finite,
    check_X,
    check_y,
    resolve_features,
    resolve_group,
    seed_from,
    validate_params,
)
from ._checks import check_fitted, check_not_rounding
from ._exact import exact_e_switch
from ._linear import LinearSwitchStats, linear_coefficients
from ._out_of_core import dask_reliance, is_dask_input
from ._results import FeatureRelianceResult, ModelRelianceResult, _ratio
from ._tree_cells import threshold_cells
from ._tree_paths import forest_path_e_switch

__all__ = ["ModelRelianceResult", "FeatureRelianceResult", "model_reliance", "feature_reliance"]

DEFAULT_MEMORY_LIMIT = 256 * 2**20


def _divide_e_switch(
    predictor: Predictor, X: np.ndarray, y_enc: np.ndarray, group: tuple[int, ...], order: np.ndarray
) -> float:
    h = X.shape[0] // 2
    a, b = order[:h], order[h : 2 * h]
    g = np.asarray(group)
    Xs = X[np.concatenate([a, b])].copy()
    Xs[:h, g] = X[b][:, g]
    Xs[h:, g] = X[a][:, g]
    return float(np.mean(predictor.losses(y_enc[np.concatenate([a, b])], Xs)))


def _permuted_loss(
    predictor: Predictor, X: np.ndarray, y_enc: np.ndarray, group: tuple[int, ...], perm: np.ndarray
) -> float:
    return float(np.mean(predictor.losses(y_enc, permuted(X, group, perm))))


# --------------------------------------------------------------------------- public API
class _Prepared:
    """Validated inputs shared by model_reliance and feature_reliance."""

    def __init__(self, estimator, X, y, loss, func):
        check_fitted(estimator, func)
        # X's values are checked on first use of .X, unless the linear closed form's pass proves them
        # finite and bounded first (one pass over X instead of two)
        self._X, self.columns = check_X(X, func, finite=False)
        self._func, self._finite = func, False
        self.n_samples, self.n_features = self._X.shape
        self.loss: Loss = resolve_loss(loss, estimator, func)
        numeric = self.loss.name in ("squared_error", "absolute_error")
        self.y = check_y(y, self.n_samples, func, numeric=numeric)
        self.predictor = Predictor(estimator, self.loss, self.columns, func)
        self.y_enc = self.predictor.encode_y(self.y, func)
        self.estimator = estimator
        self._e_orig: float | None = None
        self._linear: Any = False

    @property
    def X(self) -> np.ndarray:
        """X as float64, its values checked (finite, of magnitude at most MAX_MAGNITUDE)."""
        if not self._finite:
            check_finite(self._X, self._func, "X", self.columns)
            self._finite = True
        return self._X

    @property
    def e_orig(self) -> float:
        if self._e_orig is None:
            self._pred = self.predictor(self.X)
            self._e_orig = float(np.mean(self.predictor.losses_from(self.y_enc, self._pred)))
        return self._e_orig

    @property
    def prediction(self) -> np.ndarray:
        """The model's response on the unswitched rows (what ``e_orig`` averages the loss of)."""
        if getattr(self, "_pred", None) is None:
            self._e_orig = None
            _ = self.e_orig
        return self._pred

    def coefficients(self) -> tuple[np.ndarray, float] | None:
        """``(coef, intercept)`` of a linear regressor under squared loss, else None."""
        if self._linear is False:
            head = self._X[:256]  # the rows linear_coefficients predicts on: checked first (the full check if bad)
            if not (self._finite or np.all(np.abs(head) <= MAX_MAGNITUDE)):
                _ = self.X
            self._linear = (
                linear_coefficients(self.estimator, self._X, self.predictor)
                if self.loss.name == "squared_error"
                else None
            )
        return self._linear

    def linear(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(coef, X @ coef + intercept)`` for a linear regressor under squared loss, else None."""
        lin = self.coefficients()
        if lin is None:
            return None
        pred = self.X @ lin[0] + lin[1]
        if self._e_orig is None:
            # X @ coef + intercept was verified against predict(); it is the prediction.
            self._e_orig = float(np.mean((self.y - pred) ** 2))
        return lin[0], pred

    def linear_stats(self, groups: Sequence[tuple[int, ...]]) -> LinearSwitchStats | None:
        """Sufficient statistics of the linear closed form for ``groups`` (one pass, cached), else None."""
        lin = self.coefficients()
        if lin is None:
            return None
        cached = getattr(self, "_stats", None)
        if cached is None or not (groups is self._stats_groups or cached.covers(groups)):
            # the pass proves X finite and bounded, or makes the full check (which raises the clear error)
            self._stats = LinearSwitchStats(
                self._X, self.y, lin[0], lin[1], groups, check=lambda: self.X, func=self._func
            )
            self._stats_groups: Sequence[tuple[int, ...]] = groups
            self._finite = self._finite or self._stats.bounded
            if self._e_orig is None:
                self._e_orig = self._stats.e_orig
        return self._stats


def _exact_value(
    prep: _Prepared,
    group: tuple[int, ...],
    closed_form: Any,
    memory_limit: int,
    n_jobs: int | None,
    func: str,
    groups: Sequence[tuple[int, ...]] | None = None,
) -> tuple[float, str]:
    """Exact e_switch and the algorithm used: linear closed form, tree paths, tree cells or distinct values."""
    stats = prep.linear_stats(groups or [group]) if closed_form in ("auto", True) else None
    if closed_form is True and stats is None:
        raise RashomonInputError(
            f"The 'closed_form' parameter of {func} is True, but the closed form needs a linear regressor "
            "(coef_/intercept_, or a Pipeline of affine scalers ending in one) and loss='squared_error'."
        )
    if stats is not None:
        return stats.e_switch(group), "linear"
    X = prep.X
    max_rows = max(1, int(memory_limit // (8 * (X.shape[1] + 4))))
    if closed_form == "auto" and not prep.predictor.is_callable:
        value = forest_path_e_switch(
            prep.estimator, prep.predictor, X, prep.y_enc, group, prep.prediction, memory_limit
        )
        if value is not None:
            return value, "tree-paths"
        cells = threshold_cells(prep.estimator, X, group)
        if cells is not None:
            return exact_e_switch(prep.predictor, X, prep.y_enc, group, max_rows, n_jobs, cells), "tree-cells"
    return exact_e_switch(prep.predictor, X, prep.y_enc, group, max_rows, n_jobs), "distinct-values"


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
