"""Model class reliance: the γ-search, certified bounds and the MCR envelope.

Fisher, Rudin & Dominici (2019, §6) bound MR over the empirical Rashomon set
``{f ∈ F : e_orig(f) <= ε}`` through two families of problems, solved here to
global optimality by :class:`~rashomon.solvers.QCQPSequence`:

* ``h₋(f) = γ·e_orig(f) + e_switch(f)``; with ``h* = min_F h₋``:
  ratio: if ``h* >= 0`` then ``MR(f) >= h*/ε - γ`` on the set (any γ);
  difference: ``MR_diff(f) >= h* - (1+γ)ε`` (γ >= -1, any h*).
* ``h₊(f) = e_orig(f) + γ·e_switch(f)``, γ < 0:
  ratio: if ``h* >= 0`` then ``MR(f) <= (h*/ε - 1)/γ``;
  difference (γ ∈ [-1, 0)): ``MR_diff(f) <= (h* - ε)/γ - ε``.
  (From ``e_orig + γe_switch >= h*``: ``e_switch <= (e_orig - h*)/|γ|``, so
  ``e_switch - e_orig <= e_orig(1/|γ| - 1) - h*/|γ|``; the coefficient of
  ``e_orig`` is >= 0 for |γ| <= 1, so ``e_orig <= ε`` gives the bound.)

Each bound, seen as a function of γ, is a Lagrangian dual bound (concave for
the lower end, convex for the upper end in ``-1/γ``) whose slope has the sign
of ``e_orig(f_γ) - ε``; the search brackets the γ where the minimiser's
``e_orig`` crosses ε and bisects. On both ends "good" steps (valid, minimiser
inside the set) lie at larger γ. The lower end searches γ < 0 as well (the
authors' code stops at γ = 0 and returns a conservative bound when the
e_switch minimiser is already in the set); these problems are non-convex and
solved exactly. A bound is *tight* when a returned model of the set attains it
within ``tol``; where bisection meets a jump (several minimisers at γ*), the
segment between the two bracketing minimisers is searched for a model with
``e_orig = ε``.

Every certified step also yields a curve below which no model of the class
lies in the (MR, loss) plane; their maximum is the *MCR envelope*, and
``{m : envelope(m) <= ε}`` contains MCR at every ε.

The result at one ε, with its consistency checks, is built by ``search_result`` (``_search_result.py``).
"""

from __future__ import annotations

import math

import numpy as np

from ...model_classes.quadratics import MCRProblem
from ...solvers import QCQPSequence, SolverStatus, qcqp_certificate
from ...utils import one_blas_thread
from .._steps import MCRModel, MCRStep, mr_value, step_bound

__all__ = ["GammaSearch"]


