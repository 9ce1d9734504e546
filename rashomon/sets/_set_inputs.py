"""Input checks of :class:`~rashomon.RashomonSet`: its constructor arguments, the column names it was fitted on,
and the rows its queries predict on (through the one validation layer, :mod:`rashomon.utils.validation`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model_classes.base import ClassMember, ModelClass
from ..utils.losses import canonical_loss_name
from ..utils.validation import (
    RashomonInputError,
    check_choice,
    check_float,
    check_functional,
    check_model_class_params,
    check_new_rows,
    check_relative_epsilon,
)
from ._epsilon import EPSILON_KINDS
from ._row_statistics import RowStatistics
from .scale import any_dask

__all__ = [
    "LOSSES",
    "MAX_EPSILON",
    "check_epsilons",
    "check_reference_class",
    "check_set_params",
    "record_names",
    "row_index",
    "query_rows",
    "scaled_functional_range",
]

LOSSES = ("squared_error", "hinge", "log_loss", "absolute_error")


def check_set_params(rs: Any, func: str) -> str:
    """Check a set's constructor arguments and its class's; return the loss the set uses.

    ``loss=None`` is the class's own loss; an explicit loss that contradicts a classifier class's is an
    error. A relative ε above 1 is kept with a :class:`~rashomon.utils.validation.RashomonWarning` (most
    likely a percentage).
    """
    mc = rs.model_class
    if not isinstance(mc, ModelClass):
        raise RashomonInputError(
            f"The 'model_class' parameter of {func} must be a model class such as "
            f"LinearModelClass or KernelModelClass. Got {mc!r} instead."
        )
    check_choice(rs.epsilon_kind, EPSILON_KINDS, "epsilon_kind", func)
    check_model_class_params(mc)  # the class's constructor arguments (booleans, grids, ...)
    cls_loss = canonical_loss_name(getattr(mc, "loss", "squared_error"))  # a classifier class carries its loss
    if rs.loss is None:
        loss = cls_loss
    else:
        loss = canonical_loss_name(rs.loss)  # "logistic" is "log_loss" (rashomon.utils.losses)
        check_choice(loss, LOSSES, "loss", func)
        if cls_loss != "squared_error" and loss != cls_loss:
            raise RashomonInputError(
                f"The 'loss' parameter of {func} must be None or {cls_loss!r} for "
                f"{type(mc).__name__} (the class carries its loss). Got {rs.loss!r} instead."
            )
    check_epsilons(rs.epsilon, rs.epsilon_kind, func, "epsilon")
    check_reference_class(rs.reference, mc, loss, func)
    return loss


def _member_class(par: Any) -> tuple[str, str]:
    """(class name, loss) of the set a member's parametrisation comes from."""
    name = str(getattr(par, "class_name", "?")).split("(")[0]
    margin = getattr(par, "info", {}).get("margin_loss")
    loss = "squared_error" if margin is None else canonical_loss_name(margin.name)
    return name, loss


def check_reference_class(ref: Any, mc: Any, loss: str, func: str) -> None:
    """A member of a class given as ``reference`` decides the set's parametrisation: it must come from the same
    class with the same loss (a LinearModelClass with a classifier loss fits the classifier class of that loss)."""
    par = getattr(ref, "parametrization_", None) if isinstance(ref, ClassMember) else None
    if par is None:
        return
    name = type(mc).__name__
    if name == "LinearModelClass" and loss in ("log_loss", "hinge"):
        name = "LogisticModelClass" if loss == "log_loss" else "HingeModelClass"
    ref_name, ref_loss = _member_class(par)
    if (ref_name, ref_loss) != (name, loss):
        raise RashomonInputError(
            f"The 'reference' parameter of {func} must be a member of the set's class, {name} "
            f"(loss {loss!r}). Got a member of {ref_name} (loss {ref_loss!r}) instead; pass reference=None "
            "or a model fitted by the set's class (model_class.fit_reference(X, y))."
        )


#: the largest ε accepted (any kind): a threshold 1e100 times the loss already admits the whole norm ball, and
#: at 1e300 the squares the engines form overflow
MAX_EPSILON = 1e100


