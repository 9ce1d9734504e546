"""Exact ranges over a Rashomon set: any linear functional, predictions per row, coefficients.

All three are one computation (:class:`~rashomon.sets.LinearFunctionalRange`): a linear
objective ``a'θ + a₀`` minimised and maximised over the loss ellipsoid cut by the norm
ball, with a certified bound and an attaining member at each end. The result classes are in
``_range_results.py``.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from ...utils import one_blas_thread
from ...utils.validation import RashomonInputError
from ..margin import margin_set
from ._closed import _BLOCK, _check_consistent, _closed_engine, _closed_result, _copy_of, _fit_key, _row_labels
from ._range_results import CoefRange, FunctionalRange, PredictionRange

__all__ = ["functional_ranges", "engine_of", "affine_attributes"]

_R = TypeVar("_R", bound="FunctionalRange")


# ---------------------------------------------------------------------- engine access
def engine_of(rs, func: str):
    """The set's range engine, built once per fit: :class:`LinearFunctionalRange` for the quadratic classes,
    :class:`~rashomon.sets.margin._ranges.MarginFunctionalRange` for the logistic and hinge classes."""
    rs._check_fitted(func.split(".")[-1])
    ms = margin_set(rs)
    if rs.loss_ != "squared_error" and ms is None:
        raise RashomonInputError(
            f"{func} needs a quadratic class (loss='squared_error') or a classifier class "
            f"(LogisticModelClass, HingeModelClass). Got {type(rs.model_class).__name__} with "
            f"loss={rs.loss_!r}; only model_class_reliance answers this loss."
        )
    key = _fit_key(rs)
    cached = rs.__dict__.get("_functional_engine")
    if cached is not None and cached[0] == key:
        return cached[1]
    from ..scale import dask_margin_ranges, is_dask_margin

    eng: Any
    if is_dask_margin(rs):  # a logistic set fitted on Dask input: batched Newton passes over the rows
        eng = dask_margin_ranges(rs)
    elif ms is not None:
        from ..margin import MarginFunctionalRange

        eng = MarginFunctionalRange(ms, rs.epsilon_abs_)  # either engine: the same minimize()
    else:
        from ._functional import LinearFunctionalRange

        par, eo = rs.parametrization_, rs.e_orig_form_
        eng = LinearFunctionalRange(
            eo.Q, eo.c, eo.k, par.B, par.r, rs.epsilon_abs_, rs.theta_min_, func, getattr(par, "loss_only", False)
        )
    rs._functional_engine = (key, eng)
    return eng


def functional_ranges(
    rs,
    A: np.ndarray,
    a0: np.ndarray,
    names: list,
    *,
    tol: float,
    return_models: bool,
    func: str,
    cls: type[_R] = FunctionalRange,
    tick=None,
    **fields: Any,
) -> _R:  # type: ignore[assignment,unused-ignore]  # mypy#3737
    """Ranges of ``A θ + a0`` (rows) over the set, in blocks of rows; ``tick(k)``: k row-ends done (progress);
    ``fields``: further fields of ``cls`` (the scale of a :class:`PredictionRange`)."""
    m, d = A.shape
    if rs._degenerate:
        ref = A @ rs.reference_theta_ + a0
        val = A @ rs.theta_min_ + a0
        models = np.tile(rs.theta_min_, (m, 1)) if return_models else None
        return cls(
            list(names),
            val,
            val.copy(),
            val.copy(),
            val.copy(),
            ref,
            models,
            None if models is None else models.copy(),
            rs.epsilon_abs_,
            tol,
            rs.parametrization_,
            **fields,
        )
    eng = engine_of(rs, func)
    if getattr(eng, "_closed", None) is not None:  # the ball certified inactive: closed forms
        return _closed_result(rs, eng, A, a0, list(names), tol, return_models, func, cls, **fields)
    ref = A @ rs.reference_theta_ + a0
    kw = {"tick": tick} if tick is not None and hasattr(eng, "_batch") else {}
    lo_b, hi_b, lo_v, hi_v = (np.empty(m) for _ in range(4))
    lo_m, hi_m = (np.empty((m if return_models else 0, d)) for _ in range(2))
    for s in range(0, m, _BLOCK):
        sl = slice(s, min(m, s + _BLOCK))
        b, th, v = eng.minimize(A[sl], tol=tol, **kw)
        lo_b[sl], lo_v[sl] = b + a0[sl], v + a0[sl]
        if return_models:
            lo_m[sl] = th
        b, th, v = eng.minimize(-A[sl], tol=tol, **kw)
        hi_b[sl], hi_v[sl] = a0[sl] - b, a0[sl] - v
        if return_models:
            hi_m[sl] = th
    _check_consistent(lo_b, hi_b, lo_v, hi_v, ref, rs, func)
    return cls(
        list(names),
        lo_b,
        hi_b,
        lo_v,
        hi_v,
        ref,
        lo_m if return_models else None,
        hi_m if return_models else None,
        rs.epsilon_abs_,
        tol,
        rs.parametrization_,
        **fields,
    )


def affine_attributes(par, attrs: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(A, a0)`` with ``concat(attrs)(θ) = Aθ + a0``: read off a member's attributes at 0 and unit vectors."""
    d = par.dim

    def vec(theta):
        at = par.member_attributes(theta)
        return np.concatenate([np.atleast_1d(np.asarray(at[a], dtype=float)).ravel() for a in attrs])

    a0 = vec(np.zeros(d))
    A = np.column_stack([vec(e) - a0 for e in np.eye(d)])
    return A, a0


