"""The one-dimensional fibre search of :mod:`.two_constraint`: the fibres ``v'x = s`` across a direction v, solved
in passes (Newton's steps on the fibre minimum Φ(s), then covering widths, then Kelley's points), and the choice
of a second direction at a KKT point where the fibres' own duals stall.

Every bound is the minimum over the range of v'x of the upper envelope of the fibres' quadratic minorants, each a
Lagrangian bound with a Cholesky proof of definiteness (:class:`._fibres._Fibres`): the local search that finds
a KKT point only chooses the direction and where to start, never the bound."""

from __future__ import annotations

import math

import numpy as np

from ._fibres import _Fibres, _min_max_quadratics, _outer_range
from ._secular import eigh


class _FibreSearch:
    """The one-dimensional search over the fibres ``v'x = s`` (see the module docstring), in passes: each pass
    starts from the fibres through the given points, then Newton's and Kelley's points, with a budget of
    ``max_fibres`` fibres; members are offered to ``best``. ``m_start``: multipliers for which P'HP is believed
    positive definite (the root of the warm starts). ``ok``: the range of v'x over the set is finite (else no
    bound)."""

    def __init__(self, pb, v, m_start, floor, best, atol, max_fibres, info):
        # floor: (D, λ), the λ-search's best Lagrangian value and its multiplier: a constant minorant of f + λg₁ on
        # the set (its λ is what :meth:`TwoConstraintResult.lower_shifted` needs to shift it)
        self.pb, self.best, self.atol, self.max_fibres, self.info = pb, best, atol, max_fibres, info
        self.fib = fib = _Fibres(pb, v / np.linalg.norm(v))
        self.s_lo, self.s_hi = _outer_range(pb, fib.u)
        self.ok = bool(np.isfinite(self.s_lo) and np.isfinite(self.s_hi) and self.s_lo <= self.s_hi)
        self.m_start = m_start
        self.quads, self.lams = [np.array([0.0, 0.0, floor[0]])], [floor[1]]
        got = fib.minorant(m_start)
        if got is not None:
            self.quads.append(got[0])
            self.lams.append(m_start[0])
        self.tried: list[float] = []
        self.retried: list[float] = []
        self.model: list[tuple] = []  # solved fibres: (s, D, slope, minorant, Φ'')
        self.starts = [(math.inf, m_start)]

    def lower(self) -> float:
        """The envelope's minimum over the range of v'x."""
        return _min_max_quadratics(np.array(self.quads), self.s_lo, self.s_hi)[0]

    def cuts(self):
        return np.array(self.quads).reshape(-1, 3), np.array(self.lams), self.s_lo, self.s_hi

    def run(self, points) -> None:
        if not self.ok:
            return
        fib, best, atol, s_lo, s_hi = self.fib, self.best, self.atol, self.s_lo, self.s_hi
        tried, retried, model, quads = self.tried, self.retried, self.model, self.quads
        todo = [float(fib.u @ x) for x in points]

        def seen(s, where):
            return any(abs(s - t) <= 1e-12 * max(abs(s), abs(s_hi - s_lo)) for t in where)

        for _ in range(self.max_fibres):
            lower, s_star = _min_max_quadratics(np.array(quads), s_lo, s_hi)
            if best["f"] - lower <= atol:
                break
            queued = bool(todo)
            s = todo.pop(0) if queued else _next_fibre(model, quads, s_star, best["f"], atol, s_lo, s_hi)
            s = min(max(s, s_lo), s_hi)
            if seen(s, tried) and not queued and not seen(s_star, tried):
                s = s_star
            if seen(s, tried):
                if queued:
                    continue
                if seen(s, retried):  # the minorants no longer move: the gap left is reported
                    break
                retried.append(s)  # the fibre's dual stalled from a warm start: once more from the root multipliers
                near, iters = self.m_start, 400
            else:
                tried.append(s)
                near, iters = min(self.starts, key=lambda e: abs(e[0] - s))[1], 60  # warm start: the nearest fibre
            # a fibre is dropped once its dual passes the best value by half the gap (a minorant that also covers
            # its neighbours), or solved to 0.25·atol
            cut = best["f"] + 0.5 * (best["f"] - lower)
            coef, m, x, fx, conv, phi2 = fib.solve(s, near, cut, 0.25 * atol, max_iter=iters)
            self.info["fibres"] += 1
            if coef is not None:
                quads.append(coef)
                self.lams.append(float(m[0]))
                D = float(coef @ (s * s, s, 1.0))
                if D < cut:  # not dropped: its multipliers are a sensible warm start
                    self.starts.append((s, m))
                if conv:  # its slope is Φ's: a point of the model of the minimum
                    model.append((s, D, 2 * coef[0] * s + coef[1], coef, phi2))
            if x is not None and fx < best["f"]:
                best["x"], best["f"] = x, fx


