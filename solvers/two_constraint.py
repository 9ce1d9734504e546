"""Global solver for QCQPs with two convex quadratic constraints (the CDT / two-trust-region problem).

Standard form: minimise ``f(x) = x'A₀x - 2b₀'x + c₀`` (A₀ symmetric, indefinite allowed) subject to
``g₁(x) = x'A₁x - 2b₁'x + c₁ <= 0`` (A₁ PSD) and ``g₂(x) = x'Bx - r <= 0`` (B PSD, r > 0), with a
feasible point ``x_in`` given (``g₁(x_in) < 0``: Slater).

Method
------
1. *Lagrangian in the first constraint, exact in the second.* For λ >= 0 the trust-region engine
   (:class:`~solvers.QCQPSequence`, certified) solves ``D(λ) = min_{g₂<=0} f + λg₁``; D is concave with
   slope ``g₁(x_λ)``, bisected to its maximum. If some λ gives a minimiser with ``g₁ = 0`` (or λ = 0
   with ``g₁ <= 0``), that minimiser is optimal: the usual S-lemma case.
2. *Jump* (duality gap): at the best λ* the minimiser jumps between two points x₋, x₊ on the
   boundary of the ball, and no multiplier pair attains the primal value. The Hessian
   ``H* = A₀ + λ*A₁ + ν*B`` is then singular along ``v ∝ x₋ - x₊`` and positive definite across it.
   Each *fibre* ``{x : v'x = s}`` is a two-constraint problem whose Lagrangian Hessian ``P'HP``
   (P spans v^⊥) is positive definite near (λ*, ν*): its two-multiplier dual is maximised by
   projected Newton, and any multipliers with ``P'HP ≻ 0`` (checked by Cholesky) give a quadratic
   ``ψ(s) <= Φ(s) = min {f : g <= 0, v'x = s}`` valid for every s (weak duality on each fibre).
3. *One-dimensional outer loop* (Kelley's cutting planes with quadratic minorants): the certified
   lower bound is ``min_{s∈[s_lo,s_hi]} max_k ψ_k(s)`` (computed exactly from the breakpoints of the
   quadratics; ``[s_lo, s_hi]`` is an outer range of v'x over the feasible set), the next fibre is its
   minimiser, and every fibre's solution (moved into the set along the segment to ``x_in``) is a
   feasible point. It stops when the best feasible value is within ``atol`` of the lower bound.

Every bound is a Lagrangian bound with its multipliers and a Cholesky proof of the Hessian's
definiteness, so the lower bound holds whatever the loop does; the gap left (if any) is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._base import SolverStatus
from ._fibres import _Fibres, _min_max_quadratics, _outer_range, _Problem, _q
from .trust_region import QCQPSequence

__all__ = ["TwoConstraintResult", "solve_two_constraint"]


@dataclass(frozen=True)
class TwoConstraintResult:
    """Answer of :func:`solve_two_constraint`.

    Attributes
    ----------
    x : ndarray
        The best feasible point found (``g₁(x) <= 0``, ``g₂(x) <= r·1e-12``).
    value : float
        ``f(x)``: an upper bound on the minimum.
    lower : float
        Certified lower bound on the minimum (``value - lower`` is the gap left).
    status : SolverStatus
        OPTIMAL when ``value - lower <= atol``, INACCURATE otherwise.
    info : dict
        ``method`` ("lagrangian" or "fibres"), ``fibres`` solved, ``lambda``/``nu`` multipliers.
    """

    x: np.ndarray
    value: float
    lower: float
    status: SolverStatus
    info: dict = field(default_factory=dict)
    cuts: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def gap(self) -> float:
        return max(0.0, self.value - self.lower)

    def lower_shifted(self, tau: float, const: float = 0.0) -> float:
        """Certified lower bound on ``min f + τg₁ + const`` over the same set (τ >= 0), from this solve's
        Lagrangian bounds, without solving again.

        A bound with multipliers (λ, ν) for f is one with (λ - τ, ν) for ``f + τg₁``, plus ``const``, wherever
        λ >= τ: the Lagrangian bounds of the λ-search and the fibres' quadratic minorants (their envelope's
        minimum over the same range of the fibre coordinate) carry over. ``-inf`` when none has λ >= τ (or
        τ < 0). Dinkelbach's iteration for a ratio uses it: moving the ratio m only adds a multiple of g₁ + ε.
        """
        if not tau >= 0:
            return -math.inf
        out = -math.inf
        lag = self.cuts.get("lagrangian")
        if lag is not None and len(lag):
            ok = lag[:, 0] >= tau
            if ok.any():
                out = float(lag[ok, 1].max()) + const
        if "fibres" in self.cuts:
            Q, lams, s_lo, s_hi = self.cuts["fibres"]
            ok = lams >= tau
            if ok.any():
                out = max(out, _min_max_quadratics(Q[ok], s_lo, s_hi)[0] + const)
        return out


def solve_two_constraint(
    A0,
    b0,
    c0,
    A1,
    b1,
    c1,
    B,
    r,
    x_in,
    *,
    atol: float,
    max_fibres: int = 60,
    seq: QCQPSequence | None = None,
    lam_bracket: tuple | None = None,
) -> TwoConstraintResult:
    """Globally minimise ``f`` subject to ``g₁ <= 0`` and ``x'Bx <= r`` (see the module docstring).

    ``x_in``: a feasible point with ``g₁(x_in) < 0``. ``atol``: absolute gap to reach. ``seq``: a
    :class:`QCQPSequence` of the family ``A₀ + λA₁, b₀ + λb₁`` on the same ball (built when omitted).
    ``lam_bracket``: ``(λ₋, λ₊, x₋, x₊)``, multipliers believed to bracket the one where the minimiser
    crosses ``g₁ = 0`` with their minimisers (used when verified; otherwise the bracket is searched from λ = 0).
    """
    A0, A1, B = (np.asarray(M, dtype=float) for M in (A0, A1, B))
    b0, b1, x_in = (np.asarray(v, dtype=float) for v in (b0, b1, x_in))
    pb = _Problem(A0, b0, c0, A1, b1, c1, B, r, x_in)
    if seq is None:
        seq = QCQPSequence(A0, b0, B, r, A1=A1, b1=b1)
    best = {"x": x_in, "f": pb.f(x_in)}

    def offer(x):
        xf = pb.feasible(x) if x is not None else None
        if xf is not None:
            fx = pb.f(xf)
            if fx < best["f"]:
                best["x"], best["f"] = xf, fx

    lam_best = {"D": -math.inf, "lam": math.nan, "nu": math.nan}
    sols: dict = {}
    cuts: dict = {"sols": sols}

    def dual(lam):
        res = seq.solve(lam, check=False, certificate="reduced")
        if res.status is not SolverStatus.OPTIMAL:
            sols[lam] = None
            return None
        D = res.objective + pb.c0 + lam * pb.c1
        if D > lam_best["D"]:
            lam_best.update(D=D, lam=lam, nu=float(res.multiplier))
        offer(res.x)
        sols[lam] = (res.x, pb.g1(res.x), float(res.multiplier), D)
        return sols[lam]

    def done():
        return best["f"] - lam_best["D"] <= atol

    info = {"method": "lagrangian", "fibres": 0}
    lo, hi = 0.0, None
    if lam_bracket is not None:  # a caller's bracket (λ₋, λ₊, x₋, x₊): minimisers at λ₋ (g₁ > 0) and λ₊ (g₁ <= 0)
        l0, l1, x0, x1 = lam_bracket
        a, b = dual(float(l0)), dual(float(l1))
        if a is not None and b is not None and 0 <= l0 < l1 and pb.g1(x0) > 0 >= pb.g1(x1):
            # at a jump the solver may return either minimiser: keep the caller's, when they are minimisers too
            for lam, x, st in ((l0, x0, a), (l1, x1, b)):
                Al, bl = seq.A0 + lam * seq.A1, seq.b0 + lam * seq.b1
                size = abs(float(x @ Al @ x)) + 2 * abs(float(bl @ x)) + abs(pb.c0 + lam * pb.c1)
                if abs(_q(Al, bl, pb.c0 + lam * pb.c1, x) - st[3]) <= 1e-8 * size and pb.g2(x) <= 1e-9 * pb.r:
                    sols[float(lam)] = (x, pb.g1(x), st[2], st[3])
            if sols[float(l0)][1] > 0 >= sols[float(l1)][1]:
                lo, hi = float(l0), float(l1)
    if hi is None:
        st = dual(0.0)
        if st is not None and st[1] <= 0:
            hi = 0.0
        else:
            lam = max(1.0, abs(pb.c0) / max(abs(pb.c1), 1e-300))
            for _ in range(200):
                st = dual(lam)
                if st is not None and st[1] <= 0:
                    hi = lam
                    break
                lo, lam = lam, lam * 4.0
    if hi is None:
        return _result(pb, best, lam_best, atol, info, cuts)
    it = 0
    while hi > 0 and not done() and hi - lo > 1e-8 * hi:
        a, b = sols.get(lo), sols.get(hi)
        mid = 0.5 * (lo + hi)
        it += 1
        if it % 3 and a is not None and b is not None and a[1] > 0 >= b[1] and a[1] - b[1] > 0:
            sec = lo + (hi - lo) * a[1] / (a[1] - b[1])
            if lo + 0.05 * (hi - lo) < sec < hi - 0.05 * (hi - lo):
                mid = sec
        st = dual(mid)
        if st is not None and st[1] <= 0:
            hi = mid
        else:
            lo = mid
    a, b = sols.get(lo), sols.get(hi)
    if a is not None and b is not None:  # the chord between the bracketing minimisers
        for t in np.linspace(0.0, 1.0, 17)[1:-1]:
            offer(b[0] + t * (a[0] - b[0]))
    if done():
        return _result(pb, best, lam_best, atol, info, cuts)
    a, b = sols.get(lo), sols.get(hi)
    if a is None or b is None or np.linalg.norm(a[0] - b[0]) == 0:
        return _result(pb, best, lam_best, atol, info, cuts)
    # A jump: one-dimensional search over the fibres v'x = s across it.
    info["method"] = "fibres"
    v = a[0] - b[0]
    fib = _Fibres(pb, v / np.linalg.norm(v))
    s_lo, s_hi = _outer_range(pb, fib.u)
    if not (np.isfinite(s_lo) and np.isfinite(s_hi)) or s_lo > s_hi:
        return _result(pb, best, lam_best, atol, info, cuts)
    m_start = np.array([lam_best["lam"], lam_best["nu"]])
    quads, lams = [np.array([0.0, 0.0, lam_best["D"]])], [lam_best["lam"]]
    got = fib.minorant(m_start)
    if got is not None:
        quads.append(got[0])
        lams.append(m_start[0])
    lower = lam_best["D"]
    tried, retried, starts, model = [], [], [(math.inf, m_start)], []
    todo = [float(fib.u @ best["x"]), float(fib.u @ a[0]), float(fib.u @ b[0])]
    state = {"shrink": 1.0}

    def seen(s, where):
        return any(abs(s - t) <= 1e-12 * max(abs(s), abs(s_hi - s_lo)) for t in where)

    for k in range(max_fibres):
        lower, s_star = _min_max_quadratics(np.array(quads), s_lo, s_hi)
        if best["f"] - lower <= atol:
            break
        queued = bool(todo)
        s = todo.pop(0) if queued else _next_fibre(model, s_star, atol, tried, state)
        s = min(max(s, s_lo), s_hi)
        if seen(s, tried):
            if queued:
                continue
            if not seen(s_star, tried):
                s = s_star
                tried.append(s)
                near, iters = min(starts, key=lambda e: abs(e[0] - s))[1], 60
            elif seen(s, retried):  # the minorants no longer move: the gap left is reported
                break
            else:
                retried.append(s)  # the fibre's dual stalled from a warm start: once more from the root multipliers
                near, iters = m_start, 400
        else:
            tried.append(s)
            near, iters = min(starts, key=lambda e: abs(e[0] - s))[1], 60  # warm start: the nearest solved fibre
        # a fibre is dropped once its dual passes the best value by half the gap (a minorant that also covers
        # its neighbours), or solved to 0.25·atol
        cut = best["f"] + 0.5 * (best["f"] - lower)
        coef, m, x, fx, _ = fib.solve(s, near, cut, 0.25 * atol, max_iter=iters)
        info["fibres"] = k + 1
        if coef is not None:
            quads.append(coef)
            lams.append(float(m[0]))
            D = float(coef @ (s * s, s, 1.0))
            if D < cut:  # not dropped: its multipliers are a sensible warm start, its slope a model of the minimum
                starts.append((s, m))
                model.append((s, D, 2 * coef[0] * s + coef[1], coef[0]))
        if x is not None and fx < best["f"]:
            best["x"], best["f"] = x, fx
    lower = max(lower, _min_max_quadratics(np.array(quads), s_lo, s_hi)[0])
    lam_best["D"] = max(lam_best["D"], lower)
    cuts["fibres"] = (np.array(quads), np.array(lams), s_lo, s_hi)
    return _result(pb, best, lam_best, atol, info, cuts)


def _next_fibre(model, s_star, atol, tried, state) -> float:
    """The next fibre: Kelley's (the envelope's minimiser ``s_star``) unless it lies between the two solved
    fibres that bracket the minimum of Φ(s) = min over the fibre s (slopes of opposite signs); there, the
    secant root of the slope locates the minimum, and once a fibre sits on it, one fibre each side at the
    distance δ where the envelope of the minorants dips by less than ``atol`` (δ² = atol / (Φ''/2 + |ψ''|/2),
    from the secant's Φ'' and the minorant's curvature). Only the order of the fibres changes: the bound is
    the envelope's minimum whichever fibres are solved."""
    if len(model) < 2:
        return s_star
    pts = sorted(model)
    i = min(range(len(pts)), key=lambda j: pts[j][1])
    if pts[i][2] <= 0 and i + 1 < len(pts) and pts[i + 1][2] > 0:
        L, R = pts[i], pts[i + 1]
    elif pts[i][2] >= 0 and i > 0 and pts[i - 1][2] < 0:
        L, R = pts[i - 1], pts[i]
    else:
        return s_star
    if not L[0] <= s_star <= R[0] or not R[2] > L[2]:
        return s_star
    width = R[0] - L[0]
    s_hat = L[0] - L[2] * width / (R[2] - L[2])
    kappa = (R[2] - L[2]) / width
    curv = max(-pts[i][3], 0.0) + 0.5 * kappa
    delta = state["shrink"] * math.sqrt(atol / curv) if curv > 0 else 0.0
    if not delta > 0:
        return s_star
    near = min(abs(s_hat - t) for t in tried)
    if near > 0.25 * delta:  # not located yet: the secant root, kept inside the bracket
        lo, hi = L[0] + 0.01 * width, R[0] - 0.01 * width
        return s_hat if lo <= s_hat <= hi else 0.5 * (L[0] + R[0])
    for c in (s_hat - delta, s_hat + delta):
        side = [t for t in tried if 0.25 * delta <= abs(t - s_hat) <= delta and (t - s_hat) * (c - s_hat) > 0]
        if not side:
            return c
    state["shrink"] *= 0.5  # both sides covered and still a gap: the curvature estimate was too low
    return s_star


def _result(pb, best, lam_best, atol, info, cuts):
    info = dict(info, **{"lambda": lam_best["lam"], "nu": lam_best["nu"]})
    lower = min(lam_best["D"], best["f"])
    status = SolverStatus.OPTIMAL if best["f"] - lower <= atol else SolverStatus.INACCURATE
    lag = np.array([(lam, st[3]) for lam, st in cuts["sols"].items() if st is not None]).reshape(-1, 2)
    kept = {"lagrangian": lag}
    if "fibres" in cuts:
        kept["fibres"] = cuts["fibres"]
    return TwoConstraintResult(best["x"], float(best["f"]), float(lower), status, info, kept)
