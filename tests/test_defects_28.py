"""Regression tests for the four classifier defects of issue 28."""

import math

import numpy as np
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet
from rashomon.utils.validation import RashomonInputError


def _pima():
    from rashomon.datasets import load_pima_diabetes

    df = load_pima_diabetes()
    return df.drop(columns="Outcome"), df["Outcome"]


def test_hinge_at_epsilon_zero_collapses_to_the_minimiser():
    X, y = _pima()
    rs = RashomonSet(HingeModelClass(), 0.0).fit(X, y)
    res = rs.model_class_reliance("Glucose")  # was [1.5886, 2.43] (34.6 % gap)
    m = res.lower_model
    assert np.allclose(m.theta, rs.theta_min_) and res.upper_model is m
    assert res.lower <= m.mr <= res.upper
    assert res.upper - res.lower <= 1e-3 * m.mr  # the set is θ_min (and a sliver of the solver's tolerance)
    assert res.certified and "minimiser set" in res.notes


def _separable(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    X[:, 0] += np.where(y == 1, 1.0, -1.0)
    return X, y


@pytest.mark.usefixtures("small_budget")
def test_separable_hinge_ratio_is_a_clear_error_and_difference_works():
    X, y = _separable()
    rs = RashomonSet(HingeModelClass(norm_bound=100.0), 0.1).fit(X, y)
    assert rs.e_min_ == 0.0 and rs.epsilon_abs_ == 0.0
    with pytest.raises(
        RashomonInputError,
        match="'kind' parameter of RashomonSet.model_class_reliance must be 'difference' when epsilon_abs = 0",
    ):
        rs.model_class_reliance(0)  # was a raw ZeroDivisionError in step_bound
    res = rs.model_class_reliance(0, kind="difference")
    assert math.isfinite(res.lower) and res.lower <= res.lower_model.mr <= res.upper


@pytest.mark.usefixtures("small_budget")
def test_difference_first_step_has_a_finite_tolerance(monkeypatch):
    from rashomon.sets.margin._mcr import MarginSet

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] + rng.normal(size=120) > 0).astype(int)
    rs = RashomonSet(HingeModelClass(), 0.1).fit(X, y)
    seen = []
    orig = MarginSet.solve

    def spy(self, *a, **k):
        seen.append(k.get("atol"))
        return orig(self, *a, **k)

    monkeypatch.setattr(MarginSet, "solve", spy)
    res = rs.model_class_reliance(2, kind="difference")  # the γ = 0 step had atol = inf: lower -0.228 vs 0.259
    given = [a for a in seen if a is not None]  # the γ-steps pass one; the local searches use the default
    assert given and all(math.isfinite(a) and a > 0 for a in given)
    assert res.lower <= res.lower_model.mr <= res.upper
    if "e_switch minimiser lies in the set" in res.notes:  # the note is true: the γ = 0 minimiser is a member
        s0 = next(s for s in res.steps if s.gamma == 0.0)
        assert s0.e_orig <= res.epsilon_abs


def test_classifier_envelope_never_below_e_min_and_drawn_only_where_certified():
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 3))
    y = (X[:, 0] + rng.normal(size=150) > 0).astype(int)
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    res = rs.model_class_reliance(2)
    m = np.linspace(res.lower - 5, res.upper + 50, 400)
    env = res.envelope(m)
    assert np.all(env >= res.e_min) and np.all(env <= res.epsilon_abs)
    disp = res.plot()
    ys = np.asarray(disp.envelope_line_.get_ydata(), dtype=float)
    ys = ys[np.isfinite(ys)]
    assert ys.size and ys.min() >= res.e_min and ys.max() < res.epsilon_abs
    import matplotlib.pyplot as plt

    plt.close(disp.figure_)