def _kkt_direction(pb, x0, best, lam_best, atol, max_fibres, info, fibres, visited) -> None:
    """Where the fibres across the jump leave a gap: a KKT point x* found by a local search from x0, and its
    multipliers m*. Where ``H* = A₀ + λ*A₁ + ν*B`` has exactly one negative eigenvalue (as at the global minimum of
    a two-constraint problem whose Lagrangian dual leaves a gap), the fibres across its eigenvector v have
    ``P'H*P ≻ 0``: the fibre through x* has no duality gap of its own, and the fibre search along v (from m*)
    closes the gap where the one along the jump's direction stalls. The new envelope joins ``fibres``; a KKT point
    already in ``visited`` is not searched again."""
    with np.errstate(all="ignore"):  # a local search that diverges is discarded, not reported
        got = _kkt_point(pb, x0)
    if got is None:
        return
    x, m = got
    size = 1e-8 * (1.0 + float(np.abs(x).max()))
    if any(float(np.abs(x - y).max()) <= size for y in visited):
        return
    visited.append(x)
    xf = pb.feasible(x)
    if xf is not None and pb.f(xf) < best["f"]:
        best["x"], best["f"] = xf, pb.f(xf)
    w, U = eigh(pb.A0 + m[0] * pb.A1 + m[1] * pb.B)
    scale = max(abs(w[0]), abs(w[-1]), 1e-300)
    if not (w[0] < -1e-10 * scale and (len(w) == 1 or w[1] > 1e-10 * scale)):
        return
    srch = _FibreSearch(pb, U[:, 0], m, lam_best["lagrangian"], best, atol, max_fibres, info)
    for pass_ in range(2):  # from the fibre through x*; then from the best member's, if it has moved
        srch.run([x] if pass_ == 0 else [best["x"]])
        if srch.ok:
            lam_best["D"] = max(lam_best["D"], srch.lower())
        if not srch.ok or best["f"] - lam_best["D"] <= atol:
            break
    if srch.ok:
        fibres.append(srch.cuts())


def _kkt_point(pb, x0):
    """A local minimiser x of f over the set, from x0, and its multipliers ``m = (λ, ν) >= 0``: a local search
    (SLSQP), then Newton's method on the KKT equations ``∇f + λ∇g₁ + ν∇g₂ = 0`` with the active constraints
    (``g_i = 0``; the others' multipliers 0). None where it does not converge or no constraint is active."""
    from scipy.optimize import minimize

    grads = (lambda x: 2 * (pb.A1 @ x - pb.b1), lambda x: 2 * (pb.B @ x))
    cons = [
        {"type": "ineq", "fun": lambda x: -pb.g1(x), "jac": lambda x: -grads[0](x)},
        {"type": "ineq", "fun": lambda x: -pb.g2(x), "jac": lambda x: -grads[1](x)},
    ]
    o = minimize(
        pb.f,
        x0,
        jac=lambda x: 2 * (pb.A0 @ x - pb.b0),
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 400},
    )
    x = np.asarray(o.x, dtype=float)
    scale = np.array([pb.feas_tol[0], pb.feas_tol[1]]) * 1e4  # 1e-6 relative: the search's accuracy
    if not np.all(np.isfinite(x)):
        return None
    act = np.array([pb.g1(x), pb.g2(x)]) >= -scale
    if not act.any():
        return None
    k, p = int(act.sum()), pb.p

    def kkt(x):
        J = np.column_stack([g(x) for g, a in zip(grads, act) if a])
        gf = 2 * (pb.A0 @ x - pb.b0)
        mJ = np.linalg.lstsq(J, -gf, rcond=None)[0]
        m = np.zeros(2)
        m[act] = mJ
        return J, gf, m

    for _ in range(30):
        J, gf, m = kkt(x)
        K = np.block([[2 * (pb.A0 + m[0] * pb.A1 + m[1] * pb.B), J], [J.T, np.zeros((k, k))]])
        F = np.r_[gf + J @ m[act], np.array([pb.g1(x), pb.g2(x)])[act]]
        try:
            d = np.linalg.solve(K, -F)
        except np.linalg.LinAlgError:
            return None
        x = x + d[:p]
        if not np.all(np.isfinite(x)):
            return None
        if np.abs(d[:p]).max() <= 1e-14 * (1 + np.abs(x).max()):
            break
    _, _, m = kkt(x)
    g = np.array([pb.g1(x), pb.g2(x)])
    if not (np.all(np.isfinite(m)) and np.all(m >= 0) and np.all(np.abs(g[act]) <= 1e-2 * scale[act])):
        return None
    return x, m


