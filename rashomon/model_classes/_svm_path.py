"""The cross-validated linear SVM behind the hinge class's default norm bound, solved exactly.

``LinearSVC(loss="hinge")`` (liblinear's ``L2R_L1LOSS_SVC_DUAL`` with the bias as an extra feature of
value ``intercept_scaling = 1``, so the intercept is penalised like the coefficients) solves

    min_θ  F(θ) = ½||θ||² + C Σ_i max(0, 1 - g_i'θ),   θ = (β, b),  g_i = y_i (z_i, 1),  y_i = ±1,

by dual coordinate descent, which crawls at large C (COMPAS: 20,000 iterations without converging at
C >= 10) and stops short of the optimum, so a grid search over C saw the solver's iteration cap. Here
F is minimised exactly in the d = p + 1 dimensions of θ, with rows sharing (z, y) merged (weights w):

* Newton's method on the Huber-smoothed hinge ``h_τ`` (0 below 0, u²/2τ on (0, τ), u - τ/2 above, of
  u = 1 - g'θ), with an exact line search (φ' is piecewise linear); the smoothed objective is piecewise
  quadratic, so a step that keeps every row's piece is its exact minimiser;
* τ = 1, 0.1, 0.01, ... (from 1e-4 when warm-started at the previous C); after each level, a polish: the
  rows in the smoothing zone are taken as the margin set E, those above it as L (λ = 1), the rest as R
  (λ = 0), and θ = C Σ_L w g + δ with δ the least-norm solution of ``G_E θ = 1``; it is accepted when it
  meets the KKT conditions of F to 1e-9: ``G_E θ = 1``, the L rows at or inside the margin, the R rows
  at or outside it, and multipliers λ_E in [0, 1] with ``θ = C Σ w λ g`` (least squares; bounded least
  squares when E holds more rows than its rank, as on COMPAS: 17 rows on a 9-dimensional margin).

The accepted θ is the optimum to rounding (F is 1-strongly convex). Equal to LinearSVC at
``tol=1e-10, max_iter=10**6`` to 1e-9 and to Clarabel to 1e-9 on Pima's folds (tests/test_model_classes_norm.py).
"""

from __future__ import annotations

import numpy as np

__all__ = ["C_GRID", "hinge_svm", "hinge_svm_cv"]

C_GRID = np.logspace(-3, 2, 11)
_WARM_TAU = 1e-4  # the first smoothing of a fit warm-started at the previous C (10^5 x 20: 20% fewer Newton steps
# than from 1e-2; the polish makes every fit exact whatever the start)


def _merge(Z: np.ndarray, s: np.ndarray):
    """Rows ``g = s (z, 1)`` of the distinct (z, s) and their counts (exact: F depends on θ only)."""
    U, counts = np.unique(np.column_stack([Z, s]), axis=0, return_counts=True)
    return np.column_stack([U[:, :-1], np.ones(len(U))]) * U[:, -1:], counts.astype(float)


def _line_search(phi0: float, dd: float, u: np.ndarray, delta: np.ndarray, cw: np.ndarray, tau: float) -> float:
    """argmin over t >= 0 of the smoothed objective along θ + tΔ: the root of its derivative,
    ``φ'(t) = φ'(0) + t Δ'Δ - Σ_i cw_i δ_i (h'(u_i - tδ_i) - h'(u_i))`` (h' = clip(·/τ, 0, 1), δ = GΔ),
    nondecreasing and piecewise linear. The root is bracketed first by evaluating φ' at t = 1, 4, 16, ...
    (O(n) each; a Newton step usually ends near 1), then found exactly on the linear pieces inside the
    bracket, whose breakpoints alone are sorted (near the optimum a few rows, not all)."""
    nz = delta != 0
    u, delta, cw = u[nz], delta[nz], cw[nz]
    if not len(u):
        return -phi0 / dd
    h0 = np.clip(u / tau, 0.0, 1.0)
    cd = cw * delta

    def dphi(t: float) -> float:
        return phi0 + t * dd - float(cd @ (np.clip((u - t * delta) / tau, 0.0, 1.0) - h0))

    t_lo, f_lo, t_hi = 0.0, phi0, 1.0
    f_hi = dphi(t_hi)
    while f_hi < 0:  # φ'(t) >= φ'(0) + tΔ'Δ: a bracket within -φ'(0)/Δ'Δ
        t_lo, f_lo, t_hi = t_hi, f_hi, 4.0 * t_hi
        f_hi = dphi(t_hi)
    a, b = u / delta, (u - tau) / delta  # row i is in the zone 0 < u_i - tδ_i < τ for t strictly between a and b
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    k = cw * delta * delta / tau
    ins = (lo > t_lo) & (lo < t_hi)
    outs = (hi > t_lo) & (hi < t_hi)
    ts = np.concatenate([lo[ins], hi[outs]])
    if not len(ts):  # one linear piece: interpolation is exact
        return t_lo - f_lo * (t_hi - t_lo) / (f_hi - f_lo)
    slope0 = dd + float(k[(lo <= t_lo) & (hi > t_lo)].sum())  # slope of φ' right after t_lo
    order = np.argsort(ts, kind="stable")
    ts, dk = np.r_[t_lo, ts[order]], np.concatenate([k[ins], -k[outs]])[order]
    slope = slope0 + np.r_[0.0, np.cumsum(dk)]  # slope of φ' right after ts[j]
    vals = np.empty(len(ts))  # φ'(ts[j])
    vals[0] = f_lo
    vals[1:] = f_lo + np.cumsum(slope[:-1] * np.diff(ts))
    j = int(np.searchsorted(vals >= 0, True))  # vals is nondecreasing: first event with φ' >= 0
    if j == len(ts):  # the root lies after the last breakpoint, before t_hi
        return float(ts[-1] - vals[-1] / slope[-1])
    return float(ts[j - 1] - vals[j - 1] / slope[j - 1]) if j else t_lo