# ---------------------------------------------------------------------- queries
def functional_range(rs, C, c0, names, tol, return_models, func, progress=False) -> FunctionalRange:
    rs._check_fitted("functional_range")
    d = rs.parametrization_.dim
    Ca = np.atleast_2d(np.asarray(C, dtype=float)) if not np.isscalar(C) else np.array([[C]], dtype=float)
    if Ca.ndim != 2 or Ca.shape[1] != d or Ca.shape[0] == 0 or not np.all(np.isfinite(Ca)):
        raise RashomonInputError(
            f"The 'c' parameter of {func} must be a finite array of shape (d,) or (m, d) with "
            f"d = {d} (the set's parameter dimension). Got shape {np.shape(C)} instead."
        )
    m = Ca.shape[0]
    a0 = np.zeros(m) if c0 is None else np.broadcast_to(np.asarray(c0, dtype=float), (m,)).astype(float)
    if not np.all(np.isfinite(a0)):
        raise RashomonInputError(f"The 'c0' parameter of {func} must be finite. Got {c0!r} instead.")
    names = [f"c{i}" for i in range(m)] if names is None else [str(v) for v in names]
    if len(names) != m:
        raise RashomonInputError(f"The 'names' parameter of {func} must have {m} entries. Got {len(names)} instead.")
    with _phase(rs, progress, f"{func}: {m} functionals", m) as tick:
        return functional_ranges(rs, Ca, a0, names, tol=tol, return_models=return_models, func=func, tick=tick)


def _phase(rs, progress, desc, m):
    """The progress reporter of a query over m functionals (both ends; only the classifier classes can be slow)."""
    from .._progress import progress_phase

    return progress_phase(bool(progress) and margin_set(rs) is not None, desc, 2 * m)


def _score_scale(rs, scale, func) -> str:
    """The scale a prediction range is reported on (see :class:`PredictionRange`)."""
    ms = margin_set(rs)
    if ms is None:
        if scale == "probability":
            raise RashomonInputError(
                f"The 'scale' parameter of {func} is 'probability', which needs the logistic "
                f"class (LogisticModelClass). Got {type(rs.model_class).__name__} with "
                f"loss={rs.loss_!r}; use scale=None."
            )
        return "prediction"
    if scale == "probability" and ms.loss.name != "logistic":
        raise RashomonInputError(
            f"The 'scale' parameter of {func} is 'probability', which needs the logistic class; "
            f"the set's class uses loss={rs.loss_!r} (no probabilities). Use scale='score'."
        )
    return scale or ("probability" if ms.loss.name == "logistic" else "score")


def to_probability(res: PredictionRange) -> PredictionRange:
    """The same range on the probability scale (σ of every score; σ is increasing)."""
    from dataclasses import replace

    from scipy.special import expit

    return replace(
        res,
        lower=expit(res.lower),
        upper=expit(res.upper),
        lower_attained=expit(res.lower_attained),
        upper_attained=expit(res.upper_attained),
        reference=expit(res.reference),
        scale="probability",
    )


def prediction_range(rs, X, *, tol, return_models, func, return_map=False, scale=None, progress=False):
    rs._check_fitted(func.split(".")[-1])
    eng = None if return_map or scale == "probability" else _closed_engine(rs)
    if eng is not None:  # closed forms (a regression class: scale "prediction"), one product for all rows
        Xa = rs._rows(X, func)
        if len(Xa) <= _BLOCK:
            P, p0 = rs.parametrization_.prediction_map(Xa)
            labels = _row_labels(0, len(P))
            return _closed_result(rs, eng, P, p0, labels, tol, return_models, func, PredictionRange, scale="prediction")
        with _phase(rs, progress, f"{func}: {len(Xa)} rows", len(Xa)) as tick:
            return _prediction_blocks(
                rs, Xa, rs.parametrization_, len(Xa), tol, return_models, func, False, "prediction", tick
            )
    scale = _score_scale(rs, scale, func)
    if scale == "probability":
        res = prediction_range(
            rs,
            X,
            tol=tol,
            return_models=return_models,
            func=func,
            return_map=return_map,
            scale="score",
            progress=progress,
        )
        return (to_probability(res[0]),) + tuple(res[1:]) if return_map else to_probability(res)
    return _prediction_range(
        rs, X, tol=tol, return_models=return_models, func=func, return_map=return_map, scale=scale, progress=progress
    )


