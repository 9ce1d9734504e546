"""Diverse starts of the local searches for classifier MCR members: points of S furthest along random directions.

``argmax u'θ`` over S for a direction u drawn from the seeded generator: for a hinge set with few distinct rows one
conic solve (:mod:`._ascent_hinge`), else the Lagrangian search of :mod:`._ascent` (``min_K e_orig - t·u'θ`` for
the largest t whose minimiser stays in S; the hinge smoothed at ``_TAU·ε``). Such extreme points spread over the boundary of S, where the ends of MR
usually lie; local searches from them reach maxima and minima that the coordinate extremes and θ_min miss
(breast cancer, 300 rows, 6 features, hinge, concavity: the lower end 0.9724 from such starts against 0.9750).
The directions depend on ``random_state`` and ``key`` only: the same inputs give the same starts.
"""

from __future__ import annotations

import math

import numpy as np

from ...utils.validation import seed_from
from ._ascent_hinge import hinge_step, use_conic
from ._level import _search_t

__all__ = ["random_extremes"]

_TAU = 1e-2  # smoothing of the hinge for the starts, relative to ε


def random_extremes(ms, T, loss, eps, lo, hi, n, random_state, key: str) -> list:
    """``n`` points of S furthest along random directions (see the module docstring); ``key`` names the stream."""
    if n <= 0:
        return []
    rng = np.random.default_rng([seed_from(random_state, "RashomonSet.model_class_reliance"), _KEYS[key]])
    hs = hinge_step(ms, eps, lo, hi) if use_conic(ms, loss) else None
    # the hinge smoothed at _TAU·ε (>= the exact hinge: its points lie in S, a little inside): starts need not be
    # exact extremes, and Newton on this smoothing takes a few steps where the searches' sharp one takes dozens
    sm = loss.smoothed(max(loss.s, _TAU * eps))
    e_o = lambda th: T.e_orig(th, sm, exact=loss.name == "logistic")  # noqa: E731  (>= the exact loss)
    out = []
    for _ in range(n):
        u = rng.normal(size=ms.D.shape[1])
        th = None if hs is None else hs(u, 0.0)
        if th is None:

            def solve(t, x, u=u):
                return ms.solve(1.0, 0.0, ms.orig, lo, hi, x, lin=-t * u, tol=1e-10, loss=sm)[0]

            th = _search_t(solve, e_o, eps, math.inf, ms.theta_min, iters=6)
        out.append(th)
    return out


_KEYS = {"upper": 1, "lower": 2}