class GammaSearch:
    """Runs the γ-searches of one MCRProblem, reusing one factorisation per end."""

    @one_blas_thread
    def __init__(self, prob: MCRProblem, kind: str, tol: float, max_iter: int, theta_min: np.ndarray | None = None):
        self.prob, self.kind, self.tol, self.max_iter = prob, kind, tol, max_iter
        eo, es = prob.e_orig, prob.e_switch
        # h₋ = e_switch + γ e_orig ; h₊ = e_orig + γ e_switch
        lower = QCQPSequence(es.Q, es.c, prob.B, prob.r, A1=eo.Q, b1=eo.c)
        self.seq = {"lower": lower, "upper": lower.swapped()}  # one factorisation of B for both ends
        self.steps: list[MCRStep] = []
        self.cache: dict = {}
        self._fully_certified: set[int] = set()
        self._cand: dict[str, list] = {"theta": [], "eo": [], "es": [], "ok": []}
        self._best: dict = {}  # best step / member per (side, ε), updated as steps and candidates arrive
        if theta_min is None:  # min e_orig over the class (a RashomonSet solves it once and passes it in)
            theta_min = self.seq["upper"].solve(0.0).x
        self.theta_min = theta_min
        self.e_min = eo(theta_min)
        self.es_at_min = es(theta_min)
        self._add_candidate(theta_min)

    def _add_candidate(self, theta: np.ndarray, e_o: float | None = None, e_s: float | None = None) -> None:
        """Models of the class that may attain a bound; their losses are computed once."""
        c = self._cand
        c["theta"].append(theta)
        c["eo"].append(self.prob.e_orig(theta) if e_o is None else e_o)
        c["es"].append(self.prob.e_switch(theta) if e_s is None else e_s)
        c["ok"].append(bool(theta @ self.prob.B @ theta <= self.prob.r * (1 + 1e-9)))

    def step(self, side: str, gamma: float) -> MCRStep:
        key = (side, float(gamma))
        if key in self.cache:
            return self.cache[key]
        # Search steps use the engine's O(p²) reduced certificate; the steps that end up
        # determining a reported bound are re-checked in full by `recertify`.
        res = self.seq[side].solve(gamma, check=False, certificate="reduced")
        eo, es = self.prob.e_orig, self.prob.e_switch
        if res.status is SolverStatus.UNBOUNDED:
            st = MCRStep(side, float(gamma), -math.inf, None, math.nan, math.nan, True)
        elif res.x is None:
            st = MCRStep(side, float(gamma), math.nan, None, math.nan, math.nan, False)
        else:
            const = (eo.k * gamma + es.k) if side == "lower" else (eo.k + gamma * es.k)
            st = MCRStep(
                side,
                float(gamma),
                res.objective + const,
                res.x,
                eo(res.x),
                es(res.x),
                res.status is SolverStatus.OPTIMAL,
                float(res.multiplier),
            )
            self._add_candidate(res.x, st.e_orig, st.e_switch)
        self.cache[key] = st
        self.steps.append(st)
        return st

    def valid(self, st: MCRStep, eps: float) -> bool:
        return np.isfinite(step_bound(st, eps, self.kind))

    def good(self, st: MCRStep, eps: float) -> bool:
        """Valid and its minimiser inside the Rashomon set: the optimum γ is not larger."""
        return self.valid(st, eps) and st.theta is not None and st.e_orig <= eps

    @one_blas_thread
    def search(self, side: str, eps: float, start: float | None = None) -> None:
        """Bracket and bisect γ for one end at ε (steps accumulate in self.steps)."""
        kind = self.kind
        floor = -1.0 if kind == "difference" else -math.inf
        if side == "upper":
            ceil = 0.0  # γ < 0 strictly
            scale = (self.e_min / self.es_at_min) if self.es_at_min > 0 else 1.0
            g0 = start if (start is not None and start < 0) else -scale / 8.0
            if kind == "difference":
                g0 = max(g0, -1.0)
        else:
            ceil = math.inf
            g0 = 0.0 if start is None else start
        s0 = self.step(side, g0)
        lo = hi = None
        if self.good(s0, eps):
            hi = g0
            d = max(abs(g0), 1.0) / 8.0 if side == "lower" else abs(g0)
            for _ in range(200):
                g = hi - d
                if g < floor:
                    g = floor
                st = self.step(side, g)
                if not self.good(st, eps):
                    lo = g
                    break
                hi = g
                if g == floor:
                    return  # the optimum is at the floor (γ = -1 for the difference)
                d *= 2.0
            if lo is None:
                return
        else:
            lo = g0
            for k in range(200):
                g = (lo + max(abs(lo), 1.0) / 8.0 * 2.0**k) if side == "lower" else lo / 2.0
                if side == "lower" and lo < 0 and g > 0:
                    g = 0.0
                st = self.step(side, g)
                if self.good(st, eps):
                    hi = g
                    break
                lo = g
                if g >= ceil or (side == "upper" and abs(g) < 1e-300):
                    return
            if hi is None:
                return

        # Illinois (safeguarded regula falsi) on φ(γ) = e_orig(f_γ) - ε, which is monotone in γ;
        # plain bisection where φ is unknown at an end (unbounded or h* < 0) or the bracket
        # shrinks too slowly (a jump in φ).
        def phi(g):
            st = self.cache[(side, float(g))]
            return st.e_orig - eps if (st.theta is not None and self.valid(st, eps)) else math.nan

        f_lo, f_hi = phi(lo), phi(hi)
        last = None
        for it in range(self.max_iter):
            if self.gap(side, eps) <= self.tol * max(1.0, abs(self.best_bound(side, eps))):
                break
            if hi - lo <= 1e-8 * max(abs(lo), abs(hi)):  # a jump: search_result solves the end with both constraints
                break
            use_secant = np.isfinite(f_lo) and np.isfinite(f_hi) and f_lo > f_hi and it % 3 != 2
            mid = hi - f_hi * (hi - lo) / (f_hi - f_lo) if use_secant else 0.5 * (lo + hi)
            if not (lo < mid < hi):
                mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            st = self.step(side, mid)
            if self.good(st, eps):
                hi, f_hi = mid, phi(mid)
                if last == "hi" and np.isfinite(f_lo):
                    f_lo *= 0.5
                last = "hi"
            else:
                lo, f_lo = mid, phi(mid)
                if last == "lo" and np.isfinite(f_hi):
                    f_hi *= 0.5
                last = "lo"
        self._interpolate(side, eps, lo, hi)

    def _interpolate(self, side, eps, lo, hi):
        """At a jump, look on the segment between the bracketing minimisers for e_orig = ε."""
        a, b = self.cache.get((side, float(lo))), self.cache.get((side, float(hi)))
        if a is None or b is None or a.theta is None or b.theta is None:
            return
        eo = self.prob.e_orig
        ta, tb = a.theta, b.theta
        dlt = ta - tb
        # e_orig(tb + t·dlt) = α t² + β t + c ; solve = ε for t in [0, 1]
        al = float(dlt @ eo.Q @ dlt)
        be = float(2 * tb @ eo.Q @ dlt - 2 * eo.c @ dlt)
        c = eo(tb) - eps
        ts = np.roots([al, be, c]) if abs(al) > 0 else (np.array([-c / be]) if be != 0 else np.array([]))
        for t in ts:
            if np.isreal(t) and 0 <= t.real <= 1:
                th = tb + t.real * dlt
                if th @ self.prob.B @ th <= self.prob.r * (1 + 1e-12):
                    self._add_candidate(th)

    @one_blas_thread
    def recertify(self, side: str, eps: float) -> None:
        """Full original-coordinate certificate for the step giving the best bound.

        A step that fails it is marked uncertified (it no longer yields a bound)
        and the next best is checked, until the best remaining bound is certified.
        """
        seq = self.seq[side]
        while True:
            idx = self._best_step(side, eps)[2]
            if idx < 0:
                return
            st = self.steps[idx]
            if idx in self._fully_certified or st.theta is None:
                return
            A, bb = seq.problem(st.gamma)
            cert = qcqp_certificate(A, bb, seq.B, seq.r, st.theta, st.nu, seq.B_factor)
            if cert.passed(seq.tol):
                self._fully_certified.add(idx)
                return
            self.steps[idx] = MCRStep(st.side, st.gamma, st.h_star, st.theta, st.e_orig, st.e_switch, False, st.nu)
            self.cache[(side, st.gamma)] = self.steps[idx]
            self._best.clear()  # a step no longer gives a bound

    def _best_step(self, side: str, eps: float) -> tuple[float, float, int]:
        """``(bound, γ, index)`` of the first step giving the best bound of a side at ε (index -1: none).

        Kept per (side, ε) and extended by the steps taken since (one scalar :func:`step_bound` each),
        instead of re-evaluating every step at each query."""
        key = ("step", side, float(eps))
        n0, best, g, idx = self._best.get(key, (0, math.nan, math.nan, -1))
        steps = self.steps
        for i in range(n0, len(steps)):
            st = steps[i]
            if st.side != side:
                continue
            b = step_bound(st, eps, self.kind)
            if math.isfinite(b) and (idx < 0 or (b > best if side == "lower" else b < best)):
                best, g, idx = b, st.gamma, i
        self._best[key] = (len(steps), best, g, idx)
        return best, g, idx

    def best_bound(self, side: str, eps: float) -> float:
        b, _, idx = self._best_step(side, eps)
        if idx < 0:
            return -math.inf if side == "lower" else math.inf
        return float(b)

    def best_gamma(self, side: str, eps: float) -> float:
        _, g, idx = self._best_step(side, eps)
        return float(g) if idx >= 0 else math.nan

    def best_model(self, side: str, eps: float) -> tuple[np.ndarray | None, float]:
        """The member of the set (``e_orig <= ε``, inside the ball) with the least (lower) or largest (upper)
        MR among the candidates; kept per (side, ε) and extended by the candidates added since."""
        c = self._cand
        key = ("model", side, float(eps))
        worst = math.inf if side == "lower" else -math.inf
        n0, feasible, best, idx = self._best.get(key, (0, False, worst, 0))
        eo, es, ok = c["eo"], c["es"], c["ok"]
        for i in range(n0, len(eo)):
            if not (eo[i] <= eps and ok[i]):
                continue
            feasible = True
            if self.kind == "difference":
                mr = es[i] - eo[i]
            else:
                mr = es[i] / eo[i] if eo[i] > 0 else math.inf
            if mr < best if side == "lower" else mr > best:
                best, idx = mr, i
        self._best[key] = (len(eo), feasible, best, idx)
        if not feasible:
            return None, worst
        return c["theta"][idx], float(best)

    def gap(self, side: str, eps: float) -> float:
        bound = self.best_bound(side, eps)
        _, m = self.best_model(side, eps)
        if not (np.isfinite(bound) and np.isfinite(m)):
            return math.inf
        return max(0.0, m - bound) if side == "lower" else max(0.0, bound - m)

    def model(self, theta) -> MCRModel | None:
        if theta is None:
            return None
        e_o, e_s = self.prob.e_orig(theta), self.prob.e_switch(theta)
        params = self.prob.to_model(theta)
        return MCRModel(
            np.asarray(theta), e_o, e_s, mr_value(e_o, e_s, self.kind), params, self.prob.par.estimator(theta)
        )
