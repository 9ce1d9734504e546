"""Anytime stops and the cells switch of the classifier MCR of one feature (rashomon/sets/margin/_lower_end.py,
_lower_bnb.py, _binned.py): the lower end's slab search stops at the smaller of its target and gap_tol/2, and a
smaller gap_tol gives a bound at least as tight, both below the MR of 1,000 sampled members; the switch to cells of
the feature's values fires exactly where the cells are fewer than the values."""

import warnings

import numpy as np
import pytest

from rashomon import LogisticModelClass, RashomonSet
from rashomon.sets.margin import _binned
from rashomon.sets.margin._binned import CELL_PAIRS, PAIRS, binned_terms
from rashomon.sets.margin._lower_bnb import _TARGET
from rashomon.sets.margin._sample import sample_margin_members
from rashomon.sets.margin._terms import MarginTerms

from ._brute import three_param_data as _three_param
from .test_margin_lower import _brute_mr_many

TOL = 1e-9  # rounding of the brute-force sums (relative)


@pytest.mark.usefixtures("small_upper_budget")
def test_lower_target_follows_gap_tol():
    """gap_tol=0.002 asks the lower slab search for 0.1%: its bound is at least the default's (0.5%), and both lie
    below the MR of 1,000 members sampled from the set (brute force over the n(n-1) pairs)."""
    X, y = _three_param()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.15).fit(X, y)
        default = rs.model_class_reliance(1)
        tight = rs.model_class_reliance(1, gap_tol=0.002)
        thetas = sample_margin_members(rs, 1000, random_state=3)
    assert "γ < 0" in default.notes and _TARGET == 0.005
    ms = rs._margin
    mrs = _brute_mr_many(ms.D, ms.y, 1 + ms.o, np.asarray(thetas), "ratio", "logistic")
    for res in (default, tight):
        assert np.all(mrs >= res.lower - TOL * max(1.0, abs(res.lower)))
        assert res.lower <= res.lower_model.mr
    assert tight.lower >= default.lower - TOL
    # the default stops within its target of its member (or at the budget: then the gap says so, above 1%)
    assert default.lower_gap <= max(_TARGET, 0.01) * abs(default.lower_model.mr) + TOL


def test_cells_switch_where_cells_are_fewer_than_values():
    """The switch compares (values x row classes) with PAIRS = CELL_PAIRS: at or below it the cells would be no fewer
    than the values (binned_terms gives None even when forced), above it they are fewer."""
    assert PAIRS == CELL_PAIRS
    rng = np.random.default_rng(0)
    for n, on in ((1400, False), (1500, True)):  # n² against 2^21 = 2,097,152 (1,448²)
        D = np.column_stack([np.ones(n), rng.normal(size=n), rng.normal(size=n)])
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        T = MarginTerms(D, y, np.array([1]))
        assert len(T.G) * len(T.ys) == n * n
        cells = binned_terms(T)
        assert (cells is not None) is on
        if on:
            assert len(cells[0].G) < len(T.G)


def test_cells_forced_below_the_switch_are_the_values(monkeypatch):
    """Below CELL_PAIRS forcing the switch (PAIRS = 0) changes nothing: as many cells as values, the exact terms."""
    monkeypatch.setattr(_binned, "PAIRS", 0)
    rng = np.random.default_rng(1)
    n = 1000
    D = np.column_stack([np.ones(n), rng.normal(size=n)])
    T = MarginTerms(D, np.where(rng.random(n) < 0.5, 1.0, -1.0), np.array([1]))
    assert binned_terms(T) is None
