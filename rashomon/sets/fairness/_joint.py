"""Joint certified bounds of row-wise disparities over a classifier's Rashomon set (coupled through θ).

A difference of group metrics built from row values is ``D(θ) = Σ_i c_i f_i(s_i) + c0`` with ``s = Pθ + p0``
the rows' scores and each ``f_i`` a function of one score: the probability ``σ``, the decision ``1[s > t]``
or a margin loss. Every member's score of row i lies in a certified range ``[l_i, u_i]``. On that range,
``f_i`` has a least concave majorant and a greatest convex minorant (its envelopes, closed form here), so

    max_S D  <=  max_S Φ(θ),   Φ(θ) = Σ_{c_i > 0} c_i f̂_i(s_i) + Σ_{c_i < 0} c_i f̌_i(s_i) + c0,

a concave function maximised over a convex set: one convex programme, where taking each row at its own
extreme (the separable bound) forgets that one θ moves every row. It is solved by Frank–Wolfe with the set's
certified linear-functional engine as the oracle, and certified by weak duality at any point s⁰: for a
supergradient g of Φ at s⁰ (concavity on the whole line: the envelopes are extended linearly beyond
``[l_i, u_i]``),

    max_S Φ  <=  Φ(s⁰) + max_S g'(Pθ + p0 - s⁰),

whose last term is a certified bound of the exact engine, so the result holds whatever the accuracy of the
iterations. The iterates are members of the set (convex combinations of members): their true disparities are
attained values. The minimum is the maximum of ``-D``. On logistic sets the bound is tightened further by moving
the loss constraint into the row functions (:mod:`._joint_lagrange`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["row_functions", "joint_max"]


def _dsig(s):
    e = expit(s)
    return e * (1.0 - e)


def _sigmoid_tangent(lo, u):
    """Abscissa c of the least concave majorant of σ on [l, u]: the chord from (l, σ(l)) touches σ at c."""
    c = np.where(lo >= 0, lo, u).astype(float)
    m = (lo < 0) & (u > 0)
    if m.any():
        lm, um = lo[m], u[m]

        def f(x):  # positive while the chord from lo lies below the tangent at x (x in (0, c)), then negative
            return _dsig(x) * (x - lm) - (expit(x) - expit(lm))

        a, b = np.zeros(m.sum()), um.copy()
        for _ in range(80):
            mid = 0.5 * (a + b)
            pos = f(mid) > 0
            a, b = np.where(pos, mid, a), np.where(pos, b, mid)
        c[m] = np.where(f(um) > 0, um, b)
    return c


class _Envelope:
    """A concave function on the line, given by pieces on [l, u] and linear extensions beyond."""

    def __init__(self, lo, u, value, deriv):
        self.lo, self.u, self._v, self._d = lo, u, value, deriv
        self.dl, self.du = deriv(lo, right=True), deriv(u, right=False)

    def value(self, s):
        lo, u = self.lo, self.u
        sc = np.clip(s, lo, u)
        return self._v(sc) + np.where(s < lo, self.dl * (s - lo), 0.0) + np.where(s > u, self.du * (s - u), 0.0)

    def deriv(self, s):
        lo, u = self.lo, self.u
        return np.where(s < lo, self.dl, np.where(s > u, self.du, self._d(np.clip(s, lo, u), right=True)))


def _sigmoid_upper(lo, u):
    c = _sigmoid_tangent(lo, u)
    c = np.where(u <= 0, u, c)
    wide = c > lo
    slope = np.where(wide, (expit(c) - expit(lo)) / np.where(wide, c - lo, 1.0), _dsig(lo))

    def value(s):
        return np.where(s <= c, expit(lo) + slope * (s - lo), expit(s))

    def deriv(s, right=True):
        lin = (s < c) | ((s == c) & (not right))
        return np.where(lin, slope, _dsig(s))

    return _Envelope(lo, u, value, deriv)


class _SigmoidLower:
    """Greatest convex minorant of σ on [l, u], negated (a concave function): ``-(1 - m(-s))``."""

    def __init__(self, lo, u):
        self.m = _sigmoid_upper(-u, -lo)

    def value(self, s):
        return self.m.value(-s) - 1.0

    def deriv(self, s):
        return -self.m.deriv(-s)


class _Linear:
    """A concave piecewise-linear function ``min_k (a_k s + b_k)`` (k = 1, 2), row-wise."""

    def __init__(self, a1, b1, a2, b2):
        self.a1, self.b1, self.a2, self.b2 = a1, b1, a2, b2

    def value(self, s):
        return np.minimum(self.a1 * s + self.b1, self.a2 * s + self.b2)

    def deriv(self, s):
        return np.where(self.a1 * s + self.b1 <= self.a2 * s + self.b2, self.a1, self.a2)


def _step_upper(lo, u, t):
    """Least concave majorant of ``1[s > t]`` on [l, u]: 0/1 off the threshold, else ``min(1, (s - l)/(t - l))``."""
    z = np.zeros_like(lo)
    above, below = lo > t, u <= t
    ramp = ~above & ~below & (lo < t)
    a = np.where(ramp, 1.0 / np.where(ramp, t - lo, 1.0), 0.0)
    b1 = np.where(ramp, -lo * a, np.where(below, 0.0, 1.0))
    return _Linear(a, b1, z, np.where(below, 0.0, 1.0))


def _step_lower_neg(lo, u, t):
    """``-`` the greatest convex minorant of ``1[s > t]`` on [l, u]: ``-max(0, (s - t)/(u - t))`` when it straddles."""
    z = np.zeros_like(lo)
    above, below = lo > t, u <= t
    ramp = ~above & ~below
    a = np.where(ramp, -1.0 / np.where(ramp, u - t, 1.0), 0.0)
    b1 = np.where(ramp, t * -a, np.where(above, -1.0, 0.0))
    return _Linear(a, b1, z, np.where(above, -1.0, 0.0))


class _Convex:
    """A convex row function f, negated (concave): its own greatest convex minorant."""

    def __init__(self, f, df):
        self.f, self.df = f, df

    def value(self, s):
        return -self.f(s)

    def deriv(self, s):
        return -self.df(s)


def _chord(f, lo, u, df_l):
    """The least concave majorant of a convex f on [l, u]: its chord (a line; slope f'(l) where l = u)."""
    fl, fu = f(lo), f(u)
    w = u > lo
    slope = np.where(w, (fu - fl) / np.where(w, u - lo, 1.0), df_l)
    return _Linear(slope, fl - slope * lo, slope, fl - slope * lo)


def row_functions(spec):
    """``(kind, a, b, extra)``: row value ``a_i f(s_i) + b_i`` with f of ``kind`` in {"sigmoid", "step",
    "log_loss", "hinge"}, or None when the metric has no such form here."""
    n = spec.P.shape[0]
    one, zero = np.ones(n), np.zeros(n)
    m = spec.metric
    if m in ("mean_prediction", "mean_residual") and spec.scale == "probability":
        if m == "mean_residual":
            return "sigmoid", -one, spec.ybin.astype(float), None
        return "sigmoid", one, zero, None
    if m in ("positive_rate", "true_positive_rate", "false_positive_rate"):
        t = spec.threshold if spec.scale == "score" else float(np.log(spec.threshold / (1 - spec.threshold)))
        return "step", one, zero, t
    if m == "group_loss" and spec.margin:
        return spec.loss if spec.loss in ("log_loss", "hinge") else None, one, zero, 2.0 * spec.ybin - 1.0
    return None


def _concave_parts(kind, extra, lo, u):
    """(majorant, negated minorant) of f on [l, u], both concave functions of s."""
    if kind == "sigmoid":
        return _sigmoid_upper(lo, u), _SigmoidLower(lo, u)
    if kind == "step":
        return _step_upper(lo, u, extra), _step_lower_neg(lo, u, extra)
    ypm = extra
    if kind == "log_loss":

        def f(s):
            return np.logaddexp(0.0, -ypm * s)

        def df(s):
            return -ypm * expit(-ypm * s)

    else:

        def f(s):
            return np.maximum(0.0, 1.0 - ypm * s)

        def df(s):
            return np.where(1.0 - ypm * s > 0, -ypm, 0.0)

    return _chord(f, lo, u, df(lo)), _Convex(f, df)


class JointBound:
    """``max_S Σ c_i f_i(s_i) + c0`` certified, for one sign pattern of coefficients (rows with c_i = 0 dropped)."""

    def __init__(self, spec, kind, extra, coef, lo_s, hi_s):
        keep = coef != 0
        self.P, self.p0 = spec.P[keep], spec.p0[keep]
        c = coef[keep]
        ex = extra[keep] if isinstance(extra, np.ndarray) else extra
        up, neg = _concave_parts(kind, ex, lo_s[keep], hi_s[keep])
        pos = c > 0
        self.c, self.pos, self.up, self.neg = c, pos, up, neg
        self.scale = float(np.abs(c).sum())

    def value(self, S):
        """Φ at score rows S (..., n_kept)."""
        return np.where(self.pos, self.c * self.up.value(S), -self.c * self.neg.value(S)).sum(axis=-1)

    def grad_s(self, s):
        return np.where(self.pos, self.c * self.up.deriv(s), -self.c * self.neg.deriv(s))


def joint_max(rs, spec, coef, c0, lo_s, hi_s, eps, func, starts, max_iter=60, rtol=1e-7):
    """Certified ``max_S Σ c_i f_i(s_i) + c0`` by the envelope relaxation (see the module notes).

    Returns ``(bound, members)``: the bound and the Frank–Wolfe iterates (members of the set, for attained
    values). ``starts``: members to start from (the one with the largest Φ is used).
    """

    rf = row_functions(spec)
    if rf is None:
        return np.inf, []
    kind, a, b, extra = rf
    c0 = float(c0 + coef @ b)
    jb = JointBound(spec, kind, extra, coef * a, lo_s, hi_s)
    if jb.scale == 0:
        return c0, []
    bound, _, members = frank_wolfe(rs, jb, None, starts, eps, func, max_iter, rtol)
    return bound + c0, members


def frank_wolfe(rs, jb, lin, starts, eps, func, max_iter=60, rtol=1e-7, oracle_tol=1e-10):
    """Certified ``max_S Φ(θ) + lin'θ`` (``lin`` None: no linear term): ``(bound, last iterate, iterates)``.

    Every iterate's tangent plane, maximised over the set by the certified engine, bounds the maximum (Φ is
    concave on the whole line); the least of them is returned, plus the rounding of sums of n row values."""
    from ._functionals import min_functionals

    P, p0 = jb.P, jb.p0
    lin = np.zeros(P.shape[1]) if lin is None else lin

    def f(T):
        return jb.value(T @ P.T + p0[None, :]) + T @ lin

    starts = np.atleast_2d(starts)
    th = starts[int(np.argmax(f(starts)))].copy()
    best, members = np.inf, []
    grid = np.linspace(0.0, 1.0, 33)
    for _ in range(max_iter):
        s = P @ th + p0
        v = float(jb.value(s)) + float(lin @ th)
        g = jb.grad_s(s) @ P + lin
        gn = float(np.abs(g).max())
        if gn == 0.0:  # Φ is flat at a point of the set's interior hull: its value there bounds it (concavity)
            best = min(best, v)
            break
        bnd, tj, _ = min_functionals(rs, -g / gn, np.zeros(1), eps, oracle_tol, func)
        best = min(best, v + gn * (-float(bnd[0]) - float(g / gn @ th)))
        if best - v <= rtol * jb.scale:
            break
        d = tj[0] - th
        lo, hi = 0.0, 1.0
        for _ in range(3):  # a grid, then two finer grids around its best (Φ is concave on the segment)
            ts = lo + (hi - lo) * grid
            k = int(np.argmax(f(th[None, :] + ts[:, None] * d[None, :])))
            step = (hi - lo) / 32
            lo, hi = max(0.0, ts[k] - step), min(1.0, ts[k] + step)
        th = th + ts[k] * d
        members.append(th.copy())
    scale = jb.scale + float(np.abs(lin) @ np.abs(th))
    return best + 64 * np.finfo(float).eps * scale * max(1, len(jb.c)) ** 0.5, th, members


_MAX_EXACT_ROWS = 6000


def exact_row_bounds(rs, spec, lo_s, hi_s, eps, func):
    """Per-row score bounds tightened to the exact certified range of every distinct weighted row (at most
    ``_MAX_EXACT_ROWS`` of them, the widest first): the envelopes are as tight as the ranges they are built on."""
    from ._functionals import min_functionals

    used = np.abs(spec.W).sum(axis=0) > 0
    A = np.column_stack([spec.P, spec.p0])
    U, inv = np.unique(A[used], axis=0, return_inverse=True)
    inv = inv.ravel()
    rows = np.flatnonzero(used)
    first = np.zeros(len(U), dtype=int)
    first[inv[::-1]] = rows[::-1]
    width = (hi_s - lo_s)[first]
    pick = np.argsort(-width, kind="stable")[:_MAX_EXACT_ROWS]
    a, _, _ = min_functionals(rs, U[pick, :-1], U[pick, -1], eps, 1e-10, func)
    b, _, _ = min_functionals(rs, -U[pick, :-1], -U[pick, -1], eps, 1e-10, func)
    ulo, uhi = np.full(len(U), -np.inf), np.full(len(U), np.inf)
    ulo[pick], uhi[pick] = a, -b
    lo, hi = lo_s.copy(), hi_s.copy()
    lo[rows] = np.maximum(lo[rows], ulo[inv])
    hi[rows] = np.minimum(hi[rows], uhi[inv])
    return np.minimum(lo, hi), np.maximum(lo, hi)  # two certified ends crossed by rounding: keep both
