"""Screened multiplicity of the classifier classes: the same flips as the exact range of every row.

``multiplicity`` settles most rows with members already found and certified outer bounds (the enclosing ellipsoid,
the ball, the half-spaces of solved directions) and solves only the undecided rows, stopping each once its flip is
decided. The references here are independent of that: the exact per-row ranges of ``prediction_range`` (both ends of
every row, each certified within 1e-10), members sampled from the set (none may leave a certified range), and the
loss recomputed from scratch for every attaining member.
"""

from __future__ import annotations

import numpy as np
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet

from ._draws import logistic_problem as _data


def _in_set(rs, X, y, theta):
    """Membership from scratch: the user-unit coefficients' mean loss and the class's ball."""
    par = rs.parametrization_
    at = par.member_attributes(theta)
    m = (2.0 * y - 1.0) * (X @ at["coef_"] + at["intercept_"])
    name = rs._margin.loss.name
    e = float(np.mean(np.logaddexp(0.0, -m) if name == "logistic" else np.maximum(0.0, 1.0 - m)))
    return e <= rs.epsilon_abs_ * (1 + 1e-12) and theta @ par.B @ theta <= par.r * (1 + 1e-9)


CASES = [(LogisticModelClass, 400, 4, 0.1), (LogisticModelClass, 300, 6, 0.03), (HingeModelClass, 150, 3, 0.1)]


@pytest.fixture(scope="module", params=CASES, ids=["logistic-4", "logistic-6", "hinge-3"])
def case(request):
    cls, n, p, eps = request.param
    X, y = _data(n, p, seed=n + p)
    rs = RashomonSet(cls(), eps).fit(X, y)
    exact = rs.prediction_range(scale="score")  # both ends of every row, certified within 1e-10
    return rs, X, y, exact


@pytest.mark.parametrize("t", [0.0, -0.7, 1.2])
def test_flips_equal_the_exact_ranges(case, t):
    rs, X, y, exact = case
    mult = rs.multiplicity(threshold=t, scale="score")
    np.testing.assert_array_equal(mult.flips, exact.flippable(t))
    assert mult.ambiguity == pytest.approx(float(exact.flippable(t).mean()), abs=0)
    s = mult.settled
    stages = ("members", "outer bounds", "line search", "by solved rows", "inner ellipsoids", "solved")
    assert sum(s[k] for k in stages) == len(X) and min(s.values()) >= 0 and s["open"] <= s["solved"]
    # the certified ends enclose the exact ones, the attained ends lie within them
    r = mult.ranges
    slack = 1e-9 * np.maximum(1.0, np.abs(exact.lower))
    assert np.all(r.lower <= exact.lower + slack) and np.all(r.upper >= exact.upper - slack)
    assert np.all(r.lower <= r.lower_attained + 1e-12) and np.all(r.upper_attained <= r.upper + 1e-12)
    assert mult.discrepancy_lower <= mult.discrepancy_upper


def test_flips_are_witnessed_by_members_of_the_set(case):
    rs, X, y, _ = case
    mult = rs.multiplicity(threshold=0.0, scale="score")
    r = mult.ranges
    idx = np.where(mult.flips)[0]
    for i in idx[np.linspace(0, len(idx) - 1, min(8, len(idx))).round().astype(int)]:
        side = "lower" if mult.reference_decision[i] else "upper"
        m = r.member(i, side)
        assert _in_set(rs, X, y, m.theta_)
        P1, p1 = rs.parametrization_.prediction_map(X[i : i + 1])
        score = float((P1 @ m.theta_ + p1)[0])
        assert (score > 0) != mult.reference_decision[i]
        assert score == pytest.approx(getattr(r, f"{side}_attained")[i], abs=1e-9)


def test_sampled_members_stay_inside_the_screened_ranges(case):
    rs, X, y, _ = case
    mult = rs.multiplicity(threshold=0.0, scale="score")
    smp = rs.sample(300, random_state=1)
    P, p0 = rs.parametrization_.prediction_map(X)
    S = smp.thetas @ P.T + p0[None, :]
    r = mult.ranges
    slack = 1e-9 * np.maximum(1.0, np.abs(S))
    assert np.all(S >= r.lower[None, :] - slack) and np.all(S <= r.upper[None, :] + slack)
    flips = (S > 0) != mult.reference_decision[None, :]
    assert not np.any(flips[:, ~mult.flips])


