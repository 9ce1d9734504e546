"""Exact minima of linear functionals over a Rashomon set at any threshold ε: the engine the disparity ranges,
the row-wise bounds and the joint bounds share (the set's own range engine, or a copy of it moved to ε)."""

from __future__ import annotations

import copy

import numpy as np

__all__ = ["engine_at", "min_functionals"]


def engine_at(rs, eps: float, func: str):
    """The functional-range engine of the set at threshold ``eps`` (the set's own engine at its ε)."""
    from ..margin import margin_set
    from ..rows import engine_of

    if eps == rs.epsilon_abs_:
        return engine_of(rs, func)
    ms = margin_set(rs)
    if ms is not None:
        from ..margin import MarginFunctionalRange

        return MarginFunctionalRange(ms, eps)
    # the pencil (Q, B) is diagonalised once, by the set's own engine; only the loss constraint's slack moves with ε
    base = engine_of(rs, func)
    cache = rs.__dict__.setdefault("_fair_engines", {})
    key = (id(base), float(eps))
    if key not in cache:
        eng = copy.copy(base)
        th = base.theta_min
        eng.eps = float(eps)
        eng.slack = max(eng.eps - base._loss(th), 0.0)
        eng.constraints = ((base.q, 2 * (base.q * base.z_min - base.ct), eng.slack), base.constraints[1])
        eng.z_int = eng._interior()
        eng.theta_int = base.V @ eng.z_int
        eng.theta_constraints = ((base.Q, 2 * (base.Q @ th - base.c), eng.slack), base.theta_constraints[1])
        if len(cache) > 64:
            cache.clear()
        cache[key] = eng
    return cache[key]


def _degenerate(rs, eps) -> bool:
    return bool(rs._degenerate) if eps == rs.epsilon_abs_ else (rs.loss_ == "squared_error" and rs._at_e_min(eps))


def min_functionals(rs, C, c0, eps, tol, func):
    """``(bound, theta, value)`` of ``min_S c'θ + c0`` for rows c of C (certified bound, attaining member)."""
    C = np.atleast_2d(C)
    if _degenerate(rs, eps):
        th = np.tile(rs.theta_min_, (len(C), 1))
        v = C @ rs.theta_min_ + c0
        return v, th, v
    b, th, v = engine_at(rs, eps, func).minimize(C, tol=tol)
    return b + c0, th, v + c0
