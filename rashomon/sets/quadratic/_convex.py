"""MCR for linear models under convex non-quadratic losses (hinge, logistic, absolute).

Lower end. For γ >= 0, ``min_θ γ·e_orig(θ) + e_switch(θ)`` over ``θ'Bθ <= r`` is a
convex programme (``solvers.ConvexLossProgram``). Its certificate includes a
Lagrangian dual value ``q <= h*``, and the bounds of :mod:`rashomon._mcr` hold
with any lower bound of h* in place of h*, so each step gives a *valid* bound
whatever the solver's accuracy: ratio ``max(q, 0)/ε - γ`` (losses are >= 0, so
h* >= 0), difference ``q - (1+γ)ε``. γ is searched as for squared loss
(``e_orig`` of the minimiser crosses ε); when the e_switch minimiser already lies
in the Rashomon set the tight value needs γ < 0, a non-convex problem: the γ = 0
bound is returned (valid, not tight; the gap says by how much).

Upper end. ``max MR`` over the Rashomon set is non-convex. An inner value is
found by Dinkelbach's method with the convex e_switch linearised (convex–
concave procedure): from θ_k, maximise ``e_switch(θ_k) + g_k'(θ - θ_k) - λ_k·e_orig(θ)``
(λ_k = MR(θ_k) for the ratio, 1 for the difference) subject to
``e_orig(θ) <= ε`` and ``θ'Bθ <= r``; every iterate stays in the set and MR never
decreases. Several starts; the best model is returned and flagged
``upper_certified=False``: it is a lower bound on MCR+, not an upper bound.

e_switch is the exact all-pairs U-statistic, written over the distinct values v
of the switched block with weights ``#{i ≠ j : x1_i = v}`` (as in
:func:`rashomon.model_reliance`), so a binary or categorical group costs O(n)
rows; a continuous one n² rows (``max_rows`` guards memory).
"""

from __future__ import annotations

import math

import numpy as np

from ...solvers import ConvexLossProgram, LossTerm, SolverStatus
from ...utils.validation import RashomonInputError
from .._results import MCRResult
from .._steps import MCRModel, MCRStep, level_point, mr_value, step_bound

__all__ = ["convex_loss_mcr", "encode_labels", "e_orig_program", "SOLVER_LOSS"]

SOLVER_LOSS = {"hinge": "hinge", "logistic": "logistic", "absolute_error": "absolute"}
MAX_ROWS = 2_000_000


def encode_labels(y, loss, func):
    """y as the loss reads it: labels {0, 1} or {-1, +1} to ±1 for hinge / logistic; y otherwise."""
    if loss in ("hinge", "logistic"):
        vals = set(np.unique(y).tolist())
        if vals <= {-1.0, 1.0}:
            return y.astype(float)
        if vals <= {0.0, 1.0}:
            return 2.0 * y - 1.0
        raise RashomonInputError(
            f"The 'y' parameter of {func} must hold labels in {{-1, +1}} or {{0, 1}} for loss={loss!r}."
        )
    return y


def e_orig_program(par, X, ye, loss):
    """``(t_orig, theta_min, e_min)``: the e_orig loss term on the class's design, its minimiser over
    the norm ball and the least loss (built and solved once by :class:`~rashomon.RashomonSet`)."""
    t_orig = LossTerm(SOLVER_LOSS[loss], par.design(X), 0.0, ye)
    res = ConvexLossProgram([t_orig], par.B, par.r).solve([1.0])
    return t_orig, res.x, t_orig.value(res.x)


def _dloss(loss, y, z):
    if loss == "hinge":
        return np.where(1 - y * z > 0, -y, 0.0)
    if loss == "logistic":
        return -y / (1 + np.exp(np.clip(y * z, -700, 700)))
    return -np.sign(y - z)


