"""Certified outer bound on MCR+ of one feature of a linear classifier: row envelopes and slabs of β_k.

Notation: S = {θ ∈ K : e_orig(θ) <= ε} (K: the ball with the intercept interval), one switched feature
with coordinate k (b = θ_k), row margins ``m_j = y_j d_j'θ``. The switched pair (v, j) has margin
``m_j + c_vj·b`` with ``c_vj = y_j (G_v - g_j)`` (G_v: the V distinct values, g_j: row j's value), so

    e_switch - Λ·e_orig = (1/n) Σ_j φ_j(m_j, b),   φ_j(m, b) = Σ_v w_vj ℓ(m + c_vj b) - Λ ℓ(m)

(``w_vj = n·W_vj``, Σ_v w_vj = 1).

**Bound on one slab** ``A = S ∩ {a <= b <= a'}``. (i) Every m_j stays in an interval ``[lo_j, hi_j]``
on A: the intersection of its ranges on ``E ∩ slab`` and ``ball ∩ slab`` (E ⊇ S: the ellipsoid of
:class:`._bounds.ScoreRanges`; the range of a linear function on an ellipsoid cut by a slab of
one coordinate is closed form, slice formula below). (ii) φ_j is convex in b (the switched losses
are), so on the slab ``φ_j(m, b) <= max(φ_j(m, a), φ_j(m, a'))``. (iii) For ``Λ' = Λ + τ₁`` (τ₁ >= 0)
let ψ_j be the least concave majorant, on a grid of [lo_j, hi_j], of ``f_j = max over the two ends of
φ'_j`` (φ with Λ'), raised by the interpolation error. Split φ'_j into the sum over all V values,
``Σ_v cnt_v ℓ(m + c_vj b)/(n-1) = F_{y_j}(m - y_j g_j b)/(n-1)`` with ``F_s(z) = Σ_v cnt_v ℓ(z + s G_v b)``
convex, minus the concave ``(Λ' + 1/(n-1))·ℓ(m)`` (the row's own value has c = 0). F_s is replaced by its
linear interpolation on one fine grid per label (>= it: it is convex; 2·V·fine loss evaluations per end,
where per-row-class grids cost V² and were 16 points for a continuous feature), after which
``-f_j'' <= (Λ' + 1/(n-1)) max ℓ''`` on each cell, so ``f_j <= lin. interpolation + (Λ' + 1/(n-1))
max_cell ℓ''·h²/8`` (logistic); for the hinge the kink of ℓ at 1 is a grid node and the correction is 0.
ψ_j is a minimum of affine functions, concave on R and >= f_j on [lo_j, hi_j]. (iv) For θ ∈ A and
τ₂ >= 0, using ``e_orig <= ε`` twice,

    e_switch - Λ e_orig = (1/n) Σ_j φ'_j(m_j, b) + τ₁ e_orig
                        <= (1/n) Σ_j ψ_j(m_j) + τ₁ ε + τ₂ (ε - ẽ_orig(θ)) - μ·pen(b) =: G(θ),

with ẽ_orig <= e_orig + σ log 2 handled by subtracting the offset (hinge: smoothed at σ; logistic
exact) and ``pen(b) = dist(b, [a, a'])²`` (zero on the slab). The soft-min ``-T log Σ e^{-l/T}`` of the
affine pieces is >= their minimum minus ``T log P`` (P pieces), so G with each ψ_j smoothed and ``T log P``
added is smooth, concave and >= the objective on A. Its maximum over K (⊇ A) is bounded by projected
Newton's Frank–Wolfe certificate (valid at any point). Hence ``max_A (e_switch - Λ e_orig) <= U_A``.

**From U to MR.** Difference (Λ = 1): ``MR <= U``. Ratio: on A, ``e_switch <= Λ e_orig + U_A``, so
``MR <= Λ + U_A/ε`` if U_A <= 0 and ``<= Λ + U_A/e_lo`` otherwise (e_lo: a certified lower bound on
e_orig over K). **Slabs.** The b-range of S is covered by slabs (its ends from E and the ball); the
slab with the largest bound is halved until the gap to the best member is below the target or the
budget is spent; the outer bound is the largest slab bound (every member of S lies in some slab). The
budget counts work (envelope evaluations and rows x pieces per evaluation of the slab programme), never
seconds: the same inputs give the same bound on any machine.

Floating point: pieces raised by 1e-12 relative, certified values lowered by ``1e-10·max(1, |U|)`` (>> rounding).
"""

