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


def hinge_lp(bat, c, th, box):
    """``(θ, λ, ∇, Σ_j w_j α_j)`` of ``min c'θ`` over the hinge set without the ball, from the approximate solution
    ``th``; ``box`` = (lower, upper) bounds of θ containing K. None when HiGHS fails or the box binds."""
    from scipy.optimize import linprog

    Z, Zw, w, eps, d = bat.Z, bat.Zw, bat.w, bat.eps, bat.d
    mg = Z @ th
    dist = np.abs(1.0 - mg)
    k = min(len(w), max(_NEAR, int(np.sum(dist <= 1e-2))))
    near = np.zeros(len(w), dtype=bool)
    near[np.argpartition(dist, k - 1)[:k]] = True
    lo, hi = box
    for _ in range(_ROUNDS):
        W = np.where(near)[0]
        act = ~near & (mg < 1.0)
        g, aA = Zw.T @ act, float(w @ act)
        kw = len(W)
        # variables (θ, t_W): -z_j'θ - t_j <= -1 (j in W);  -g'θ + Σ w_j t_j <= ε - a_A
        A_ub = np.zeros((kw + 1, d + kw))
        A_ub[:kw, :d] = -Z[W]
        A_ub[np.arange(kw), d + np.arange(kw)] = -1.0
        A_ub[kw, :d] = -g
        A_ub[kw, d:] = w[W]
        b_ub = np.concatenate([-np.ones(kw), [eps - aA]])
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
        span = np.maximum(hi - lo, 1e-300)
        if np.any(np.minimum(x - lo, hi - x) <= 1e-9 * span):
            return None  # on the box: the ball binds there
        m2 = Z @ x
        wrong = ~near & ((act & (m2 >= 1.0)) | (~act & (m2 <= 1.0)))
        if wrong.any():
            near |= wrong
            mg = m2
            continue
        lam = -float(res.ineqlin.marginals[kw])
        if not lam > 0:
            return None
        u = -np.asarray(res.ineqlin.marginals[:kw])
        alpha = np.clip(u / (lam * w[W]), 0.0, 1.0)
        G = -(Zw.T @ act + Zw[W].T @ alpha)
        S = aA + float(w[W] @ alpha)
        return x, lam, G, S
    return None
