"""Out-of-core / distributed fits: Dask arrays and DataFrames give the in-memory answers from O(p²) state."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import rashomon
from rashomon import LinearModelClass, RashomonInputError, RashomonSet

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

RTOL = 1e-9  # bounds of the Dask path vs the in-memory path (both exact; only summation order differs)


def _data(n=6000, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) @ rng.normal(size=(p, p)) + rng.normal(size=p) * 5
    y = X @ rng.normal(size=p) + 2.0 * rng.normal(size=n) + 3.0
    return X, y


def _close(a, b):
    for end in ("lower", "upper"):
        x, z = getattr(a, end), getattr(b, end)
        assert abs(x - z) <= RTOL * max(1.0, abs(x)), (end, x, z)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("kind", ["ratio", "difference"])
def test_dask_array_matches_in_memory(fit_intercept, kind):
    X, y = _data()
    mc = LinearModelClass(fit_intercept=fit_intercept)
    ref = RashomonSet(mc, 0.1).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = RashomonSet(mc, 0.1).fit(da.from_array(X, chunks=(1000, 5)), da.from_array(y, chunks=700))
        for f in (0, [1, 3]):
            _close(ref.model_class_reliance(f, kind=kind), rs.model_class_reliance(f, kind=kind))
    assert rs.parametrization_.info["ridge_alpha"] == ref.parametrization_.info["ridge_alpha"]
    assert rs.e_ref_ == pytest.approx(ref.e_ref_, rel=1e-12)
    assert rs.epsilon_abs_ == pytest.approx(ref.epsilon_abs_, rel=1e-12)
    np.testing.assert_allclose(rs.reference_.coef_, ref.reference_.coef_, rtol=1e-9)


def test_weights_norm_bound_and_reference_from_other_rows():
    X, y = _data(seed=1)
    w = np.random.default_rng(2).integers(0, 4, size=len(y)).astype(float)
    Xd, yd, wd = da.from_array(X, chunks=(1500, 5)), da.from_array(y, chunks=1500), da.from_array(w, chunks=1500)
    mc = LinearModelClass()
    _close(
        RashomonSet(mc, 0.05).fit(X, y, w).model_class_reliance(2),
        RashomonSet(mc, 0.05).fit(Xd, yd, wd).model_class_reliance(2),
    )
    mc = LinearModelClass(norm_bound=3.0, standardize=False)
    _close(
        RashomonSet(mc, 0.05).fit(X, y).model_class_reliance([0, 4]),
        RashomonSet(mc, 0.05).fit(Xd, y).model_class_reliance([0, 4]),
    )  # numpy y is chunked like X
    member = LinearModelClass().fit_reference(X[:2000], y[:2000])
    a = RashomonSet(LinearModelClass(), 0.1, reference=member).fit(X[2000:], y[2000:])
    b = RashomonSet(LinearModelClass(), 0.1, reference=member).fit(Xd[2000:], yd[2000:])
    _close(a.model_class_reliance(1), b.model_class_reliance(1))
    env_a, env_b = a.envelope(1, [0.02, 0.1]), b.envelope(1, [0.02, 0.1])
    np.testing.assert_allclose(env_b.upper, env_a.upper, rtol=RTOL)


def test_parquet_on_local_cluster(client, tmp_path):
    X, y = _data(n=8000, p=4, seed=3)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(target=y)
    for i in range(4):
        df.iloc[i * 2000 : (i + 1) * 2000].to_parquet(tmp_path / f"part{i}.parquet")
    ddf = dd.read_parquet(str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = RashomonSet(LinearModelClass(), 0.1).fit(ddf[["a", "b", "c", "d"]], ddf["target"])
        res = rs.model_class_reliance(["b", "c"])
    assert list(rs.feature_names_in_) == ["a", "b", "c", "d"]
    _close(RashomonSet(LinearModelClass(), 0.1).fit(df.drop(columns="target"), y).model_class_reliance(["b", "c"]), res)
    # the set keeps O(p²) numbers, not the 8,000 rows
    assert type(rs.X_).__name__ == "RowStatistics" and rs.X_.shape == (8000, 4)
    assert len(pickle.dumps(rs)) < 20_000


def test_queries_that_need_rows_fail_clearly():
    X, y = _data(n=500)
    rs = RashomonSet(LinearModelClass(), 0.1).fit(da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100))
    for call in (
        lambda: rs.model_class_reliance(0, conditional=True),
        lambda: rs.model_class_reliance(0, conditional=True, strata=np.arange(500) % 3),
        lambda: rs.pd_band(0),
        lambda: rs.reweighted(np.ones(500)),
    ):
        with pytest.raises(RashomonInputError, match="fitted on Dask input"):
            call()
    rs.reference_.predict(X[:3])  # members are ordinary fitted models


def test_bad_dask_input_is_named():
    X, y = _data(n=300)
    Xd, yd = da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100)
    Xnan = X.copy()
    Xnan[5, 2] = np.nan
    with pytest.raises(RashomonInputError, match=r"'X' parameter of RashomonSet.fit.*column\(s\) \[2\]"):
        RashomonSet(LinearModelClass()).fit(da.from_array(Xnan, chunks=(100, 5)), yd)
    Xc = X.copy()
    Xc[:, 1] = 4.0
    with pytest.raises(RashomonInputError, match="constant"):
        RashomonSet(LinearModelClass()).fit(da.from_array(Xc, chunks=(100, 5)), yd)
    with pytest.raises(RashomonInputError, match="'y' parameter.*length"):
        RashomonSet(LinearModelClass()).fit(Xd, da.from_array(y[:-1], chunks=100))
    with pytest.raises(RashomonInputError, match="'sample_weight'"):
        RashomonSet(LinearModelClass()).fit(Xd, yd, -da.ones(300, chunks=100))
    with pytest.raises(RashomonInputError, match="'kernel' parameter of KernelModelClass"):
        RashomonSet(rashomon.KernelModelClass(kernel=lambda A, B: A @ B.T)).fit(Xd, yd)
    with pytest.raises(RashomonInputError, match="'loss'"):
        RashomonSet(LinearModelClass(), loss="absolute_error").fit(Xd, yd)
    ddf = dd.from_pandas(pd.DataFrame(X, columns=list("abcde")), npartitions=3)
    with pytest.raises(RashomonInputError, match="'y' parameter.*same collection"):
        RashomonSet(LinearModelClass()).fit(ddf, y)
    with pytest.raises(RashomonInputError, match="non-numeric"):
        RashomonSet(LinearModelClass()).fit(ddf.assign(s="x"), ddf["a"])


def test_import_does_not_import_dask():
    code = "import sys, rashomon; rashomon.RashomonSet; sys.exit(any(m.split('.')[0] == 'dask' for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_linear_model_losses_match_all_pairs():
    from sklearn.linear_model import Ridge

    from rashomon.sets.out_of_core import linear_model_losses

    X, y = _data(n=300, seed=4)
    est = Ridge(alpha=5.0).fit(X[:100], y[:100])
    groups = [(0,), (1, 3), (2,)]
    e_orig, e_sw, _ = linear_model_losses(
        est.coef_, est.intercept_, da.from_array(X, chunks=(70, 5)), da.from_array(y, chunks=70), groups
    )
    assert e_orig == pytest.approx(np.mean((y - est.predict(X)) ** 2), rel=1e-12)
    n = len(y)
    i, j = np.where(~np.eye(n, dtype=bool))
    for g, v in zip(groups, e_sw):  # brute force: x_j with the group's values of x_i, response y_j
        Xs = X[j].copy()
        Xs[:, list(g)] = X[i][:, list(g)]
        assert v == pytest.approx(np.mean((y[j] - est.predict(Xs)) ** 2), rel=1e-10)