from __future__ import annotations

import math

import numpy as np

from ...solvers import SmoothBallProgram

__all__ = ["slab_ranges", "upper_hull", "SecantBound", "secant_upper_bound", "SECANT_WORK"]

_PAD = 1e-12
_NEWTON = 40  # projected-Newton iterations of one slab programme (at most)
_NEWTON_EST = 12  # iterations assumed by the work estimate before any slab has been evaluated
_GRID_ROWS = 40000  # rows x envelope grid points: the grid shrinks (48 down to 16) for large n
SECANT_WORK = 2e7  # default work budget of one bound (units: SecantBound.slab_cost; ~15-30 ns each here)


def slab_ranges(C, centre, P, delta, k, a, b):
    """Range of each row c of C of ``c'θ`` on ``{(θ-centre)'P⁻¹(θ-centre) <= δ, a <= θ_k <= b}``.

    Slice formula: on the hyperplane θ_k = t the ellipsoid is the ellipsoid with centre
    ``centre + P e_k (t - centre_k)/P_kk``, shape ``P - P e_k e_k'P/P_kk`` and level ``δ - (t - centre_k)²/P_kk``.
    The maximum of ``c'θ`` over the ellipsoid is at θ*; if θ*_k leaves [a, b] the maximum over the cut
    ellipsoid is on the violated face (concavity of the slice maximum in t). Returns ``(lo, hi)``; rows
    where the cut is empty get ``lo > hi``.
    """
    s = C @ centre
    cPc = np.maximum(np.einsum("ij,jk,ik->i", C, P, C), 0.0)
    cPe = C @ P[:, k]
    Pkk = float(P[k, k])
    h = np.sqrt(delta * cPc)
    lo, hi = s - h, s + h
    q = np.maximum(cPc - cPe**2 / Pkk, 0.0)
    root = np.sqrt(np.maximum(cPc, 1e-300))
    for sign in (1.0, -1.0):
        tk = centre[k] + sign * math.sqrt(delta) * cPe / root  # θ_k of the extreme point
        for t, mask in ((a, tk < a), (b, tk > b)):
            if not (np.isfinite(t) and mask.any()):
                continue
            rem = delta - (t - centre[k]) ** 2 / Pkk
            val = s + cPe * (t - centre[k]) / Pkk + sign * np.sqrt(max(rem, 0.0) * q)
            if rem < 0:
                val = np.full_like(s, -np.inf if sign > 0 else np.inf)
            if sign > 0:
                hi = np.where(mask, val, hi)
            else:
                lo = np.where(mask, val, lo)
    return lo, hi


