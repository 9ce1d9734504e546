"""Each row's own ray: a member and a tangent half-space of a logistic set, O(n·p) per row, no Hessian.

For a row's flip-side functional f, the exact minimiser of ``f'θ`` over ``S = {θ ∈ K : L(θ) <= ε}`` lies near the
minimiser of f'θ over the second-order model of L at θ_min (closed form per row, :meth:`._batch.MarginBatch._start`).
Along the ray ``θ(s) = θ_min + s·d`` toward that point the loss is convex with its minimum at s = 0, hence
nondecreasing for s >= 0. The last s with ``L(θ(s)) <= ε`` (and θ(s) in the ball) is searched by Newton steps from
outside (they stay outside) and a final chord (inside) on a sample of the rows: the exact slope of L at θ_min along
the ray plus the sample's mean of the remainders ``ℓ(m₀ + s·dm) - ℓ(m₀) - ℓ'(m₀)s·dm`` (a control variate), aimed
0.5% of the slack inside. The point found is evaluated exactly on every row; if its loss exceeds ε it is moved
toward θ_min to where the convex loss's chord reaches ε, and the batch's exact membership test confirms a **member**,
whose value f'θ decides a flip when it crosses the threshold.

At the point evaluated, θ₀, the tangent plane of the convex loss gives the half-space
``L(θ₀) + ∇L(θ₀)'(θ - θ₀) <= ε`` containing S (any θ₀ gives one); with the enclosing ellipsoid E its minimum of f'θ
is closed form (:meth:`._screen.RowScreen.tangents`): a **certified bound**, which decides that no member flips the
row when it does not cross. :func:`corrected_points` steps from θ₀ to the minimiser of f'θ over the quadratic model
``L(θ₀) + g'Δ + ½Δ'H₀Δ <= ε`` (H₀: the Hessian at θ_min, one factor for all rows), nearer the row's own minimiser,
where the same two facts are taken again. Rows neither settles are solved exactly by the caller.
"""

from __future__ import annotations

import numpy as np

from ._batch_kernels import _softplus_sigmoid

__all__ = ["corrected_points", "hessian_factor", "k_cut", "ray_points", "ray_setup"]

_STEPS = 4  # sampled loss evaluations per row: the model's point, Newton steps from outside, a chord inside
_SAMPLE = 8192  # rows of the sample the search runs on (the point found is then checked on every row)
_SHORT = 0.005  # the search aims this share of the slack ε - e_min inside (the sample's error)
_LOSS_ROUNDING = 1e-13  # relative allowance for the rounding of a loss value (a tangent's offset is lowered by it)