def test_early_decisions_are_certified():
    """Rows the batch stops once decided: the bound is below the exact minimum, the member is in the set."""
    from rashomon.sets.rows._ranges import engine_of

    X, y = _data(500, 5, seed=3)
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    eng = engine_of(rs, "test")
    P, _ = rs.parametrization_.prediction_map(X[:120])
    b_exact, _, _ = eng.minimize(P)
    tau = b_exact + np.where(np.arange(120) % 2, 0.05, -0.05)  # half decidable as flips, half as none
    b, th, v, ok = eng._batch().minimize(P, 1e-10, decide=(tau, np.zeros(120, dtype=bool)))
    assert np.all(b <= b_exact + 1e-9 * np.maximum(1.0, np.abs(b_exact)))
    member = eng._batch().members(th)
    assert np.all(v[member] >= b_exact[member] - 1e-9 * np.maximum(1.0, np.abs(b_exact[member])))
    for i in np.where(member)[0][:10]:
        assert _in_set(rs, X, y, th[i])
    decided = (member & (v <= tau)) | (b > tau)
    assert decided.sum() >= 100  # the batch answered almost every row before converging


def test_hessians_by_row_blocks_equal_the_kept_products(monkeypatch):
    """Large sets build the rows' outer products a block at a time (bounded memory): the same Hessians."""
    from rashomon.sets.margin import _batch
    from rashomon.sets.rows._ranges import engine_of

    X, y = _data(300, 4, seed=7)
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    eng = engine_of(rs, "test")
    bat = eng._batch()
    s = np.random.default_rng(0).random((len(bat.Z), 5))
    H = bat.hessians(s)
    monkeypatch.setattr(_batch, "_ZZ_FLOATS", 0)
    monkeypatch.setattr(_batch, "_ROWS", 64)
    small = _batch.MarginBatch(eng)
    assert small.ZZ is None
    np.testing.assert_allclose(small.hessians(s, exact=True), H, rtol=1e-12, atol=1e-15)


def test_rank_deficient_design_keeps_every_flip():
    """Exactly collinear columns: Newton's early iterates run along the design's null direction, where the loss and
    its gradient lose digits; a row is stopped early only by a bound from an iterate in the ball (found by an
    independent review: the flip of row 1 was missed before)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(150, 3))
    X[:, 2] = X[:, 0] - X[:, 1]
    y = (rng.random(150) < 1 / (1 + np.exp(-X @ rng.normal(size=3)))).astype(int)
    rs = RashomonSet(LogisticModelClass(norm_bound=0.5), 0.01, epsilon_kind="additive").fit(X, y)
    ex = rs.prediction_range(X, scale="score", return_models=True)
    t = float(ex.upper_attained[1] - 1e-7)
    assert _in_set(rs, X, y, ex.upper_models[1])  # a member of the set flips row 1 at t
    m = rs.multiplicity(X, threshold=t, scale="score")
    np.testing.assert_array_equal(m.flips, ex.flippable(t))
    assert np.all(m.ranges.upper >= ex.upper_attained - 1e-9 * np.maximum(1.0, np.abs(ex.upper_attained)))
    # the batch's own bounds, before the per-row search: none above the attained minimum (an iterate far along the
    # null direction gave one 2.6e-8 too high)
    from rashomon.sets.rows._ranges import engine_of

    eng = engine_of(rs, "test")
    P, p0 = rs.parametrization_.prediction_map(X[:40])
    b = eng._batch().minimize(-P, 1e-10)[0]
    best = p0 - ex.upper_attained[:40]  # the attained minimum of -score
    assert np.all(b <= best + 1e-12 * np.maximum(1.0, np.abs(best)))


def test_near_parallel_rows_keep_the_half_space_bounds_valid():
    """Rows 1e-8 apart: the half-space bound of a row nearly parallel to a solved one cancels in its closed form;
    its rounding allowance keeps every certified end outside the exact attained ends."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    y = (rng.random(100) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    rs = RashomonSet(HingeModelClass(norm_bound=100.0), 0.01).fit(X, y)
    Xb = rng.normal(size=(150, 3))
    Xe = np.vstack([Xb, Xb + 1e-8 * rng.normal(size=Xb.shape)])
    ex = rs.prediction_range(Xe, scale="score")
    m = rs.multiplicity(Xe, threshold=0.0, scale="score")
    r = m.ranges
    assert np.all(r.lower <= ex.lower_attained + 1e-12) and np.all(r.upper >= ex.upper_attained - 1e-12)


