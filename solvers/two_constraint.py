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
4. *A second direction* where the fibres' own duals stall (a fibre whose two-multiplier dual leaves a gap:
   P'HP turns singular before the dual's maximum). A local search finds a KKT point x* (its active
   constraints exact, Newton's method) and its multipliers m*; where ``H(m*)`` has exactly one negative
   eigenvalue (as at the global minimum of a two-constraint problem with a duality gap), the fibres across
   its eigenvector have ``P'H(m*)P ≻ 0``, the fibre through x* no gap of its own, and the same search along
   that direction closes the gap. Then a second pass along the first direction, from the fibres through both
   minimisers of the jump, and KKT points from those.

Every bound is a Lagrangian bound with its multipliers and a Cholesky proof of the Hessian's
definiteness, so the lower bound holds whatever the loop does; the gap left (if any) is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from ._base import SolverStatus
from ._fibre_search import _FibreSearch, _kkt_direction
from ._fibres import _min_max_quadratics, _Problem, _q
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
        for Q, lams, s_lo, s_hi in self.cuts.get("fibres", ()):  # one envelope per fibre direction
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
    m_start = np.array([lam_best["lam"], lam_best["nu"]])
    fibres: list = []
    visited: list = []  # KKT points whose direction was searched
    # the λ-search's bound: raised below by the fibres' envelopes, whose minorants carry their own multipliers
    lam_best["lagrangian"] = (lam_best["D"], lam_best["lam"])
    first = _FibreSearch(pb, v, m_start, lam_best["lagrangian"], best, atol, max_fibres, info)
    steps = [
        # the fibre through the best member so far (then Newton's, Kelley's points)
        lambda: first.run([best["x"]]),
        # the fibres' own duals stall (a duality gap inside the fibres): the fibres across the direction of
        # negative curvature at a KKT point, from the best member, where the fibre through it has no gap
        lambda: _kkt_direction(pb, best["x"], best, lam_best, atol, max_fibres, info, fibres, visited),
        # the fibres through both minimisers of the jump (the minimum may sit on the side the first pass never
        # visited), with a budget of their own; then KKT points from both
        lambda: first.run([a[0], b[0]]),
        lambda: _kkt_direction(pb, a[0], best, lam_best, atol, max_fibres, info, fibres, visited),
        lambda: _kkt_direction(pb, b[0], best, lam_best, atol, max_fibres, info, fibres, visited),
    ]
    for step in steps:
        if first.ok:
            lam_best["D"] = max(lam_best["D"], first.lower())
        if best["f"] - lam_best["D"] <= atol:
            break
        step()
    if first.ok:
        lam_best["D"] = max(lam_best["D"], first.lower())
        fibres.insert(0, first.cuts())
    if fibres:
        cuts["fibres"] = fibres
    return _result(pb, best, lam_best, atol, info, cuts)


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
