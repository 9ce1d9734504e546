"""Which rows' decisions a classifier Rashomon set can flip, without an exact range for every row.

Predictive multiplicity asks, for each row with reference score on one side of a threshold t, whether some member
of ``S = {θ ∈ K : L(θ) <= ε}`` puts it on the other side. The exact range of every row costs a convex programme
over all n rows per row (O(n²) for the fitting rows). Most rows are settled by two cheap certified facts:

* **a member crosses** (the flip is witnessed): every member θ_k already found gives the scores ``Pθ_k`` of all
  rows in one product;
* **no member can cross** (certified): an outer bound on ``min_S f'θ`` below t for no row's flip side ``f``. The
  outer bounds are the enclosing ellipsoid ``E ⊇ S`` of :class:`._bounds.ScoreRanges` (a quadratic minorant of the
  loss, valid on the margins it certifies), the class's ball and, for every direction ``c_k`` already solved
  exactly with certified bound ``b_k <= min_S c_k'θ``, the sublinearity of the support function:

      f'θ = a·c_k'θ + (f - a·c_k)'θ >= a·b_k + min_E (f - a·c_k)'θ   for every a >= 0,

  maximised over a in closed form (the minimum of f'θ over E cut by the half-space ``c_k'θ >= b_k``).

For the logistic loss the rows neither fact settles are searched along their own ray first (:mod:`._rays`: the
segment from θ_min toward the row's minimiser over the second-order model, O(n·p) per row and no Hessian): the last
member on it, and the tangent half-space of the loss there cut with E, settle most of them ("line search"); the
rows still open take up to two steps from their tangent point to the minimiser over the quadratic model there
(:func:`._rays.corrected_points`), each giving a member and a tangent half-space again.

Every point the line search evaluates (loss and gradient on every row) also gives an ellipsoid of members, from
the logistic loss's curvature bound of 1/4 (:mod:`._inner`); each round, every row left takes the best point of the
new ellipsoids ("inner ellipsoids"), so one O(n·p) evaluation serves many rows. The round's half-spaces cut with E
settle rows too, until a round settles almost none (E is loose: at 10⁵ rows they settle none).

The rows still undecided are solved exactly (:meth:`._ranges.MarginFunctionalRange.minimize`: batched Newton
on the KKT system, certified by weak duality) on their flip side only, a chunk at a time; every chunk's members and
half-spaces then settle more of the rest. A row's flip is decided exactly as by the full ranges: by a member that
crosses, or by a certified bound that does not. Ends that no exact solve reached are reported as they stand (the
outer bound and the best member; their gap is the result's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["RowScreen", "ScreenedFlips"]

_MARGIN = 1e-10  # relative safety subtracted from every outer bound (rounding of the closed forms)
_CHUNK = 256  # rows solved exactly per round (one block of the batched Newton)
_RAYS = True  # the logistic rows left after the screen: each row's own ray (._rays) before the exact solves
_FIRST = 1024  # rows of the first round (their points' inner ellipsoids settle many of the others, ._inner)
_PLANES_YIELD = 1e-3  # the re-screen stops cutting E with half-spaces once they settle less than this share
_KCUT = True  # each row's own tangent half-space is also cut with K (._rays.k_cut)
_INNER = True  # the inner ellipsoids about every point evaluated (._inner; with them every ray point's gradient)
_CORRECT = 2  # steps further for the rows the ray leaves open (._rays.corrected_points)
_CELLS = 1 << 20  # rows x directions per block of the closed forms (memory: about 8 such arrays of 8 MB)


def _by_rows(f, F: np.ndarray, k: int):
    """``f`` applied to blocks of rows of F (k directions each: rows x k temporaries bounded by _CELLS), joined."""
    step = max(1, _CELLS // max(k, 1))
    if len(F) <= step:
        return f(F)
    parts = [f(F[a : a + step]) for a in range(0, len(F), step)]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(z) for z in zip(*parts))
    return np.concatenate(parts)


def _cut(fc, A, B, Cq, dl):
    """``min f'θ`` over E cut by ``c'θ >= b`` (broadcast over rows and half-spaces) from ``fc = f'centre``,
    ``A = δf'Pf``, ``B = δf'Pc``, ``Cq = δc'Pc`` and ``dl = b - c'centre`` (the closed form of the module docstring;
    any a >= 0 gives a valid bound, so rounding in a costs only tightness); the bound of E alone where no a > 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.maximum(A * Cq - B * B, 0.0) / np.maximum(Cq - dl * dl, 1e-300)
        a = (B + dl * np.sqrt(room)) / Cq
    a = np.where(np.isfinite(a) & (a > 0) & (dl * dl < Cq), a, 0.0)
    # q = δ(f - a c)'P(f - a c) by its expansion, which cancels where f is nearly parallel to c: its rounding is
    # covered by adding 1e-13 of the terms' size under the root (500 ulp), the rest's by 1e-14 of its terms
    size = A + 2.0 * a * np.abs(B) + a * a * Cq
    q = A - 2.0 * a * B + a * a * Cq
    val = fc + a * dl - np.sqrt(np.maximum(q, 0.0) + 1e-13 * size)
    return val - 1e-14 * (np.abs(fc) + a * np.abs(dl))


