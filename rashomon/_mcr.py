"""Model class reliance: the γ-search, certified bounds and the MCR envelope.

Fisher, Rudin & Dominici (2019, §6) bound MR over the empirical Rashomon set
``{f ∈ F : e_orig(f) <= ε}`` through two families of problems, solved here to
global optimality by :class:`solvers.QCQPSequence`:

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
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from solvers import QCQPSequence, SolverStatus

from ._quadratics import MCRProblem
from ._validation import RashomonInputError, check_choice, check_float, check_X, check_y, resolve_group

__all__ = ["MCRStep", "MCRModel", "MCRResult", "MCREnvelope", "model_class_reliance", "mcr_envelope"]


@dataclass(frozen=True)
class MCRStep:
    """One solve of the search: ``h* = min_F h(f; γ)`` and its minimiser.

    ``side`` is ``"lower"`` (h₋) or ``"upper"`` (h₊). ``certified`` is True when
    the engine's KKT certificate passed (so h* is the global minimum).
    """

    side: str
    gamma: float
    h_star: float
    theta: np.ndarray | None
    e_orig: float
    e_switch: float
    certified: bool
    nu: float = math.nan


@dataclass(frozen=True)
class MCRModel:
    """A model of the class: parameters, losses and reliance."""

    theta: np.ndarray
    e_orig: float
    e_switch: float
    mr: float
    params: dict

    @property
    def coef(self):
        return self.params.get("coef")

    @property
    def intercept(self):
        return self.params.get("intercept")


def _mr(e_o: float, e_s: float, kind: str) -> float:
    if kind == "difference":
        return e_s - e_o
    return e_s / e_o if e_o > 0 else math.inf


def step_bound(step: MCRStep, eps: float, kind: str) -> float:
    """The bound a certified step gives at ε (``nan`` when it gives none)."""
    if not step.certified or not np.isfinite(step.h_star):
        return math.nan
    g, h = step.gamma, step.h_star
    if kind == "ratio":
        if h < 0:
            return math.nan
        if step.side == "lower":
            return h / eps - g
        return (h / eps - 1.0) / g if g < 0 else math.nan
    if step.side == "lower":
        return h - (1.0 + g) * eps if g >= -1 else math.nan
    return (h - eps) / g - eps if -1 <= g < 0 else math.nan


def step_bounds(sides: np.ndarray, gammas: np.ndarray, hs: np.ndarray, cert: np.ndarray, eps: float, kind: str) -> np.ndarray:
    """Vectorised :func:`step_bound` over arrays of steps."""
    g, h = gammas, hs
    lower = sides == "lower"
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "ratio":
            out = np.where(lower, h / eps - g, (h / eps - 1.0) / g)
            ok = (h >= 0) & (lower | (g < 0))
        else:
            out = np.where(lower, h - (1.0 + g) * eps, (h - eps) / g - eps)
            ok = np.where(lower, g >= -1, (g >= -1) & (g < 0))
    ok &= cert & np.isfinite(h)
    return np.where(ok, out, np.nan)


def envelope_loss(steps: list[MCRStep], m: np.ndarray, kind: str) -> np.ndarray:
    """Certified lower bound on e_orig of any model of the class with MR = m."""
    m = np.asarray(m, dtype=float)
    out = np.full(m.shape, -np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for s in steps:
            if not s.certified or not np.isfinite(s.h_star):
                continue
            g, h = s.gamma, s.h_star
            if kind == "ratio":
                if h < 0:
                    continue
                den = (m + g) if s.side == "lower" else (1.0 + g * m)
                if s.side == "upper" and g >= 0:
                    continue
                val = np.where(den > 0, h / den, np.inf if h > 0 else -np.inf)
            else:
                # lower: (1+γ)e_orig >= h - m ; upper: (1+γ)e_orig >= h - γ m
                num = h - m if s.side == "lower" else h - g * m
                if s.side == "upper" and not (-1 <= g < 0):
                    continue
                if s.side == "lower" and g < -1:
                    continue
                if 1 + g > 0:
                    val = num / (1 + g)
                else:  # γ = -1: a hard constraint num <= 0
                    val = np.where(num <= 0, -np.inf, np.inf)
            out = np.maximum(out, val)
    return out


@dataclass(frozen=True)
class MCRResult:
    """Model class reliance ``[lower, upper]`` over the empirical Rashomon set.

    Attributes
    ----------
    lower, upper : float
        Certified bounds: no model of the class with ``e_orig <= epsilon_abs``
        has MR outside ``[lower, upper]``.
    lower_model, upper_model : MCRModel or None
        Models of the Rashomon set attaining (within ``lower_gap`` /
        ``upper_gap``) each bound.
    lower_gap, upper_gap : float
        ``MR(lower_model) - lower`` and ``upper - MR(upper_model)`` (>= 0).
    lower_tight, upper_tight : bool
        Gap within ``tol·max(1, |bound|)``.
    lower_certified, upper_certified : bool
        True when the value is a certified bound. For non-quadratic losses the
        upper end is an *inner* value (the best model found, a lower bound on
        MCR+) and ``upper_certified`` is False; see ``notes``.
    loss : str
    notes : str
    gamma_lower, gamma_upper : float
        The multipliers of the best bounds.
    kind : {"ratio", "difference"}
    features : tuple of str
    epsilon_abs, e_ref, e_min : float
        Rashomon threshold, reference loss and best attainable loss in the class.
    reference_model : MCRModel or None
        The class's loss minimiser (when it is the reference).
    steps : list of MCRStep
        The whole search path (both ends).
    model_class : str
    tol : float
    """

    lower: float
    upper: float
    lower_model: MCRModel | None
    upper_model: MCRModel | None
    lower_gap: float
    upper_gap: float
    lower_tight: bool
    upper_tight: bool
    gamma_lower: float
    gamma_upper: float
    kind: str
    features: tuple
    epsilon_abs: float
    e_ref: float
    e_min: float
    reference_model: MCRModel | None
    steps: list = field(repr=False, default_factory=list)
    model_class: str = ""
    tol: float = 2.0**-20
    certified: bool = True
    lower_certified: bool = True
    upper_certified: bool = True
    loss: str = "squared_error"
    notes: str = ""

    def to_frame(self) -> pd.DataFrame:
        """The search path: one row per step (side, γ, h*, e_orig, e_switch, MR, bound)."""
        rows = []
        for s in self.steps:
            rows.append({
                "side": s.side, "gamma": s.gamma, "h_star": s.h_star, "e_orig": s.e_orig, "e_switch": s.e_switch,
                "mr": _mr(s.e_orig, s.e_switch, self.kind) if s.theta is not None else math.nan,
                "in_rashomon_set": s.theta is not None and s.e_orig <= self.epsilon_abs * (1 + 1e-12),
                "bound": step_bound(s, self.epsilon_abs, self.kind), "certified": s.certified,
            })
        return pd.DataFrame(rows)

    def summary(self) -> pd.Series:
        return pd.Series({
            "features": ", ".join(self.features), "kind": self.kind, "epsilon_abs": self.epsilon_abs,
            "e_ref": self.e_ref, "e_min": self.e_min, "mcr_lower": self.lower, "mcr_upper": self.upper,
            "lower_gap": self.lower_gap, "upper_gap": self.upper_gap, "lower_tight": self.lower_tight,
            "upper_tight": self.upper_tight, "lower_certified": self.lower_certified,
            "upper_certified": self.upper_certified, "loss": self.loss,
        })

    def envelope(self, m) -> np.ndarray:
        """Certified lower bound on the loss of any model of the class with MR = m."""
        return envelope_loss(self.steps, m, self.kind)

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """Envelope figure (x: MR, y: loss); returns an MCREnvelopeDisplay."""
        from .plotting import MCREnvelopeDisplay

        return MCREnvelopeDisplay.from_result(self).plot(ax=ax, **kwargs)


# --------------------------------------------------------------------------- search engine
class _Searcher:
    """Runs the γ-searches of one MCRProblem, reusing one factorisation per end."""

    def __init__(self, prob: MCRProblem, kind: str, tol: float, max_iter: int):
        self.prob, self.kind, self.tol, self.max_iter = prob, kind, tol, max_iter
        eo, es = prob.e_orig, prob.e_switch
        # h₋ = e_switch + γ e_orig ; h₊ = e_orig + γ e_switch
        self.seq = {
            "lower": QCQPSequence(es.Q, es.c, prob.B, prob.r, A1=eo.Q, b1=eo.c),
            "upper": QCQPSequence(eo.Q, eo.c, prob.B, prob.r, A1=es.Q, b1=es.c),
        }
        self.steps: list[MCRStep] = []
        self.cache: dict = {}
        self._st = {"side": [], "gamma": [], "h": [], "cert": []}
        self._fully_certified: set[int] = set()
        self._cand = {"theta": [], "eo": [], "es": [], "ok": []}
        ref = self.seq["upper"].solve(0.0)  # min e_orig over the class
        self.theta_min = ref.x
        self.e_min = eo(ref.x)
        self.es_at_min = es(ref.x)
        self._add_candidate(ref.x)

    def _add_candidate(self, theta: np.ndarray) -> None:
        """Models of the class that may attain a bound; their losses are computed once."""
        c = self._cand
        c["theta"].append(theta)
        c["eo"].append(self.prob.e_orig(theta))
        c["es"].append(self.prob.e_switch(theta))
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
            st = MCRStep(side, float(gamma), res.objective + const, res.x, eo(res.x), es(res.x),
                         res.status is SolverStatus.OPTIMAL, float(res.multiplier))
            self._add_candidate(res.x)
        self.cache[key] = st
        self.steps.append(st)
        for k, v in zip(("side", "gamma", "h", "cert"), (side, st.gamma, st.h_star, st.certified)):
            self._st[k].append(v)
        return st

    def valid(self, st: MCRStep, eps: float) -> bool:
        return np.isfinite(step_bound(st, eps, self.kind))

    def good(self, st: MCRStep, eps: float) -> bool:
        """Valid and its minimiser inside the Rashomon set: the optimum γ is not larger."""
        return self.valid(st, eps) and st.theta is not None and st.e_orig <= eps

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

    def recertify(self, side: str, eps: float) -> None:
        """Full original-coordinate certificate for the step giving the best bound.

        A step that fails it is marked uncertified (it no longer yields a bound)
        and the next best is checked, until the best remaining bound is certified.
        """
        from solvers import qcqp_certificate

        seq = self.seq[side]
        while True:
            b, _ = self._bounds(side, eps)
            if b.size == 0:
                return
            target = b.max() if side == "lower" else b.min()
            sides = np.asarray(self._st["side"])
            allb = step_bounds(sides, np.asarray(self._st["gamma"], dtype=float), np.asarray(self._st["h"], dtype=float),
                               np.asarray(self._st["cert"], dtype=bool), eps, self.kind)
            idx = int(np.where((sides == side) & (allb == target))[0][0])
            st = self.steps[idx]
            if idx in self._fully_certified or st.theta is None:
                return
            A, bb = seq.problem(st.gamma)
            cert = qcqp_certificate(A, bb, seq.B, seq.r, st.theta, st.nu, seq.B_factor)
            if cert.passed(seq.tol):
                self._fully_certified.add(idx)
                return
            self._st["cert"][idx] = False
            self.steps[idx] = MCRStep(st.side, st.gamma, st.h_star, st.theta, st.e_orig, st.e_switch, False, st.nu)
            self.cache[(side, st.gamma)] = self.steps[idx]

    def _bounds(self, side: str, eps: float) -> tuple[np.ndarray, np.ndarray]:
        st = self._st
        sides = np.asarray(st["side"])
        b = step_bounds(sides, np.asarray(st["gamma"], dtype=float), np.asarray(st["h"], dtype=float),
                        np.asarray(st["cert"], dtype=bool), eps, self.kind)
        sel = (sides == side) & np.isfinite(b)
        return b[sel], np.asarray(st["gamma"], dtype=float)[sel]

    def best_bound(self, side: str, eps: float) -> float:
        b, _ = self._bounds(side, eps)
        if b.size == 0:
            return -math.inf if side == "lower" else math.inf
        return float(b.max() if side == "lower" else b.min())

    def best_gamma(self, side: str, eps: float) -> float:
        b, g = self._bounds(side, eps)
        if b.size == 0:
            return math.nan
        return float(g[np.argmax(b)] if side == "lower" else g[np.argmin(b)])

    def best_model(self, side: str, eps: float) -> tuple[np.ndarray | None, float]:
        c = self._cand
        eo, es = np.asarray(c["eo"]), np.asarray(c["es"])
        feas = (eo <= eps) & np.asarray(c["ok"])
        if not feas.any():
            return None, (math.inf if side == "lower" else -math.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            mr = es - eo if self.kind == "difference" else np.where(eo > 0, es / eo, np.inf)
        mr = np.where(feas, mr, np.inf if side == "lower" else -np.inf)
        i = int(np.argmin(mr) if side == "lower" else np.argmax(mr))
        return c["theta"][i], float(mr[i])

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
        return MCRModel(np.asarray(theta), e_o, e_s, _mr(e_o, e_s, self.kind), self.prob.to_model(theta))


def _epsilon_abs(epsilon, epsilon_kind, e_ref, e_min, func):
    if epsilon_kind == "absolute":
        eps = epsilon
    elif epsilon_kind == "additive":
        eps = e_ref + epsilon
    else:
        eps = e_ref * (1.0 + epsilon)
    if eps < e_min * (1 - 1e-12):
        raise RashomonInputError(
            f"The 'epsilon' parameter of {func} gives an absolute threshold {eps:.6g} below the best loss the model "
            f"class attains ({e_min:.6g}); the Rashomon set would be empty. Use a larger epsilon."
        )
    return max(eps, e_min)


def _prepare(model_class, X, y, features, func, sample_weight=None):
    if not hasattr(model_class, "build"):
        raise RashomonInputError(f"The 'model_class' parameter of {func} must be a model class such as LinearModelClass. Got {model_class!r} instead.")
    Xa, columns = check_X(X, func, min_rows=3)
    ya = check_y(y, Xa.shape[0], func)
    group = resolve_group(features, columns, Xa.shape[1], func)
    if sample_weight is not None:
        w = check_y(sample_weight, Xa.shape[0], func, param="sample_weight")
        if np.any(w < 0) or w.sum() <= 1:
            raise RashomonInputError(f"The 'sample_weight' parameter of {func} must be non-negative counts summing to more than 1.")
        sample_weight = w
    return Xa, ya, columns, group, sample_weight


def _strata_codes(conditional, strata, Xa, group, func):
    if not conditional:
        if strata is not None:
            raise RashomonInputError(f"The 'strata' parameter of {func} needs conditional=True.")
        return None
    from ._conditional import _check_strata, make_strata

    codes = _check_strata(strata, Xa.shape[0], func) if strata is not None else make_strata(Xa, group)
    return np.unique(codes, return_inverse=True)[1].ravel()


def _search_setup(model_class, Xa, ya, columns, group, w, conditional, strata, reference, kind, tol, max_iter, func):
    """Build the class's problem on validated data and start a searcher; returns (searcher, e_ref)."""
    codes = _strata_codes(conditional, strata, Xa, group, func)
    prob = model_class.build(Xa, ya, group, columns, func, sample_weight=w, strata=codes)
    srch = _Searcher(prob, kind, tol, max_iter)
    return srch, _reference_loss(reference, Xa, ya, columns, srch.e_min, func, w)