def convex_loss_mcr(
    par,
    X,
    ye,
    columns,
    group,
    *,
    loss,
    t_orig,
    theta_min,
    e_min,
    e_ref,
    epsilon_abs,
    reference_theta,
    kind,
    tol,
    max_iter,
    n_starts,
    random_state,
    func,
) -> MCRResult:
    """MCR of ``group`` over a fitted convex-loss Rashomon set.

    ``par`` is the class's :class:`~rashomon.model_classes.LinearParametrization`, ``ye`` the
    encoded labels, ``t_orig`` the e_orig loss term and ``theta_min``/``e_min``, ``e_ref``,
    ``epsilon_abs`` and ``reference_theta`` the set's fitted pieces; nothing here chooses a
    reference or a threshold.
    """
    import cvxpy as cp

    n, p = X.shape
    o, mean, sd, B, r = par.o, par.mean, par.sd, par.B, par.r
    d = p + o
    D = t_orig.F
    Z = D[:, o:]
    eps = float(epsilon_abs)
    # switched rows over distinct values of the group
    g = np.asarray(group)
    values, inverse, counts = np.unique(Z[:, g], axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    if len(values) * n > MAX_ROWS:
        raise RashomonInputError(
            f"{func}: exact e_switch for loss={loss!r} needs {len(values) * n:,} switched rows (> {MAX_ROWS:,}); "
            "use fewer rows or a discrete feature group."
        )
    rows = np.repeat(D[None], len(values), axis=0)  # values × n × d
    rows[:, :, g + o] = values[:, None, :]
    F = rows.reshape(-1, d)
    wts = (counts[:, None] - (inverse[None, :] == np.arange(len(values))[:, None])).reshape(-1).astype(float)
    ys = np.tile(ye, len(values))
    keep = wts > 0
    F, wts, ys = F[keep], wts[keep], ys[keep]
    sl = SOLVER_LOSS[loss]
    t_sw = LossTerm(sl, F, 0.0, ys, row_weights=wts * len(wts) / (n * (n - 1)))
    prog = ConvexLossProgram([t_orig, t_sw], B, r)

    e_o, e_s = t_orig.value, t_sw.value  # mean loss, and the weighted all-pairs U-statistic

    steps: list[MCRStep] = []
    cands = [theta_min]

    def step(gamma):
        res = prog.solve([gamma, 1.0], check=False)
        if res.status is not SolverStatus.OPTIMAL:
            st = MCRStep("lower", gamma, math.nan, res.x, math.nan, math.nan, False)
        else:
            lb = max(res.info["lower_bound"], 0.0) if kind == "ratio" else res.info["lower_bound"]
            st = MCRStep("lower", gamma, lb, res.x, e_o(res.x), e_s(res.x), True, res.multiplier)
            cands.append(res.x)
        steps.append(st)
        return st

    def bound():
        vals = [step_bound(s, eps, kind) for s in steps]
        vals = [v for v in vals if np.isfinite(v)]
        return max(vals) if vals else (0.0 if kind == "ratio" else -math.inf)

    def best_lower_model():
        best, m = None, math.inf
        for th in cands:
            eo_ = e_o(th)
            if eo_ <= eps and th @ B @ th <= r * (1 + 1e-6):
                v = mr_value(eo_, e_s(th), kind)
                if v < m:
                    best, m = th, v
        return best, m

    s0 = step(0.0)
    notes = []
    if s0.theta is not None and s0.e_orig > eps:
        lo, hi = 0.0, None
        gval = 1.0
        for _ in range(60):
            st = step(gval)
            if st.theta is not None and st.e_orig <= eps:
                hi = gval
                break
            lo, gval = gval, gval * 2

        def on_segment():
            # Between the bracketing minimisers (e_orig above / below ε) lies a model with e_orig = ε:
            # e_orig is convex along the segment, so bisection on t finds it; the ball is convex.
            a = next(s for s in steps if s.gamma == lo).theta
            b = next(s for s in steps if s.gamma == hi).theta
            if a is None or b is None:
                return
            cands.append(level_point(e_o, a, b, eps))

        if hi is not None:
            for _ in range(min(max_iter, 60)):
                on_segment()
                _, m = best_lower_model()
                if m - bound() <= max(tol, 1e-5) * max(1.0, abs(bound())):
                    break
                mid = 0.5 * (lo + hi)
                st = step(mid)
                if st.theta is not None and st.e_orig <= eps:
                    hi = mid
                else:
                    lo = mid
    else:
        notes.append(
            "lower end: the e_switch minimiser is already in the Rashomon set; the tight bound needs γ < 0 "
            "(non-convex for this loss), so the γ = 0 bound is returned (valid, possibly conservative)"
        )
    lower = bound()
    lth, lmr = best_lower_model()
    lower_gap = max(0.0, lmr - lower) if lth is not None else math.inf

    # upper end: Dinkelbach + convex-concave ascent (inner value)
    rng = np.random.RandomState(random_state if isinstance(random_state, (int, np.integer)) else 0)
    starts = [theta_min] + [c for c in cands[1:4]]
    for _ in range(max(0, n_starts - len(starts))):
        v = rng.normal(size=d)
        v *= math.sqrt(r / max(v @ B @ v, 1e-300)) * rng.uniform(0.2, 1.0)
        for _ in range(60):  # pull toward θ_min until inside the set
            if e_o(v) <= eps:
                break
            v = 0.5 * (v + theta_min)
        starts.append(v)
    th_var = cp.Variable(d)
    Bh = np.linalg.cholesky(B[o:, o:] + 1e-300 * np.eye(p)) if np.all(np.linalg.eigvalsh(B[o:, o:]) > 0) else None
    norm_c = cp.sum_squares(Bh.T @ th_var[o:]) <= r if Bh is not None else cp.quad_form(th_var, cp.psd_wrap(B)) <= r
    eo_expr = t_orig.expr(th_var)
    best_up, best_th = -math.inf, None
    for th in starts:
        if e_o(th) > eps * (1 + 1e-9):
            continue
        cur = mr_value(e_o(th), e_s(th), kind)
        for _ in range(50):
            lam = cur if kind == "ratio" else 1.0
            z = F @ th
            grad = F.T @ (wts * _dloss(loss, ys, z)) / (n * (n - 1))
            obj = e_s(th) + grad @ (th_var - th) - lam * eo_expr
            prob = cp.Problem(cp.Maximize(obj), [eo_expr <= eps, norm_c])
            try:
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    prob.solve(solver=cp.CLARABEL)
            except cp.error.SolverError:
                break
            if th_var.value is None:
                break
            new = np.asarray(th_var.value, dtype=float)
            if e_o(new) > eps * (1 + 1e-7):
                break
            val = mr_value(e_o(new), e_s(new), kind)
            if val <= cur + 1e-10 * max(1.0, abs(cur)):
                if val > cur:
                    th, cur = new, val
                break
            th, cur = new, val
        if cur > best_up:
            best_up, best_th = cur, th
    notes.append(
        "upper end: non-convex for this loss; the value is the best model found by convex-concave "
        "(Dinkelbach) ascent, an inner value (a lower bound on MCR+), not a certified bound"
    )

    def model(th):
        if th is None:
            return None
        e1, e2 = e_o(th), e_s(th)
        coef = th[o:] / sd
        return MCRModel(
            np.asarray(th),
            e1,
            e2,
            mr_value(e1, e2, kind),
            {"coef": coef, "intercept": float((th[0] if o else 0.0) - mean @ coef)},
            par.estimator(th),
        )

    names = tuple(columns[i] if columns else f"x{i}" for i in group)
    return MCRResult(
        lower=float(lower),
        upper=float(best_up),
        lower_model=model(lth),
        upper_model=model(best_th),
        lower_gap=float(lower_gap),
        upper_gap=math.nan,
        lower_tight=bool(lower_gap <= max(tol, 1e-5) * max(1.0, abs(lower))),
        upper_tight=False,
        gamma_lower=float(
            max(
                steps, key=lambda s: step_bound(s, eps, kind) if np.isfinite(step_bound(s, eps, kind)) else -math.inf
            ).gamma
        ),
        gamma_upper=math.nan,
        kind=kind,
        features=names,
        epsilon_abs=float(eps),
        e_ref=float(e_ref),
        e_min=float(e_min),
        reference_model=model(reference_theta),
        steps=steps,
        model_class=par.class_name,
        tol=tol,
        certified=all(s.certified for s in steps),
        lower_certified=True,
        upper_certified=False,
        loss=loss,
        notes="; ".join(notes),
    )
