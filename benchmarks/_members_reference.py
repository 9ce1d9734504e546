"""An independent multi-start reference for the classifier MCR members.

For one fitted classifier set (``RashomonSet(LogisticModelClass() | HingeModelClass(), ε)``) and one feature,
maximise and minimise MR (ratio) over S = {θ : e_orig(θ) <= ε_abs, θ'Bθ <= r} from many starts, with nothing
taken from the package but the set's design, labels, B, r and ε_abs:

* starts: θ_min, and the points of S furthest along ± the switched coefficient and along ``n_dirs`` random directions
  (cvxpy/Clarabel, exact loss; shared by every feature of the set), each also pulled half-way to θ_min;
* from each start, SciPy SLSQP on MR with analytic gradients, the hinge smoothed (``τ·softplus((1-m)/τ)`` >= the
  exact hinge, for τ = 1e-2 then 1e-4: its constraint implies the exact one);
* for the hinge, the best few are followed by convex-concave Dinkelbach steps solved exactly by cvxpy (upper:
  ``max g'θ - λ e_orig`` with e_switch linearised; lower: ``min e_switch - q·(tangent of e_orig)``);
* every returned point is made exactly feasible (bisection towards θ_min) and its exact MR recomputed.
"""

from __future__ import annotations

import time
import warnings

import numpy as np


def _soft(m, tau):
    """(ℓ, ℓ') of the margin loss: tau = None is logistic, else the hinge smoothed at tau (tau = 0: exact)."""
    if tau is None:
        return np.logaddexp(0.0, -m), -0.5 * (1.0 - np.tanh(0.5 * m))
    if tau == 0:
        return np.maximum(0.0, 1.0 - m), -(m < 1.0).astype(float)
    u = (1.0 - m) / tau
    return tau * np.logaddexp(0.0, u), -0.5 * (1.0 + np.tanh(0.5 * u))


class Problem:
    def __init__(self, D, ye, k, hinge):
        self.D, self.ye, self.k, self.hinge = D, ye, k, hinge
        self.vals, self.counts = np.unique(D[:, k], return_counts=True)
        self.delta = self.vals[None, :] - D[:, k][:, None]
        n = len(ye)
        self.nn = n * (n - 1.0)

    def tau(self, t):
        return t if self.hinge else None

    def e_orig(self, th, t=0):
        return float(np.mean(_soft(self.ye * (self.D @ th), self.tau(t))[0]))

    def e_orig_grad(self, th, t=0):
        l1 = _soft(self.ye * (self.D @ th), self.tau(t))[1]
        return self.D.T @ (l1 * self.ye) / len(self.ye)

    def parts(self, th, t=0):
        """(e_orig, grad, e_switch, grad)."""
        tau = self.tau(t)
        s = self.D @ th
        lo, lo1 = _soft(self.ye * s, tau)
        ms = self.ye[:, None] * (s[:, None] + self.delta * th[self.k])
        L, L1 = _soft(ms, tau)
        es = (np.sum(L @ self.counts) - lo.sum()) / self.nn
        W = L1 * self.ye[:, None]
        wo = lo1 * self.ye
        gs = self.D.T @ (W @ self.counts - wo)
        gs[self.k] += np.sum(W * self.delta * self.counts[None, :])
        gs /= self.nn
        return lo.mean(), self.D.T @ wo / len(self.ye), es, gs

    def mr(self, th):
        eo, _, es, _ = self.parts(th, 0)
        return es / eo


def extremes(D, ye, B, r, eps, hinge, n_dirs, coords=(), seed=0):
    """Points of S furthest along ± each of ``coords`` and n_dirs random directions (cvxpy, Clarabel)."""
    import cvxpy as cp

    n, d = D.shape
    Z = D * ye[:, None]
    th = cp.Variable(d)
    c = cp.Parameter(d)
    L = cp.sum(cp.pos(1 - Z @ th)) / n if hinge else cp.sum(cp.logistic(-Z @ th)) / n
    prob = cp.Problem(cp.Maximize(c @ th), [L <= eps, cp.quad_form(th, cp.psd_wrap(B)) <= r])
    rng = np.random.default_rng(seed)
    dirs = [s * np.eye(d)[j] for j in coords for s in (1.0, -1.0)] + list(rng.standard_normal((n_dirs, d)))
    out = []
    for u in dirs:
        c.value = u
        try:
            prob.solve(solver="CLARABEL")
        except cp.error.SolverError:
            continue
        if th.value is not None:
            out.append(np.array(th.value))
    return out


def feasible(P, th, th_min, eps, B, r):
    def ok(t):
        return P.e_orig(t) <= eps and t @ B @ t <= r

    if ok(th):
        return th
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(th_min + mid * (th - th_min)) else (lo, mid)
    return th_min + lo * (th - th_min)


