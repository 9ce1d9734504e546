"""Which decisions a logistic set fitted on Dask input can flip: screened, exact solves only where undecided.

As in memory (:mod:`rashomon.sets.margin`'s screen), a row with reference score on one side of the threshold t
flips when some member puts it on the other side: the flip-side functional f of the row has ``min_S f'θ <= τ``.
Most rows are settled without a pass over the data:

* **a member crosses**: every member found (θ_min, the exact ends along the axes of the outer ellipsoid, each
  solved row's end, and the closed-form end of every row on an inner ellipsoid of members) gives the scores of
  all the given rows in one product (the rows are in memory: a sample, not the table);
* **no member can cross**: the certified outer ellipsoid ``E ⊇ S`` (tangent quadratics of the loss with the
  least curvature each row's margin can have, refined by a fixed point of a few passes, once per set,
  :func:`._dask_margin_bounds.score_ellipsoids`) and the ball give ``min f'θ`` in closed form, widened for
  rounding.

The rows neither settles are solved exactly on their flip side by the batched Newton passes of
:mod:`._dask_margin_ranges`, a chunk at a time; each chunk's members then settle more of the rest. The side
away from the threshold is reported by its outer bound and the best member.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = ["DaskRowScreen"]

_MARGIN = 1e-10  # relative safety subtracted from every outer bound (rounding of the closed forms)
_CHUNK = 128  # rows solved exactly per round (one batch of the Newton passes)
_POINTS = True  # rounds of batched exact points (:mod:`._dask_margin_points`) before the per-row solves
_CHEAP_AXES = True  # the axis members from batched points (else exact ends by the Newton passes)


def _outer(F: np.ndarray, ell, box, r: float) -> np.ndarray:
    """Certified lower bounds of ``min_S f'θ`` for the rows f of F: K's (the ball, the intercept interval) and the
    outer ellipsoid's, widened for rounding."""
    mid, fw, Pball = box
    best = F @ mid - np.sqrt(r * np.maximum(np.einsum("ij,jk,ik->i", F, Pball, F), 0.0)) - np.abs(F) @ fw
    if ell is not None:
        c, Ainv = ell
        best = np.maximum(best, F @ c - np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", F, Ainv, F), 0.0)))
    return best - _MARGIN * np.maximum(1.0, np.abs(best))


class DaskRowScreen:
    """The screen of a set's Dask range engine (``flips`` as the in-memory screen's; see the module docstring)."""

    def __init__(self, eng: Any):
        from ._dask_margin_bounds import _box, score_ellipsoids

        self.eng = eng
        self.box = _box(eng.par, eng.lo, eng.hi)
        self.ell, self.inner = score_ellipsoids(eng.rows, eng.par, eng.theta_min, eng.eps, eng.loss, eng.lo, eng.hi)
        # members: θ_min and the exact extremes along the axes of the outer ellipsoid (or the coordinates)
        d = len(eng.theta_min)
        dirs = np.eye(d) if self.ell is None else np.linalg.eigh(self.ell[1])[1].T
        if _POINTS and _CHEAP_AXES:  # members near the axes' ends from a few passes of batched points (no Hessian pass)
            from ._dask_margin_points import axis_members

            C = np.vstack([dirs, -dirs])
            ends, ball = axis_members(eng, C)
            if ball.any():  # ends on the ball: the exact Newton passes, which handle it
                ends = np.vstack([ends, eng.minimize(C[ball])[1]])
        else:
            ends = eng.minimize(np.vstack([dirs, -dirs]))[1]
        self.members = np.vstack([eng.theta_min[None, :], ends])
        self.use_points = _POINTS
        self.points: dict = {}

    def _inner_values(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(values, points)`` of ``min f'θ`` over the inner ellipsoid (``inf`` where the point leaves the ball)."""
        if self.inner is None:
            return np.full(len(F), np.inf), np.zeros((len(F), len(self.eng.theta_min)))
        c, Ainv = self.inner
        FA = F @ Ainv
        sq = np.sqrt(np.maximum(np.einsum("ij,ij->i", FA, F), 1e-300))
        pts = c[None, :] - FA / sq[:, None]
        ok = np.einsum("ij,jk,ik->i", pts, self.eng.B, pts) <= self.eng.r * (1 - 1e-9)
        return np.where(ok, np.einsum("ij,ij->i", F, pts), np.inf), pts

    def _best(self, F: np.ndarray, Th: np.ndarray):
        v, k = np.empty(len(F)), np.empty(len(F), dtype=int)
        step = max(1, (1 << 22) // max(len(Th), 1))  # rows x members products in blocks of about 32 MB
        for a in range(0, len(F), step):
            V = F[a : a + step] @ Th.T
            k[a : a + step] = np.argmin(V, axis=1)
            v[a : a + step] = V[np.arange(len(V)), k[a : a + step]]
        th = Th[k]
        iv, ip = self._inner_values(F)
        better = iv < v
        return np.where(better, iv, v), np.where(better[:, None], ip, th)

    def flips(self, F: np.ndarray, tau: np.ndarray, strict: np.ndarray, tol: float, tick=None):
        """The flip side of every row: does some member have ``f'θ <= τ`` (``< τ`` where ``strict``)?"""
        m = len(F)
        tick = tick or (lambda k=1: None)
        members = [self.members]
        crosses = lambda v, tt, s: np.where(s, v < tt, v <= tt)  # noqa: E731
        value, theta = self._best(F, self.members)
        bound = np.minimum(_outer(F, self.ell, self.box, self.eng.r), value)
        left = np.flatnonzero(~crosses(value, tau, strict) & crosses(bound, tau, strict))
        settled = {"members": int(crosses(value, tau, strict).sum())}
        settled["outer bounds"] = m - settled["members"] - len(left)
        exact = np.zeros(m, dtype=bool)
        tick(m - len(left))
        if self.use_points and left.size:
            from ._dask_margin_points import points_stage

            left, found, counts = points_stage(self, F, tau, strict, value, theta, bound, left, tick)
            members += found
            settled["by exact points"] = counts["by exact points"]
            self.points = counts
        n_refined = n_open = 0
        while left.size:
            pick = np.unique(left[np.linspace(0, left.size - 1, min(_CHUNK, left.size)).round().astype(int)])
            tp, sp = tau[pick], strict[pick]

            def decide(j, b, v, tp=tp, sp=sp):  # a flip decided: certified not to cross, or a member crosses
                v = np.where(np.isnan(v), np.inf, v)
                return ~crosses(b, tp[j], sp[j]) | crosses(v, tp[j], sp[j])

            b, th, v = self.eng.minimize(F[pick], tol=tol, decide=decide)
            bound[pick], value[pick], theta[pick], exact[pick] = b, v, th, True
            n_open += int((~crosses(v, tau[pick], strict[pick]) & crosses(b, tau[pick], strict[pick])).sum())
            tick(len(pick))
            rest = np.setdiff1d(left, pick, assume_unique=True)
            if rest.size:
                V = F[rest] @ th.T
                k = np.argmin(V, axis=1)
                vr, tr = V[np.arange(len(rest)), k], th[k]
                better = vr < value[rest]
                value[rest[better]], theta[rest[better]] = vr[better], tr[better]
                still = ~crosses(value[rest], tau[rest], strict[rest])
                n_refined += int((~still).sum())
                tick(int((~still).sum()))
                left = rest[still]
            else:
                left = rest
            members.append(th)
        settled["by solved rows"] = n_refined
        settled["solved"] = int(exact.sum())
        settled["open"] = n_open
        ov, ot = self._best(-F, np.vstack(members))
        ob = np.minimum(_outer(-F, self.ell, self.box, self.eng.r), ov)
        return SimpleNamespace(
            bound=bound,
            value=value,
            theta=theta,
            other_bound=ob,
            other_value=ov,
            other_theta=ot,
            exact=exact,
            settled=settled,
        )
