"""Batched exact points of the Dask logistic screen: each pass evaluates many points, each serving every row.

Checked against brute force: the one-pass loss and gradient of many points against ``np.logaddexp`` over the rows,
the cut of an ellipsoid by a half-space against cvxpy, the members found against the exact loss, and every row's
decision and certificates against the in-memory engine's exact ranges; and the screen with the stage against the
screen without it (the same flips, fewer passes).
"""

from __future__ import annotations

import numpy as np
import pytest

from rashomon import LogisticModelClass, RashomonSet

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _data(n=3000, p=4, seed=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3, size=p) + rng.normal(size=p) * 4
    z = (X - X.mean(0)) @ rng.normal(size=p) / X.std(0).mean()
    y = np.where(z + rng.logistic(size=n) > 0.3, 1, 0)
    return X, y


@pytest.fixture(scope="module")
def sets():
    X, y = _data()
    mc = LogisticModelClass(norm_bound=50.0)
    with dask.config.set(scheduler="synchronous"):
        b = RashomonSet(mc, 0.05).fit(da.from_array(X, chunks=(700, 4)), da.from_array(y, chunks=700))
    return X, y, RashomonSet(mc, 0.05).fit(X, y), b


def _engine(rs):
    from rashomon.sets.rows._ranges import engine_of

    return engine_of(rs, "test")


def _design(rs, X):
    par = rs.parametrization_
    return np.column_stack([np.ones(len(X)), (X - par.mean) / par.sd])


def test_value_grad_matches_brute_force(sets):
    from rashomon.sets.scale._dask_margin_points import value_grad

    X, y, _, b = sets
    eng = _engine(b)
    rng = np.random.default_rng(0)
    T = b.theta_min_[None, :] + rng.normal(size=(37, len(b.theta_min_)))
    with dask.config.set(scheduler="synchronous"):
        e, G = value_grad(eng, T)
    D, ye = _design(b, X), 2.0 * y - 1
    M = ye[:, None] * (D @ T.T)
    np.testing.assert_allclose(e, np.logaddexp(0, -M).mean(axis=0), rtol=1e-12)
    sig = 1.0 / (1.0 + np.exp(M))
    np.testing.assert_allclose(G, -((sig * ye[:, None]).T @ D) / len(y), rtol=1e-10, atol=1e-13)


def _ellipsoid_and_cuts(seed, rows, cuts, d=4):
    """``(rng, M, c, F, Hs)``: an ellipsoid ``{t : (t - c)'M⁻¹(t - c) <= 1}``, functionals F and cut normals Hs, drawn
    in that order (the rng goes on for the cuts' offsets)."""
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(d, d))
    M = L @ L.T + 0.5 * np.eye(d)  # A⁻¹
    c = rng.normal(size=d)
    return rng, M, c, rng.normal(size=(rows, d)), rng.normal(size=(cuts, d))


def test_cut_bounds_against_cvxpy():
    cp = pytest.importorskip("cvxpy")
    from rashomon.sets.scale._dask_margin_points import _cut_bounds

    rng, M, c, F, Hs = _ellipsoid_and_cuts(1, rows=6, cuts=3)
    d = len(c)
    b = Hs @ c + np.array([-0.8, 0.3, 2.0]) * np.sqrt(np.einsum("ij,jk,ik->i", Hs, M, Hs))
    got = _cut_bounds(F, (c, M), Hs, b)
    A = np.linalg.inv(M)
    for i, f in enumerate(F):
        best = -np.inf
        for j in range(len(Hs)):
            t = cp.Variable(d)
            prob = cp.Problem(cp.Minimize(f @ t), [cp.quad_form(t - c, A) <= 1, Hs[j] @ t <= b[j]])
            prob.solve()
            best = max(best, prob.value)
        assert got[i] <= best + 1e-6  # certified: never above the true minimum (cvxpy's accuracy)
        assert got[i] == pytest.approx(best, abs=1e-5)  # and tight: the exact minimum of the best cut


