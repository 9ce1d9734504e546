"""A norm bound that does not bind costs nothing: ``norm_bound=np.inf`` and the tightening of an inactive bound.

After the fit (ε_abs known), ``r* >= max θ'Bθ`` over the loss's own set ``{e <= ε_abs}`` is computed
(:mod:`rashomon.model_classes.norm_bounds`). When ``r* < r`` the ball does not cut the set, which is then the
loss's set for every bound from r* up (``np.inf`` included): the set's parametrisation is replaced by a copy with
``r = r*`` (the same set; the searches, which scale with the ball, run on the smaller one), flagged ``loss_only``
so that the squared-loss ranges use their closed forms. The requested parametrisation is kept on the copy
(``untightened``): a reweighted set starts again from it.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ..model_classes import MarginLoss
from ..model_classes.norm_bounds import (
    HINGE_PIECES,
    least_loss_point,
    margin_norm_bound,
    polyhedral_norm_bound,
    quadratic_norm_bound,
    squared_loss_minimiser,
    unbounded_error,
)

__all__ = ["untightened", "loss_minimiser", "tighten_quadratic", "tighten_margin"]

_LP_SIZE = 1e5  # the largest rows x coordinates of a hinge set whose bound also comes from linear programmes


def untightened(par):
    """The parametrisation as the class defined it (before any tightening)."""
    return getattr(par, "untightened", par)


def _tightened(par, r_star: float):
    new = copy.copy(par)
    new.r = float(r_star)
    new.info = dict(
        par.info, norm_bound=float(r_star), norm_bound_requested=par.info.get("norm_bound_requested", par.r)
    )
    new.untightened, new.loss_only = par, True
    new.estimator = par.estimator  # members carry the class as defined (a reference for other rows keeps its bound)
    return new


def _unbounded(par, func: str, why: str):
    return unbounded_error(par.class_name.split("(")[0], func, why)


def loss_minimiser(eo, par, func: str) -> np.ndarray:
    """The squared loss's minimiser (``norm_bound=np.inf``): an error when the loss has a free direction."""
    return squared_loss_minimiser(eo, par.class_name.split("(")[0], func)


def tighten_quadratic(rs, func: str) -> None:
    """Squared loss: the loss's set is the ellipsoid ``(θ - θ̂)'Q(θ - θ̂) <= ε - e(θ̂)``; r* is its exact
    ``max θ'Bθ``. Replaces ``rs.parametrization_`` when r* is below the class's bound."""
    par, eo = rs.parametrization_, rs.e_orig_form_
    theta_hat = least_loss_point(eo.Q, eo.c)
    if theta_hat is None:
        if math.isinf(par.r):
            raise _unbounded(par, func, "the design does not have full column rank")
        return
    B = par.B
    if not float(theta_hat @ B @ theta_hat) < par.r:
        return  # the loss's minimiser is outside the ball: the ball binds
    # ε - e(θ̂), widened by the rounding of e's terms (of the size of k)
    delta = float(rs.epsilon_abs_) - min(float(eo(theta_hat)), float(rs.e_min_))
    delta += 1e-12 * max(abs(float(eo.k)), abs(float(rs.e_min_)), 1e-300)
    r_star = quadratic_norm_bound(eo.Q, theta_hat, delta, B)
    if math.isinf(r_star):
        if math.isinf(par.r):
            raise _unbounded(par, func, "the loss's Hessian has a condition number above 1e12: too few digits")
        return
    if r_star <= par.r:  # (equal: the bound was given as this r*; the ball is inactive all the same)
        rs.parametrization_ = _tightened(par, r_star)


def tighten_margin(rs, func: str) -> None:
    """Logistic / hinge: r* from the self-concordant minorant around θ_min (logistic) or the linear programmes of
    the hinge's polyhedron; replaces the parametrisation of the set and of its classifier engine when r* < r."""
    ms = rs.__dict__.get("_margin")
    if ms is None:
        return
    par = rs.parametrization_
    requested = par.info.get("norm_bound_requested", par.r)
    theta = np.asarray(rs.theta_min_, dtype=float)
    on_ball = float(theta @ par.B @ theta) >= par.r * (1 - 1e-6)
    if on_ball and math.isinf(requested):
        raise _unbounded(par, func, "the loss's minimiser lies outside the working bound of the class's reference")
    if on_ball:
        return  # the ball binds at the minimiser
    Dy = ms.y[:, None] * ms.D
    eps = float(rs.epsilon_abs_)
    if ms.loss.name == "logistic":
        r_star = margin_norm_bound(Dy, theta, eps, par.B, ms.loss)
    else:
        # the hinge's set lies in {mean ℓ_s <= ε + s·log 2} for its smoothing ℓ_s at any scale s (ℓ_s - s·log 2 <=
        # hinge): the smallest of three scales; the linear programmes when none closes and the bound is inf
        r_star = min(
            margin_norm_bound(Dy, theta, eps + s * math.log(2.0) * (1 + 1e-12), par.B, MarginLoss("hinge", s, 1.0))
            for s in (1.0, 0.3, 0.1)
        )
        # the hinge's own polyhedron (2 linear programmes per penalised coordinate): far tighter than the
        # smoothings' ellipsoids (a 2,000 x 6 set: 5.6 against 354), run where it is cheap or the only bound
        if Dy.size <= _LP_SIZE or (math.isinf(r_star) and math.isinf(requested)):
            r_star = min(r_star, polyhedral_norm_bound(Dy, HINGE_PIECES, eps * (1 + 1e-9) + 1e-12, par.B))
    if math.isinf(r_star) and math.isinf(requested):
        raise _unbounded(par, func, "no finite bound contains the loss's set")
    if r_star < requested and (r_star < par.r or math.isinf(requested)):
        new = _tightened(par, r_star)
        new.info["norm_bound_requested"] = requested
        rs.parametrization_ = new
        ms.par, ms.r = new, new.r
