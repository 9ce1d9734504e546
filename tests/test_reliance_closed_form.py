"""The linear closed form of feature_reliance: all features and groups from one set of sufficient statistics.

References: the brute-force all-pairs loop (tests/_brute.py), the generic streamed exact path
(closed_form=False), the previous per-feature formula (linear_squared_e_switch) and, for
ill-conditioned data, the U-statistic in exact rational arithmetic.
"""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rashomon import feature_reliance, model_reliance
from rashomon.reliance._linear import LinearSwitchStats, linear_squared_e_switch

from ._brute import brute_e_switch

GROUPS = [[0], [1], [2], [3], [4], [0, 4], [1, 2, 3], [0, 1, 2, 3, 4]]


def _data(n=120, p=5, offset=0.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.array([1.0, 1e3, 1e-2, 1.0, 5.0])[:p]
    X[:, 3] = rng.integers(0, 3, size=n)
    X[:, 4] = 0.99 * X[:, 0] + 0.01 * X[:, 4]  # nearly collinear with column 0
    X = X + offset
    y = X @ np.array([1.0, -1e-3, 30.0, 0.8, 0.5])[:p] + rng.normal(size=n)
    return X, y


def _exact_rational(X, y, pred, beta, group):
    """Σ_{i≠j} (e_j + u_j − u_i)² / (n(n−1)) in exact rational arithmetic (e = y − pred, u = X_G β_G)."""
    n = X.shape[0]
    e = [Fraction(float(a)) - Fraction(float(b)) for a, b in zip(y, pred)]
    u = [sum(Fraction(float(X[i, k])) * Fraction(float(beta[k])) for k in group) for i in range(n)]
    r = [a + b for a, b in zip(e, u)]
    total = n * sum(a * a for a in r) + n * sum(a * a for a in u) - 2 * sum(r) * sum(u) - sum(a * a for a in e)
    return float(total / (n * (n - 1)))


def test_all_features_and_groups_match_brute_force():
    X, y = _data(n=40)
    m = LinearRegression().fit(X, y)
    fr = feature_reliance(m, X, y, features=GROUPS)
    assert all(r.closed_form and r.exact_algorithm == "linear" for r in fr.results)
    for g, r in zip(GROUPS, fr.results):
        ref = brute_e_switch(m.predict, lambda a, b: (a - b) ** 2, X, y, g)
        assert r.e_switch == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize(
    "model", [LinearRegression(), make_pipeline(StandardScaler(), Ridge(alpha=3.0))], ids=["ols", "scaled-ridge"]
)
def test_matches_per_feature_formula_and_generic_path(model):
    X, y = _data(n=300)
    m = model.fit(X, y)
    fr = feature_reliance(m, X, y, features=GROUPS)
    slow = feature_reliance(m, X, y, features=GROUPS, closed_form=False)
    beta = np.asarray(m.predict(np.eye(5)) - m.predict(np.zeros((1, 5))))
    pred = m.predict(X)
    for g, r, s in zip(GROUPS, fr.results, slow.results):
        old = linear_squared_e_switch(X, y, pred, beta, g)[1]
        assert r.e_switch == pytest.approx(old, rel=1e-10)
        assert s.exact_algorithm == "distinct-values"
        assert r.e_switch == pytest.approx(s.e_switch, rel=1e-9)
    assert fr.e_orig == pytest.approx(slow.e_orig, rel=1e-12)
    # model_reliance on one group gives the same value as the all-at-once call
    assert model_reliance(m, X, y, [1, 2, 3]).e_switch == pytest.approx(fr.e_switch[6], rel=1e-12)


def _dyadic_data(n, offset, seed):
    """Data, coefficients and targets on a coarse binary grid: every prediction is exact in float64
    whatever the summation order, so the only rounding left is the statistic's own."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 5)) * 2**8) / 2**8 * np.array([1.0, 2**10, 2**-7, 1.0, 4.0])
    X[:, 3] = rng.integers(0, 3, size=n)
    X[:, 4] = X[:, 0] + np.round(rng.normal(size=n) * 2**4) / 2**10  # nearly collinear with column 0
    X = X + offset
    beta = np.array([1.0, -(2.0**-10), 32.0, 0.75, 0.5])
    y = X @ beta + 2.0 + np.round(rng.normal(size=n) * 2**8) / 2**8
    return X, y, beta


@pytest.mark.parametrize("chunk_rows", [7, 10_000])
@pytest.mark.parametrize("offset", [0.0, 1e4, 1e6, 2.0**26])
def test_sufficient_statistics_exact_on_large_offsets(offset, chunk_rows, monkeypatch):
    # Centred sums: a large offset does not cancel. Compared with the exact rational U-statistic
    # (relative 1e-12), in one chunk and in chunks of 7 rows; the previous formula loses digits
    # here (~1e-9 relative at an offset of 1e8).
    import rashomon.reliance._linear as lin

    monkeypatch.setattr(lin, "_CHUNK_BYTES", 8 * 5 * chunk_rows)
    X, y, beta = _dyadic_data(300, offset, seed=3)
    pred = X @ beta + 2.0
    assert np.array_equal(pred, X[:, ::-1] @ beta[::-1] + 2.0)  # exact whatever the order
    stats = LinearSwitchStats(X, y, beta, 2.0, GROUPS)
    for g in GROUPS:
        assert stats.e_switch(g) == pytest.approx(_exact_rational(X, y, pred, beta, g), rel=1e-12)
    assert stats.e_orig == pytest.approx(float(np.mean((y - pred) ** 2)), rel=1e-14)


def test_chunked_pass_matches_one_block(monkeypatch):
    import rashomon.reliance._linear as lin

    X, y = _data(n=1000, offset=1e3)
    beta = np.array([1.0, -1e-3, 30.0, 0.8, 0.5])
    one = LinearSwitchStats(X, y, beta, 0.0, GROUPS)
    monkeypatch.setattr(lin, "_CHUNK_BYTES", 8 * 5 * 7)  # chunks of 7 rows
    many = LinearSwitchStats(X, y, beta, 0.0, GROUPS)
    for g in GROUPS:
        assert many.e_switch(g) == pytest.approx(one.e_switch(g), rel=1e-12)


def test_named_groups_dataframe_and_dict():
    X, y = _data(n=200)
    df = pd.DataFrame(X, columns=list("abcde"))
    m = LinearRegression().fit(df, y)
    fr = feature_reliance(m, df, y, features={"a": "a", "bcd": ["b", "c", "d"]})
    assert fr.names == ["a", "bcd"]
    assert fr.e_switch[1] == pytest.approx(
        model_reliance(m, df, y, ["b", "c", "d"], closed_form=False).e_switch, rel=1e-9
    )
    allf = feature_reliance(m, df, y)
    assert allf.e_switch[0] == pytest.approx(fr.e_switch[0], rel=1e-12)


def test_zero_coefficient_feature_has_no_reliance():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    y = X[:, 0] + rng.normal(size=100)
    m = LinearRegression().fit(X, y)
    m.coef_[2] = 0.0
    fr = feature_reliance(m, X, y)
    assert fr.e_switch[2] == fr.e_orig
    assert fr.ratio[2] == 1.0


def _count_passes(monkeypatch):
    import rashomon.reliance._linear as lin

    calls = []
    real = lin._sums
    monkeypatch.setattr(lin, "_sums", lambda *a: calls.append(a[4] is None) or real(*a))
    return calls


@pytest.mark.parametrize("order", ["C", "F"])
def test_misleading_sample_takes_the_sums_again_about_the_means(order, monkeypatch):
    # The origin comes from sampled rows; here the two sampled rows (first and last) sit 1e3 away from
    # the rest of a column centred at 1e6: the first pass would cancel ~6 digits, so the sums are taken
    # again about the exact means (two passes) and match the exact rational U-statistic (1e-12).
    import rashomon.reliance._linear as lin

    X, y, beta = _dyadic_data(300, 1e6, seed=5)
    X[[0, -1], 0] += 1024.0
    y = y + 1024.0 * np.isin(np.arange(300), [0, 299])  # keep these rows' residuals ordinary
    X = np.asarray(X, order=order)
    pred = X @ beta + 2.0
    monkeypatch.setattr(lin, "_SAMPLE_ROWS", 2)
    monkeypatch.setattr(lin, "_CHUNK_BYTES", 8 * 5 * 16)
    calls = _count_passes(monkeypatch)
    stats = LinearSwitchStats(X, y, beta, 2.0, GROUPS)
    assert len(calls) == 2 and stats.bounded
    for g in GROUPS:
        assert stats.e_switch(g) == pytest.approx(_exact_rational(X, y, pred, beta, g), rel=1e-12)
    assert stats.e_orig == pytest.approx(float(np.mean((y - pred) ** 2)), rel=1e-14)


def test_origin_without_copy_for_centred_columns_and_one_pass(monkeypatch):
    # Columns centred near 0 (and a column of zeros) are summed about 0 (no shifted copy of X); a
    # constant non-zero column (an added column of ones) is summed about its value: one pass either way.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2000, 4))
    X[:, 3] = 0.0
    beta = np.array([1.0, -2.0, 0.5, 3.0])
    y = X @ beta + 1.0 + rng.normal(size=2000)
    calls = _count_passes(monkeypatch)
    for const, shifted in [(0.0, False), (1.0, True)]:
        X[:, 3] = const
        stats = LinearSwitchStats(X, y, beta, 1.0, [[0], [1], [2], [3]])
        assert calls.pop() is not shifted and not calls
        pred = X @ beta + 1.0
        for j in range(3):
            assert stats.e_switch([j]) == pytest.approx(linear_squared_e_switch(X, y, pred, beta, [j])[1], rel=1e-12)
        assert stats.e_switch([3]) == stats.e_orig  # a constant column: switching it changes nothing


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 2e150, -1e151, 1e300])
@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_the_pass_proves_x_finite_and_bounded(bad, offset, monkeypatch):
    # A NaN, ±inf or a value beyond MAX_MAGNITUDE anywhere (here a row the origin's sample does not
    # see) makes the pass unable to prove X bounded: the check is called (it raises the clear error).
    import rashomon.reliance._linear as lin

    monkeypatch.setattr(lin, "_CHUNK_BYTES", 8 * 3 * 64)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3)) + offset
    beta = np.array([1.0, 2.0, 3.0])
    y = X @ beta + rng.normal(size=5000)
    called = []
    clean = LinearSwitchStats(X, y, beta, 0.0, GROUPS[:3], check=lambda: called.append(1))
    assert clean.bounded and not called
    X[2501, 1] = bad
    with pytest.raises(ValueError, match="checked"):
        LinearSwitchStats(X, y, beta, 0.0, GROUPS[:3], check=lambda: (_ for _ in ()).throw(ValueError("checked")))


def test_values_at_the_magnitude_limit():
    # Sums of squares beyond MAX_MAGNITUDE² prove nothing: the exact check is made (and passes here,
    # every value is within the limit), the statistics are those of the data.
    X = np.array([[1e150, 0.0], [-1e150, 1.0], [0.5e150, 2.0], [0.0, 3.0]])
    beta, y = np.array([1e-150, 1.0]), np.array([0.0, 1.5, 1.0, 4.0])
    called = []
    stats = LinearSwitchStats(X, y, beta, 0.0, [[0], [1]], check=lambda: called.append(1))
    assert called and not stats.bounded
    pred = X @ beta
    for j in range(2):
        assert stats.e_switch([j]) == pytest.approx(_exact_rational(X, y, pred, beta, [j]), rel=1e-12)


@pytest.mark.parametrize("x_offset, y_offset", [(1e6, 0.0), (0.0, 1e6), (1e6, 1e6), (-3e4, 2e8)])
def test_badly_centred_data(x_offset, y_offset):
    # Columns and target far from 0 (a model fitted elsewhere, so the residuals do not average 0 either):
    # every feature and group equals the U-statistic in exact rational arithmetic (of the model's own
    # predictions) to 1e-10, the generic path to 1e-9 and the per-feature formula (which centres the
    # group's columns before they meet β) to 1e-10.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1500, 5)) * np.array([1.0, 30.0, 0.01, 1.0, 5.0]) + x_offset
    y = (X - x_offset) @ np.array([1.0, -0.2, 30.0, 0.8, 0.5]) + rng.normal(size=1500) + y_offset
    m = LinearRegression().fit(X[:1000], y[:1000])
    m.intercept_ += 0.3  # biased on the rows used
    Xt, yt = X[1000:], y[1000:]
    fr = feature_reliance(m, Xt, yt, features=GROUPS)
    slow = feature_reliance(m, Xt, yt, features=GROUPS, closed_form=False)
    pred = m.predict(Xt)
    for g, r, s in zip(GROUPS, fr.results, slow.results):
        assert r.exact_algorithm == "linear"
        assert r.e_switch == pytest.approx(_exact_rational(Xt, yt, pred, m.coef_, g), rel=1e-10)
        assert r.e_switch == pytest.approx(s.e_switch, rel=1e-9)
        assert linear_squared_e_switch(Xt, yt, pred, m.coef_, g)[1] == pytest.approx(
            _exact_rational(Xt, yt, pred, m.coef_, g), rel=1e-10
        )
    assert fr.e_orig == pytest.approx(float(np.mean((yt - pred) ** 2)), rel=1e-12)


def test_pipeline_with_a_large_intercept():
    # A Pipeline's coefficients are probed with steps as large as the data: an intercept of ~1e8 does not
    # cost them their digits (probing with unit steps gave ~1e-6 relative errors in e_switch here).
    rng = np.random.default_rng(6)
    X = rng.normal(size=(1500, 4)) * np.array([1.0, 0.01, 30.0, 2.0]) + 1e6
    y = (X - 1e6) @ np.array([1.0, 30.0, -0.2, 0.5]) + rng.normal(size=1500)
    m = make_pipeline(StandardScaler(), Ridge(alpha=1.0)).fit(X, y)
    fr = feature_reliance(m, X, y)
    slow = feature_reliance(m, X, y, closed_form=False)
    assert [r.exact_algorithm for r in fr.results] == ["linear"] * 4
    np.testing.assert_allclose(fr.e_switch, slow.e_switch, rtol=1e-8)


def test_the_linear_path_validates_x_in_its_own_pass(monkeypatch):
    # Clean data: no separate check of X (the statistics' pass proves it finite and bounded). A NaN,
    # inf or too large value anywhere (the first rows, which the model is probed on, or deep in X)
    # is the same clear error as before, naming the column.
    import rashomon.reliance._prepared as rel

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=20_000)
    m, md = LinearRegression().fit(X, y), LinearRegression().fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    real = rel.check_finite
    monkeypatch.setattr(rel, "check_finite", lambda *a, **k: pytest.fail("X checked twice"))
    fr = feature_reliance(md, pd.DataFrame(X, columns=["a", "b", "c"]), y)
    assert [r.exact_algorithm for r in fr.results] == ["linear"] * 3
    monkeypatch.setattr(rel, "check_finite", real)
    for row in (3, 12_345):
        for bad, match in [
            (np.nan, r"NaN or inf in column\(s\) \['b'\]"),
            (-np.inf, r"NaN or inf in column\(s\) \['b'\]"),
            (3e150, "of magnitude at most 1e\\+150"),
        ]:
            Xb = X.copy()
            Xb[row, 1] = bad
            with pytest.raises(ValueError, match=match):
                feature_reliance(md, pd.DataFrame(Xb, columns=["a", "b", "c"]), y)
            with pytest.raises(ValueError, match="'X' parameter of model_reliance"):
                model_reliance(m, Xb, y, 1)
