"""Conditional MR (exact within-stratum U-statistic, permutation, Gaussian) and conditional MCR."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression

from rashomon import (
    KernelModelClass,
    LinearModelClass,
    conditional_model_reliance,
    make_strata,
    model_class_reliance,
    model_reliance,
)


def brute_conditional(predict, L, X, y, group, strata):
    """Plain loops over ordered pairs i != j inside each stratum of >= 2 rows, weighted by stratum size."""
    total, weight = 0.0, 0
    for s in np.unique(strata):
        idx = np.where(strata == s)[0]
        if len(idx) < 2:
            continue
        acc, cnt = 0.0, 0
        for i in idx:
            for j in idx:
                if i != j:
                    r = X[j].copy()
                    r[group] = X[i, group]
                    acc += L(y[j], predict(r[None])[0])
                    cnt += 1
        total += len(idx) * acc / cnt
        weight += len(idx)
    return total / weight


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, 0.5, -0.4] + rng.normal(size=n)
    strata = rng.integers(0, 5, size=n)
    strata[0] = 9  # a singleton stratum: left out of the U-statistic
    return X, y, strata


@pytest.mark.parametrize("group", [[0], [0, 2]])
def test_exact_equals_brute_force_regression(group):
    X, y, strata = _data()
    m = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    ref = brute_conditional(m.predict, lambda a, b: (a - b) ** 2, X, y, group, strata)
    res = conditional_model_reliance(m, X, y, group, strata=strata)
    assert res.e_switch == pytest.approx(ref, rel=1e-9)
    assert res.method == "conditional-exact"
    lin = LinearRegression().fit(X, y)
    fast = conditional_model_reliance(lin, X, y, group, strata=strata)
    slow = conditional_model_reliance(lin, X, y, group, strata=strata, closed_form=False)
    assert fast.closed_form and fast.e_switch == pytest.approx(slow.e_switch, rel=1e-9)
    assert slow.e_switch == pytest.approx(
        brute_conditional(lin.predict, lambda a, b: (a - b) ** 2, X, y, group, strata), rel=1e-9
    )


def test_exact_equals_brute_force_classifier():
    X, y, strata = _data()
    yc = (y > 0).astype(int)
    m = LogisticRegression().fit(X, yc)
    ref = brute_conditional(m.predict_proba, lambda a, pr: -np.log(pr[int(a)]), X, yc, [1], strata)
    assert conditional_model_reliance(m, X, yc, 1, strata=strata, loss="log_loss").e_switch == pytest.approx(
        ref, rel=1e-9
    )


def test_near_copy_conditional_is_one_marginal_large():
    rng = np.random.default_rng(1)
    n = 3000
    x2 = rng.normal(size=n)
    x1 = x2 + 0.02 * rng.normal(size=n)  # X1 duplicates X2
    X = np.column_stack([x1, x2])
    y = x2 + 0.3 * rng.normal(size=n)
    f = lambda Z: Z[:, 0]  # noqa: E731  a model that happens to use the copy
    marginal = model_reliance(f, X, y, 0)
    for method in ["exact", "permutation", "gaussian"]:
        # 200 quantile bins of x2 (15 rows each); the ratio tends to 1 as strata narrow
        cond = conditional_model_reliance(f, X, y, 0, method=method, n_bins=200, random_state=0)
        assert cond.ratio < 1.05, method
    assert marginal.ratio > 20


def test_independent_feature_conditional_equals_marginal():
    rng = np.random.default_rng(2)
    n = 2000
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, 1.0, 0.5] + 0.5 * rng.normal(size=n)
    m = LinearRegression().fit(X, y)
    marg = model_reliance(m, X, y, 0)
    for method in ["exact", "permutation", "gaussian"]:
        cond = conditional_model_reliance(m, X, y, 0, method=method, random_state=0, n_repeats=5)
        assert cond.ratio == pytest.approx(marg.ratio, rel=0.05), method


def test_permutation_stays_in_strata_and_is_seeded():
    X, y, strata = _data(n=200)
    m = LinearRegression().fit(X, y)
    a = conditional_model_reliance(m, X, y, 0, strata=strata, method="permutation", random_state=4, n_repeats=50)
    b = conditional_model_reliance(m, X, y, 0, strata=strata, method="permutation", random_state=4, n_repeats=50)
    np.testing.assert_array_equal(a.e_switch_repeats, b.e_switch_repeats)
    exact = conditional_model_reliance(m, X, y, 0, strata=strata)
    # a within-stratum permutation keeps i = j with probability 1/n_g; the U-statistic excludes it
    assert a.e_switch == pytest.approx(exact.e_switch, rel=0.1)


def test_automatic_strata_rules():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 3))
    s1 = make_strata(X[:, :2], (0,), n_bins=10)
    assert len(np.unique(s1)) == 10  # quantile bins of the single other column
    s2 = make_strata(X, (0,))
    assert 2 <= len(np.unique(s2)) <= 8  # leaves of a depth-3 tree
    assert np.all(make_strata(X[:, :1], (0,)) == 0)


def test_bad_strata():
    X, y, _ = _data()
    m = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="'strata'.*one label per row"):
        conditional_model_reliance(m, X, y, 0, strata=np.zeros(5))
    with pytest.raises(ValueError, match="'strata'.*two or more rows"):
        conditional_model_reliance(m, X, y, 0, strata=np.arange(len(y)))
    with pytest.raises(ValueError, match="'method'"):
        conditional_model_reliance(m, X, y, 0, method="knockoff")
    with pytest.raises(ValueError, match="conditional=True"):
        model_class_reliance(LinearModelClass(norm_bound=1.0), X, y, 0, strata=np.zeros(len(y)))


@pytest.mark.parametrize("cls", ["linear", "kernel"])
def test_conditional_forms_equal_conditional_estimator(cls):
    X, y, strata = _data(n=50)
    mc = (
        LinearModelClass(norm_bound=1.0)
        if cls == "linear"
        else KernelModelClass(gamma=0.3, norm_bound=1.0, dictionary=X[:10])
    )
    prob = mc.build(X, y, (0,), None, strata=strata)
    rng = np.random.default_rng(5)
    for _ in range(3):
        th = rng.normal(size=prob.B.shape[0]) * 0.3
        params = prob.to_model(th)
        f = params["predict"] if "predict" in params else (lambda Z, c=params["coef"], b=params["intercept"]: Z @ c + b)
        cond = conditional_model_reliance(f, X, y, 0, strata=strata)
        assert prob.e_switch(th) == pytest.approx(cond.e_switch, rel=1e-9)
        assert prob.e_orig(th) == pytest.approx(cond.e_orig, rel=1e-9)


def test_conditional_mcr_valid_for_sampled_models():
    rng = np.random.default_rng(6)
    n = 120
    X = rng.normal(size=(n, 3))
    X[:, 1] += 0.8 * X[:, 0]
    y = X @ [1.0, 0.5, 0.2] + rng.normal(size=n)
    strata = make_strata(X, (0,))
    mc = LinearModelClass(norm_bound=2.0)
    res = model_class_reliance(mc, X, y, 0, conditional=True, strata=strata, epsilon=0.2)
    marg = model_class_reliance(mc, X, y, 0, epsilon=0.2)
    assert res.lower_tight and res.upper_tight
    assert res.upper < marg.upper  # conditioning on the correlated x1 lowers the reachable reliance
    prob = mc.build(X, y, (0,), None, strata=strata)
    m, s = X.mean(0), X.std(0)
    checked = 0
    for centre in [res.lower_model.theta, res.upper_model.theta, res.reference_model.theta]:
        th = centre[None, :] + 0.15 * rng.normal(size=(600, 4))
        th = th[np.sum(th[:, 1:] ** 2, 1) <= 2.0]
        th = th[prob.e_orig.evaluate_many(th) <= res.epsilon_abs]
        for t in th[:40]:
            coef = t[1:] / s
            b = t[0] - coef @ m
            cmr = conditional_model_reliance(lambda Z, c=coef, b=b: Z @ c + b, X, y, 0, strata=strata)
            assert res.lower - 1e-9 <= cmr.ratio <= res.upper + 1e-9
            checked += 1
    assert checked >= 60
    for model, bound in ((res.lower_model, res.lower), (res.upper_model, res.upper)):
        cmr = conditional_model_reliance(lambda Z, c=model.coef, b=model.intercept: Z @ c + b, X, y, 0, strata=strata)
        assert cmr.ratio == pytest.approx(bound, rel=1e-6)


def test_compas_conditional_example_runs(capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import compas_conditional

    assert compas_conditional.main(["--subsample", "400", "--train-size", "120"]) == 0
    out = capsys.readouterr().out
    assert "race | admissible variables" in out and "race, marginal" in out
