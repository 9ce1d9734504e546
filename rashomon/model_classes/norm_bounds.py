"""Certified norm bounds of loss-only Rashomon sets: ``norm_bound=np.inf`` and the tightening of an inactive bound.

A class's set is ``S = {θ : e(θ) <= ε, θ'Bθ <= r}``. When the loss alone bounds the set, ``S_loss = {θ : e(θ) <=
ε}`` is bounded and ``r* >= max_{S_loss} θ'Bθ`` makes the ball inactive: ``S`` with ``min(r, r*)`` is the same set
for every ``r >= r*`` (``np.inf`` included), and the searches, which scale with the ball, run on the smaller one.

``S_loss`` is bounded iff the recession function of e is positive in every direction: for the squared loss iff the
design has full column rank; for the logistic and hinge losses iff no direction ``v != 0`` has ``y_i d_i'v >= 0`` for
every row (the classes are not separable, even weakly).

Bounds (each an upper bound on ``max_{S_loss} θ'Bθ``, exact for the squared loss):

* squared loss: ``S_loss`` is the ellipsoid ``(θ - θ̂)'Q(θ - θ̂) <= ε - e_min`` and the maximum of a convex
  quadratic over it is the Lagrangian dual of a trust-region problem (:func:`ellipsoid_norm_bound`, tight);
* logistic loss: a quadratic minorant ``e(θ0 + u) >= e(θ0) + g'u + ½u'H_ρu`` valid for ``‖u‖_P <= ρ`` (generalised
  self-concordance, :meth:`~rashomon.model_classes.MarginLoss.sc_curvatures`) gives an ellipsoid E ⊇ S_loss ∩
  {‖u‖_P <= ρ}; when E lies strictly inside that region, S_loss ⊆ E (S_loss is convex and contains θ0: a member
  outside the region would put a point of the segment to θ0 on the region's boundary, inside E);
* hinge loss (and the logistic's fallback): the box of the polyhedron ``mean_i max_k(a_k + b_k·m_i) <= ε`` (pieces
  of a polyhedral minorant of the loss; exact for the hinge) in the coordinates where ``θ'Bθ = ‖Fθ‖²``, from
  linear programmes (HiGHS), widened by ``1e-6`` relative for the solver's tolerances.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from ..solvers import quiet_highs

__all__ = [
    "penalty_factor",
    "ellipsoid_norm_bound",
    "quadratic_norm_bound",
    "margin_norm_bound",
    "margin_minimiser",
    "polyhedral_norm_bound",
    "least_loss_point",
    "rounding_factor",
    "unbounded_error",
    "squared_loss_minimiser",
    "HINGE_PIECES",
    "LOGISTIC_PIECES",
]

#: ``ℓ(m) >= max_k (a_k + b_k·m)``: the hinge exactly; the logistic loss by its asymptotes and tangent at 0
HINGE_PIECES = ((0.0, 0.0), (1.0, -1.0))
LOGISTIC_PIECES = ((0.0, 0.0), (0.0, -1.0), (math.log(2.0), -0.5))
_SAFETY = 1e-9  # relative widening of the closed-form bounds (rounding)
_LP_SAFETY = 1e-6  # relative widening of the linear programmes' extremes (HiGHS' feasibility tolerance is 1e-7)


def least_loss_point(Q: np.ndarray, c: np.ndarray) -> np.ndarray | None:
    """The minimiser ``Q⁻¹c`` of a squared loss ``θ'Qθ - 2c'θ + k`` (``norm_bound=np.inf``), or None when the loss has
    a free direction (Q singular to a condition number of about 1e14: the design lacks full column rank)."""
    try:
        C = np.linalg.cholesky(0.5 * (Q + Q.T))
    except np.linalg.LinAlgError:
        return None
    dg = np.diag(C)
    if not dg.min() > 1e-7 * dg.max():
        return None
    return linalg.cho_solve((C, True), c)


def unbounded_error(cls: str, func: str, why: str):
    """The error of ``norm_bound=np.inf`` where the loss alone does not bound the set."""
    from ..utils.validation import RashomonInputError

    return RashomonInputError(
        f"The 'norm_bound' parameter of {cls} must be finite in {func} here: the loss alone does not bound the "
        f"set ({why}). Got inf instead."
    )


def squared_loss_minimiser(eo, cls: str, func: str) -> np.ndarray:
    """``argmin e_orig`` for ``norm_bound=np.inf`` (a :class:`~rashomon.model_classes.Quadratic`), or the error."""
    theta = least_loss_point(eo.Q, eo.c)
    if theta is None:
        raise unbounded_error(cls, func, "the design does not have full column rank")
    return theta


def penalty_factor(B: np.ndarray) -> np.ndarray:
    """F with ``θ'Bθ = ‖Fθ‖²`` (rows: the directions B penalises, scaled by the square roots of its eigenvalues)."""
    ev, V = np.linalg.eigh(0.5 * (B + B.T))
    keep = ev > 1e-12 * max(ev.max(initial=0.0), 1e-300)
    return np.sqrt(ev[keep])[:, None] * V[:, keep].T


