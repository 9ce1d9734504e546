"""Certified compressed switched losses of one feature: MCR without touching every pair of rows.

For one switched feature the exact e_switch sums the loss over all n(n-1) pairs (row j, value of row i):
``e_switch = [n/(n-1)] e_full - e_orig/(n-1)`` with ``e_full = (1/n²) Σ_j Σ_v cnt_v ℓ(y_j (a_j + G_v b))`` (all
pairs, the row's own value included; ``a_j`` the rest of row j's score, b = θ_k, G_v the V distinct values with
counts cnt_v). For a continuous feature V ≈ n, n² pair terms per evaluation: 10^10 at n = 10^5.

**Fixed cells of the feature** (:func:`binned_terms`). The sorted values are cut into K cells (count N, mean μ,
least value lo, largest hi). ``v -> ℓ(y (a + v b))`` is convex in v for every θ, so on each cell

* Jensen: ``Σ_{v in cell} cnt_v ℓ(y(a + v b)) >= N ℓ(y(a + μ b))`` (one atom μ of weight N), and
* Edmundson–Madansky: ``... <= N [λ ℓ(y(a + lo·b)) + (1 - λ) ℓ(y(a + hi·b))]``, ``λ = (hi - μ)/(hi - lo)`` (two
  atoms, lo and hi, of weights Nλ and N(1 - λ)).

Both are again sums of margin losses over (atom, row class) pairs: :class:`BinnedTerms` is a
:class:`._terms.MarginTerms` whose pair weights are ``w_atom·|class|/(n(n-1))`` (no own pair excluded), so every
solver and bound written for the exact terms runs on K·m pairs. With L(θ) the Jensen terms and U(θ) the EM terms,
for every θ: ``L(θ) - e_orig(θ)/(n-1) <= e_switch(θ) <= U(θ) - e_orig(θ)/(n-1) <= U(θ)``. Hence

* a certified lower bound on ``min γ e_orig + L`` over K is a certified ``h*`` of ``(γ + 1/(n-1)) e_orig +
  e_switch`` (a lower step at γ + 1/(n-1)); a lower bound ``B`` on MR computed from L over S gives ``B - 1/(n-1)``
  (ratio) or ``B - ε/(n-1)`` (difference) for the exact MR (:func:`lower_shift`);
* an upper bound on MR computed from U over S bounds the exact MR (no correction).

The cells are the union of K/2 equal-count and K/2 equal-width cuts of the values (a cell's Jensen–EM gap grows
with its count times its squared width).

**One point, any n** (:func:`switch_interval`). At a fixed θ both sides of the pairs are numbers: the rows' margins
``u_j = y_j a_j`` (per label) and the values' scores ``v = y G_v b``. Sorting both and cutting each into cells,
the pair of cells (α, β) holds ``N_α N_β`` pairs with ``u + v`` in ``[lo_α + lo_β, hi_α + hi_β]`` and mean
``μ_α + μ_β``; ℓ(u + v) is convex in (u, v) and in u + v, so Jensen (below) and Edmundson–Madansky (above) bound
the cell pair's sum. O(n log n + cells²): an interval of a few 1e-7 relative width for e_switch at any n, used
for the members found during the search (the final members are evaluated exactly when the pairs allow it).

**Where the cells start** (``PAIRS``). Measured with ``benchmarks/bench_mcr_classification.py --crossover`` (CPU
seconds, one BLAS thread, the two paths alternating on the same fitted set, 2026-11-27, a loaded 2-core machine;
logistic, ε = 0.1, upper / lower gaps in brackets):

* synthetic 1,500 x 10, x0 (2.25e6 pairs): exact 7.7 s (1.98% / 0.25%), cells 5.6 s (1.98% / 0.25%);
* synthetic 2,200 x 10, x0 (4.84e6): exact 18.1 s (3.05% / 1.70%), cells 7.3 s (the same);
* synthetic 3,000 x 10, x0 (9.0e6): exact 34.4 s (3.61% / 2.26%), cells 7.7 s (the same);
* synthetic 4,000 x 10, x0 (1.6e7): exact 54.4 s (3.70% / 1.91%), cells 8.9 s (the same);
* synthetic 5,000 x 10, x0 (2.5e7): exact 87.7 s (4.38% / 2.23%), cells 10.3 s (the same);
* white wine, first 4,000 rows, density (2.5e6): exact 9.6 s (0.38% / 3.59%), cells 5.5 s (0.40% / 3.59%);
* white wine, all 4,898 rows, density (3.5e6, exact before): exact 14.4 s (6.68% / 3.17%), cells 8.1 s (6.68% /
  3.18%).

The bounds agree to 4 digits (white wine, 4,000 rows: upper bound 1.7019 against 1.7015; all rows: lower bound 0.9254
against 0.9255). The cells were faster at every size measured, from the first where they are fewer than the values;
at or below ``CELL_PAIRS`` they would be no fewer (``binned_terms`` gives the exact terms), so the cells start there.
"""

