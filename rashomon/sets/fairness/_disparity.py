"""Certified ranges of group disparities over a Rashomon set (the engine of :meth:`RashomonSet.disparity_range`).

A disparity compares a group metric (:mod:`._fair_metrics`) between two groups: ``m_g - m_h``
(``kind="difference"``) or ``m_g / m_h`` (``"ratio"``). How each range is computed:

* **linear** metrics (mean prediction / residual of a regression class, mean score of a classifier): the
  difference is a linear functional ``c'θ + c0``, ranged exactly by the set's functional engine
  (:mod:`._functional`, or the classifier engine); the ratio is a linear-fractional programme solved by
  Dinkelbach's iteration, each step one exact functional minimum. Certificate: for every member
  ``N - tD >= L(t)``, so ``N/D >= t + L(t)/D_max`` when ``L >= 0`` and ``>= t + L(t)/D_min`` otherwise
  (``D > 0`` on the set, checked; ``D_min``, ``D_max`` are certified ends of its own range).
* **quadratic**: the squared loss of a group. ``N = L_g - L_h`` is an indefinite quadratic; its minimum over
  the set is the γ-search of the MCR *difference* with ``e_switch := N + e_orig`` (so ``e_switch - e_orig = N``):
  every certified step bounds N by Lagrangian duality on ``e_orig <= ε`` and the search drives a member to
  the bound (exact, as MCR is). The ratio by Dinkelbach over such searches.
* **rowwise** (anything whose row value is monotone in its row's score: probabilities, decisions at a threshold,
  log / hinge loss): every row at its own certified extreme gives a certified *outer* bound; on classifier sets
  (difference kind, up to 50,000 rows) it is tightened by the joint bound of :mod:`._joint` (envelopes of the
  row functions maximised over the set as one convex programme; for logistic sets the loss constraint moved
  into the rows, :mod:`._joint_lagrange`; for decisions also the dual of a linear programme,
  :mod:`._step_bound`); members found by ascent (linearise the smoothed disparity, jump to the exact extreme
  member of that linear functional, keep the best point on the segment) and by the joint bound's iterations
  give *attained inner* values. Both are reported, with the gap.

With more than two groups, each group is compared with the reference group, plus fairlearn's between-groups
summary: ``max_g m_g - min_g m_g`` (difference) or ``min_g m_g / max_g m_g`` (ratio).
"""

from __future__ import annotations

import math

import numpy as np

from ...model_classes.quadratics import MCRProblem, Quadratic
from ...utils.validation import RashomonInputError
from ._fair_metrics import MetricSpec
from ._functionals import _degenerate, engine_at, min_functionals

__all__ = ["range_rows", "engine_at", "quad_min", "between_value"]

_EXACT_TOL = 1e-6
_JOINT_MAX_ROWS = 50_000  # the joint bound of row-wise disparities (one convex programme per end) up to this many rows


def quad_min(rs, N: Quadratic, eps, tol=2.0**-20, max_iter=100, srch=None):
    """``(bound, theta, value, search)`` of ``min_S N(θ)`` for a quadratic N (squared-loss classes), by the γ-search."""
    from ..quadratic import GammaSearch

    if _degenerate(rs, eps):
        v = N(rs.theta_min_)
        return v, rs.theta_min_, v, srch
    if srch is None:
        D = rs.e_orig_form_
        prob = MCRProblem(D, Quadratic(N.Q + D.Q, N.c + D.c, N.k + D.k), rs.parametrization_, ("disparity",))
        srch = GammaSearch(prob, "difference", tol, max_iter, theta_min=rs.theta_min_)
    srch.search("lower", eps, start=None if not srch.steps else _finite(srch.best_gamma("lower", eps)))
    srch.recertify("lower", eps)
    bound = srch.best_bound("lower", eps)
    th, val = best_inside(rs, srch, eps, lambda t: srch.prob.e_switch(t) - srch.prob.e_orig(t))
    k = max(abs(float(N.k)), abs(float(rs.e_orig_form_.k)))
    bound -= 2e3 * np.finfo(float).eps * k  # the rounding of losses of size k (as the MCR result)
    if th is None or not np.isfinite(bound):
        raise RashomonInputError(
            "disparity_range: the γ-search found no certified bound for a quadratic disparity; please report this data."
        )
    return float(bound), th, float(val), srch


