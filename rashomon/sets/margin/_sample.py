"""Members of a classifier Rashomon set by hit-and-run with an exact membership oracle.

S = {θ : θ'Bθ <= r, e_orig(θ) <= ε} is convex (the loss is convex in θ). From a member x and
a direction u the chord ``{t : x + tu ∈ S}`` is an interval containing 0. Its ends on the ball
are the roots of a quadratic. On ``e_orig <= ε`` the function ``f(t) = mean ℓ(m + t·v) - ε``
(margins m = y·Dx, v = y·Du: O(n) per evaluation) is convex with f(0) <= 0, so Newton's method
started outside (where f > 0) decreases monotonically onto the root from outside: every iterate
ends an interval containing the chord (up to rounding; widened by 1e-9). The next
member is drawn uniformly on that interval and the draw is **shrunk** until it is a member
(slice sampling's shrinkage: a draw outside S replaces the end on its side; exact membership
is checked, ball and e_orig): the accepted point is uniform on the true chord, so the chain's
stationary law is uniform on S. Directions are isotropic in the metric of the loss's Hessian at
the minimiser (better mixing on elongated sets). Several chains (up to 32) run side by side;
burn-in ``10·d`` steps, ``d`` steps between kept draws, as for the quadratic classes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sample_margin_members", "set_losses", "margins"]


def margins(ms, thetas: np.ndarray) -> np.ndarray:
    """Margins ``y·d'θ`` of every row for each θ (rows of ``thetas``), shape (k, n)."""
    return (thetas @ ms.D.T) * ms.y[None, :]


def set_losses(ms, thetas: np.ndarray) -> np.ndarray:
    """e_orig (exact loss) of each θ, computed as the sampler's membership test computes it."""
    return _mean_loss(ms.loss, margins(ms, np.atleast_2d(thetas)))


def _mean_loss(loss, M):
    return np.mean(loss.exact(M), axis=-1)


def _value_slope(loss, M, V):
    """``(mean ℓ(M), d/dt mean ℓ(M + tV) at 0)`` per chain, with one exponential (a subgradient for the hinge)."""
    if loss.name == "logistic":
        e = np.exp(-np.abs(M))
        inv = 1.0 / (1.0 + e)
        sig = np.where(M >= 0, e * inv, inv)  # σ(-M) = -ℓ'(M)
        return np.mean(np.maximum(-M, 0.0) + np.log1p(e), axis=-1), -np.mean(sig * V, axis=-1)
    return np.mean(np.maximum(0.0, 1.0 - M), axis=-1), np.mean(np.where(M < 1.0, -V, 0.0), axis=-1)


def _loss_slope(loss, M, V):
    """``d/dt mean ℓ(M + tV)`` at t = 0 (a subgradient for the hinge)."""
    if loss.name == "logistic":
        return np.mean(-V / (1.0 + np.exp(np.clip(M, -700, 700))), axis=-1)
    return np.mean(np.where(M < 1.0, -V, 0.0), axis=-1)


def _loss_end(loss, M, V, t_ball, eps, E, q):
    """Per chain, a t in (0, t_ball] with ``[0, t]`` containing ``{t >= 0 : mean ℓ(M + tV) <= ε}``.

    Newton starts outside the chord (f > 0): at 1.3 times the root of the quadratic model
    ``E - ε + s·t + q·t²/2`` when f > 0 there, else at the ball's end; every Newton iterate of a convex
    function started on the right of its root stays on the right, so each is a valid end. It stops once
    a step is below 2% of t (a slightly long interval only costs a few shrinkages).
    """
    s = _loss_slope(loss, M, V)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = (-s + np.sqrt(s * s + 2 * q * np.maximum(eps - E, 0.0))) / q
    t = np.where(np.isfinite(t_star) & (t_star > 0), np.minimum(1.3 * t_star, t_ball), t_ball)
    f, g = _value_slope(loss, M + t[:, None] * V, V)
    f -= eps
    back = (f <= 0) & (t < t_ball)
    if back.any():
        t[back] = t_ball[back]
        f[back], g[back] = _value_slope(loss, M[back] + t[back, None] * V[back], V[back])
        f[back] -= eps
    out = f > 0
    for _ in range(8):
        if not out.any():
            break
        idx = np.where(out)[0]
        step = np.where(g[idx] > 0, f[idx] / np.maximum(g[idx], 1e-300), 0.0)
        t[idx] = np.maximum(t[idx] - step, 0.0)
        keep = step > 0.02 * np.abs(t[idx])
        k = idx[keep]
        if k.size:
            f[k], g[k] = _value_slope(loss, M[k] + t[k, None] * V[k], V[k])
            f[k] -= eps
        out[idx] = keep & (f[idx] > 0)
    return np.minimum(t * (1 + 1e-9) + 1e-300, t_ball)


