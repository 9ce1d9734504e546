"""Certified bounds for the non-convex ends of classifier MCR, from quadratic surrogates.

Let S = {θ ∈ K : e_orig(θ) <= ε} (K: the norm ball with the intercept in the
interval of :func:`intercept_interval`, which contains S).

**Score ranges.** Suppose every margin of every row stays in an interval ``[lo_i, hi_i]`` on S.
Then ``ℓ(m) >= ℓ(m0) + ℓ'(m0)(m - m0) + κ_i/2·(m - m0)²`` there, with ``κ_i = min ℓ''`` on the
interval (Taylor with integral remainder), and ``ℓ(m) <= ... + K_i/2·(m - m0)²`` with
``K_i = min(max ℓ'' on the interval, the Jaakkola–Jordan curvature at m0)`` (the latter is a
global majorant). Summing gives quadratics ``L <= e_orig`` and ``U >= e_switch`` (or the reverse
pair) on S. Intervals come from a fixed point that stays valid at every step: start from K
(Cauchy–Schwarz on the ball, the intercept interval); with the minorant L built on the current
intervals, ``S ⊆ {θ : L(θ) + ν(θ'Bθ - r) <= ε}`` for any ν >= 0 -- an ellipsoid, on which each
score's range is closed form -- and the intersection of old and new intervals is again valid.
For the hinge loss the smoothed loss ``ℓ_τ`` with ``ℓ <= ℓ_τ <= ℓ + τ log 2`` stands in:
``e_orig >= e_orig,τ - τ log 2`` and ``e_switch <= e_switch,τ``.

**Upper end (MCR+).** For γ < 0 and any θ in S, ``e_orig + γ·e_switch >= L + γ·U >= h*`` with
``h* = min_{θ'Bθ <= r} L + γU`` (a minimum over a superset of S, solved exactly by the one-ball
QCQP engine). Hence ``e_switch <= (e_orig - h*)/|γ|`` and, when h* >= 0,
``MR = e_switch/e_orig <= (1 - h*/e_orig)/|γ| <= (1 - h*/ε)/|γ|`` -- the bound of Fisher et al.
(2019, §6) with (L, U) in place of (e_orig, e_switch); for the difference (γ ∈ [-1, 0))
``e_switch - e_orig <= U - L <= (h* - ε)/γ - ε``. No member of S can exceed it. The bound is a
convex function of ``-1/γ`` on the γ where it is valid; it is minimised by golden section.

**Lower end, γ < 0.** With ``L_s <= e_switch`` and ``U_o >= e_orig`` on S and γ < 0,
``e_switch + γ·e_orig >= L_s + γ·U_o >= h*``, so MR >= h*/ε - γ (h* >= 0; difference:
h* - (1+γ)ε for γ >= -1), concave in γ, maximised the same way.
"""

from __future__ import annotations

import math

import numpy as np

from ...solvers import QCQPSequence, SolverStatus
from .._steps import MCRStep, step_bound
from ._terms import orig_quadratic

__all__ = ["bound_loss", "intercept_interval", "ScoreRanges", "surrogate_bound", "surrogate_list"]


def intercept_interval(D, y, o, B, r, loss, eps):
    """``(lo, hi)`` of the intercept over ``{θ'Bθ <= r, e_orig(θ) <= ε}`` (empty arrays without one).

    For the rows of label ±1 (n_± of n), Jensen on the convex loss gives
    ``(n_±/n)·ℓ(±(μ + z̄_±'β)) <= ε``; ℓ decreasing and ``|z̄'β| <= sqrt(r z̄'M⁻¹z̄)`` give
    ``μ >= ℓ⁻¹(nε/n₊) - sqrt(r z̄₊'M⁻¹z̄₊)`` and ``μ <= -ℓ⁻¹(nε/n₋) + sqrt(r z̄₋'M⁻¹z̄₋)``.
    """
    if not o:
        return np.zeros(0), np.zeros(0)
    n = len(y)
    Minv = np.linalg.inv(B[1:, 1:])
    out = []
    for sign in (1.0, -1.0):
        rows = y == sign
        zbar = D[rows, 1:].mean(axis=0)
        rad = math.sqrt(max(r * float(zbar @ Minv @ zbar), 0.0))
        m = loss.inverse(n * eps / rows.sum())
        out.append(m - rad if sign > 0 else -m + rad)
    return np.array([out[0]]), np.array([out[1]])