def best_inside(rs, srch, eps, value):
    """The search's best member, also trying the candidates the search put on the level ``e_orig = ε`` (at a jump
    of its minimisers) that rounding left just outside: each is moved toward θ_min (inside, the set is convex)
    until it is inside."""
    th, val = srch.best_model("lower", eps)
    c, tm, B, r = srch._cand, rs.theta_min_, srch.prob.B, srch.prob.r
    for t, eo, ok in zip(c["theta"], c["eo"], c["ok"]):
        if not (ok and eps < eo <= eps * (1 + 1e-9)):
            continue
        for d in (1e-13, 1e-11, 1e-9):
            t2 = tm + (1 - d) * (t - tm)
            if srch.prob.e_orig(t2) <= eps and t2 @ B @ t2 <= r:
                v = value(t2)
                if th is None or v < val:
                    th, val = t2, v
                break
    return th, val


def _finite(g):
    return g if np.isfinite(g) else None


def _dinkelbach(min_comb, den_lo, den_hi, t0, tol, max_iter=40):
    """Certified ``min N/D`` over the set with ``D >= den_lo > 0``: returns ``(bound, theta, value)``."""
    t, best_v, best_th, cert = t0, math.inf, None, -math.inf
    for _ in range(max_iter):
        L, th, n, d = min_comb(t)
        cert = max(cert, t + L / (den_hi if L >= 0 else den_lo))
        if n / d < best_v:
            best_v, best_th = n / d, th
        if best_v - cert <= tol * max(1.0, abs(best_v)) or not n / d < t:
            break
        t = n / d
    return cert, best_th, best_v


def between_value(G, kind):
    """fairlearn's between-groups summary of per-group values ``G`` (m, n_groups)."""
    return G.max(axis=1) - G.min(axis=1) if kind == "difference" else G.min(axis=1) / G.max(axis=1)


class _Ranger:
    """Ranges of pair disparities ``m_g ∘ m_h`` of one metric at one ε."""

    def __init__(self, rs, spec: MetricSpec, kind, eps, tol, func):
        self.rs, self.spec, self.kind, self.eps, self.tol, self.func = rs, spec, kind, eps, tol, func
        self._searches: dict = {}
        if spec.structure == "linear":
            self.A, self.a0 = spec.linear_forms()
        elif spec.structure == "quadratic":
            self.Lq = spec.quadratic_forms()

    # -------------------------------------------------------------- exact minima of one group combination
    def _comb_min(self, g, h, t, sign):
        """min over S of ``sign·(m_g - t·m_h)``: (bound, θ)."""
        rs, eps = self.rs, self.eps
        if self.spec.structure == "linear":
            c = sign * (self.A[g] - t * self.A[h])
            c0 = sign * (self.a0[g] - t * self.a0[h])
            b, th, _ = min_functionals(rs, c, np.atleast_1d(c0), eps, min(self.tol, 1e-10), self.func)
            return float(b[0]), th[0]
        Lg, Lh = self.Lq[g], self.Lq[h]
        N = Quadratic(sign * (Lg.Q - t * Lh.Q), sign * (Lg.c - t * Lh.c), sign * (Lg.k - t * Lh.k))
        key = (g, h, t, sign) if self.kind == "difference" else None  # searches for fixed N are reused across ε
        b, th, _, srch = quad_min(rs, N, eps, srch=self._searches.get(key))
        if key is not None:
            self._searches[key] = srch
        return b, th

    def _group_range(self, h):
        lo, _ = self._comb_min(h, h, 0.0, 1.0)
        hi, _ = self._comb_min(h, h, 0.0, -1.0)
        return lo, -hi

    def pair(self, g, h):
        """Exact range of the pair disparity: ``(lo, hi, lo_theta, hi_theta)``."""
        if self.kind == "difference":
            lo, th_lo = self._comb_min(g, h, 1.0, 1.0)
            nhi, th_hi = self._comb_min(g, h, 1.0, -1.0)
            return lo, -nhi, th_lo, th_hi
        dlo, dhi = self._group_range(h)
        if not dlo > 0:
            raise RashomonInputError(
                f"{self.func}: the ratio needs the reference group's metric positive on the whole "
                f"set; it can reach {dlo:.4g}. Use kind='difference'."
            )
        vals = lambda th: self.spec.group_values(th)[0]  # noqa: E731
        t0 = float(vals(self.rs.reference_theta_)[g] / vals(self.rs.reference_theta_)[h])
        out = []
        for sign in (1.0, -1.0):

            def comb(t, sign=sign):
                b, th = self._comb_min(g, h, sign * t, sign)
                v = vals(th)
                return b, th, sign * v[g], v[h]

            out.append(_dinkelbach(comb, dlo, dhi, sign * t0, self.tol))
        (lo, th_lo, _), (nhi, th_hi, _) = out
        return lo, -nhi, th_lo, th_hi


