"""Members attaining the non-convex upper end of classifier MCR (inner values), by local optimisation.

Dinkelbach iterations with the convex e_switch linearised (convex–concave procedure):

* upper end: from θ_k with λ = MR(θ_k) (1 for the difference), maximise
  ``e_switch(θ_k) + g'(θ - θ_k) - λ·e_orig(θ)`` over S. With a multiplier τ >= 0 on
  ``e_orig <= ε`` this is ``min_K e_orig - t·g'θ`` for ``t = 1/(λ + τ)``: a convex problem in
  e_orig alone (n rows), and t is the largest value in (0, 1/λ] whose minimiser stays in S
  (e_orig of the minimiser increases with t). By convexity of e_switch the new point has
  ``MR >= λ`` whenever its e_orig is not below θ_k's; the better of the two is kept.

The search for t brackets it between the minimiser at t = 0 (θ_min, the least e_orig) and an infeasible t; the
iterate θ_k only warm-starts the solves (it is no minimiser of the step's Lagrangian: taken for one, it stopped most
ascents after their first step, e.g. breast cancer (300 rows, 6 features), hinge, texture: 3.4500 where the
step reaches 3.4963). From the second iteration on, the bracket starts at the previous iteration's t (it moves
little). For a hinge set with few distinct rows each step is instead one exact conic solve (:mod:`._ascent_hinge`).

Every start takes ``_RACE`` iterations; the best ``_KEEP`` then go on until an iteration gains less than
``_STOP`` (relative; the logistic's ``_STOP_LOGISTIC``) or ``max_iter`` iterations: a fixed amount of work, no clock.

Members are kept only when they lie in S for the exact loss (for the hinge, the smoothed
constraint ``e_orig,τ <= ε`` implies the exact one).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._steps import mr_value
from ._ascent_hinge import hinge_step, subgradient, use_conic
from ._level import _search_t, _search_warm
from ._starts import random_extremes

__all__ = ["ascend_upper", "coordinate_extremes"]

_MERGE = 1e-2  # starts this close (B-norm / sqrt(r)) to a better one are merged into it
_STOP = 1e-6  # relative gain of an iteration below which the ascent stops; the logistic's: _STOP_LOGISTIC
# (1e-6 before: on Pima's 8 logistic features the upper members' MR moved by under 5e-5 relative, the upper gaps
# equal to 0.01 points, at 0.05-0.1 s less CPU per feature)
_STOP_LOGISTIC = 1e-4
_RACE = 3  # iterations every start takes before only the best _KEEP go on
_KEEP = 2
_HINGE_TAU = 1e-3  # smoothing of the hinge constraint, relative to ε (the smoothed e_orig <= ε implies the exact one)


def _smoothed(loss, eps):
    """The loss of the local searches' constraint (the hinge smoothed at _HINGE_TAU·ε: its e_orig <= ε implies the exact one)."""
    return loss.smoothed(max(loss.s, _HINGE_TAU * eps))  # the logistic loss is its own smoothing


class Extremes(NamedTuple):
    """Points of S furthest along ± switched coefficients, and certified bounds on those coefficients over S."""

    points: list  # θ per (coordinate, sign), in the order of ``keys``
    keys: list  # (coordinate j, sign ±1)
    bounds: list  # certified upper bound of sign·θ_j over S, per key (inf when no solve certified one)

    def coef_range(self, j: int) -> tuple[float, float]:
        """A certified interval containing θ_j on S (``(-inf, inf)`` for a coordinate not searched)."""
        b = dict(zip(self.keys, self.bounds))
        return -b.get((j, -1.0), math.inf), b.get((j, 1.0), math.inf)


def coordinate_extremes(ms, T, loss, eps, lo, hi, coords=None) -> Extremes:
    """The points of S furthest along ± each switched coefficient (at most three; or along ``coords``): starts of
    both local searches.

    Each solve of the search, ``min_K e_orig - t·u'θ`` with certified lower bound lb(t) (the exact loss:
    the smoothing's offset is subtracted), also bounds the coefficient: for θ in S, e_orig(θ) <= ε, so
    ``u'θ <= (ε - lb(t))/t`` (Lagrangian duality); the least over the search's t is kept."""
    sm = _smoothed(loss, eps)
    e_o = lambda th: T.e_orig(th, sm, exact=False)  # noqa: E731
    pts, keys, bounds = [], [], []
    for j in T.gi[:3] if coords is None else coords:
        for sgn in (1.0, -1.0):
            u = np.zeros(ms.D.shape[1])
            u[j] = sgn
            best = [math.inf]

            def solve(t, x, u=u, best=best):
                th, lb, ok = ms.solve(1.0, 0.0, ms.orig, lo, hi, x, lin=-t * u, tol=1e-10, loss=sm)
                if ok and t > 0 and np.isfinite(lb):
                    v = (eps - lb) / t
                    best[0] = min(best[0], v + 1e-12 * max(1.0, abs(v)))  # rounding of lb and of the division
                return th

            pts.append(_search_t(solve, e_o, eps, math.inf, ms.theta_min, iters=8))
            keys.append((int(j), sgn))
            bounds.append(best[0])
    return Extremes(pts, keys, bounds)