def _polish(G: np.ndarray, cw: np.ndarray, u: np.ndarray, tau: float, tol: float = 1e-9):
    """The exact minimiser of F if the smoothed solution's pieces are its margin partition, else None."""
    E, L = (u > 0) & (u < tau), u >= tau
    th = G[L].T @ cw[L]
    if E.any():
        GE = G[E]
        delta = np.linalg.lstsq(GE, 1.0 - GE @ th, rcond=None)[0]
        th = th + delta
        if np.abs(GE @ th - 1.0).max() > tol:
            return None
        B = GE.T * cw[E]
        lam = np.linalg.lstsq(B, delta, rcond=None)[0]
        if lam.min() < 0 or lam.max() > 1:
            from scipy.optimize import lsq_linear

            lam = lsq_linear(B, delta, bounds=(0.0, 1.0), method="bvls").x
        if np.abs(B @ lam - delta).max() > tol * max(1.0, np.abs(th).max()):
            return None
    m = 1.0 - G @ th
    R = ~(E | L)
    if (L.any() and m[L].min() < -tol) or (R.any() and m[R].max() > tol):
        return None
    return th


def hinge_svm(
    G: np.ndarray,
    w: np.ndarray,
    C: float,
    theta: np.ndarray | None = None,
    tau: float = 1.0,
    tau_min: float = 1e-12,
    max_newton: int = 200,
) -> np.ndarray | None:
    """``argmin ½||θ||² + C Σ w_i max(0, 1 - g_i'θ)`` (rows g_i of G), or None if no level verified."""
    d = G.shape[1]
    cw = C * np.asarray(w, dtype=float)
    theta = np.zeros(d) if theta is None else np.array(theta, dtype=float)
    zone_before = None
    while tau >= tau_min:
        u = 1.0 - G @ theta
        for _ in range(max_newton):
            zone = (u > 0) & (u < tau)
            grad = theta - G.T @ (cw * np.clip(u / tau, 0.0, 1.0))
            H = np.eye(d) + (G[zone].T * (cw[zone] / tau)) @ G[zone]
            step = -np.linalg.solve(H, grad)
            phi0 = float(grad @ step)
            if not phi0 < 0:
                break
            delta = G @ step
            t = _line_search(phi0, float(step @ step), u, delta, cw, tau)
            theta = theta + t * step
            u_new = u - t * delta  # (recomputed from θ at each level and in the polish)
            same = np.array_equal(u_new > 0, u > 0) and np.array_equal(u_new < tau, u < tau)
            u = u_new
            if same:  # every row kept its piece: the exact minimiser of the smoothed objective
                break
        zone = (u > 0) & (u < tau)
        # a margin set of more than 4d rows is degenerate: tried only once the zone has settled
        if zone.sum() <= 4 * d or (zone_before is not None and np.array_equal(zone, zone_before)):
            th = _polish(G, cw, u, tau)
            if th is not None:
                return th
        zone_before = zone
        tau *= 0.1
    return None


def hinge_svm_cv(Z: np.ndarray, y: np.ndarray, Cs: np.ndarray = C_GRID, n_splits: int = 5):
    """``GridSearchCV(LinearSVC(loss="hinge"), {"C": Cs}, cv=n_splits)`` with exact fits: the same folds
    (``StratifiedKFold`` without shuffling), accuracy of ``sign(Zβ + b)`` (the positive class when > 0),
    the first C of the best mean score, the refit on all rows. Returns ``(C, β, b, mean scores)``.
    A fit that no level verifies (not seen) falls back to liblinear's."""
    from sklearn.model_selection import StratifiedKFold

    Z = np.asarray(Z, dtype=float)
    s = np.where(np.asarray(y) > 0, 1.0, -1.0)
    Cs = np.asarray(Cs, dtype=float)

    def path(rows, grid):
        G, w = _merge(Z[rows], s[rows])
        theta = None
        for C in grid:
            th = hinge_svm(G, w, C, theta, tau=1.0 if theta is None else _WARM_TAU)
            theta = _liblinear(Z[rows], s[rows], C) if th is None else th
            yield theta

    scores = np.zeros((len(Cs), n_splits))
    for f, (train, test) in enumerate(StratifiedKFold(n_splits).split(Z, s > 0)):
        for j, th in enumerate(path(train, Cs)):
            scores[j, f] = np.mean((Z[test] @ th[:-1] + th[-1] > 0) == (s[test] > 0))
    means = np.average(scores, axis=1)  # GridSearchCV's mean_test_score; argmax: the first of ties
    best = int(np.argmax(means))
    th = next(path(np.arange(len(s)), Cs[best : best + 1]))
    return float(Cs[best]), th[:-1], float(th[-1]), means


def _liblinear(Z: np.ndarray, s: np.ndarray, C: float) -> np.ndarray:
    """The fallback fit: LinearSVC as the grid search ran it, (β, b)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svc = LinearSVC(loss="hinge", C=C, max_iter=20000, random_state=0).fit(Z, s > 0)
    return np.r_[svc.coef_.ravel(), svc.intercept_]