def upper_hull(X, F):
    """Least concave majorant of the points ``(X[j, i], F[j, i])`` (X sorted along each row), all rows at once.

    Returns ``(x0, f0, slope)`` of shape (n, K - 1): piece i of row j is ``f0 + slope·(m - x0)``; the
    minimum over i is the majorant on [X[j, 0], X[j, -1]] (and a concave extension beyond).
    """
    n, K = X.shape
    ar = np.arange(n)
    stack = np.zeros((n, K), dtype=int)
    top = np.zeros(n, dtype=int)
    for i in range(1, K):
        while True:
            i1, i2 = stack[ar, np.maximum(top - 1, 0)], stack[ar, top]
            x1, x2, xi = X[ar, i1], X[ar, i2], X[:, i]
            pop = (top >= 1) & ((F[ar, i2] - F[ar, i1]) * (xi - x1) <= (F[:, i] - F[ar, i1]) * (x2 - x1))
            if not pop.any():
                break
            top = top - pop
        top = top + 1
        stack[ar, top] = i
    cols = np.minimum(np.arange(K - 1)[None, :], np.maximum(top - 1, 0)[:, None])
    left = np.take_along_axis(stack, cols, axis=1)
    right = np.take_along_axis(stack, cols + 1, axis=1)
    right = np.where(top[:, None] >= 1, right, left)
    xl, xr = np.take_along_axis(X, left, axis=1), np.take_along_axis(X, right, axis=1)
    fl, fr = np.take_along_axis(F, left, axis=1), np.take_along_axis(F, right, axis=1)
    dx = xr - xl
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(dx > 0, (fr - fl) / np.where(dx > 0, dx, 1.0), 0.0)
    f0 = np.where(dx > 0, fl, np.maximum(fl, fr))
    return xl, f0, slope