def check_epsilons(value: Any, kind: str, func: str, param: str) -> np.ndarray:
    """ε (a number, or for an envelope a non-empty 1-D array): finite, >= 0 (> 0 when absolute), at most
    MAX_EPSILON; a relative ε above 1 warns (:func:`~rashomon.utils.validation.check_relative_epsilon`)."""
    expected = (
        f"a finite float {'> 0' if kind == 'absolute' else '>= 0'} and <= {MAX_EPSILON:g}"
        if param == "epsilon"
        else f"a non-empty 1-D array of finite floats {'> 0' if kind == 'absolute' else '>= 0'} and <= {MAX_EPSILON:g}"
    )
    if param == "epsilon":
        check_float(value, param, func, low=0.0, strict=kind == "absolute")
    try:
        arr = np.atleast_1d(np.asarray(value, dtype=float)) if not isinstance(value, (str, bytes, bool)) else None
    except (TypeError, ValueError):
        arr = None
    if (
        arr is None
        or arr.ndim != 1
        or arr.size == 0
        or not np.all(np.isfinite(arr))
        or np.any(arr > MAX_EPSILON)
        or (param == "epsilon" and np.any(arr < 0))
    ):
        raise RashomonInputError(f"The '{param}' parameter of {func} must be {expected}. Got {value!r:.80} instead.")
    if kind == "relative" and param == "epsilon":
        check_relative_epsilon(float(arr[0]), func, param)
    return arr


def record_names(rs: Any, names: Any) -> Any:
    """``feature_names_in_`` as scikit-learn sets it (string column names; absent otherwise), on the set and on
    its parametrisation, so that every member (``reference_``, sampled and attaining members) checks new rows
    by name (:attr:`~rashomon.ClassMember.feature_names_in_`)."""
    if names is None:
        rs.__dict__.pop("feature_names_in_", None)
        return rs
    rs.feature_names_in_ = names
    par = rs.parametrization_
    # a user's reference member keeps its own parametrisation as it was (fitted without names: by position)
    if not (isinstance(rs.reference, ClassMember) and getattr(rs.reference, "parametrization_", None) is par):
        par.feature_names_in_ = names
    return rs


def row_index(X: Any) -> Any:
    """The index of a pandas DataFrame X (a fairness query aligns a sensitive Series with it), else None."""
    import pandas as pd

    return X.index if isinstance(X, pd.DataFrame) else None


def query_rows(rs: Any, X: Any, func: str) -> np.ndarray:
    """The rows a query predicts on: the fitting rows (X None), or new rows checked against the fitted columns
    as scikit-learn does, reordered frames matched by name (:func:`~rashomon.utils.validation.check_new_rows`)."""
    if X is None:
        if isinstance(rs.X_, RowStatistics):
            raise RashomonInputError(
                f"The 'X' parameter of {func} must be given for a set fitted on a Dask "
                "collection (its rows were summarised, not kept). Got None instead; pass the "
                "rows to predict (e.g. a computed sample of them)."
            )
        return rs.X_
    if any_dask(X):
        raise RashomonInputError(
            f"The 'X' parameter of {func} must be in memory (a NumPy array or pandas "
            f"DataFrame). Got a Dask {type(X).__name__} instead; compute it first (X.compute())."
        )
    return check_new_rows(X, rs, func)


def scaled_functional_range(rs: Any, c: Any, c0: Any, names: Any, tol: float, return_models: bool, func: str):
    """The range of ``c'θ + c0`` computed on each row of c scaled to max |c| = 1, then scaled back.

    The range is linear in c (``range(s·c) = s·range(c)`` for s > 0), so this is the same answer for any
    finite c, while the engine's arithmetic (products of c with itself and with the set's quadratic forms)
    stays inside double precision: unscaled, c = 1e150 overflowed and c = 1e-300 gave ends 50 % off. c0 is
    added after. An end that does not fit in double precision once scaled back is an error.
    """
    from dataclasses import replace

    from .rows import functional_range

    rs._check_fitted("functional_range")
    C, a0, labels = check_functional(c, c0, names, rs.parametrization_.dim, func)
    s = np.max(np.abs(C), axis=1)
    s[s == 0] = 1.0
    res = functional_range(rs, C / s[:, None], np.zeros(len(C)), labels, tol, return_models, func)
    with np.errstate(over="ignore", invalid="ignore"):
        out = {k: s * getattr(res, k) + a0 for k in ("lower", "upper", "lower_attained", "upper_attained", "reference")}
    if not all(np.all(np.isfinite(v)) for v in out.values()):
        raise RashomonInputError(
            f"The 'c' and 'c0' parameters of {func} must give values that fit in double "
            "precision: the range of c'θ + c0 overflows. Got max |c| = "
            f"{float(np.max(s)):.3g}, max |c0| = {float(np.max(np.abs(a0), initial=0.0)):.3g} instead."
        )
    return replace(res, **out)