def _summary_bounds(lo, hi, kind):
    """Bounds on ``|d|`` (difference) or ``min(ρ, 1/ρ)`` (ratio) from bounds ``[lo, hi]`` on d or ρ."""
    if kind == "difference":
        return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))
    r = lambda v: 0.0 if not (0 < v < math.inf) else min(v, 1 / v)  # noqa: E731
    return min(r(lo), r(hi)), (1.0 if lo <= 1 <= hi else max(r(lo), r(hi)))


def _segment_zero(spec, kind, g, h, th_lo, th_hi, target):
    """The member on the segment between two members (inside the convex set) closest to ``d = target``: a grid,
    then bisection to double precision where d is continuous in θ (every metric but the decisions' rates)."""
    t = np.linspace(0.0, 1.0, 201)
    seg = th_lo[None, :] + t[:, None] * (th_hi - th_lo)[None, :]
    G = spec.group_values(seg)
    d = (G[:, g] - G[:, h] if kind == "difference" else G[:, g] / G[:, h]) - target
    i = int(np.argmin(np.abs(d)))
    cross = np.where(d[:-1] * d[1:] < 0)[0]
    continuous = spec.structure != "rowwise" or spec.metric in ("mean_prediction", "mean_residual", "group_loss")
    if not continuous or d[i] == 0 or not cross.size:  # decisions jump: the grid's best
        return seg[i]
    j = int(cross[0])
    a, b, fa = t[j], t[j + 1], d[j]
    for _ in range(200):
        m = 0.5 * (a + b)
        if m in (a, b):
            break
        fm = _pair_value(spec, kind, g, h, th_lo + m * (th_hi - th_lo)) - target
        if fm == 0:
            a = b = m
            break
        if (fm < 0) == (fa < 0):
            a, fa = m, fm
        else:
            b = m
    best = min((a, b), key=lambda s: abs(_pair_value(spec, kind, g, h, th_lo + s * (th_hi - th_lo)) - target))
    return th_lo + best * (th_hi - th_lo)


def _pair_value(spec, kind, g, h, th):
    v = spec.group_values(th)[0]
    return v[g] - v[h] if kind == "difference" else v[g] / v[h]


