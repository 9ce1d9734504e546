"""The convex solves of classifier MCR: ``min_K w_orig·e_orig + w_switch·e_switch (+ lin'θ)``, certified.

**Logistic.** One projected-Newton solve (:class:`~rashomon.solvers.SmoothBallProgram`); its
Frank–Wolfe bound ``f(x) - gap(x)`` is a lower bound on the minimum over K whatever the accuracy.

**Hinge: smoothing with a dual certificate.** The solver minimises the smoothed hinge
``ℓ_τ(m) = τ·softplus((1 - m)/τ)`` for a decreasing schedule of τ (each stage warm-started
from the previous one) and stops as soon as the *exact*-hinge objective of the current point is
certified within the requested accuracy. The certificate is weak duality for the exact problem:
``max(0, 1 - m) = max_{α ∈ [0, 1]} α(1 - m)``, so for any α ∈ [0, 1]^N (N rows and pairs, weights w)

    min_{θ∈K} Σ_k w_k max(0, 1 - m_k(θ)) >= Σ_k w_k α_k + min_{z∈K} (-Σ_k w_k α_k y_k d_k)'z.

With ``α_k = σ((1 - m_k(x))/τ) = -ℓ_τ'(m_k(x))`` the vector ``-Σ w α y d`` is the gradient g of the
smoothed objective at x, and the right-hand side equals ``f_τ(x) - gap_τ(x) - τ·Σ_k w_k H(α_k)``
(H the binary entropy, since ``α u - softplus(u) = -H(σ(u))`` for ``u = (1 - m)/τ``): the
Frank–Wolfe bound of the smoothed problem minus ``τ·Σ w H(α)`` -- never below the worst-case
correction ``τ·log 2·Σ w`` and far above it when few margins lie within a few τ of the kink.
The bound is computed from α directly (:meth:`MarginTerms.hinge_dual` and the closed-form support
function of K), so it holds whatever the solver's accuracy; the
difference between the exact objective at x and this bound is
``gap_τ(x) + Σ_k w_k |1 - m_k| σ(-|1 - m_k|/τ)``, which vanishes with τ. The smallest τ tried is
the class's ``smoothing``.
"""

from __future__ import annotations

import numpy as np

from ...solvers import SmoothBallProgram

__all__ = ["solve_margin"]

_TAUS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
_WARM_TOP = 1e-3  # first τ of a warm-started solve


def solve_margin(B, r, floor_loss, w_orig, w_switch, terms, lo, hi, x0=None, lin=None, tol=1e-11, loss=None, atol=None):
    """Minimise the objective over K; returns ``(θ, certified lower bound of the exact-loss minimum, ok)``.

    ``floor_loss`` is the set's loss (for the hinge: smoothed at the class's τ, the smallest τ tried);
    ``loss`` replaces it for one warm-started solve of that loss (local searches; the bound then
    subtracts the worst-case smoothing error). For the hinge, the schedule stops when the exact objective
    at θ minus the certified bound is at most ``atol`` (default ``tol·max(1, |objective|)``).
    """
    if loss is not None or floor_loss.name == "logistic":
        loss = floor_loss if loss is None else loss
        res = SmoothBallProgram(B, r, lo, hi, tol=tol, max_iter=200).minimize(
            terms.oracle(loss, w_orig, w_switch, lin), x0
        )
        lb = res.info["lower_bound"] - (w_orig + w_switch) * loss.offset
        return res.x, lb, bool(np.isfinite(lb))
    taus = [t for t in _TAUS if t > floor_loss.s] + [floor_loss.s]
    if x0 is not None:
        taus = [t for t in taus if t <= _WARM_TOP] or taus[-1:]  # a warm start skips the widest smoothings
    x, best_lb = x0, -np.inf
    prog = SmoothBallProgram(B, r, lo, hi, tol=1e-14, max_iter=60)  # set up once: B, K and the stop do not depend on τ
    stop = None if atol is None else max(0.25 * atol, 1e-15)
    for tau in taus:
        res = prog.minimize(terms.oracle(floor_loss.smoothed(tau), w_orig, w_switch, lin), x, gap_atol=stop)
        x = res.x
        f, s, g = terms.hinge_dual(x, tau, w_orig, w_switch)
        if lin is not None:
            f, g = f + float(lin @ x), g + lin
        best_lb = max(best_lb, s + prog.support_min(g))
        if f - best_lb <= (tol * max(1.0, abs(f)) if atol is None else atol):
            break
    return x, best_lb, bool(np.isfinite(best_lb))
