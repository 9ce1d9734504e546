"""The least disparate member on the probability scale, and the less discriminatory alternative (``target``).

Checked against an independent search: SLSQP from many starts on ``gap²`` under the set's constraints, and the
intermediate value theorem on segments between sampled members with gaps of both signs (bisection to 1e-12).
"""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from rashomon import LogisticModelClass, RashomonSet
from rashomon.audit._report_fairness import alternative_text
from rashomon.utils.validation import RashomonInputError

PARITY_TOL = 1e-6  # the least member's |gap| where parity is attainable


def _data(seed, n=300, shift=0.4):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame({"a": rng.normal(size=n) + 0.5 * s, "b": rng.normal(size=n), "s": s})
    y = (X["a"] + 0.5 * X["b"] + shift * s + rng.logistic(size=n) > 0.3).astype(float)
    return X, y, s


def _gap(rs, s, th):
    p = rs.parametrization_
    P, p0 = p.prediction_map(rs.X_)
    q = expit(P @ th + p0)
    return q[s == 1].mean() - q[s == 0].mean()


def _loss(rs, th):
    return rs._margin.orig.e_orig(th, rs._margin.loss)


def _in_set(rs, th):
    par = rs.parametrization_
    return _loss(rs, th) <= rs.epsilon_abs_ * (1 + 1e-12) and th @ par.B @ th <= par.r * (1 + 1e-12)


@pytest.fixture(scope="module")
def fair_set():
    X, y, s = _data(1, shift=-0.3)
    return RashomonSet(LogisticModelClass(), 0.05).fit(X, y), s


def _slsqp_least(rs, s, starts):
    par = rs.parametrization_
    cons = [
        {"type": "ineq", "fun": lambda t: rs.epsilon_abs_ - _loss(rs, t)},
        {"type": "ineq", "fun": lambda t: par.r - t @ par.B @ t},
    ]
    best = np.inf
    for t0 in starts:
        r = minimize(lambda t: 1e4 * _gap(rs, s, t) ** 2, t0, constraints=cons, method="SLSQP", options={"ftol": 1e-16})
        if _in_set(rs, r.x):
            best = min(best, abs(_gap(rs, s, r.x)))
    return best


def test_least_member_at_parity_against_independent_searches(fair_set):
    rs, s = fair_set
    ld = rs.least_disparate(s, "mean_prediction", frontier=False)
    assert abs(ld.disparity) <= PARITY_TOL and ld.certified_lower == 0 and ld.exact
    assert _in_set(rs, ld.theta) and ld.disparity == pytest.approx(_gap(rs, s, ld.theta), abs=1e-15)
    # independent 1: the intermediate value theorem on a segment between sampled members of both signs
    th = rs.sample(400, random_state=3).thetas
    g = np.array([_gap(rs, s, t) for t in th])
    a, b = th[np.argmin(g)], th[np.argmax(g)]
    assert _gap(rs, s, a) < 0 < _gap(rs, s, b)
    lo, hi = 0.0, 1.0
    for _ in range(80):
        m = 0.5 * (lo + hi)
        lo, hi = (m, hi) if _gap(rs, s, a + m * (b - a)) < 0 else (lo, m)
    ivt = abs(_gap(rs, s, a + lo * (b - a)))
    assert ivt <= 1e-12
    # independent 2: SLSQP from many starts finds nothing closer to parity than the member (to 1e-6)
    best = _slsqp_least(rs, s, th[:12])
    assert abs(ld.disparity) <= best + PARITY_TOL


def test_least_member_when_parity_is_out_of_reach():
    X, y, s = _data(2, 400, shift=2.5)
    rs = RashomonSet(LogisticModelClass(), 0.01).fit(X, y)
    ld = rs.least_disparate(s, "mean_prediction", frontier=False)
    r = ld.range
    assert r.lower[0] > 0 and ld.certified_lower > 0
    assert ld.certified_lower <= abs(ld.disparity)
    th = rs.sample(300, random_state=4).thetas
    starts = th[np.argsort([_gap(rs, s, t) for t in th])[:8]]
    best = _slsqp_least(rs, s, starts)
    # no member below the certificate; the returned member within the bound-to-member gap of the best found
    assert best >= ld.certified_lower - 1e-12
    assert abs(ld.disparity) <= best + (abs(ld.disparity) - ld.certified_lower) + PARITY_TOL


def test_target_member_and_certified_none():
    X, y, s = _data(2, 400, shift=2.5)
    rs = RashomonSet(LogisticModelClass(), 0.01).fit(X, y)
    ld = rs.least_disparate(s, "mean_prediction", frontier=False, target=1.0)
    assert ld.target_outcome == "member" and abs(ld.disparity) <= 1.0 and ld.loss <= rs.epsilon_abs_
    assert ld.alternative.startswith("A less discriminatory alternative exists")
    delta = 0.5 * ld.certified_lower
    none = rs.least_disparate(s, "mean_prediction", frontier=False, target=delta)
    assert none.target_outcome == "none" and none.certified_lower > delta
    assert none.alternative.startswith("Certified: no model")
    # the certificate holds for sampled members
    g = np.array([abs(_gap(rs, s, t)) for t in rs.sample(500, random_state=5).thetas])
    assert g.min() > delta
    d = none.to_dict()
    assert d["target_outcome"] == "none" and d["target"] == delta
    if none.certified_lower < abs(none.disparity):  # a δ between the bound and the member: undetermined
        mid = 0.5 * (none.certified_lower + abs(none.disparity))
        und = rs.least_disparate(s, "mean_prediction", frontier=False, target=mid)
        assert und.target_outcome == "undetermined" and und.alternative.startswith("Undetermined")


def test_target_must_be_nonnegative(fair_set):
    rs, s = fair_set
    with pytest.raises(RashomonInputError, match="'target' parameter of RashomonSet.least_disparate"):
        rs.least_disparate(s, frontier=False, target=-0.1)


@pytest.mark.parametrize(
    "ld, start",
    [
        ({"certified_lower": 0.0, "disparity": 0.01, "reference_disparity": 0.2}, "yes"),
        ({"certified_lower": 0.3, "disparity": 0.31, "reference_disparity": 0.3}, "no, certified"),
        ({"certified_lower": 0.1, "disparity": 0.3, "reference_disparity": 0.2}, "undetermined"),
        ({"certified_lower": 0.1, "disparity": 0.3, "reference_disparity": 0.9, "target": 0.05}, "no, certified"),
    ],
)
def test_report_answers_the_alternative_question(ld, start):
    if "target" in ld:
        ld["target_outcome"] = "none"
    text = alternative_text(ld)
    assert "less discriminatory alternative" in text and "fair-lending and employment law" in text
    assert text.split(": ", 1)[1].startswith(start)


def test_report_section_carries_the_alternative_sentence(fair_set):
    from types import SimpleNamespace

    from rashomon.audit._report_fairness import fairness_section

    rs, s = fair_set
    ld = rs.least_disparate(s, "mean_prediction", frontier=False).to_dict()
    ld.pop("range")
    meta = {"fairness": {"sensitive": "s", "n_held_out": len(s), "least_disparate": ld, "group_rows": []}}
    html_text = fairness_section(SimpleNamespace(meta=meta, features=["a", "b", "s"]))
    assert "A less discriminatory alternative (the question fair-lending and employment law ask" in html_text
    assert ": yes. A good model (loss within ε_abs) is closer to parity than the reference model" in html_text