def test_screen_closed_forms_by_row_blocks_are_the_same(monkeypatch):
    """The outer bounds and attained values are computed a block of rows at a time (bounded memory at 10^6 rows):
    blocks of a few rows give the same bounds, members and flips."""
    from rashomon.sets.margin import _screen

    X, y = _data(300, 4, seed=5)
    a = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).multiplicity(scale="score")
    monkeypatch.setattr(_screen, "_CELLS", 40)  # 1 to 40 rows per block
    b = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).multiplicity(scale="score")
    np.testing.assert_array_equal(a.flips, b.flips)
    assert a.settled == b.settled
    np.testing.assert_array_equal(a.ranges.lower, b.ranges.lower)
    np.testing.assert_array_equal(a.ranges.upper, b.ranges.upper)


@pytest.mark.parametrize("sample", [8192, 97])
def test_ray_points_are_members_and_their_tangent_bounds_hold(monkeypatch, sample):
    """Each row's own ray (logistic; searched on every row or on every k-th): the points marked inside are members
    of the set (recomputed from scratch), no tangent bound exceeds the exact minimum, both near the exact ends."""
    from rashomon.sets.margin import _rays
    from rashomon.sets.margin._rays import ray_points

    monkeypatch.setattr(_rays, "_SAMPLE", sample)
    from rashomon.sets.margin import _screen

    monkeypatch.setattr(_screen, "_KCUT", False)  # the cuts with E (the cut with K: tests/test_inner_points.py)
    from rashomon.sets.margin._screen import screen_of
    from rashomon.sets.rows._ranges import engine_of

    X, y = _data(600, 5, seed=13)
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    eng = engine_of(rs, "test")
    scr = screen_of(eng)
    P, _ = rs.parametrization_.prediction_map(X[:200])
    F = np.vstack([P, -P])
    T, inside, T0, L0, G = ray_points(eng._batch(), F)
    b_exact, _, _ = eng.minimize(F)
    assert inside.mean() > (0.9 if sample > 600 else 0.5)
    for i in np.where(inside)[0][::40]:
        assert _in_set(rs, X, y, T[i])
    v = (F * T).sum(1)
    assert np.all(v[inside] >= b_exact[inside] - 1e-9 * np.maximum(1.0, np.abs(b_exact[inside])))
    tb = scr.tangents(F, -G, L0 - eng.eps - (G * T0).sum(1))
    assert np.all(tb <= b_exact + 1e-9 * np.maximum(1.0, np.abs(b_exact)))
    # near the exact ends: members within a tenth of the range's half-width, most tangent bounds closer than E's
    ell = scr._halfspaces(F, scr.C[:0], scr.b[:0])
    assert np.median(tb - ell) > 0 and np.median(v - b_exact) < 0.1 * np.median(b_exact - ell)
    # one step further from the tangent points: members again, valid and tighter tangent bounds
    T2, in2, T1, L1, G1 = _rays.corrected_points(eng._batch(), F, T0, L0, G, _rays.hessian_factor(eng._batch()))
    for i in np.where(in2)[0][::40]:
        assert _in_set(rs, X, y, T2[i])
    v2 = (F * T2).sum(1)
    assert np.all(v2[in2] >= b_exact[in2] - 1e-9 * np.maximum(1.0, np.abs(b_exact[in2])))
    rows, C1, b1 = scr._planes(T1, L1, G1)
    tb1 = scr.tangents(F[rows], C1, b1)
    assert rows.mean() > 0.5 and np.all(tb1 <= b_exact[rows] + 1e-9 * np.maximum(1.0, np.abs(b_exact[rows])))
    assert np.median(b_exact[rows] - tb1) < np.median(b_exact[rows] - tb[rows])


def test_line_search_settles_rows_with_the_exact_flips(monkeypatch):
    """With and without the ray stage: the same flips; with it, fewer rows solved exactly."""
    from rashomon.sets.margin import _screen

    X, y = _data(800, 6, seed=21)
    on = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).multiplicity(scale="score")
    monkeypatch.setattr(_screen, "_RAYS", False)
    off = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).multiplicity(scale="score")
    np.testing.assert_array_equal(on.flips, off.flips)
    assert on.settled["line search"] > 0 and off.settled["line search"] == 0
    assert on.settled["solved"] < off.settled["solved"]
    ex = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).prediction_range(scale="score")
    np.testing.assert_array_equal(on.flips, ex.flippable(0.0))
    slack = 1e-9 * np.maximum(1.0, np.abs(ex.lower))
    assert np.all(on.ranges.lower <= ex.lower + slack) and np.all(on.ranges.upper >= ex.upper - slack)
