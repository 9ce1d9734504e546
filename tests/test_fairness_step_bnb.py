"""Branch and bound of decision-rate disparities (``disparity_range(..., time_limit=...)``).

Validity: every point of a fine grid of a two-parameter set (the brute-force reference) and every sampled member
of larger logistic and hinge sets lies inside the certified range. Tightness: on the two-parameter set the
certified width is within 10 % of the grid's width (measured 1.05, against 2.63 without the search; the search
stops once each end is within 2.5 % of the attained width). Returned members are in the set and attain the
attained values.
"""

import numpy as np
import pandas as pd
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet
from rashomon.sets.fairness._functionals import min_functionals
from rashomon.sets.fairness._step_bnb import step_bnb

ROUND = 1e-12  # rounding of sums of a few hundred row values


def _in_set(rs, th):
    ms, par = rs._margin, rs.parametrization_
    return ms.orig.e_orig(th, ms.loss) <= rs.epsilon_abs_ and th @ par.B @ th <= par.r * (1 + 1e-12)


@pytest.fixture(scope="module")
def plane():
    """A one-feature logistic set (θ: intercept and slope) and a grid of its members."""
    rng = np.random.default_rng(0)
    n = 200
    s = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame({"a": rng.normal(size=n) + 0.7 * s})
    y = (2 * X["a"] + rng.logistic(size=n) > 0.5).astype(float)
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    ms, par = rs._margin, rs.parametrization_
    pts = []
    for r in (0.25, 0.5, 1.0, 2.0):
        u = np.linspace(-r, r, 201)
        G = np.array(np.meshgrid(u, u)).reshape(2, -1).T + rs.theta_min_
        pts += [t for t in G if ms.orig.e_orig(t, ms.loss) <= rs.epsilon_abs_ and t @ par.B @ t <= par.r]
    grid = np.array(pts)
    assert len(grid) > 10_000
    return rs, s, grid


@pytest.mark.parametrize("metric", ["positive_rate", "true_positive_rate", "false_positive_rate"])
def test_plane_brute_force_inside_and_tight(plane, metric):
    rs, s, grid = plane
    base = rs.disparity_range(s, metric)
    res = rs.disparity_range(s, metric, time_limit=20.0)
    D = res.evaluate(grid)[:, 0]
    assert np.all(D >= res.lower[0] - ROUND) and np.all(D <= res.upper[0] + ROUND)
    assert res.lower[0] >= base.lower[0] - ROUND and res.upper[0] <= base.upper[0] + ROUND
    assert res.lower[0] <= res.lower_attained[0] and res.upper_attained[0] <= res.upper[0]
    ratio = (res.upper[0] - res.lower[0]) / (D.max() - D.min())
    assert ratio <= 1.1
    if metric == "positive_rate":  # the programme alone: 2.63
        assert (base.upper[0] - base.lower[0]) / (D.max() - D.min()) > 2.0
    assert _in_set(rs, res.lower_models[0]) and _in_set(rs, res.upper_models[0])
    att = res.evaluate(np.vstack([res.lower_models[0], res.upper_models[0]]))[:, 0]
    assert abs(att[0] - res.lower_attained[0]) <= ROUND and abs(att[1] - res.upper_attained[0]) <= ROUND


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_sampled_members_inside_after_the_search(cls):
    rng = np.random.default_rng(1)
    n = 300
    s = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame({"a": rng.normal(size=n) + 0.5 * s, "b": rng.normal(size=n)})
    y = (X["a"] + 0.5 * X["b"] + 0.4 * s + rng.logistic(size=n) > 0.3).astype(float)
    rs = RashomonSet(cls(), 0.05).fit(X, y)
    res = rs.disparity_range(s, "positive_rate", time_limit=1.0)
    D = res.evaluate(rs.sample(1000, random_state=3).thetas)
    assert np.all(D >= res.lower - ROUND) and np.all(D <= res.upper + ROUND)
    for models in (res.lower_models, res.upper_models):
        assert _in_set(rs, models[0])


