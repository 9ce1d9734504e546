"""The logistic class on Dask: the fit by Newton passes equals the in-memory fit; what needs the rows says so."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonInputError, RashomonSet

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

TOL = 1e-9  # Dask vs in memory: the same Newton iterations, only the order of the row sums differs


def _data(n=2400, p=4, seed=0, labels=(0, 1)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3, size=p) + rng.normal(size=p) * 4
    z = (X - X.mean(0)) @ rng.normal(size=p) / X.std(0).mean()
    y = np.where(z + rng.logistic(size=n) > 0.3, labels[1], labels[0])
    return X, y


def _same_fit(a, b):
    assert abs(a.e_min_ - b.e_min_) <= TOL * a.e_min_
    assert abs(a.epsilon_abs_ - b.epsilon_abs_) <= TOL * a.epsilon_abs_
    assert a.e_null_ == pytest.approx(b.e_null_, rel=1e-12)
    np.testing.assert_allclose(b.theta_min_, a.theta_min_, rtol=0, atol=TOL * max(1.0, np.abs(a.theta_min_).max()))
    np.testing.assert_allclose(b.reference_.coef_, a.reference_.coef_, rtol=TOL, atol=TOL)
    assert b.parametrization_.r == pytest.approx(a.parametrization_.r, rel=TOL)
    np.testing.assert_array_equal(b.reference_.classes_, a.reference_.classes_)


@pytest.mark.parametrize(
    "norm_bound, fit_intercept, labels", [(2.0, True, (0, 1)), (50.0, True, (-1, 1)), (3.0, False, (0, 1))]
)
def test_fit_matches_in_memory(norm_bound, fit_intercept, labels):
    X, y = _data(labels=labels)
    mc = LogisticModelClass(norm_bound=norm_bound, fit_intercept=fit_intercept)
    a = RashomonSet(mc, 0.05).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = RashomonSet(mc, 0.05).fit(da.from_array(X, chunks=(700, 4)), da.from_array(y, chunks=700))
    _same_fit(a, b)
    if norm_bound == 50.0:  # the ball does not bind at θ_min: tightened to the certified bound, as in memory
        assert b.parametrization_.r < 50.0
    np.testing.assert_allclose(b.reference_.predict_proba(X[:50]), a.reference_.predict_proba(X[:50]), atol=TOL)


def test_dataframe_and_partitions_and_repr():
    X, y = _data(seed=1)
    df = pd.DataFrame(X, columns=list("abcd")).assign(t=y)
    mc = LogisticModelClass(norm_bound=1.5)
    a = RashomonSet(mc, 0.1).fit(df[list("abcd")], df["t"])
    fits = []
    for k in (1, 3, 7):
        ddf = dd.from_pandas(df, npartitions=k)
        fits.append(RashomonSet(mc, 0.1).fit(ddf[list("abcd")], ddf["t"]))
        _same_fit(a, fits[-1])
    assert list(fits[0].feature_names_in_) == list("abcd")
    assert "n_rows=2400" in repr(fits[0])


def test_same_bits_on_local_cluster(client):
    X, y = _data(seed=2)
    mc = LogisticModelClass(norm_bound=2.0)
    Xd, yd = da.from_array(X, chunks=(600, 4)), da.from_array(y, chunks=600)
    on_cluster = RashomonSet(mc, 0.05).fit(Xd, yd)
    import dask

    with dask.config.set(scheduler="sync"):  # one thread: the same graph, so the same bits
        alone = RashomonSet(mc, 0.05).fit(Xd, yd)
    assert on_cluster.e_min_ == alone.e_min_
    np.testing.assert_array_equal(on_cluster.theta_min_, alone.theta_min_)
    _same_fit(RashomonSet(mc, 0.05).fit(X, y), on_cluster)


def test_clear_errors():
    X, y = _data(n=600, seed=3)
    Xd, yd = da.from_array(X, chunks=(200, 4)), da.from_array(y, chunks=200)
    with pytest.raises(RashomonInputError, match="hinge loss is not smooth"):
        RashomonSet(HingeModelClass(norm_bound=1.0), 0.05).fit(Xd, yd)
    for nb in (None, np.inf):
        with pytest.raises(RashomonInputError, match="'norm_bound' parameter of LogisticModelClass must be a finite"):
            RashomonSet(LogisticModelClass(norm_bound=nb), 0.05).fit(Xd, yd)
    with pytest.raises(RashomonInputError, match=r"labels in \{-1, \+1\} or \{0, 1\}"):
        RashomonSet(LogisticModelClass(norm_bound=1.0), 0.05).fit(Xd, yd * 2)
    with pytest.raises(RashomonInputError, match="both classes"):
        RashomonSet(LogisticModelClass(norm_bound=1.0), 0.05).fit(Xd, da.zeros(600, chunks=200))
    rs = RashomonSet(LogisticModelClass(norm_bound=1.0), 0.05).fit(Xd, yd)
    for query in (
        lambda: rs.model_class_reliance(0),
        lambda: rs.envelope(0, [0.05]),
        lambda: rs.disparity_range(X[:, 0] > 0),
    ):
        with pytest.raises(RashomonInputError, match="compute|in memory"):
            query()


def test_model_reliance_of_a_member_matches_in_memory():
    from rashomon import model_reliance

    X, y = _data(n=1501, seed=4)
    X[:, 1] = np.round(X[:, 1])  # few distinct values: the exact U-statistic reduces over partitions
    df = pd.DataFrame(X, columns=list("abcd")).assign(t=y)
    ddf = dd.from_pandas(df, npartitions=4)
    rs = RashomonSet(LogisticModelClass(norm_bound=2.0), 0.05).fit(ddf[list("abcd")], ddf["t"])
    m = rs.reference_
    ex = model_reliance(m, ddf[list("abcd")], ddf["t"], "b")
    assert (ex.method, ex.exact_algorithm) == ("exact", "distinct-values")
    mem = model_reliance(m, df[list("abcd")], df["t"], "b")
    assert ex.e_switch == pytest.approx(mem.e_switch, rel=TOL) and ex.e_orig == pytest.approx(mem.e_orig, rel=TOL)
    # a continuous feature: the divide estimator, named in the result, equal to the in-memory one
    dv = model_reliance(m, ddf[list("abcd")], ddf["t"], "a")
    assert dv.method == "divide" and dv.exact_algorithm is None
    mem = model_reliance(m, df[list("abcd")], df["t"], "a", method="divide")
    assert dv.e_switch == pytest.approx(mem.e_switch, rel=TOL) and dv.ratio == pytest.approx(mem.ratio, rel=TOL)
    with pytest.warns(UserWarning, match="valid feature names"):  # an array for a model fitted with names
        arr = model_reliance(m, da.from_array(X, chunks=(400, 4)), da.from_array(y, chunks=400), 0, method="divide")
    assert arr.e_switch == pytest.approx(mem.e_switch, rel=TOL)


@pytest.mark.parametrize("norm_bound", [0.4, 50.0])  # the ball binds at some ends / is inactive (tightened)
def test_prediction_range_matches_in_memory(norm_bound):
    X, y = _data(seed=5)
    mc = LogisticModelClass(norm_bound=norm_bound)
    a = RashomonSet(mc, 0.05).fit(X, y)
    b = RashomonSet(mc, 0.05).fit(da.from_array(X, chunks=(800, 4)), da.from_array(y, chunks=800))
    rows = X[::60]
    for scale in ("score", "probability"):
        ra, rb = a.prediction_range(rows, scale=scale), b.prediction_range(rows, scale=scale, return_models=True)
        assert rb.scale == scale
        for end in ("lower", "upper", "lower_attained", "upper_attained", "reference"):
            np.testing.assert_allclose(getattr(rb, end), getattr(ra, end), rtol=0, atol=TOL)
        assert np.all(rb.lower <= rb.lower_attained) and np.all(rb.upper_attained <= rb.upper)
    # the attaining members are members: loss at most ε (to rounding) and inside the ball
    th = rb.lower_models
    par = b.parametrization_
    D = np.column_stack([np.ones(len(X)), (X - par.mean) / par.sd])
    ye = 2.0 * y - 1
    losses = np.logaddexp(0, -ye[:, None] * (D @ th.T)).mean(axis=0)
    assert np.all(losses <= b.epsilon_abs_ * (1 + 1e-12))
    assert np.all(np.einsum("ij,jk,ik->i", th, par.B, th) <= par.r * (1 + 1e-9))


@pytest.mark.parametrize("norm_bound", [0.4, 50.0])
def test_multiplicity_matches_in_memory(norm_bound):
    X, y = _data(seed=6)
    mc = LogisticModelClass(norm_bound=norm_bound)
    a = RashomonSet(mc, 0.05).fit(X, y)
    b = RashomonSet(mc, 0.05).fit(da.from_array(X, chunks=(800, 4)), da.from_array(y, chunks=800))
    rows = X[:400]
    for threshold in (None, 0.3):
        ma, mb = a.multiplicity(rows, threshold), b.multiplicity(rows, threshold)
        np.testing.assert_array_equal(mb.flips, ma.flips)
        np.testing.assert_array_equal(mb.reference_decision, ma.reference_decision)
        assert mb.ambiguity == ma.ambiguity and mb.scale == "probability"
        assert sum(v for k, v in mb.settled.items() if k != "open") == len(rows)
        assert mb.settled["solved"] < len(rows) / 4  # screened: few rows need exact solves
        assert mb.discrepancy_lower <= mb.discrepancy_upper
        # every witnessed flip is by a member of the set
        flipped = np.flatnonzero(mb.flips)
        if flipped.size:
            th = np.where(
                mb.reference_decision[flipped, None], mb.ranges.lower_models[flipped], mb.ranges.upper_models[flipped]
            )
            par = b.parametrization_
            D = np.column_stack([np.ones(len(X)), (X - par.mean) / par.sd])
            assert np.all(
                np.logaddexp(0, -(2.0 * y - 1)[:, None] * (D @ th.T)).mean(axis=0) <= b.epsilon_abs_ * (1 + 1e-12)
            )


def test_multiplicity_near_collinear_columns_on_the_ball():
    """Two columns equal to 1e-3 and a small norm bound: the loss is flat along their difference, and a Newton step
    of an end that lies on the ball overshot it to overflow (a NumPy warning, then a failed consistency check).
    The step is now cut at twice the ball's radius: no warning, and every decision stays valid: a flip the Dask
    path reports is a flip of the exact ranges, and its certified upper share covers the exact ambiguity."""
    rng = np.random.default_rng(5)
    n, p = 1000, 3
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3, size=p) + rng.normal(size=p) * 2
    X[:, 1] = X[:, 0] + 1e-3 * rng.normal(size=n)
    z = (X - X.mean(0)) @ rng.normal(size=p) / X.std(0).mean()
    y = (z + rng.logistic(size=n) > 0.3).astype(int)
    mc = LogisticModelClass(norm_bound=0.5, fit_intercept=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*null model.*")
        warnings.simplefilter("error", RuntimeWarning)
        with dask.config.set(scheduler="synchronous"):
            b = RashomonSet(mc, 0.2).fit(da.from_array(X, chunks=(334, p)), da.from_array(y, chunks=334))
            mb = b.multiplicity(X[:600], threshold=0.3, scale="probability")
        ma = RashomonSet(mc, 0.2).fit(X, y).multiplicity(X[:600], threshold=0.3, scale="probability")
    assert not np.any(mb.flips & ~ma.flips)
    assert mb.discrepancy_upper >= ma.ambiguity
