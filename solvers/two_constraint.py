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
3. *One-dimensional outer loop* over quadratic minorants: the certified lower bound is
   ``min_{s∈[s_lo,s_hi]} max_k ψ_k(s)`` (computed exactly from the breakpoints of the quadratics;
   ``[s_lo, s_hi]`` is an outer range of v'x over the feasible set), and every fibre's solution (moved into
   the set along the segment to ``x_in``) is a feasible point. It stops when the best feasible value is
   within ``atol`` of the lower bound. The fibres: Newton's steps on Φ(s) = min over the fibre (Φ' and Φ''
   from a solved fibre's KKT equations) locate its minimum s*; then fibres at 1.8× the half-width of the
   interval around s* that the minorants already cover (a tangent minorant covers from about half its
   distance to s* out to far beyond); Kelley's point (the envelope's minimiser) elsewhere.

Every bound is a Lagrangian bound with its multipliers and a Cholesky proof of the Hessian's
definiteness, so the lower bound holds whatever the loop does; the gap left (if any) is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

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

        On the set, ``f >= L_k = f + λ_k g₁ + ν_k g₂`` and ``τg₁ >= λ_k g₁ - (λ_k - τ)⁻·(-min g₁)``, so each
        bound ψ_k of this solve (the λ-search's Lagrangian values, the fibres' quadratic minorants: their
        envelope's minimum over the same range of the fibre coordinate) gives ``ψ_k + const`` for
        ``f + τg₁ + const`` when ``λ_k >= τ``, and ``ψ_k + const - (τ - λ_k)·(-min g₁)`` otherwise (the minimum
        of g₁ over all x). ``-inf`` for τ < 0. Dinkelbach's iteration for a ratio uses it: moving the ratio m
        only adds a multiple of ``g₁ + ε``, and a member on the loss boundary keeps the bound tight.
        """
        if not tau >= 0:
            return -math.inf
        depth = self.cuts.get("g1_depth", math.inf)  # -min g₁ >= 0

        def pen(lams):
            short = np.maximum(tau - lams, 0.0)
            with np.errstate(invalid="ignore"):
                return np.where(short > 0, -short * depth, 0.0)

        out = -math.inf
        lag = self.cuts.get("lagrangian")
        if lag is not None and len(lag):
            vals = lag[:, 1] + pen(lag[:, 0])
            if np.isfinite(vals).any():
                out = float(np.max(vals[np.isfinite(vals)])) + const
        if "fibres" in self.cuts:
            Q, lams, s_lo, s_hi = self.cuts["fibres"]
            sh = pen(lams)
            ok = np.isfinite(sh)
            if ok.any():
                Q2 = Q[ok].copy()
                Q2[:, 2] += sh[ok]
                out = max(out, _min_max_quadratics(Q2, s_lo, s_hi)[0] + const)
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
    cuts: dict = {"sols": sols, "g1_depth": _g1_depth(pb)}

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
    tried: list[float] = []
    retried: list[float] = []
    model: list[tuple] = []  # solved fibres: (s, D, slope, minorant, Φ'')
    starts = [(math.inf, m_start)]
    todo = [float(fib.u @ best["x"])]  # the fibre through the best member so far (then Kelley's, Newton's)
    # a second pass, only where the first leaves a gap: the fibres through both minimisers of the jump first (the
    # minimum may sit on the side the first pass never visited), with a budget of its own
    second = [float(fib.u @ a[0]), float(fib.u @ b[0])]

    def seen(s, where):
        return any(abs(s - t) <= 1e-12 * max(abs(s), abs(s_hi - s_lo)) for t in where)

    used = 0
    for pass_ in range(2):
        if pass_:
            if best["f"] - _min_max_quadratics(np.array(quads), s_lo, s_hi)[0] <= atol:
                break
            todo = second
        for _ in range(max_fibres):
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
                near, iters = m_start, 400
            else:
                tried.append(s)
                near, iters = min(starts, key=lambda e: abs(e[0] - s))[1], 60  # warm start: the nearest solved fibre
            # a fibre is dropped once its dual passes the best value by half the gap (a minorant that also covers
            # its neighbours), or solved to 0.25·atol
            cut = best["f"] + 0.5 * (best["f"] - lower)
            coef, m, x, fx, conv, phi2 = fib.solve(s, near, cut, 0.25 * atol, max_iter=iters)
            used += 1
            info["fibres"] = used
            if coef is not None:
                quads.append(coef)
                lams.append(float(m[0]))
                D = float(coef @ (s * s, s, 1.0))
                if D < cut:  # not dropped: its multipliers are a sensible warm start
                    starts.append((s, m))
                if conv:  # its slope is Φ's: a point of the model of the minimum
                    model.append((s, D, 2 * coef[0] * s + coef[1], coef, phi2))
            if x is not None and fx < best["f"]:
                best["x"], best["f"] = x, fx
    lower = max(lower, _min_max_quadratics(np.array(quads), s_lo, s_hi)[0])
    lam_best["D"] = max(lam_best["D"], lower)
    cuts["fibres"] = (np.array(quads), np.array(lams), s_lo, s_hi)
    return _result(pb, best, lam_best, atol, info, cuts)


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


def _g1_depth(pb) -> float:
    """An upper bound on ``-min_x g₁(x)`` (g₁ convex): ``b₁'A₁⁺b₁ - c₁`` when b₁ lies in the range of A₁ (else
    inf), widened by the rounding of the solve."""
    lam, U = linalg.eigh(pb.A1)
    scale = max(abs(lam[-1]), 1e-300)
    keep = lam > 1e-12 * scale
    z = U.T @ pb.b1
    if np.abs(z[~keep]).max(initial=0.0) > 1e-9 * (np.linalg.norm(z) + 1e-300):
        return math.inf
    t = float(np.sum(z[keep] ** 2 / lam[keep]))
    return max(t - pb.c1, 0.0) * (1 + 1e-8) + 1e-12 * (t + abs(pb.c1))


def _result(pb, best, lam_best, atol, info, cuts):
    info = dict(info, **{"lambda": lam_best["lam"], "nu": lam_best["nu"]})
    lower = min(lam_best["D"], best["f"])
    status = SolverStatus.OPTIMAL if best["f"] - lower <= atol else SolverStatus.INACCURATE
    lag = np.array([(lam, st[3]) for lam, st in cuts["sols"].items() if st is not None]).reshape(-1, 2)
    kept = {"lagrangian": lag, "g1_depth": cuts["g1_depth"]}
    if "fibres" in cuts:
        kept["fibres"] = cuts["fibres"]
    return TwoConstraintResult(best["x"], float(best["f"]), float(lower), status, info, kept)
