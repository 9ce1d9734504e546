"""Bootstrap of MR and MCR over a Rashomon set: resamples as row weights, warm-started γ-searches.

A bootstrap resample of the set's rows only re-weights row sums: the class keeps the
weight-independent pieces of its quadratic forms in the set's cache (see
:meth:`~rashomon.RashomonSet.reweighted`), so each resample costs a few matrix products, one e_min
solve and the γ-searches. Each search end starts from the full-data optimum (γ*, θ*, ν*): the
resample's optimal γ is predicted by Newton's method on the resample's linearised KKT system
(linear solves only), and the exact step there usually attains the bound within the tolerance at
once (COMPAS audit: 1.0 step per end against 12.7 from scratch); otherwise Newton steps follow and
:meth:`GammaSearch.search` takes over. The bounds are certified exactly as
:meth:`~rashomon.RashomonSet.model_class_reliance` certifies them (the starting γ only chooses where the
search looks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...utils import DisplayMixin, single_blas_thread
from ...utils.validation import RashomonInputError, check_choice, check_float, check_positive_int, group_name
from ..quadratic import search_result

__all__ = ["bootstrap_mcr", "BootstrapMCR"]

_KEYS = ("mr_ref", "lower", "upper")


@dataclass(frozen=True, repr=False)
class BootstrapMCR(DisplayMixin):
    """Bootstrap draws of MR(reference), MCR− and MCR+ for each feature group.

    Attributes
    ----------
    draws : dict of {name: dict of {"mr_ref", "lower", "upper": ndarray of shape (n_resamples,)}}
        One value per resample, in the order of ``seeds``.
    tight : dict of {name: ndarray of bool, shape (n_resamples, 2)}
        Whether a member of the resample's set attained each bound within ``tol``.
    seeds : ndarray of shape (n_resamples,)
        Resample r has counts ``RandomState(seeds[r]).multinomial(n, [1/n]*n)``.
    groups : dict of {name: tuple of int}
    kind : str
    tol : float
    """

    draws: dict
    tight: dict
    seeds: np.ndarray
    groups: dict
    kind: str
    tol: float
    starts: dict = field(default_factory=dict, repr=False)

    def interval(self, name: str, key: str = "upper", confidence_level: float = 0.95) -> tuple[float, float]:
        """Percentile interval of ``draws[name][key]`` (key ``"mr_ref"``, ``"lower"`` or ``"upper"``)."""
        check_choice(key, _KEYS, "key", "BootstrapMCR.interval")
        confidence_level = check_float(confidence_level, "confidence_level", "BootstrapMCR.interval", low=0.0, high=1.0)
        a = (1.0 - confidence_level) / 2.0
        v = np.asarray(self.draws[name][key], dtype=float)
        return float(np.quantile(v, a)), float(np.quantile(v, 1.0 - a))

    def _display_(self) -> tuple[dict, list]:
        fields = {"n_resamples": len(self.seeds), "groups": list(self.groups), "kind": self.kind, "tol": self.tol}
        df = self.to_frame()
        for name in df.index:
            t = np.asarray(self.tight.get(name, np.zeros((0, 2))), dtype=bool).reshape(-1, 2)
            df.loc[name, "share_tight_lower"] = t[:, 0].mean() if len(t) else math.nan
            df.loc[name, "share_tight_upper"] = t[:, 1].mean() if len(t) else math.nan
        return fields, [("95% percentile intervals over the resamples", df)]

    def to_frame(self, confidence_level: float = 0.95):
        """One row per group: the percentile interval of each quantity."""
        import pandas as pd

        rows = []
        for name in self.groups:
            row = {"group": name}
            for key in _KEYS:
                row[f"{key}_low"], row[f"{key}_high"] = self.interval(name, key, confidence_level)
            rows.append(row)
        return pd.DataFrame(rows).set_index("group")


def _resample_weights(seed: int, n: int) -> np.ndarray:
    return np.random.RandomState(seed).multinomial(n, np.full(n, 1.0 / n)).astype(float)


def _resample(rs, groups: dict, seed: int, kind: str, tol: float, max_iter: int, starts: dict) -> dict:
    """MR(f_ref), MCR− and MCR+ (and tightness) of every group on one resample."""
    rb = rs.reweighted(_resample_weights(int(seed), rs.X_.shape[0]))
    eps = rb.epsilon_abs_
    out = {}
    for name, group in groups.items():
        srch = rb.searcher(list(group), kind, tol=tol, max_iter=max_iter, func="bootstrap_mcr")
        if not rb._degenerate:
            for side in ("lower", "upper"):
                start = starts.get(name, {}).get(side)
                if start is None:
                    srch.search(side, eps)
                else:
                    _newton(srch, side, eps, start)
        res = search_result(srch, eps, rb.e_ref_, rb.reference_theta_, tol, degenerate=rb._degenerate)
        out[name] = (res.reference_model.mr, res.lower, res.upper, res.lower_tight, res.upper_tight)
    return out


def _forms(srch, side: str, g: float):
    """``(A(γ), b(γ), Ȧ, ḃ)`` of a side's problem ``min θ'Aθ − 2b'θ`` over ``θ'Bθ <= r``."""
    eo, es = srch.prob.e_orig, srch.prob.e_switch
    if side == "lower":  # h₋ = e_switch + γ e_orig
        return es.Q + g * eo.Q, es.c + g * eo.c, eo.Q, eo.c
    return eo.Q + g * es.Q, eo.c + g * es.c, es.Q, es.c


def _kkt_solve(srch, th, nu, H, rhs, gap=0.0):
    """Solve the KKT system linearised at (θ, ν): ``[[H, Bθ], [θ'B, 0]] [dθ; dν] = [rhs; gap]`` when the
    ball is active (ν > 0; ``gap = (r − θ'Bθ)/2``), else ``H dθ = rhs``. Returns (dθ, dν) or None."""
    if nu > 0:
        Bt = srch.prob.B @ th
        H = np.block([[H, Bt[:, None]], [Bt[None], np.zeros((1, 1))]])
        rhs = np.concatenate([rhs, np.reshape(gap, (1,) + np.shape(rhs)[1:])])
    try:
        sol = np.linalg.solve(H, rhs)
    except np.linalg.LinAlgError:
        return None
    return sol[: len(th)], (sol[-1] if nu > 0 else np.zeros(np.shape(rhs)[1:]))


def _slope(srch, side: str, g: float, th: np.ndarray, nu: float) -> float:
    """dφ/dγ at a step, φ(γ) = e_orig(θ_γ) − ε, from the derivative of its KKT system.

    The step solves ``min θ'A(γ)θ − 2b(γ)'θ`` over ``θ'Bθ <= r`` with ``(A + νB)θ = b``; with the
    constraint active (ν > 0) differentiating it and ``θ'Bθ = r`` gives
    ``[[A + νB, Bθ], [θ'B, 0]] [θ̇; ν̇] = [ḃ − Ȧθ; 0]``, and ``φ' = 2(Q₀θ − c₀)'θ̇``.
    NaN when the system is singular (several minimisers: φ jumps there).
    """
    A, _, dA, db = _forms(srch, side, g)
    d = _kkt_solve(srch, th, nu, A + nu * srch.prob.B, db - dA @ th)
    eo = srch.prob.e_orig
    return math.nan if d is None else float(2.0 * (eo.Q @ th - eo.c) @ d[0])


def _estimate(
    srch, side: str, eps: float, g: float, th: np.ndarray, nu: float, h: float, slope: float | None = None
) -> float:
    """The larger of the Newton estimates of γ_φ and (ratio) γ₀ from a minimiser θ at γ (NaN if none).

    γ_φ is aimed at ``φ = −η``, inside the set by a margin whose cost in the gap is about tol/4:
    the member of a step at γ with ``e_orig = ε − η`` lies ``η·|h|/(ε·e_orig)`` (ratio) or
    ``η·|1 + γ|`` (difference) below its bound in MR, divided by |γ| at the upper end.
    """
    eo, es = srch.prob.e_orig(th), srch.prob.e_switch(th)
    est = []
    slope = _slope(srch, side, g, th, nu) if slope is None else slope
    if np.isfinite(slope) and slope < 0 and eo > 0:
        mr = abs(es / eo if srch.kind == "ratio" else es - eo)
        per_phi = abs(h) / (eps * eo) if srch.kind == "ratio" else abs(1.0 + g)
        per_phi /= abs(g) if side == "upper" else 1.0
        eta = min(0.25 * srch.tol * max(1.0, mr) / max(per_phi, 1e-300), 1e-3 * eps)
        est.append(g - (eo - eps + eta) / slope)
    dh = eo if side == "lower" else es
    if srch.kind == "ratio" and np.isfinite(h) and dh > 0:
        est.append(g - (h - 1e-3 * srch.tol * eps) / dh)
    return max(est) if est else math.nan


def _predict(srch, side: str, eps: float, start: tuple, max_iter: int = 10) -> float:
    """A first γ for the resample from the full-data optimum (γ*, θ*, ν*), without solving a step.

    Alternates a Newton iteration on the resample's KKT system at fixed γ (from the previous θ, ν:
    linear solves only) with the Newton estimate of the optimal γ from that θ; the exact step at
    the returned γ then decides (a poor guess costs steps, never correctness).
    """
    g, th, nu = start
    B, r, eo, es = srch.prob.B, srch.prob.r, srch.prob.e_orig, srch.prob.e_switch
    th = np.array(th, dtype=float)
    for _ in range(max_iter):
        A, b, dA, db = _forms(srch, side, g)
        H = A + nu * B
        # one factorisation for the KKT step and θ̇ (the slope, at the old θ: a quasi-Newton estimate)
        rhs = np.column_stack([b - H @ th, db - dA @ th])
        step = _kkt_solve(srch, th, nu, H, rhs, np.array([0.5 * (r - th @ B @ th), 0.0]))
        if step is None:
            return g
        th, nu = th + step[0][:, 0], max(nu + step[1][0], 0.0)
        slope = float(2.0 * (eo.Q @ th - eo.c) @ step[0][:, 1])
        h = float(th @ A @ th - 2 * b @ th) + (eo.k * g + es.k if side == "lower" else eo.k + g * es.k)
        nxt = _estimate(srch, side, eps, g, th, nu, h, slope)
        far = abs(nxt - start[0]) > 0.5 * max(abs(start[0]), 1e-3)  # the linearisation is not to be trusted
        if not np.isfinite(nxt) or (side == "upper" and nxt >= 0) or far:
            return g
        done = abs(nxt - g) <= 1e-9 * max(1.0, abs(g))
        g = nxt
        if done:
            break
    return g


def _newton(srch, side: str, eps: float, start: tuple, max_steps: int = 10) -> None:
    """Newton's method for the optimal γ from the full-data optimum ``start = (γ*, θ*, ν*)`` (first γ by
    :func:`_predict`); :meth:`GammaSearch.search` takes over
    (from the best γ so far) unless a member attains the bound within the search tolerance.

    A step's bound is valid for γ >= γ₀ (ratio: ``h*(γ) >= 0``; h* increases with γ, with slope
    e_orig (lower) or e_switch (upper) at the minimiser) and its minimiser lies in the set for
    γ >= γ_φ (``φ(γ) = e_orig(θ_γ) − ε <= 0``, φ decreasing), so the optimal γ is
    ``max(γ_φ, γ₀)``: each step moves to the larger of the two Newton estimates, aimed slightly
    inside (φ = −η, h* = +η) so that the last step is a valid step whose minimiser is a member.
    Every step is an ordinary certified step of the search, so the bounds are the search's.
    """
    floor = -1.0 if srch.kind == "difference" else -math.inf
    lo, hi = -math.inf, (0.0 if side == "upper" else math.inf)  # the optimum lies in (lo, hi]
    g = _predict(srch, side, eps, start)
    for _ in range(max_steps):
        st = srch.step(side, g)
        if st.theta is None or not st.certified:
            break
        bound = srch.best_bound(side, eps)
        if np.isfinite(bound) and srch.gap(side, eps) <= srch.tol * max(1.0, abs(bound)):
            return
        if srch.good(st, eps):
            hi = min(hi, g)
        else:
            lo = max(lo, g)
        nxt = _estimate(srch, side, eps, g, st.theta, float(st.nu), st.h_star)
        if not lo < nxt < hi:  # outside the bracket: halve towards the end it passed
            end = hi if nxt >= hi else lo
            nxt = 0.5 * (g + end) if np.isfinite(end) else math.nan
        if not np.isfinite(nxt) or nxt < floor or abs(nxt - g) <= 1e-13 * max(1.0, abs(g)):
            break
        g = nxt
    best = srch.best_gamma(side, eps)
    srch.search(side, eps, start=best if np.isfinite(best) else start[0])


def _chunk(rs, groups, seeds, kind, tol, max_iter, starts):
    return [_resample(rs, groups, s, kind, tol, max_iter, starts) for s in seeds]


def _full_data_starts(rs, groups: dict, kind: str, tol: float, max_iter: int) -> dict:
    """γ of the full-data bounds (the searches' starts); also fills the set's cache with every group's pieces."""
    starts: dict = {}
    rs.reweighted(np.ones(rs.X_.shape[0]))  # e_orig's weight-independent pieces, computed once here
    for name, group in groups.items():
        srch = rs.searcher(list(group), kind, tol=tol, max_iter=max_iter, func="bootstrap_mcr")
        starts[name] = {}
        if rs._degenerate:
            continue
        for side in ("lower", "upper"):
            srch.search(side, rs.epsilon_abs_)
            g = srch.best_gamma(side, rs.epsilon_abs_)
            st = srch.cache.get((side, g)) if np.isfinite(g) else None
            if st is not None and st.theta is not None:
                starts[name][side] = (g, st.theta, float(st.nu))
    return starts


def _groups(rs, features, func: str) -> dict:
    """``{name: column indices}`` from one feature or group, or a dict of them."""
    if isinstance(features, dict):
        if not features:
            raise RashomonInputError(
                f"The 'features' parameter of {func} must be a non-empty dict, a feature or a group. Got {{}} instead."
            )
        return {str(k): rs._group(v, func) for k, v in features.items()}
    group = rs._group(features, func)
    return {group_name(group, rs._columns): group}


def bootstrap_mcr(
    rs: Any,
    features: Any,
    n_resamples: int = 1000,
    *,
    kind: str = "ratio",
    random_state: Any = 0,
    n_jobs: int | None = None,
    tol: float = 2.0**-20,
    max_iter: int = 100,
    warm_start: bool = True,
    callback: Any = None,
) -> BootstrapMCR:
    """Bootstrap MR(reference), MCR− and MCR+ of feature groups over a fitted squared-loss set.

    Resample r draws counts ``w = RandomState(seed_r).multinomial(n, [1/n]*n)`` over the set's
    rows and answers on ``rs.reweighted(w)``: the same class, reference function and ε rule
    on the resampled rows. The numbers equal rebuilding each resample with
    :meth:`~rashomon.RashomonSet.reweighted` and :meth:`~rashomon.RashomonSet.model_class_reliance` to the search
    tolerance (each bound is attained within ``tol`` either way).

    Parameters
    ----------
    rs : RashomonSet
        Fitted, ``loss="squared_error"``.
    features : int, str, list or dict
        One feature group, or ``{name: group}`` for several (each resample answers all).
    n_resamples : int, default=1000
    kind : {"ratio", "difference"}, default="ratio"
    random_state : int or numpy.random.RandomState, default=0
        The seeds are ``RandomState(random_state).randint(0, 2**31 - 1, size=n_resamples)``
        (a RandomState instance is drawn from as is).
    n_jobs : int, default=None
        joblib workers over fixed chunks of resamples; every chunk runs with one BLAS thread,
        so any ``n_jobs`` gives identical numbers.
    tol : float, default=2**-20
    max_iter : int, default=100
    warm_start : bool, default=True
        Start each resample's searches at the full-data γ (False: from the default starts).
    callback : callable, default=None
        Called with the number of resamples finished after each chunk (progress bars).

    Returns
    -------
    BootstrapMCR
    """
    from joblib import Parallel, delayed, effective_n_jobs

    func = "bootstrap_mcr"
    if not hasattr(rs, "loss_") or rs.loss_ != "squared_error":
        raise RashomonInputError(
            f"The 'rs' parameter of {func} must be a RashomonSet fitted with loss='squared_error'."
        )
    if rs.sample_weight_ is not None:
        raise RashomonInputError(
            f"The 'rs' parameter of {func} must be a set fitted without sample_weight (a "
            "resample re-weights equally likely rows)."
        )
    n_resamples = check_positive_int(n_resamples, "n_resamples", func, minimum=1)
    check_choice(kind, ("ratio", "difference"), "kind", func)
    tol = check_float(tol, "tol", func, low=0.0)
    groups = _groups(rs, features, func)
    rng = random_state if isinstance(random_state, np.random.RandomState) else np.random.RandomState(random_state)
    seeds = rng.randint(0, 2**31 - 1, size=n_resamples)
    starts = single_blas_thread(_full_data_starts, rs, groups, kind, tol, max_iter) if warm_start else {}
    # the set travels once per chunk: a few chunks per worker (16 in process, for progress); chunking
    # does not change any number (each resample is computed alone)
    workers = effective_n_jobs(n_jobs)
    chunks = [list(c) for c in np.array_split(seeds, min(n_resamples, 16 if workers == 1 else 4 * workers))]
    jobs = (delayed(single_blas_thread)(_chunk, rs, groups, c, kind, tol, max_iter, starts) for c in chunks)
    rows: list = []
    for chunk in Parallel(n_jobs=n_jobs, return_as="generator")(jobs):
        rows.extend(chunk)
        if callback is not None:
            callback(len(chunk))
    draws = {
        name: {k: np.array([r[name][i] for r in rows], dtype=float) for i, k in enumerate(_KEYS)} for name in groups
    }
    tight = {name: np.array([[r[name][3], r[name][4]] for r in rows], dtype=bool) for name in groups}
    return BootstrapMCR(draws, tight, seeds, groups, kind, tol, starts)
