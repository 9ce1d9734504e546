"""The kernel class on Dask input: the in-memory set from passes over the partitions (dictionary, feature
statistics, leave-one-out errors, block sums of e_switch), equal to the in-memory answers; clear errors."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from rashomon import KernelModelClass, RashomonInputError, RashomonSet

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

# Dask vs in memory. Both are exact; the summation order differs, and the rounding of the Hadamard sums of
# e_switch is amplified by the feature map W = VΛ^{-1/2} of K_D (both paths carry it: they differ from a
# brute-force all-pairs sum by the same order). The classes below keep K_D's condition moderate.
RTOL = 1e-9
ALPHAS = np.logspace(-1, 2, 7)
GAMMAS = [0.3, 1.0]  # chosen by leave-one-out error with the penalty


def _data(n=400, p=3, seed=0, decimals=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if decimals is not None:
        X = np.round(X, decimals)
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)
    return X, y


def _close(a, b, rtol=RTOL):
    for end in ("lower", "upper"):
        x, z = getattr(a, end), getattr(b, end)
        assert abs(x - z) <= rtol * max(1.0, abs(z)), (end, x, z)


def _fit_both(mc, X, y, w=None, chunks=110, eps=0.1):
    mem = RashomonSet(mc, eps).fit(X, y, w)
    wd = None if w is None else da.from_array(w, chunks=chunks)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = RashomonSet(mc, eps).fit(
            da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=chunks), wd
        )
    return mem, out


@pytest.mark.parametrize("intercept", ["mean", "free"])
def test_fit_pieces_and_mcr_equal_in_memory(intercept):
    X, y = _data()
    mc = KernelModelClass(dictionary=20, intercept=intercept, alphas=ALPHAS, gammas=GAMMAS)
    mem, out = _fit_both(mc, X, y)
    pm, po = mem.parametrization_, out.parametrization_
    np.testing.assert_array_equal(po.D, pm.D)  # the same seeded draw of unique rows
    assert po.gamma == pytest.approx(pm.gamma, rel=1e-14)
    assert po.info["ridge_alpha"] == pm.info["ridge_alpha"]
    for key in ("norm_bound", "ridge_loo_mse", "intercept"):
        assert po.info[key] == pytest.approx(pm.info[key], rel=RTOL), key
    for attr in ("e_min_", "e_ref_", "epsilon_abs_", "e_null_"):
        assert getattr(out, attr) == pytest.approx(getattr(mem, attr), rel=RTOL), attr
    np.testing.assert_allclose(out.reference_theta_, mem.reference_theta_, rtol=1e-7, atol=RTOL)
    for f in (0, [1, 2]):
        for kind in ("ratio", "difference"):
            _close(out.model_class_reliance(f, kind=kind), mem.model_class_reliance(f, kind=kind))
    # the set keeps statistics (O(p²) and the fitted forms), not the rows
    assert type(out.X_).__name__ == "DaskKernelRows" and out.X_.shape == X.shape
    out.reference_.predict(X[:3])


def test_fixed_class_weights_envelope_and_prediction_range():
    X, y = _data(seed=1)
    w = np.random.default_rng(2).integers(0, 4, size=len(y)).astype(float)
    D = X[:15] + 0.1
    mc = KernelModelClass(dictionary=D, gamma=0.4, norm_bound=3.0)
    mem, out = _fit_both(mc, X, y, w, chunks=90, eps=0.05)
    assert out.e_min_ == pytest.approx(mem.e_min_, rel=RTOL)
    _close(out.model_class_reliance([0, 2]), mem.model_class_reliance([0, 2]))
    env_m, env_o = mem.envelope(1, [0.02, 0.1]), out.envelope(1, [0.02, 0.1])
    np.testing.assert_allclose(env_o.upper, env_m.upper, rtol=RTOL)
    np.testing.assert_allclose(env_o.lower, env_m.lower, rtol=RTOL)
    rows = X[:5] * 0.9
    pm, po = mem.prediction_range(rows), out.prediction_range(rows)
    np.testing.assert_allclose(po.lower, pm.lower, rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(po.upper, pm.upper, rtol=RTOL, atol=RTOL)


def test_dictionary_draw_with_repeated_rows_and_fixed_penalty():
    X, y = _data(n=300, seed=3, decimals=0)  # many repeated rows: the draw is among the unique ones
    assert len(np.unique(X, axis=0)) < len(X)
    mc = KernelModelClass(dictionary=25, random_state=7, gamma=0.5, alpha=0.5)
    mem, out = _fit_both(mc, X, y, chunks=70)
    np.testing.assert_array_equal(out.parametrization_.D, mem.parametrization_.D)
    assert out.parametrization_.r == pytest.approx(mem.parametrization_.r, rel=RTOL)
    _close(out.model_class_reliance(1), mem.model_class_reliance(1))


@pytest.mark.parametrize("range_bytes", [64 * 2**20, 3000])
@pytest.mark.parametrize("decimals", [None, 0])
def test_dictionary_draw_is_the_in_memory_one_with_bounded_ranges(monkeypatch, range_bytes, decimals):
    from rashomon.sets.scale import _dask_draw

    monkeypatch.setattr(_dask_draw, "_RANGE_BYTES", range_bytes)  # 3000 bytes: about 60 lexicographic ranges
    X, y = _data(n=2000, seed=6, decimals=decimals)
    Xd = da.from_array(X, chunks=(170, 3))
    for m, seed in ((1, 0), (40, 3), (len(np.unique(X, axis=0)), 5)):
        mc = KernelModelClass(dictionary=m, random_state=seed)
        sample = _dask_draw.partition_sample(Xd).compute()
        D = _dask_draw.draw_dictionary(Xd, sample, m, seed, len(X))
        np.testing.assert_array_equal(D, mc.dictionary_points(X))


def test_capped_dictionary_of_masked_rows(monkeypatch):
    from rashomon.sets.out_of_core import dask_dictionary
    from rashomon.sets.scale import _dask_draw

    monkeypatch.setattr(_dask_draw, "_RANGE_BYTES", 2000)
    X, _ = _data(n=900, seed=8, decimals=0)
    mask = (np.arange(900) % 3 == 0).astype(float)
    df = dd.from_pandas(pd.DataFrame(X, columns=list("abc")).assign(m=mask), npartitions=4)
    U = np.unique(X[mask > 0], axis=0)
    Ub = np.unique(X[mask > 0][:, [0, 2]], axis=0)
    every, part = dask_dictionary(df[list("abc")], df["m"], len(U), columns=[[0, 1, 2], [0, 2]], n_rows=900)
    np.testing.assert_array_equal(every, U)
    np.testing.assert_array_equal(part, Ub)
    (drawn,) = dask_dictionary(df[list("abc")], df["m"], 10, random_state=4, n_rows=900)
    np.testing.assert_array_equal(drawn, KernelModelClass(dictionary=10, random_state=4).dictionary_points(U))


def test_reference_member_from_other_rows():
    X, y = _data(n=500, seed=4)
    member = KernelModelClass(dictionary=20, alphas=ALPHAS, gammas=GAMMAS).fit_reference(X[:200], y[:200])
    a = RashomonSet(KernelModelClass(), 0.1, reference=member).fit(X[200:], y[200:])
    b = RashomonSet(KernelModelClass(), 0.1, reference=member).fit(
        da.from_array(X[200:], chunks=(100, 3)), da.from_array(y[200:], chunks=100)
    )
    assert b.e_ref_ == pytest.approx(a.e_ref_, rel=RTOL)
    _close(b.model_class_reliance(2), a.model_class_reliance(2))


def test_parquet_strata_column_workers_and_partitions(client, tmp_path):
    import dask

    X, y = _data(n=480, seed=5)
    s = (X[:, 2] > 0.3).astype(int) + 2 * (X[:, 1] > 0)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(target=y, stratum=s)
    for i in range(3):
        df.iloc[i * 160 : (i + 1) * 160].to_parquet(tmp_path / f"part{i}.parquet")
    ddf = dd.read_parquet(str(tmp_path))
    mc = KernelModelClass(dictionary=20, alphas=ALPHAS, gammas=GAMMAS)
    mem = RashomonSet(mc, 0.1).fit(df[["a", "b", "c"]], y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = RashomonSet(mc, 0.1).fit(ddf[["a", "b", "c"]], ddf["target"])
        cond = out.model_class_reliance("a", conditional=True, strata=ddf["stratum"])
        plain = out.model_class_reliance(["b", "c"])
    assert list(out.feature_names_in_) == ["a", "b", "c"]
    _close(cond, mem.model_class_reliance("a", conditional=True, strata=s))
    _close(plain, mem.model_class_reliance(["b", "c"]))
    # any number of workers: the same graph, the same bits (synchronous scheduler against the 2-worker cluster)
    with dask.config.set(scheduler="synchronous"):
        one = RashomonSet(mc, 0.1).fit(ddf[["a", "b", "c"]], ddf["target"])
        one_cond = one.model_class_reliance("a", conditional=True, strata=ddf["stratum"])
    assert (one.e_min_, one.epsilon_abs_) == (out.e_min_, out.epsilon_abs_)
    assert (one_cond.lower, one_cond.upper) == (cond.lower, cond.upper)
    # other partitionings: the same set to rounding (the sums are taken in another order)
    re = RashomonSet(mc, 0.1).fit(
        ddf[["a", "b", "c"]].repartition(npartitions=5), ddf["target"].repartition(npartitions=5)
    )
    assert re.e_min_ == pytest.approx(out.e_min_, rel=1e-12)
    _close(re.model_class_reliance(["b", "c"]), plain)
    assert len(pickle.dumps(out)) < 2_000_000


def test_queries_that_need_the_rows_fail_clearly():
    X, y = _data(n=200)
    out = RashomonSet(KernelModelClass(dictionary=10, gamma=0.5, norm_bound=2.0), 0.1).fit(
        da.from_array(X, chunks=(50, 3)), da.from_array(y, chunks=50)
    )
    for call in (
        lambda: out.model_class_reliance(0, conditional=True),
        lambda: out.pd_band(0),
        lambda: out.reweighted(np.ones(200)),
        lambda: out.prediction_range(),
    ):
        with pytest.raises(RashomonInputError, match="Dask"):
            call()
    with pytest.raises(RashomonInputError, match="'strata' parameter.*length"):
        out.model_class_reliance(0, conditional=True, strata=da.from_array(np.arange(150) % 2, chunks=50))


@pytest.mark.parametrize(
    ("mc", "match"),
    [
        (KernelModelClass(kernel=lambda A, B: A @ B.T, dictionary=5), "'kernel' parameter of KernelModelClass"),
        (KernelModelClass(gamma="nadaraya_watson", dictionary=5), "'gamma' parameter of KernelModelClass"),
        (KernelModelClass(e_switch="divide", dictionary=5), "'e_switch' parameter of KernelModelClass"),
        (KernelModelClass(dictionary=10_000), "'dictionary' parameter of KernelModelClass must be between 1 and"),
    ],
)
def test_unsupported_kernel_settings_are_named(mc, match):
    X, y = _data(n=100)
    with pytest.raises(RashomonInputError, match=match):
        RashomonSet(mc).fit(da.from_array(X, chunks=(50, 3)), da.from_array(y, chunks=50))