class ScoreRanges:
    """Valid score intervals of every row on S (see the module docstring), refined by a fixed point.

    Parameters
    ----------
    D, y : design rows and ±1 labels.
    B, r, lo, hi : the class ball and the intercept interval (K).
    loss : MarginLoss (smoothed for the hinge), offset : its smoothing error.
    eps : float
    theta_c : ndarray
        A member of S (the loss minimiser) at which the minorants are expanded.
    """

    def __init__(self, D, y, B, r, lo, hi, loss, offset, eps, theta_c, iterations: int = 6):
        self.D, self.y, self.B, self.r, self.loss = D, y, B, r, loss
        d = D.shape[1]
        self.free = np.where(np.all(B == 0, axis=1))[0]
        pen = np.setdiff1d(np.arange(d), self.free)
        self.Pball = np.zeros((d, d))
        self.Pball[np.ix_(pen, pen)] = np.linalg.inv(B[np.ix_(pen, pen)])
        self.mid = np.zeros(d)
        self.mid[self.free] = 0.5 * (lo + hi)
        self.fw = np.zeros(d)
        self.fw[self.free] = 0.5 * (hi - lo)
        s_c = D @ self.mid
        h = np.sqrt(r * np.einsum("ij,jk,ik->i", D, self.Pball, D)) + np.abs(D) @ self.fw
        self.lo_o, self.hi_o = y * s_c - h, y * s_c + h
        self.ellipsoid: tuple | None = None  # (centre, P, δ) when the curvature bound gives one
        self.lp = None  # the hinge's linear-programme ranges, set by ._lp_ranges.tighten_ranges
        n = len(y)
        w = np.full(n, 1.0 / n)
        g = None
        for _ in range(iterations):
            kappa = _curv(loss, self.lo_o, self.hi_o, y * (D @ theta_c), False)
            L = orig_quadratic(D, y, w, theta_c, loss, kappa, offset)
            if g is None:  # ball multiplier of the minimiser: centres the ellipsoid near θ_c
                grad = 2 * (L.Q @ theta_c - L.c)
                bt = B @ theta_c
                nu = max(-float(grad @ bt) / max(2 * float(bt @ bt), 1e-300), 0.0)
                g = nu
            Qn = L.Q + g * B
            try:
                ev = np.linalg.eigvalsh(Qn)
                if ev[0] <= 1e-13 * ev[-1]:
                    break
                Pinv = np.linalg.inv(Qn)
            except np.linalg.LinAlgError:
                break
            centre = Pinv @ L.c
            delta = eps + g * r - (L.k - float(L.c @ centre))
            if not delta > 0:
                break
            self.ellipsoid = (centre, 0.5 * (Pinv + Pinv.T), delta)
            s = D @ centre
            hw = np.sqrt(delta * np.maximum(np.einsum("ij,jk,ik->i", D, self.ellipsoid[1], D), 0.0))
            new_lo, new_hi = np.maximum(self.lo_o, y * s - hw), np.minimum(self.hi_o, y * s + hw)
            shrink = float(np.max((self.hi_o - self.lo_o) / np.maximum(new_hi - new_lo, 1e-300)))
            self.lo_o, self.hi_o = new_lo, new_hi
            if shrink < 1.01:
                break

    def switched(self, terms):
        """Margin intervals of the switched pairs (V × m, the row classes of ``terms``) on S."""
        y = terms.ys[None, :]
        s_c = terms.switched_scores(self.mid)
        h = np.sqrt(self.r * terms.switch_halfwidth(self.Pball))
        h = h + (np.abs(terms.G) @ self.fw[terms.gi])[:, None] + (np.abs(terms.Dr) @ self.fw[terms.ri])[None, :]
        lo, hi = y * s_c - h, y * s_c + h
        if self.ellipsoid is not None:
            centre, P, delta = self.ellipsoid
            s = terms.switched_scores(centre) * y
            hw = np.sqrt(delta * terms.switch_halfwidth(P))
            lo, hi = np.maximum(lo, s - hw), np.minimum(hi, s + hw)
        return lo, hi