def slsqp(P, t0, sgn, eps, B, r, taus, maxiter=200):
    from scipy.optimize import minimize

    x = np.array(t0, float)
    for tau in taus:
        cache = {}

        def parts(t, tau=tau, cache=cache):
            key = t.tobytes()
            if key not in cache:
                cache.clear()
                cache[key] = P.parts(t, tau)
            return cache[key]

        def fun(t, tau=tau):
            eo, go, es, gs = parts(t)
            return sgn * es / eo, sgn * (gs / eo - es / eo**2 * go)

        cons = [
            {"type": "ineq", "fun": lambda t: eps - parts(t)[0], "jac": lambda t: -parts(t)[1]},
            {"type": "ineq", "fun": lambda t: r - t @ B @ t, "jac": lambda t: -2.0 * B @ t},
        ]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            res = minimize(
                fun, x, jac=True, method="SLSQP", constraints=cons, options={"maxiter": maxiter, "ftol": 1e-13}
            )
        if np.all(np.isfinite(res.x)):
            x = res.x
    return x


def ccp_hinge(P, th, sgn, eps, B, r, iters=30):
    """Convex-concave Dinkelbach steps for the exact hinge, each solved by cvxpy (Clarabel)."""
    import cvxpy as cp

    D, ye, n = P.D, P.ye, len(P.ye)
    Z = D * ye[:, None]
    d = D.shape[1]
    x = cp.Variable(d)
    g = cp.Parameter(d)
    lam = cp.Parameter(nonneg=True)
    lg = cp.Parameter(d)
    L = cp.sum(cp.pos(1 - Z @ x)) / n
    cons = [L <= eps, cp.quad_form(x, cp.psd_wrap(B)) <= r]
    if sgn < 0:  # upper: max g'x - λ L
        prob = cp.Problem(cp.Maximize(g @ x - lam * L), cons)
    else:  # lower: min e_switch(x) - q·(g'x); e_switch written over the (v, j) pairs
        w = np.repeat(P.counts[None, :], n, axis=0) / P.nn
        own = np.isclose(P.delta, 0.0)
        w = np.where(own, w - 1.0 / P.nn, w)
        keep = w > 0
        jj, vv = np.nonzero(keep)
        # margin of pair (j, v): ye_j (D_j x + delta_jv x_k)
        A = Z[jj] + (ye[jj] * P.delta[jj, vv])[:, None] * np.eye(d)[P.k][None, :]
        ES = cp.sum(cp.multiply(w[jj, vv], cp.pos(1 - A @ x)))
        prob = cp.Problem(cp.Minimize(ES - lg @ x), cons)
    cur = P.mr(th)
    for _ in range(iters):
        eo, go, es, gs = P.parts(th, 0)
        lam.value = max(cur, 0.0)
        g.value = gs if sgn < 0 else go
        lg.value = lam.value * go
        try:
            prob.solve(solver="CLARABEL")
        except cp.error.SolverError:
            break
        if x.value is None:
            break
        new = np.array(x.value)
        v = P.mr(new)
        if sgn * v >= sgn * cur - 1e-10 * abs(cur):
            break
        th, cur = new, v
    return th


def reference(rs, X, feature, starts, n_keep=4, hinge_ccp=True):
    """{"max": MR, "min": MR, "seconds": s} of the multi-start from ``starts`` (points of the set's θ space)."""
    eps = float(rs.epsilon_abs_)
    ms = rs._margin
    D, ye, B, r = ms.D, ms.y, ms.B, float(ms.r)
    k = list(X.columns).index(feature) + ms.o
    hinge = rs.loss_ == "hinge"
    P = Problem(D, ye, k, hinge)
    th_min = np.asarray(rs.theta_min_, float)
    taus = (1e-2, 1e-4) if hinge else (None,)
    t0 = time.perf_counter()
    out = {}
    for side, sgn in (("max", -1.0), ("min", 1.0)):
        found = []
        for s in starts:
            x = feasible(P, slsqp(P, s, sgn, eps, B, r, taus), th_min, eps, B, r)
            found.append((sgn * P.mr(x), x))
        found.sort(key=lambda f: f[0])
        best = found[0]
        if hinge and hinge_ccp and (sgn < 0 or len(P.ye) * len(P.vals) <= 20000):
            for _, x in found[:n_keep]:
                y = feasible(P, ccp_hinge(P, x, sgn, eps, B, r), th_min, eps, B, r)
                if sgn * P.mr(y) < best[0]:
                    best = (sgn * P.mr(y), y)
        out[side] = sgn * best[0]
        out[side + "_theta"] = best[1]
    out["seconds"] = time.perf_counter() - t0
    return out