from __future__ import annotations

import math

import numpy as np

from .._steps import MCRModel, mr_value
from ._closed_results import _member
from ._terms import _BLOCK, MarginTerms

__all__ = [
    "BinnedTerms",
    "SwitchPlan",
    "binned_terms",
    "exact_switch",
    "interval_member",
    "lower_shift",
    "switch_interval",
]

CELL_PAIRS = 1 << 21  # pairs of the cell terms (cells x row classes): K = CELL_PAIRS / m, at least MIN_CELLS
# (values x row classes) above which one feature's MCR runs on cells (Pima: 5.9e5 pairs, exact): wherever the cells
# are fewer than the values (2^22 before; measured faster with the same bounds from 2.25e6 pairs, module docstring)
PAIRS = CELL_PAIRS
MIN_CELLS = 16
POINT_CELLS = 512  # cells per side of the one-point interval (switch_interval): ~2.6e5 cell pairs
# cell-term pairs (atoms x row classes) up to which the surrogate bounds of ._bounds, which hold about 15 whole
# arrays of them, run on the search's cells (10^5 x 20: 3.8e6); beyond (10^6 rows: 3.2e7, 4 GB), not: the slab bound
# gives the upper end and the γ = 0 step the lower one; a surrogate on a few coarse cells is the upper end's fallback
SURROGATE_PAIRS = 1 << 22
SPLIT_PAIRS = 1 << 20  # pairs per part of the terms where whole arrays are built from them (the descent: 8 MB each)
EXACT_PAIRS = 2e8  # pairs up to which the final members are evaluated exactly (n = 10^4: 1e8 pairs, ~1.5 s)


