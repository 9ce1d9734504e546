"""Exact e_switch of scikit-learn tree ensembles through threshold cells (and prediction paths).

Every accelerated value is compared with the generic exact path over distinct values
(closed_form=False, itself tested against the brute-force loop in test_reliance.py) at
relative 1e-9, and on the smallest data with the brute-force loop directly.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreeRegressor

from rashomon import feature_reliance, model_reliance
from rashomon.reliance._tree_cells import threshold_cells

from ._brute import brute_e_switch

RTOL = 1e-9
ACCELERATED = ("tree-cells", "tree-paths")


def _data(n=150, seed=0, classes=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 1] = np.round(X[:, 1] * 4) / 4  # ties: several rows per value
    X[:, 3] = rng.integers(0, 3, size=n)  # discrete
    X[:5, 0] = 1e6  # far outliers share a cell
    X[5:8, 2] = np.float32(0.1) + np.array([0.0, 1e-12, -1e-12])  # equal after the float32 cast
    z = np.sin(X[:, 0].clip(-3, 3)) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] + rng.normal(scale=0.3, size=n)
    if classes is None:
        return X, z
    return X, np.digitize(z, np.quantile(z, np.linspace(0, 1, classes + 1)[1:-1]))


REGRESSORS = [
    DecisionTreeRegressor(max_depth=5, random_state=0),
    ExtraTreeRegressor(max_depth=6, random_state=0),
    RandomForestRegressor(n_estimators=7, random_state=0),
    ExtraTreesRegressor(n_estimators=6, max_depth=6, random_state=0),
    GradientBoostingRegressor(n_estimators=15, max_depth=3, random_state=0),
    GradientBoostingRegressor(
        n_estimators=10, loss="absolute_error", init=DummyRegressor(strategy="median"), random_state=0
    ),
    HistGradientBoostingRegressor(max_iter=15, random_state=0),
    HistGradientBoostingRegressor(max_iter=10, max_bins=7, random_state=0),
]
CLASSIFIERS = [
    DecisionTreeClassifier(max_depth=4, random_state=0),
    RandomForestClassifier(n_estimators=6, max_depth=5, random_state=0),
    ExtraTreesClassifier(n_estimators=6, random_state=0),
    GradientBoostingClassifier(n_estimators=8, random_state=0),
    HistGradientBoostingClassifier(max_iter=8, random_state=0),
]
GROUPS = [0, 1, 2, 3, [0, 2], [1, 3], [0, 1, 2, 3]]


def _ids(m):
    return type(m).__name__ + ("-" + str(m.get_params().get("max_bins", "")) if "Hist" in type(m).__name__ else "")


@pytest.mark.parametrize("model", REGRESSORS, ids=_ids)
@pytest.mark.parametrize("loss", ["squared_error", "absolute_error"])
def test_regressors_equal_generic_exact(model, loss):
    X, y = _data()
    m = model.fit(X, y)
    fast = feature_reliance(m, X, y, features=GROUPS, loss=loss)
    slow = feature_reliance(m, X, y, features=GROUPS, loss=loss, closed_form=False)
    for f, s in zip(fast.results, slow.results):
        assert f.exact_algorithm in ACCELERATED and s.exact_algorithm == "distinct-values"
        assert f.e_switch == pytest.approx(s.e_switch, rel=RTOL)
    assert fast.e_orig == slow.e_orig


@pytest.mark.parametrize("model", CLASSIFIERS, ids=_ids)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("loss", ["log_loss", "zero_one"])
def test_classifiers_equal_generic_exact(model, n_classes, loss):
    X, y = _data(classes=n_classes, seed=1)
    m = model.fit(X, y)
    fast = feature_reliance(m, X, y, features=GROUPS, loss=loss)
    slow = feature_reliance(m, X, y, features=GROUPS, loss=loss, closed_form=False)
    for f, s in zip(fast.results, slow.results):
        assert f.exact_algorithm in ACCELERATED
        assert f.e_switch == pytest.approx(s.e_switch, rel=RTOL, abs=1e-15)


@pytest.mark.parametrize(
    "model",
    [
        RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0),
        HistGradientBoostingRegressor(max_iter=5, random_state=0),
    ],
    ids=_ids,
)
@pytest.mark.parametrize("group", [[0], [2], [1, 3]], ids=str)
def test_brute_force(model, group):
    X, y = _data(n=30)
    m = model.fit(X, y)
    ref = brute_e_switch(m.predict, lambda a, b: (a - b) ** 2, X, y, group)
    res = model_reliance(m, X, y, group)
    assert res.exact_algorithm in ACCELERATED
    assert res.e_switch == pytest.approx(ref, rel=RTOL)


def test_models_fitted_with_sample_weight_and_dataframes():
    X, y = _data(seed=2)
    w = np.random.default_rng(0).integers(0, 4, size=len(y)).astype(float)
    df = pd.DataFrame(X, columns=list("abcd"))
    for model in [
        RandomForestRegressor(n_estimators=5, random_state=0),
        HistGradientBoostingRegressor(max_iter=10),
        GradientBoostingRegressor(n_estimators=10, random_state=0),
    ]:
        m = model.fit(df, y, sample_weight=w)
        fast = model_reliance(m, df, y, ["a", "c"])
        slow = model_reliance(m, df, y, ["a", "c"], closed_form=False)
        assert fast.exact_algorithm in ACCELERATED
        assert fast.e_switch == pytest.approx(slow.e_switch, rel=RTOL)


def test_cells_are_few_for_histogram_boosting():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = X[:, 0] + rng.normal(size=3000)
    m = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    values, inverse, counts = threshold_cells(m, X, (0,))
    assert len(values) <= 256 and counts.sum() == 3000
    # every row's cell representative gives the row's own prediction when swapped in
    Xs = X.copy()
    Xs[:, 0] = values[inverse, 0]
    np.testing.assert_array_equal(m.predict(Xs), m.predict(X))


def test_not_collapsed_when_not_provably_exact():
    X, y = _data()
    gb = GradientBoostingRegressor(n_estimators=5, init=LinearRegression(), random_state=0).fit(X, y)
    pipe = make_pipeline(StandardScaler(), DecisionTreeRegressor(max_depth=3)).fit(X, y)

    class MyTree(DecisionTreeRegressor):
        def predict(self, X, check_input=True):
            return super().predict(X) + np.asarray(X)[:, 0]

    sub = MyTree(max_depth=3).fit(X, y)
    df = pd.DataFrame(X, columns=list("abcd")).assign(d=lambda d: d["d"].astype(int).astype("category"))
    hgb_cat = HistGradientBoostingRegressor(max_iter=5, categorical_features="from_dtype").fit(df, y)
    assert hgb_cat._preprocessor is not None
    for m in [gb, pipe, sub]:
        assert model_reliance(m, X, y, 0).exact_algorithm == "distinct-values"
    assert threshold_cells(hgb_cat, X, (0,)) is None


def test_same_result_any_n_jobs():
    X, y = _data(n=120)
    m = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    a = model_reliance(m, X, y, [0, 1], n_jobs=1, memory_limit=8192)
    b = model_reliance(m, X, y, [0, 1], n_jobs=2, memory_limit=8192)
    assert a.e_switch == b.e_switch


@pytest.mark.parametrize("model", REGRESSORS + CLASSIFIERS, ids=_ids)
def test_one_feature_uses_paths_and_cells_agree(model):
    # One feature: regressors and class probabilities take the path algorithm (the safety net
    # did not reject it); the threshold-cell path alone gives the same value.
    from rashomon.reliance._exact import exact_e_switch
    from rashomon.utils.losses import Predictor, get_loss

    clf = "Classifier" in type(model).__name__
    X, y = _data(classes=3 if clf else None, seed=4)
    m = model.fit(X, y)
    loss = "log_loss" if clf else "squared_error"
    pred = Predictor(m, get_loss(loss, "t"), None, "t")
    y_enc = pred.encode_y(y.astype(float), "t")
    for k in range(4):
        res = model_reliance(m, X, y, k, loss=loss)
        assert res.exact_algorithm == "tree-paths"
        cells = exact_e_switch(pred, X, y_enc, (k,), 10_000, None, threshold_cells(m, X, (k,)))
        assert res.e_switch == pytest.approx(cells, rel=RTOL)


def test_paths_in_small_blocks_and_the_safety_net(monkeypatch):
    import rashomon.reliance._tree_paths as tp

    X, y = _data(n=200, seed=5)
    m = RandomForestRegressor(n_estimators=8, random_state=0).fit(X, y)
    h = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    for model in (m, h):
        big = model_reliance(model, X, y, 0)
        small = model_reliance(model, X, y, 0, memory_limit=4096)  # one row per block
        assert big.exact_algorithm == small.exact_algorithm == "tree-paths"
        assert small.e_switch == pytest.approx(big.e_switch, rel=1e-12)
    # a response map that does not reproduce the model's own predictions is rejected
    real = tp._spec
    monkeypatch.setattr(tp, "_spec", lambda *a: (lambda s: (s[0], s[1] + 1e-6, s[2], s[3]))(real(*a)))
    res = model_reliance(m, X, y, 0)
    assert res.exact_algorithm == "tree-cells"
    assert res.e_switch == pytest.approx(model_reliance(m, X, y, 0, closed_form=False).e_switch, rel=RTOL)
