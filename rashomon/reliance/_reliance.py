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
  scalers ending in one) under squared loss, a closed form in O(n·p) applies:
  with ``u_i = x1_i'β1`` and ``r_j = y_j − b − x2_j'β2``,
  ``Σ_{i,j}(r_j − u_i)² = n·Σ(r−r̄)² + n·Σ(u−ū)² + n²(r̄ − ū)²`` (all terms
  non-negative, so no cancellation), minus the diagonal ``Σ_i (r_i − u_i)²``.
"""
from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np
from joblib import Parallel, delayed

from ..utils import permutation_indices, permuted
from ..utils.losses import Loss, Predictor, get_loss
from ..utils.validation import (
    RashomonInputError,
    check_choice,
    check_positive_int,
    check_X,
    check_y,
    resolve_features,
    resolve_group,
    seed_from,
)

from ._results import FeatureRelianceResult, ModelRelianceResult, _ratio

__all__ = ["ModelRelianceResult", "FeatureRelianceResult", "model_reliance", "feature_reliance"]

DEFAULT_MEMORY_LIMIT = 256 * 2**20


_AFFINE_STEPS = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")


def linear_coefficients(estimator: Any, X: np.ndarray, predictor: Predictor) -> tuple[np.ndarray, float] | None:
    """Effective ``(coef, intercept)`` when ``estimator.predict`` is affine in x, else None.

    Accepts a regressor with ``coef_`` and ``intercept_`` or a Pipeline whose
    earlier steps are column-wise affine scalers. The effective coefficients are
    read off by probing the model at 0 and the unit vectors, then verified on
    up to 256 data rows (relative tolerance 1e-9), so a wrongly whitelisted step
    can never give a silent wrong answer.
    """
    from sklearn.base import is_regressor
    from sklearn.pipeline import Pipeline

    if predictor.method_name != "predict":
        return None
    final = estimator
    if isinstance(estimator, Pipeline):
        for _, step in estimator.steps[:-1]:
            if step not in (None, "passthrough") and type(step).__name__ not in _AFFINE_STEPS:
                return None
        final = estimator.steps[-1][1]
    if not (is_regressor(final) and hasattr(final, "coef_") and hasattr(final, "intercept_")):
        return None
    coef = np.asarray(final.coef_, dtype=float)
    if coef.ndim == 2 and coef.shape[0] != 1:
        return None
    p = X.shape[1]
    probe = np.vstack([np.zeros((1, p)), np.eye(p)])
    out = np.asarray(predictor(probe), dtype=float).ravel()
    if out.shape[0] != p + 1:
        return None
    b = float(out[0])
    beta = out[1:] - b
    rows = X[: min(256, X.shape[0])]
    direct = np.asarray(predictor(rows), dtype=float).ravel()
    scale = np.max(np.abs(direct)) + np.abs(rows) @ np.abs(beta) + abs(b) + 1.0
    if not np.all(np.abs(rows @ beta + b - direct) <= 1e-9 * scale):
        return None
    return beta, b


def linear_squared_e_switch(X: np.ndarray, y: np.ndarray, pred: np.ndarray, beta: np.ndarray, group: Sequence[int]) -> tuple[float, float]:
    """Exact ``(e_orig, e_switch)`` of a linear model under squared loss.

    ``pred = X @ beta + b`` is computed once per data set; each group then costs
    O(n·|group|): ``u = X1 @ beta1`` and ``r = y - pred + u``.
    """
    n = X.shape[0]
    g = list(group)
    u = X[:, g] @ beta[g]
    r = y - pred + u
    diag = float(np.sum((y - pred) ** 2))
    rc = r - r.mean()
    uc = u - u.mean()
    total = n * float(rc @ rc) + n * float(uc @ uc) + n * n * float(r.mean() - u.mean()) ** 2
    return diag / n, (total - diag) / (n * (n - 1))


# --------------------------------------------------------------------------- generic exact
def _block_sum(predictor: Predictor, X: np.ndarray, y_enc: np.ndarray, group: np.ndarray, values: np.ndarray,
               counts: np.ndarray, inverse: np.ndarray, v0: int, v1: int, j0: int, j1: int) -> float:
    """Σ over distinct values v in [v0, v1) and rows j in [j0, j1) of w(v, j)·L(y_j, f(v, x2_j)),
    with w(v, j) = #{i ≠ j : x1_i = v}."""
    nv, nj = v1 - v0, j1 - j0
    rows = np.tile(X[j0:j1], (nv, 1))
    rows[:, group] = np.repeat(values[v0:v1], nj, axis=0)
    losses = predictor.losses(np.tile(y_enc[j0:j1], nv), rows).reshape(nv, nj)
    w = counts[v0:v1, None] - (inverse[None, j0:j1] == np.arange(v0, v1)[:, None])
    return float(np.sum(losses * w))


