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
    centre, half, ref, lo_m, hi_m = eng.closed_with_reference(A, a0, rs.reference_theta_, models=bool(return_models))
    _check_closed(centre, half, ref, rs, func)
    inner = half * (1 - 1e-12)  # the members' values (see closed_ranges)
    return cls(
        names,
        centre - half,
        centre + half,
        centre - inner,
        centre + inner,
        ref,
        lo_m,
        hi_m,
        rs.epsilon_abs_,
        tol,
        rs.parametrization_,
        **fields,
    )


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
    reference inside when it is a member. One pass: ``|centre| + half`` is finite exactly when both are (half
    >= 0; an overflow of the sum alone sends it to the full check, which passes)."""
    size = np.abs(centre)
    size += half
    ok = bool(size.max(initial=0.0) < np.inf)
    if ok and rs.e_ref_ <= rs.epsilon_abs_ * (1 + 1e-12):
        size += 1.0
        size *= 1e-9
        ok = not np.any(np.abs(ref - centre) - half > size)
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
    new = object.__new__(type(res))  # the frozen dataclass's fields, copied without re-running its __init__
    fields = {k: (v.copy() if isinstance(v, (np.ndarray, list)) else v) for k, v in res.__dict__.items()}
    fields["tol"] = tol
    new.__dict__.update(fields)
    return new