def ray_points(bat, A: np.ndarray, want=None):
    """``(θ, inside, θ₀, L, G)`` for the rows a of A: the last point of S found on each row's ray (rows x d; ``inside``
    marks those confirmed members of S), and the point θ₀ of the tangent plane with the exact loss there (the tangent's
    rounding is allowed for where the half-space is formed) and its gradient (rows x d; NaN where ``want`` declines
    it).

    Parameters
    ----------
    bat : MarginBatch
        The engine's batched solver of a logistic set (its deduplicated rows, weights and membership test).
    A : ndarray of shape (m, d)
        The functionals.
    want : callable, optional
        ``want(start, values, inside)`` for a block of rows from ``start``: which rows need the gradient (their
        member's values and membership given); all rows by default.

    Returns
    -------
    tuple of ndarray
        Points, membership, tangent points, loss lower bounds and gradients there.
    """
    ms = bat.eng.ms
    t0, e_min = ms.theta_min, bat.e_min
    m, d = A.shape
    T = np.empty((m, d))
    inside = np.zeros(m, dtype=bool)
    P, Ls, Gs = np.empty((m, d)), np.empty(m), np.empty((m, d))
    if not m:
        return T, inside, P, Ls, Gs
    Dir = bat._start(A) - t0[None, :]
    s_ball, target, Zs, ws = ray_setup(bat, t0, Dir)
    Zt, w = bat.Zt, bat.w
    ms0 = t0 @ Zs
    l1s = -1.0 / (1.0 + np.exp(ms0))  # ℓ'(m0) on the sample
    l0s = np.logaddexp(0.0, -ms0)
    gd = Dir @ bat.value_grad(t0[:, None])[1][:, 0]  # L's exact slope at θ_min along each ray
    bat.n_eval -= 1
    step = int(max(8, min(256, (1 << 22) // max(len(w), 1))))
    for a in range(0, m, step):
        D = Dir[a : a + step]
        dM = D @ Zs  # k x (sampled rows): each row's margin direction
        sb, gda = s_ball[a : a + step], gd[a : a + step]
        k = len(D)
        s_in, f_in = np.zeros(k), np.full(k, e_min - target)
        s_out, f_out, g_out = np.full(k, np.inf), np.full(k, np.inf), np.ones(k)
        s = np.minimum(1.0, sb)
        for it in range(_STEPS):
            # L(s) ≈ e_min + s·L'(0) + the sample's mean of the remainders ℓ(m0 + s·dm) - ℓ(m0) - ℓ'(m0)·s·dm
            with np.errstate(all="ignore"):
                X = ms0[None, :] + s[:, None] * dM
                val, Sg = _softplus_sigmoid(X, ws)
                val += e_min + s * gda - l0s @ ws - s * ((dM * l1s) @ ws)
                slope = gda - (Sg * dM) @ ws - (dM * l1s) @ ws
            f = val - target
            ok = np.isfinite(f)
            inn = ok & (f <= 0) & (s >= s_in)
            s_in, f_in = np.where(inn, s, s_in), np.where(inn, f, f_in)
            out = ok & (f > 0) & (s < s_out)
            s_out, f_out, g_out = np.where(out, s, s_out), np.where(out, f, f_out), np.where(out, slope, g_out)
            with np.errstate(all="ignore"):
                chord = s_in - f_in * (s_out - s_in) / (f_out - f_in)  # between an inside and an outside point: inside
                # Newton from the outside point stays outside (L convex and increasing along the ray); from the
                # inside point (no outside point yet) it steps past the boundary
                newton = np.where(np.isfinite(s_out), s_out - f_out / g_out, s - f / slope)
            nxt = chord if it == _STEPS - 1 else newton  # the last step inside, the others toward the boundary
            bad = ~(np.isfinite(nxt) & (nxt > s_in) & (nxt <= s_out))
            nxt = np.where(bad, 0.5 * (s_in + np.minimum(s_out, 2.0 * np.maximum(s_in, 1.0))), nxt)
            s = np.minimum(nxt, sb)
        # the exact loss at the point found (every row); if it is above ε, the point on the segment to θ_min where
        # the chord of the convex loss reaches ε - 1e-10·slack is inside, with that chord's value as its loss bound
        Tb = t0[None, :] + s[:, None] * D
        X = Tb @ Zt
        L, _ = _softplus_sigmoid(X, w, sigmoid=False)
        P[a : a + step], Ls[a : a + step] = Tb, L
        f = np.where(L > target, (target - e_min) / np.maximum(L - e_min, 1e-300), 1.0)
        T[a : a + step] = t0[None, :] + (f * s)[:, None] * D
        Lup = np.where(f < 1.0, e_min + f * (L - e_min), L) * (1 + _LOSS_ROUNDING)
        inside[a : a + step] = bat.members(T[a : a + step], Lup)
        # the gradient at the point found (for its tangent half-space), only where the caller asks for it
        Gs[a : a + step] = np.nan
        need = np.arange(k)
        if want is not None:
            need = np.flatnonzero(want(a, (A[a : a + step] * T[a : a + step]).sum(1), inside[a : a + step]))
        if need.size:
            with np.errstate(over="ignore"):
                Sg = 1.0 / (1.0 + np.exp(X[need]))
            Gs[a + need] = -(Sg @ bat.Zw)
    return T, inside, P, Ls, Gs


def hessian_factor(bat) -> np.ndarray:
    """The lower Cholesky factor of the loss's Hessian at θ_min (every row), for :func:`corrected_points`.

    Parameters
    ----------
    bat : MarginBatch
        The engine's batched solver of a logistic set.

    Returns
    -------
    ndarray of shape (d, d)
        The factor.
    """
    s0 = bat.value_grad(bat.eng.ms.theta_min[:, None])[2]
    bat.n_eval -= 1
    H = bat.hessians(s0, exact=True)[0]
    # a rank-deficient design: a ridge of 1e-10 of the scale (the step only proposes a point; all is checked)
    scale = max(float(np.trace(H)) / len(H), 1e-300)
    try:
        return np.linalg.cholesky(H + 1e-10 * scale * np.eye(len(H)))
    except np.linalg.LinAlgError:
        return np.linalg.cholesky(H + 1e-6 * scale * np.eye(len(H)))


def ray_setup(bat, t0: np.ndarray, Dir: np.ndarray):
    """``(s_ball, target, Zs, ws)``: the start every ray search shares (logistic here, hinge in :mod:`._rays_hinge`).

    ``s_ball``: each ray's last step ``s >= 0`` with ``(t0 + s·d)'B̃(t0 + s·d) <= r(1 - 1e-12)``, the larger root of
    a quadratic in s (t0 is inside); ``target``: the loss level the search aims at, a share ``_SHORT`` of the slack
    inside (the search runs on a sample); ``Zs, ws``: that sample of the rows (every ``stride``-th) and its weights,
    rescaled to the total weight.
    """
    Bt, r = bat.Bt, bat.r * (1 - 1e-12)
    qa = ((Dir @ Bt) * Dir).sum(1)
    qb = Dir @ (Bt @ t0)
    qc = float(t0 @ Bt @ t0) - r
    with np.errstate(divide="ignore", invalid="ignore"):
        s_ball = np.where(qa > 0, (-qb + np.sqrt(np.maximum(qb * qb - qa * qc, 0.0))) / qa, np.inf)
    s_ball = np.maximum(s_ball, 0.0)
    target = bat.eps - _SHORT * max(bat.eps - bat.e_min, 0.0)
    w = bat.w
    stride = max(1, -(-len(w) // _SAMPLE))
    return s_ball, target, bat.Zt[:, ::stride], w[::stride] * (w.sum() / w[::stride].sum())


def corrected_points(bat, A: np.ndarray, T0: np.ndarray, L0: np.ndarray, G: np.ndarray, chol: np.ndarray):
    """``(θ, inside, θ₁, L, G)`` as :func:`ray_points`, one step further: from the tangent point θ₀ (loss L₀,
    gradient g), the minimiser of ``a'θ`` over the model ``L₀ + g'Δ + ½Δ'H₀Δ <= ε`` (H₀: the Hessian at θ_min),
    ``θ₁ = θ₀ - H₀⁻¹(αa + g)`` with ``α = sqrt((2(ε - L₀) + g'H₀⁻¹g) / a'H₀⁻¹a)``, evaluated exactly: its
    tangent plane, and the member on the segment from θ_min where the convex loss's chord reaches ε.

    Parameters
    ----------
    bat : MarginBatch
        The engine's batched solver of a logistic set.
    A : ndarray of shape (m, d)
        The functionals.
    T0, L0, G : ndarray
        Tangent points, their losses and gradients (from :func:`ray_points`).
    chol : ndarray
        :func:`hessian_factor`.

    Returns
    -------
    tuple of ndarray
        Points, membership, tangent points, loss lower bounds and gradients there.
    """
    from scipy.linalg import cho_solve

    ms = bat.eng.ms
    t0, eps, e_min = ms.theta_min, bat.eps, bat.e_min
    Hc = (chol, True)
    HiA, HiG = cho_solve(Hc, A.T), cho_solve(Hc, G.T)
    Fq = np.maximum((A.T * HiA).sum(0), 1e-300)
    Gq = (G.T * HiG).sum(0)
    alpha = np.sqrt(np.maximum(2.0 * (eps - L0) + Gq, 0.0) / Fq)
    P = T0 - (alpha * HiA + HiG).T
    target = eps - _SHORT * max(eps - e_min, 0.0)
    m, d = A.shape
    T, inside, Ls, Gs = np.empty((m, d)), np.zeros(m, dtype=bool), np.empty(m), np.empty((m, d))
    step = int(max(8, min(256, (1 << 22) // max(len(bat.w), 1))))
    for a in range(0, m, step):
        Pb = P[a : a + step]
        X = Pb @ bat.Zt
        L, Sg = _softplus_sigmoid(X, bat.w)
        Ls[a : a + step], Gs[a : a + step] = L, -(Sg @ bat.Zw)
        f = np.where(L > target, (target - e_min) / np.maximum(L - e_min, 1e-300), 1.0)
        T[a : a + step] = t0[None, :] + f[:, None] * (Pb - t0[None, :])
        Lup = np.where(f < 1.0, e_min + f * (L - e_min), L) * (1 + _LOSS_ROUNDING)
        inside[a : a + step] = bat.members(T[a : a + step], Lup)
    fin = np.isfinite(Ls) & np.isfinite(Gs).all(1)
    Gs[~fin] = np.nan
    return T, inside & fin, P, Ls - _LOSS_ROUNDING * np.maximum(np.abs(Ls), 1.0), Gs


def k_cut(F: np.ndarray, C: np.ndarray, b: np.ndarray, mid, Pball, fw, r: float, iters: int = 48) -> np.ndarray:
    """Lower bounds of ``min f_i'θ`` over K cut by the row's own half-space ``c_i'θ >= b_i`` (rows paired).

    For θ in K with ``c'θ >= b`` and any ``a >= 0``: ``f'θ >= a·b + min_K (f - a·c)'θ``, and the minimum over K (the
    ball ``θ'B̃θ <= r`` on the penalised part, the intercept in ``mid ± fw``) is closed form:
    ``v'mid - sqrt(r·v'Pv) - |v|'fw``. The bound is concave in a; it is maximised by golden section on
    ``a ∈ [0, 20·|f|_P/|c|_P]`` (any a is valid, so the search's accuracy costs only tightness), with an allowance of
    1e-14 of the terms' size for rounding. Where the set's minimiser sits on the ball (the norm bound active), this
    is far tighter than the cut with the enclosing ellipsoid.

    Parameters
    ----------
    F, C : ndarray of shape (m, d)
        The functionals and the half-spaces' normals.
    b : ndarray of shape (m,)
        The half-spaces' offsets.
    mid, Pball, fw, r
        K: the intercept interval's midpoint and half-width (zero elsewhere), the ball's inverse matrix on the
        penalised coordinates and its radius.
    iters : int
        Golden-section steps.

    Returns
    -------
    ndarray of shape (m,)
        The bounds (``-inf`` where not finite).
    """

    def kmin(V):
        q = np.sqrt(r * np.maximum(((V @ Pball) * V).sum(1), 0.0))
        lin = V @ mid
        wid = np.abs(V) @ fw
        return lin - q - wid, np.abs(V) @ np.abs(mid) + q + wid

    qf = np.sqrt(np.maximum(((F @ Pball) * F).sum(1), 0.0))
    qc = np.sqrt(np.maximum(((C @ Pball) * C).sum(1), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(qc > 0, qf / qc, 0.0)

    def g(t):
        a = t * scale
        val, size = kmin(F - a[:, None] * C)
        return a * b + val - 1e-14 * (size + a * np.abs(b))

    phi = (np.sqrt(5.0) - 1.0) / 2.0
    lo, hi = np.zeros(len(F)), np.full(len(F), 20.0)
    x1, x2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
    g1, g2 = g(x1), g(x2)
    best = np.maximum(g(lo), np.maximum(g1, g2))
    for _ in range(iters):
        keep_left = g1 >= g2  # the maximum of a concave function lies left of x2
        hi, lo = np.where(keep_left, x2, hi), np.where(keep_left, lo, x1)
        x1, x2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
        g1, g2 = g(x1), g(x2)
        best = np.maximum(best, np.maximum(g1, g2))
    return np.where(np.isfinite(best), best, -np.inf)