def test_combined_cuts_against_cvxpy():
    cp = pytest.importorskip("cvxpy")
    from rashomon.sets.scale._dask_margin_cuts import combined_bounds
    from rashomon.sets.scale._dask_margin_points import _cut_bounds

    rng, M, c, F, Hs = _ellipsoid_and_cuts(2, rows=8, cuts=12)
    d = len(c)
    b = Hs @ c + rng.uniform(-0.3, 0.8, size=12) * np.sqrt(np.einsum("ij,jk,ik->i", Hs, M, Hs))
    got = combined_bounds(F, (c, M), Hs, b, k=12, iters=400)
    single = _cut_bounds(F, (c, M), Hs, b)
    A = np.linalg.inv(M)
    gains = []
    for i, f in enumerate(F):
        t = cp.Variable(d)
        prob = cp.Problem(cp.Minimize(f @ t), [cp.quad_form(t - c, A) <= 1, Hs @ t <= b])
        prob.solve()
        assert got[i] <= prob.value + 1e-6  # certified: never above the minimum over all the cuts
        gains.append(got[i] - single[i])
    assert max(gains) > 1e-3  # the cuts together bound some rows that no single cut does


def test_stage_decisions_against_exact_ranges(sets):
    from rashomon.sets.scale import _dask_margin_screen as screen

    X, y, a, b = sets
    rows = X[:300]
    with dask.config.set(scheduler="synchronous"):
        mb = b.multiplicity(rows)
        eng = _engine(b)
        points = dict(eng.screen().points)
    ma = a.multiplicity(rows)
    np.testing.assert_array_equal(mb.flips, ma.flips)
    assert mb.settled["by exact points"] > 0 and points["passes"] >= 1
    assert mb.settled["solved"] == 0  # every undecided row settled by the batched points here
    assert sum(v for k, v in mb.settled.items() if k != "open") == len(rows)
    # certificates against the in-memory ranges: a certified end is never past an end a member attains there,
    # and an end attained by a member is never past the in-memory certified bound (1e-9 relative)
    ex, got = a.prediction_range(rows), mb.ranges
    tol = 1e-9
    assert np.all(np.asarray(got.lower) <= np.asarray(ex.lower_attained) + tol)
    assert np.all(np.asarray(got.upper) >= np.asarray(ex.upper_attained) - tol)
    assert np.all(np.asarray(got.lower_attained) >= np.asarray(ex.lower) - tol)
    assert np.all(np.asarray(got.upper_attained) <= np.asarray(ex.upper) + tol)
    # every member the stage returns for a flip is in the set (exact loss and ball)
    flipped = np.flatnonzero(mb.flips)
    th = np.where(
        mb.reference_decision[flipped, None], mb.ranges.lower_models[flipped], mb.ranges.upper_models[flipped]
    )
    D, ye = _design(b, X), 2.0 * y - 1
    assert np.all(np.logaddexp(0, -ye[:, None] * (D @ th.T)).mean(axis=0) <= b.epsilon_abs_ * (1 + 1e-12))
    par = b.parametrization_
    assert np.all(np.einsum("ij,jk,ik->i", th, par.B, th) <= par.r * (1 + 1e-9))
    # without the stage: the same flips from the exact per-row solves, at many more passes
    old = screen._POINTS
    try:
        screen._POINTS = False
        with dask.config.set(scheduler="synchronous"):
            b2 = RashomonSet(b.model_class, 0.05).fit(da.from_array(X, chunks=(700, 4)), da.from_array(y, chunks=700))
            m2 = b2.multiplicity(rows)
            passes_old = _engine(b2).passes
    finally:
        screen._POINTS = old
    np.testing.assert_array_equal(m2.flips, mb.flips)
    assert eng.passes < passes_old


def test_member_on_the_level_set_is_pulled_strictly_inside(sets):
    """A point whose computed loss equals ε (a model step converged onto the level set) is moved toward θ_min by a
    band wider than the rounding of the loss, so that its loss in the user's units is below ε_abs, not a few ulp
    above it; a point well inside is returned unchanged."""
    X, y, _, b = sets
    eng = _engine(b)
    rng = np.random.default_rng(4)
    D, ye = _design(b, X), 2.0 * y - 1
    for _ in range(20):
        d = rng.normal(size=len(b.theta_min_))
        lo, hi = 0.0, 1.0
        while np.logaddexp(0, -ye * (D @ (b.theta_min_ + hi * d))).mean() <= eng.eps:
            hi *= 2.0
        for _ in range(200):  # the last point of the ray inside, to the last bit
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.logaddexp(0, -ye * (D @ (b.theta_min_ + mid * d))).mean() <= eng.eps else (lo, mid)
        t = b.theta_min_ + lo * d
        out = eng._member(t, eng.eps)
        assert np.linalg.norm(out - t) > 0
        assert np.logaddexp(0, -ye * (D @ out)).mean() < eng.eps
        inner = b.theta_min_ + 0.5 * lo * d
        np.testing.assert_array_equal(eng._member(inner, np.logaddexp(0, -ye * (D @ inner)).mean()), inner)
