"""The joint bound of :mod:`._joint` tightened by moving the loss constraint into the row functions (logistic sets).

For λ >= 0 every member has ``L(θ) <= ε``, so ``max_S D <= λε + max_S [D(θ) - λ L(θ)]``, and with the mean
log loss ``L = (1/n) Σ_i ℓ(y_i s_i)`` the bracket is again a sum of functions of one score each:
``g_i(s) = c_i f_i(s) - (λ/n) ℓ(y_i s)``. The loss term is concave and bends each row toward concavity, so the
least concave majorant of ``g_i`` on the row's range is much closer to ``g_i`` than the sum of the two
envelopes: at the right λ (near the loss constraint's multiplier at the maximiser) the relaxation all but closes.
Each majorant is the upper hull of ``g_i`` sampled at K points of ``[l_i, u_i]`` (a jump of a decision at its
threshold sampled on both sides), raised by ``sup|g_i''|·h²/8`` (the most a function with that curvature rises
above its chord over a step h), so it is a valid majorant between the samples too. Frank–Wolfe and its
certificate are those of :func:`._joint.frank_wolfe`; λ is searched in log scale, every λ a valid bound.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ._joint import exact_row_bounds, frank_wolfe, joint_max, row_functions
from ._step_bnb import bnb_max
from ._step_bound import step_max
from ._step_search import step_members

__all__ = ["joint_pair_bounds", "lagrange_max", "lagrange_ok"]

_K = 64  # samples per row range
_SIG2 = 0.0963  # > sup |σ''| = 1/(6√3)
_LOSS2 = 0.25  # sup ℓ'' of the logistic loss


_N_LAMBDA = 9  # multipliers tried per end: the bound is convex in λ but the steps of each are inexact (COMPAS group
# log loss, upper end: 0.0209 after 5, 0.0172 after 9)
_MAX_ROWS = 8000  # distinct rows (its cost grows with them: K samples each, one hull per multiplier tried)


def lagrange_ok(rs, spec) -> bool:
    """The set's loss is the mean logistic loss over the metric's rows (unweighted), so the tightening applies, and
    the rows are few enough (at most ``_MAX_ROWS`` distinct ones)."""
    from ..margin import margin_set

    ms = margin_set(rs)
    return (
        ms is not None
        and len(np.unique(spec.P, axis=0)) <= _MAX_ROWS
        and ms.loss.name == "logistic"
        and rs.sample_weight_ is None
        and ms.D.shape == spec.P.shape
        and bool(np.array_equal(ms.D, spec.P))
        and not np.any(spec.p0)
        and spec.ybin is not None
        and bool(np.array_equal(ms.y, 2.0 * spec.ybin - 1.0))
    )


class _HullRows:
    """``Σ_i majorant(g_i)(s_i)`` over distinct rows: sampled hulls where c_i != 0, the exact concave ``-κ m_i ℓ``
    elsewhere (``m_i`` duplicates of the row)."""

    def __init__(self, P, c, mult, ypm, kind, extra, lo, hi, kap):
        self.P, self.p0 = P, np.zeros(len(P))
        self.c, self.mult, self.ypm, self.kap = c, mult, ypm, kap
        self.h = c != 0
        H = self.h
        self.scale = float(np.abs(c).sum() + kap * mult.sum())
        lo, hi = lo[H], hi[H]
        t = np.linspace(0.0, 1.0, _K)[None, :]
        X = lo[:, None] + t * (hi - lo)[:, None]
        cH, yH, mH = c[H][:, None], ypm[H][:, None], mult[H][:, None]
        curv = kap * mH[:, 0] * _LOSS2
        if kind == "step":
            te = np.clip(extra, lo, hi)[:, None]
            X = np.sort(np.hstack([X, te, te]), axis=1)
            F = cH * (X > extra) - kap * mH * np.logaddexp(0.0, -yH * X)
            jump = (lo <= extra) & (extra < hi)
            at_t = (X == extra) & jump[:, None]
            F = np.where(at_t, np.maximum(cH, 0.0) - kap * mH * np.logaddexp(0.0, -yH * extra), F)
            step = np.max(np.diff(X, axis=1), axis=1)
        else:
            if kind == "sigmoid":
                F = cH * expit(X)
                curv = curv + np.abs(cH[:, 0]) * _SIG2
            else:  # the log loss of the row itself: f = ℓ(y s)
                F = cH * np.logaddexp(0.0, -yH * X)
                curv = curv + np.abs(cH[:, 0]) * _LOSS2
            F = F - kap * mH * np.logaddexp(0.0, -yH * X)
            step = (hi - lo) / (_K - 1)
        from ..margin import upper_hull

        x0, f0, sl = upper_hull(X, F)
        f0 = f0 + (curv * step**2 / 8.0 * (1 + 1e-12))[:, None]
        # each cell of the uniform grid of the range meets at most two pieces (a decision's threshold inside it):
        # the pieces active just inside its two ends; any piece lies above the hull, so a choice is always valid
        self.lo, self.cell = lo, (hi - lo) / (_K - 1)
        m, npc = x0.shape
        span = np.where(hi > lo, hi - lo, 1.0)
        rows = np.arange(m)[:, None]
        # pieces sorted by left end within each row; rows kept apart by an offset of 2 per row
        pkey = (rows * 2.0 + np.clip((x0 - lo[:, None]) / span[:, None], 0.0, 1.0)).ravel()
        ends = []
        for off in (1e-9, 1 - 1e-9) if kind == "step" else (0.5,):
            u = (np.arange(_K - 1)[None, :] + off) / (_K - 1)
            k = np.searchsorted(pkey, (rows * 2.0 + u).ravel(), side="right").reshape(m, _K - 1) - 1
            k = np.clip(k - rows * npc, 0, npc - 1)
            ends.append(tuple(np.take_along_axis(a, k, axis=1) for a in (x0, f0, sl)))
        self.ends = ends
        self.rows = np.arange(m)

    def _pieces(self, SH):
        with np.errstate(divide="ignore", invalid="ignore"):
            j = np.where(self.cell > 0, np.floor((SH - self.lo) / np.where(self.cell > 0, self.cell, 1.0)), 0.0)
        flat = np.clip(j, 0, _K - 2).astype(np.intp) + self.rows * (_K - 1)  # one flat gather per array
        out = []
        for x0, f0, sl in self.ends:
            a, b, c = np.take(x0, flat), np.take(f0, flat), np.take(sl, flat)
            out.append((b + c * (SH - a), c))
        return out

    def value(self, S):
        S = np.asarray(S)
        pc = self._pieces(S[..., self.h])
        v = (pc[0][0] if len(pc) == 1 else np.minimum(pc[0][0], pc[1][0])).sum(axis=-1)
        Z = ~self.h
        if Z.any():
            v = v - self.kap * (self.mult[Z] * np.logaddexp(0.0, -self.ypm[Z] * S[..., Z])).sum(axis=-1)
        return v

    def grad_s(self, s):
        g = np.empty(len(s))
        pc = self._pieces(s[self.h])
        g[self.h] = pc[0][1] if len(pc) == 1 else np.where(pc[0][0] <= pc[1][0], pc[0][1], pc[1][1])
        Z = ~self.h
        g[Z] = self.kap * self.mult[Z] * self.ypm[Z] * expit(-self.ypm[Z] * s[Z])
        return g


def lagrange_max(rs, spec, coef, lo_s, hi_s, eps, func, starts, best_theta, n_lambda=_N_LAMBDA):
    """Certified ``max_S Σ c_i f_i(s_i)`` by the λ-tightened relaxation: ``(bound, members)``."""
    kind, a, b, extra = row_functions(spec)
    c0 = float(coef @ b)
    ca = coef * a
    n = len(ca)
    ypm = 2.0 * spec.ybin - 1.0
    key = np.column_stack([spec.P, ypm])
    U, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    c = np.bincount(inv, weights=ca, minlength=len(U))
    mult = np.bincount(inv, minlength=len(U)).astype(float)
    P, yu = spec.P[first], ypm[first]
    lo, hi = lo_s[first], hi_s[first]
    if not np.all(np.isfinite(lo[c != 0]) & np.isfinite(hi[c != 0])):
        return np.inf, []
    # the multiplier's scale: the loss constraint's multiplier at the best member found (KKT, least squares)
    s = P @ best_theta
    if kind == "sigmoid":
        gd = (c * expit(s) * expit(-s)) @ P
    elif kind == "step":
        gd = (c * 0.25) @ P
    else:
        gd = (c * -yu * expit(-yu * s)) @ P
    gl = (mult * -yu * expit(-yu * s)) @ P / n
    lam0 = float(gd @ gl) / max(float(gl @ gl), 1e-300)
    if not np.isfinite(lam0) or lam0 <= 0:
        lam0 = float(np.linalg.norm(gd) / max(np.linalg.norm(gl), 1e-300))
    best, members, th = np.inf, [], np.atleast_2d(starts)
    tried: dict = {}

    def bound(log_lam):
        nonlocal best, th
        kap = float(np.exp(log_lam)) / n
        hr = _HullRows(P, c, mult, yu, kind, extra, lo, hi, kap)
        B, last, mem = frank_wolfe(rs, hr, None, th, eps, func, max_iter=25, rtol=2e-5, oracle_tol=1e-8)
        v = B + kap * n * eps + c0
        tried[log_lam] = v
        best = min(best, v)
        members.extend(mem)
        th = np.vstack([last[None, :], np.atleast_2d(starts)])
        return v

    x0, step = float(np.log(max(lam0, 1e-12))), float(np.log(4.0))
    for x in (x0 - step, x0, x0 + step):
        bound(x)
    while len(tried) < n_lambda:  # the bound is convex in λ: walk out of the bracket, else split its wider side
        xs = sorted(tried)
        k = int(np.argmin([tried[x] for x in xs]))
        if k == 0:
            bound(xs[0] - step)
        elif k == len(xs) - 1:
            bound(xs[-1] + step)
        else:
            left, right = xs[k] - xs[k - 1], xs[k + 1] - xs[k]
            bound(xs[k] - left / 2 if left >= right else xs[k] + right / 2)
    return best, members


def joint_pair_bounds(rs, spec, pairs, lo_s, hi_s, eps, func, starts):
    """Certified ``(lower, upper)`` of the difference ``m_g - m_h`` for each pair (g, h), and members found."""
    lo_s, hi_s = exact_row_bounds(rs, spec, lo_s, hi_s, eps, func)
    tighten = lagrange_ok(rs, spec)
    rf = row_functions(spec)
    budget = float(getattr(spec, "time_limit", 0.0) or 0.0)
    out: dict = {}
    members: list = []
    for g, h in pairs:
        if (h, g) in out:
            lo, hi = out[(h, g)]
            out[(g, h)] = (-hi, -lo)
            continue
        w = spec.W[g] - spec.W[h]
        ends = []
        for sign in (1.0, -1.0):
            b, m = joint_max(rs, spec, sign * w, 0.0, lo_s, hi_s, eps, func, starts, max_iter=8 if tighten else 60)
            if tighten:
                cand = np.vstack([np.atleast_2d(starts)] + ([np.array(m)] if m else []))
                G = spec.group_values(cand)
                th = cand[int(np.argmax(sign * (G[:, g] - G[:, h])))]
                nl = 5 if rf[0] == "step" else _N_LAMBDA  # decisions: the programme below carries the bound
                b2, m2 = lagrange_max(rs, spec, sign * w, lo_s, hi_s, eps, func, cand, th, nl)
                b, m = min(b, b2), m + m2
            if rf is not None and rf[0] == "step":  # decisions: the programme's dual bound (:mod:`._step_bound`)
                b3, m3 = step_max(rs, spec, sign * w, lo_s, hi_s, eps, func, rf[3])
                b, m = min(b, b3), m + m3
                cand = np.vstack([np.atleast_2d(starts)] + ([np.array(m)] if m else []))
                m = m + step_members(rs, spec, sign * w, lo_s, hi_s, eps, rf[3], cand)  # smoothed ascent
                if budget > 0:  # then branch and bound on boxes of θ (:mod:`._step_bnb`)
                    cand = np.vstack([np.atleast_2d(starts)] + ([np.array(m)] if m else []))
                    G = spec.group_values(cand)
                    dv = G[:, g] - G[:, h]
                    gap = 0.025 * float(dv.max() - dv.min())  # each end within 2.5 % of the attained width
                    b4, m4 = bnb_max(rs, spec, sign * w, lo_s, hi_s, eps, func, rf[3], cand, budget, gap)
                    b, m = min(b, b4), m + m4
            ends.append(b)
            members += m
        out[(g, h)] = (-ends[1], ends[0])
    return out, members
