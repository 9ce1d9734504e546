"""Row-wise disparities over a Rashomon set: certified outer bounds from per-row score ranges, and members.

Used by :func:`._disparity.range_rows` for metrics whose row values are monotone in the row's score but not
linear in θ (probabilities, decisions at a threshold, classifier losses); see :mod:`._disparity`.
"""

from __future__ import annotations

import math

import numpy as np

from ._functionals import _degenerate, min_functionals

__all__ = []


def _row_score_bounds(rs, spec, eps, tol, func):
    """Certified per-row score bounds on the set's rows (once per distinct row).

    Quadratic classes: the exact range of every distinct row (one vectorised functional-range call). Classifier
    classes: the ellipsoid outer ranges of every row at once (:func:`~rashomon.sets.margin.row_score_bounds`),
    tightened by exact per-row solves on at most ``spec.exact_rows`` distinct rows, those that matter most
    (for decisions, the rows whose range straddles the threshold, nearest first; otherwise the widest, by weight).
    """
    from ..margin import margin_set

    Xu, inv = np.unique(rs.X_, axis=0, return_inverse=True)
    inv = inv.ravel()
    P, p0 = rs.parametrization_.prediction_map(Xu)
    ms = margin_set(rs)
    if ms is None or _degenerate(rs, eps):
        lo, _, _ = min_functionals(rs, P, p0, eps, tol, func)
        nhi, _, _ = min_functionals(rs, -P, -p0, eps, tol, func)
        return lo[inv], -nhi[inv]
    from ..margin import row_score_bounds

    lo, hi = row_score_bounds(ms, Xu, eps)
    k = int(getattr(spec, "exact_rows", 0))
    if k > 0:
        weight = np.zeros(len(Xu))
        np.add.at(weight, inv, np.abs(spec.W).sum(axis=0))
        if spec.threshold is not None:
            thr = spec.threshold if spec.scale == "score" else math.log(spec.threshold / (1 - spec.threshold))
            key = np.where((lo <= thr) & (hi > thr) & (weight > 0), np.minimum(thr - lo, hi - thr), np.inf)
        else:
            key = np.where(weight > 0, -(hi - lo) * weight, np.inf)
        pick = np.argsort(key, kind="stable")[:k]
        pick = pick[np.isfinite(key[pick])]
        if pick.size:
            a, _, _ = min_functionals(rs, P[pick], p0[pick], eps, tol, func)
            b, _, _ = min_functionals(rs, -P[pick], -p0[pick], eps, tol, func)
            lo[pick], hi[pick] = np.maximum(lo[pick], a), np.minimum(hi[pick], -b)
    return lo[inv], hi[inv]


def _smooth(spec):
    return (spec.metric in ("mean_prediction", "mean_residual") and spec.scale == "probability") or (
        spec.metric == "group_loss" and spec.loss == "log_loss"
    )


_SIG3 = math.log(2 + math.sqrt(3))  # |σ''| is largest at ±log(2 + √3)


def _taylor_bound(rs, spec, g, h, th0, sign, lo_s, hi_s, eps, func):
    """Certified bound on ``sign·min`` of the pair difference from a first-order expansion at a member θ0.

    Each row value φ(s) lies within ``K/2·(s - s0)²`` of its tangent at s0, with ``K = sup |φ''|`` on the row's
    certified score range and ``(s - s0)²`` at most its value at the farther end of the range; the tangent part is
    a linear functional, minimised exactly (certified) over the set. ``sign = 1``: a lower bound; ``-1``: an upper
    bound.
    """
    s0 = spec.P @ th0 + spec.p0
    w = spec.W[g] - spec.W[h]
    if spec.metric == "group_loss":
        ypm = 2.0 * spec.ybin - 1.0
        m0 = ypm * s0
        phi, d1 = np.logaddexp(0.0, -m0), -ypm / (1.0 + np.exp(m0))
        crit: tuple[float, ...] = (0.0,)
        curv = lambda v: np.exp(-np.abs(v)) / (1 + np.exp(-np.abs(v))) ** 2  # noqa: E731
    else:
        sg = 1 / (1 + np.exp(-s0))
        phi, d1 = sg, sg * (1 - sg)
        if spec.metric == "mean_residual":
            phi, d1 = spec.ybin - sg, -d1
        crit = (-_SIG3, _SIG3)
        curv = lambda v: np.abs((1 / (1 + np.exp(-v))) * (1 / (1 + np.exp(v))) * np.tanh(-v / 2))  # noqa: E731  (pairs with the other branch's lambda)
    K = np.maximum(curv(lo_s), curv(hi_s))
    for c in crit:
        K = np.maximum(K, curv(np.clip(c, lo_s, hi_s)))
    R = np.maximum((lo_s - s0) ** 2, (hi_s - s0) ** 2)
    rem = float(np.abs(w) @ (0.5 * K * R))
    c = (w * d1) @ spec.P
    c0 = float(w @ (phi + d1 * (spec.p0 - s0)))
    b, _, _ = min_functionals(rs, sign * c, np.array([sign * c0]), eps, 1e-10, func)
    return float(b[0]) - rem if sign > 0 else -float(b[0]) + rem


def _ascent_candidates(rs, spec, pairs, kind, eps, start, func, n_iter=6):
    """Members reached by linearise-and-jump ascent of each pair disparity and its negative (inner values)."""
    S_thr = spec.threshold
    if S_thr is not None and spec.scale == "probability":
        S_thr = math.log(S_thr / (1 - S_thr))
    ypm = None if spec.ybin is None else 2.0 * spec.ybin - 1.0

    def deriv(s, bw):  # d(row value)/d(score), smoothed for decisions
        m = spec.metric
        if m in ("positive_rate", "true_positive_rate", "false_positive_rate"):
            z = (s - S_thr) / bw
            return np.exp(-np.abs(z)) / (1 + np.exp(-np.abs(z))) ** 2 / bw
        if m == "group_loss":
            assert ypm is not None  # group_loss of a classifier: labels are set
            return -ypm * (1 / (1 + np.exp(ypm * s)) if spec.loss == "log_loss" else (1 - ypm * s > 0))
        sg = 1 / (1 + np.exp(-s))
        d = sg * (1 - sg) if spec.scale == "probability" else np.ones_like(s)
        return -d if m == "mean_residual" else d

    cands = []
    for g, h in pairs:
        for sign in (1.0, -1.0):
            th = start.copy()
            for it in range(n_iter):
                s = spec.P @ th + spec.p0
                bw = max(float(np.std(s)), 1e-12) * (0.3 / 2**it)
                wd = (spec.W[g] - spec.W[h]) * deriv(s, bw)
                if kind == "ratio":
                    v = spec.group_values(th)[0]
                    wd = (spec.W[g] / v[h] - spec.W[h] * v[g] / v[h] ** 2) * deriv(s, bw)
                c = -sign * (wd @ spec.P)
                if not np.any(c):
                    break
                c = c / np.abs(c).max()  # the direction only (tiny smoothed derivatives would overflow)
                _, tj, _ = min_functionals(rs, c, np.zeros(1), eps, 1e-8, func)
                seg = th[None, :] + np.linspace(0.0, 1.0, 21)[1:, None] * (tj[0] - th)[None, :]
                G = spec.group_values(seg)
                d = G[:, g] - G[:, h] if kind == "difference" else G[:, g] / G[:, h]
                i = int(np.argmax(sign * d))
                cands.append(seg[i])
                th = seg[i]
    return cands
