"""Certified outer bound on MCR+ of one feature of a linear classifier: row envelopes and slabs of β_k.

Notation: S = {θ ∈ K : e_orig(θ) <= ε} (K: the ball with the intercept interval), one switched feature
with coordinate k (b = θ_k), row margins ``m_j = y_j d_j'θ``. The switched pair (v, j) has margin
``m_j + c_vj·b`` with ``c_vj = y_j (G_v - g_j)`` (G_v: the V distinct values, g_j: row j's value), so

    e_switch - Λ·e_orig = (1/n) Σ_j φ_j(m_j, b),   φ_j(m, b) = Σ_v w_vj ℓ(m + c_vj b) - Λ ℓ(m)

(``w_vj = n·W_vj``, Σ_v w_vj = 1).

**Bound on one slab** ``A = S ∩ {a <= b <= a'}``. (i) Every m_j stays in an interval ``[lo_j, hi_j]``
on A: the intersection of its ranges on ``E ∩ slab`` and ``ball ∩ slab`` (E ⊇ S: the ellipsoid of
:class:`._bounds.ScoreRanges`; the range of a linear function on an ellipsoid cut by a slab of
one coordinate is closed form: :func:`._slabs.slab_ranges`). (ii) φ_j is convex in b (the switched losses
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

**Tighter forms used by the search** (:mod:`._bnb`). Cells may also cut the intercept, ``A = S ∩ {a <= b <= a',
ilo <= μ <= ihi}``: the row ranges of (i) are then also cut by E's slab of μ (same closed form; the
intersection of valid ranges is valid) and the programme runs over K with μ in [ilo, ihi] (⊇ A).
(ii') For fixed margins, ``Σ_j φ_j(m_j, b)`` is convex in b, so on A it is at most its larger value at the two
ends: ``U_A = max(U_A^a, U_A^a')`` where ``U_A^e`` is the programme (iii)-(iv) built from the end e alone
(the row-wise max of (ii) is never smaller). (iii') Logistic loss: the rows' variables are the rest margins
``r_j = m_j - y_j g_j b`` (the rows of C with column k zeroed; their ranges are closed form as in (i)). The
switched sum is ``F_{y_j}(r_j)/(n-1)`` (F_s at b, convex in b for fixed r), and the own term is bounded by
its tangent in b at the cell's middle b0 (ℓ convex): ``ℓ(r + y g b) >= ℓ(u) + ℓ'(u) y g (b - b0)``,
``u = r + y g b0``, so ``φ'_j <= F_{y_j}(r_j)/(n-1) - (Λ' + 1/(n-1))(ℓ(u) + δ ℓ'(u))`` with
``δ = y_j g_j (b - b0)``: convex in b (a convex sum minus an affine function), so (ii') applies with each
end's δ. In r the subtracted part has second derivative ``(Λ' + 1/(n-1))(ℓ''(u) + δ ℓ'''(u))``, at most
``(Λ' + 1/(n-1)) ℓ''(u)(1 + |δ|)`` since ``|ℓ'''| <= ℓ''``; this gives the interpolation correction on each
grid cell as in (iii).

**From U to MR.** Difference (Λ = 1): ``MR <= U``. Ratio: on A, ``e_switch <= Λ e_orig + U_A``, so
``MR <= Λ + U_A/ε`` if U_A <= 0 and ``<= Λ + U_A/e_lo`` otherwise (e_lo: a certified lower bound on
e_orig over K); this holds for every Λ >= 0, so a cell may be bounded at several Λ and keep the least.
**Cells.** The b-range of S is covered by cells; the search (:mod:`._bnb`) halves the cell with the largest
bound; the outer bound is the largest cell bound (every member of S lies in some cell). Its budget counts
work (envelope evaluations and rows x pieces per evaluation of the slab programme), never seconds (unless a
time limit is given): the same inputs give the same bound on any machine.

Floating point: pieces raised by 1e-12 relative, certified values lowered by ``1e-10·max(1, |U|)`` (>> rounding).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...solvers import SmoothBallProgram
from ._secant_rows import RowEnvelopes
from ._slabs import ROW_BLOCK, SignedRows, slab_ranges, soft_min, upper_hull

__all__ = ["slab_ranges", "upper_hull", "SecantBound", "secant_upper_bound", "SECANT_WORK"]

_PAD = 1e-12
_NEWTON = 40  # projected-Newton iterations of one slab programme (at most)
_NEWTON_EST = 12  # iterations assumed by the work estimate before any slab has been evaluated
# Work units are calibrated to ~25 ns of CPU each here (the envelopes measured 23-31 ns per unit on
# Pima, breast cancer, COMPAS and red wine; one evaluation of the slab programme fitted within +-30 % on 11 sets,
# n = 70 to 6,172, d = 3 to 31, by _CALL + _ROW·n·(pieces + 2) + _GRAM·n·d²). The Gram product of the Hessian runs
# in BLAS, ~60x cheaper per element than the soft-min's exponentials; it used to be charged at the same rate, which
# gave the sets with many columns or rows 3-13x fewer cells per second (569 x 30: 2-4 cells in 0.4 s).
_CALL = 4e3  # fixed work of one evaluation of the slab programme (interpreter and solver overhead: ~0.1 ms)
_ROW = 0.42  # work per row and piece of one evaluation
_GRAM = 0.007  # work per element of the n·d² Gram product of one Hessian
_HULL = 4e4  # fixed work of one envelope (its pieces: ranges, grids and hull), besides 8 units per row and point
_GRID_ROWS = 40000  # rows x envelope grid points: the grid shrinks (down to 16) for large n
# envelope grid points per row: the logistic's 32 (48 before: on Pima's 8 features the same bounds to 0.07 points of
# gap at about 8% less CPU; the interpolation error, h²/8, stays far below the relaxation's), the hinge's 48
GRID, HINGE_GRID = 32, 48
SECANT_WORK = 1e8  # default work budget of one bound (units: SecantBound.slab_cost; ~25 ns each here: ~2.5 s)
SECANT_SLABS = 1024  # default largest number of slabs of one bound
# points of the fine grid of the per-label functions F_s (at most; fewer for many values): 512 (1024 before: on Pima's
# 8 logistic features the median upper gap 2.01% -> 1.99%, the envelopes' work halved and the budget splits more cells);
# the hinge's 1024
FINE, HINGE_FINE = 512, 1024
# the hinge's default: 1.6x the logistic's (its bounds need more cells; ~4 s here)
HINGE_WORK = 1.6 * SECANT_WORK


_LEAN_ROWS = 1 << 17  # rows above which the envelopes and the programme run in row blocks (no n x d or n x grid copy)
_LEAN_CACHE = 1  # pieces kept there (n x grid x 3 floats: 360 MB at 10^6 rows; the last one only)


class SecantBound(RowEnvelopes):
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

    def __init__(self, ms, T, ranges, loss, eps, e_lo, lo, hi, *, grid=None):
        self.ms, self.T, self.R, self.eps, self.e_lo = ms, T, ranges, float(eps), float(e_lo)
        self.hinge = loss.name == "hinge"
        self.lo, self.hi = lo, hi
        grid = (HINGE_GRID if self.hinge else GRID) if grid is None else grid
        self.grid = int(min(grid, max(16, _GRID_ROWS // max(len(ms.y), 1))))
        D, y = ms.D, ms.y
        self.n, self.d = D.shape
        self.k = int(T.gi[0])
        # logistic: the pieces are functions of the rest margins r_j = m_j - y_j g_j b (see _rest_pieces)
        self.rest = not self.hinge
        self.lean = self.n > _LEAN_ROWS  # row blocks, the design's signed rows as an operator (bounded memory)
        self.C: Any
        self.Cr: Any
        if self.lean:
            self.C, self.Cr = SignedRows(D, y), SignedRows(D, y, zero=self.k)
        else:
            self.C = y[:, None] * D
            self.Cr = self.C.copy()
            self.Cr[:, self.k] = 0.0
        self.lossv = loss.exact  # the hinge itself, or the logistic loss
        self.sm = loss.smoothed(1e-3) if self.hinge else loss  # for ẽ_orig in G
        # row j's switched part is F_{y_j}(m - y_j g_j b), F_s(z) = Σ_v cnt_v ℓ(z + s G_v b) (see _switch_part)
        self.y, self.g, self.G = y, D[:, self.k], T.G[:, 0]
        V = len(self.G)
        self.cnt = np.bincount(np.searchsorted(self.G, self.g), minlength=V).astype(float)
        # bounded work per envelope: the fine grid of F_s shrinks with the number of values (2·V·fine <= 2e6)
        self.fine = int(min(HINGE_FINE if self.hinge else FINE, max(16, 1e6 // max(V, 1))))
        self.too_big = V * 16 > 2e7
        # ball: penalised coordinates, P = B_P^{-1}, centre 0, level r; the intercept adds an interval
        o = ms.o
        self.o = o
        self.Pball = ranges.Pball
        self.ell = ranges.ellipsoid
        # hinge: the root duals of the margins' linear programmes, re-used on every cell (._lp_ranges)
        self.lp = getattr(ranges, "lp", None) if self.hinge else None  # set by ._lp_ranges.tighten_ranges
        self._lpcache: dict = {}
        self.work = 0.0  # work done so far (deterministic units, see slab_cost)
        self._fcache: dict = {}  # (b, label) -> the fine grid of F_s and its values (see _switch_part)
        self._pcache: dict = {}  # (cell, Λ') -> the pieces of the last cells (see pieces)
        self._seen = 0.0  # the largest work of one slab programme so far

    # ------------------------------------------------------------------ work accounting
    def _call_cost(self, P, order):
        """Work of one evaluation of the slab programme: n rows x (P pieces + the e_orig term), plus the
        Hessian's n·d² Gram product for order 2, plus a fixed ``_CALL`` (the interpreter's and the solver's overhead
        per call, which dominates for small n); weights measured (see ``_ROW``, ``_GRAM``)."""
        return _CALL + _ROW * self.n * (P + 2.0) + (_GRAM * self.n * self.d * self.d if order == 2 else 0.0)

    def slab_cost(self):
        """A deterministic estimate of the work of one :meth:`slab_value`: the most any one has taken so far,
        else the envelope (two switched parts on the per-label grids of F_s, n x grid rows) and ``_NEWTON_EST``
        projected-Newton iterations of one Hessian and one line-search evaluation each."""
        if self._seen:
            return self._seen
        env = 4.0 * len(self.G) * self.fine + 12.0 * self.n * self.grid + 2 * _HULL
        return env + _NEWTON_EST * (self._call_cost(self.grid + 1, 2) + self._call_cost(self.grid + 1, 0))

    # ------------------------------------------------------------------ ranges on a slab
    def b_range(self):
        e = np.zeros((1, self.d))
        e[0, self.k] = 1.0
        lo, hi = self._ranges(e, -math.inf, math.inf)
        return float(lo[0]), float(hi[0])

    def _ranges(self, C, a, b, ilo=None, ihi=None):
        ilo = self.lo if ilo is None else ilo
        ihi = self.hi if ihi is None else ihi
        if isinstance(C, SignedRows):  # row blocks (the rows' ranges are independent)
            parts = [
                self._row_ranges(C.block(slice(r, r + ROW_BLOCK)), a, b, ilo, ihi) for r in range(0, self.n, ROW_BLOCK)
            ]
            lo, hi = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        else:
            lo, hi = self._row_ranges(C, a, b, ilo, ihi)
        return self._lp_cut(C, a, b, ilo, ihi, lo, hi)

    def _row_ranges(self, C, a, b, ilo, ihi):
        o, k = self.o, self.k
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
            if o and (ilo[0] > self.lo[0] or ihi[0] < self.hi[0]):  # a cut intercept: E cut by its slab too
                l2, h2 = slab_ranges(C, c0, P, delta, 0, ilo[0], ihi[0])
                lo, hi = np.maximum(lo, l2), np.minimum(hi, h2)
        return lo, hi

    def _lp_cut(self, C, a, b, ilo, ihi, lo, hi):
        """The hinge's linear-programme ranges of the margins on the cell, intersected (kept for the last cells)."""
        k = self.k
        if self.lp is not None and C is self.C:
            key = (a, b, tuple(ilo), tuple(ihi))
            if key not in self._lpcache:  # a cell's multiplier pairs share its ranges
                if len(self._lpcache) >= 8:
                    self._lpcache.pop(next(iter(self._lpcache)))
                l2, h2, w = self.lp.cell(a, b, k, ilo, ihi)
                self.work += w
                self._lpcache[key] = (l2, h2)
            l2, h2 = self._lpcache[key]
            lo, hi = np.maximum(lo, l2), np.minimum(hi, h2)
        return lo, hi

    # ------------------------------------------------------------------ envelope pieces on a slab
    def pieces(self, a, b, lam, ilo=None, ihi=None, end=None):
        """Affine pieces ``(x0, f0, slope)`` of ψ_j on the cell (b in [a, b], intercept in [ilo, ihi]) for
        Λ' = lam, or None if the cell misses S (the pieces of the last cells are kept: a slab's multiplier pairs
        share them)."""
        key = (a, b, None if ilo is None else tuple(ilo), None if ihi is None else tuple(ihi), lam, end)
        if key not in self._pcache:
            if len(self._pcache) >= (_LEAN_CACHE if self.lean else 4):
                self._pcache.pop(next(iter(self._pcache)))
            self._pcache[key] = self._pieces(a, b, lam, ilo, ihi, end)
        return self._pcache[key]

    def _pieces(self, a, b, lam, ilo, ihi, end):
        self.work += _HULL + 8.0 * self.n * self.grid
        mlo, mhi = self._ranges(self.C, a, b, ilo, ihi)
        mlo, mhi = np.maximum(mlo, self.R.lo_o), np.minimum(mhi, self.R.hi_o)
        if np.any(~(mlo <= mhi)):
            return None
        K = self.grid
        own_w = lam + 1.0 / (self.n - 1.0)  # Λ' and the own value's switched term (concave part of φ_j)
        if self.rest:
            return self._rest_pieces(a, b, own_w, ilo, ihi, end)
        w = mhi - mlo
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
        ends = (a, b) if end is None else (end,)
        F = np.max([self._switch_part(X, e) for e in ends], axis=0) - own + corr
        F = F + _PAD * (1.0 + np.abs(F))
        return upper_hull(X, F)

    # ------------------------------------------------------------------ the smooth concave programme
    def slab_value(self, a, b, lam, tau1, tau2, x0, ilo=None, ihi=None, temp=(1e-3,), end=None):
        """Certified ``U_A`` (see the module docstring) on the cell and the maximiser, or ``(-inf, None)``."""
        ilo = self.lo if ilo is None else ilo
        ihi = self.hi if ihi is None else ihi
        w0 = self.work
        try:
            return self._slab_value(a, b, lam, tau1, tau2, x0, ilo, ihi, temp, end)
        finally:
            self._seen = max(self._seen, self.work - w0)

    def _slab_value(self, a, b, lam, tau1, tau2, x0, ilo, ihi, temp, end):
        pc = self.pieces(a, b, lam + tau1, ilo, ihi, end)
        if pc is None:
            return -math.inf, None
        x0p, f0, sl = pc
        n, C, eps = self.n, (self.Cr if self.rest else self.C), self.eps
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
                psi: Any
                d1: Any
                d2: Any
                if self.lean:  # row blocks: no n x pieces temporaries
                    out = [soft_min(pc, m, temp, order, slice(r, r + ROW_BLOCK)) for r in range(0, n, ROW_BLOCK)]
                    psi, d1, d2 = (None if o[0] is None else np.concatenate(o) for o in zip(*out))
                else:
                    psi, d1, d2 = soft_min(pc, m, temp, order)
                val = float(psi.mean()) + temp * math.log(P) + tau1 * eps + tau2 * (eps + off)
                bk = theta[k]
                viol = max(bk - b, 0.0) - max(a - bk, 0.0)
                val -= mu * viol * viol
                parts = Tn.orig_parts(theta, sm, order)
                val -= tau2 * parts[0]
                if order == 0:
                    return (-val,)
                grad = (C.rmatvec(d1) if self.lean else C.T @ d1) / n - tau2 * parts[1]
                grad[k] -= 2 * mu * viol
                if order == 1:
                    return -val, -grad
                H = (C.gram(d2 / n) if self.lean else (C.T * (d2 / n)) @ C) - tau2 * parts[2]
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
    def bound(self, kind, inner, budget=SECANT_WORK, gap_tol=0.01, max_slabs=64, **kw):
        """Certified outer bound on MCR+ (kind "ratio" or "difference") given the best member value ``inner``:
        :func:`._bnb.slab_search` (its report is kept as ``self.report``)."""
        from ._bnb import slab_search

        self.report = slab_search(self, kind, inner, budget=budget, gap_tol=gap_tol, max_slabs=max_slabs, **kw)
        return self.report.bound


def secant_upper_bound(
    ms, T, ranges, loss, eps, lo, hi, kind, inner, budget=None, b_limits=(-math.inf, math.inf), report=None, **kw
):
    """The outer bound of :class:`SecantBound` for one switched coordinate (``nan`` when it gives none) by
    :func:`._bnb.slab_search` (``kw``: its ``gap_tol``, ``deadline``, ``max_slabs``); ``b_limits``: a certified
    interval containing the switched coefficient on S; ``report``: a list to which the search's report is
    appended; ``budget``: the work budget (default: ``HINGE_WORK`` for the hinge, else ``SECANT_WORK``)."""
    if len(T.gi) != 1 or not np.isfinite(inner):
        return math.nan
    if budget is None:
        budget = HINGE_WORK if loss.name == "hinge" else SECANT_WORK
    try:
        with np.errstate(all="ignore"):
            sb = SecantBound(ms, T, ranges, loss, eps, ms.e_min_lower, lo, hi)
            kw.setdefault("max_slabs", SECANT_SLABS)
            v = sb.bound(kind, inner, budget=budget, b_limits=b_limits, **kw)
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        return math.nan
    if report is not None:
        report.append(sb.report)
    return v if np.isfinite(v) else math.nan
