"""Searches along the path of Lagrangian minimisers x_t for the member on the level e_orig = ε (the ascent's,
the descent's and the random starts' shared step: regula falsi on t, then the level point between the bracket's
minimisers, since x_t may jump across the level set)."""

from __future__ import annotations

import numpy as np

from .._steps import level_point

_WARM_STEP = 1.02  # factor of the warm search's bracketing steps
_WARM_ITERS = 4  # regula-falsi steps of the warm search


def _search_t(solve_t, e_o, eps, t_max, x0, iters=30, x_zero=None):
    """The minimiser x_t for the largest t <= t_max (t_max may be inf) with e_o(x_t) <= ε (monotone in t).

    ``x_zero`` is the minimiser at t = 0 (θ_min); ``x0`` only warm-starts the solves. Without it x0 is taken for
    the minimiser at t = 0 (true for the callers that pass θ_min)."""
    warm = x0
    x0 = x0 if x_zero is None else x_zero
    if np.isfinite(t_max):
        x = solve_t(t_max, warm)
        if e_o(x) <= eps:
            return x
        t_hi, x_hi = t_max, x
        t_lo, x_lo = 0.0, x0
    else:
        t_lo, x_lo, t = 0.0, x0, 1.0
        t_hi = x_hi = None
        for _ in range(12):
            x = solve_t(t, warm)
            if e_o(x) > eps:
                t_hi, x_hi = t, x
                break
            t_lo, x_lo, warm, t = t, x, x, 4 * t
        if t_hi is None:
            return x_lo
    t_lo, x_lo, x_hi = _falsi(solve_t, e_o, eps, t_lo, x_lo, t_hi, x_hi, warm, iters, 0.0)
    # x_t may jump across the level set (hinge: piecewise-linear e_orig): the segment between the bracketing
    # minimisers minimises the Lagrangian at the jump's t, and its point with e_o = ε is the constrained optimum
    return level_point(e_o, x_hi, x_lo, eps)


def _falsi(solve_t, e_o, eps, t_lo, x_lo, t_hi, x_hi, warm, iters, t_rel):
    """Safeguarded regula falsi on ``e_o(x_t) = ε`` over the bracket [t_lo (feasible), t_hi (infeasible)] (every third
    step a bisection); stops when x_lo is within 1e-8·ε of the level or (``t_rel`` > 0) the bracket is narrower than
    ``t_rel·t_hi``. Returns the final ``(t_lo, x_lo, x_hi)``."""
    f_lo, f_hi = e_o(x_lo) - eps, e_o(x_hi) - eps
    for it in range(iters):
        if -f_lo <= 1e-8 * eps or (t_rel and t_hi - t_lo <= t_rel * t_hi):
            break
        t = t_hi - f_hi * (t_hi - t_lo) / (f_hi - f_lo) if it % 3 != 2 and f_hi > f_lo else 0.5 * (t_lo + t_hi)
        if not t_lo < t < t_hi:
            t = 0.5 * (t_lo + t_hi)
        x = solve_t(t, warm)
        f = e_o(x) - eps
        if f <= 0:
            t_lo, x_lo, f_lo, warm = t, x, f, x
        else:
            t_hi, x_hi, f_hi = t, x, f
    return t_lo, x_lo, x_hi


def _search_warm(solve_t, e_o, eps, t_max, warm, x_zero, t_guess, iters=_WARM_ITERS):
    """``(x_t, t)`` for the largest t <= t_max with e_o(x_t) <= ε, bracketed from ``t_guess`` (the previous
    Dinkelbach iteration's t: it moves little between iterations) by factors of ``_WARM_STEP``; the bracket's low
    end is x_zero (the minimiser at t = 0) until a solve lands in S. The result is the level point on the final
    bracket (the minimiser may jump, see :func:`_search_t`), or x_t itself when t_max is feasible."""
    first = not (t_guess is not None and 0 < t_guess < t_max)
    t_lo, x_lo, t_hi, x_hi = 0.0, x_zero, None, None
    t = t_max if first else t_guess
    for _ in range(1 if first else 8):  # bracket: a feasible t_lo (or 0) and an infeasible t_hi
        x = solve_t(t, warm)
        if e_o(x) <= eps:
            t_lo, x_lo, warm = t, x, x
            if t >= t_max:
                return x, t
            if t_hi is not None:
                break
            t = min(t * _WARM_STEP, t_max)
        else:
            t_hi, x_hi = t, x
            if t_lo > 0:
                break
            t = t / _WARM_STEP
    if t_hi is None or x_hi is None:
        return x_lo, t_lo
    t_lo, x_lo, x_hi = _falsi(solve_t, e_o, eps, t_lo, x_lo, t_hi, x_hi, warm, 2 * iters if first else iters, 1e-9)
    return level_point(e_o, x_hi, x_lo, eps), t_lo