def sample_margin_members(
    rs,
    n_models: int = 1000,
    *,
    random_state=None,
    thin: int | None = None,
    burn_in: int | None = None,
    n_chains: int | None = None,
) -> np.ndarray:
    """θ of ``n_models`` members of a fitted classifier set ``rs`` (hit-and-run; see the module docstring).

    Parameters
    ----------
    random_state : None, int or numpy Generator
        Seeds the chains; the same value gives the same members.

    Returns
    -------
    ndarray of shape (n_models, d)
        Every row satisfies ``θ'Bθ <= r`` and ``e_orig(θ) <= epsilon_abs_`` (exact loss, checked).
    """
    ms = rs._margin
    eps, B, r, loss = float(rs.epsilon_abs_), ms.B, ms.r, ms.loss
    D, y = ms.D, ms.y
    d = D.shape[1]
    rng = np.random.default_rng(random_state)
    Linv = np.linalg.inv(ms.hessian_cholesky()).T  # u = L^{-T} z: isotropic in the Hessian metric
    thin = d if thin is None else thin
    burn_in = 10 * d if burn_in is None else burn_in
    k = min(n_models, 32) if n_chains is None else n_chains
    per_chain = -(-n_models // k)
    X = np.tile(ms.theta_min, (k, 1))
    Mx = margins(ms, X)
    E = _mean_loss(loss, Mx)
    out = []
    for it in range(burn_in + per_chain * thin):
        Z = rng.standard_normal((k, d))
        U = Z @ Linv.T
        q = np.einsum("ij,ij->i", Z, Z)  # u'Hu: the quadratic model's curvature along u
        V = (U @ D.T) * y[None, :]
        qa = np.einsum("ij,jk,ik->i", U, B, U)
        qb = 2 * np.einsum("ij,jk,ik->i", X, B, U)
        qc = np.minimum(np.einsum("ij,jk,ik->i", X, B, X) - r, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            disc = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
            t_hi = np.where(qa > 0, (-qb + disc) / (2 * qa), 1e6)
            t_lo = np.where(qa > 0, (-qb - disc) / (2 * qa), -1e6)
        hi = _loss_end(loss, Mx, V, np.maximum(t_hi, 0.0), eps, E, q)
        lo = -_loss_end(loss, Mx, -V, np.maximum(-t_lo, 0.0), eps, E, q)
        todo = np.arange(k)
        for _ in range(200):  # shrinkage: uniform on the chord once accepted
            t = lo[todo] + (hi[todo] - lo[todo]) * rng.random(len(todo))
            Xn = X[todo] + t[:, None] * U[todo]
            Mn = margins(ms, Xn)  # recomputed, not updated: membership is decided as set_losses checks it
            En = _mean_loss(loss, Mn)
            ok = (np.einsum("ij,jk,ik->i", Xn, B, Xn) <= r) & (En <= eps)
            acc = todo[ok]
            X[acc], Mx[acc], E[acc] = Xn[ok], Mn[ok], En[ok]
            rej, tr = todo[~ok], t[~ok]
            hi[rej] = np.where(tr > 0, tr, hi[rej])
            lo[rej] = np.where(tr < 0, tr, lo[rej])
            todo = rej
            if not todo.size:
                break
        # a chain still not accepted after 200 shrinkages stays where it is (a member): t = 0 is in every chord
        if it >= burn_in and (it - burn_in) % thin == thin - 1:
            out.append(X.copy())
    return np.concatenate(out, axis=0)[:n_models] if out else np.zeros((0, d))
