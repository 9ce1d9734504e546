"""The array and argument checks of the one validation layer (:mod:`rashomon.utils.validation` exports them)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._errors import RashomonInputError, RashomonWarning, _param_error  # noqa: F401

MAX_MAGNITUDE = 1e150
#: Range of max |y| (targets, weights): squared losses and the products the MCR search forms from them (up to
#: about the seventh power of y) stay inside double precision, away from subnormals.
MAX_Y_MAGNITUDE = 1e40
MIN_Y_MAGNITUDE = 1e-40


def check_X(
    X: Any, func: str, param: str = "X", min_rows: int = 2, finite: bool = True
) -> tuple[np.ndarray, list[str] | None]:
    """Return ``(X as float64 2-D array, column names or None)``.

    Raises a clear error for non-numeric columns, NaN/inf, wrong dimension and
    too few rows. ``finite=False`` leaves the values unchecked: the caller then
    proves them finite and bounded in its own pass over X, or calls
    :func:`check_finite` before any other use.
    """
    columns = None
    if isinstance(X, pd.DataFrame):
        columns = [str(c) for c in X.columns]
        bad = [
            str(c)
            for c, dt in X.dtypes.items()
            if not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))
        ]
        if bad:
            raise _param_error(param, func, "numeric (encode categorical columns first)", f"non-numeric columns {bad}")
        arr = X.to_numpy(dtype=float)
    else:
        try:
            arr = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as exc:
            raise _param_error(
                param,
                func,
                "a numeric array-like of shape (n_samples, n_features)",
                f"values that cannot be read as numbers ({exc})",
            ) from None
    if arr.ndim != 2:
        raise _param_error(
            param, func, "2-D, of shape (n_samples, n_features)", f"an array with {arr.ndim} dimension(s)"
        )
    if arr.shape[0] < min_rows:
        raise _param_error(param, func, f"an array with at least {min_rows} rows", f"{arr.shape[0]} row(s)")
    if arr.shape[1] < 1:
        raise _param_error(param, func, "an array with at least one column", "0 columns")
    if finite:
        check_finite(arr, func, param, columns)
    return arr, columns


def check_finite(arr: np.ndarray, func: str, param: str = "X", columns: list[str] | None = None) -> None:
    """Raise a clear error unless every value of the float array is finite and of magnitude at most MAX_MAGNITUDE."""
    # fast path, one BLAS pass: a finite sum of squares <= MAX_MAGNITUDE² means every value is finite and
    # of magnitude <= MAX_MAGNITUDE (a NaN or inf makes the sum NaN or inf)
    if (arr.flags.c_contiguous or arr.flags.f_contiguous) and arr.size:
        flat = arr.ravel(order="K")  # a view for C- or F-ordered data
        with np.errstate(over="ignore", invalid="ignore"):
            ss = float(np.dot(flat, flat))
        if math.isfinite(ss) and ss <= MAX_MAGNITUDE**2:
            return
    # one pass: the largest |value| is NaN or inf exactly when some value is
    big = float(max(np.max(arr, initial=-np.inf), -np.min(arr, initial=np.inf))) if arr.size else 0.0
    if not math.isfinite(big):
        bad_cols = np.where(~np.all(np.isfinite(arr), axis=0))[0]
        names = [columns[i] for i in bad_cols] if columns else [int(i) for i in bad_cols]
        raise _param_error(param, func, "finite (no NaN or inf)", f"NaN or inf in column(s) {names}")
    if big > MAX_MAGNITUDE:
        raise _param_error(
            param,
            func,
            f"of magnitude at most {MAX_MAGNITUDE:g} (squares and sums of squares must "
            "fit in double precision; rescale the columns)",
            f"values up to {big:.3g}",
        )


def check_y(y: Any, n: int, func: str, param: str = "y", numeric: bool = True) -> np.ndarray:
    """Return y as a 1-D array of length ``n``."""
    arr = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise _param_error(param, func, "1-D", f"an array of shape {arr.shape}")
    if arr.shape[0] != n:
        raise _param_error(param, func, f"of the same length as X ({n} rows)", f"length {arr.shape[0]}")
    if numeric or arr.dtype.kind in "biufc":
        if arr.dtype.kind == "c":
            raise _param_error(param, func, "real-valued", "complex values")
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise _param_error(param, func, "numeric", f"values of type {arr.dtype}") from None
        if not np.all(np.isfinite(arr)):
            raise _param_error(
                param, func, "finite (no NaN or inf)", f"{int(np.sum(~np.isfinite(arr)))} non-finite value(s)"
            )
        big = float(max(arr.max(), -arr.min())) if arr.size else 0.0  # max |y| without a temporary copy
        if big > MAX_Y_MAGNITUDE or 0.0 < big < MIN_Y_MAGNITUDE:
            raise _param_error(
                param,
                func,
                f"of magnitude between {MIN_Y_MAGNITUDE:g} and {MAX_Y_MAGNITUDE:g} (squared "
                "losses must neither overflow nor underflow in double precision; rescale it: ratios "
                "of losses do not change)",
                f"values up to {big:.3g}",
            )
    return arr


def _one_feature(f: Any, columns: list[str] | None, p: int, func: str, param: str) -> int:
    if isinstance(f, (bool, np.bool_)):
        raise _param_error(param, func, "column indices or names", f"the boolean {f!r}")
    if isinstance(f, numbers.Integral):
        i = int(f)
        if not -p <= i < p:
            raise _param_error(param, func, f"a column index in [0, {p})", f"index {i}")
        return i % p
    if isinstance(f, str):
        if columns is None:
            raise _param_error(param, func, "column indices (X has no column names)", f"the name {f!r}")
        if f not in columns:
            raise _param_error(param, func, f"a column of X (one of {columns})", f"unknown feature {f!r}")
        return columns.index(f)
    raise _param_error(param, func, "a column index, a column name or a list of them", f"{f!r}")


def resolve_group(
    features: Any, columns: list[str] | None, p: int, func: str, param: str = "features"
) -> tuple[int, ...]:
    """Resolve one feature or one group of features to sorted column indices."""
    if isinstance(features, (str, numbers.Integral)) and not isinstance(features, (bool, np.bool_)):
        return (_one_feature(features, columns, p, func, param),)
    if isinstance(features, (list, tuple, np.ndarray, pd.Index)):
        items = list(features)
        if len(items) == 0:
            raise _param_error(param, func, "a non-empty feature group", "an empty group")
        idx = [_one_feature(f, columns, p, func, param) for f in items]
        if len(set(idx)) != len(idx):
            raise _param_error(param, func, "a group without repeated columns", f"{items!r}")
        return tuple(sorted(idx))
    raise _param_error(param, func, "a column index, a column name or a list of them", f"{features!r}")


def resolve_features(features: Any, columns: list[str] | None, p: int, func: str) -> dict:
    """``{name: column indices}`` for None (every column alone), a dict ``{name: column or
    group}``, or a list whose items are columns or groups (a single column or group is accepted
    too)."""
    if features is None:
        return {group_name((j,), columns): (j,) for j in range(p)}
    if isinstance(features, dict):
        if not features:
            raise _param_error("features", func, "a non-empty dict or list", "an empty dict")
        return {str(k): resolve_group(v, columns, p, func) for k, v in features.items()}
    if isinstance(features, (list, tuple)) and len(features) == 0:
        raise _param_error("features", func, "a non-empty dict or list", "an empty list")
    items = features if isinstance(features, (list, tuple)) else [features]
    out = {}
    for f in items:
        g = resolve_group(f, columns, p, func)
        out[group_name(g, columns)] = g
    return out


def group_name(idx: Sequence[int], columns: list[str] | None) -> str:
    names = [columns[i] if columns else f"x{i}" for i in idx]
    return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"


def check_choice(value: Any, choices: Sequence[Any], param: str, func: str) -> Any:
    if value not in choices:
        raise _param_error(param, func, f"one of {list(choices)}", repr(value))
    return value


def check_positive_int(value: Any, param: str, func: str, minimum: int = 1) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < minimum:
        raise _param_error(param, func, f"an int >= {minimum}", repr(value))
    return int(value)


def check_float(
    value: Any, param: str, func: str, *, low: float | None = None, strict: bool = True, high: float | None = None
) -> float:
    """A finite real (not bool) with ``value > low`` (``>=`` when ``strict=False``) and ``value < high``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and np.isfinite(value)  # type: ignore[call-overload]  # numpy's stubs do not know numbers.Real
    if ok and low is not None:
        ok = value > low if strict else value >= low
    if ok and high is not None:
        ok = value < high
    if not ok:
        cond = "" if low is None else (f" > {low}" if strict else f" >= {low}")
        if high is not None:
            cond += (" and" if cond else "") + f" < {high}"
        raise _param_error(param, func, f"a finite float{cond}", repr(value))
    return float(value)


