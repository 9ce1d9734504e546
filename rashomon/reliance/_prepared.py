"""The pieces of the MR estimators (``_reliance.py``, ``_conditional.py``): the validated inputs of one call
(``_Prepared``: X checked once, e_orig and the model's predictions cached, the linear closed form's
statistics), the divide and permutation estimates of e_switch, and the exact one with the algorithm it
used (linear closed form, tree paths, tree cells or distinct values)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..utils import permuted
from ..utils.losses import Loss, Predictor, resolve_loss
from ..utils.validation import MAX_MAGNITUDE, RashomonInputError, check_finite, check_X, check_y
from ._checks import check_fitted
from ._exact import exact_e_switch
from ._linear import LinearSwitchStats, linear_coefficients
from ._tree_cells import threshold_cells
from ._tree_paths import forest_path_e_switch

__all__ = ["DEFAULT_MEMORY_LIMIT"]


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
