"""MCR ends solved with both constraints of the set exactly, where the γ-search leaves a duality gap.

The γ-search (:mod:`._search`) puts ``e_orig <= ε`` in a Lagrangian and solves each step exactly on
the ball ``θ'Bθ <= r``. When the step's minimiser jumps across ``e_orig = ε`` as γ moves, no γ gives
a member on the loss boundary and its bound is not attained. Here the end is solved as a problem with
both ellipsoid constraints (:func:`solvers.solve_two_constraint`, certified lower bound and feasible
member):

* difference: ``min ±(e_switch - e_orig)`` over the set, one solve. The objective and the ball are both flat
  along the intercept (e_switch and e_orig depend on it alike; the ball does not penalise it), so e_orig is
  minimised along such directions in closed form first (``_flat_reduction``): otherwise the solver's minimisers
  sit anywhere along them, often outside the set, and the member found falls short of the bound;
* ratio: Dinkelbach's iteration on ``min (e_switch - m·e_orig)`` (lower) or ``min (m·e_orig - e_switch)``
  (upper) with m the MR of the best member so far; at the last m, a certified
  ``e_switch - m·e_orig >= L`` on the set gives ``MR >= m + min(L, 0)/e_min`` (``e_orig >= e_min``), and
  ``m·e_orig - e_switch >= L`` gives ``MR <= m + max(-L, 0)/e_min``. Moving m to the new member's MR adds
  ``τ(e_orig - ε) + τε`` (τ >= 0) to the objective, so the last solve's Lagrangian bounds (multiplier λ of
  ``e_orig <= ε`` lowered by τ) certify the new m without another solve; the member sits on the loss
  boundary, where that bound is exact.
"""

from __future__ import annotations

import math

import numpy as np

from ...solvers.two_constraint import solve_two_constraint
from .._steps import level_point

__all__ = ["exact_end", "close_gap"]

# The ends are solved to _PREC·tol, well inside the tolerance: the bound then moves by less than ~1e-9 (relative)
# under rounding-level changes of the data (the same set through numpy or dask), as the γ-search's bounds do.
_PREC = 1e-3


def _bracket(srch, side: str, eps: float, m: float) -> tuple | None:
    """The γ-search's bracket of the jump at ε, as multipliers λ of ``e_orig - ε`` in the problem with
    objective ``e_switch - m·e_orig`` (lower) or ``m·e_orig - e_switch`` (upper): the Lagrangian is
    ``e_switch + (λ - m)·e_orig`` (γ = λ - m) or ``(m + λ)(e_orig + γ·e_switch)`` (γ = -1/(m + λ))."""
    steps = [s for s in srch.steps if s.side == side and s.certified and s.theta is not None]
    good = [s for s in steps if s.e_orig <= eps]
    if not good:
        return None
    s_hi = min(good, key=lambda s: s.gamma)
    bad = [s for s in steps if s.gamma < s_hi.gamma]
    if not bad:
        return None
    s_lo = max(bad, key=lambda s: s.gamma)
    g_lo, g_hi = s_lo.gamma, s_hi.gamma
    if side == "lower":
        lo, hi = g_lo + m, g_hi + m
    else:
        if not g_hi < 0:
            return None
        lo, hi = -1.0 / g_lo - m, -1.0 / g_hi - m
    return (lo, hi, s_lo.theta, s_hi.theta) if 0 <= lo < hi else None


def _amax(a) -> float:
    return float(np.max(np.abs(a))) if np.size(a) else 0.0


