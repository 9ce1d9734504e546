"""Row-margin ranges of a hinge set from linear programmes (HiGHS), certified by weak duality.

S = {θ ∈ K : (1/n) Σ_j max(0, 1 - c_j'θ) <= ε} with K the ball (penalised coordinates) and the intercept interval.
The hinge set is polyhedral but for the ball, and the enclosing ellipsoid of :class:`._bounds.ScoreRanges` (built on
a smoothed hinge, whose curvature vanishes away from the kink) is nearly the ball: on breast cancer (300 rows, 6
features, ε = 0.1) its row ranges are 46 wide (median) where the exact ranges are 3.93. The slab bound's row
envelopes (:mod:`._secant`) are only as tight as these ranges.

**Programme.** For each distinct row c_i and each direction v = ±c_i, the linear programme

    min v'θ  s.t.  t_j >= 1 - c_j'θ,  t_j >= 0,  Σ_j w_j t_j <= nε,  θ ∈ P

(distinct rows j with multiplicities w_j; P ⊇ K: the box of the ball's coordinate extremes and the intercept
interval, with tangent cuts of the ball added whenever a solution leaves it, up to ``_BALL_ROUNDS`` per programme) is
solved by HiGHS' primal simplex, warm-started from the previous programme (only the objective changes).

**Certificate.** Eliminating t from the Lagrangian (u_j >= 0 on ``t_j >= 1 - c_j'θ``, λ >= 0 on the sum) gives, for
every λ >= 0 and 0 <= u_j <= λ w_j,

    min_{S ∩ A} v'θ >= Σ_j u_j - λ nε + σ_A(v - Σ_j u_j c_j),     σ_A(z) = min_{K ∩ A} z'θ,

for any cell A (b = θ_k in a slab, the intercept in a sub-interval; the whole of K at the root), with σ_A in closed
form (:func:`._slabs.slab_ranges` on the ball cut by the slab, plus the intercept interval). The solver's duals are
clipped into that set, so the bound holds whatever its accuracy; it is exact at the root when the duals are optimal
for the programme over K. On a cell the pair (u, λ) is scaled by a factor s >= 0 re-maximised by golden section
(every s keeps it feasible). Each bound is moved out by ``1e-11·(1 + |σ| + |Σu - λnε|)`` (>> rounding).

**Budget.** Only sets of at most ``_LP_SIZE`` (distinct rows x (rows + d)) get the programmes; larger ones use the
batched convex solver's ranges (:mod:`._lower_ranges`), which are close to exact there but not on small hinge sets
(breast cancer 300 x 6: 41 wide against 3.93). The programmes stop when their simplex iterations times the
programme's columns (rows + d) pass ``_LP_WORK`` (a deterministic count, each run limited to what is left; lower
ends take at most half before the upper ends start); rows not reached keep their other ranges. One HiGHS thread.
"""

from __future__ import annotations

import math

import numpy as np

from ...solvers import quiet_highs
from ._slabs import slab_ranges

__all__ = ["HingeLPRanges", "hinge_lp_ranges", "tighten_ranges"]

_BALL_ROUNDS = 6  # re-solves of one programme with a new tangent cut of the ball
_LP_WORK = 4e6  # simplex iterations x columns (rows + d) of the programme, over all programmes of one set
_HINGE_BATCH = 1e6  # the largest (distinct rows)² of a hinge set given the batched solver's ranges: on the hinge it
# costs more (red wine, 1,359 rows: the first call 11.3 s of CPU; COMPAS, 3,325: 37.9 s)
_LP_SIZE = 2.5e5  # the largest (distinct rows) x (distinct rows + d): breast cancer 300 x 6 is 9.2e4 (0.6 s for all
# 600 programmes); on Pima (6e5) and 569 x 30 (3.4e5) a programme takes 40-110 ms, where the batched convex solver of
# ._lower_ranges gives ranges within 0.3 % of the exact ones (2.675 against 2.669 wide on Pima; 1.47 against 1.44)
_GOLDEN = 12  # golden-section steps of the dual scale on a cell (one new evaluation each)
_PAD = 1e-11