def check_sample_weight(sample_weight: Any, n: int, func: str, min_rows: int = 3) -> np.ndarray:
    """Row weights (counts): ``n`` finite non-negative values summing to more than 1, on at least ``min_rows`` rows."""
    w = check_y(sample_weight, n, func, param="sample_weight")
    if np.any(w < 0) or w.sum() <= 1:
        raise RashomonInputError(
            f"The 'sample_weight' parameter of {func} must be non-negative counts summing to more than 1."
        )
    k = int(np.count_nonzero(w))
    if k < min_rows:
        raise RashomonInputError(
            f"The 'sample_weight' parameter of {func} must put weight on at least {min_rows} rows "
            f"(under the weights, the data are the weighted rows). Got weight on {k} row(s) instead."
        )
    return w


def seed_from(random_state: Any, func: str) -> int:
    """Draw one 31-bit seed from None, an int in [0, 2**32 - 1], a RandomState or a Generator."""
    from ._params import check_random_state as _check_rs

    random_state = _check_rs(random_state, func)
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.RandomState)):
        from sklearn.utils import check_random_state

        return int(check_random_state(random_state).randint(np.iinfo(np.int32).max + 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int32).max + 1))
    raise _param_error(
        "random_state", func, "None, an int, a RandomState or a Generator", repr(random_state)
    )  # pragma: no cover


def check_strata(strata, n, func):
    s = np.asarray(strata)
    if s.ndim != 1 or s.shape[0] != n:
        raise RashomonInputError(
            f"The 'strata' parameter of {func} must be one label per row (length {n}). Got shape {s.shape} instead."
        )
    _, codes = np.unique(s, return_inverse=True)
    return codes.ravel()


def check_positive_grid(value: Any, param: str, func: str) -> np.ndarray | None:
    """A grid of hyper-parameters (``alphas``, ``gammas``): None, or a non-empty 1-D array of finite floats > 0."""
    if value is None:
        return None
    try:
        arr = np.atleast_1d(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        arr = np.array([np.nan])
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise _param_error(param, func, "None or a non-empty 1-D array of finite floats > 0", repr(value))
    return arr


def check_norm_bound(value: Any, cls: str) -> float:
    """A model class's ``norm_bound``: a float > 0, or ``inf`` (the set defined by the loss alone)."""
    try:
        r = float(value)
    except (TypeError, ValueError):
        r = math.nan
    if isinstance(value, bool) or not r > 0:
        raise RashomonInputError(
            f"The 'norm_bound' parameter of {cls} must be a float > 0 or inf. Got {value!r} instead."
        )
    return r