def _reference_loss(reference, Xa, ya, columns, e_min, func, sample_weight=None):
    if reference is None:
        return e_min
    if not hasattr(reference, "predict"):
        raise RashomonInputError(f"The 'reference' parameter of {func} must be None or a fitted model with predict. Got {reference!r} instead.")
    data = pd.DataFrame(Xa, columns=columns) if columns is not None else Xa
    pred = np.asarray(reference.predict(data), dtype=float).ravel()
    return float(np.average((ya - pred) ** 2, weights=sample_weight))


def _result(srch: _Searcher, eps: float, e_ref: float, reference, tol: float) -> MCRResult:
    out = {}
    for side in ("lower", "upper"):
        srch.recertify(side, eps)
        bound = srch.best_bound(side, eps)
        th, m = srch.best_model(side, eps)
        gap = srch.gap(side, eps)
        out[side] = (bound, srch.model(th), gap, gap <= tol * max(1.0, abs(bound)) if np.isfinite(bound) else False,
                     srch.best_gamma(side, eps))
    if srch.kind == "ratio" and not np.isfinite(out["lower"][0]):
        out["lower"] = (0.0,) + out["lower"][1:]  # MR >= 0 always
    return MCRResult(
        lower=float(out["lower"][0]), upper=float(out["upper"][0]),
        lower_model=out["lower"][1], upper_model=out["upper"][1],
        lower_gap=float(out["lower"][2]), upper_gap=float(out["upper"][2]),
        lower_tight=bool(out["lower"][3]), upper_tight=bool(out["upper"][3]),
        gamma_lower=float(out["lower"][4]), gamma_upper=float(out["upper"][4]),
        kind=srch.kind, features=srch.prob.feature_names, epsilon_abs=float(eps), e_ref=float(e_ref),
        e_min=float(srch.e_min), reference_model=srch.model(srch.theta_min) if reference is None else None,
        steps=list(srch.steps), model_class=srch.prob.class_name, tol=tol,
        certified=all(s.certified for s in srch.steps),
    )


