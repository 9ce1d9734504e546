"""Results that need no search: the full-factorial case (MR is exactly 1 or 0) and the hinge set at ε = e_min
whose minimiser set pins MR (:mod:`._minimiser`); and the member record of a parameter vector."""

from __future__ import annotations

import math

import numpy as np

from ...utils.losses import canonical_loss_name
from .._results import MCRResult
from .._steps import MCRModel, mr_value


def _member(ms, T, th, kind):
    """The MCRModel of θ (exact losses), or None."""
    if th is None:
        return None
    a, b = T.e_orig(th, ms.loss), T.e_switch(th, ms.loss)
    est = ms.par.estimator(th)
    return MCRModel(np.asarray(th), a, b, mr_value(a, b, kind), {"coef": est.coef_, "intercept": est.intercept_}, est)


def _theta_min_result(
    ms, T, columns, group, eps, e_ref, reference_theta, kind, tol, loss, m, lower, upper, tight, notes
) -> MCRResult:
    """The certified MCRResult of a search-free case: θ_min's member ``m`` at both ends of [lower, upper]."""
    return MCRResult(
        lower=float(lower),
        upper=float(upper),
        lower_model=m,
        upper_model=m,
        lower_gap=float(abs(m.mr - lower)),
        upper_gap=float(abs(upper - m.mr)),
        lower_tight=tight[0],
        upper_tight=tight[1],
        gamma_lower=math.nan,
        gamma_upper=math.nan,
        kind=kind,
        features=tuple(columns[i] if columns else f"x{i}" for i in group),
        epsilon_abs=eps,
        e_ref=float(e_ref),
        e_min=float(ms.e_min),
        reference_model=_member(ms, T, reference_theta, kind),
        steps=[],
        model_class=ms.par.class_name,
        tol=tol,
        certified=True,
        lower_certified=True,
        upper_certified=True,
        loss=canonical_loss_name(loss.name),
        notes=notes,
    )


def _factorial_result(ms, T, columns, group, eps, e_ref, reference_theta, kind, tol, loss) -> MCRResult:
    """MCR when e_switch ≡ e_orig (:meth:`MarginTerms.switch_is_orig`): MR = 1 (ratio) or 0 (difference) for every
    model, so both ends are that value, attained by θ_min (its computed MR differs only by the rounding of the
    two sums)."""
    v = 1.0 if kind == "ratio" else 0.0
    m = _member(ms, T, ms.theta_min, kind)
    notes = (
        "the group's values are exactly independent of the other features and the label in the data (every "
        "value occurs equally often with every row pattern), so e_switch = e_orig for every model and MR = "
        f"{v:g} exactly"
    )
    args = (ms, T, columns, group, eps, e_ref, reference_theta, kind, tol, loss)
    return _theta_min_result(*args, m, v, v, (True, True), notes)


def _collapsed_result(ms, T, columns, group, eps, e_ref, reference_theta, kind, tol, loss, flat) -> MCRResult:
    """A hinge set at ε = e_min whose minimiser set's box (:mod:`._minimiser`) pins MR within 0.1%: the bounds are
    the box's, both inner values θ_min's (the gaps say how far)."""
    m = _member(ms, T, ms.theta_min, kind)
    lower, upper = min(flat[0], m.mr), max(flat[1], m.mr)
    tight = (bool(m.mr - lower <= tol * max(1.0, abs(lower))), bool(upper - m.mr <= tol * max(1.0, abs(upper))))
    notes = (
        "epsilon_abs is the least loss: the set is the hinge's minimiser set, enclosed in a box by convex "
        f"programmes (MR varies by at most {upper - lower:.3g} on it)"
    )
    args = (ms, T, columns, group, eps, e_ref, reference_theta, kind, tol, loss)
    return _theta_min_result(*args, m, lower, upper, tight, notes)