def _chain(U):
    """An order of the rows in which each is the most parallel to the one before (greedy, from row 0): consecutive
    programmes then differ little and the warm start saves pivots (breast cancer 300 x 6: 4,832 simplex iterations in
    all against 8,443 in the rows' order)."""
    Z = U / np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1e-300)
    used = np.zeros(len(U), dtype=bool)
    cur, order = 0, [0]
    used[0] = True
    for _ in range(len(U) - 1):
        dots = Z @ Z[cur]
        dots[used] = -np.inf
        cur = int(np.argmax(dots))
        used[cur] = True
        order.append(cur)
    return order


def _sigma(Z, Pball, r, o, k, a, b, ilo, ihi):
    """``min_{K ∩ A} z'θ`` for each row z of Z (A: ``a <= θ_k <= b`` when k is given, the intercept in [ilo, ihi])."""
    Zp = Z.copy()
    Zp[:, :o] = 0.0
    if k is None:
        lo = -np.sqrt(r * np.maximum(np.einsum("ij,jk,ik->i", Zp, Pball, Zp), 0.0))
    else:
        lo, _ = slab_ranges(Zp, np.zeros(Z.shape[1]), Pball, r, k, a, b)
    if o:
        lo = lo + np.minimum(Z[:, 0] * ilo[0], Z[:, 0] * ihi[0])
    return lo