def model_class_reliance(
    model_class: Any,
    X: Any,
    y: Any,
    features: Any,
    *,
    epsilon: float = 0.1,
    epsilon_kind: Literal["relative", "additive", "absolute"] = "relative",
    reference: Any = None,
    kind: Literal["ratio", "difference"] = "ratio",
    tol: float = 2.0**-20,
    max_iter: int = 100,
    sample_weight: Any = None,
    loss: str = "squared_error",
    n_starts: int = 5,
    random_state: Any = 0,
    conditional: bool = False,
    strata: Any = None,
) -> MCRResult:
    """Model class reliance: the range of MR over all good models of a class.

    Parameters
    ----------
    model_class : LinearModelClass or KernelModelClass
    X : array-like or DataFrame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    features : int, str or list
        The feature or group X1 whose reliance is bounded.
    epsilon : float, default=0.1
        Size of the Rashomon set, read according to ``epsilon_kind``.
    epsilon_kind : {"relative", "additive", "absolute"}, default="relative"
        ``"absolute"``: ε_abs = epsilon; ``"additive"``: ε_abs = e_ref + epsilon;
        ``"relative"``: ε_abs = e_ref·(1 + epsilon).
    reference : fitted model, default=None
        f_ref; None is the loss-minimising model of the class (so e_ref = e_min).
    kind : {"ratio", "difference"}, default="ratio"
    tol : float, default=2**-20
        The search stops when a model of the set attains the bound within
        ``tol·max(1, |bound|)``.
    max_iter : int, default=100
        Bisection steps per end.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative counts (e.g. a bootstrap resample): the losses become the
        estimators on the data with row i repeated ``w_i`` times, computed
        without repeating it.
    loss : {"squared_error", "hinge", "logistic", "absolute_error"}, default="squared_error"
        Non-quadratic convex losses need ``LinearModelClass``. Their lower end
        (γ >= 0) is a sequence of convex programmes solved by cvxpy, each bound
        taken from a certified dual lower bound; their upper end is non-convex
        and is returned as an uncertified inner value (``upper_certified=False``):
        the best model found by convex–concave (Dinkelbach) ascent from
        ``n_starts`` starts. Hinge and logistic take labels in {-1, +1} or {0, 1}.
    n_starts, random_state
        Starts of that ascent and their seed.
    conditional : bool, default=False
        Conditional MCR: e_switch switches X1 only within ``strata`` (the
        within-stratum U-statistic of :func:`conditional_model_reliance`; still a
        quadratic, so bounds stay exact and certified).
    strata : array-like of shape (n_samples,), default=None
        Stratum labels; None with ``conditional=True`` builds them automatically
        (:func:`rashomon.make_strata`).

    Returns
    -------
    MCRResult

    Raises
    ------
    RashomonInputError
        Bad input, or ε_abs below the best loss the class attains.

    References
    ----------
    Fisher, Rudin & Dominici (2019), JMLR 20(177), §6 and Appendix A.
    """
    func = "model_class_reliance"
    check_choice(epsilon_kind, ("relative", "additive", "absolute"), "epsilon_kind", func)
    check_choice(kind, ("ratio", "difference"), "kind", func)
    epsilon = check_float(epsilon, "epsilon", func, low=0.0, strict=epsilon_kind == "absolute")
    tol = check_float(tol, "tol", func, low=0.0)
    check_choice(loss, ("squared_error", "hinge", "logistic", "absolute_error"), "loss", func)
    Xa, ya, columns, group, w = _prepare(model_class, X, y, features, func, sample_weight)
    if loss != "squared_error":
        from ._mcr_convex import convex_loss_mcr

        if w is not None or conditional:
            raise RashomonInputError(f"The 'sample_weight' and 'conditional' parameters of {func} need loss='squared_error'.")
        return convex_loss_mcr(model_class, Xa, ya, columns, group, loss=loss, epsilon=epsilon, epsilon_kind=epsilon_kind,
                               reference=reference, kind=kind, tol=tol, max_iter=max_iter, n_starts=n_starts,
                               random_state=random_state, func=func)
    srch, e_ref = _search_setup(model_class, Xa, ya, columns, group, w, conditional, strata, reference, kind, tol,
                                max_iter, func)
    eps = _epsilon_abs(epsilon, epsilon_kind, e_ref, srch.e_min, func)
    srch.search("lower", eps)
    srch.search("upper", eps)
    return _result(srch, eps, e_ref, reference, tol)


