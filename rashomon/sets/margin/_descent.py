"""Members attaining the non-convex lower end of classifier MCR (inner values), by local optimisation.

When the e_switch minimiser over K already lies in S, MCR- needs γ < 0 and the γ-path gives only a
bound; ``min_S e_switch/e_orig`` (or ``e_switch - e_orig``) is then a difference-of-convex fractional
problem. Dinkelbach iterations, each a majorise–minimise step of ``e_switch - q·e_orig``:

* from θ_k with q = MR(θ_k) (1 for the difference): e_orig is convex, so its tangent at θ_k is below
  it; e_switch is below its Jaakkola–Jordan quadratic at θ_k (per-pair curvature
  ``tanh(u/2)/(2su)``, valid for every margin, :meth:`MarginLoss.jj_curvature`). The resulting
  convex quadratic majorant ``Q_k(θ) - q·(e_orig(θ_k) + g'(θ - θ_k))`` equals the objective at θ_k
  (value 0 there), so its minimiser over S has ``e_switch <= q·e_orig``, i.e. MR <= q. With a
  multiplier on ``e_orig <= ε`` the step is ``min_K e_orig + t·(Q_k(θ) - q·g'θ)``: n rows and a
  d × d quadratic (the pairs are touched once per iteration, to build Q_k). e_orig of the minimiser
  increases with t; the largest t whose minimiser stays in S is found by the search of
  :mod:`._ascent` (with the level point on the final bracket: the minimiser may jump; the bracket's low end
  is θ_min, the minimiser at t = 0, and θ_k only warm-starts the solves).

For the hinge the majorant and tangent are built on the hinge smoothed at ``_HINGE_SMOOTH`` (the JJ
curvature of a sharper smoothing is too large to move) and the constraint on the smoothing of
:mod:`._ascent` (``e_orig,τ <= ε`` implies the exact constraint). Every iterate is checked for
membership with the exact loss (ball and ``e_orig <= ε``) and kept only when its exact MR is smaller:
MR never increases.

Starts: the given members (θ_min, the reference, the γ = 0 minimiser) and the points of S furthest
along ± each switched coordinate (the lower end needs the switched coefficients small or of the
other sign). Every start takes ``_RACE`` iterations; the best then continues until an iteration gains
less than ``_STOP`` (relative) or ``max_iter`` iterations. The work is a fixed number of solves whatever
the machine (no clock): the result is a deterministic function of the inputs.
"""

from __future__ import annotations

import math

import numpy as np

from ...model_classes import Quadratic
from ...solvers import SmoothBallProgram
from .._steps import mr_value
from ._ascent import _smoothed
from ._binned import SPLIT_PAIRS
from ._level import _search_t
from ._starts import random_extremes

__all__ = ["descend_lower", "polish_lower"]

_RACE = 1  # iterations every start takes before only the best one continues
_STOP = 1e-6  # relative gain of an iteration below which the descent stops
_SEARCH = 10  # regula-falsi steps of one multiplier search
_HINGE_SMOOTH = 0.05  # smoothing of the hinge in the majorant and tangent
_MAX_ITER = 8  # iterations of the best start (the race's included); the logistic's: _MAX_ITER_LOGISTIC
# (the SQP of polish_lower then finishes its members: on Pima's 8 features iterations 5-8 changed no lower member
# to 4 digits, at 0.1-0.3 s of CPU per feature)
_MAX_ITER_LOGISTIC = 4
_RANDOM = 2  # random extremes polished per start asked for (n_starts)
_RANDOM_ITER = 20  # SQP iterations from each of them
_PAIRS = 3e7  # work budget of those SQPs, in switched pairs x iterations