def _prediction_range(rs, X, *, tol, return_models, func, return_map, scale, progress=False):
    Xa = rs._rows(X, func)  # the fitting rows, or new rows checked by name as scikit-learn (check_new_rows)
    par, m = rs.parametrization_, len(Xa)
    with _phase(rs, progress, f"{func}: {m} rows", m) as tick:
        return _prediction_blocks(rs, Xa, par, m, tol, return_models, func, return_map, scale, tick)


def _prediction_blocks(rs, Xa, par, m, tol, return_models, func, return_map, scale, tick):

    if return_map:  # the caller needs the whole prediction map (multiplicity evaluates members on every row)
        P, p0 = par.prediction_map(Xa)
        res = functional_ranges(
            rs,
            P,
            p0,
            _row_labels(0, m),
            tol=tol,
            return_models=return_models,
            func=func,
            cls=PredictionRange,
            tick=tick,
            scale=scale,
        )
        return res, P, p0
    # bounded memory: the prediction map (rows x d, d up to the kernel dictionary's size) block by block
    parts = []
    for s in range(0, m, _BLOCK):
        P, p0 = par.prediction_map(Xa[s : s + _BLOCK])
        parts.append(
            functional_ranges(
                rs,
                P,
                p0,
                _row_labels(s, s + len(P)),
                tol=tol,
                return_models=return_models,
                func=func,
                cls=PredictionRange,
                tick=tick,
                scale=scale,
            )
        )
    if len(parts) == 1:
        return parts[0]
    cat: dict[str, Any] = {
        k: np.concatenate([getattr(r, k) for r in parts])
        for k in ("lower", "upper", "lower_attained", "upper_attained", "reference")
    }
    models: dict[str, Any] = {
        k: np.vstack([getattr(r, k) for r in parts]) if return_models else None
        for k in ("lower_models", "upper_models")
    }
    return PredictionRange(
        sum((r.names for r in parts), []),
        **cat,
        **models,
        epsilon_abs=rs.epsilon_abs_,
        tol=tol,
        parametrization=par,
        scale=scale,
    )


def coef_range(rs, tol, return_models, func, standardize=False, progress=False) -> CoefRange:
    """The coefficients' ranges. A closed-form answer (the ball certified inactive) depends on the fit alone: it
    is built (and checked) once per fit, ``standardize`` and ``return_models``, and later calls get a copy of it
    (no BLAS call, hence no thread scope; a user who mutates a result does not change the next one)."""
    rs._check_fitted("coef_range")
    key, which = _fit_key(rs), (bool(standardize), bool(return_models))
    cache = rs.__dict__.get("_coef_closed")
    if cache is None or cache[0] != key:
        cache = rs._coef_closed = (key, {})
    hit = cache[1].get(which)
    if hit is None:
        with one_blas_thread():
            hit = _coef_range(rs, tol, return_models, func, standardize, progress)
            eng = rs.__dict__.get("_functional_engine")
            if not rs._degenerate and getattr(eng and eng[1], "_closed", None) is not None:
                cache[1][which] = hit
    return _copy_of(hit, tol)


def _coef_range(rs, tol, return_models, func, standardize, progress) -> CoefRange:
    par = rs.parametrization_
    cached = rs.__dict__.get("_coef_map")  # the map θ -> (intercept, coefficients), once per parametrisation
    if cached is None or cached[0] is not par:
        if "coef_" not in par.member_attributes(rs.reference_theta_):
            raise RashomonInputError(
                f"{func} needs a linear model class (coefficients); {par.class_name} has none. Use "
                "functional_range for linear functionals of its parameters."
            )
        cached = rs._coef_map = (par, *affine_attributes(par, ("intercept_", "coef_")))
    A, a0 = cached[1].copy(), cached[2].copy()
    p = len(A) - 1
    cols = list(rs._columns) if rs._columns else [f"x{j}" for j in range(p)]
    if standardize:  # per (weighted) standard deviation of each feature, as the class standardises
        sd = np.asarray(par.sd, dtype=float)
        A[1:] *= sd[:, None]
        a0[1:] *= sd
        cols = [f"{c} (per SD)" for c in cols]
    with _phase(rs, progress, f"{func}: {len(A)} coefficients", len(A)) as tick:
        return functional_ranges(
            rs, A, a0, ["intercept"] + cols, tol=tol, return_models=return_models, func=func, cls=CoefRange, tick=tick
        )