class BinnedTerms(MarginTerms):
    """:class:`._terms.MarginTerms` of one feature on atoms (cell means, or cell ends) instead of the distinct
    values: the same row classes, pair weights ``weight_atom·|class|/(n(n-1))`` (module docstring)."""

    def __init__(self, T: MarginTerms, atoms: np.ndarray, weights: np.ndarray):
        self.D, self.y, self.n, self.d = T.D, T.y, T.n, T.d
        self.gi, self.ri = T.gi, T.ri
        self.G = np.asarray(atoms, dtype=float)[:, None]
        self._aw = np.asarray(weights, dtype=float)
        self.Dr, self.ys, self._cls, self._size = T.Dr, T.ys, T._cls, T._size
        self._scale = T._scale
        m = len(self.ys)
        step = max(1, _BLOCK // max(m, 1))
        self._blocks = [slice(a, min(a + step, len(atoms))) for a in range(0, len(atoms), step)]
        # the weights of a block are one outer product: rebuilt per block (kept, K·m floats: 0.4 GB at 10^6 rows)
        self._wkeep = None

    def switch_is_orig(self) -> bool:
        return False

    def split(self, max_pairs: int) -> list[BinnedTerms]:
        """The terms as a sum of terms on runs of the atoms, each of at most ``max_pairs`` pairs (one atom at least):
        what materialises whole (atoms x row classes) arrays (the descent's quadratic) runs on each in turn."""
        step = max(1, int(max_pairs) // max(len(self.ys), 1))
        K = len(self.G)
        if step >= K:
            return [self]
        return [BinnedTerms(self, self.G[a : a + step, 0], self._aw[a : a + step]) for a in range(0, K, step)]

    def _weights(self, sl: slice) -> np.ndarray:
        return (self._aw[sl, None] * self._size[None, :]) * self._scale


def _cells(vals: np.ndarray, cnt: np.ndarray, K: int) -> np.ndarray:
    """Start indices of the cells of the sorted values (K/2 equal-count and K/2 equal-width cuts, merged)."""
    V = len(vals)
    if V <= K:
        return np.arange(V)
    half = max(K // 2, 1)
    cum = np.cumsum(cnt)
    by_count = np.searchsorted(cum, cum[-1] * np.arange(1, half) / half, side="right")
    by_width = np.searchsorted(vals, np.linspace(vals[0], vals[-1], half + 1)[1:-1], side="left")
    return np.unique(np.concatenate([[0], by_count, by_width]).clip(0, V - 1))


def _cell_stats(vals, cnt, starts):
    N = np.add.reduceat(cnt, starts)
    mu = np.add.reduceat(cnt * vals, starts) / N
    ends = np.append(starts[1:], len(vals)) - 1
    lo, hi = vals[starts], vals[ends]
    return N, np.clip(mu, lo, hi), lo, hi


def binned_terms(T: MarginTerms, cells: int | None = None):
    """``(L, U)``: the Jensen and Edmundson–Madansky :class:`BinnedTerms` of one feature (module docstring), or None
    when the exact pairs are few (at most ``PAIRS``) or the group has several features."""
    V, m = len(T.G), len(T.ys)
    if len(T.gi) != 1 or (cells is None and V * m <= PAIRS):
        return None
    K = int(cells) if cells is not None else max(MIN_CELLS, CELL_PAIRS // max(m, 1))
    if K >= V:
        return None
    vals, cnt = T.G[:, 0], T._counts
    N, mu, lo, hi = _cell_stats(vals, cnt, _cells(vals, cnt, K))
    lower = BinnedTerms(T, mu, N)
    w = hi - lo
    lam = np.where(w > 0, (hi - mu) / np.where(w > 0, w, 1.0), 1.0)
    upper = BinnedTerms(T, np.concatenate([lo, hi]), np.concatenate([N * lam, N * (1.0 - lam)]))
    return lower, upper


def lower_shift(n: int, eps: float, kind: str) -> float:
    """What a lower bound on MR computed from the Jensen terms over S loses for the exact MR (module docstring)."""
    return 1.0 / (n - 1.0) if kind == "ratio" else eps / (n - 1.0)


def _side_cells(x: np.ndarray, w: np.ndarray, K: int):
    """Cells of the weighted points x (count, mean, least, largest), sorted."""
    o = np.argsort(x, kind="stable")
    xs, ws = x[o], w[o]
    keep = ws > 0
    xs, ws = xs[keep], ws[keep]
    if not len(xs):
        return (np.zeros(0),) * 4
    return _cell_stats(xs, ws, _cells(xs, ws, K))


def switch_interval(T: MarginTerms, theta: np.ndarray, loss, cells: int = POINT_CELLS) -> tuple[float, float]:
    """A certified interval ``(lo, hi)`` containing the exact e_switch of one feature's terms at θ, in
    O(n log n + cells²) (module docstring; the exact loss of ``loss``)."""
    n = T.n
    a = T.Dr @ theta[T.ri]  # rest scores of the row classes (labels T.ys, sizes T._size)
    b = T.G @ theta[T.gi]  # scores of the distinct values (counts T._counts)
    f = loss.exact
    s_lo = s_hi = 0.0
    for s in (1.0, -1.0):
        rows = T.ys == s
        if not rows.any():
            continue
        Nu, mu_u, lo_u, hi_u = _side_cells(s * a[rows], T._size[rows], cells)
        Nv, mu_v, lo_v, hi_v = _side_cells(s * b, T._counts, cells)
        NN = Nu[:, None] * Nv[None, :]
        mean = mu_u[:, None] + mu_v[None, :]
        lo, hi = lo_u[:, None] + lo_v[None, :], hi_u[:, None] + hi_v[None, :]
        mean = np.clip(mean, lo, hi)
        w = hi - lo
        lam = np.where(w > 0, (hi - mean) / np.where(w > 0, w, 1.0), 1.0)
        s_lo += float(np.sum(NN * f(mean)))
        s_hi += float(np.sum(NN * (lam * f(lo) + (1.0 - lam) * f(hi))))
    own = float(np.sum(f(T.y * (T.D @ theta))))  # the pairs (j, j): exact
    scale = 1.0 / (n * (n - 1.0))
    lo_es, hi_es = (s_lo - own) * scale, (s_hi - own) * scale
    pad = 1e-12 * (abs(lo_es) + abs(hi_es)) + 1e-15  # rounding of the sums
    return max(lo_es - pad, 0.0), hi_es + pad


def exact_switch(T: MarginTerms, theta: np.ndarray, loss) -> float:
    """The exact e_switch of one feature's terms at θ: ``[Σ_c |c| Σ_v cnt_v ℓ(y_c(a_c + G_v b)) - Σ_j ℓ(m_j)]/(n(n-1))``
    (every pair, then the own pairs subtracted; no pair weights built), V·m loss evaluations in blocks."""
    a = T.Dr @ theta[T.ri]
    b = T.G @ theta[T.gi]
    f, cnt = loss.exact, T._counts
    step = max(1, _BLOCK // max(len(b), 1))
    total = 0.0
    for c0 in range(0, len(a), step):
        c1 = min(c0 + step, len(a))
        M = (a[c0:c1, None] + b[None, :]) * T.ys[c0:c1, None]
        total += float(T._size[c0:c1] @ (f(M) @ cnt))
    own = float(np.sum(f(T.y * (T.D @ theta))))
    return (total - own) / (T.n * (T.n - 1.0))


def interval_member(ms, T: MarginTerms, theta, kind: str, side: str):
    """The MCRModel of θ with e_switch from :func:`switch_interval` when the exact pairs are too many (more than
    ``EXACT_PAIRS``), else exact: for the lower end its upper end (the member's MR is at most the reported one),
    for the upper end its lower end; ``(model, exact)``."""
    if theta is None:
        return None, True
    if len(T.G) * len(T.ys) <= EXACT_PAIRS:
        a, b = T.e_orig(theta, ms.loss), exact_switch(T, theta, ms.loss)
        exact = True
    else:
        a = T.e_orig(theta, ms.loss)
        lo, hi = switch_interval(T, theta, ms.loss)
        b, exact = (hi if side == "lower" else lo), False
    est = ms.par.estimator(theta)
    mr = mr_value(a, b, kind)
    if not math.isfinite(mr):
        return None, exact
    return MCRModel(np.asarray(theta), a, b, mr, {"coef": est.coef_, "intercept": est.intercept_}, est), exact


class SwitchPlan:
    """How one MCR evaluates e_switch: the exact pairs, or (more than ``PAIRS``) cells of the feature's values.

    ``TL``/``TU``: the terms of the searches and lower bounds / of the upper bounds (both the exact terms, or the
    Jensen and Edmundson–Madansky cell terms); ``g_shift``: what a lower step on TL at γ certifies (γ + g_shift, the
    own pairs' correction); ``l_shift``: what a lower bound on MR from TL loses (:func:`lower_shift`)."""

    def __init__(self, T: MarginTerms, eps: float, kind: str):
        cells = binned_terms(T)
        self.T, self.on = T, cells is not None
        self.TL: MarginTerms = T if cells is None else cells[0]
        self.TU: MarginTerms = T if cells is None else cells[1]
        self.g_shift = 1.0 / (T.n - 1.0) if self.on else 0.0
        self.l_shift = lower_shift(T.n, eps, kind) if self.on else 0.0
        # whether the surrogate bounds may build whole arrays of the cell terms (SURROGATE_PAIRS)
        self.whole = not self.on or len(self.TU.G) * len(T.ys) <= SURROGATE_PAIRS
        self._coarse: tuple | None = None

    def surrogate_terms(self) -> tuple[MarginTerms, MarginTerms]:
        """``(TL, TU)`` for the surrogate bounds: the search's, or where they are too many to build whole
        (``whole`` False) a few coarse cells (certified as well, looser)."""
        if self.whole:
            return self.TL, self.TU
        if self._coarse is None:
            K = max(4, SURROGATE_PAIRS // (8 * max(len(self.T.ys), 1)))
            self._coarse = binned_terms(self.T, cells=K) or (self.TL, self.TU)
        return self._coarse

    def interval(self, theta, loss) -> tuple[float, float]:
        """``(lower, upper)`` of the exact e_switch at θ (equal when the pairs are exact)."""
        if not self.on:
            v = self.T.e_switch(theta, loss)
            return v, v
        return switch_interval(self.T, theta, loss)

    def members(self, ms, kind, lth, uth, ref_theta, notes):
        """The final members ``(lower, upper, reference, reference's lower-side model)``, each evaluated once
        (exact when the pairs allow it; else the conservative end of the interval); a note says which."""
        T = self.T
        if not self.on:
            lmod, umod, ref = (_member(ms, T, th, kind) for th in (lth, uth, ref_theta))
            return lmod, umod, ref, ref
        (lmod, ex_l), (umod, ex_u) = (
            interval_member(ms, T, lth, kind, "lower"),
            interval_member(ms, T, uth, kind, "upper"),
        )
        ref, ex_r = interval_member(ms, T, ref_theta, kind, "lower")
        ref_lo = ref if ex_r else interval_member(ms, T, ref_theta, kind, "upper")[0]
        notes.append(
            f"e_switch on {len(self.TL.G)} cells of the feature's {len(T.G)} values (certified Jensen and "
            "Edmundson-Madansky bounds); the members' MR "
            + ("exact" if ex_l and ex_u else "from a certified interval of e_switch (the conservative end)")
            + ("" if self.whole else "; no quadratic-surrogate bounds (too many cell pairs to build them whole)")
        )
        return lmod, umod, ref, ref_lo