def _next_fibre(model, quads, s_star, f_best, atol, s_lo, s_hi) -> float:
    """The next fibre.

    Φ(s) = min over the fibre s is smooth near its minimum s*, and a fibre's minorant (its dual solved) is
    tangent to Φ there, with a curvature much smaller than Φ's: it covers the far side up to hundreds of times
    its distance to s*, but the near side only to about half that distance, so Kelley's rule (the envelope's
    minimiser ``s_star``) alone closes the gap in ~log₂ steps. Instead, Newton's step on Φ from the best solved
    fibre (Φ' and Φ'' from its KKT equations), kept inside the bracket of s*, locates s*; then, while the
    envelope's minimum lies outside the interval ``[e₁, e₂]`` around s* where the envelope is above
    ``f_best - atol/2``, a fibre at 1.8× its half-width on that side (tangent there, it covers from ~0.9× out
    to far beyond); Kelley's point for whatever is left. Only the order of the fibres changes: the bound is
    the envelope's minimum whatever fibres are solved."""
    if not model:
        return s_star
    s_c, _, g, _, k2 = min(model, key=lambda p: p[1])
    if not (k2 > 0 and math.isfinite(k2)):
        return s_star
    step = -g / k2
    if abs(step) > 0.5 * math.sqrt(2 * atol / k2):  # not located yet: Newton's step, inside the bracket
        lo = max((p[0] for p in model if p[2] < 0 and p[0] <= s_c), default=s_lo)
        hi = min((p[0] for p in model if p[2] > 0 and p[0] >= s_c), default=s_hi)
        t = s_c + step
        return t if lo < t < hi else s_c + 0.5 * ((hi if step > 0 else lo) - s_c)
    e1, e2 = _covered(quads, f_best - 0.5 * atol, s_c)
    for side, edge in ((-1.0, e1), (1.0, e2)):
        if side * (s_star - edge) > 0 and math.isfinite(edge):  # the envelope's minimum is beyond the cover
            t = s_c + 1.8 * (edge - s_c)
            done = any(abs(p[0] - t) <= 0.2 * abs(edge - s_c) for p in model)
            return s_star if done else t
    return s_star


def _covered(quads, level, s0) -> tuple[float, float]:
    """The interval around s0 on which ``max_k ψ_k >= level`` (ψ_k: the rows a, b, c of quads)."""
    ivs = []
    for a, b, c in quads:
        c = c - level
        if a == 0:
            if b != 0:
                ivs.append((-c / b, math.inf) if b > 0 else (-math.inf, -c / b))
            elif c >= 0:
                ivs.append((-math.inf, math.inf))
            continue
        disc = b * b - 4 * a * c
        if disc < 0:
            if a > 0:
                ivs.append((-math.inf, math.inf))
            continue
        r1, r2 = sorted(((-b + math.sqrt(disc)) / (2 * a), (-b - math.sqrt(disc)) / (2 * a)))
        ivs.extend([(r1, r2)] if a < 0 else [(-math.inf, r1), (r2, math.inf)])
    e1 = e2 = s0
    grown = True
    while grown:
        grown = False
        for lo, hi in ivs:
            if lo <= e2 and hi >= e1 and (lo < e1 or hi > e2):
                e1, e2, grown = min(e1, lo), max(e2, hi), True
    return e1, e2