def descend_lower(ms, T, loss, eps, lo, hi, kind, members, extremes, starts=(0, 0), max_iter=None):
    """Members of S with small MR (see the module docstring), best first; returns a list of θ. ``members``: the
    caller's members, θ or tuples whose first item is θ (its candidates ``(θ, e_orig, e_switch)``). ``extremes()``
    gives :func:`._ascent.coordinate_extremes` (computed once per MCR, shared with the upper end). ``starts =
    (n, random_state)``: n points of S furthest along random directions (:func:`._starts.random_extremes`) are
    polished by :func:`polish_lower` too (``_RANDOM_ITER`` iterations); their results come after the descent's."""
    # at most _RANDOM per start asked for, and as many as _PAIRS switched-pair evaluations allow (a work budget); the
    # hinge only: the logistic lower members were never beaten by the reference of benchmarks/bench_members.py
    # (Pima, bc6, COMPAS, red wine: at most 1e-4 relative), the hinge's were (bc6, concavity: 0.9750 vs 0.9724)
    n_rand = min(_RANDOM * starts[0], int(_PAIRS // (len(T.G) * len(T.ys) * _RANDOM_ITER)))
    n_rand = max(n_rand, min(starts[0], 1)) if loss.name == "hinge" else 0
    rand = random_extremes(ms, T, loss, eps, lo, hi, n_rand, starts[1], "lower")
    # a short race: the best of these are polished to the end by the caller's polish_lower of the best members
    polished = polish_lower(ms, T, loss, eps, kind, rand, n_starts=len(rand), max_iter=_RANDOM_ITER) if rand else []
    sm = _smoothed(loss, eps)
    mj = loss.smoothed(_HINGE_SMOOTH)  # the logistic loss is its own smoothing
    # >= the exact loss; for the logistic the exact formula itself (the smooth one rounds differently: a level point
    # on e_o = ε by it can fail the exact membership check and end the search)
    e_o = lambda th: T.e_orig(th, sm, exact=loss.name == "logistic")  # noqa: E731
    B, r = ms.B, ms.r

    def exact(th):
        """(MR, e_orig) of θ with the exact loss, or None when θ is not a member of S."""
        if th is None or not np.all(np.isfinite(th)) or th @ B @ th > r * (1 + 1e-9):
            return None
        eo = T.e_orig(th, loss)
        if eo > eps:
            return None
        return mr_value(eo, T.e_switch(th, loss), kind), eo

    def minimize(oracle, x0):
        return SmoothBallProgram(B, r, lo, hi, tol=1e-10, max_iter=200).minimize(oracle, x0).x

    def step(th, q):
        """The majorise–minimise step from θ (see the module docstring)."""
        quad = _jj_quadratic(T, th, mj)
        g = T.orig_parts(th, mj, 1)[1]
        Q2, lin = 2.0 * quad.Q, -2.0 * quad.c - q * g

        def solve_t(t, x0):
            def f(theta, order):
                parts = T.orig_parts(theta, sm, order)
                v = parts[0] + t * float(theta @ quad.Q @ theta + lin @ theta)
                if order == 0:
                    return (v,)
                gr = parts[1] + t * (Q2 @ theta + lin)
                return (v, gr) if order == 1 else (v, gr, parts[2] + t * Q2)

            return minimize(f, x0)

        return _search_t(solve_t, e_o, eps, math.inf, th, iters=_SEARCH, x_zero=ms.theta_min)

    thetas = [m[0] if isinstance(m, tuple) else m for m in members]
    starts = [th for th in thetas if th is not None] + extremes().points

    def run(state, iters):
        """Dinkelbach iterations from state = [θ, MR, done]."""
        th, cur, done = state
        for _ in range(iters):
            if done:
                break
            q = max(cur, 0.0) if kind == "ratio" else 1.0
            new = step(th, q)
            ev = exact(new)
            if ev is None:
                done = True
                break
            done = ev[0] >= cur - _STOP * max(abs(cur), 1e-300)
            if ev[0] < cur:
                th, cur = new, ev[0]
        return [th, cur, done]

    states = []
    for th in starts:
        ev = exact(th)
        if ev is not None:
            states.append([th, ev[0], False])
    # one run per distinct start (several members coincide, e.g. θ_min and the reference)
    uniq: list[list] = []
    for st in states:
        if not any(np.allclose(st[0], u[0], rtol=0, atol=1e-12) for u in uniq):
            uniq.append(st)
    states = [run(st, _RACE) for st in uniq]
    if not states:
        return polished
    states.sort(key=lambda st: st[1])
    if max_iter is None:
        max_iter = _MAX_ITER_LOGISTIC if loss.name == "logistic" else _MAX_ITER
    states[0] = run(states[0], max(max_iter - _RACE, 0))
    return [st[0] for st in states] + polished


def _jj_quadratic(T, th, mj):
    """The Jaakkola–Jordan majorant of e_switch at θ (a Quadratic), built on parts of the terms of at most
    ``._binned.SPLIT_PAIRS`` pairs each where they have a ``split`` (cell terms: whole arrays of 10^6 rows x 16
    cells are 128 MB each), else at once."""
    parts = T.split(SPLIT_PAIRS) if hasattr(T, "split") else [T]
    out = None
    for P in parts:
        M0 = P.switched_scores(th) * P.ys[None, :]
        q = P.switch_quadratic(th, mj, mj.jj_curvature(M0))
        out = q if out is None else Quadratic(out.Q + q.Q, out.c + q.c, out.k + q.k)
    return out


_POLISH_STARTS = 3  # best distinct members polished by the SQP below
_POLISH_ITER = 100  # SQP iterations per start
_POLISH_FTOL = 1e-9  # SLSQP stops when the objective moves less (1e-12 before: 20-30% more iterations on Pima for
# members whose MR moved by under 1e-9, far below the gaps reported)
_POLISH_SMOOTH = 1e-3  # smoothing of the hinge in the SQP (relative to ε, as the searches' constraint)


def polish_lower(ms, T, loss, eps, kind, members, n_starts=_POLISH_STARTS, max_iter=_POLISH_ITER):
    """Members of S with smaller MR than ``members`` (a list of θ of S, best first), by a local SQP.

    The majorise–minimise descent above stalls where both constraints are active (the ball and ``e_orig = ε``:
    Pima, Insulin 0.991 where a local solver from random members reaches 0.966). SciPy's SLSQP minimises
    ``e_switch/e_orig`` (or ``e_switch - e_orig``) subject to ``e_orig <= ε`` and ``θ'Bθ <= r`` (both slightly
    tightened: the iterates are checked in S with the exact loss) from the ``n_starts`` best distinct members.
    For the hinge both losses are the smoothing at ``_POLISH_SMOOTH·ε`` (>= the exact hinge, so the smoothed
    constraint implies the exact one). Deterministic: fixed starts and iteration counts, no clock.
    """
    from scipy.optimize import minimize

    sm = loss if loss.name == "logistic" else loss.smoothed(max(loss.s, _POLISH_SMOOTH * eps))
    B, r = ms.B, ms.r
    ratio = kind == "ratio"
    cache: dict = {}

    def parts(th):
        key = th.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = (T.orig_parts(th, sm, 1), T.switch_parts(th, sm, 1))
        return cache[key]

    def obj(th):
        (fo, go), (fs, gs) = parts(th)
        if ratio:
            return fs / fo, gs / fo - (fs / fo**2) * go
        return fs - fo, gs - go

    e_lim, r_lim = eps * (1 - 1e-9), r * (1 - 1e-9)
    cons = [
        {"type": "ineq", "fun": lambda th: e_lim - parts(th)[0][0], "jac": lambda th: -parts(th)[0][1]},
        {"type": "ineq", "fun": lambda th: r_lim - th @ B @ th, "jac": lambda th: -2.0 * (B @ th)},
    ]
    out: list[np.ndarray] = []
    seen: list[np.ndarray] = []
    for th0 in members:
        if len(seen) >= n_starts:
            break
        if th0 is None or any(np.allclose(th0, u, rtol=0, atol=1e-9) for u in seen):
            continue
        seen.append(th0)
        with np.errstate(all="ignore"):
            res = minimize(
                obj,
                np.array(th0, dtype=float),
                jac=True,
                constraints=cons,
                method="SLSQP",
                options={"maxiter": max_iter, "ftol": _POLISH_FTOL},
            )
        if np.all(np.isfinite(res.x)):
            out.append(res.x)
    return out