@dataclass
class ScreenedFlips:
    """The flip side of every row: certified bound, attained value and the member attaining it, and the stages."""

    bound: np.ndarray  # certified lower bound of min_S f_i'θ (f_i: the row's flip-side functional)
    value: np.ndarray  # attained by a member
    theta: np.ndarray  # the member (rows x d)
    other_bound: np.ndarray  # the same for -f_i (the side away from the threshold), outer
    other_value: np.ndarray
    other_theta: np.ndarray
    exact: np.ndarray  # rows solved exactly on the flip side
    settled: dict = field(default_factory=dict)


class RowScreen:
    """Outer bounds and members of a fitted classifier set, built once per engine (see the module docstring)."""

    def __init__(self, eng):
        from ._bounds import ScoreRanges

        ms = eng.ms
        self.eng, self.d = eng, ms.D.shape[1]
        bl = ms.loss.smoothed(0.05)  # as the MCR surrogates: the hinge's minorant pays its smoothing offset
        sr = ScoreRanges(ms.D, ms.y, ms.B, ms.r, eng.lo, eng.hi, bl, bl.offset, eng.eps, ms.theta_min)
        self.mid, self.fw, self.Pball, self.r = sr.mid, sr.fw, sr.Pball, ms.r
        self.ell = sr.ellipsoid
        # members: θ_min and the exact extremes along the axes of E (or the coordinates), both ways
        if self.ell is not None:
            _, V = np.linalg.eigh(self.ell[1])
            dirs = np.vstack([V.T, -V.T])
        else:
            dirs = np.vstack([np.eye(self.d), -np.eye(self.d)])
        b, th, _v = eng.minimize(dirs)
        self.C, self.b = dirs, b  # half-spaces c_k'θ >= b_k of S
        self.members = np.vstack([ms.theta_min[None, :], th])
        self.inner = _inner_ellipsoid(ms, eng.eps, self.ell) if ms.loss.name == "logistic" else None

    # ------------------------------------------------------------------ bounds for many functionals (rows of F)
    def outer(self, F: np.ndarray) -> np.ndarray:
        """Certified lower bounds of ``min_S f'θ`` for the rows f of F: the ball, E and every half-space."""
        best = F @ self.mid - np.sqrt(self.r * np.maximum(np.einsum("ij,jk,ik->i", F, self.Pball, F), 0.0))
        best -= np.abs(F) @ self.fw
        if self.ell is not None:
            best = np.maximum(best, _by_rows(lambda Fb: self._halfspaces(Fb, self.C, self.b), F, len(self.C)))
        return best - _MARGIN * np.maximum(1.0, np.abs(best))

    def _halfspaces(self, F, C, b):
        """``max(min_E f'θ, max_k min_{E ∩ {c_k'θ >= b_k}} f'θ)`` for each row f of F (the closed form of the
        module docstring; any a >= 0 gives a valid bound, so rounding in a costs only tightness)."""
        assert self.ell is not None  # the callers check
        centre, P, delta = self.ell
        fc = F @ centre
        FP = F @ P
        A = delta * np.maximum((FP * F).sum(1), 0.0)
        base = fc - np.sqrt(A)
        if not len(C):
            return base
        B = delta * (FP @ C.T)  # rows x k
        Cq = delta * np.maximum(np.einsum("kj,jl,kl->k", C, P, C), 0.0)
        dl = b - C @ centre  # how far each solve lifted its direction above E's centre
        return np.maximum(base, _cut(fc[:, None], A[:, None], B, Cq[None, :], dl[None, :]).max(1))

    def tangents(self, F: np.ndarray, C: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Certified lower bounds of ``min f_i'θ`` over E cut by the row's own half-space ``c_i'θ >= b_i`` (the rows
        of F and C paired; see :meth:`_halfspaces`), or over K cut by it (:func:`._rays.k_cut`), widened for rounding."""
        from ._rays import k_cut

        assert self.ell is not None  # the callers check
        centre, P, delta = self.ell
        fc = F @ centre
        FP = F @ P
        A = delta * np.maximum((FP * F).sum(1), 0.0)
        B = delta * (FP * C).sum(1)
        Cq = delta * np.maximum(((C @ P) * C).sum(1), 0.0)
        val = np.maximum(fc - np.sqrt(A), _cut(fc, A, B, Cq, b - C @ centre))
        if _KCUT:
            val = np.maximum(val, k_cut(F, C, b, self.mid, self.Pball, self.fw, self.r))
        return val - _MARGIN * np.maximum(1.0, np.abs(val))

    def _planes(self, T0, L0, G):
        """``(rows, C, b)``: the tangent half-spaces ``c'θ >= b`` of S from the convex loss at the points T0 (loss
        L0, gradient G): ``L0 + G'(θ - θ0) <= ε``, so ``c = -G``, ``b = L0 - ε - G'θ0``, lowered by the rounding of
        the product; only finite planes from points within twice K's radius (no cancelling digits)."""
        ms = self.eng.ms
        q = ((T0[:, ms.o :] @ ms.B[ms.o :, ms.o :]) * T0[:, ms.o :]).sum(1)
        rows = np.isfinite(G).all(1) & np.isfinite(L0) & (q <= 4.0 * ms.r)
        Gr, Tr = G[rows], T0[rows]
        b = L0[rows] - self.eng.eps - (Gr * Tr).sum(1) - 1e-14 * ((np.abs(Gr) * np.abs(Tr)).sum(1) + np.abs(L0[rows]))
        return rows, -Gr, b

    def attained(self, F: np.ndarray, Th: np.ndarray):
        """``(min_k f'θ_k, argmin)`` over the members Th for each row f of F (in blocks of rows)."""

        def one(Fb):
            V = Fb @ Th.T
            k = np.argmin(V, axis=1)
            return V[np.arange(len(Fb)), k], k

        return _by_rows(one, F, len(Th))

    def best_members(self, F: np.ndarray):
        """``(value, θ)``: for each row f of F the least f'θ over the members found and, for the logistic loss,
        the point of the inner ellipsoid (a member of S by construction, :func:`_inner_ellipsoid`)."""
        value, k = self.attained(F, self.members)
        theta = self.members[k]
        if self.inner is not None:
            centre, Hinv, rad2, B, r = self.inner
            FH = F @ Hinv
            q = np.maximum((FH * F).sum(1), 1e-300)
            T = centre[None, :] - np.sqrt(rad2 / q)[:, None] * FH
            ok = ((T @ B) * T).sum(1) <= r * (1 - 1e-12)
            v = (F * T).sum(1)
            use = ok & (v < value)
            value, theta = np.where(use, v, value), np.where(use[:, None], T, theta)
        return value, theta

    def _solve(self, F, tau, strict, tol):
        """``(bound, θ, value)`` for the rows f of F: certified within tol, or far enough to answer ``f'θ <= τ``
        (the logistic batch stops each row once answered; a row the batch leaves open runs the per-row search)."""
        eng = self.eng
        bat = eng._batch()
        b, th, v, ok = bat.minimize(F, tol, decide=(tau, strict))  # (the caller holds one BLAS thread)
        below = lambda x: np.where(strict, x < tau, x <= tau)  # noqa: E731
        decided = np.isfinite(b) & ~below(b)
        cand = np.where(below(v) & np.isfinite(v))[0]
        if cand.size:  # a member that answers: confirmed in S
            decided[cand] = bat.members(th[cand])
        # within tolerance but with the gap across τ (the hinge's smoothing floor), or not certified: per-row search
        for i in np.where(~decided)[0]:
            b[i], th[i], v[i] = eng._one(F[i], tol, eng.max_iter)
        return b, th, v

    # ------------------------------------------------------------------ the flips
    def flips(self, F: np.ndarray, tau: np.ndarray, strict: np.ndarray, tol: float, tick=None) -> ScreenedFlips:
        """The flip side of every row: does some member have ``f'θ <= τ`` (``< τ`` where ``strict``)?

        Settled by members and outer bounds where they agree on the answer; the rest exactly, a chunk at a time
        (chunk members and half-spaces re-screen the rows left).
        """
        m = len(F)
        tick = tick or (lambda k=1: None)
        bound = self.outer(F)
        value, theta = self.best_members(F)
        crosses = lambda v, t, s: np.where(s, v < t, v <= t)  # noqa: E731
        left = np.where(~crosses(value, tau, strict) & crosses(bound, tau, strict))[0]
        settled = {"members": int(crosses(value, tau, strict).sum())}
        settled["outer bounds"] = m - settled["members"] - len(left)
        exact = np.zeros(m, dtype=bool)
        tick(m - len(left))
        rays = _RAYS and self.ell is not None and self.eng.ms.loss.name in ("logistic", "hinge")
        hinge = self.eng.ms.loss.name == "hinge"  # its own rays (._rays_hinge: exact loss, a subgradient)
        n_line = n_refined = n_open = n_inner = 0
        inner, seen, planes = None, 0, True
        if rays and _INNER and not hinge:  # the inner ellipsoids about every point the line search evaluates (._inner)
            from ._inner import of_batch

            inner = of_batch(self.eng._batch())
        size = max(_CHUNK, min(_FIRST, left.size // 16)) if inner is not None else _CHUNK

        def take(rows, T, inside, P0, L, Gr, Ts, Cs, bs):
            """The points found for ``rows``: members where they beat the row's best, and the tangent planes at
            ``P0`` as certified bounds (both kept in ``Ts``, ``Cs``, ``bs`` to re-screen the other rows)."""
            v = np.where(inside, (F[rows] * T).sum(1), np.inf)
            better = v < value[rows]
            value[rows[better]], theta[rows[better]] = v[better], T[better]
            g, Cr, br = self._planes(P0, L, Gr)
            bound[rows[g]] = np.maximum(bound[rows[g]], self.tangents(F[rows[g]], Cr, br))
            Ts.append(T[inside])
            Cs.append(Cr)
            bs.append(br)

        while left.size:
            pick = left[np.linspace(0, left.size - 1, min(size, left.size)).round().astype(int)]
            size = _CHUNK
            pick = np.unique(pick)
            Ts: list = []  # the round's members and half-spaces c'θ >= b of S
            Cs: list = []
            bs: list = []
            todo = pick
            if rays:  # each row's own ray first (._rays): a member, and the tangent half-space of the loss
                from ._rays import _LOSS_ROUNDING, ray_points
                from ._rays_hinge import ray_points as hinge_ray_points

                tp, sp = tau[pick], strict[pick]

                def want(a, v, inside, tp=tp, sp=sp):  # the tangent only where the member does not cross
                    return ~(inside & crosses(v, tp[a : a + len(v)], sp[a : a + len(v)]))

                T, inside, T0, L0, G = (hinge_ray_points if hinge else ray_points)(
                    self.eng._batch(), F[pick], None if inner is not None else want
                )
                if inner is not None:
                    inner.add(T0, L0, G)
                take(pick, T, inside, T0, L0, G, Ts, Cs, bs)
                if inner is not None:  # the round's other points too
                    vi, ti = inner.best(F[pick], theta[pick])
                    better = vi < value[pick]
                    value[pick[better]], theta[pick[better]] = vi[better], ti[better]
                open_ = ~crosses(value[pick], tau[pick], strict[pick]) & crosses(bound[pick], tau[pick], strict[pick])
                Tk, Lk, Gk = T0, L0, np.nan_to_num(G)
                for _ in range(_CORRECT):  # the rows left: steps further (member and tangent again)
                    if not open_.any() or hinge:
                        break
                    from ._rays import corrected_points, hessian_factor

                    if getattr(self, "_h0", None) is None:
                        self._h0 = hessian_factor(self.eng._batch())
                    o = pick[open_]
                    args = (F[o], Tk[open_], Lk[open_], Gk[open_], self._h0)
                    T, inside, T1, L1, G1 = corrected_points(self.eng._batch(), *args)
                    if inner is not None:
                        inner.add(T1, L1 + 2.0 * _LOSS_ROUNDING * np.maximum(np.abs(L1), 1.0), G1)
                    take(o, T, inside, T1, L1, G1, Ts, Cs, bs)
                    Tk, Lk, Gk = Tk.copy(), Lk.copy(), Gk.copy()
                    Tk[open_], Lk[open_], Gk[open_] = T1, L1, np.nan_to_num(G1)
                    open_ = ~crosses(value[pick], tau[pick], strict[pick]) & crosses(
                        bound[pick], tau[pick], strict[pick]
                    )
                n_line += int((~open_).sum())
                tick(int((~open_).sum()))
                todo = pick[open_]
            if todo.size:
                b, th, v = self._solve(F[todo], tau[todo], strict[todo], tol)
                bound[todo], exact[todo] = np.maximum(bound[todo], b), True
                better = v < value[todo]
                value[todo[better]], theta[todo[better]] = v[better], th[better]
                b, v = bound[todo], value[todo]
                n_open += int((~crosses(v, tau[todo], strict[todo]) & crosses(b, tau[todo], strict[todo])).sum())
                tick(len(todo))
                Ts.append(th)
                Cs.append(F[todo])
                bs.append(b)
            rest = np.setdiff1d(left, pick, assume_unique=True)
            if rest.size and Ts:
                Th, C, bk = np.vstack(Ts), np.vstack(Cs), np.concatenate(bs)
                if len(Th):
                    vr, kr = self.attained(F[rest], Th)
                    better = vr < value[rest]
                    value[rest[better]], theta[rest[better]] = vr[better], Th[kr[better]]
                still = ~crosses(value[rest], tau[rest], strict[rest])
                n_refined += int((~still).sum())
                tick(int((~still).sum()))
                rest = rest[still]
                if inner is not None and len(inner) and rest.size:  # every point evaluated, for every row left
                    vi, ti = inner.best(F[rest], theta[rest], start=seen)  # every row left saw the earlier ones
                    better = vi < value[rest]
                    value[rest[better]], theta[rest[better]] = vi[better], ti[better]
                    still = ~crosses(value[rest], tau[rest], strict[rest])
                    n_inner += int((~still).sum())
                    tick(int((~still).sum()))
                    rest = rest[still]
                    seen = len(inner)
                if self.ell is not None and planes and rest.size:  # the round's half-spaces cut with E
                    hs = _by_rows(lambda Fb, C=C, bk=bk: self._halfspaces(Fb, C, bk), F[rest], len(C))
                    bound[rest] = np.maximum(bound[rest], hs - _MARGIN * np.maximum(1.0, np.abs(hs)))
                    still = crosses(bound[rest], tau[rest], strict[rest])
                    n_refined += int((~still).sum())
                    tick(int((~still).sum()))
                    # at 10^5 rows and more they settle almost none (E is loose): stop paying for them
                    planes = (~still).sum() >= _PLANES_YIELD * rest.size
                    rest = rest[still]
                left = rest
            else:
                left = rest
        settled["line search"] = n_line
        settled["by solved rows"] = n_refined
        settled["inner ellipsoids"] = n_inner
        settled["solved"] = int(exact.sum())
        settled["open"] = n_open  # of the solved: the gap still across τ after the per-row search (by the member)
        # the side away from the threshold: outer bound and best member (no exact solve)
        ob = self.outer(-F)
        ov, ot = self.best_members(-F)
        return ScreenedFlips(bound, value, theta, ob, ov, ot, exact, settled)


def _inner_ellipsoid(ms, eps: float, ell):
    """``(centre, H⁻¹, ρ², B̃, r)``: an ellipsoid ``{θ : (θ - centre)'H(θ - centre) <= ρ²}`` inside the loss level
    set ``{L <= ε}`` of the logistic loss (points also in the ball are members of S), or None.

    On the enclosing ellipsoid E (which contains S and θ_min), each row's margin lies in an interval; the
    logistic curvature σ(m)σ(-m) is at most its value at the interval's point nearest 0, κ_i. For θ in E the
    segment from θ_min stays in E, so Taylor's theorem with the remainder gives the majorant
    ``L(θ) <= L(θ_min) + g'Δ + ½Δ'HΔ`` (``H = Σ w_i κ_i z_i z_i'``, Δ = θ - θ_min). Its level set at ε is the
    ellipsoid returned, shrunk about its centre until it lies in E (a generalised eigenvalue bound), with a
    relative margin of 1e-8 for rounding.
    """
    from scipy.linalg import eigh
    from scipy.special import expit, log_expit

    if ell is None:
        return None
    c_out, P, delta = ell
    D, y, t0 = ms.D, ms.y, ms.theta_min
    n = len(y)
    m0 = y * (D @ t0)
    hw = np.sqrt(delta * np.maximum(np.einsum("ij,jk,ik->i", D, P, D), 0.0))
    mc = y * (D @ c_out)
    near0 = np.clip(0.0, mc - hw, mc + hw)
    kappa = expit(near0) * expit(-near0)
    H = (D * (kappa / n)[:, None]).T @ D
    H = 0.5 * (H + H.T)
    g = -(D * (y * expit(-m0) / n)[:, None]).sum(0)
    L0 = float(-np.mean(log_expit(m0)))
    try:
        Hinv = np.linalg.inv(H)
        Pinv = np.linalg.inv(P)
        lam = float(eigh(0.5 * (Pinv + Pinv.T), H, eigvals_only=True)[-1])
    except (np.linalg.LinAlgError, ValueError):
        return None
    centre = t0 - Hinv @ g
    rho2 = 2.0 * (eps - L0) + float(g @ Hinv @ g)
    dc = centre - c_out
    off = float(np.sqrt(max(dc @ Pinv @ dc, 0.0)))
    if not (rho2 > 0 and lam > 0 and off < np.sqrt(delta)):
        return None
    # E_in inside E: sqrt(ρ² λ) + |centre - c_out|_{P⁻¹} <= sqrt(δ)
    rho2 = min(rho2, ((np.sqrt(delta) - off) ** 2) / lam) * (1 - 1e-8)
    B = np.zeros((len(t0), len(t0)))
    B[ms.o :, ms.o :] = ms.B[ms.o :, ms.o :]
    return centre, 0.5 * (Hinv + Hinv.T), rho2, B, ms.r


def screen_of(eng) -> RowScreen:
    """The engine's :class:`RowScreen`, built on first use."""
    scr = getattr(eng, "_screen", None)
    if scr is None:
        scr = eng._screen = RowScreen(eng)
    return scr