def _flat_reduction(A0, b0, A1, b1, c1, B, q_scale: float, c_scale: float):
    """The directions N along which the objective ``x'A₀x - 2b₀'x`` and the ball ``x'Bx`` are both flat
    (``A₀N = 0``, ``BN = 0``, ``b₀'N = 0`` to rounding: for the difference kind, the intercept, on which
    e_switch and e_orig depend alike). Along them only ``g₁`` (e_orig - ε) moves, so it is minimised there in
    closed form: ``x = Pz + N t*(z)``, and the problem in z (``P`` spans N's complement) is the same problem
    with ``g₁`` replaced by that minimum, a convex quadratic in z. Without it the two-constraint solver's
    Lagrangian minimisers sit anywhere along N (often outside the set), and moving them into the set along a
    segment loses value. Returns ``(P, lift, (A₁ᵣ, b₁ᵣ, c₁ᵣ))`` or None (no such direction)."""
    d = len(b0)
    if np.count_nonzero(B - np.diag(np.diag(B))) == 0:  # a diagonal penalty (the usual case): its zero entries
        U, lam = np.eye(d), np.diag(B)
    else:
        lam, U = np.linalg.eigh(B)
    null = lam <= 1e-14 * max(float(np.max(lam)), 1e-300)
    if not null.any():
        return None
    NB = U[:, null]
    M = np.vstack([A0 @ NB / max(q_scale, 1e-300), (b0 @ NB)[None] / max(c_scale, 1e-300)])
    _, sv, Vt = np.linalg.svd(M)
    sv = np.r_[sv, np.zeros(NB.shape[1] - len(sv))]
    flat = sv <= 1e-11
    if not flat.any():
        return None
    N = NB @ Vt[flat].T
    P = np.hstack([U[:, ~null], NB @ Vt[~flat].T])  # an orthonormal basis of N's complement
    Ann = N.T @ A1 @ N
    try:
        L = np.linalg.cholesky(0.5 * (Ann + Ann.T))
    except np.linalg.LinAlgError:  # e_orig flat along N too: nothing to minimise there
        return None

    def ann_solve(v):
        return np.linalg.solve(L.T, np.linalg.solve(L, v))

    C, u = N.T @ A1 @ P, N.T @ b1
    KC, Ku = ann_solve(C), ann_solve(u)
    A1r = P.T @ A1 @ P - C.T @ KC
    reduced = (0.5 * (A1r + A1r.T), P.T @ b1 - C.T @ Ku, float(c1 - u @ Ku))

    def lift(z):
        return P @ z + N @ (Ku - KC @ z)

    return P, lift, reduced


def _inside(eo, eps: float, x: np.ndarray, x_in: np.ndarray) -> np.ndarray:
    """x itself when ``e_orig(x) <= ε``, else the point nearest x on the segment to x_in that is (x is on the
    loss boundary up to rounding: the move is of that size)."""
    return x if eo(x) <= eps else level_point(eo, x, x_in, eps)