class HingeLPRanges:
    """Certified ranges of every row margin of a hinge set (see the module docstring).

    Parameters
    ----------
    ms : MarginSet (design, labels, ball).
    eps : float
    lo, hi : the intercept interval (containing the intercept on S).
    Pball : inverse shape of the ball on the penalised coordinates (:class:`._bounds.ScoreRanges`).
    work : float
        Budget of the programmes (simplex iterations x columns, m + d).

    Attributes
    ----------
    lo_, hi_ : ndarray of shape (n,)
        Ranges of the margins ``c_i'θ`` on S (-inf/inf for rows the budget did not reach).
    """

    def __init__(self, ms, eps, lo, hi, Pball, work=_LP_WORK):
        C = ms.y[:, None] * ms.D
        U, inv, cnt = np.unique(C, axis=0, return_inverse=True, return_counts=True)
        self.inv, self.U = inv.ravel(), U
        m, d = U.shape
        self.n, self.eps, self.o, self.r, self.Pball = len(C), float(eps), ms.o, float(ms.r), Pball
        self.ilo, self.ihi = lo, hi
        self.G = np.zeros((2, m, d))  # Σ_j u_j c_j per programme
        self.c0 = np.full((2, m), -math.inf)  # Σ_j u_j - λnε per programme (-inf: not solved)
        self.root = np.full((2, m), -math.inf)  # certified root bound of v'θ
        h, highspy = quiet_highs()
        for opt, val in (("output_flag", False), ("presolve", "off"), ("simplex_strategy", 4), ("threads", 1)):
            h.setOptionValue(opt, val)
        inf = highspy.kHighsInf
        rad = np.sqrt(self.r * np.maximum(np.diag(Pball), 0.0))
        o = self.o
        col_lo = np.r_[lo[:o], -rad[o:], np.zeros(m)]
        col_hi = np.r_[hi[:o], rad[o:], np.full(m, inf)]
        h.addVars(d + m, col_lo, col_hi)
        # rows 0..m-1: c_j'θ + t_j >= 1; row m: Σ w_j t_j <= nε
        idx = np.arange(d + 1, dtype=np.int32)
        for j in range(m):
            h.addRow(1.0, inf, d + 1, np.r_[idx[:d], d + j].astype(np.int32), np.r_[U[j], 1.0])
        h.addRow(-inf, self.n * self.eps, m, np.arange(d, d + m, dtype=np.int32), cnt.astype(float))
        B = ms.B
        spent = 0.0

        def ball_cut(th):
            g = B @ th
            nb = math.sqrt(max(float(th @ g), 0.0))
            if nb > 0:
                h.addRow(-inf, math.sqrt(self.r), d, np.arange(d, dtype=np.int32), g / nb)

        ball_cut(ms.theta_min)
        cols = np.arange(d, dtype=np.int32)
        order = _chain(U)
        tried = np.zeros((2, m), dtype=bool)
        # lower ends up to half the budget, then upper ends, then the lower ends left: a budget that runs out leaves
        # both ends of the rows reached (each pass keeps the chain's warm starts)
        for s, limit in ((0, work / 2), (1, work), (0, work)):
            sign = 1.0 - 2.0 * s
            for i in order:
                if tried[s, i]:
                    continue
                if spent > limit:
                    break
                tried[s, i] = True
                h.changeColsCost(d, cols, sign * U[i])
                for rnd in range(_BALL_ROUNDS + 1):
                    # a programme stopped by the limit still gives valid (if looser) duals
                    h.setOptionValue("simplex_iteration_limit", int(max(work - spent, 0.0) // (m + d)) + 1)
                    h.run()
                    spent += h.getInfo().simplex_iteration_count * (m + d)
                    th = np.asarray(h.getSolution().col_value[:d])
                    if rnd == _BALL_ROUNDS or not float(th @ B @ th) > self.r * (1 + 1e-9):
                        break
                    ball_cut(th)
                rd = np.asarray(h.getSolution().row_dual)
                if len(rd) < m + 1 or not np.all(np.isfinite(rd[: m + 1])):  # no duals: the row keeps the others'
                    continue
                lam = max(-float(rd[m]), 0.0)
                u = np.clip(rd[:m], 0.0, lam * cnt)
                self.G[s, i] = u @ U
                self.c0[s, i] = float(u.sum()) - lam * self.n * self.eps
        solved = np.isfinite(self.c0)
        for s, sign in enumerate((1.0, -1.0)):
            z = sign * U - self.G[s]
            sig = _sigma(z, Pball, self.r, o, None, -math.inf, math.inf, lo, hi)
            val = self.c0[s] + sig
            val = val - _PAD * (1.0 + np.abs(sig) + np.abs(self.c0[s]))
            self.root[s] = np.where(solved[s] & np.isfinite(val), val, -math.inf)
        self.lo_, self.hi_ = self.root[0][self.inv], -self.root[1][self.inv]
        self.spent = spent

    def cell(self, a, b, k, ilo, ihi):
        """Certified ranges of every row margin on ``S ∩ {a <= θ_k <= b, ilo <= intercept <= ihi}``: the root duals,
        scaled by a factor re-maximised by golden section on [0, 3] (both directions at once), never looser than the
        root's bound (valid on every cell). Returns ``(lo, hi, work)`` (work: rows x d² per evaluation)."""
        ok = np.isfinite(self.c0).ravel()
        m = len(self.U)
        V = np.vstack([self.U, -self.U])[ok]
        G, c0 = self.G.reshape(2 * m, -1)[ok], self.c0.ravel()[ok]

        def val(f):
            sig = _sigma(V - f[:, None] * G, self.Pball, self.r, self.o, k, a, b, ilo, ihi)
            v = f * c0 + sig
            return np.where(np.isfinite(sig), v - _PAD * (1.0 + np.abs(sig) + np.abs(f * c0)), sig)

        best = val(np.ones(len(V)))
        x0, x1 = np.zeros(len(V)), np.full(len(V), 3.0)
        phi = (math.sqrt(5.0) - 1.0) / 2.0
        c, d = x1 - phi * (x1 - x0), x0 + phi * (x1 - x0)
        fc, fd = val(c), val(d)
        for _ in range(_GOLDEN):
            best = np.maximum(best, np.maximum(fc, fd))
            left = fc >= fd
            x1, x0 = np.where(left, d, x1), np.where(left, x0, c)
            c_new, d_new = np.where(left, x1 - phi * (x1 - x0), d), np.where(left, c, x0 + phi * (x1 - x0))
            f_new = val(np.where(left, c_new, d_new))
            fc, fd = np.where(left, f_new, fd), np.where(left, fc, f_new)
            c, d = c_new, d_new
        best = np.maximum(best, np.maximum(fc, fd))
        full = np.full(2 * m, -math.inf)
        full[ok] = np.maximum(best, self.root.ravel()[ok])
        work = (_GOLDEN + 3) * len(V) * self.U.shape[1] ** 2
        return full[:m][self.inv], -full[m:][self.inv], float(work)


def _key(eps, lo, hi):
    """The cache key of the programmes' ranges: the result depends on ε and on the intercept interval."""
    return (float(eps), tuple(np.asarray(lo, float)), tuple(np.asarray(hi, float)))


def hinge_lp_ranges(ms, eps, lo, hi, Pball):
    """The :class:`HingeLPRanges` of ``ms`` at ε with the intercept interval [lo, hi], computed once per such triple
    (kept on ``ms``: the same inputs give the same bits whatever was asked before), or None when the set is larger
    than ``_LP_SIZE`` or HiGHS is missing or fails."""
    cache = ms.__dict__.setdefault("_lp_ranges", {})
    key = _key(eps, lo, hi)
    m = len(np.unique(ms.y[:, None] * ms.D, axis=0))
    if key not in cache and m * (m + ms.D.shape[1]) > _LP_SIZE:
        cache[key] = None  # too large: the batched solver's ranges instead (tighten_ranges)
    if key not in cache:
        try:
            cache[key] = HingeLPRanges(ms, eps, lo, hi, Pball)
        except (ImportError, RuntimeError, ValueError, OSError, np.linalg.LinAlgError):  # OSError: no descriptor 1
            cache[key] = None
    return cache[key]


def tighten_ranges(ms, ranges, loss, eps, lo, hi, quick=False) -> None:
    """Intersect the row ranges of ``ranges`` (:class:`._bounds.ScoreRanges`, used by every bound of the call) with
    the set's own: for the hinge the linear programmes' (far tighter than the ellipsoid's), and where their budget
    did not reach every row (hinge sets up to ``_HINGE_BATCH`` (distinct rows)²), or for the logistic loss, the
    batched convex solver's (:mod:`._lower_ranges`, which skips the largest sets). Both are computed once per set and ε, and skipped when ``quick`` (a ``max_time`` under
    5 s) unless already computed."""
    from ._lower_ranges import distinct_rows, set_row_ranges

    if quick:  # only what is already computed
        lp = ms.__dict__.get("_lp_ranges", {}).get(_key(eps, lo, hi)) if loss.name == "hinge" else None
        ranges.lp = lp
        if lp is not None:
            ranges.lo_o, ranges.hi_o = np.maximum(ranges.lo_o, lp.lo_), np.minimum(ranges.hi_o, lp.hi_)
        done = ms.__dict__.get("_lower_row_ranges", {}).get(float(eps))
        if done is not None:
            ranges.lo_o, ranges.hi_o = np.maximum(ranges.lo_o, done[0]), np.minimum(ranges.hi_o, done[1])
        return
    lp = hinge_lp_ranges(ms, eps, lo, hi, ranges.Pball) if loss.name == "hinge" else None
    ranges.lp = lp  # the slab bound's cells re-use its duals (._secant)
    if lp is not None:
        ranges.lo_o, ranges.hi_o = np.maximum(ranges.lo_o, lp.lo_), np.minimum(ranges.hi_o, lp.hi_)
    m = len(lp.U) if lp is not None else distinct_rows(ms)
    partial = lp is None or not (np.all(np.isfinite(lp.lo_)) and np.all(np.isfinite(lp.hi_)))
    if partial and (loss.name != "hinge" or m * m <= _HINGE_BATCH):
        slo, shi = set_row_ranges(ms, eps)  # the batched convex solver's (._lower_ranges; ~exact for the logistic)
        ranges.lo_o, ranges.hi_o = np.maximum(ranges.lo_o, slo), np.minimum(ranges.hi_o, shi)