def ellipsoid_norm_bound(a: np.ndarray, A: np.ndarray) -> float:
    """``max_{‖w‖ <= 1} ‖a + Aw‖²``, from above: the Lagrangian dual ``min_{λ > λ_max(A'A)} λ + ‖a‖² + b'(λI -
    A'A)⁻¹b`` with ``b = A'a`` (every such λ bounds it; strong duality holds for this trust-region problem)."""
    ev, V = np.linalg.eigh(A.T @ A)
    ev = np.maximum(ev, 0.0)
    b = V.T @ (A.T @ a)
    aa = float(a @ a)
    top = float(ev[-1]) if ev.size else 0.0
    nb = float(np.linalg.norm(b))

    def dual(lam):
        return lam + aa + float(np.sum(b * b / (lam - ev)))

    if nb <= 1e-300:
        lam = top * (1 + 1e-12) + 1e-300
        return dual(lam) * (1 + _SAFETY)
    lo, hi = top, top + nb  # Σ b²/(λ - ev)² - 1 changes sign on (lo, hi]
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if float(np.sum(b * b / (mid - ev) ** 2)) > 1.0:
            lo = mid
        else:
            hi = mid
    return dual(hi) * (1 + _SAFETY)


def rounding_factor(M: np.ndarray) -> float:
    """``1 + 1e3·cond(M)·eps``: the widening of a bound computed through M's factorisation (its centre and axes
    carry relative errors of about cond·eps); ``inf`` when cond(M) > 1e12 (too few digits left to certify)."""
    ev = np.linalg.eigvalsh(0.5 * (M + M.T))
    if not ev[0] > 0:
        return math.inf
    cond = float(ev[-1] / ev[0])
    return math.inf if cond > 1e12 else 1.0 + 1e3 * cond * np.finfo(float).eps


def quadratic_norm_bound(Q: np.ndarray, theta_hat: np.ndarray, delta: float, B: np.ndarray) -> float:
    """``max θ'Bθ`` over ``(θ - θ̂)'Q(θ - θ̂) <= delta`` (Q positive definite): exact, to rounding (widened by
    :func:`rounding_factor`; ``inf`` when Q is too ill-conditioned to certify it)."""
    grow = rounding_factor(Q)
    if math.isinf(grow):
        return math.inf
    F = penalty_factor(B)
    C = np.linalg.cholesky(0.5 * (Q + Q.T))
    A = F @ linalg.solve_triangular(C.T, np.eye(len(theta_hat)), lower=False) * math.sqrt(max(delta, 0.0))
    return ellipsoid_norm_bound(F @ theta_hat, A) * grow


def margin_norm_bound(Dy: np.ndarray, theta0: np.ndarray, level: float, B: np.ndarray, loss) -> float:
    """An upper bound on ``max θ'Bθ`` over ``{θ : mean ℓ(Dy θ) <= level}`` for a smooth margin loss
    ``ℓ(m) = s·softplus((c - m)/s)`` (a :class:`~rashomon.model_classes.MarginLoss`: the logistic loss, or a
    smoothed hinge) from its self-concordant quadratic minorant around θ0 (a member of the set, ideally its
    minimiser); ``inf`` when the minorant does not close the set within 40 steps (the set may be unbounded)."""
    from scipy.special import expit

    n, d = Dy.shape
    m0 = Dy @ theta0
    delta = float(level) - float(np.mean(loss.value(m0)))
    if not delta >= 0:
        return math.inf
    g = -(Dy.T @ expit((loss.c - m0) / loss.s)) / n  # ℓ'(m) = -σ((c - m)/s)
    P = Dy.T @ (loss.curvature(m0)[:, None] * Dy) / n
    P = 0.5 * (P + P.T) + 1e-12 * np.trace(P) / d * np.eye(d)
    try:
        Lp = np.linalg.cholesky(P)
    except np.linalg.LinAlgError:
        return math.inf
    lev = np.sqrt(np.sum(linalg.solve_triangular(Lp, Dy.T, lower=True) ** 2, axis=0))  # ‖d_i‖ in P⁻¹
    rho = 2.0 * math.sqrt(2.0 * delta + float(g @ np.linalg.solve(P, g)) + 1e-300)
    for _ in range(40):
        k_low = loss.sc_curvatures(m0, rho * lev)[0]  # e(θ0 + u) >= e(θ0) + g'u + ½u'Hu on ‖u‖_P <= ρ
        H = Dy.T @ (k_low[:, None] * Dy) / n
        try:
            C = np.linalg.cholesky(0.5 * (H + H.T))
        except np.linalg.LinAlgError:
            return math.inf
        Cinv_g = linalg.solve_triangular(C, g, lower=True)
        centre = -linalg.solve_triangular(C.T, Cinv_g, lower=False)  # -H⁻¹g
        rad2 = 2.0 * delta + float(Cinv_g @ Cinv_g)  # E: (u - centre)'H(u - centre) <= rad2
        # the largest ‖u‖_P on E: ‖centre‖_P + sqrt(rad2 · λ_max(C⁻¹PC⁻ᵀ))
        W = linalg.solve_triangular(C, Lp, lower=True)
        grow = rounding_factor(H)  # the factorisations' rounding, on the reach and on the bound
        reach = math.sqrt(float(centre @ P @ centre)) + math.sqrt(rad2) * float(np.linalg.norm(W, 2))
        reach *= grow * (1 + 1e-9)
        if not math.isfinite(reach):
            return math.inf
        if reach < rho:  # E inside the region: it contains the whole set
            F = penalty_factor(B)
            A = F @ linalg.solve_triangular(C.T, np.eye(d), lower=False) * math.sqrt(rad2)
            return ellipsoid_norm_bound(F @ (theta0 + centre), A) * grow
        rho = max(1.5 * reach, 2.0 * rho)
    return math.inf