class SecantBound:
    """Outer bound on MCR+ of one feature by row envelopes on slabs of b = θ_k (see the module docstring).

    Parameters
    ----------
    ms : MarginSet
    T : MarginTerms of the feature (one coordinate).
    ranges : ScoreRanges (its ellipsoid and the row ranges on S).
    loss : MarginLoss (exact for the hinge: ``loss.name`` decides).
    eps, e_lo : float
        ε and a certified lower bound on e_orig over K.
    lo, hi : intercept interval.
    """

    def __init__(self, ms, T, ranges, loss, eps, e_lo, lo, hi, *, grid=48):
        self.ms, self.T, self.R, self.eps, self.e_lo = ms, T, ranges, float(eps), float(e_lo)
        self.hinge = loss.name == "hinge"
        self.lo, self.hi = lo, hi
        self.grid = int(min(grid, max(16, _GRID_ROWS // max(len(ms.y), 1))))
        D, y = ms.D, ms.y
        self.n, self.d = D.shape
        self.k = int(T.gi[0])
        self.C = y[:, None] * D
        self.lossv = loss.exact  # the hinge itself, or the logistic loss
        self.sm = loss.smoothed(1e-3) if self.hinge else loss  # for ẽ_orig in G
        # row j's switched part is F_{y_j}(m - y_j g_j b), F_s(z) = Σ_v cnt_v ℓ(z + s G_v b) (see _switch_part)
        self.y, self.g, self.G = y, D[:, self.k], T.G[:, 0]
        V = len(self.G)
        self.cnt = np.bincount(np.searchsorted(self.G, self.g), minlength=V).astype(float)
        # bounded work per envelope: the fine grid of F_s shrinks with the number of values (2·V·fine <= 2e6)
        self.fine = int(min(1024, max(16, 1e6 // max(V, 1))))
        self.too_big = V * 16 > 2e7
        # ball: penalised coordinates, P = B_P^{-1}, centre 0, level r; the intercept adds an interval
        o = ms.o
        self.o = o
        self.Pball = ranges.Pball
        self.ell = ranges.ellipsoid
        self.work = 0.0  # work done so far (deterministic units, see slab_cost)
        self._seen = 0.0  # the largest work of one slab programme so far

    # ------------------------------------------------------------------ work accounting
    def _call_cost(self, P, order):
        """Work of one evaluation of the slab programme: n rows x (P pieces + the e_orig term), plus the
        Hessian's n·d² for order 2."""
        return self.n * (P + 2.0) + (self.n * self.d * self.d if order == 2 else 0.0)

    def slab_cost(self):
        """A deterministic estimate of the work of one :meth:`slab_value`: the most any one has taken so far,
        else the envelope (two switched parts on the per-label grids of F_s, n x grid rows) and ``_NEWTON_EST``
        projected-Newton iterations of one Hessian and one line-search evaluation each."""
        if self._seen:
            return self._seen
        env = 4.0 * len(self.G) * self.fine + 4.0 * self.n * self.grid
        return env + _NEWTON_EST * (self._call_cost(self.grid + 1, 2) + self._call_cost(self.grid + 1, 0))

    # ------------------------------------------------------------------ ranges on a slab
    def b_range(self):
        e = np.zeros((1, self.d))
        e[0, self.k] = 1.0
        lo, hi = self._ranges(e, -math.inf, math.inf)
        return float(lo[0]), float(hi[0])

    def _ranges(self, C, a, b, ilo=None, ihi=None):
        o, k = self.o, self.k
        ilo = self.lo if ilo is None else ilo
        ihi = self.hi if ihi is None else ihi
        Cp = C.copy()
        Cp[:, :o] = 0.0
        lo, hi = slab_ranges(Cp, np.zeros(self.d), self.Pball, self.ms.r, k, a, b)
        if o:
            ci = C[:, 0]
            lo = lo + np.minimum(ci * ilo[0], ci * ihi[0])
            hi = hi + np.maximum(ci * ilo[0], ci * ihi[0])
        if self.ell is not None:
            c0, P, delta = self.ell
            l2, h2 = slab_ranges(C, c0, P, delta, k, a, b)
            lo, hi = np.maximum(lo, l2), np.minimum(hi, h2)
        return lo, hi

    # ------------------------------------------------------------------ envelope pieces on a slab
    def _switch_part(self, M, b):
        """Upper bound at M (n × K) on ``Σ_v cnt_v ℓ(m + y_j (G_v - g_j) b)/(n - 1)``, every value of the group
        included (the row's own value's term ``ℓ(m)/(n - 1)`` is subtracted exactly in :meth:`pieces`). For the
        rows of label s it is ``F_s(m - s g_j b)/(n - 1)`` with ``F_s(z) = Σ_v cnt_v ℓ(z + s G_v b)``, convex in z,
        replaced by its linear interpolation on one fine grid per label (>= F_s): each row's bound is convex and
        piecewise linear in m."""
        out = np.empty_like(M)
        for s in (1.0, -1.0):
            rows = self.y == s
            if not rows.any():
                continue
            Z = M[rows] - (s * b) * self.g[rows, None]
            z0, z1 = float(Z.min()), float(Z.max())
            zf = np.linspace(z0, z1, self.fine) if z1 > z0 else np.array([z0, z0 + 1.0])
            vals = self.cnt @ self.lossv(zf[None, :] + (s * b) * self.G[:, None])
            self.work += len(self.G) * len(zf) + 2.0 * Z.size
            out[rows] = np.interp(Z, zf, vals) / (self.n - 1.0)
        return out

    def pieces(self, a, b, lam, ilo=None, ihi=None):
        """Affine pieces ``(x0, f0, slope)`` of ψ_j on the cell (b in [a, b], intercept in [ilo, ihi]) for
        Λ' = lam, or None if the cell misses S."""
        mlo, mhi = self._ranges(self.C, a, b, ilo, ihi)
        mlo, mhi = np.maximum(mlo, self.R.lo_o), np.minimum(mhi, self.R.hi_o)
        if np.any(~(mlo <= mhi)):
            return None
        K = self.grid
        w = mhi - mlo
        own_w = lam + 1.0 / (self.n - 1.0)  # Λ' and the own value's switched term (concave part of φ_j)
        if self.hinge:
            t = np.linspace(0.0, 1.0, K - 1)
            X = mlo[:, None] + w[:, None] * t[None, :]
            kink = np.clip(1.0, mlo, mhi)
            X = np.sort(np.concatenate([X, kink[:, None]], axis=1), axis=1)
            corr = np.zeros((self.n, K))
        else:
            t = np.linspace(0.0, 1.0, K)
            X = mlo[:, None] + w[:, None] * t[None, :]
            h = w / (K - 1)
            # max of ℓ'' = σ(m)σ(-m) on each cell: at the point of the cell nearest 0
            near = np.clip(0.0, X[:, :-1], X[:, 1:])
            en = np.exp(-np.abs(near))
            cell = own_w * en / (1.0 + en) ** 2 * (h[:, None] ** 2) / 8.0
            corr = np.zeros((self.n, K))
            corr[:, :-1] = cell
            corr[:, 1:] = np.maximum(corr[:, 1:], cell)
        own = own_w * self.lossv(X)
        F = np.maximum(self._switch_part(X, a), self._switch_part(X, b)) - own + corr
        F = F + _PAD * (1.0 + np.abs(F))
        return upper_hull(X, F)

    # ------------------------------------------------------------------ the smooth concave programme
    def slab_value(self, a, b, lam, tau1, tau2, x0, ilo=None, ihi=None, temp=(1e-3,)):
        """Certified ``U_A`` (see the module docstring) on the cell and the maximiser, or ``(-inf, None)``."""
        ilo = self.lo if ilo is None else ilo
        ihi = self.hi if ihi is None else ihi
        w0 = self.work
        try:
            return self._slab_value(a, b, lam, tau1, tau2, x0, ilo, ihi, temp)
        finally:
            self._seen = max(self._seen, self.work - w0)

    def _slab_value(self, a, b, lam, tau1, tau2, x0, ilo, ihi, temp):
        pc = self.pieces(a, b, lam + tau1, ilo, ihi)
        if pc is None:
            return -math.inf, None
        x0p, f0, sl = pc
        n, C, eps = self.n, self.C, self.eps
        Tn = self.ms.orig
        sm = self.sm
        off = sm.offset if self.hinge else 0.0
        width = max(b - a, 1e-12)
        mu = 10.0 / width**2
        k = self.k
        P = x0p.shape[1]

        def make(temp):
            def f(theta, order):
                self.work += self._call_cost(P, order)
                m = C @ theta
                L = f0 + sl * (m[:, None] - x0p)
                lmin = L.min(axis=1)
                z = np.exp(-(L - lmin[:, None]) / temp)
                Z = z.sum(axis=1)
                psi = lmin - temp * np.log(Z)
                val = float(psi.mean()) + temp * math.log(P) + tau1 * eps + tau2 * (eps + off)
                bk = theta[k]
                viol = max(bk - b, 0.0) - max(a - bk, 0.0)
                val -= mu * viol * viol
                parts = Tn.orig_parts(theta, sm, order)
                val -= tau2 * parts[0]
                if order == 0:
                    return (-val,)
                p = z / Z[:, None]
                d1 = (p * sl).sum(axis=1)
                grad = C.T @ d1 / n - tau2 * parts[1]
                grad[k] -= 2 * mu * viol
                if order == 1:
                    return -val, -grad
                d2 = -((p * sl * sl).sum(axis=1) - d1 * d1) / temp
                H = (C.T * (d2 / n)) @ C - tau2 * parts[2]
                H[k, k] -= 2 * mu * (viol != 0.0)
                return -val, -grad, -H

            return f

        x = x0
        for t in temp:
            prog = SmoothBallProgram(self.ms.B, self.ms.r, ilo, ihi, tol=1e-9, max_iter=_NEWTON)
            res = prog.minimize(make(t), x)
            x = res.x
        ub = -res.info["lower_bound"]
        ub += 1e-10 * max(1.0, abs(ub))
        return ub, x

    # ------------------------------------------------------------------ branch and bound over slabs
    def bound(
        self,
        kind,
        inner,
        budget=SECANT_WORK,
        rel_tol=0.01,
        max_slabs=64,
        x_start=None,
        n0=None,
        b_limits=(-math.inf, math.inf),
    ):
        """Certified outer bound on MCR+ (kind "ratio" or "difference") given the best member value ``inner``.

        ``budget`` is in work units (:meth:`slab_cost`), never seconds: a slab programme starts only when the
        work done plus its estimate fits, so the result is a deterministic function of the inputs. The b-range
        (K's, cut to ``b_limits``: a certified interval containing b on S) starts as ``n0`` slabs (default: 4,
        2 or 1, the most the budget covers); the slabs left when the estimate outgrows the budget are one
        slab (every member must lie in a bounded slab), so the budget may be passed by one slab programme."""
        if self.too_big:
            return math.nan
        b_lo, b_hi = self.b_range()
        b_lo, b_hi = max(b_lo, b_limits[0]), min(b_hi, b_limits[1])
        if not b_lo <= b_hi:
            return math.nan
        lam = inner if kind == "ratio" else 1.0
        if kind == "ratio" and not (self.e_lo > 0):
            return math.nan
        x_start = self.ms.theta_min if x_start is None else x_start
        cost = self.slab_cost()

        def fits(k=1):
            return self.work + k * cost <= budget

        def to_mr(u):
            if kind == "difference":
                return u
            return lam + (u / self.eps if u <= 0 else u / self.e_lo)

        def evaluate(cell, x0, reserve=0):
            """The slab's bound: the first multiplier pair always, the others while the budget keeps ``reserve``
            slab programmes for the slabs still to be evaluated."""
            a, b, ilo, ihi = cell
            best, xb = math.inf, None
            for i, (tau1, tau2) in enumerate(((0.5, 0.25), (0.0, 0.25), (0.5, 0.0))):
                if i and not fits(1 + reserve):
                    break
                u, x = self.slab_value(a, b, lam, tau1, tau2, x0, ilo, ihi)
                if u < best:
                    best, xb = u, x
                if u == -math.inf or to_mr(u) <= inner:
                    break
            return to_mr(best), (xb if xb is not None else x0)

        if n0 is None:
            n0 = next((k for k in (4, 2, 1) if fits(k)), 1)
        edges = np.linspace(b_lo, b_hi, n0 + 1)
        slabs = []
        for i in range(n0):
            last = edges[i + 1]
            if i and not fits(n0 - i):  # the estimate has grown with the slabs seen: one slab covers the rest
                last = edges[-1]
            cell = (edges[i], last, self.lo, self.hi)
            v, x = evaluate(cell, x_start, reserve=0 if last == edges[-1] else n0 - i - 1)
            slabs.append((v, cell, x))
            if last == edges[-1]:
                break
        while len(slabs) < max_slabs and fits(2):
            slabs.sort(key=lambda s: s[0])
            v, (a, b, ilo, ihi), x = slabs[-1]
            if not np.isfinite(v) or v - inner <= rel_tol * max(abs(v), 1e-300):
                break
            slabs.pop()
            mid = 0.5 * (a + b)
            kids = ((a, mid, ilo, ihi), (mid, b, ilo, ihi))
            for i, cell in enumerate(kids):
                vv, xx = evaluate(cell, x, reserve=1 - i)
                slabs.append((min(vv, v), cell, xx))
        return max(s[0] for s in slabs)


def secant_upper_bound(
    ms, T, ranges, loss, eps, lo, hi, kind, inner, budget=SECANT_WORK, b_limits=(-math.inf, math.inf)
):
    """The outer bound of :class:`SecantBound` for one switched coordinate (``nan`` when it gives none);
    ``b_limits``: a certified interval containing the switched coefficient on S."""
    if len(T.gi) != 1 or not np.isfinite(inner):
        return math.nan
    try:
        with np.errstate(all="ignore"):
            v = SecantBound(ms, T, ranges, loss, eps, ms.e_min_lower, lo, hi).bound(
                kind, inner, budget=budget, b_limits=b_limits
            )
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        return math.nan
    return v if np.isfinite(v) else math.nan
