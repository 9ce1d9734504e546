"""The exact hinge range of one functional where the ball does not bind: a reduced linear programme (HiGHS).

Where the class's ball is inactive at the optimum, ``min c'θ`` over the hinge set is the linear programme

    min c'θ  s.t.  t_j >= 1 - z_j'θ,  t_j >= 0,  Σ_j w_j t_j <= ε

(distinct signed rows z_j with weights w_j). Near an approximate solution θ̂ only the rows with margin close to 1
can change side; the others enter as one linear term (``a_A - g_A'θ`` for the rows below 1, nothing for those above).
The programme over the near rows W (``|1 - z_j'θ̂| <= δ``) is solved by HiGHS' dual simplex, θ boxed by the
coordinate extremes of K (a solution on the box means the ball binds: no answer). Its solution is checked against
the fixed rows (each on its side of 1); a row that is not joins W and the programme is solved again.

The answer is a candidate only, as everywhere in :mod:`._batch`: the multipliers it gives (λ of the loss row, α_j =
u_j/(λ w_j) on W) are certified by weak duality, and the member is checked in S.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["hinge_lp"]

_ROUNDS = 4  # programmes per functional (W grows by the rows found on the wrong side)
_NEAR = 64  # the near rows: at least this many, those closest to the kink
_CUTS = 12  # tangent cuts of the ball, where it binds


def hinge_lp(bat, c, th, box):
    """``(θ, λ, ∇, Σ_j w_j α_j)`` of ``min c'θ`` over the hinge set without the ball, from the approximate solution
    ``th``; ``box`` = (lower, upper) bounds of θ containing K. Where the ball binds: ``(θ, λ, E)``, the solution
    with up to ``_CUTS`` tangent cuts of the ball and its kink rows (a start for :func:`._hinge_exact.exact_hinge`).
    None when HiGHS fails."""
    from scipy.optimize import linprog

    Z, Zw, w, eps, d = bat.Z, bat.Zw, bat.w, bat.eps, bat.d
    mg = Z @ th
    dist = np.abs(1.0 - mg)
    k = min(len(w), max(_NEAR, int(np.sum(dist <= 1e-2))))
    near = np.zeros(len(w), dtype=bool)
    near[np.argpartition(dist, k - 1)[:k]] = True
    lo, hi = box
    Bt, r = bat.Bt, bat.r
    cuts: list = []
    for _ in range(_ROUNDS + _CUTS):
        W = np.where(near)[0]
        act = ~near & (mg < 1.0)
        g, aA = Zw.T @ act, float(w @ act)
        kw = len(W)
        # variables (θ, t_W): -z_j'θ - t_j <= -1 (j in W);  -g'θ + Σ w_j t_j <= ε - a_A
        A_ub = np.zeros((kw + 1 + len(cuts), d + kw))
        A_ub[:kw, :d] = -Z[W]
        A_ub[np.arange(kw), d + np.arange(kw)] = -1.0
        A_ub[kw, :d] = -g
        A_ub[kw, d:] = w[W]
        for k_, (a, _b) in enumerate(cuts):  # tangent cuts of the ball
            A_ub[kw + 1 + k_, :d] = a
        b_ub = np.concatenate([-np.ones(kw), [eps - aA], [b for _a, b in cuts]])
        bounds = [(lo[i], hi[i]) for i in range(d)] + [(0.0, None)] * kw
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = linprog(
                    np.concatenate([c, np.zeros(kw)]),
                    A_ub=A_ub,
                    b_ub=b_ub,
                    bounds=bounds,
                    method="highs-ds",
                    options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
                )
            except ValueError:
                return None
        if res.status != 0 or res.x is None:
            return None
        x = res.x[:d]
        m2 = Z @ x
        q = float(x @ Bt @ x)
        if q > r * (1 + 1e-9):  # outside the ball: cut it off at the ball's point along x
            if len(cuts) >= _CUTS:
                break
            a = Bt @ x
            cuts.append((a, float(np.sqrt(r * q))))
            continue
        wrong = ~near & ((act & (m2 >= 1.0)) | (~act & (m2 <= 1.0)))
        if wrong.any():
            near |= wrong
            mg = m2
            continue
        lam = -float(res.ineqlin.marginals[kw])
        if not lam > 0:
            return None
        if cuts:
            return x, lam, np.where(near & (np.abs(1.0 - m2) <= 1e-9))[0]
        u = -np.asarray(res.ineqlin.marginals[:kw])
        alpha = np.clip(u / (lam * w[W]), 0.0, 1.0)
        G = -(Zw.T @ act + Zw[W].T @ alpha)
        S = aA + float(w[W] @ alpha)
        return x, lam, G, S
    if cuts and res.status == 0:
        return x, -float(res.ineqlin.marginals[kw]), np.where(near & (np.abs(1.0 - m2) <= 1e-9))[0]
    return None
