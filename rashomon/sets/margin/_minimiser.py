"""MCR of a hinge set at ε = e_min: the range over (a box around) its minimiser set.

At ``ε = e_min`` the set ``{θ ∈ K : e_orig(θ) <= ε}`` is the hinge's minimiser set, usually the single point
θ_min, while the γ-search's outer bounds (smoothed, over a box of intercepts) stay wide (Pima, Glucose:
[1.5886, 2.486]). Here the set is enclosed in a box by 2d convex programmes
``min / max θ_k  s.t.  mean max(0, 1 - y_i d_i'θ) <= ε, θ'Bθ <= r`` (cvxpy, Clarabel; the box is as exact as
the solver's tolerances, and widened by 1e-7 for them; solved at ``max(ε, e_min(1 + 1e-8))``, a superset a
conic solver handles, where the set itself is a point), and e_switch, 1-Lipschitz in each switched margin, varies on it
by at most ``δ = Σ_k mean_i |d_ik| · Δ_k`` (each row's value of a column appears equally often among the
switched rows), Δ_k the box's reach from θ_min. So on the set
``e_switch ∈ e_switch(θ_min) ± δ`` and ``e_orig ∈ [e_lo, ε]`` (e_lo the certified least loss), which bounds MR.
"""

from __future__ import annotations

import numpy as np

__all__ = ["minimiser_bounds"]


def _box(ms, eps: float) -> tuple[np.ndarray, np.ndarray] | None:
    """``min / max θ_k`` over ``{mean hinge <= ε, θ'Bθ <= r}`` (a second-order cone programme per end, Clarabel,
    compiled once with the objective as a parameter)."""
    import cvxpy as cp

    D, y = ms.D, ms.y
    n, d = D.shape
    lam, V = np.linalg.eigh(0.5 * (ms.B + ms.B.T))
    keep = lam > 1e-12 * max(lam[-1], 1e-300)
    F = (V[:, keep] * np.sqrt(lam[keep])).T  # θ'Bθ = ||Fθ||²
    th = cp.Variable(d)
    c = cp.Parameter(d)
    cons = [
        cp.sum(cp.pos(1 - cp.multiply(y, D @ th))) / n <= eps * (1 + 1e-9) + 1e-12,
        cp.sum_squares(F @ th) <= ms.r * (1 + 1e-9),
    ]
    prob = cp.Problem(cp.Minimize(c @ th), cons)
    lo, hi = np.empty(d), np.empty(d)
    for k in range(d):
        for sgn, out in ((1.0, lo), (-1.0, hi)):
            e = np.zeros(d)
            e[k] = sgn
            c.value = e
            try:
                prob.solve(solver="CLARABEL")
            except cp.error.SolverError:
                return None
            if prob.status != "optimal" or th.value is None:
                return None
            out[k] = th.value[k]
    return lo, hi


def minimiser_bounds(ms, T, eps: float, kind: str) -> tuple[float, float] | None:
    """Certified ``(lower, upper)`` of MR on the hinge set at ε (meant for ε near e_min), or None."""
    import warnings

    box = None
    for infl in (1e-8, 1e-7, 1e-6):  # a set at ε = e_min is (nearly) a point: the solver needs a slightly larger one
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an inaccurate solve is discarded below, not reported
            box = _box(ms, max(eps, ms.e_min * (1 + infl)))
        if box is not None:
            break
    if box is None:
        return None
    lo, hi = box
    th = ms.theta_min
    reach = np.maximum(np.abs(hi - th), np.abs(th - lo)) + 1e-7 * (1 + np.abs(th))  # the solver's tolerances
    delta = float(np.mean(np.abs(ms.D), axis=0) @ reach)
    es = T.e_switch(th, ms.loss)
    e_lo = float(min(getattr(ms, "e_min_lower", ms.e_min), ms.e_min))
    if kind == "difference":
        return es - delta - eps, es + delta - e_lo
    if not e_lo > 0:
        return None
    return max(es - delta, 0.0) / eps, (es + delta) / e_lo
