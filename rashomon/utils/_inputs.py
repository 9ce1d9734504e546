"""Checks of rows and arguments met after fit: new rows against the fitted columns (scikit-learn's feature-name
check, matched by name), linear functionals, memory requests and relative margins.

Part of the one validation layer: :mod:`rashomon.utils.validation` re-exports every name here, and the messages
follow its template ("The 'X' parameter of f must be ... Got ... instead.").
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._errors import _param_error

__all__ = [
    "feature_names_of",
    "check_columns",
    "check_new_rows",
    "check_functional",
    "memory_limit",
    "check_memory",
    "check_relative_epsilon",
    "check_grid",
    "check_feature_indices",
]


def feature_names_of(X: Any, func: str, param: str = "X") -> np.ndarray | None:
    """The column names of a data frame X when they are all strings (scikit-learn's ``_get_feature_names``), else None.

    A frame mixing string and non-string names is an error (as in scikit-learn: such names
    cannot be validated).
    """
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    names = np.asarray(list(columns), dtype=object)
    if names.size == 0:
        return None
    types = sorted({type(v).__qualname__ for v in names})
    if len(types) > 1 and "str" in types:
        raise _param_error(
            param,
            func,
            "a frame whose column names are all strings (or none of them: convert them "
            "with X.columns = X.columns.astype(str))",
            f"column name types {types}",
        )
    return names if types == ["str"] else None


def check_columns(X: Any, fitted: Any, func: str, param: str = "X") -> Any:
    """X with its columns matched to those ``fitted`` was fitted on (scikit-learn's feature-name check, by name).

    ``fitted`` has ``n_features_in_`` and, when it was fitted on a frame with string column names,
    ``feature_names_in_``. As scikit-learn's ``_check_feature_names``: names at fit and none now (a
    NumPy array) or none at fit and names now is accepted with a ``UserWarning`` and the columns are
    taken by position. Unlike scikit-learn, a frame with the fitted columns in another order is
    reordered by name (scikit-learn refuses it); missing, unseen (extra or renamed) or repeated names
    are an error naming ``func`` and ``param``. Returns X (a frame reordered to the fitted order when
    needed); the caller then reads it with :func:`check_X`.
    """
    fitted_names = getattr(fitted, "feature_names_in_", None)
    names = feature_names_of(X, func, param)
    owner = type(fitted).__name__
    if fitted_names is None and names is None:
        return X
    if fitted_names is None:
        warnings.warn(f"X has feature names, but {owner} was fitted without feature names", UserWarning, stacklevel=3)
        return X
    if names is None:
        warnings.warn(
            f"X does not have valid feature names, but {owner} was fitted with feature names", UserWarning, stacklevel=3
        )
        return X
    fitted_list, got = [str(c) for c in fitted_names], [str(c) for c in names]
    if got == fitted_list:
        return X
    repeated = sorted({c for c in got if got.count(c) > 1})
    if repeated:
        raise _param_error(param, func, "a frame without repeated column names", f"repeated column(s) {repeated}")
    unseen = [c for c in got if c not in fitted_list]
    missing = [c for c in fitted_list if c not in got]
    if unseen or missing:
        parts = ([f"column(s) {missing} missing"] if missing else []) + (
            [f"unseen column(s) {unseen}"] if unseen else []
        )
        raise _param_error(
            param,
            func,
            f"a frame with the columns {owner} was fitted on ({_short(fitted_list)}; any order)",
            " and ".join(parts),
        )
    return X[list(fitted_names)]  # the same names in another order: matched by name


def _short(names: list[str], k: int = 8) -> str:
    return repr(names) if len(names) <= k else repr(names[:k])[:-1] + f", ... ({len(names)} in all)]"


def check_new_rows(X: Any, fitted: Any, func: str, param: str = "X", min_rows: int = 1) -> np.ndarray:
    """New rows for a fitted object (a set, a member): columns matched by name (:func:`check_columns`),
    then read and checked by :func:`check_X`, with as many columns as at fit. The one entry for rows
    that were not the fitting rows (predictions, ranges, multiplicity)."""
    from ._checks import check_X

    X = check_columns(X, fitted, func, param)
    Xa, _ = check_X(X, func, param=param, min_rows=min_rows)
    p = getattr(fitted, "n_features_in_", None)
    if p is not None and Xa.shape[1] != p:
        raise _param_error(
            param,
            func,
            f"an array with {p} columns (as the data {type(fitted).__name__} was fitted on)",
            f"{Xa.shape[1]} columns",
        )
    return Xa


def check_functional(c: Any, c0: Any, names: Any, d: int, func: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(C, c0, names)`` of linear functionals ``c'θ + c0``: C of shape (m, d) (a vector is one row), c0 of
    shape (m,) (a number is broadcast; None is 0) and m names, every value a finite number."""

    def as_float(v: Any, param: str, expected: str) -> np.ndarray:
        if isinstance(v, (str, bytes)):
            raise _param_error(param, func, expected, repr(v))
        try:
            arr = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise _param_error(param, func, expected, f"{v!r:.80} (not a rectangular array of numbers)") from None
        if not np.all(np.isfinite(arr)):
            raise _param_error(param, func, expected, "NaN or inf")
        return arr

    expected_c = f"a finite array of shape (d,) or (m, d) with d = {d} (the set's parameter dimension)"
    C = as_float(c, "c", expected_c)
    C = C.reshape(1, -1) if C.ndim <= 1 else C
    if C.ndim != 2 or C.shape[1] != d or C.shape[0] == 0:
        raise _param_error("c", func, expected_c, f"shape {np.shape(c)}")
    m = C.shape[0]
    a0 = np.zeros(m) if c0 is None else as_float(c0, "c0", f"None, a finite float or an array of {m} floats")
    if a0.ndim == 0 or a0.shape == (1,):
        a0 = np.full(m, float(a0.reshape(-1)[0]))
    if a0.shape != (m,):
        raise _param_error(
            "c0", func, f"None, a finite float or an array of {m} floats (one per row of c)", f"shape {a0.shape}"
        )
    if names is None:
        labels = [f"c{i}" for i in range(m)]
    elif isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
        raise _param_error("names", func, f"None or a list of {m} labels", repr(names))
    else:
        labels = [str(v) for v in names]
        if len(labels) != m:
            raise _param_error(
                "names", func, f"None or a list of {m} labels (one per row of c)", f"{len(labels)} labels"
            )
    return C, a0, labels


def memory_limit() -> float:
    """Bytes one call may plan to allocate: half the machine's physical memory (8 GiB when it cannot be read)."""
    import os

    try:
        total = float(os.sysconf("SC_PAGE_SIZE")) * float(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        total = 16.0 * 2**30
    return 0.5 * total if total > 0 else 8.0 * 2**30


def check_memory(need: float, param: str, value: Any, func: str, what: str) -> None:
    """Refuse up front a request whose working memory ``need`` (bytes) exceeds :func:`memory_limit`, instead of
    failing inside numpy (an ``_ArrayMemoryError``) or swapping."""
    limit = memory_limit()
    if need > limit:
        raise _param_error(
            param,
            func,
            f"small enough for {what} to fit in {limit / 2**30:.3g} GiB (half this machine's memory)",
            f"{value!r}, which needs about {need / 2**30:.3g} GiB",
        )


def check_relative_epsilon(
    value: float, func: str, param: str = "epsilon", unit: str = "the reference's loss"
) -> float:
    """Warn (:class:`RashomonWarning`) when a relative ε exceeds 1: most likely a percentage (10 meant as 10 %).

    A relative ε of 10 admits every model whose loss exceeds the reference's by up to 10 times ``unit``: a valid set, but rarely the one
    meant, so it is a warning (the value is kept) rather than an error. Call it after the value was checked finite
    and >= 0.
    """
    if value > 1:
        warnings.warn(
            f"The '{param}' parameter of {func} is {value:g}, read as a relative margin of {100 * value:g} % "
            f"of {unit}. If you meant {value:g} %, pass {param}={value / 100:g}.",
            _warning(),
            stacklevel=3,
        )
    return value


def _warning() -> type:
    from ._errors import RashomonWarning

    return RashomonWarning


def check_grid(grid: Any, n_features: int, func: str, param: str = "grid") -> list[np.ndarray]:
    """A user grid of feature values: one non-empty 1-D array of finite floats (a pair of them for two features)."""
    expected = (
        "a non-empty 1-D array of finite floats"
        if n_features == 1
        else f"a list of {n_features} non-empty 1-D arrays of finite floats (one per feature)"
    )
    items = [grid] if n_features == 1 else grid
    if isinstance(items, (str, bytes)) or not hasattr(items, "__len__") or len(items) != n_features:
        raise _param_error(param, func, expected, f"{grid!r:.80}")
    out = []
    for g in items:
        try:
            arr = np.asarray(g, dtype=float) if not isinstance(g, (str, bytes)) else None
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
            raise _param_error(param, func, expected, f"{grid!r:.80}")
        out.append(arr)
    return out


def check_feature_indices(values: Any, columns: Any, p: int, func: str, param: str) -> list[int]:
    """Column indices of a list of single features (a single feature is a list of one; None is none)."""
    from ._checks import resolve_group

    if values is None:
        return []
    items = [values] if isinstance(values, (str, int, np.integer)) else values
    if not isinstance(items, (list, tuple, np.ndarray)) and not hasattr(items, "tolist"):
        raise _param_error(param, func, "None, a feature or a list of features (indices or names)", f"{values!r:.80}")
    out = []
    for f in list(items):
        g = resolve_group(f, columns, p, func, param)
        if len(g) != 1:
            raise _param_error(param, func, "a list of single features (indices or names)", f"the group {f!r}")
        out.append(g[0])
    return out
