"""Fitting a classifier Rashomon set (logistic, hinge): parametrisation, θ_min, the reference, e_ref and ε_abs."""

from __future__ import annotations

from ...utils import single_blas_thread
from ._mcr import MarginSet

__all__ = ["fit_margin_set"]


def fit_margin_set(rs, mc, Xa, ya, columns, func) -> None:
    """RashomonSet.fit for a classifier class ``mc`` (logistic or hinge): parametrise, θ_min, reference, e_ref and
    ε_abs (set on ``rs``), with one BLAS thread (see :func:`._mcr.margin_mcr`)."""
    single_blas_thread(_fit_margin_set, rs, mc, Xa, ya, columns, func)


def _fit_margin_set(rs, mc, Xa, ya, columns, func) -> None:
    from ...model_classes import ClassMember, encode_margin_labels
    from ...utils.validation import RashomonInputError
    from .._epsilon import set_threshold

    ye = encode_margin_labels(ya, func)
    ref = rs.reference
    if isinstance(ref, ClassMember) and "margin_loss" in ref.parametrization_.info:
        par = ref.parametrization_
        if par.n_features != Xa.shape[1]:
            raise RashomonInputError(
                f"The 'reference' parameter of {func} was fitted on {par.n_features} features; X has {Xa.shape[1]}."
            )
    else:
        if ref is not None and not hasattr(ref, "predict") and not hasattr(ref, "decision_function"):
            raise RashomonInputError(
                f"The 'reference' parameter of {func} must be None or a fitted model with "
                f"predict or decision_function. Got {ref!r} instead."
            )
        par = mc.parametrize(Xa, ye, None, columns=columns, func=func)
    ms = MarginSet(par, Xa, ye)
    theta_min, e_min = ms.fit()
    rs.parametrization_, rs._y_encoded, rs._margin = par, ye, ms
    rs.theta_min_, rs.e_min_ = theta_min, e_min
    theta_ref = theta_min if ref is None else par.convex_reference(ref, Xa, mc.loss, func, columns)
    rs.reference_theta_, rs.reference_ = theta_ref, par.estimator(theta_ref)
    rs.e_ref_ = ms.orig.e_orig(theta_ref, ms.loss)
    set_threshold(rs, ye, None, func)  # e_null_, ε_abs and the share of the explained loss kept
    rs._degenerate = False
