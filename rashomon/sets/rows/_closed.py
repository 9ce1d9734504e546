"""The closed forms of the range queries (a quadratic class whose ball is certified inactive): the result from
one product per block of rows, its fused check, and the per-fit cache key; also the full consistency check of the
iterative ranges (``_ranges.py``)."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from ...utils.validation import RashomonInputError
from ._range_results import FunctionalRange

_R = TypeVar("_R", bound="FunctionalRange")
#: rows per block of predictions (bounded memory for any number of rows)
_BLOCK = 4096


def _fit_key(rs) -> tuple:
    """What the engine and the cached closed-form answers are valid for: the fit's parametrisation, threshold
    and least-loss member (a refit changes it)."""
    return (id(rs.parametrization_), float(rs.epsilon_abs_), float(rs.theta_min_ @ rs.theta_min_))


def _closed_result(rs, eng, A, a0, names: list, tol, return_models, func, cls: type[_R], **fields: Any) -> _R:
    """The ranges of ``A θ + a0`` from the engine's closed forms (one product for ends, members and reference),
    checked by :func:`_check_closed`; ``names`` is kept as given (a fresh list)."""
    centre, half, ref, lo_m, hi_m = eng._closed_with_reference(A, a0, rs.reference_theta_, models=bool(return_models))
    _check_closed(centre, half, ref, rs, func)
    inner = half * (1 - 1e-12)  # the members' values (see closed_ranges)
    values = {
        "names": names,
        "lower": centre - half,
        "upper": centre + half,
        "lower_attained": centre - inner,
        "upper_attained": np.add(centre, inner, out=inner),
        "reference": ref,
        "lower_models": lo_m,
        "upper_models": hi_m,
        "epsilon_abs": rs.epsilon_abs_,
        "tol": tol,
        "parametrization": rs.parametrization_,
        **fields,
    }
    return _fresh(cls, values)


def _fresh(cls: type[_R], values: dict) -> _R:
    """A result of the frozen dataclass ``cls`` holding every one of its fields in ``values`` (not re-checked:
    its ``__init__`` assigns them one by one through ``object.__setattr__``, a third of a small query's cost)."""
    res = object.__new__(cls)
    res.__dict__.update(values)
    return res


_LABELS: list[str] = []  # "0" to str(_BLOCK - 1): the row labels of prediction ranges, built once


def _row_labels(start: int, stop: int) -> list[str]:
    """A fresh list of the labels ``str(start)`` to ``str(stop - 1)`` (a slice of labels built once)."""
    global _LABELS
    if stop > _BLOCK:
        return [str(i) for i in range(start, stop)]
    if not _LABELS:
        _LABELS = [str(i) for i in range(_BLOCK)]  # assigned whole: concurrent callers see all or nothing
    return _LABELS[start:stop]


def _check_consistent(lo, hi, lo_v, hi_v, ref, rs, func):
    """lower <= attained <= reference-compatible <= upper, or the bounds are not reported."""
    scale = 1e-9 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))
    bad = (lo > lo_v + scale) | (hi < hi_v - scale) | (lo > hi + scale)
    if rs.e_ref_ <= rs.epsilon_abs_ * (1 + 1e-12):
        bad |= (ref < lo - scale) | (ref > hi + scale)
    if not np.all(np.isfinite(lo)) or not np.all(np.isfinite(hi)) or np.any(bad):
        raise RashomonInputError(
            f"{func}: consistency check failed (a bound is not finite, or the reference or an "
            "attaining member lies outside it by more than 1e-9 relative); the ranges are not "
            "certified. Please report this data."
        )


def _check_closed(centre, half, ref, rs, func):
    """The closed-form ranges' check (their ends and members are ordered by construction): finite, and the
    reference inside when it is a member. Fused: ``|centre| + half`` is finite exactly when both are (half >= 0;
    an overflow of the sum alone sends it to the full check, which passes) and scales the reference's test."""
    size = np.abs(centre)
    size += half
    ok = bool(size.max(initial=0.0) < np.inf)
    if ok and rs.e_ref_ <= rs.epsilon_abs_ * (1 + 1e-12):
        dev = np.subtract(ref, centre)
        np.abs(dev, out=dev)
        dev -= half
        size += 1.0
        size *= 1e-9
        ok = not (dev > size).any()
    if not ok:
        _check_consistent(centre - half, centre + half, centre - half, centre + half, ref, rs, func)
        if not (np.isfinite(centre).all() and np.isfinite(half).all()):
            raise RashomonInputError(f"{func}: a closed-form range is not finite; the ranges are not certified.")


def _closed_engine(rs):
    """The set's range engine when it is built for this fit and answers in closed form (a quadratic class whose
    ball is certified inactive, the set not degenerate); None otherwise."""
    cached = rs.__dict__.get("_functional_engine")
    if cached is None or getattr(cached[1], "_closed", None) is None or rs._degenerate or cached[0] != _fit_key(rs):
        return None
    return cached[1]


def _copy_of(res: _R, tol: float) -> _R:
    """A copy of a result with its arrays (and names) copied and ``tol`` set: the cached answer stays intact."""
    values = {k: (v.copy() if isinstance(v, (np.ndarray, list)) else v) for k, v in res.__dict__.items()}
    values["tol"] = tol
    return _fresh(type(res), values)