def margin_minimiser(Dy: np.ndarray, loss, max_iter: int = 60) -> np.ndarray | None:
    """The minimiser of ``mean ℓ(Dy θ)`` for a smooth margin loss by damped Newton (None if it does not
    converge: the classes may be separable). Only a start: the bounds built on it are certified whatever its
    accuracy."""
    from scipy.special import expit

    n, d = Dy.shape
    theta = np.zeros(d)
    val = float(np.mean(loss.value(Dy @ theta)))
    for _ in range(max_iter):
        m = Dy @ theta
        g = -(Dy.T @ expit((loss.c - m) / loss.s)) / n
        H = Dy.T @ (loss.curvature(m)[:, None] * Dy) / n
        H = 0.5 * (H + H.T) + 1e-12 * max(np.trace(H) / d, 1e-300) * np.eye(d)
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            return None
        dec = float(g @ step)
        if not math.isfinite(dec):
            return None
        if dec <= 1e-20 * max(val, 1e-300):
            return theta
        t = 1.0
        while t > 1e-10:
            new = theta - t * step
            nv = float(np.mean(loss.value(Dy @ new)))
            if nv <= val - 0.25 * t * dec:
                break
            t *= 0.5
        else:
            return theta
        theta, val = new, nv
    return theta


def polyhedral_norm_bound(Dy: np.ndarray, pieces, level: float, B: np.ndarray) -> float:
    """An upper bound on ``max θ'Bθ`` over ``{θ : mean_i max_k (a_k + b_k·(Dy θ)_i) <= level}``: the box of the
    polyhedron in the coordinates ``Fθ`` (``θ'Bθ = ‖Fθ‖²``), two linear programmes per coordinate; ``inf`` when a
    programme is unbounded (some direction is free: the classes are separable, or X has dependent columns)."""
    import scipy.sparse as sp

    n, d = Dy.shape
    F = penalty_factor(B)
    h, highspy = quiet_highs()
    inf = highspy.kHighsInf
    h.setOptionValue("threads", 1)
    h.setOptionValue("output_flag", False)
    h.addVars(d + n, np.r_[np.full(d, -inf), np.zeros(n)], np.full(d + n, inf))
    blocks, rhs = [], []
    for a, b in pieces:
        if b == 0.0:
            continue  # ξ >= a: a column bound (a = 0 here)
        blocks.append(sp.hstack([sp.csr_matrix(b * Dy), -sp.identity(n, format="csr")]))
        rhs.append(np.full(n, -a))
    blocks.append(sp.csr_matrix(np.r_[np.zeros(d), np.ones(n)][None, :]))
    rhs.append(np.array([n * float(level)]))
    M = sp.vstack(blocks, format="csr")
    up = np.concatenate(rhs)
    h.addRows(
        M.shape[0],
        np.full(M.shape[0], -inf),
        up,
        M.nnz,
        M.indptr[:-1].astype(np.int32),
        M.indices.astype(np.int32),
        M.data,
    )
    cols = np.arange(d, dtype=np.int32)
    total = 0.0
    for f in F:
        ext = 0.0
        for sign in (1.0, -1.0):
            h.changeColsCost(d, cols, sign * f)
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                return math.inf
            v = abs(float(h.getInfo().objective_function_value))
            ext = max(ext, v)
        ext = ext * (1 + _LP_SAFETY) + _LP_SAFETY * float(np.linalg.norm(f))
        total += ext * ext
    return total * (1 + _SAFETY)