@dataclass(frozen=True)
class MCREnvelope:
    """MCR traced over a range of ε, with the certified envelope.

    Attributes
    ----------
    epsilons : ndarray of shape (k,)
        Absolute thresholds searched.
    lower, upper : ndarray of shape (k,)
        MCR bounds from the search at each ε.
    results : list of MCRResult
    steps : list of MCRStep
        Every step of every search (they all stay valid at every ε).
    kind, features, e_ref, e_min
    """

    epsilons: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    results: list
    steps: list = field(repr=False)
    kind: str = "ratio"
    features: tuple = ()
    e_ref: float = math.nan
    e_min: float = math.nan

    def bounds(self, epsilon: float) -> tuple[float, float]:
        """Certified ``(lower, upper)`` at any absolute ε, from all steps at once."""
        eps = float(epsilon)
        if eps < self.e_min * (1 - 1e-12):
            raise RashomonInputError(f"The 'epsilon' parameter of MCREnvelope.bounds must be >= e_min = {self.e_min:.6g}. Got {eps!r} instead.")
        lo = [step_bound(s, eps, self.kind) for s in self.steps if s.side == "lower"]
        up = [step_bound(s, eps, self.kind) for s in self.steps if s.side == "upper"]
        lo = [v for v in lo if np.isfinite(v)]
        up = [v for v in up if np.isfinite(v)]
        lower = max(lo) if lo else (0.0 if self.kind == "ratio" else -math.inf)
        return float(lower), float(min(up) if up else math.inf)

    def envelope(self, m) -> np.ndarray:
        """Certified lower bound on the loss of any model of the class with MR = m."""
        return envelope_loss(self.steps, m, self.kind)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"epsilon_abs": self.epsilons, "mcr_lower": self.lower, "mcr_upper": self.upper})

    def plot(self, *, ax: Any = None, epsilon: float | None = None, **kwargs: Any):
        """The paper's figure: envelope in the (MR, loss) plane; returns an MCREnvelopeDisplay."""
        from .plotting import MCREnvelopeDisplay

        return MCREnvelopeDisplay.from_envelope(self, epsilon=epsilon).plot(ax=ax, **kwargs)

    def plot_band(self, *, ax: Any = None, **kwargs: Any):
        """MCR lower and upper against ε; returns an MCRBandDisplay."""
        from .plotting import MCRBandDisplay

        return MCRBandDisplay.from_envelope(self).plot(ax=ax, **kwargs)


