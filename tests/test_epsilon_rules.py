"""Data-driven ε: the profile rule reproduces OLS t-intervals; the CV rules from their definitions."""
import math

import numpy as np
import pytest

from rashomon import KernelModelClass, LinearModelClass, RashomonInputError, RashomonSet, select_epsilon


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_profile_rule_coefficient_ranges_are_the_ols_t_intervals(alpha):
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(0)
    n = 120
    X = rng.normal(size=(n, 3)) * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]
    y = 2.0 + X @ [1.0, -0.3, 4.0] + rng.normal(size=n)
    mc = LinearModelClass(norm_bound=1e8)  # an inactive ball: the unbounded linear class
    choice = select_epsilon(mc, X, y, rule="profile", alpha=alpha)
    rs = choice.rashomon_set(mc).fit(X, y)
    cr = rs.coef_range()
    ols = sm.OLS(y, sm.add_constant(X)).fit()
    ci = ols.conf_int(alpha)
    np.testing.assert_allclose(cr.lower, ci[:, 0], rtol=1e-6)
    np.testing.assert_allclose(cr.upper, ci[:, 1], rtol=1e-6)
    np.testing.assert_allclose(rs.reference_.coef_, ols.params[1:], rtol=1e-8)


def test_cv_rules_from_their_definitions():
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 2))
    y = X @ [1.0, 0.5] + rng.normal(size=90)
    mc = LinearModelClass()
    one = select_epsilon(mc, X, y, rule="cv_1se", cv=5, random_state=3)
    hold = select_epsilon(mc, X, y, rule="holdout_cv", cv=5, multiplier=0.1, random_state=3)
    losses = []
    from rashomon.utils.validation import seed_from

    for tr, te in KFold(5, shuffle=True, random_state=seed_from(3, "t")).split(X):
        m = mc.fit_reference(X[tr], y[tr])
        losses.append(np.mean((y[te] - m.predict(X[te])) ** 2))
    np.testing.assert_allclose(one.fold_losses, losses, rtol=1e-12)
    assert one.epsilon == pytest.approx(np.std(losses, ddof=1) / math.sqrt(5), rel=1e-12)
    assert hold.epsilon == pytest.approx(0.1 * np.mean(losses), rel=1e-12)
    assert one.epsilon_kind == hold.epsilon_kind == "additive"
    rs = one.rashomon_set(mc).fit(X, y)
    assert rs.epsilon_abs_ == pytest.approx(rs.e_ref_ + one.epsilon)
    assert one.to_frame().shape == (1, 6)
    lr = select_epsilon(KernelModelClass(), X, y, rule="likelihood_ratio", alpha=0.05)
    assert lr.epsilon == pytest.approx(math.expm1(3.841458820694124 / 90))


@pytest.mark.parametrize("kwargs, match", [
    ({"rule": "bic"}, "'rule' parameter of select_epsilon"),
    ({"rule": "profile", "alpha": 1.0}, "'alpha' parameter of select_epsilon"),
    ({"rule": "cv_1se", "cv": 1}, "'cv' parameter of select_epsilon"),
    ({"rule": "holdout_cv", "multiplier": -1.0}, "'multiplier' parameter of select_epsilon"),
])
def test_bad_rule_arguments(kwargs, match):
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(RashomonInputError, match=match):
        select_epsilon(LinearModelClass(), X, X[:, 0], **kwargs)
    with pytest.raises(RashomonInputError, match="needs a LinearModelClass"):
        select_epsilon(KernelModelClass(), X, X[:, 0], rule="profile")
