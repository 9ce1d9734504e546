import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeRegressor

from rashomon import feature_reliance, model_reliance

from ._brute import brute_e_divide, brute_e_switch

RTOL = 1e-9


def _reg_data(n=60, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 3] = rng.integers(0, 3, size=n)  # a discrete column: exercises the distinct-value path
    y = X @ np.array([1.0, -0.5, 0.3, 0.8]) + rng.normal(size=n)
    return X, y


def _clf_data(n=60, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0).astype(int)
    return X, y


REG_MODELS = [
    LinearRegression(),
    DecisionTreeRegressor(max_depth=4, random_state=0),
    RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0),
]
GROUPS = [0, 3, [0, 2], [1, 3]]


@pytest.mark.parametrize("model", REG_MODELS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("group", GROUPS, ids=str)
@pytest.mark.parametrize("loss", ["squared_error", "absolute_error"])
def test_exact_matches_brute_force_regression(model, group, loss):
    X, y = _reg_data()
    m = model.fit(X, y)
    L = (lambda a, b: (a - b) ** 2) if loss == "squared_error" else (lambda a, b: abs(a - b))
    g = [group] if isinstance(group, int) else group
    ref = brute_e_switch(m.predict, L, X, y, g)
    res = model_reliance(m, X, y, group, loss=loss, closed_form=False)
    assert res.e_switch == pytest.approx(ref, rel=RTOL)
    e_orig = np.mean([L(y[i], m.predict(X[i : i + 1])[0]) for i in range(len(y))])
    assert res.e_orig == pytest.approx(e_orig, rel=RTOL)
    assert res.ratio == pytest.approx(ref / e_orig, rel=RTOL)
    assert res.difference == pytest.approx(ref - e_orig, rel=RTOL, abs=1e-12)
    div = model_reliance(m, X, y, group, loss=loss, method="divide")
    assert div.e_switch == pytest.approx(brute_e_divide(m.predict, L, X, y, g), rel=RTOL)


@pytest.mark.parametrize("loss", ["log_loss", "zero_one", "hinge"])
@pytest.mark.parametrize("group", [0, [0, 1]], ids=str)
def test_exact_matches_brute_force_classification(loss, group):
    X, y = _clf_data()
    g = [group] if isinstance(group, int) else group
    if loss == "log_loss":
        m = LogisticRegression().fit(X, y)
        predict = m.predict_proba
        L = lambda a, pr: -np.log(pr[int(a)])  # noqa: E731
        yy = y
    elif loss == "zero_one":
        m = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
        predict = m.predict
        L = lambda a, b: float(a != b)  # noqa: E731
        yy = y
    else:
        m = LinearSVC().fit(X, y)
        predict = m.decision_function
        L = lambda a, b: max(0.0, 1 - a * b)  # noqa: E731
        yy = 2 * y - 1
    ref = brute_e_switch(predict, L, X, yy, g)
    res = model_reliance(m, X, y, group, loss=loss)
    assert res.e_switch == pytest.approx(ref, rel=RTOL)
    assert res.method == "exact"
    div = model_reliance(m, X, y, group, loss=loss, method="divide")
    assert div.e_switch == pytest.approx(brute_e_divide(predict, L, X, yy, g), rel=RTOL)


def test_hinge_accepts_pm1_labels():
    X, y = _clf_data()
    m = LinearSVC().fit(X, y)
    a = model_reliance(m, X, y, 0, loss="hinge")
    b = model_reliance(m, X, 2 * y - 1, 0, loss="hinge")
    assert a.e_switch == b.e_switch


def test_callable_model_and_loss():
    X, y = _reg_data()
    f = lambda Z: Z[:, 0] * 2 + np.sin(Z[:, 1])  # noqa: E731
    L = lambda a, b: np.abs(a - b) ** 1.5  # noqa: E731
    ref = brute_e_switch(f, lambda a, b: abs(a - b) ** 1.5, X, y, [0])
    assert model_reliance(f, X, y, 0, loss=L).e_switch == pytest.approx(ref, rel=RTOL)


@pytest.mark.parametrize("group", GROUPS, ids=str)
def test_closed_form_equals_generic(group):
    X, y = _reg_data(n=150)
    X = X * np.array([1.0, 1e3, 1e-2, 1.0]) + 50.0
    for m in [LinearRegression().fit(X, y), make_pipeline(StandardScaler(), Ridge(alpha=3.0)).fit(X, y)]:
        fast = model_reliance(m, X, y, group)
        slow = model_reliance(m, X, y, group, closed_form=False)
        assert fast.closed_form and not slow.closed_form
        assert fast.e_switch == pytest.approx(slow.e_switch, rel=RTOL)
        assert fast.e_orig == pytest.approx(slow.e_orig, rel=RTOL)


def test_closed_form_not_used_for_nonlinear_or_other_loss():
    X, y = _reg_data()
    assert not model_reliance(DecisionTreeRegressor().fit(X, y), X, y, 0).closed_form
    assert not model_reliance(LinearRegression().fit(X, y), X, y, 0, loss="absolute_error").closed_form
    with pytest.raises(ValueError, match="closed_form"):
        model_reliance(DecisionTreeRegressor().fit(X, y), X, y, 0, closed_form=True)


def test_streaming_blocks_do_not_change_the_answer():
    X, y = _reg_data(n=90)
    m = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    big = model_reliance(m, X, y, [0, 1])
    small = model_reliance(m, X, y, [0, 1], memory_limit=4096)  # forces many tiny blocks
    assert small.e_switch == pytest.approx(big.e_switch, rel=1e-12)


@pytest.mark.parametrize("feature", [0, 1, 2])
def test_permutation_equals_sklearn_permutation_importance(feature):
    X, y = _reg_data(n=120)
    m = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    ours = model_reliance(m, X, y, feature, method="permutation", n_repeats=7, random_state=42)
    sk = permutation_importance(m, X, y, scoring="neg_mean_squared_error", n_repeats=7, random_state=42)
    np.testing.assert_allclose(ours.difference_repeats, sk.importances[feature], rtol=RTOL, atol=1e-12)
    fr = feature_reliance(m, X, y, method="permutation", n_repeats=7, random_state=42)
    np.testing.assert_allclose(fr.difference_repeats, sk.importances, rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("method", ["exact", "permutation", "divide"])
def test_same_random_state_same_result_any_n_jobs(method):
    X, y = _reg_data(n=80)
    m = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    kw = dict(method=method, random_state=3, n_repeats=4, shuffle=True, memory_limit=8192)
    a = model_reliance(m, X, y, [0, 1], n_jobs=1, **kw)
    b = model_reliance(m, X, y, [0, 1], n_jobs=2, **kw)
    c = model_reliance(m, X, y, [0, 1], n_jobs=2, **kw)
    assert a.e_switch == b.e_switch == c.e_switch
    if method == "permutation":
        np.testing.assert_array_equal(a.e_switch_repeats, b.e_switch_repeats)
    rng_a = model_reliance(m, X, y, 0, method=method, random_state=np.random.default_rng(5))
    rng_b = model_reliance(m, X, y, 0, method=method, random_state=np.random.default_rng(5))
    assert rng_a.e_switch == rng_b.e_switch


def test_dataframe_names_groups_and_to_frame():
    X, y = _reg_data()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    m = LinearRegression().fit(df, y)
    by_name = model_reliance(m, df, y, ["a", "c"])
    by_idx = model_reliance(m, df, y, [0, 2])
    assert by_name.features == ("a", "c")
    assert by_name.e_switch == pytest.approx(by_idx.e_switch, rel=RTOL)
    fr = feature_reliance(m, df, y, features={"first": "a", "pair": ["b", "d"]})
    frame = fr.to_frame()
    assert list(frame.index) == ["first", "pair"]
    assert frame.loc["first", "e_switch"] == pytest.approx(model_reliance(m, df, y, "a").e_switch, rel=RTOL)
    allf = feature_reliance(m, df, y)
    assert list(allf.to_frame().index) == ["a", "b", "c", "d"]


def test_linear_model_reliance_closed_form_population():
    # PFI (difference) of a linear model on independent features: 2 coef^2 var(x) (in expectation).
    rng = np.random.default_rng(0)
    n = 20000
    X = rng.normal(size=(n, 2)) * [1.0, 2.0]
    y = X @ [1.5, 0.5] + rng.normal(size=n)
    m = LinearRegression().fit(X, y)
    d = feature_reliance(m, X, y).difference
    np.testing.assert_allclose(d, 2 * m.coef_**2 * X.var(axis=0), rtol=0.05)


def test_plot_draws_sorted_bars():
    import matplotlib

    matplotlib.use("Agg")
    X, y = _reg_data()
    m = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    fr = feature_reliance(m, X, y, method="permutation", random_state=0)
    disp = fr.plot()
    ends = [b.get_x() + b.get_width() for b in disp.bars_]  # ratio bars start at 1 (no reliance)
    assert ends == sorted(ends) and all(b.get_x() == 1.0 for b in disp.bars_)
    np.testing.assert_allclose(ends, np.sort(fr.ratio))


# ---------------------------------------------------------------------------- bad input
def _bad_cases():
    X, y = _reg_data()
    Xn = X.copy()
    Xn[3, 1] = np.nan
    Xi = X.copy()
    Xi[0, 0] = np.inf
    yn = y.copy()
    yn[2] = np.nan
    df = pd.DataFrame(X, columns=list("abcd"))
    dfs = df.assign(e=["u"] * len(y))
    return [
        (dict(X=Xn), "'X'.*NaN or inf"),
        (dict(X=Xi), "'X'.*NaN or inf"),
        (dict(y=yn), "'y'.*finite"),
        (dict(y=y[:-1]), "'y'.*same length"),
        (dict(X=X[:1], y=y[:1]), "'X'.*at least 2 rows"),
        (dict(features=7), "'features'.*index 7"),
        (dict(features="zz"), "'features'.*X has no column names"),
        (dict(X=df, features="zz"), "'features'.*unknown feature 'zz'"),
        (dict(features=[]), "'features'.*empty group"),
        (dict(X=dfs), "'X'.*non-numeric columns \\['e'\\]"),
        (dict(method="magic"), "'method'"),
        (dict(n_repeats=0), "'n_repeats'"),
        (dict(loss="nope"), "'loss'"),
    ]


@pytest.mark.parametrize("kw,match", _bad_cases())
def test_bad_input_names_the_argument(kw, match):
    X, y = _reg_data()
    m = LinearRegression().fit(X, y)
    args = dict(X=X, y=y, features=0) | kw
    with pytest.raises(ValueError, match=match):
        model_reliance(
            m,
            args["X"],
            args["y"],
            args["features"],
            **{k: v for k, v in kw.items() if k not in ("X", "y", "features")},
        )


def test_proba_loss_without_predict_proba():
    X, y = _clf_data()
    with pytest.raises(ValueError, match="predict_proba"):
        model_reliance(LinearSVC().fit(X, y), X, y, 0, loss="log_loss")


def test_hinge_invalid_labels():
    X, y = _clf_data()
    m = LinearSVC().fit(X, y)
    with pytest.raises(ValueError, match="'y'.*hinge"):
        model_reliance(m, X, y + 1, 0, loss="hinge")