def ascend_upper(ms, T, loss, eps, lo, hi, kind, n_starts, random_state, extremes, max_iter=30):
    """Members of S with large MR (see the module docstring); returns a list of θ.

    The starts iterate in lock-step until an iteration gains less than ``_STOP`` (relative) or ``max_iter``
    iterations; a start that comes within ``_MERGE`` of a better one stops (the starts usually reach one local
    maximum, and are then followed once). ``extremes()`` gives :func:`coordinate_extremes` (computed once per
    MCR and shared with the lower end's descent)."""
    sm = _smoothed(loss, eps)
    # >= the exact loss; for the logistic the exact formula itself (the smooth one rounds differently: a level point
    # on e_o = ε by it can fail the exact membership check and end the search)
    e_o = lambda th: T.e_orig(th, sm, exact=loss.name == "logistic")  # noqa: E731
    e_ex = lambda th: T.e_orig(th, loss)  # noqa: E731

    hs = hinge_step(ms, eps, lo, hi) if use_conic(ms, loss) else None  # exact conic steps (._ascent_hinge)
    stop = _STOP_LOGISTIC if loss.name == "logistic" else _STOP

    def switch(th):
        """(exact e_switch, gradient of the smooth e_switch) at th: one pass over the pairs for logistic."""
        if hs is not None:
            return subgradient(T, th, loss)
        f, g = T.switch_parts(th, sm, 1)
        return (f if loss.name == "logistic" else T.e_switch(th, loss)), g

    def solve_t(t, x0, g):
        return ms.solve(1.0, 0.0, ms.orig, lo, hi, x0, lin=-t * g, tol=1e-10, loss=sm)[0]

    ext = extremes().points
    starts = [ms.theta_min] + ext[: max(n_starts - 1, 1)]
    # random directions beyond the coordinate ones (._starts)
    starts += random_extremes(ms, T, loss, eps, lo, hi, max(n_starts - 1, 0) - len(ext), random_state, "upper")

    def run(state, iters):
        """Dinkelbach iterations from state = [θ, MR, (e_switch, gradient), done]."""
        th, cur, (es, g), done, tg = state
        for _ in range(iters):
            if done:
                break
            lam = cur if kind == "ratio" else 1.0
            if hs is not None:
                new = hs(g, lam)
            else:
                tm = 1.0 / max(lam, 1e-12)
                new, tg = _search_warm(lambda t, x: solve_t(t, x, g), e_o, eps, tm, th, ms.theta_min, tg)  # noqa: B023  (called within this iteration)
            eo = math.inf if new is None else e_ex(new)
            if eo > eps:
                done = True
                break
            es_new, g_new = switch(new)
            val = mr_value(eo, es_new, kind)
            done = val <= cur + stop * max(abs(cur), 1e-300)
            if val > cur:
                th, cur, es, g = new, val, es_new, g_new
        return [th, cur, (es, g), done, tg]

    states = []
    for th in starts:
        eo = e_ex(th)
        if eo > eps:
            continue
        sw = switch(th)
        states.append(run([th, mr_value(eo, sw[0], kind), sw, False, None], 1))
    # all starts in lock-step; a start that comes within _MERGE (B-norm, relative to the ball) of a better one is
    # heading for the same local maximum and stops there (distinct maxima keep their own starts)
    scale = _MERGE * math.sqrt(ms.r)
    for it in range(max_iter - 1):
        live = [st for st in states if not st[3]]
        if not live:
            break
        for st in live:
            st[:] = run(st, 1)
        order = sorted(range(len(states)), key=lambda k: -states[k][1])
        if it + 2 == _RACE:  # the race is over: only the best _KEEP starts go on
            for k in order[_KEEP:]:
                states[k][3] = True
        for a, k in enumerate(order):
            if states[k][3]:
                continue
            for k2 in order[:a]:
                dv = states[k][0] - states[k2][0]
                if math.sqrt(max(float(dv @ ms.B @ dv), 0.0)) <= scale:
                    states[k][3] = True
                    break
    return [st[0] for st in states]
