"""Members of a classifier Rashomon set by hit-and-run with an exact membership oracle.

S = {θ : θ'Bθ <= r, e_orig(θ) <= ε} is convex (the loss is convex in θ). From a member x and
a direction u the chord ``{t : x + tu ∈ S}`` is an interval: its ends on the ball are the roots
of a quadratic, and on ``e_orig <= ε`` the roots of a convex function of t, found by bisection
(45 halvings: the ends are within about 3e-14 of the chord, on the inside). The next member is
uniform on the chord, so the chain's stationary law is uniform on S. Directions are isotropic in
the metric of the loss's Hessian at the minimiser (better mixing on elongated sets).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["sample_margin_members"]


def sample_margin_members(rs, n_models: int = 1000, *, random_state=None, thin: int | None = None,
                          burn_in: int | None = None) -> np.ndarray:
    """θ of ``n_models`` members of a fitted classifier set ``rs`` (hit-and-run; see the module docstring).

    Returns
    -------
    ndarray of shape (n_models, d)
        Every row satisfies ``θ'Bθ <= r`` and ``e_orig(θ) <= epsilon_abs_`` (exact loss).
    """
    ms = rs._margin
    eps, B, r = float(rs.epsilon_abs_), ms.B, ms.r
    e_o = lambda th: ms.orig.e_orig(th, ms.loss)  # noqa: E731
    d = ms.D.shape[1]
    rng = np.random.default_rng(random_state)
    _, _, H = ms.orig.orig_parts(ms.theta_min, ms.loss.smoothed(0.05), 2)
    H = H + 1e-9 * np.trace(H) / d * np.eye(d)
    Linv = np.linalg.inv(np.linalg.cholesky(H)).T  # u = L^{-T} z
    thin = d if thin is None else thin
    burn_in = 10 * d if burn_in is None else burn_in
    x = ms.theta_min.copy()

    def end(u, t_out):
        a, b = 0.0, t_out  # e_o(x + a u) <= ε < e_o(x + b u) or b is the ball's end
        if e_o(x + b * u) <= eps:
            return b
        for _ in range(45):
            m = 0.5 * (a + b)
            if e_o(x + m * u) <= eps:
                a = m
            else:
                b = m
        return a

    out = []
    for it in range(burn_in + n_models * thin):
        u = Linv @ rng.normal(size=d)
        qa, qb, qc = float(u @ B @ u), float(2 * x @ B @ u), float(x @ B @ x) - r
        if qa > 0:
            disc = math.sqrt(max(qb * qb - 4 * qa * qc, 0.0))
            t_lo, t_hi = (-qb - disc) / (2 * qa), (-qb + disc) / (2 * qa)
        else:
            t_lo, t_hi = -1e3, 1e3
        hi = end(u, t_hi * (1 - 1e-12))
        lo = -end(-u, -t_lo * (1 - 1e-12))
        x = x + rng.uniform(lo, hi) * u
        if it >= burn_in and (it - burn_in) % thin == thin - 1:
            out.append(x.copy())
    return np.array(out)