def _exact_e_switch(predictor: Predictor, X: np.ndarray, y_enc: np.ndarray, group: tuple[int, ...],
                    max_rows: int, n_jobs: int | None) -> float:
    n = X.shape[0]
    g = np.asarray(group)
    values, inverse, counts = np.unique(X[:, g], axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    n_values = values.shape[0]
    bj = min(n, max(1, max_rows))
    bv = max(1, max_rows // bj)
    tasks = [(v0, min(n_values, v0 + bv), j0, min(n, j0 + bj)) for v0 in range(0, n_values, bv) for j0 in range(0, n, bj)]
    args = (predictor, X, y_enc, g, values, counts, inverse)
    if n_jobs in (None, 1) or len(tasks) == 1:
        sums = [_block_sum(*args, *t) for t in tasks]
    else:
        # Blocks are summed in a fixed order, so any n_jobs gives identical results.
        sums = Parallel(n_jobs=n_jobs)(delayed(_block_sum)(*args, *t) for t in tasks)
    return float(np.sum(sums)) / (n * (n - 1))


def _divide_e_switch(predictor: Predictor, X: np.ndarray, y_enc: np.ndarray, group: tuple[int, ...],
                     order: np.ndarray) -> float:
    h = X.shape[0] // 2
    a, b = order[:h], order[h:2 * h]
    g = np.asarray(group)
    Xs = X[np.concatenate([a, b])].copy()
    Xs[:h, g] = X[b][:, g]
    Xs[h:, g] = X[a][:, g]
    return float(np.mean(predictor.losses(y_enc[np.concatenate([a, b])], Xs)))


def _permuted_loss(predictor: Predictor, X: np.ndarray, y_enc: np.ndarray, group: tuple[int, ...], perm: np.ndarray) -> float:
    return float(np.mean(predictor.losses(y_enc, permuted(X, group, perm))))


# --------------------------------------------------------------------------- public API
class _Prepared:
    """Validated inputs shared by model_reliance and feature_reliance."""

    def __init__(self, estimator, X, y, loss, func):
        self.X, self.columns = check_X(X, func)
        self.loss: Loss = get_loss(loss, func)
        numeric = self.loss.name in ("squared_error", "absolute_error", "hinge")
        self.y = check_y(y, self.X.shape[0], func, numeric=numeric)
        self.predictor = Predictor(estimator, self.loss, self.columns, func)
        self.y_enc = self.predictor.encode_y(self.y, func)
        self.estimator = estimator
        self._e_orig: float | None = None
        self._linear: Any = False

    @property
    def e_orig(self) -> float:
        if self._e_orig is None:
            self._pred = self.predictor(self.X)
            self._e_orig = float(np.mean(self.predictor.losses_from(self.y_enc, self._pred)))
        return self._e_orig

    def linear(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(coef, X @ coef + intercept)`` for a linear regressor under squared loss, else None."""
        if self._linear is False:
            lin = linear_coefficients(self.estimator, self.X, self.predictor) if self.loss.name == "squared_error" else None
            self._linear = None if lin is None else (lin[0], self.X @ lin[0] + lin[1])
        return self._linear


def _reliance_one(prep: _Prepared, group: tuple[int, ...], method: str, n_repeats: int, seed: int | None,
                  shuffle: bool, closed_form: Any, memory_limit: int, n_jobs: int | None, func: str) -> ModelRelianceResult:
    X, y_enc, n = prep.X, prep.y_enc, prep.X.shape[0]
    names = tuple(prep.columns[i] if prep.columns else f"x{i}" for i in group)
    reps = None
    used_closed = False
    lin = prep.linear() if (method == "exact" and closed_form in ("auto", True)) else None
    if lin is not None and prep._e_orig is None:
        # X @ coef + intercept was verified against predict(); it is the prediction.
        prep._e_orig = float(np.mean((prep.y - lin[1]) ** 2))
    e_orig = prep.e_orig
    if method == "exact":
        if closed_form is True and lin is None:
            raise RashomonInputError(
                f"The 'closed_form' parameter of {func} is True, but the closed form needs a linear regressor "
                "(coef_/intercept_, or a Pipeline of affine scalers ending in one) and loss='squared_error'."
            )
        if lin is not None:
            _, e_switch = linear_squared_e_switch(X, prep.y, lin[1], lin[0], group)
            used_closed = True
        else:
            max_rows = max(1, int(memory_limit // (8 * (X.shape[1] + 4))))
            e_switch = _exact_e_switch(prep.predictor, X, y_enc, group, max_rows, n_jobs)
    elif method == "divide":
        order = np.arange(n)
        if shuffle:
            order = np.random.RandomState(seed).permutation(n)
        e_switch = _divide_e_switch(prep.predictor, X, y_enc, group, order)
    else:
        perms = permutation_indices(n, n_repeats, seed)
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
        closed_form=used_closed,
    )


def _check_common(method, n_repeats, closed_form, memory_limit, func):
    check_choice(method, ("exact", "divide", "permutation"), "method", func)
    n_repeats = check_positive_int(n_repeats, "n_repeats", func)
    check_choice(closed_form, ("auto", True, False), "closed_form", func)
    check_positive_int(memory_limit, "memory_limit", func, minimum=1024)
    return n_repeats


def model_reliance(
    estimator: Any,
    X: Any,
    y: Any,
    features: Any,
    *,
    loss: str | Any = "squared_error",
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
    loss : {"squared_error", "absolute_error", "hinge", "log_loss", "zero_one"} or callable, default="squared_error"
        A callable is ``L(y, prediction) -> ndarray of shape (n,)`` applied to
        ``predict``. Hinge takes labels in {-1, +1} or {0, 1}.
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
        Use the O(n·p) closed form for linear regressors under squared loss.
        ``False`` forces the generic streamed path; ``True`` requires it.
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
    n_repeats = _check_common(method, n_repeats, closed_form, memory_limit, func)
    prep = _Prepared(estimator, X, y, loss, func)
    group = resolve_group(features, prep.columns, prep.X.shape[1], func)
    seed = seed_from(random_state, func) if method in ("permutation", "divide") else None
    return _reliance_one(prep, group, method, n_repeats, seed, shuffle, closed_form, memory_limit, n_jobs, func)


def feature_reliance(
    estimator: Any,
    X: Any,
    y: Any,
    features: Any = None,
    *,
    loss: str | Any = "squared_error",
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
    n_repeats = _check_common(method, n_repeats, closed_form, memory_limit, func)
    prep = _Prepared(estimator, X, y, loss, func)
    if not (features is None or isinstance(features, (dict, list, tuple))):
        raise RashomonInputError(f"The 'features' parameter of {func} must be None, a list or a dict. Got {features!r} instead.")
    items = resolve_features(features, prep.columns, prep.X.shape[1], func)
    seed = seed_from(random_state, func) if method in ("permutation", "divide") else None
    results = [
        _reliance_one(prep, g, method, n_repeats, seed, shuffle, closed_form, memory_limit, n_jobs, func)
        for g in items.values()
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
        ratio_repeats=np.vstack([r.ratio_repeats for r in results]) if reps else None,
        difference_repeats=np.vstack([r.difference_repeats for r in results]) if reps else None,
    )
