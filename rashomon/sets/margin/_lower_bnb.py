"""Certified lower bound on MCR- of one feature of a linear classifier (logistic; hinge on small sets) when γ < 0 is
needed: row minorants on slabs.

Notation as in :mod:`._secant`: S = {θ ∈ K : e_orig(θ) <= ε}, one switched feature with coordinate k (b = θ_k),
row margins ``m_j = y_j d_j'θ``; the switched pair (v, j) has margin ``m_j + c_vj·b``, ``c_vj = y_j (G_v - g_j)``
(G_v: the V distinct values with counts cnt_v, g_j: row j's value). For t (the MR to certify; 1 for the
difference) and τ ∈ [0, t], on S (``e_orig <= ε``, so ``-τ e_orig >= -τ ε``)

    e_switch - t·e_orig >= (1/n) Σ_j φ_j(m_j, b) - τ ε,
    φ_j(m, b) = [Σ_v cnt_v ℓ(m + c_vj b) - ℓ(m)]/(n - 1) - Λ ℓ(m),   Λ = t - τ

(the row's own value has c = 0: its pair is excluded by subtracting ℓ(m)). The first term of φ_j is convex
in (m, b); -Λ ℓ(m) is concave (the non-convexity of the lower end).

**Bound on one slab** ``A = S ∩ {a <= b <= a'}``, b0 = (a + a')/2, w = a' - a. (i) Every m_j stays in
``[lo_j, hi_j]`` on A (the ranges on the ball and on the ellipsoid E ⊇ S cut by the slab,
:func:`._secant.slab_ranges`). (ii) φ_j is convex in b, so ``φ_j(m, b) >= T_j(m, b) = φ_j(m, b0) + D_j(m)(b - b0)``,
``D_j(m) = ∂_b φ_j(m, b0)``, affine in b. (iii) φ_j(m, b0) and D_j are evaluated on a grid of [lo_j, hi_j] through
``F_s(z) = Σ_v cnt_v ℓ(z + s G_v b0)`` (row j: ``F_{y_j}(m - y_j g_j b0)``) and ``∂_b = y_j [H1_s - g_j H0_s]`` with
``H1_s = Σ cnt_v G_v ℓ'(·)``, ``H0_s = Σ cnt_v ℓ'(·)``, tabulated on one fine grid per label; linear interpolation
is within ``max|F''|·h²/8 <= (n/4)·h²/8`` of F_s and within ``Σ cnt_v |G_v|·max|ℓ'''|·h²/8`` of H1_s (``max|ℓ'''| =
1/(6√3)``), which are subtracted (eR_j: the error of D_j). The convex hull of T_j's two faces b = a and b = a'
(sampled, lowered by their interpolation errors between nodes) gives affine minorants ``c + β m + β_b (b - b0)``
of T_j on the box, whose maximum ψ_j(m, b) is convex (:mod:`._lower_faces`: proofs and the hinge's exact
version). (iv) For μ >= τ, adding ``(μ - τ)(e_orig - ε) <= 0`` (on S), on A

    e_switch - t·e_orig >= (1/n) Σ_j ψ_j(m_j, θ_k) + (μ - τ) e_orig(θ) - μ ε,

a convex function of θ. Each ψ_j (a maximum of affine pieces) is replaced by its soft-max minus ``T log P``
(P pieces), which is below it. The programme minimises it plus ``ρ·dist(θ_k, [a, a'])²`` over K (⊇ A) by
projected Newton; at its point x the slope λ = 2ρ·dist of the penalty is a multiplier of the violated face
(``λ(θ_k - a') <= 0`` resp. ``λ(a - θ_k) <= 0`` on A), so the convex function plus ``λ·face`` is below the
right-hand side on A, and its Frank–Wolfe bound at x over K (valid at any point: convexity) bounds
``min_A (e_switch - t e_orig)`` from below: h_A. Any τ ∈ [0, t] and μ >= τ are valid: τ is the best of a few
candidates (the least-squares KKT multiplier of ``e_orig <= ε`` at the slab's start, and fixed fractions of t on
the first slabs; a slab's halves inherit its τ), and μ takes a short search (the dual function is concave in μ,
with slope ``e_orig(x_μ) - ε``).

**From h to MR.** Difference (t = 1): ``MR >= h_A`` on A. Ratio: ``e_switch >= t e_orig + h_A``, so
``MR >= t + h_A/ε`` if h_A >= 0, ``>= t + h_A/e_lo`` otherwise (e_lo: a certified lower bound on e_orig).
**Slabs.** The b-range of S (certified) is covered by slabs; the slab with the smallest bound is halved
until every slab is within the target of the best member or a fixed number of slab evaluations is spent
(a deterministic budget, never seconds); a slab whose halving did not raise its bound first searches τ over
fixed fractions of t. The row ranges of (i) are also cut by the set's own (:mod:`._lower_ranges`). The bound is the smallest slab bound: every member lies in a slab.
Identical rows (design and label) have identical row functions and are one row, weighted by their count.
Floating point: certified values are lowered by ``1e-10·max(1, |h|)`` (>> rounding).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...solvers import SmoothBallProgram
from ._bnb import stalled
from ._lower_faces import face_pieces, faces_objective
from ._lower_hinge import hinge_slab
from ._lower_ranges import set_row_ranges
from ._secant import slab_ranges

__all__ = ["lower_slab_bound", "LOWER_SLABS"]

LOWER_SLABS = 24  # slabs of one bound at the reference size (Pima: n = 768); see _slab_budget
_LOWER_WORK = 5.4e7  # work of one bound (units of _slab_budget: rows x grid x programme evaluations, tables)
_MIN_SLABS, _MAX_SLABS = 8, 64
_INITIAL = 4  # slabs of the first cover of the b-range
_GRID = 48  # grid points per row (logistic, up to 800 distinct rows; see _grid): 64 before (Pima: 8-12% more CPU)
HINGE_GRID = 64  # grid nodes per row for the hinge (three points per cell)
# fine grid of the per-label tables (at most; V·fine <= _FINE_PAIRS, at least 64): 1,024 before (Pima's lower gaps
# moved by at most 0.05 points with both changes, median 0.35% -> 0.37%); the hinge's slab cost keeps 1,024
_FINE, _HINGE_COST_FINE = 512, 1024
_FINE_PAIRS = 1 << 23  # Pima, COMPAS: the full 512 points; 10^5 distinct values: 83 (the error terms grow as h²)
_SKIP = 2.0  # the slab bound is skipped when fewer slabs than this fit its work (10^5 rows: 0.6)
_TEMP = 1e-4  # soft-max temperature
_MU_STEPS = 2  # solves of the multiplier search on one slab
_L3 = 1.0 / (6.0 * math.sqrt(3.0))  # max |third derivative| of the logistic loss
_HINGE_SMOOTH = 1e-3  # smoothing of the hinge in the programme's e_orig term
_TAUS = np.array([0.1, 0.2, 0.3, 0.45, 0.6, 0.8])  # fractions of t tried as τ where the relaxation stalls
# fractions of t tried as τ by the probe (the slab of zero width at the best member): every second one of _TAUS
# (all six before; on Pima's 8 logistic features the same bounds to 4 digits, and about 0.1 s less CPU per feature)
_PROBE_TAUS = np.array([0.2, 0.45, 0.8])
_STALL: float | None = 1e-3  # a halved slab's bound within this (relative) of its parent's: the halving did not help
_RANGES_TIME = 5.0  # seconds: a shorter max_time skips the set's row ranges (._lower_ranges)
# relative distance to the best member at which a slab is not split further: the smaller of this and half the
# call's gap_tol (0.2% before: on Pima's 8 logistic features the last quarter of the lower slab search's CPU took the
# median lower gap from 0.35% to 0.19%)
_TARGET = 5e-3
_EARLY = True  # a slab's τ candidates stop at the first bound above the target


def _kkt_tau(ms, T, loss, theta, t, k=None):
    """The multiplier μ of ``e_orig <= ε`` at θ for ``min e_switch - t e_orig`` (least squares on the stationarity
    condition with the ball's multiplier and, given k, a multiplier of θ_k), clipped to [0, t]: the τ of the
    relaxation (any τ in [0, t] gives a valid bound; this one makes it tight near θ)."""
    go = T.orig_parts(theta, loss, 1)[1]
    gs = T.switch_parts(theta, loss, 1)[1]
    cols = [go]
    if theta @ ms.B @ theta >= ms.r * (1 - 1e-6):
        cols.append(2.0 * (ms.B @ theta))
    if k is not None:
        cols.append(np.eye(len(theta))[k])
    coef = np.linalg.lstsq(np.column_stack(cols), -(gs - t * go), rcond=None)[0]
    mu = float(coef[0]) if np.isfinite(coef[0]) else 0.5 * t
    return min(max(mu, 0.0), t)


def _abs_dev(G, cnt, g):
    """``Σ_v cnt_v |G_v - g_j|`` for every g_j (G sorted), by prefix sums: O((V + n) log V), not V·n."""
    c0 = np.concatenate([[0.0], np.cumsum(cnt)])
    s0 = np.concatenate([[0.0], np.cumsum(cnt * G)])
    i = np.searchsorted(G, g, side="right")
    return (g * c0[i] - s0[i]) + ((s0[-1] - s0[i]) - g * (c0[-1] - c0[i]))


class _Slabs:
    """The per-slab relaxation of the module docstring for one feature and one t."""

    def __init__(self, ms, T, ranges, loss, eps, e_lo, lo, hi, t, set_ranges=True):
        D, y = ms.D, ms.y
        self.ms, self.T, self.R, self.loss, self.eps, self.e_lo = ms, T, ranges, loss, float(eps), float(e_lo)
        self.n, self.d = D.shape
        self.k = int(T.gi[0])
        self.G = T.G[:, 0]
        self.cnt = np.bincount(np.searchsorted(self.G, D[:, self.k]), minlength=len(self.G)).astype(float)
        # identical rows (design and label) have identical row functions: one row each, weighted by its count
        rows, first, size = np.unique(np.column_stack([D, y]), axis=0, return_index=True, return_counts=True)
        self.nr, self.wr = len(size), size / float(self.n)
        self.y, self.g = rows[:, -1], rows[:, self.k]
        self.C = self.y[:, None] * rows[:, :-1]
        slo, shi = set_row_ranges(ms, eps) if set_ranges else (-np.inf, np.inf)  # the set's own (certified, ~E/2)
        self.rlo, self.rhi = np.maximum(ranges.lo_o, slo)[first], np.minimum(ranges.hi_o, shi)[first]
        self.lo, self.hi, self.t = lo, hi, float(t)
        # Lip(R_j) <= Σ_v cnt_v |G_v - g_j| max ℓ''/(n - 1)
        self.lip = _abs_dev(self.G, self.cnt, self.g) / (4.0 * (self.n - 1.0))
        self.pairs = T  # the pair sums of _kkt_tau (the caller may give cell terms, ._binned)
        self.ell = ranges.ellipsoid
        self.hinge = loss.name == "hinge"
        # the e_orig term of the programme: the hinge smoothed (>= it; its offset is paid in the bound)
        self.sm = loss.smoothed(_HINGE_SMOOTH) if self.hinge else loss
        self.prog = SmoothBallProgram(ms.B, ms.r, lo, hi, tol=1e-7, max_iter=40)

    def _ranges(self, a, b):
        C, o, k = self.C, self.ms.o, self.k
        Cp = C.copy()
        Cp[:, :o] = 0.0
        lo, hi = slab_ranges(Cp, np.zeros(self.d), self.R.Pball, self.ms.r, k, a, b)
        if o:
            ci = C[:, 0]
            lo = lo + np.minimum(ci * self.lo[0], ci * self.hi[0])
            hi = hi + np.maximum(ci * self.lo[0], ci * self.hi[0])
        if self.ell is not None:
            c0, P, delta = self.ell
            l2, h2 = slab_ranges(C, c0, P, delta, k, a, b)
            lo, hi = np.maximum(lo, l2), np.minimum(hi, h2)
        return np.maximum(lo, self.rlo), np.minimum(hi, self.rhi)

    def _tables(self, b0, zlo, zhi, s):
        """The fine grid of label s and F_s (lowered by its interpolation error), H0_s, H1_s and their errors."""
        zf = np.linspace(zlo, zhi, _fine(len(self.G))) if zhi > zlo else np.array([zlo, zlo + 1.0])
        hf = float(zf[1] - zf[0])
        arg = zf[None, :] + (s * b0) * self.G[:, None]
        # the logistic ℓ, ℓ' and ℓ'' from one exponential e = exp(-|m|) (rounding, ~1e-16 relative, is far below the
        # interpolation errors subtracted here and the 1e-10 by which every certified value is lowered)
        e = np.exp(-np.abs(arg))
        inv = 1.0 / (1.0 + e)
        lv = np.maximum(-arg, 0.0) + np.log1p(e)  # ℓ(m) = log(1 + exp(-m))
        d1 = -np.where(arg >= 0.0, e * inv, inv)  # ℓ'(m) = -σ(-m)
        d2 = e * inv * inv  # ℓ''(m) = σ(m)σ(-m)
        eF = (self.n / 4.0) * hf * hf / 8.0
        eH0 = self.n * _L3 * hf * hf / 8.0
        eH1 = float(self.cnt @ np.abs(self.G)) * _L3 * hf * hf / 8.0
        tabs = (self.cnt @ lv - eF, self.cnt @ d1, (self.cnt * self.G) @ d1, self.cnt @ d2)
        return zf, hf, tabs, eH0, eH1

    def slab(self, a, b):
        """The τ-independent data of the slab [a, b] (ranges, grid, switched part and ∂_b on it), or None."""
        mlo, mhi = self._ranges(a, b)
        if np.any(~(mlo <= mhi)):
            return None
        if self.hinge:
            return hinge_slab(self, a, b, mlo, mhi, HINGE_GRID)
        n, b0 = self.n, 0.5 * (a + b)
        K = _grid(self.nr)
        X = mlo[:, None] + (mhi - mlo)[:, None] * np.linspace(0.0, 1.0, K)[None, :]
        F, DB, eR = np.empty_like(X), np.empty_like(X), np.empty(self.nr)
        F2 = np.empty((self.nr, K - 1))  # the largest F_s'' on each grid cell (bounded above)
        h = (mhi - mlo) / (K - 1)
        for s in (1.0, -1.0):
            rows = self.y == s
            if not rows.any():
                continue
            g = self.g[rows]
            Z = X[rows] - (s * b0) * g[:, None]
            zf, hf, (Ft, H0, H1, H2), eH0, eH1 = self._tables(b0, float(Z.min()), float(Z.max()), s)
            F[rows] = np.interp(Z, zf, Ft)
            DB[rows] = s * (np.interp(Z, zf, H1) - g[:, None] * np.interp(Z, zf, H0)) / (n - 1.0)
            eR[rows] = (eH1 + np.abs(g) * eH0) / (n - 1.0)
            # F_s'' at the cell's middle, interpolated (within n·L3·hf, L3 = max|third derivative|), plus its change over half a cell
            mid = 0.5 * (Z[:, :-1] + Z[:, 1:])
            up = np.interp(mid, zf, H2) + n * _L3 * (hf + 0.5 * h[rows])[:, None]
            F2[rows] = np.minimum(up, n / 4.0)
        own = self.loss.exact(X)
        base = (F - own) / (n - 1.0)
        return {"a": a, "b": b, "mlo": mlo, "mhi": mhi, "X": X, "base": base, "own": own, "DB": DB, "eR": eR, "F2": F2}

    def pieces(self, sd, m_ref, tau):
        """Row minorants affine in (m_j, θ_k) on the slab (:func:`._lower_faces.face_pieces`) for Λ = t - τ."""
        return face_pieces(self, sd, tau)

    def value(self, sd, x0, tau):
        """Certified ``h_A`` of the slab (``sd`` from :meth:`slab`) for τ, and the programme's minimiser: the best
        over a short search of the multiplier μ >= τ of ``e_orig <= ε`` (kept exactly as ``(μ - τ)·e_orig``; the
        dual function is concave in μ with slope ``e_orig(x_μ) - ε``)."""
        pc = self.pieces(sd, self.C @ x0, tau)
        best, xb = -math.inf, x0
        mu, step, x = tau, 0.25 * max(self.t, 1e-3), x0
        lo_mu = hi_mu = None
        for _ in range(_MU_STEPS):
            h, x, eo = self._solve(pc, sd["a"], sd["b"], x, mu, tau)
            if h > best:
                best, xb = h, x
            if eo > self.eps:
                lo_mu = mu
                mu = mu + step if hi_mu is None else 0.5 * (mu + hi_mu)
                step *= 2
            else:
                if lo_mu is None:
                    break  # x_μ already in S at μ = τ: a larger μ only lowers the bound
                hi_mu = mu
                mu = 0.5 * (lo_mu + mu)
        return best, xb

    def _solve(self, pc, a, b, x0, mu, tau):
        k, b0 = self.k, 0.5 * (a + b)
        base = faces_objective(self.C, k, self.wr, pc, b0, _TEMP)
        rho = min(10.0 / max(b - a, 1e-12) ** 2, 1e6)
        cw = mu - tau  # weight of the exact (convex) e_orig term
        orig = self.ms.orig

        def f(theta, order):
            out = base(theta, order)
            bk = theta[k]
            viol = max(bk - b, 0.0) - max(a - bk, 0.0)
            val = out[0] + rho * viol * viol
            op = orig.orig_parts(theta, self.sm, order) if cw > 0 else None
            if op is not None:
                val += cw * op[0]
            if order == 0:
                return (val,)
            grad = out[1].copy()
            grad[k] += 2 * rho * viol
            if op is not None:
                grad = grad + cw * op[1]
            if order == 1:
                return val, grad
            H = out[2].copy()
            H[k, k] += 2 * rho * (viol != 0.0)
            if op is not None:
                H = H + cw * op[2]
            return val, grad, H

        x = self.prog.minimize(f, x0).x
        # certificate of the slab: the penalty's slope at x is the multiplier λ of the violated face
        # (λ(θ_k - b) <= 0, resp. λ(a - θ_k) <= 0 on A); the Frank–Wolfe bound of f - pen + λ·face over K
        fx, gx = f(x, 1)
        bk = float(x[k])
        viol = max(bk - b, 0.0) - max(a - bk, 0.0)
        face = b if viol > 0 else a
        val = fx - rho * viol * viol + 2 * rho * viol * (bk - face)
        lb = val - max(float(gx @ x) - self.prog.support_min(gx), 0.0)  # the penalty's gradient at x equals λ
        eo = orig.e_orig(x, self.loss)
        if not np.isfinite(lb):
            return -math.inf, x, eo
        lb -= 1e-10 * max(1.0, abs(lb))
        return lb - mu * self.eps - cw * self.sm.offset, x, eo

    def mr(self, h, kind):
        if kind == "difference":
            return h
        return self.t + h / (self.eps if h >= 0 else self.e_lo)

    def cell(self, a, b, x, kind, taus=(), enough=math.inf):
        """``(bound on MR over the slab, a, b, minimiser, τ)``: the best over τ in ``taus`` and the KKT multiplier
        at x (with θ_k moved into the slab), tried in that order; the τ left are skipped once the bound reaches
        ``enough`` (the search's target: the slab is then not split, and every τ's bound is valid on it)."""
        sd = self.slab(a, b)
        if sd is None:
            return (math.inf, a, b, x, None)
        xs = x.copy()
        xs[self.k] = min(max(xs[self.k], a), b)
        cand = [_kkt_tau(self.ms, self.pairs, self.loss, xs, self.t, self.k if self.d > 3 else None)]
        for tau in taus:
            if tau is not None and all(abs(tau - c) > 0.02 * self.t for c in cand):
                cand.append(tau)
        best = (-math.inf, a, b, x, None)
        for tau in cand:
            h, xx = self.value(sd, xs, tau)
            v = self.mr(h, kind)
            if v > best[0]:
                best = (v, a, b, xx, tau)
            if _EARLY and best[0] >= enough:
                break
        return best


def _grid(n, top=None):
    """Grid points per row for n distinct rows: ``top`` (_GRID) up to 800 rows, then as 1/sqrt(n) down to 32 (COMPAS,
    3,300 rows: 32); large sets get more, coarser slabs for the same work (COMPAS, sex: 8 of 64 points 2.35%, 20 of 32
    0.66%)."""
    return int(min(top or _GRID, max(32, round((top or _GRID) * math.sqrt(800.0 / max(n, 1))))))


def _slab_budget(n, V, hinge=False):
    """Slabs of one bound: a fixed amount of work (deterministic, no clock) divided by the work of one slab, about
    ``n·grid·(1 + 12·_MU_STEPS)`` (hull and programme evaluations) plus ``V·fine`` (tables); within
    [_MIN_SLABS, _MAX_SLABS]. About 45-58 slabs for Pima (768 rows; 31 with 64 grid points), 20 for COMPAS (3,300
    distinct rows, grid 32)."""
    return int(min(max(_LOWER_WORK / _slab_cost(n, V, hinge), _MIN_SLABS), _MAX_SLABS))


def _fine(V):
    """Points of the fine grid of the tables for V distinct values (``V·fine <= _FINE_PAIRS``, 64 to ``_FINE``)."""
    return int(min(_FINE, max(64, _FINE_PAIRS // max(V, 1))))


def _slab_cost(n, V, hinge=False):
    """The work of one slab (units of :func:`_slab_budget`) for n distinct rows and V values; the hinge's as before
    the logistic's grids and tables shrank (its own grid, tables of _HINGE_COST_FINE): the same hinge budgets."""
    f = min(_HINGE_COST_FINE, max(64, _FINE_PAIRS // max(V, 1))) if hinge else _fine(V)
    return n * _grid(n, HINGE_GRID if hinge else None) * (1.0 + 12.0 * _MU_STEPS) + V * f


def lower_slab_bound(
    ms,
    T,
    ranges,
    loss,
    eps,
    lo,
    hi,
    kind,
    theta_best,
    mr_best,
    b_limits,
    max_slabs=None,
    max_time=None,
    floor=-math.inf,
    terms=None,
    info=None,
    target=_TARGET,
):
    """Certified lower bound on MCR- of one feature (logistic loss; see the module docstring) and the slab
    programmes' minimisers (starts for the members' local search); ``(-inf, [])`` when it does not apply.

    ``theta_best``/``mr_best``: the best member found (t = its MR for the ratio, 1 for the difference);
    ``b_limits``: a certified interval containing θ_k on S. ``max_slabs`` slabs (default: a fixed amount of work,
    :func:`_slab_budget`, on the distinct rows): a deterministic budget; ``max_time`` (seconds, optional) also stops the splitting
    (the bound is then valid but depends on the machine). ``floor``: a bound the caller already has; when the
    slab of zero width at the best member's coefficient does not beat it, the search stops there (``-inf``).
    ``terms``: the pair sums of the τ guesses (default T; any terms: τ only steers the search). The search also
    stops when its bound stalls (logistic loss: :func:`._bnb.stalled` on the slabs used: the rest of the budget, at
    the bound's rate, would close neither the gap to the target nor half of it); ``info`` (a dict) then gets
    ``stalled=True``. ``target``: the relative distance below ``mr_best`` at which a slab is not split further.
    """
    if len(T.gi) != 1 or theta_best is None or ranges.ellipsoid is None:
        return -math.inf, []
    e_lo = float(getattr(ms, "e_min_lower", ms.e_min))
    if not e_lo > 0:
        return -math.inf, []
    t_start = time.perf_counter()
    t = 1.0 if kind == "difference" else float(mr_best)
    # the set's row ranges cost up to a few seconds once per set: not under a short time limit
    sl = _Slabs(ms, T, ranges, loss, eps, e_lo, lo, hi, t, set_ranges=max_time is None or max_time >= _RANGES_TIME)
    sl.pairs = T if terms is None else terms
    budget = _slab_budget(sl.nr, len(T.G), sl.hinge) if max_slabs is None else int(max_slabs)
    k = sl.k
    e = np.zeros((1, ms.D.shape[1]))
    e[0, k] = 1.0
    centre, P, delta = ranges.ellipsoid
    ca, cb = slab_ranges(e, centre, P, delta, 0, -math.inf, math.inf)
    a0, b0 = max(float(b_limits[0]), float(ca[0])), min(float(b_limits[1]), float(cb[0]))
    if not (np.isfinite(a0) and np.isfinite(b0) and a0 <= b0):
        return -math.inf, []
    target = mr_best - float(target) * max(abs(mr_best), 1e-12)
    # a probe: the slab of (almost) zero width at the best member's coefficient, about the best any cover can do
    # there; when it does not beat ``floor`` (a bound the caller has), no cover will: stop after one slab
    bk = min(max(float(theta_best[k]), a0), b0)
    probe = sl.cell(bk - 1e-9 * (b0 - a0), bk + 1e-9 * (b0 - a0), theta_best, kind, _PROBE_TAUS * sl.t, target)
    if probe[0] <= floor:
        return -math.inf, [probe[3]]
    edges = np.linspace(a0, b0, _INITIAL + 1)
    first = tuple(f * sl.t for f in ((0.25, 0.5, 0.8) if sl.hinge else (0.3,))) + (probe[4],)  # τ of the first slabs
    # a cell is (bound, a, b, minimiser, τ, its parent's bound or None once its τ has been searched)
    cells = [sl.cell(a, b, theta_best, kind, first, target) + (-math.inf,) for a, b in zip(edges[:-1], edges[1:])]
    used = 2 * len(cells) + len(_PROBE_TAUS) // 2
    hist: list = []  # (slabs used, -bound) before each step: the stall rule (on the negated bound)
    while used + 2 <= budget and (max_time is None or time.perf_counter() - t_start < max_time):
        cells.sort(key=lambda c: c[0])
        v, a, b, xc, tc, pv = cells[0]
        if v >= target:
            break
        if not sl.hinge and stalled(hist, used, -v, -target, -mr_best, budget):
            if info is not None:
                info["stalled"] = True
            break
        hist.append((used, -v))
        cells.pop(0)
        if _STALL is not None and pv is not None and v <= pv + _STALL * max(abs(v), 1e-12):
            # halving did not help: the relaxation at this τ is the limit, so search τ on this cell first
            cells.append(sl.cell(a, b, xc, kind, (tc,) + tuple(_TAUS * sl.t), target) + (None,))
            used += len(_TAUS) // 2
            continue
        mid = 0.5 * (a + b)
        cells += [sl.cell(a, mid, xc, kind, (tc,), target) + (v,), sl.cell(mid, b, xc, kind, (tc,), target) + (v,)]
        used += 2
    cells.sort(key=lambda c: c[0])
    return cells[0][0], [c[3] for c in cells if c[3] is not None]
