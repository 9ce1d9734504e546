"""Inner ellipsoids of a logistic set about the points where the loss was evaluated (``margin._inner``).

Every point they give must be a member of the set, recomputed from scratch (mean logistic loss in user units and the
class's ball), and no member's value may fall below the exact minimum of the row's functional (certified within
1e-10 by the exact batched solver). In ``multiplicity`` they settle rows for which no point was evaluated; the flips
must still equal those of the exact range of every row, and sampled members must stay inside the certified ranges.
"""

from __future__ import annotations

import numpy as np
import pytest

from rashomon import LogisticModelClass, RashomonSet

from ._draws import logistic_problem as _data


def _loss(rs, X, y, theta):
    at = rs.parametrization_.member_attributes(theta)
    m = (2.0 * y - 1.0) * (X @ at["coef_"] + at["intercept_"])
    return float(np.mean(np.logaddexp(0.0, -m)))


def _in_set(rs, X, y, theta):
    par = rs.parametrization_
    return _loss(rs, X, y, theta) <= rs.epsilon_abs_ * (1 + 1e-12) and theta @ par.B @ theta <= par.r * (1 + 1e-9)


def test_inner_points_are_members_and_never_below_the_exact_minimum():
    from rashomon.sets.margin._inner import of_batch
    from rashomon.sets.margin._rays import ray_points
    from rashomon.sets.rows._ranges import engine_of

    X, y = _data(600, 5, seed=13)
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    eng = engine_of(rs, "test")
    bat = eng._batch()
    P, _ = rs.parametrization_.prediction_map(X)
    F = np.vstack([P, -P])
    inner = of_batch(bat)
    _, _, T0, L0, G = ray_points(bat, F[::10])  # points evaluated for one row in ten
    inner.add(T0, L0, G)
    assert len(inner) > 0.9 * len(T0)
    assert np.isfinite(inner.best(F)[0]).any()
    from rashomon.sets.margin._screen import screen_of

    base = screen_of(eng).best_members(F)[1]
    v, T = inner.best(F, base)  # cut at the ball on the segment from each row's best member
    ok = np.isfinite(v)
    assert ok.mean() > 0.5
    np.testing.assert_allclose(v[ok], (F[ok] * T[ok]).sum(1), rtol=0, atol=1e-12)
    for i in np.where(ok)[0][::25]:
        assert _in_set(rs, X, y, T[i])
    b_exact, _, _ = eng.minimize(F)
    assert np.all(v[ok] >= b_exact[ok] - 1e-9 * np.maximum(1.0, np.abs(b_exact[ok])))
    # members near the exact ends: median within 0.4 of the range's half-width (0.27 measured)
    half = 0.5 * (-b_exact[len(P) :] - b_exact[: len(P)])
    gap = (v - b_exact)[: len(P)] / np.maximum(half, 1e-12)
    assert np.median(gap[ok[: len(P)]]) < 0.4
    # interior points of every ellipsoid (random directions and radii) are members too
    rng = np.random.default_rng(0)
    L = np.linalg.cholesky(np.linalg.inv(0.25 * (bat.Zw.T @ bat.Z)))
    for k in range(0, len(inner), 7):
        u = rng.normal(size=len(inner.C[k]))
        pt = inner.C[k] + inner.rho[k] * rng.random() ** 0.2 * (L @ u) / np.linalg.norm(u)
        if pt @ rs.parametrization_.B @ pt <= rs.parametrization_.r:
            assert _loss(rs, X, y, pt) <= rs.epsilon_abs_


@pytest.mark.parametrize("t", [0.0, 0.8])
def test_inner_ellipsoids_settle_rows_with_the_exact_flips(monkeypatch, t):
    """A few thousand rows: the inner ellipsoids settle rows, and every flip equals the exact per-row one."""
    from rashomon.sets.margin import _screen

    monkeypatch.setattr(_screen, "_FIRST", 256)
    X, y = _data(3000, 6, seed=5)
    on = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).multiplicity(threshold=t, scale="score")
    assert on.settled["inner ellipsoids"] > 0
    assert sum(v for k, v in on.settled.items() if k != "open") == len(X)
    monkeypatch.setattr(_screen, "_INNER", False)
    off = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).multiplicity(threshold=t, scale="score")
    assert off.settled["inner ellipsoids"] == 0
    assert on.settled["line search"] + on.settled["solved"] < off.settled["line search"] + off.settled["solved"]
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    ex = rs.prediction_range(scale="score")
    np.testing.assert_array_equal(on.flips, ex.flippable(t))
    np.testing.assert_array_equal(off.flips, on.flips)
    r = on.ranges
    slack = 1e-9 * np.maximum(1.0, np.abs(ex.lower))
    assert np.all(r.lower <= ex.lower + slack) and np.all(r.upper >= ex.upper - slack)
    assert np.all(r.lower <= r.lower_attained + 1e-12) and np.all(r.upper_attained <= r.upper + 1e-12)
    # every attaining member that flips a row lies in the set (a sample, recomputed from scratch)
    idx = np.where(on.flips)[0]
    for i in idx[np.linspace(0, len(idx) - 1, min(12, len(idx))).round().astype(int)]:
        side = "lower" if on.reference_decision[i] else "upper"
        assert _in_set(rs, X, y, r.member(i, side).theta_)
    # certified "cannot flip": no sampled member crosses the threshold on those rows
    smp = rs.sample(300, random_state=2)
    P, p0 = rs.parametrization_.prediction_map(X)
    S = smp.thetas @ P.T + p0[None, :]
    assert not np.any(((S > t) != on.reference_decision[None, :])[:, ~on.flips])
    assert np.all(S >= r.lower[None, :] - 1e-9 * np.maximum(1.0, np.abs(S)))
    assert np.all(S <= r.upper[None, :] + 1e-9 * np.maximum(1.0, np.abs(S)))


def test_tangent_half_space_cut_with_the_ball_is_valid_and_tighter(monkeypatch):
    """Each row's own tangent half-space cut with K (the ball, the intercept interval): never above the exact
    minimum, and tighter than the cut with the enclosing ellipsoid where the norm bound binds at the minimiser."""
    from rashomon.sets.margin._rays import k_cut, ray_points
    from rashomon.sets.margin._screen import screen_of
    from rashomon.sets.rows._ranges import engine_of

    X, y = _data(2000, 8, seed=7)
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    eng = engine_of(rs, "test")
    scr = screen_of(eng)
    P, _ = rs.parametrization_.prediction_map(X[:150])
    F = np.vstack([P, -P])
    _, _, T0, L0, G = ray_points(eng._batch(), F)
    rows, C, b = scr._planes(T0, L0, G)
    kb = k_cut(F[rows], C, b, scr.mid, scr.Pball, scr.fw, scr.r)
    b_exact, _, _ = eng.minimize(F[rows])
    assert np.all(kb <= b_exact + 1e-9 * np.maximum(1.0, np.abs(b_exact)))
    tb = scr.tangents(F[rows], C, b)
    assert np.all(tb <= b_exact + 1e-9 * np.maximum(1.0, np.abs(b_exact))) and np.all(tb >= kb - 1e-9)
    ms = eng.ms
    assert ms.theta_min[ms.o :] @ ms.B[ms.o :, ms.o :] @ ms.theta_min[ms.o :] >= ms.r * (1 - 1e-6)  # on the ball
    from rashomon.sets.margin import _screen

    monkeypatch.setattr(_screen, "_KCUT", False)
    te = scr.tangents(F[rows], C, b)  # the ellipsoid's cut alone (the previous bound): looser in the median
    assert np.median(b_exact - tb) < np.median(b_exact - te)
