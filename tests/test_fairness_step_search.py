"""Members of decision-rate disparities found by ascent on a smoothed count (``_step_search``).

Every member returned is inside the set (exact loss and ball checks) and its count is the one evaluated at it;
on a two-parameter set the search reaches the maximum of a fine grid of members (the brute-force reference: the
grid's maximum is attained, so the search can only meet or pass it).
"""

import numpy as np
import pandas as pd
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet
from rashomon.sets.fairness._step_search import smooth_ascent

ROUND = 1e-12  # rounding of sums of a few hundred row values


def _in_set(rs, th):
    ms, par = rs._margin, rs.parametrization_
    return ms.orig.e_orig(th, ms.loss) <= rs.epsilon_abs_ and th @ par.B @ th <= par.r


def _data(seed, n=300, p=3):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame(rng.normal(size=(n, p)) + 0.6 * s[:, None], columns=[f"x{i}" for i in range(p)])
    y = (X.to_numpy() @ rng.normal(size=p) + 0.4 * s + rng.logistic(size=n) > 0.2).astype(float)
    return X, y, s


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_members_inside_and_counted(cls):
    X, y, s = _data(4)
    rs = RashomonSet(cls(), 0.05).fit(X, y)
    P, p0 = rs.parametrization_.prediction_map(rs.X_)
    c = np.where(s == 1, 1 / (s == 1).sum(), -1 / (s == 0).sum())
    starts = rs.sample(20, random_state=0).thetas
    for sign in (1.0, -1.0):
        members = smooth_ascent(rs, P, p0, sign * c, 0.0, rs.epsilon_abs_, starts)
        assert members
        vals = [float(sign * c @ (P @ th + p0 > 0)) for th in members]
        assert all(_in_set(rs, th) for th in members)
        assert vals == sorted(vals)  # each member returned improves on the last
        best_start = max(float(sign * c @ (P @ th + p0 > 0)) for th in starts)
        assert vals[-1] >= best_start - ROUND


def test_reaches_the_grid_maximum_on_a_plane():
    rng = np.random.default_rng(0)
    n = 200
    s = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame({"a": rng.normal(size=n) + 0.7 * s})
    y = (2 * X["a"] + rng.logistic(size=n) > 0.5).astype(float)
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    par = rs.parametrization_
    u = np.linspace(-1.0, 1.0, 401)
    G = np.array(np.meshgrid(u, u)).reshape(2, -1).T + rs.theta_min_
    grid = np.array([t for t in G if _in_set(rs, t)])
    assert len(grid) > 5_000
    P, p0 = par.prediction_map(rs.X_)
    c = np.where(s == 1, 1 / (s == 1).sum(), -1 / (s == 0).sum())
    members = smooth_ascent(rs, P, p0, c, 0.0, rs.epsilon_abs_, rs.theta_min_[None])
    found = float(c @ (P @ members[-1] + p0 > 0))
    assert found >= ((grid @ P.T + p0 > 0) @ c).max() - ROUND


def test_disparity_range_attains_the_search_members():
    """Through ``disparity_range``: the attained ends are those of returned members, inside the set."""
    X, y, s = _data(7, n=240, p=2)
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    res = rs.disparity_range(s, "positive_rate")
    D = res.evaluate(rs.sample(500, random_state=1).thetas)[:, 0]
    assert np.all(D >= res.lower[0] - ROUND) and np.all(D <= res.upper[0] + ROUND)
    for mod, att in ((res.lower_models[0], res.lower_attained[0]), (res.upper_models[0], res.upper_attained[0])):
        assert _in_set(rs, mod)
        assert res.evaluate(mod[None])[0, 0] == pytest.approx(att, abs=ROUND)