def test_search_stops_at_its_gap_and_time(plane):
    """The stopping rules: a bound within ``gap`` of the best member, or the time limit (the bound then stands)."""
    rs, s, grid = plane
    P, p0 = rs.parametrization_.prediction_map(rs.X_)
    c = np.where(s == 1, 1 / (s == 1).sum(), -1 / (s == 0).sum())
    eps = rs.epsilon_abs_
    lr = min_functionals(rs, P, p0, eps, 1e-10, "test")[0] - 0.5  # widened certified ranges: still certified
    ur = -min_functionals(rs, -P, -p0, eps, 1e-10, "test")[0] + 0.5
    truth = (c @ (P @ grid.T + p0[:, None] > 0)).max()
    starts = rs.theta_min_[None, :]
    b, members, info = step_bnb(rs, P, p0, c, lr, ur, 0.0, eps, "test", starts, 30.0, 0.01)
    assert truth <= b + ROUND and b - info["attained"] <= 0.01
    assert all(_in_set(rs, m) for m in members)
    assert float(c @ (P @ members[-1] + p0 > 0)) == info["attained"]
    b0, _, info0 = step_bnb(rs, P, p0, c, lr, ur, 0.0, eps, "test", starts, 0.0, 0.0)
    assert info0["nodes"] == 1 and truth <= b0 + ROUND and b0 >= b


def test_attained_values_are_those_of_the_returned_members():
    """Members from LP vertices sit on rows' threshold hyperplanes, where two evaluations of the same member can
    round to different sides; they are moved off them (toward θ_min, inside S), so ``evaluate`` of each returned
    member gives its attained value (the property holds however far the time-limited search gets)."""
    rng = np.random.default_rng(15)
    n, p = int(rng.choice([60, 150, 300])), int(rng.choice([1, 2, 3]))
    s = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame(
        rng.normal(size=(n, p)) + 0.6 * s[:, None] * rng.normal(size=p), columns=[f"x{i}" for i in range(p)]
    )
    y = (X.to_numpy() @ rng.normal(size=p) + 0.5 * s + rng.logistic(size=n) > 0.3).astype(float)
    rs = RashomonSet(HingeModelClass(norm_bound=0.3), 0.02).fit(X, y)
    for metric in ("positive_rate", "true_positive_rate", "false_positive_rate"):
        res = rs.disparity_range(s, metric, threshold=0.2, time_limit=1.0)
        for mod, att in ((res.lower_models[0], res.lower_attained[0]), (res.upper_models[0], res.upper_attained[0])):
            assert _in_set(rs, mod)
            assert res.evaluate(mod[None])[0, 0] == pytest.approx(att, abs=ROUND), metric


def test_trace_bounds_every_member_and_only_tightens(plane):
    """The search's trace (processor seconds, bound, attained), also passed to ``progress``: every bound in it lies
    above the brute-force grid's maximum, bounds never rise (a box's bound is capped by its parent's), and the
    attained values never fall."""
    rs, s, grid = plane
    P, p0 = rs.parametrization_.prediction_map(rs.X_)
    c = np.where(s == 1, 1 / (s == 1).sum(), -1 / (s == 0).sum())
    eps = rs.epsilon_abs_
    lr = min_functionals(rs, P, p0, eps, 1e-10, "test")[0] - 0.5
    ur = -min_functionals(rs, -P, -p0, eps, 1e-10, "test")[0] + 0.5
    truth = (c @ (P @ grid.T + p0[:, None] > 0)).max()
    seen: list = []
    b, _, info = step_bnb(rs, P, p0, c, lr, ur, 0.0, eps, "test", rs.theta_min_[None], 3.0, 0.0, progress=seen.append)
    tr = np.array(info["trace"])
    assert seen and [tuple(x) for x in seen] == info["trace"][: len(seen)]
    assert np.all(tr[:, 1] >= truth - ROUND) and tr[-1, 1] == b
    assert np.all(np.diff(tr[:, 1]) <= 0) and np.all(np.diff(tr[:, 2]) >= 0) and np.all(np.diff(tr[:, 0]) >= 0)
    assert np.all(tr[:, 2] <= tr[:, 1] + ROUND)
