"""The logistic class on Dask with a given reference: the held-out set of the classifier audit.

:func:`fit_dask_margin_reference` is ``RashomonSet(LogisticModelClass(), ε, reference=member).fit(X, y)`` for
Dask input, ``member`` a member of the class fitted on other rows: as in memory, the set keeps the member's
parametrisation (the other rows' standardisation and norm bound), θ_min and e_min are solved on these rows by the
projected Newton of :mod:`._dask_margin` (one pass per oracle call), e_ref is the member's loss here (one pass),
e_null and ε_abs follow as in memory, and an inactive norm bound is tightened to the certified one. The fitted
set answers what the logistic class answers on Dask (``prediction_range``, ``multiplicity``, ``coef_range``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...utils.validation import RashomonInputError
from ._dask_inputs import _as_arrays
from ._dask_margin import _install, _minimise, _statistics

__all__ = ["fit_dask_margin_reference"]


def fit_dask_margin_reference(rs: Any, X: Any, y: Any, func: str = "RashomonSet.fit") -> Any:
    """Fit ``rs`` (a logistic class, ``reference`` a member of that class) on Dask input.

    Parameters
    ----------
    rs : RashomonSet
        Unfitted, with a :class:`~rashomon.LogisticModelClass` and ``reference`` a
        :class:`~rashomon.ClassMember` of the logistic class.
    X : dask DataFrame or array
        The rows, with the reference's columns.
    y : dask Series or array
        Labels in {0, 1} or {-1, +1}.
    func : str, default="RashomonSet.fit"
        The function named in errors.

    Returns
    -------
    RashomonSet
        ``rs``, fitted.
    """
    from ...model_classes import ClassMember
    from .._set_inputs import record_names

    ref = rs.reference
    par = getattr(ref, "parametrization_", None)
    if (
        not isinstance(ref, ClassMember)
        or par is None
        or getattr(par.info.get("margin_loss"), "name", "") != "logistic"
    ):
        raise RashomonInputError(
            f"The 'reference' parameter of {func} must be a member of the logistic class. Got "
            f"{type(ref).__name__} instead."
        )
    rs.loss_ = rs._check_params(func)
    Xd, yd, _, columns = _as_arrays(X, y, None, func)
    if Xd.shape[1] != par.n_features:
        raise RashomonInputError(
            f"The 'reference' parameter of {func} was fitted on {par.n_features} features; X has {Xd.shape[1]}."
        )
    rows, _, _, xpos, xneg = _statistics(Xd, yd, columns, func)
    rows.par = par
    loss = par.info["margin_loss"]
    rows.zbar_pos, rows.zbar_neg = (xpos - par.mean) / par.sd, (xneg - par.mean) / par.sd
    theta, e_min, _ = _minimise(rows, par, loss, rows.zbar_pos, rows.zbar_neg)
    theta_ref = np.asarray(ref.theta_, dtype=float)
    _install(rs, rows, par, loss, columns, theta, e_min, theta_ref, rows.e_orig(theta_ref, loss), func)
    names = np.asarray(columns, dtype=object) if columns is not None else None
    return record_names(rs, names)
