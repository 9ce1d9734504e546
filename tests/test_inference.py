"""Learner-PFI/PD with corrected intervals, model-PFI intervals, the corrected t-test, PIMP."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

from rashomon import (
    corrected_resampled_ttest,
    learner_importance,
    learner_pd,
    model_importance_ci,
    model_reliance,
    pimp,
)


def _data(n=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    return X, X[:, 0] - X[:, 1] + rng.normal(size=n)


@pytest.mark.parametrize("resampling", ["bootstrap", "subsampling"])
def test_learner_importance_interval_formula(resampling):
    X, y = _data()
    r = learner_importance(LinearRegression(), X, y, n_refits=10, resampling=resampling, random_state=1)
    plain = learner_importance(
        LinearRegression(), X, y, n_refits=10, resampling=resampling, random_state=1, correction=False
    )
    np.testing.assert_array_equal(r.importances, plain.importances)  # same refits
    m = 10
    s2 = r.importances.var(axis=1, ddof=1)
    t = stats.t.ppf(0.975, m - 1)
    if resampling == "subsampling":
        assert r.correction == pytest.approx(37 / 63)  # n_test / n_train = 37 / 63 for n = 100
    np.testing.assert_allclose(r.std_error, np.sqrt((1 / m + r.correction) * s2))
    np.testing.assert_allclose(r.ci_upper - r.importances_mean, t * r.std_error)
    np.testing.assert_allclose(plain.std_error, np.sqrt(s2 / m))
    assert np.all(r.ci_upper - r.ci_lower > plain.ci_upper - plain.ci_lower)
    assert r.to_frame().shape == (4, 4)


def test_refits_are_identical_across_n_jobs_and_dask():
    X, y = _data()
    learner = DecisionTreeRegressor(max_depth=3, random_state=0)
    a = learner_importance(learner, X, y, n_refits=6, random_state=3, n_jobs=1)
    b = learner_importance(learner, X, y, n_refits=6, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(a.importances, b.importances)
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None):
        with parallel_config(backend="dask"):
            c = learner_importance(learner, X, y, n_refits=6, random_state=3)
            d = pimp(learner, X, y, n_permutations=5, random_state=3)
    np.testing.assert_array_equal(a.importances, c.importances)
    e = pimp(learner, X, y, n_permutations=5, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(d.null, e.null)


def test_learner_pd_bands():
    X, y = _data()
    r = learner_pd(LinearRegression(), X, y, 0, n_refits=8, grid=[0.1, 0.5, 0.9], random_state=2)
    assert r.curves.shape == (8, 3)
    np.testing.assert_allclose(r.mean, r.curves.mean(0))
    se = np.sqrt((1 / 8 + r.correction) * r.curves.var(0, ddof=1))
    np.testing.assert_allclose(r.std_error, se)
    # a linear learner's PD is linear in the grid value
    assert r.mean[1] == pytest.approx(0.5 * (r.mean[0] + r.mean[2]), rel=1e-9)


def test_model_importance_ci_equals_model_reliance_mean():
    X, y = _data(n=200)
    m = LinearRegression().fit(X, y)
    r = model_importance_ci(m, X, y, n_repeats=7, random_state=5)
    for j in range(4):
        mr = model_reliance(m, X, y, j, method="permutation", n_repeats=7, random_state=5)
        assert r.importances_mean[j] == pytest.approx(mr.difference, rel=1e-10, abs=1e-12)
    n = len(y)
    np.testing.assert_allclose(r.std_error, r.importances.std(1, ddof=1) / np.sqrt(n))


def test_corrected_resampled_ttest():
    X, y = _data(n=150)
    same = corrected_resampled_ttest(LinearRegression(), LinearRegression(), X, y, n_refits=8, random_state=0)
    assert same.mean_difference == 0 and same.p_value == pytest.approx(1.0)
    res = corrected_resampled_ttest(
        DecisionTreeRegressor(max_depth=1, random_state=0), LinearRegression(), X, y, n_refits=10, random_state=0
    )
    d = res.differences
    t = d.mean() / np.sqrt((1 / 10 + res.correction) * d.var(ddof=1))
    assert res.t_statistic == pytest.approx(t)
    assert res.p_value == pytest.approx(2 * stats.t.sf(abs(t), 9))
    assert res.mean_difference > 0  # the stump is worse than the linear model on a linear DGP


def test_pimp_extrapolation_example():
    # x0, x1 highly correlated and unrelated to y; x2 drives y (seed slides' extrapolation example)
    rng = np.random.default_rng(4)
    n = 200
    x0 = rng.normal(size=n)
    X = np.column_stack([x0, x0 + 0.01 * rng.normal(size=n), rng.normal(size=n)])
    y = 2 * X[:, 2] + 0.3 * rng.normal(size=n)
    res = pimp(
        RandomForestRegressor(n_estimators=25, random_state=0), X, y, n_permutations=30, random_state=0, n_jobs=2
    )
    assert res.observed[0] > 0 and res.observed[1] > 0  # PFI is non-zero ...
    assert res.p_values_adjusted[0] > 0.05 and res.p_values_adjusted[1] > 0.05  # ... yet not significant
    assert res.p_values_adjusted[2] < 0.01
    for kind in ["lognormal", "gamma", "empirical"]:
        r2 = pimp(
            RandomForestRegressor(n_estimators=25, random_state=0),
            X,
            y,
            n_permutations=30,
            random_state=0,
            null=kind,
            correction="bonferroni",
            n_jobs=2,
        )
        np.testing.assert_array_equal(r2.null, res.null)
        if kind == "empirical":
            assert r2.p_values[2] == pytest.approx(1 / 31)  # beyond every null value: the floor 1/(S + 1)
        else:
            assert r2.p_values_adjusted[2] < 0.05
        assert r2.p_values_adjusted[0] > 0.05
        np.testing.assert_allclose(r2.p_values_adjusted, np.minimum(1, 3 * r2.p_values))


def _holm_by_definition(p):
    """Holm (1979) adjusted p-values written from the definition, loop by loop: for the hypothesis of
    rank r (ascending p), adjusted = min(1, max over ranks j <= r of (m - j + 1)·p_(j))."""
    m = len(p)
    ranked = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for r, i in enumerate(ranked, start=1):
        out[i] = min(1.0, max((m - j + 1) * p[ranked[j - 1]] for j in range(1, r + 1)))
    return out


def test_holm_adjustment_against_hand_computed_values():
    from rashomon.inference._pvalues import _adjust_p

    # By hand: sorted p = 0.005, 0.01, 0.03, 0.04 with multipliers 4, 3, 2, 1 give 0.02, 0.03, 0.06, 0.04;
    # the running max gives 0.02, 0.03, 0.06, 0.06; mapped back to the input order:
    p = [0.01, 0.04, 0.03, 0.005]
    expected = [0.03, 0.06, 0.06, 0.02]
    np.testing.assert_allclose(_holm_by_definition(p), expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(_adjust_p(np.array(p), "holm"), expected, rtol=0, atol=1e-15)
    # clipping at 1, and a case where the running max matters less: 0.2·3 = 0.6, 0.3·2 = 0.6, 0.6·1 = 0.6
    np.testing.assert_allclose(_adjust_p(np.array([0.6, 0.2, 0.3]), "holm"), [0.6, 0.6, 0.6], atol=1e-15)
    np.testing.assert_allclose(_adjust_p(np.array([0.5, 0.9]), "holm"), [1.0, 1.0])
    np.testing.assert_allclose(_adjust_p(np.array([0.01, 0.04, 0.03, 0.005]), "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    np.testing.assert_array_equal(_adjust_p(np.array(p), None), p)
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.uniform(0, 0.3, size=int(rng.integers(1, 8)))
        np.testing.assert_allclose(_adjust_p(q, "holm"), _holm_by_definition(list(q)), rtol=0, atol=1e-15)


def test_pimp_applies_holm():
    X, y = _data(n=60)
    res = pimp(LinearRegression(), X, y, n_permutations=10, random_state=0, n_repeats=2)
    assert res.correction == "holm"
    np.testing.assert_allclose(res.p_values_adjusted, _holm_by_definition(list(res.p_values)), rtol=0, atol=1e-15)


def test_bad_arguments():
    X, y = _data()
    with pytest.raises(ValueError, match="'resampling'"):
        learner_importance(LinearRegression(), X, y, resampling="jackknife")
    with pytest.raises(ValueError, match="'train_fraction'"):
        learner_importance(LinearRegression(), X, y, train_fraction=1.5)
    with pytest.raises(ValueError, match="'n_refits'"):
        learner_importance(LinearRegression(), X, y, n_refits=1)
    with pytest.raises(ValueError, match="'null'"):
        pimp(LinearRegression(), X, y, null="cauchy")


def test_reduced_coverage_study():
    """The corrected intervals cover much better than the naive ones (linear DGP, lm, n = 100)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import coverage as cov

    out = [cov.one_rep("linear", "lm", 100, "subsampling", 1000 * k + 7) for k in range(40)]
    pd_plain = np.mean([o["pd_plain"] for o in out])
    pd_corr = np.mean([o["pd_corrected"] for o in out])
    pfi_plain = np.mean([o["pfi_plain"] for o in out])
    pfi_corr = np.mean([o["pfi_corrected"] for o in out])
    assert pd_corr > pd_plain + 0.2 and pfi_corr > pfi_plain + 0.2
    assert pd_corr >= 0.7


def test_wine_inference_example(capsys):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import inference_wine

    assert inference_wine.main(["--refits", "3", "--trees", "10", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "corrected resampled t-tests" in out and "alcohol" in out