def exact_end(srch, side: str, eps: float, tol: float, max_rounds: int = 8) -> tuple[float, np.ndarray | None, float]:
    """``(bound, member, gap)`` of one end at ε from the two-constraint solves (bound ``nan``: none)."""
    prob = srch.prob
    eo, es = prob.e_orig, prob.e_switch
    x_in = srch.theta_min
    if not eo(x_in) < eps:
        return math.nan, None, math.inf
    A1, b1, c1 = eo.Q, eo.c, eo.k - eps
    sgn = 1.0 if side == "lower" else -1.0
    if srch.kind == "difference":
        b0, m0 = srch.best_bound(side, eps), srch.best_model(side, eps)[1]
        scale = max(1.0, abs(b0) if math.isfinite(b0) else (abs(m0) if math.isfinite(m0) else 1.0))
        A0, bb0 = sgn * (es.Q - eo.Q), sgn * (es.c - eo.c)
        red = _flat_reduction(A0, bb0, A1, b1, c1, prob.B, max(_amax(es.Q), _amax(eo.Q)), max(_amax(es.c), _amax(eo.c)))
        bracket = _bracket(srch, side, eps, 1.0)
        if red is None:
            args = (A0, bb0, sgn * (es.k - eo.k), A1, b1, c1, prob.B, prob.r, x_in)
        else:  # f and the ball are flat along N: e_orig is minimised there, in closed form
            P, lift, (A1r, b1r, c1r) = red
            args = (P.T @ A0 @ P, P.T @ bb0, sgn * (es.k - eo.k), A1r, b1r, c1r, P.T @ prob.B @ P, prob.r, P.T @ x_in)
            bracket = None if bracket is None else bracket[:2] + (P.T @ bracket[2], P.T @ bracket[3])
        res = solve_two_constraint(*args, atol=_PREC * tol * scale, lam_bracket=bracket)
        x = res.x if red is None else _inside(eo, eps, red[1](res.x), x_in)
        return sgn * res.lower, x, res.gap
    e_min = float(srch.e_min)
    if not e_min > 0:
        return math.nan, None, math.inf
    theta, m = srch.best_model(side, eps)
    if theta is None or not math.isfinite(m):
        return math.nan, None, math.inf
    bound, member = math.nan, theta
    for _ in range(max_rounds):
        # lower: min e_s - m e_o ; upper: min m e_o - e_s
        res = solve_two_constraint(
            sgn * (es.Q - m * eo.Q),
            sgn * (es.c - m * eo.c),
            sgn * (es.k - m * eo.k),
            A1,
            b1,
            c1,
            prob.B,
            prob.r,
            x_in,
            atol=_PREC * tol * max(m, 1e-300) * e_min,
            lam_bracket=_bracket(srch, side, eps, m),
        )
        x = res.x
        e_o, e_s = eo(x), es(x)
        m_new = e_s / e_o if e_o > 0 else math.nan
        L = res.lower
        b = m + min(L, 0.0) / e_min if side == "lower" else m - min(L, 0.0) / e_min
        bound = b if not math.isfinite(bound) else (max(bound, b) if side == "lower" else min(bound, b))
        if math.isfinite(m_new) and (m_new < m if side == "lower" else m_new > m):
            # the objective at m_new is the one at m plus τ·(e_orig - ε) + τε, τ = |m_new - m|: this solve's
            # Lagrangian bounds carry over (``lower_shifted``), so a second solve is needed only when they do not
            tau = abs(m_new - m)
            L2 = res.lower_shifted(tau, tau * eps)
            if math.isfinite(L2):
                b = m_new + min(L2, 0.0) / e_min if side == "lower" else m_new - min(L2, 0.0) / e_min
                bound = max(bound, b) if side == "lower" else min(bound, b)
            m, member = m_new, x
        if abs(bound - m) <= 2 * _PREC * tol * max(1.0, abs(m)):
            break
    return bound, member, abs(bound - m)


def close_gap(srch, side: str, eps: float, tol: float, bound: float) -> tuple[float, np.ndarray | None, float, str]:
    """The γ-search's bound of one end, improved by :func:`exact_end`: ``(bound, best member, gap, note)``.

    The member found joins the search's candidates; the bound kept is the better of the two valid ones. The
    note (empty when the end is attained within ``tol``) says what is left."""
    try:
        new, x, _ = exact_end(srch, side, eps, tol)
    except (np.linalg.LinAlgError, ValueError, ArithmeticError) as exc:  # keep the γ-search's valid bound
        new, x, why = math.nan, None, f" ({type(exc).__name__})"
    else:
        why = ""
    if x is not None:
        srch._add_candidate(x)
    if math.isfinite(new):
        bound = max(bound, new) if side == "lower" else min(bound, new)
    th, m = srch.best_model(side, eps)
    if not (math.isfinite(bound) and math.isfinite(m)):
        return bound, th, math.inf, f"{side} end: no member attains the bound{why}"
    gap = max(0.0, m - bound) if side == "lower" else max(0.0, bound - m)
    note = (
        ""
        if gap <= tol * max(1.0, abs(bound))
        else f"{side} end: the two-constraint solve left a gap of {gap:.3g} between the bound and the best member{why}"
    )
    return bound, th, gap, note
