"""model_reliance / feature_reliance on Dask input: the linear closed form out of core, equal to in memory."""

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from rashomon import RashomonInputError, feature_reliance, model_reliance  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2500, 4)) * [1, 10, 0.1, 3] + [0, 100, -5, 0]
    y = X @ [1.0, 0.05, 2.0, -0.3] + rng.normal(size=2500)
    return X, y


def test_feature_reliance_dask_array_equals_in_memory(data):
    X, y = data
    m = make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)
    feats = [0, [1, 2], 3]
    a = feature_reliance(m, da.from_array(X, chunks=600), da.from_array(y, chunks=600), feats)
    b = feature_reliance(m, X, y, feats)
    assert a.names == b.names
    np.testing.assert_allclose(a.e_switch, b.e_switch, rtol=1e-10)
    np.testing.assert_allclose(a.e_orig, b.e_orig, rtol=1e-10)
    assert all(r.exact_algorithm == "linear" for r in a.results)


def test_model_reliance_dask_dataframe_by_name(data):
    X, y = data
    df = pd.DataFrame(X, columns=list("abcd"))
    m = LinearRegression().fit(df, y)
    ddf = dd.from_pandas(df.assign(t=y), npartitions=5)
    r = model_reliance(m, ddf[list("abcd")], ddf["t"], ["b", "c"])
    ref = model_reliance(m, df, y, ["b", "c"])
    assert r.features == ref.features == ("b", "c")
    assert r.ratio == pytest.approx(ref.ratio, rel=1e-10) and r.n_samples == 2500


@pytest.mark.parametrize(
    "kwargs, match", [({"method": "permutation"}, "method='exact'"), ({"loss": "absolute_error"}, "squared")]
)
def test_dask_input_outside_the_closed_form_is_a_clear_error(data, kwargs, match):
    X, y = data
    m = LinearRegression().fit(X, y)
    with pytest.raises(RashomonInputError, match=match):
        model_reliance(m, da.from_array(X), da.from_array(y), 0, **kwargs)
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X[:200], y[:200])
    with pytest.raises(RashomonInputError, match="'estimator' parameter of feature_reliance must be a linear model"):
        feature_reliance(forest, da.from_array(X), da.from_array(y))