def mcr_envelope(
    model_class: Any,
    X: Any,
    y: Any,
    features: Any,
    *,
    epsilons: Any = None,
    epsilon_kind: Literal["relative", "additive", "absolute"] = "relative",
    reference: Any = None,
    kind: Literal["ratio", "difference"] = "ratio",
    tol: float = 2.0**-20,
    max_iter: int = 100,
    progress: bool = False,
    conditional: bool = False,
    strata: Any = None,
) -> MCREnvelope:
    """Trace MCR across ε values, reusing one factorisation and warm-starting γ.

    Parameters
    ----------
    epsilons : array-like, default=None
        Values read by ``epsilon_kind``; default ``np.geomspace(0.005, 0.5, 20)``
        (relative).
    progress : bool, default=False
        Show a tqdm progress bar.
    conditional, strata
        Conditional MCR, as in :func:`model_class_reliance`.
    Other parameters
        As in :func:`model_class_reliance`.

    Returns
    -------
    MCREnvelope
    """
    func = "mcr_envelope"
    check_choice(epsilon_kind, ("relative", "additive", "absolute"), "epsilon_kind", func)
    check_choice(kind, ("ratio", "difference"), "kind", func)
    eps_in = np.geomspace(0.005, 0.5, 20) if epsilons is None else np.atleast_1d(np.asarray(epsilons, dtype=float))
    if eps_in.size == 0 or not np.all(np.isfinite(eps_in)):
        raise RashomonInputError(f"The 'epsilons' parameter of {func} must be a non-empty array of finite floats.")
    Xa, ya, columns, group, _ = _prepare(model_class, X, y, features, func)
    srch, e_ref = _search_setup(model_class, Xa, ya, columns, group, None, conditional, strata, reference, kind, tol,
                                max_iter, func)
    prob = srch.prob
    abs_eps = np.array([_epsilon_abs(float(e), epsilon_kind, e_ref, srch.e_min, func) for e in eps_in])
    order = np.argsort(abs_eps)
    results = [None] * len(abs_eps)
    it = order
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(order, desc="MCR envelope")
    start = {"lower": None, "upper": None}
    for i in it:
        eps = abs_eps[i]
        for side in ("lower", "upper"):
            srch.search(side, eps, start=start[side])
            g = srch.best_gamma(side, eps)
            start[side] = g if np.isfinite(g) else None
        results[i] = _result(srch, eps, e_ref, reference, tol)
    return MCREnvelope(
        epsilons=abs_eps, lower=np.array([r.lower for r in results]), upper=np.array([r.upper for r in results]),
        results=results, steps=list(srch.steps), kind=kind, features=prob.feature_names, e_ref=e_ref, e_min=srch.e_min,
    )
