"""Row-margin ranges of a hinge set from linear programmes (rashomon/sets/margin/_lp_ranges.py).

References: the exact range of every margin (cvxpy + Clarabel, one programme per row and direction, over the set with
the ball as a second-order cone) and 1,000 members sampled by hit-and-run. Stated tolerances: the certified ranges
contain every sampled margin (up to 1e-9 relative), never lie inside the exact range by more than Clarabel's accuracy
(1e-6 relative) and are within 1e-5 of it (relative to the range's width) at the root.
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

from rashomon import HingeModelClass, RashomonSet
from rashomon.sets.margin._bounds import ScoreRanges
from rashomon.sets.margin._lp_ranges import HingeLPRanges, hinge_lp_ranges
from rashomon.sets.margin._mcr import _bound_loss
from rashomon.sets.margin._sample import margins, sample_margin_members


@pytest.fixture(scope="module")
def hinge_set():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    y = (X @ [1.5, -1.0, 0.5] + rng.logistic(size=80) > 0).astype(int)
    rs = RashomonSet(HingeModelClass(norm_bound=6.0), 0.2).fit(X, y)
    ms = rs._margin
    eps = rs.epsilon_abs_
    lo, hi = ms.intercept_range(eps)
    bl = _bound_loss(ms.loss)
    R = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, eps, ms.theta_min)
    return rs, ms, eps, lo, hi, R


def _exact(ms, eps, extra=lambda th: ()):
    C = ms.y[:, None] * ms.D
    n, d = C.shape
    th, c = cp.Variable(d), cp.Parameter(d)
    cons = [cp.sum(cp.pos(1 - C @ th)) / n <= eps, cp.quad_form(th, cp.psd_wrap(ms.B)) <= ms.r, *extra(th)]
    prob = cp.Problem(cp.Minimize(c @ th), cons)
    out = np.empty((2, n))
    for s, sign in enumerate((1.0, -1.0)):
        for i in range(n):
            c.value = sign * C[i]
            prob.solve(solver="CLARABEL")
            out[s, i] = sign * prob.value
    return out[0], out[1]


def test_root_ranges_exact_and_valid(hinge_set):
    rs, ms, eps, lo, hi, R = hinge_set
    lp = HingeLPRanges(ms, eps, lo, hi, R.Pball)
    ex_lo, ex_hi = _exact(ms, eps)
    width = ex_hi - ex_lo
    assert np.all(lp.lo_ <= ex_lo + 1e-6 * (1 + np.abs(ex_lo)))  # certified: never inside the exact range
    assert np.all(lp.hi_ >= ex_hi - 1e-6 * (1 + np.abs(ex_hi)))
    assert np.max((ex_lo - lp.lo_) / width) < 1e-5 and np.max((lp.hi_ - ex_hi) / width) < 1e-5
    # far tighter than the ellipsoid's ranges the slab bound had before
    assert np.median(lp.hi_ - lp.lo_) < 0.5 * np.median(R.hi_o - R.lo_o)
    M = margins(ms, sample_margin_members(rs, 1000, random_state=0))
    tol = 1e-9 * (1 + np.abs(M))
    assert np.all(M >= lp.lo_[None, :] - tol) and np.all(M <= lp.hi_[None, :] + tol)


def test_cell_ranges_valid_and_inside_root(hinge_set):
    rs, ms, eps, lo, hi, R = hinge_set
    lp = HingeLPRanges(ms, eps, lo, hi, R.Pball)
    k = 1 + ms.o  # the second feature's coefficient
    thetas = sample_margin_members(rs, 3000, random_state=1)
    b = thetas[:, k]
    a0, b0 = np.quantile(b, [0.55, 0.9])
    mid = float(np.median(thetas[:, 0]))
    ilo, ihi = np.array([mid]), hi
    cl, ch, _ = lp.cell(a0, b0, k, ilo, ihi)
    assert np.all(cl >= lp.lo_) and np.all(ch <= lp.hi_)
    inside = (b >= a0) & (b <= b0) & (thetas[:, 0] >= mid)
    assert inside.sum() > 100
    M = margins(ms, thetas[inside])
    tol = 1e-9 * (1 + np.abs(M))
    assert np.all(M >= cl[None, :] - tol) and np.all(M <= ch[None, :] + tol)
    # and within the exact ranges of the cell (certified: never inside them)
    ex_lo, ex_hi = _exact(ms, eps, lambda th: [th[k] >= a0, th[k] <= b0, th[0] >= mid, th[0] <= ihi[0]])
    assert np.all(cl <= ex_lo + 1e-6 * (1 + np.abs(ex_lo))) and np.all(ch >= ex_hi - 1e-6 * (1 + np.abs(ex_hi)))
    assert np.median(ch - cl) < np.median(lp.hi_ - lp.lo_)


def test_budget_and_determinism(hinge_set, capfd):
    rs, ms, eps, lo, hi, R = hinge_set
    none = HingeLPRanges(ms, eps, lo, hi, R.Pball, work=0.0)  # the first programme only
    assert np.sum(np.isfinite(none.lo_)) + np.sum(np.isfinite(none.hi_)) <= 2
    a = HingeLPRanges(ms, eps, lo, hi, R.Pball)
    b = HingeLPRanges(ms, eps, lo, hi, R.Pball)
    np.testing.assert_array_equal(a.lo_, b.lo_)
    np.testing.assert_array_equal(a.hi_, b.hi_)
    assert capfd.readouterr().out == ""  # HiGHS' banner does not reach the console
    assert hinge_lp_ranges(ms, eps, lo, hi, R.Pball) is hinge_lp_ranges(ms, eps, lo, hi, R.Pball)  # kept on ms


@pytest.mark.usefixtures("small_budget")
def test_mcr_upper_valid_with_lp_ranges(hinge_set):
    """The hinge MCR+ bound (now on LP ranges) still holds every sampled member and the reference search's best."""
    rs, ms, eps, lo, hi, R = hinge_set
    thetas = sample_margin_members(rs, 1000, random_state=3)
    for f in range(3):
        res = rs.model_class_reliance(f)
        from rashomon.sets.margin._closed_results import _member
        from rashomon.sets.margin._terms import MarginTerms

        T = MarginTerms(ms.D, ms.y, np.array([f + ms.o]))
        mrs = np.array([_member(ms, T, th, "ratio").mr for th in thetas[:200]])
        assert np.all(mrs <= res.upper * (1 + 1e-9)) and np.all(mrs >= res.lower * (1 - 1e-9))
        assert math.isfinite(res.upper) and res.upper >= res.upper_model.mr


def test_short_max_time_skips_the_programmes():
    """Under a ``max_time`` below 5 s the programmes are not started (only ranges already computed are used), and
    the interval still holds every sampled member."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 2))
    y = (X @ [1.0, -1.0] + rng.logistic(size=60) > 0).astype(int)
    rs = RashomonSet(HingeModelClass(norm_bound=5.0), 0.2).fit(X, y)
    res = rs.model_class_reliance(0, max_time=2.0)
    assert not rs._margin.__dict__.get("_lp_ranges")
    thetas = sample_margin_members(rs, 300, random_state=0)
    from rashomon.sets.margin._closed_results import _member
    from rashomon.sets.margin._terms import MarginTerms

    T = MarginTerms(rs._margin.D, rs._margin.y, np.array([rs._margin.o]))
    mrs = np.array([_member(rs._margin, T, th, "ratio").mr for th in thetas])
    assert np.all(mrs <= res.upper * (1 + 1e-9)) and np.all(mrs >= res.lower * (1 - 1e-9))
