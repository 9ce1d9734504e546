"""PD / ICE / PD importance against brute force and scikit-learn; the Rashomon PD band."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import partial_dependence as sk_pd
from sklearn.linear_model import LogisticRegression

from rashomon import KernelModelClass, LinearModelClass, partial_dependence, pd_importance, rashomon_pd_band


def _reg(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 3, n)
    y = X[:, 0] ** 2 + X[:, 1] + 0.5 * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def test_pd_equals_brute_force_and_sklearn():
    X, y = _reg()
    m = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    r = partial_dependence(m, X, 0, kind="both", grid_resolution=12)
    # brute force: loops over grid values and rows
    for gi, v in enumerate(r.grid[0]):
        vals = []
        for i in range(len(X)):
            row = X[i].copy()
            row[0] = v
            vals.append(m.predict(row[None])[0])
        assert r.average[0, gi] == pytest.approx(np.mean(vals), rel=1e-12)
        np.testing.assert_allclose(r.individual[0, :, gi], vals, rtol=1e-12)
        assert r.std[0, gi] == pytest.approx(np.std(vals), rel=1e-9, abs=1e-12)
    sk = sk_pd(m, X, [0], kind="both", grid_resolution=12, method="brute")
    np.testing.assert_allclose(r.grid[0], sk["grid_values"][0])
    np.testing.assert_allclose(r.average, sk["average"], rtol=1e-12)
    np.testing.assert_allclose(r.individual, sk["individual"], rtol=1e-12)
    np.testing.assert_allclose(r.individual.mean(axis=1), r.average, rtol=1e-12)  # ICE mean = PD


def test_two_dimensional_and_categorical():
    X, y = _reg()
    m = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    r = partial_dependence(m, X, [0, 2], grid_resolution=6, categorical_features=[2])
    sk = sk_pd(m, X, [(0, 2)], grid_resolution=6, method="brute", categorical_features=[2])
    assert r.average.shape == (1, 6, 3)
    np.testing.assert_allclose(r.average, sk["average"], rtol=1e-12)
    np.testing.assert_array_equal(r.grid[1], [0.0, 1.0, 2.0])
    assert len(r.to_frame()) == 18


def test_probabilistic_and_crisp_classifiers():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=120), [-0.5, 0.5])  # 3 classes
    proba_model = LogisticRegression().fit(X, y)
    r = partial_dependence(proba_model, X, 0, grid_resolution=8)
    sk = sk_pd(proba_model, X, [0], grid_resolution=8, method="brute", response_method="predict_proba")
    assert r.response == "proba" and r.average.shape == (3, 8)
    np.testing.assert_allclose(r.average, sk["average"], rtol=1e-10)
    np.testing.assert_allclose(r.average.sum(0), 1.0)
    crisp = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    c = partial_dependence(crisp, X, 0, grid_resolution=8, response="crisp", kind="individual")
    np.testing.assert_allclose(c.average.sum(0), 1.0)  # shares add up
    counts = c.individual.sum(axis=1)  # rows predicted as each class per grid value
    np.testing.assert_allclose(counts.sum(0), len(X))
    for gi, v in enumerate(c.grid[0]):
        Z = X.copy()
        Z[:, 0] = v
        pred = crisp.predict(Z)
        np.testing.assert_allclose(counts[:, gi], [(pred == k).sum() for k in crisp.classes_])


def test_centered_curves_start_at_zero():
    X, y = _reg()
    m = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    r = partial_dependence(m, X, 0, kind="both", centered=True, grid_resolution=10)
    np.testing.assert_allclose(r.individual[0, :, 0], 0.0, atol=1e-12)
    assert r.average[0, 0] == pytest.approx(0.0, abs=1e-12)
    raw = partial_dependence(m, X, 0, grid_resolution=10)
    np.testing.assert_allclose(r.average[0], raw.average[0] - raw.average[0, 0], atol=1e-12)
    mid = partial_dependence(m, X, 0, kind="both", centered=True, center_value=raw.grid[0][4], grid_resolution=10)
    np.testing.assert_allclose(mid.individual[0, :, 4], 0.0, atol=1e-12)


def test_callable_model():
    X, y = _reg()
    f = lambda Z: 2 * Z[:, 0] - Z[:, 1]  # noqa: E731
    r = partial_dependence(f, X, 0, grid=[-1.0, 0.0, 1.0])
    np.testing.assert_allclose(r.average[0], 2 * np.array([-1.0, 0.0, 1.0]) - X[:, 1].mean())


def test_pd_importance_formulas():
    X, y = _reg()
    f = lambda Z: 3 * Z[:, 0] + Z[:, 2]  # noqa: E731
    imp = pd_importance(f, X, categorical_features=[2])
    g0 = partial_dependence(f, X, 0, percentiles=(0.0, 1.0)).grid[0]
    assert imp.importances[0] == pytest.approx(np.std(3 * g0, ddof=1))
    assert imp.importances[1] == pytest.approx(0.0, abs=1e-12)
    assert imp.importances[2] == pytest.approx((2.0 - 0.0) / 4)  # range / 4 for the categorical column
    assert imp.categorical == [False, False, True]


def _sample_set(prob, eps, rng, centres, n=1500):
    out = []
    for c in centres:
        for spread in (0.05, 0.2):
            th = c[None, :] + spread * rng.normal(size=(n // 4, len(c)))
            th = th[np.einsum("ij,jk,ik->i", th, prob.B, th) <= prob.r]
            out.append(th[prob.e_orig.evaluate_many(th) <= eps])
    return np.vstack(out)


@pytest.mark.parametrize("cls", ["linear", "kernel"])
def test_rashomon_pd_band_contains_members_and_is_attained(cls):
    X, y = _reg(n=70, seed=2)
    mc = (
        LinearModelClass(norm_bound=2.0)
        if cls == "linear"
        else KernelModelClass(gamma=0.3, norm_bound=2.0, dictionary=15)
    )
    band = rashomon_pd_band(mc, X, y, 0, epsilon=0.3, grid_resolution=6)
    assert np.all(band.lower <= band.reference + 1e-9) and np.all(band.reference <= band.upper + 1e-9)
    assert band.duality_gap.max() <= 1e-6
    prob = mc.build(X, y, (0,), None)
    A = band.pd_vectors
    thetas = _sample_set(
        prob, band.epsilon_abs, np.random.default_rng(3), band.lower_models[:2] + band.upper_models[:2]
    )
    assert len(thetas) >= 50
    pds = thetas @ A[:, :-1].T + A[:, -1]
    assert np.all(pds >= band.lower - 1e-7) and np.all(pds <= band.upper + 1e-7)
    for k in range(len(band.grid)):
        for th, target in ((band.lower_models[k], band.lower[k]), (band.upper_models[k], band.upper[k])):
            assert prob.e_orig(th) <= band.epsilon_abs * (1 + 1e-9)
            # PD of the attaining model, computed by brute force from its predictions
            params = prob.to_model(th)
            f = (
                params["predict"]
                if "predict" in params
                else (lambda Z, c=params["coef"], b=params["intercept"]: Z @ c + b)
            )
            pdv = partial_dependence(f, X, 0, grid=[band.grid[k]]).average[0, 0]
            assert pdv == pytest.approx(target, abs=1e-6 * max(1, abs(target)))


def test_band_agrees_with_cvxpy():
    cp = pytest.importorskip("cvxpy")
    X, y = _reg(n=60, seed=4)
    mc = LinearModelClass(norm_bound=1.5)
    band = rashomon_pd_band(mc, X, y, 1, epsilon=0.2, grid_resolution=3)
    prob = mc.build(X, y, (1,), None)
    Q = prob.e_orig.Q
    Lq = np.linalg.cholesky(Q + 1e-12 * np.eye(len(Q)))
    for k in range(3):
        a, a0 = band.pd_vectors[k, :-1], band.pd_vectors[k, -1]
        th = cp.Variable(len(a))
        cons = [
            cp.sum_squares(Lq.T @ th) - 2 * prob.e_orig.c @ th + prob.e_orig.k <= band.epsilon_abs,
            cp.sum_squares(th[1:]) <= 1.5,
        ]
        lo = cp.Problem(cp.Minimize(a @ th), cons)
        lo.solve(solver=cp.CLARABEL)
        assert band.lower[k] == pytest.approx(lo.value + a0, abs=1e-6)


def test_pd_examples_script(tmp_path, monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import pd_examples

    # a lighter run: patch the forest size through the module's RandomForestRegressor
    monkeypatch.setattr(
        pd_examples, "RandomForestRegressor", lambda **kw: RandomForestRegressor(**(kw | {"n_estimators": 10}))
    )
    assert pd_examples.main(["--out", str(tmp_path)]) == 0
    assert (tmp_path / "bike_pd_band.png").exists() and (tmp_path / "wine_pd_band.png").exists()
