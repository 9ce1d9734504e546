"""Fitting a :class:`~rashomon.RashomonSet` (``_rashomon_set.py``): the last step of the quadratic path
(e_orig, e_min, the reference and ε_abs on the set's rows, shared by ``fit``, ``reweighted`` and the Dask fit)
and the fit of a non-quadratic loss (a convex e_orig programme, or the classifier engine ``margin/``)."""

from __future__ import annotations

import numpy as np

from ..solvers import QCQPSequence
from ..utils.validation import RashomonInputError
from ._epsilon import set_threshold
from ._row_statistics import RowStatistics

__all__ = ["fit_convex", "finish_fit"]


def fit_convex(rs, Xa, ya, w, columns, func: str) -> None:
    """The non-quadratic-loss fit: the same pieces as the squared path, on a convex e_orig programme."""
    from ..model_classes import LinearModelClass
    from .quadratic import e_orig_program, encode_labels

    if not isinstance(rs.model_class, LinearModelClass):
        raise RashomonInputError(
            f"The 'loss' parameter of {func} is {rs.loss_!r}; non-quadratic losses need a LinearModelClass as "
            f"'model_class'. Got {type(rs.model_class).__name__} instead."
        )
    if w is not None:
        raise RashomonInputError(f"The 'sample_weight' parameter of {func} needs loss='squared_error'.")
    if rs.loss_ in ("log_loss", "hinge"):  # classifier classes: rashomon/sets/margin/_mcr.py
        from ..model_classes import ClassMember, HingeModelClass, LogisticModelClass
        from ._loss_only import tighten_margin
        from .margin import fit_margin_set

        mc = rs.model_class
        if not isinstance(mc, (LogisticModelClass, HingeModelClass)):  # LinearModelClass with loss=...
            cls = HingeModelClass if rs.loss_ == "hinge" else LogisticModelClass
            mc = cls(mc.norm_bound, mc.penalty_matrix, mc.fit_intercept, mc.standardize)
        fit_margin_set(rs, mc, Xa, ya, columns, func)
        if not isinstance(rs.reference, ClassMember) or rs.reference.parametrization_ is not rs.parametrization_:
            labels = np.unique(ya)  # parametrised on ±1 labels: the members get y's own (integers when whole)
            rs.parametrization_.classes_ = labels.astype(int) if np.all(labels == np.round(labels)) else labels
        return tighten_margin(rs, func)  # an inactive norm bound: the smallest that contains the set (a copy)
    ref = rs.reference
    if ref is not None and not hasattr(ref, "predict") and not hasattr(ref, "decision_function"):
        raise RashomonInputError(
            f"The 'reference' parameter of {func} must be None or a fitted model with "
            f"predict or decision_function. Got {ref!r} instead."
        )
    ye = encode_labels(ya, rs.loss_, func)
    par = rs.model_class.parametrize(Xa, ye, None, columns=columns, func=func, loss=rs.loss_)
    rs.parametrization_, rs._y_encoded = par, ye
    t_orig, rs.theta_min_, rs.e_min_ = e_orig_program(par, Xa, ye, rs.loss_)
    rs.e_orig_term_ = t_orig
    theta_ref = rs.theta_min_ if ref is None else par.convex_reference(ref, Xa, rs.loss_, func, columns)
    rs.reference_theta_ = theta_ref
    rs.reference_ = par.estimator(theta_ref)
    rs.e_ref_ = t_orig.value(theta_ref)
    set_threshold(rs, ye, None, func)
    rs._degenerate = False


def finish_fit(rs, func: str, cache: dict | None = None) -> None:
    from ._loss_only import loss_minimiser, tighten_quadratic, untightened

    par = rs.parametrization_ = untightened(rs.parametrization_)  # a reweighted copy starts from the class's bound
    Xa, ya, w = rs.X_, rs.y_, rs.sample_weight_
    # reweighted copies pass the shared cache: the weight-independent pieces of e_orig are kept there
    eo = par.e_orig(Xa, ya, w) if cache is None else par.e_orig(Xa, ya, w, cache=cache)
    rs.e_orig_form_ = eo
    if np.isinf(par.r):  # the set of the loss alone
        rs.theta_min_ = loss_minimiser(eo, par, func)
    else:
        rs.theta_min_ = QCQPSequence(eo.Q, eo.c, par.B, par.r).solve(0.0).x
    rs.e_min_ = eo(rs.theta_min_)
    if rs.reference is None:
        theta_ref = rs.theta_min_
    else:
        theta_ref = par.project(rs.reference, Xa, func, rs._columns)
    rs.reference_theta_ = theta_ref
    rs.reference_ = par.estimator(theta_ref)
    rs.e_ref_ = eo(theta_ref)
    scale = ya.mean_square if isinstance(ya, RowStatistics) else float(np.average(ya**2, weights=w))
    # e_orig is a quadratic form whose terms are of the size of mean(y²): below 1e-10 of it, fewer than six
    # digits of the least loss are right, and losses ratios built on it would be noise
    if rs.e_min_ <= 1e-10 * max(scale, 1e-300):
        raise RashomonInputError(
            f"{func}: the model class fits the data (almost) exactly: least loss {rs.e_min_:.3g}, "
            f"{rs.e_min_ / max(scale, 1e-300):.2g} of mean(y²), below the 1e-10 that double precision resolves, so "
            "loss ratios are 0/0 to rounding. Use a smaller norm_bound or dictionary (a class that cannot fit the "
            "noise), or check that y is not a function of X."
        )
    set_threshold(rs, ya, w, func)
    tighten_quadratic(rs, func)  # an inactive norm bound: the smallest that contains the set
    rs._degenerate = rs._at_e_min(rs.epsilon_abs_)
