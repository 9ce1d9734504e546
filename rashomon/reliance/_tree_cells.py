"""Threshold cells of scikit-learn tree ensembles: the exact e_switch needs one prediction per cell.

A tree routes a row through comparisons ``x_k <= t``. Along a switched feature k,
the values with the same number of the ensemble's thresholds on k strictly below
them take the same branch at every node, so the ensemble's prediction depends on
the switched value only through that count, its *cell* (at most #thresholds + 1
cells; at most 256 for histogram gradient boosting). For a group the cell is the
combination of the per-feature cells. :func:`exact_e_switch` then predicts one
representative row per occupied cell (a data row, so the model's own ``predict``
is used unchanged) weighted by the cell's count, which equals the sum over
distinct values exactly (up to floating-point summation order).

Comparison rules, read in scikit-learn 1.9's source:

* ``tree/_tree.pyx`` (DecisionTree*, ExtraTree*, RandomForest*, ExtraTrees*,
  GradientBoosting*: ``predict_stages`` uses the same nodes): the input is cast
  to float32 and compared as ``(double) x32 <= threshold``; cells are therefore
  computed on the float32-rounded values.
* ``ensemble/_hist_gradient_boosting/_predictor.pyx`` (HistGradientBoosting*): raw
  float64 values, ``x <= num_threshold`` for numerical nodes. Categorical
  features compare category codes through bitsets: each distinct value is its
  own cell. A model with a pandas-categorical preprocessor is not collapsed.

Missing values never reach here (inputs are checked finite). Anything not
listed (a Pipeline, a subclass, a GradientBoosting with a fitted ``init``
estimator) returns None and keeps the generic path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["tree_thresholds", "threshold_cells"]

_SKLEARN_TREES = {
    "DecisionTreeRegressor",
    "DecisionTreeClassifier",
    "ExtraTreeRegressor",
    "ExtraTreeClassifier",
    "RandomForestRegressor",
    "RandomForestClassifier",
    "ExtraTreesRegressor",
    "ExtraTreesClassifier",
}
_GB = {"GradientBoostingRegressor", "GradientBoostingClassifier"}
_HGB = {"HistGradientBoostingRegressor", "HistGradientBoostingClassifier"}


def _is_sklearn_class(estimator: Any, names: set[str]) -> bool:
    cls = type(estimator)
    return cls.__name__ in names and cls.__module__.startswith("sklearn.")


def sklearn_trees(estimator: Any) -> list[Any] | None:
    """The fitted ``tree_`` objects of a scikit-learn tree or tree ensemble (float32 rule), else None."""
    if _is_sklearn_class(estimator, _SKLEARN_TREES):
        if hasattr(estimator, "tree_"):
            return [estimator.tree_]
        est = getattr(estimator, "estimators_", None)
        return None if not est else [e.tree_ for e in est]
    if _is_sklearn_class(estimator, _GB):
        init = getattr(estimator, "init_", None)
        if not (isinstance(init, str) and init == "zero") and not _is_sklearn_class(
            init, {"DummyRegressor", "DummyClassifier"}
        ):
            return None  # a fitted init estimator may depend on the switched values in any way
        est = getattr(estimator, "estimators_", None)
        return None if est is None else [e.tree_ for e in np.ravel(est)]
    return None


def tree_thresholds(estimator: Any, n_features: int) -> tuple[list[np.ndarray], str, np.ndarray] | None:
    """Per-feature sorted thresholds, the comparison rule and the categorical mask, or None.

    Returns ``(thresholds, rule, categorical)``: ``rule`` is ``"float32"`` (values
    cast to float32 before ``<=``) or ``"float64"``; ``categorical[k]`` means
    every distinct value of feature k is its own cell.
    """
    if getattr(estimator, "n_features_in_", n_features) != n_features:
        return None
    cat = np.zeros(n_features, dtype=bool)
    trees = sklearn_trees(estimator)
    if trees is not None:
        feats = np.concatenate([t.feature for t in trees])
        thr = np.concatenate([t.threshold for t in trees])
        keep = feats >= 0
        feats, thr, rule = feats[keep], thr[keep], "float32"
    elif _is_sklearn_class(estimator, _HGB):
        if getattr(estimator, "_preprocessor", None) is not None or not hasattr(estimator, "_predictors"):
            return None
        parts = [pred.nodes for it in estimator._predictors for pred in it]
        if not parts:
            return None
        nodes = np.concatenate(parts)
        split = nodes["is_leaf"] == 0
        num = split & (nodes["is_categorical"] == 0)
        feats, thr, rule = nodes["feature_idx"][num], nodes["num_threshold"][num], "float64"
        is_cat = getattr(estimator, "is_categorical_", None)
        if is_cat is not None:
            cat |= np.asarray(is_cat, dtype=bool)
        cat[np.unique(nodes["feature_idx"][split & (nodes["is_categorical"] != 0)])] = True
    else:
        return None
    order = np.lexsort((thr, feats))
    feats, thr = feats[order], thr[order]
    bounds = np.searchsorted(feats, np.arange(n_features + 1))
    per_feature = [np.unique(thr[bounds[k] : bounds[k + 1]]) for k in range(n_features)]
    return per_feature, rule, cat


def threshold_cells(
    estimator: Any, X: np.ndarray, group: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(values, inverse, counts)`` of the occupied threshold cells of ``X[:, group]``, or None.

    ``values`` holds one data row of the group per cell (the first row in it);
    ``inverse`` the cell of every row; ``counts`` the cell sizes.
    """
    info = tree_thresholds(estimator, X.shape[1])
    if info is None:
        return None
    thresholds, rule, cat = info
    codes = np.empty((X.shape[0], len(group)), dtype=np.int64)
    for c, k in enumerate(group):
        x = X[:, k]
        if cat[k]:
            codes[:, c] = np.unique(x, return_inverse=True)[1].ravel()
            continue
        if rule == "float32":
            x = x.astype(np.float32).astype(np.float64)
        codes[:, c] = np.searchsorted(thresholds[k], x, side="left")
    if len(group) == 1:
        _, first, inverse, counts = np.unique(codes[:, 0], return_index=True, return_inverse=True, return_counts=True)
    else:
        _, first, inverse, counts = np.unique(codes, axis=0, return_index=True, return_inverse=True, return_counts=True)
    return X[np.ix_(first, np.asarray(group, dtype=np.intp))], inverse.ravel(), counts
