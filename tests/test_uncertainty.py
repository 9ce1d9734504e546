"""Likelihood- and entropy-based importance, entropy/likelihood PD and ICE."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.linear_model import LogisticRegression

from rashomon import entropy_importance, likelihood_importance, model_reliance, predictive_distribution, uncertainty_pd


def _data(n=300, seed=0, dependent=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if dependent:
        X[:, 1] = X[:, 0] + 0.1 * rng.normal(size=n)
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)
    return X, y


def test_fixed_variance_gaussian_likelihood_is_squared_error_pfi_over_2sigma2():
    X, y = _data()
    sigma = 0.7
    model = lambda Z: (Z @ [1.0, 0.5, 0.0], np.full(len(Z), sigma))  # noqa: E731
    lik = likelihood_importance(model, X, y, n_repeats=6, random_state=11)
    for j in range(3):
        mr = model_reliance(lambda Z: Z @ [1.0, 0.5, 0.0], X, y, j, method="permutation", n_repeats=6, random_state=11)
        np.testing.assert_allclose(lik.importances[j], mr.difference_repeats / (2 * sigma**2), rtol=1e-12, atol=1e-12)


def test_entropy_pfi_zero_for_constant_predictive_variance():
    X, y = _data()
    model = lambda Z: (Z @ [1.0, 0.5, 0.0], np.full(len(Z), 1.3))  # noqa: E731
    ent = entropy_importance(model, X, n_repeats=4, random_state=0)
    np.testing.assert_array_equal(ent.importances, 0.0)


def test_entropy_pfi_near_zero_for_independent_feature_and_not_for_dependent():
    # heteroscedastic: σ depends on x0·x1, so entropy changes only through the joint
    model = lambda Z: (Z[:, 0], np.exp(0.5 * np.tanh(Z[:, 0] * Z[:, 1])))  # noqa: E731
    Xi, _ = _data(n=20000, seed=1)
    Xd, _ = _data(n=20000, seed=1, dependent=True)
    ind = entropy_importance(model, Xi, features=[0], n_repeats=5, random_state=0)
    dep = entropy_importance(model, Xd, features=[0], n_repeats=5, random_state=0)
    assert abs(ind.importances_mean[0]) < 0.01  # Proposition 1: zero in expectation
    assert dep.importances_mean[0] < -0.1  # scrambling breaks x0·x1 > 0, so the model grows more confident


def test_categorical_entropy_and_likelihood_brute_force():
    X, y = _data(n=120)
    yc = (y > 0).astype(int)
    clf = LogisticRegression().fit(X, yc)
    lik = likelihood_importance(clf, X, yc, features=[1], n_repeats=3, random_state=2)
    ent = entropy_importance(clf, X, features=[1], n_repeats=3, random_state=2)
    from rashomon.utils import permutation_indices as _permutation_indices
    from rashomon.utils.validation import seed_from

    perms = _permutation_indices(len(X), 3, seed_from(2, "t"))
    P0 = clf.predict_proba(X)
    for r, perm in enumerate(perms):
        Z = X.copy()
        Z[:, 1] = X[perm, 1]
        P = clf.predict_proba(Z)
        l_manual = np.mean([np.log(P0[i, yc[i]]) - np.log(P[i, yc[i]]) for i in range(len(X))])
        h = lambda Q: -np.sum(Q * np.log(Q), axis=1)  # noqa: E731
        e_manual = np.mean(h(P) - h(P0))
        assert lik.importances[0, r] == pytest.approx(l_manual, rel=1e-10)
        assert ent.importances[0, r] == pytest.approx(e_manual, rel=1e-10)


def test_predictive_distribution_sources():
    X, y = _data(n=80)
    gp = GaussianProcessRegressor(optimizer=None).fit(X, y)  # fixed kernel: no optimiser warning in the test
    d = predictive_distribution(gp)(X[:5])
    m, s = gp.predict(X[:5], return_std=True)
    np.testing.assert_allclose(d.entropy(), 0.5 + 0.5 * np.log(2 * np.pi * s**2))
    rf = RandomForestRegressor(n_estimators=30, random_state=0).fit(X, y)
    g = predictive_distribution(rf)(X[:5])
    members = np.column_stack([t.predict(X[:5]) for t in rf.estimators_])
    np.testing.assert_allclose(g.mean, members.mean(1))
    np.testing.assert_allclose(g.std, members.std(1, ddof=1))
    emp = predictive_distribution(rf, summary="empirical")(X[:5])
    h = 1.06 * members.std(1, ddof=1) * members.shape[1] ** (-0.2)
    yy = y[:5]
    manual = [
        np.log(np.mean(np.exp(-0.5 * ((yy[i] - members[i]) / h[i]) ** 2)) / (np.sqrt(2 * np.pi) * h[i]))
        for i in range(5)
    ]
    np.testing.assert_allclose(emp.log_prob(yy), manual, rtol=1e-10)
    samples = lambda Z: np.column_stack([Z[:, 0] + k for k in np.linspace(-1, 1, 9)])  # noqa: E731
    assert np.all(np.isfinite(likelihood_importance(samples, X, y, n_repeats=2, random_state=0).importances))
    with pytest.raises(ValueError, match="distribution"):
        likelihood_importance(object(), X, y)


@pytest.mark.parametrize("measure", ["entropy", "likelihood"])
def test_uncertainty_pd_brute_force(measure):
    X, y = _data(n=60)
    yc = (y > 0).astype(int)
    clf = LogisticRegression().fit(X, yc)
    r = uncertainty_pd(clf, X, 0, y=yc, measure=measure, grid=[-1.0, 0.0, 1.5])
    for k, v in enumerate([-1.0, 0.0, 1.5]):
        vals = []
        for i in range(len(X)):
            row = X[i].copy()
            row[0] = v
            p = clf.predict_proba(row[None])[0]
            vals.append(-np.sum(p * np.log(p)) if measure == "entropy" else np.log(p[yc[i]]))
        np.testing.assert_allclose(r.individual[0, :, k], vals, rtol=1e-10)
        assert r.average[0, k] == pytest.approx(np.mean(vals), rel=1e-10)
    with pytest.raises(ValueError, match="'y'"):
        uncertainty_pd(clf, X, 0, measure="likelihood")


def test_uncertainty_plots():
    import matplotlib

    matplotlib.use("Agg")
    from rashomon.plotting import UncertaintyPDDisplay

    X, y = _data(n=60)
    yc = (y > 0).astype(int)
    clf = LogisticRegression().fit(X, yc)
    lik = likelihood_importance(clf, X, yc, n_repeats=3, random_state=0)
    ent = entropy_importance(clf, X, n_repeats=3, random_state=0)
    disp = lik.plot(other=ent)
    widths = [b.get_width() for b in disp.bars_[0]]
    assert widths == sorted(widths)  # ordered by likelihood-PFI
    r = uncertainty_pd(clf, X, 0, measure="entropy", grid_resolution=8)
    d = UncertaintyPDDisplay(r, color_by=yc).plot()
    np.testing.assert_allclose(d.pd_line_.get_ydata(), r.average[0])


def test_uncertainty_examples_run(tmp_path, capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import uncertainty_examples as ue

    lik, ent = ue.concrete(tmp_path)
    order = [lik.names[i] for i in np.argsort(-lik.importances_mean)]
    assert order[0] == "age"  # the paper: age has the largest likelihood-PFI ...
    assert ent.importances_mean[lik.names.index("age")] < np.median(ent.importances_mean)  # ... but a small entropy-PFI
    lik_p, ent_p, peak = ue.pima(tmp_path, n_trees=100)
    assert [lik_p.names[i] for i in np.argsort(-lik_p.importances_mean)][0] == "Glucose"
