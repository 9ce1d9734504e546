"""MCR of linear classifiers (logistic and hinge losses): certified at both ends.

**Lower end (MCR-), γ >= 0.** ``min_K γ·e_orig + e_switch`` is convex; it is solved by
projected Newton (:class:`~rashomon.solvers.SmoothBallProgram`) on K = the norm ball with the
intercept in an interval containing the Rashomon set S (:func:`._bounds.intercept_interval`),
with the Frank–Wolfe duality gap as certificate: the solver's ``lower_bound`` is a lower bound
on h* whatever its accuracy, so each step gives a valid bound (Fisher et al. 2019, §6:
``MR >= h*/ε - γ`` for h* >= 0; difference ``h* - (1+γ)ε``), since a minimum over K ⊇ S is
a minimum over a superset. For the hinge a decreasing schedule of smoothings is minimised and the
bound is the weak-duality bound of the exact hinge problem at the smoothed multipliers
(:mod:`._solve`); steps far from the end are solved coarsely (their bounds stay valid).
γ is found by safeguarded regula falsi on ``e_orig(θ_γ) = ε``; a member attaining the bound is the
minimiser at the bracketing γ or a point of the segment between the two bracketing minimisers with
``e_orig = ε`` (e_orig is convex on it).
When the e_switch minimiser already lies in S, γ < 0 is needed (non-convex): the bound is the
larger of the γ = 0 bound and (logistic loss) the surrogate bounds of :mod:`._bounds`
(expanded at the γ = 0 minimiser and at the best member; for the hinge they never win), and the
member is found by a local descent from several starts (:mod:`._descent`; members with
MR < 1 exist); its MR minus the bound is the reported gap.

**Upper end (MCR+).** Inner value: Dinkelbach's method with the convex e_switch linearised
(convex–concave procedure) from several starts; every iterate is a member of S and MR never
decreases. Outer bound: the smaller of :func:`._bounds.surrogate_bound` and, for one
feature, :func:`._secant.secant_upper_bound` (row envelopes on slabs of the switched
coefficient, searched by the branch and bound of :mod:`._bnb`; proofs in their modules; a budget of work, or
``max_time`` seconds from the start of the call, and skipped when the surrogate bound is already within
``gap_tol`` of the best member). The result reports both, the gap, and flags gaps above 5%.

**Large sets.** Above about 2·10^6 (value, row class) pairs (a continuous feature at 1,500+ rows) the searches and
the γ-steps and surrogates run on cells of the feature's values (:mod:`._binned`): a certified minorant of e_switch
for the lower end, a certified majorant for the upper end's surrogate (the slab bounds use the exact values and
counts); members are ranked by a certified interval of their e_switch, and the final members are evaluated exactly
(up to 2·10^8 pairs; beyond, the conservative end of that interval, as the notes say).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...utils import single_blas_thread
from ...utils.losses import canonical_loss_name
from .._results import MCRResult
from .._steps import MCRStep, level_point, mr_value, step_bound
from ._binned import SwitchPlan
from ._bounds import ScoreRanges, intercept_interval
from ._bounds import bound_loss as _bound_loss
from ._bounds import surrogate_list as _surrogate
from ._clock import Clock
from ._closed_results import _collapsed_result, _factorial_result
from ._lp_ranges import tighten_ranges
from ._secant import secant_upper_bound
from ._solve import solve_margin
from ._terms import MarginTerms

__all__ = ["MarginSet", "margin_mcr"]


class _OrigTerms(MarginTerms):
    """The e_orig terms of the set (no switched group): :class:`._terms.MarginTerms` whose switched-pair parts (row
    classes, an n x d copy of the design at 10^6 rows) are built only if something asks for them; e_orig and its
    derivatives use the design itself."""

    _LAZY = frozenset({"G", "_inv", "_counts", "Dr", "ys", "_cls", "_size", "_scale", "_blocks", "_wkeep"})

    def __init__(self, D: np.ndarray, y: np.ndarray):
        self.D, self.y = D, y
        self.n, self.d = D.shape
        self.gi, self.ri = np.zeros(0, dtype=int), np.arange(D.shape[1])

    def __getattr__(self, name):  # only for attributes not set: the switched parts, built once
        if name not in _OrigTerms._LAZY or "D" not in self.__dict__:
            raise AttributeError(name)
        MarginTerms.__init__(self, self.D, self.y, self.gi)
        return self.__dict__[name]


class MarginSet:
    """The fitted pieces of a classifier Rashomon set: design, labels, loss, ε, K and θ_min."""

    def __init__(self, par, X, ye):
        self.par, self.y = par, ye
        self.D = par.design(X)
        self.loss = par.info["margin_loss"]  # smoothed at the class's τ for the hinge
        self.B, self.r, self.o = par.B, par.r, par.o
        self.orig = _OrigTerms(self.D, ye)
        self._icpt: dict = {}
        self._hchol = None

    def hessian_cholesky(self) -> np.ndarray:
        """Lower Cholesky factor of the Hessian of e_orig at θ_min (the hinge smoothed at 0.05; a 1e-9 relative
        ridge): the metric of the ranges' first multiplier and of the sampler's chains. Computed once."""
        if self._hchol is None:
            d = self.D.shape[1]
            H = self.orig.orig_parts(self.theta_min, self.loss.smoothed(0.05), 2)[2]
            H = 0.5 * (H + H.T) + 1e-9 * np.trace(H) / d * np.eye(d)
            self._hchol = np.linalg.cholesky(H)
        return self._hchol

    def intercept_range(self, eps):
        """A certified interval containing the intercept on S at ε: Jensen's
        (:func:`._bounds.intercept_interval`) cut by the Lagrangian bounds of the two searches along
        ± the intercept (:func:`._ascent.coordinate_extremes`; about half as wide on Pima). Computed
        once per ε."""
        lo, hi = intercept_interval(self.D, self.y, self.o, self.B, self.r, self.loss, eps)
        if not self.o:
            return lo, hi
        key = float(eps)
        if key not in self._icpt:
            from ._ascent import coordinate_extremes

            a, b = coordinate_extremes(self, self.orig, self.loss, eps, lo, hi, coords=(0,)).coef_range(0)
            lo2, hi2 = np.maximum(lo, a), np.minimum(hi, b)
            self._icpt[key] = (lo2, hi2) if np.all(lo2 <= hi2) else (lo, hi)
        return self._icpt[key]

    # ------------------------------------------------------------------ convex solves
    def solve(self, w_orig, w_switch, terms, lo, hi, x0=None, lin=None, tol=1e-11, loss=None, atol=None):
        """Minimise ``w_orig·e_orig + w_switch·e_switch (+ lin'θ)`` over K (:func:`._solve.solve_margin`:
        Newton; for the hinge a smoothing schedule with a dual certificate). Returns ``(θ, certified lower bound
        of the *exact*-loss objective, certified)``. ``loss`` replaces the set's (smoothed) loss for one
        warm-started solve (local searches)."""
        return solve_margin(self.B, self.r, self.loss, w_orig, w_switch, terms, lo, hi, x0, lin, tol, loss, atol)

    def fit(self, eps_hint=None):
        """θ_min and e_min (exact loss) over the ball; the intercept interval uses e_orig(start) >= e_min."""
        x0 = np.zeros(self.D.shape[1])
        if self.o:
            p = float(np.mean(self.y > 0))
            x0[0] = math.log(p / (1 - p)) if self.loss.name == "logistic" else 0.0
        e0 = self.orig.e_orig(x0, self.loss)
        lo, hi = intercept_interval(self.D, self.y, self.o, self.B, self.r, self.loss, e0 * (1 + 1e-9) + 1e-12)
        theta, lb, ok = self.solve(1.0, 0.0, self.orig, lo, hi, x0, atol=1e-10 * e0)
        self.theta_min = theta
        self.e_min = self.orig.e_orig(theta, self.loss)
        self.e_min_lower = lb
        return theta, self.e_min


def margin_mcr(*args, **kwargs) -> MCRResult:
    """MCR of ``group`` (feature indices) over the fitted classifier set ``ms`` (see the module docstring), with
    one BLAS thread: no loss at these sizes (n x d products), and the bits then do not depend on the process's
    thread count (a joblib worker has one). ``ends``: the ends whose members and tight bound are searched (an end left
    out keeps the γ = 0 or surrogate bound); ``gap_tol=inf``: no slab search and no set row ranges for the upper end."""
    return single_blas_thread(lambda: _margin_mcr(*args, **kwargs))


def _margin_mcr(
    ms: MarginSet,
    columns,
    group,
    *,
    e_ref,
    epsilon_abs,
    reference_theta,
    kind,
    tol,
    max_iter,
    n_starts,
    random_state,
    func,
    max_time=None,
    gap_tol=0.01,
    ends=("lower", "upper"),
) -> MCRResult:
    deadline = (clock := Clock(max_time)).deadline  # the whole call's limit; its notes say what it cut short
    eps = float(epsilon_abs)
    if kind == "ratio" and not eps > 0:
        from ...utils.validation import RashomonInputError

        raise RashomonInputError(
            f"The 'kind' parameter of {func} must be 'difference' when epsilon_abs = {eps:g}: every member of the set "
            f"has e_orig = 0 (the class separates the data, e_min = {float(ms.e_min):g}), so the ratio MR = "
            "e_switch/e_orig is undefined. Got 'ratio' instead; use kind='difference', or an absolute epsilon > 0 "
            "(epsilon_kind='absolute')."
        )
    loss, B, r = ms.loss, ms.B, ms.r
    gi = np.asarray(group, dtype=int) + ms.o
    T = MarginTerms(ms.D, ms.y, gi)
    flat = None
    if loss.name == "hinge" and eps <= ms.e_min * (1 + 1e-6) and not T.switch_is_orig():
        from ._minimiser import minimiser_bounds  # the set is (a sliver around) the minimiser set

        flat = minimiser_bounds(ms, T, eps, kind)
        if flat is not None and flat[1] - flat[0] <= 1e-3 * max(1.0, abs(flat[0])):
            return _collapsed_result(ms, T, columns, group, eps, e_ref, reference_theta, kind, tol, loss, flat)
    lo, hi = ms.intercept_range(eps)
    e_o = lambda th: T.e_orig(th, loss)  # noqa: E731
    if T.switch_is_orig():
        return _factorial_result(ms, T, columns, group, eps, e_ref, reference_theta, kind, tol, loss)
    # the pairs exact, or (many: 10^4+ rows) cells of the feature's values: minorant TL, majorant TU (._binned)
    sp = SwitchPlan(T, eps, kind)
    TL, TU = sp.TL, sp.TU
    cand: list = []
    memo: list = []

    def extremes():
        """The coordinate extremes of S (starts of both local searches), computed once, by whichever end asks first."""
        if not memo:
            from ._ascent import coordinate_extremes

            memo.append(coordinate_extremes(ms, TL, loss, eps, lo, hi))
        return memo[0]

    def add(th):
        if th is not None and th @ B @ th <= r * (1 + 1e-9):
            eo = e_o(th)
            if eo <= eps:
                cand.append((th, eo, *sp.interval(th, loss)))  # lower end: ranked by the upper value, and vice versa
                return cand[-1]
        return None

    add(ms.theta_min)
    if reference_theta is not None:
        add(reference_theta)
    steps: list[MCRStep] = []
    cache: dict = {}

    def step(g, x0, coarse=None, again=False):
        if g in cache and not again:
            return cache[g]
        # accuracy of the step (hinge schedule): an eighth of the current gap of the lower end, at least the
        # tolerance; each step's bound is valid whatever its accuracy, so steps far from the end are cheap
        if coarse is None:
            coarse = min(best("lower")[1] - lower_bound(), 1e-3) if steps else 0.0
        # the scale of the bound: before any step (the difference kind's lower bound is -inf), the MR of the best
        # member; a tolerance is never infinite
        lb0 = lower_bound()
        scale = abs(lb0) if math.isfinite(lb0) else abs(best("lower")[1])
        scale = max(1.0, scale if math.isfinite(scale) else 1.0)
        th, lb, ok = ms.solve(g, 1.0, TL, lo, hi, x0, atol=(eps if eps > 0 else 1.0) * max(tol * scale, coarse) / 8)
        c = add(th)
        es = 0.5 * (c[2] + c[3]) if c is not None else float(np.mean(sp.interval(th, loss)))
        st = MCRStep("lower", float(g) + sp.g_shift, lb, th, e_o(th), es, bool(ok))
        steps.append(st)
        cache[g] = st
        return st

    def lower_bound():
        v = [step_bound(s, eps, kind) for s in steps]
        v = [x for x in v if np.isfinite(x)]
        return max(v) if v else (0.0 if kind == "ratio" else -math.inf)

    def best(side):
        if not cand:
            return None, (math.inf if side == "lower" else -math.inf)
        mrs = [mr_value(c[1], c[3] if side == "lower" else c[2], kind) for c in cand]
        i = int(np.argmin(mrs) if side == "lower" else np.argmax(mrs))
        return cand[i][0], mrs[i]

    def segment(a, b):
        """A point with e_orig = ε between a (outside S) and b (inside): e_orig is convex along the segment."""
        add(level_point(e_o, a, b, eps))

    notes = clock.notes
    coarse0 = 1e-4 if loss.name == "hinge" else 0.0  # refined below when the γ = 0 bound is the one that counts
    s0 = step(0.0, ms.theta_min, coarse=coarse0)
    if s0.e_orig > eps and "lower" in ends:
        g_lo, g_hi, x = 0.0, None, s0.theta
        g = max(s0.e_switch / max(s0.e_orig, 1e-300), 1e-3)
        for _ in range(60):
            st = step(g, x)
            if st.e_orig <= eps:
                g_hi = g
                break
            g_lo, x, g = g, st.theta, 2 * g
        if g_hi is not None:
            f_lo, f_hi = cache[g_lo].e_orig - eps, cache[g_hi].e_orig - eps
            last = None
            for it in range(max_iter):
                segment(cache[g_lo].theta, cache[g_hi].theta)
                lb = lower_bound()
                if best("lower")[1] - lb <= tol * max(1.0, abs(lb)) or clock.late("the lower end's γ search"):
                    break
                use = f_lo > f_hi and it % 3 != 2
                g = g_hi - f_hi * (g_hi - g_lo) / (f_hi - f_lo) if use else 0.5 * (g_lo + g_hi)
                if not g_lo < g < g_hi:
                    g = 0.5 * (g_lo + g_hi)
                if g in (g_lo, g_hi):
                    break
                st = step(g, cache[g_hi].theta)
                if st.e_orig <= eps:
                    g_hi, f_hi = g, st.e_orig - eps
                    f_lo = f_lo * 0.5 if last == "hi" else f_lo
                    last = "hi"
                else:
                    g_lo, f_lo = g, st.e_orig - eps
                    f_hi = f_hi * 0.5 if last == "lo" else f_hi
                    last = "lo"
    ranges = ScoreRanges(ms.D, ms.y, B, r, lo, hi, _bound_loss(loss), _bound_loss(loss).offset, eps, ms.theta_min)
    quick = max_time is not None and max_time < 5.0  # or no end needs them (members only, or the γ >= 0 lower end)
    quick = quick or (gap_tol == math.inf and ("lower" not in ends or s0.e_orig > eps))
    tighten_ranges(ms, ranges, loss, eps, lo, hi, quick=quick)  # (._lp_ranges)
    lower = lower_bound()
    if s0.e_orig <= eps and "lower" in ends and not clock.late("the lower end's search below γ = 0"):
        notes.append(
            "lower end: the e_switch minimiser lies in the set, so the tight bound needs γ < 0 (non-convex); "
            + (
                "the bound is the best of γ = 0, the quadratic-surrogate bound and (one feature) the slab bound"
                if loss.name == "logistic"
                else "the bound is the best of γ = 0 and (one feature, small sets) the slab bound"
            )
            + ", the member is found by a local descent"
        )
        from ._descent import descend_lower, polish_lower
        from ._lower_end import lower_end_slabs

        th_0 = best("lower")[0]
        for th in descend_lower(ms, TL, loss, eps, lo, hi, kind, cand, extremes, (n_starts, random_state)):
            add(th)
        for th in polish_lower(
            ms, TL, loss, eps, kind, [c[0] for c in sorted(cand, key=lambda c: mr_value(c[1], c[3], kind))]
        ):
            add(th)
        th_x = best("lower")[0]
        # each expansion point gives a valid bound; not for the hinge, whose surrogates (the 0.05-smoothing's
        # curvature: 5 near the kink, 0 elsewhere) never beat the γ = 0 bound (Pima: 0.60-0.90 vs 0.91-0.96)
        # (cell terms too many to build whole, sp.whole: not; 10^6 rows, where the γ = 0 bound on the search's cells
        # is the better one)
        for th in ((th_0, th_x) if th_x is not th_0 else (th_0,)) if loss.name == "logistic" and sp.whole else ():
            for bl in _surrogate(TL, ranges, loss, th, eps, kind, "lower", B, r):
                lower = max(lower, bl - sp.l_shift)
        left = None if deadline is None else max(0.0, (deadline - time.monotonic()) / 2)  # half for the lower end
        opts = {"max_time": left, "terms": TL, "notes": notes, "gap_tol": gap_tol}
        lower = lower_end_slabs(ms, T, ranges, loss, eps, lo, hi, kind, extremes, best, add, lower, **opts)
    lth, lmr = best("lower")
    if coarse0 and s0.e_orig <= eps and lmr - lower <= 100 * coarse0:
        lower = max(lower, step_bound(step(0.0, s0.theta, coarse=0.0, again=True), eps, kind))
        lth, lmr = best("lower")
    # ---------------------------------------------------------------- upper end
    from ._ascent import ascend_upper

    if "upper" in ends and not clock.late("the ascent of the upper end"):
        for th in ascend_upper(ms, TL, loss, eps, lo, hi, kind, n_starts, random_state, extremes):
            add(th)
    uth, umr = best("upper")
    # the hinge's surrogate outer bound is useless where the slab bound applies (Pima: 42-159 vs 1.7-2.5), so
    # for one feature it is the fallback only
    # (so is it where the cell terms are too many for the surrogate to build whole: then on coarse cells, sp.whole)
    slab_first = (loss.name == "hinge" or not sp.whole) and uth is not None and len(gi) == 1 and gap_tol < math.inf
    upper = (
        math.inf if slab_first else min(_surrogate(TU, ranges, loss, uth, eps, kind, "upper", B, r), default=math.inf)
    )
    # row envelopes on slabs of the switched coefficient (._secant; a deterministic work budget), only
    # where it can tighten
    rep: list = []
    if uth is not None and len(gi) == 1 and not (np.isfinite(upper) and upper - umr <= gap_tol * abs(upper)):
        b_lim = extremes().coef_range(int(gi[0]))
        opts = {"gap_tol": gap_tol, "deadline": deadline} | ({} if deadline is None else {"budget": math.inf})
        sec = secant_upper_bound(ms, T, ranges, loss, eps, lo, hi, kind, umr, b_limits=b_lim, report=rep, **opts)
        upper = min(upper, sec) if np.isfinite(sec) else upper
    if slab_first and not np.isfinite(upper):
        upper = min(_surrogate(sp.surrogate_terms()[1], ranges, loss, uth, eps, kind, "upper", B, r), default=math.inf)
    if flat is not None:  # the minimiser set's box (a hinge set at ε = e_min) bounds both ends too
        lower, upper = max(lower, flat[0]), min(upper, flat[1])
    lmod, umod, ref, ref_lo = sp.members(ms, kind, lth, uth, reference_theta, notes)  # each evaluated once
    lmr, umr = (lmr if lmod is None else lmod.mr), (umr if umod is None else umod.mr)
    upper = max(upper, umr)  # rounding guard: the outer bound is never below an attained value
    lower = min(lower, lmr)
    lgap, ugap = max(lmr - lower, 0.0), max(upper - umr, 0.0)
    if rep and rep[0].exhausted and upper == rep[0].bound and ugap > gap_tol * max(abs(upper), 1e-300):
        why = "the time limit (max_time) ran out" if rep[0].timed_out else "the work budget ran out"
        why = "the bound stalled (at its rate the work budget would not reach gap_tol)" if rep[0].stalled else why
        notes.append(f"upper end: {why} with the gap at {ugap / abs(upper):.1%} (target gap_tol = {gap_tol:g})")
    if np.isfinite(upper) and ugap > 0.05 * max(abs(upper), 1e-300):
        notes.append(
            f"upper end: the outer bound is {ugap / abs(upper):.1%} above the best member found (gap above 5%)"
        )
    if lgap > 0.05 * max(abs(lower), 1e-300):
        notes.append(
            f"lower end: the bound is {lgap / max(abs(lower), 1e-300):.1%} below the best member found (gap above 5%)"
        )

    lo_ok = up_ok = all(s.certified for s in steps)
    slack = 4 * tol * max(1.0, abs(lower), abs(upper))
    if (
        ref is not None
        and ref_lo is not None
        and ref.e_orig <= eps * (1 + 1e-12)
        and not (lower - slack <= ref.mr and ref_lo.mr <= upper + slack)
    ):
        lo_ok = up_ok = False
        notes.append(f"consistency check failed: MR(reference) = {ref.mr:.10g} outside [{lower:.10g}, {upper:.10g}]")
    up_ok = up_ok and np.isfinite(upper)
    names = tuple(columns[i] if columns else f"x{i}" for i in group)
    return MCRResult(
        lower=float(lower),
        upper=float(upper),
        lower_model=lmod,
        upper_model=umod,
        lower_gap=float(lgap),
        upper_gap=float(ugap),
        lower_tight=bool(lgap <= tol * max(1.0, abs(lower)) and lo_ok),
        upper_tight=bool(ugap <= tol * max(1.0, abs(upper)) and up_ok),
        gamma_lower=float(max(steps, key=lambda s: np.nan_to_num(step_bound(s, eps, kind), nan=-np.inf)).gamma),
        gamma_upper=math.nan,
        kind=kind,
        features=names,
        epsilon_abs=eps,
        e_ref=float(e_ref),
        e_min=float(ms.e_min),
        reference_model=ref,
        steps=steps,
        model_class=ms.par.class_name,
        tol=tol,
        certified=bool(lo_ok and up_ok),
        lower_certified=bool(lo_ok),
        upper_certified=bool(up_ok),
        loss=canonical_loss_name(loss.name),
        notes="; ".join(notes),
    )