def _curv(loss, lo, hi, m0, upper):
    """Curvature of a tangent quadratic at m0 below (``upper=False``) or above the loss on [lo, hi]: the
    best of the interval's extreme curvature, the self-concordance bounds and (above) Jaakkola-Jordan."""
    lo, hi = np.minimum(lo, m0), np.maximum(hi, m0)
    k_lo, k_hi = loss.sc_curvatures(m0, np.maximum(m0 - lo, hi - m0))
    if upper:
        return np.minimum(np.minimum(loss.max_curvature(lo, hi), loss.jj_curvature(m0)), k_hi)
    return np.maximum(loss.min_curvature(lo, hi), k_lo)


def surrogate_bound(terms, ranges: ScoreRanges, loss, offset, theta_x, eps, kind, side, B, r):
    """Certified bound of one end from the surrogate pair expanded at θ_x (see the module docstring).

    ``side="upper"``: an outer bound on MCR+ (γ < 0). ``side="lower"``: a lower bound on MCR-
    from γ < 0. Returns ``(bound, gamma)``; ``nan`` when no γ gives a valid bound.
    """
    D, y = terms.D, terms.y
    n = len(y)
    w = np.full(n, 1.0 / n)
    m0 = y * (D @ theta_x)
    M0 = terms.switched_scores(theta_x) * terms.ys[None, :]
    lo_s, hi_s = ranges.switched(terms)
    up = side == "upper"
    # primary (the loss with coefficient 1 in h) and secondary (coefficient γ)
    if up:
        prim = orig_quadratic(D, y, w, theta_x, loss, _curv(loss, ranges.lo_o, ranges.hi_o, m0, False), offset)
        sec = terms.switch_quadratic(theta_x, loss, _curv(loss, lo_s, hi_s, M0, True))
    else:
        prim = terms.switch_quadratic(theta_x, loss, _curv(loss, lo_s, hi_s, M0, False), offset)
        sec = orig_quadratic(D, y, w, theta_x, loss, _curv(loss, ranges.lo_o, ranges.hi_o, m0, True))
    seq = QCQPSequence(prim.Q, prim.c, B, r, A1=sec.Q, b1=sec.c)
    cache: dict = {}

    def value(s):  # γ = -exp(s)
        if s in cache:
            return cache[s]
        g = -math.exp(s)
        res = seq.solve(g, check=False)
        b = math.nan
        if res.status is SolverStatus.OPTIMAL:
            h = res.objective + prim.k + g * sec.k
            b = step_bound(MCRStep(side, g, h, res.x, math.nan, math.nan, True), eps, kind)
        v = (b if up else -b) if np.isfinite(b) else math.inf
        cache[s] = v
        return v

    s_hi = 0.0 if kind == "difference" else 12.0
    grid = np.linspace(-25.0, s_hi, 38)
    vals = [value(s) for s in grid]
    i = int(np.argmin(vals))
    if not np.isfinite(vals[i]):
        return math.nan, math.nan
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    phi = (math.sqrt(5) - 1) / 2
    c, d = b - phi * (b - a), a + phi * (b - a)
    for _ in range(40):
        if value(c) <= value(d):
            b = d
        else:
            a = c
        c, d = b - phi * (b - a), a + phi * (b - a)
    best = min(cache, key=cache.__getitem__)
    v = cache[best]
    return (v if up else -v), -math.exp(best)


def bound_loss(loss):
    """The loss the surrogates are built on: logistic itself; for the hinge a smoothing wide enough to carry
    curvature (its offset τ log 2 is paid in the minorant)."""
    return loss.smoothed(0.05)  # the logistic loss is its own smoothing


def surrogate_list(T, ranges, loss, theta_x, eps, kind, side, B, r):
    """``[bound]`` of :func:`surrogate_bound` on :func:`bound_loss` expanded at θ_x, or ``[]`` (none, or no θ_x)."""
    if theta_x is None:
        return []
    bl = bound_loss(loss)
    b, _ = surrogate_bound(T, ranges, bl, bl.offset, theta_x, eps, kind, side, B, r)
    return [b] if np.isfinite(b) else []
