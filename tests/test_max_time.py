"""``max_time`` caps the whole classifier MCR call: past the deadline the lower end's search below γ = 0, its γ
search and the upper end's ascent are not started (only the first step and the deadline-aware searches run), the
notes say what was cut, and the bounds stay valid (they contain what a full run attains)."""

import numpy as np
import pytest

import rashomon as rsh
from rashomon.sets.margin import _ascent, _descent

RNG = np.random.default_rng(7)
X = RNG.normal(size=(60, 2))
Y = (X[:, 0] - 0.5 * X[:, 1] + RNG.normal(size=60) > 0).astype(int)


@pytest.fixture(scope="module", params=["logistic", "hinge"])
def rs(request):
    mc = rsh.LogisticModelClass() if request.param == "logistic" else rsh.HingeModelClass()
    return rsh.RashomonSet(mc, 0.1).fit(X, Y)


def _refuse(*a, **k):
    raise AssertionError("a search started after max_time had passed")


def test_an_expired_max_time_starts_no_further_search(rs, monkeypatch, small_budget):
    full = rs.model_class_reliance(0)
    monkeypatch.setattr(_ascent, "ascend_upper", _refuse)
    monkeypatch.setattr(_descent, "descend_lower", _refuse)
    cut = rs.model_class_reliance(0, max_time=1e-9)
    assert "the time limit (max_time) ran out before the ascent of the upper end, which was skipped" in cut.notes
    # valid: the cut bounds contain every member the full run attained (and its own members)
    tol = 1e-9 * max(1.0, abs(full.upper))
    assert cut.lower <= full.lower_model.mr + tol and cut.upper >= full.upper_model.mr - tol
    assert cut.lower <= cut.lower_model.mr + tol and cut.upper_model.mr <= cut.upper + tol
    assert "was skipped" not in full.notes
