"""The lower slab search's cheaper steps (rashomon/sets/margin/_lower_bnb.py, _lower_end.py): a slab's τ candidates
stop at the first bound that reaches the search's target, and the slab minimisers are polished only when the bound
stopped short of it. Checked against the MR of 1,000 members sampled from a 3-parameter set (from the definition,
every pair of rows) and against the search that tries every τ."""

import warnings

import numpy as np
import pytest

from rashomon import LogisticModelClass, RashomonSet
from rashomon.sets.margin import _lower_bnb
from rashomon.sets.margin._sample import sample_margin_members

from ._brute import three_param_data
from .test_margin_lower import TOL, _brute_mr, _slab_bound


@pytest.mark.parametrize("kind", ["ratio", "difference"])
def test_early_tau_stop_valid_and_within_target(kind, monkeypatch):
    X, y = three_param_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.15).fit(X, y)
        thetas = sample_margin_members(rs, 1000, random_state=2)
    ms, eps = rs._margin, rs.epsilon_abs_
    k = 1 + ms.o
    res = rs.model_class_reliance(1, kind=kind)
    assert "γ < 0" in res.notes
    th, mr = res.lower_model.theta, res.lower_model.mr
    b_early, _ = _slab_bound(rs, k, kind, th, mr, 24)
    monkeypatch.setattr(_lower_bnb, "_EARLY", False)
    b_all, _ = _slab_bound(rs, k, kind, th, mr, 24)
    vals = np.array([_brute_mr(ms.D, ms.y, k, t, kind, "logistic")[0] for t in thetas])
    scale = max(1.0, abs(res.lower))
    # both are certified: no sampled member below either bound, nor below the reported lower end
    assert np.all(vals >= b_early - TOL * scale) and np.all(vals >= b_all - TOL * scale)
    assert np.all(vals >= res.lower - TOL * scale)
    # the early stop loses only what the target allows: where every τ reaches the target, so does the first one
    target = mr - _lower_bnb._TARGET * abs(mr)
    assert b_early >= min(b_all, target) - TOL * scale
    assert res.lower_gap <= 0.02 * (abs(mr) if kind == "ratio" else eps)


def test_cell_stops_at_enough():
    """A slab's candidates after the first bound at or above ``enough`` are not evaluated; below it, all are."""
    X, y = three_param_data()
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.15).fit(X, y)
    ms, eps = rs._margin, rs.epsilon_abs_
    calls = []

    class Counting(_lower_bnb._Slabs):
        def value(self, sd, x0, tau):
            calls.append(tau)
            return super().value(sd, x0, tau)

    from rashomon.sets.margin._bounds import ScoreRanges
    from rashomon.sets.margin._mcr import _bound_loss
    from rashomon.sets.margin._terms import MarginTerms

    lo, hi = ms.intercept_range(eps)
    bl = _bound_loss(ms.loss)
    R = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, eps, ms.theta_min)
    T = MarginTerms(ms.D, ms.y, np.array([1 + ms.o]))
    res = rs.model_class_reliance(1)
    sl = Counting(ms, T, R, ms.loss, eps, ms.e_min, lo, hi, res.lower_model.mr)
    th = res.lower_model.theta
    b0 = float(th[1 + ms.o])
    taus = (0.2 * sl.t, 0.5 * sl.t)
    full = sl.cell(b0 - 0.05, b0 + 0.05, th, "ratio", taus)
    assert len(calls) == 3
    calls.clear()
    first = sl.cell(b0 - 0.05, b0 + 0.05, th, "ratio", taus, enough=-np.inf)
    assert len(calls) == 1 and first[0] <= full[0]
    calls.clear()
    again = sl.cell(b0 - 0.05, b0 + 0.05, th, "ratio", taus, enough=np.inf)
    assert len(calls) == 3 and again[0] == full[0]


def test_hinge_slab_budget_counts_its_own_grid():
    """The logistic's grids and tables shrank (48 points, tables of 512); the hinge's slab bound keeps its grid of
    ``HINGE_GRID`` and the budget it had, so the same hinge sets get (or skip) the bound."""
    import math

    def old_cost(n, V):  # the cost before: grid 64 shrinking from 800 rows, tables of up to 1,024 points
        grid = int(min(64, max(32, round(64 * math.sqrt(800.0 / n)))))
        return n * grid * (1.0 + 12.0 * _lower_bnb._MU_STEPS) + V * min(1024, max(64, (1 << 23) // V))

    assert _lower_bnb.HINGE_GRID == 64
    for n in (60, 300, 560, 768, 1600, 3300, 10**5):
        for V in (2, 40, 517, 10**4, 10**5):
            assert _lower_bnb._slab_cost(n, V, hinge=True) == old_cost(n, V)
            assert _lower_bnb._slab_cost(n, V) <= old_cost(n, V)  # the logistic's slabs cost no more