def range_rows(rs, spec: MetricSpec, kind: str, eps: float, tol: float, func: str, ranger=None):
    """Every row of a disparity range at ε: the signed pairs against the reference group, then the between-groups
    summary. Returns a dict of arrays (names, lower, upper, lower_attained, upper_attained, models, exact) and the
    per-group outer bounds."""
    G, ref, labels = len(spec.labels), spec.ref, spec.labels
    op = " - " if kind == "difference" else " / "
    signed = [(g, ref) for g in range(G) if g != ref]
    all_pairs = signed if G == 2 else [(g, h) for g in range(G) for h in range(G) if g != h]
    ref_theta = rs.reference_theta_
    d = rs.parametrization_.dim
    if spec.structure == "rowwise":
        from ..margin import margin_set
        from ._joint import row_functions
        from ._joint_lagrange import joint_pair_bounds
        from ._rowwise import _ascent_candidates, _row_score_bounds, _smooth, _taylor_bound

        lo_s, hi_s = _row_score_bounds(rs, spec, eps, min(tol, 1e-8), func)
        glo, ghi = spec.rowwise_bounds(lo_s, hi_s)
        outer = {}
        for g, h in all_pairs:
            if kind == "difference":
                outer[(g, h)] = (glo[g] - ghi[h], ghi[g] - glo[h])
            else:
                outer[(g, h)] = (glo[g] / ghi[h] if ghi[h] > 0 else 0.0, ghi[g] / glo[h] if glo[h] > 0 else math.inf)
        # candidates: the reference, θ_min, the members of the exact mean-score disparity ends, then ascent
        Cs = spec.W @ spec.P
        base = [ref_theta, rs.theta_min_]
        for g, h in signed:
            c = Cs[g] - Cs[h]
            _, th, _ = min_functionals(rs, np.vstack([c, -c]), np.zeros(2), eps, 1e-8, func)
            base += list(th)
        Gv = spec.group_values(np.array(base))
        dv = [Gv[:, g] - Gv[:, h] if kind == "difference" else Gv[:, g] / Gv[:, h] for g, h in signed]
        start = base[int(np.argmax(np.abs(dv[0])))]
        cands = np.array(base + _ascent_candidates(rs, spec, signed, kind, eps, start, func) + [rs.theta_min_])
        exact_pairs = {}
        joint_ok = spec.P.shape[0] <= _JOINT_MAX_ROWS and margin_set(rs) is not None
        if kind == "difference" and joint_ok and row_functions(spec) is not None:
            joint, members = joint_pair_bounds(rs, spec, all_pairs, lo_s, hi_s, eps, func, cands)
            for p, (lo_j, hi_j) in joint.items():
                outer[p] = (max(outer[p][0], lo_j), min(outer[p][1], hi_j))
            if members:
                cands = np.vstack([cands, np.array(members)])
        if kind == "difference" and _smooth(spec):
            Gc = spec.group_values(cands)
            for g, h in all_pairs:
                dv = Gc[:, g] - Gc[:, h]
                lo_t = _taylor_bound(rs, spec, g, h, cands[int(np.argmin(dv))], 1.0, lo_s, hi_s, eps, func)
                hi_t = _taylor_bound(rs, spec, g, h, cands[int(np.argmax(dv))], -1.0, lo_s, hi_s, eps, func)
                outer[(g, h)] = (max(outer[(g, h)][0], lo_t), min(outer[(g, h)][1], hi_t))
    else:
        ranger = ranger or _Ranger(rs, spec, kind, eps, tol, func)
        ranger.eps = eps
        exact_pairs = {p: ranger.pair(*p) for p in all_pairs}
        outer = {p: v[:2] for p, v in exact_pairs.items()}
        cands = np.array([ref_theta] + [t for v in exact_pairs.values() for t in v[2:]])
    Gc = spec.group_values(cands)
    rows: dict[str, list] = {k: [] for k in ("names", "lower", "upper", "lower_attained", "upper_attained", "exact")}
    lo_m, hi_m = np.empty((len(signed) + 1, d)), np.empty((len(signed) + 1, d))
    for i, (g, h) in enumerate(signed):
        vals = Gc[:, g] - Gc[:, h] if kind == "difference" else Gc[:, g] / Gc[:, h]
        a, b = int(np.argmin(vals)), int(np.argmax(vals))
        lo, hi = outer[(g, h)]
        la, ua = float(vals[a]), float(vals[b])
        lo, hi = min(lo, la), max(hi, ua)  # rounding of an exact end never puts a member outside
        rows["names"].append(f"{labels[g]}{op}{labels[h]}")
        rows["lower"].append(lo)
        rows["upper"].append(hi)
        rows["lower_attained"].append(la)
        rows["upper_attained"].append(ua)
        rows["exact"].append(
            spec.structure != "rowwise"
            and la - lo <= _EXACT_TOL * max(1, abs(lo))
            and hi - ua <= _EXACT_TOL * max(1, abs(hi))
        )
        lo_m[i], hi_m[i] = cands[a], cands[b]
    # the between-groups summary (fairlearn's difference / ratio)
    target = 0.0 if kind == "difference" else 1.0
    pair_b = [_summary_bounds(*outer[p], kind) for p in all_pairs]
    if kind == "difference":
        blo, bhi = max(p[0] for p in pair_b), max(p[1] for p in pair_b)
    else:
        blo, bhi = min(p[0] for p in pair_b), min(p[1] for p in pair_b)
    extra = []
    for g, h in all_pairs[:1] if G == 2 else []:
        lo, hi = outer[(g, h)]
        if lo <= target <= hi:  # the end members straddle target: a member on their segment attains it
            i = signed.index((g, h))
            extra.append(_segment_zero(spec, kind, g, h, lo_m[i], hi_m[i], target))
    allc = np.vstack([cands] + [np.atleast_2d(e) for e in extra]) if extra else cands
    bv = between_value(spec.group_values(allc), kind)
    a, b = int(np.argmin(bv)), int(np.argmax(bv))
    la, ua = float(bv[a]), float(bv[b])
    blo, bhi = min(blo, la), max(bhi, ua)
    rows["names"].append("max - min" if kind == "difference" else "min / max")
    rows["lower"].append(blo)
    rows["upper"].append(bhi)
    rows["lower_attained"].append(la)
    rows["upper_attained"].append(ua)
    rows["exact"].append(
        spec.structure != "rowwise"
        and G == 2
        and la - blo <= _EXACT_TOL * max(1, abs(blo))
        and bhi - ua <= _EXACT_TOL * max(1, abs(bhi))
    )
    lo_m[-1], hi_m[-1] = allc[a], allc[b]
    out = {k: np.asarray(v) if k != "names" else v for k, v in rows.items()}
    out["lower_models"], out["upper_models"] = lo_m, hi_m
    out["reference"] = np.concatenate(
        [
            [_pair_value(spec, kind, g, h, ref_theta) for g, h in signed],
            between_value(spec.group_values(ref_theta), kind),
        ]
    )
    return out, ranger
