"""Property tests (hypothesis): on arbitrary data — extreme magnitudes, ties, duplicate rows, constant
columns — public functions either answer (finite numbers, lower <= MR(reference) <= upper, sampled
members inside the bounds) or raise the library's documented RashomonInputError; nothing else.

``make test`` runs a few examples per property; ``make repro`` runs ``--hypothesis-profile=long``
(2,000 per property).
"""

import warnings

import numpy as np
import pytest

hyp = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402

from rashomon import (  # noqa: E402
    KernelModelClass,
    LinearModelClass,
    RashomonInputError,
    RashomonSet,
    RashomonWarning,
    feature_reliance,
    model_reliance,
    rashomon_pd_band,
)

REL = 1e-9


@st.composite
def datasets(draw, max_rows=30, max_cols=4):
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(3, max_rows))
    p = draw(st.integers(1, max_cols))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if draw(st.booleans()):  # ties: a few distinct values per column
        X = np.round(X * draw(st.integers(1, 3))) / 2
    if draw(st.booleans()) and n >= 4:  # duplicate rows
        X[n // 2 :] = X[: n - n // 2]
    X = X * 10.0 ** np.array([draw(st.integers(-150, 150)) for _ in range(p)])
    beta = rng.normal(size=p) / np.maximum(np.abs(X).max(axis=0), 1e-300)
    y = X @ beta + draw(st.sampled_from([0.0, 1e-6, 0.3, 1.0])) * rng.normal(size=n)
    y = y * 10.0 ** draw(st.integers(-90, 90))
    return X, y


def _finite(*vals):
    return all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in vals)


def _run(f):
    """Call f with every warning an error: the only acceptable exception is RashomonInputError."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the package's own notice that a set holds a constant model (ε_abs >= e_null) is right on noise-only data
        warnings.filterwarnings("ignore", message=".*null model", category=RashomonWarning)
        try:
            return f()
        except RashomonInputError:
            return None


@given(datasets())
def test_model_reliance_property(data):
    X, y = data
    model = _run(lambda: LinearRegression().fit(X, y))
    if model is None:
        return
    res = _run(lambda: model_reliance(model, X, y, 0))
    if res is not None:
        assert _finite(res.e_orig, res.e_switch, res.difference)


@given(datasets())
def test_feature_reliance_property(data):
    X, y = data
    model = LinearRegression().fit(X, y)
    res = _run(lambda: feature_reliance(model, X, y))
    if res is not None:
        for r in res.results:
            assert _finite(r.e_orig, r.e_switch, r.difference)


@pytest.mark.parametrize("mc", [LinearModelClass(), KernelModelClass(gamma=0.5)], ids=["linear", "kernel"])
@given(
    data=datasets(max_rows=25, max_cols=3),
    eps=st.sampled_from([0.0, 1e-12, 0.01, 0.3]),
    kind=st.sampled_from(["ratio", "difference"]),
)
def test_model_class_reliance_property(mc, data, eps, kind):
    X, y = data
    rs = _run(lambda: RashomonSet(mc, eps).fit(X, y))
    if rs is None:
        return
    res = _run(lambda: rs.model_class_reliance(0, kind=kind))
    if res is None:
        return
    mr = res.reference_model.mr if res.reference_model is not None else None
    # the stated tolerance of a certified MCR: 4·tol relative (its own consistency check)
    slack = 4 * res.tol * max(1.0, abs(res.lower), abs(res.upper))
    assert _finite(res.lower, res.upper) and res.lower <= res.upper + slack
    if mr is not None:
        assert res.lower - slack <= mr <= res.upper + slack


@given(data=datasets(max_rows=25, max_cols=3), eps=st.sampled_from([0.0, 0.01, 0.3]))
def test_pd_band_property(data, eps):
    X, y = data
    band = _run(lambda: rashomon_pd_band(LinearModelClass(), X, y, 0, epsilon=eps, grid_resolution=4))
    if band is None:
        return
    assert _finite(band.lower, band.upper, band.reference)
    slack = REL * np.maximum(1.0, np.abs(band.reference))
    assert np.all(band.lower <= band.reference + slack) and np.all(band.reference <= band.upper + slack)


@pytest.mark.parametrize("mc", [LinearModelClass(), KernelModelClass(gamma=0.5)], ids=["linear", "kernel"])
@given(data=datasets(max_rows=25, max_cols=3), eps=st.sampled_from([0.01, 0.3]), seed=st.integers(0, 2**31))
def test_set_queries_validity_by_sampling(mc, data, eps, seed):
    """>= 100 members per problem: every member's prediction inside every row's range and its MR inside MCR."""
    X, y = data
    rs = _run(lambda: RashomonSet(mc, eps).fit(X, y))
    if rs is None:
        return
    pr = _run(lambda: rs.prediction_range(X))
    smp = _run(lambda: rs.sample(100, random_state=seed))
    mcr = _run(lambda: rs.model_class_reliance(0))
    if pr is None or smp is None or mcr is None:
        return
    assert _finite(pr.lower, pr.upper)
    P = smp.predict(X)
    slack = REL * np.maximum(1.0, np.maximum(np.abs(pr.lower), np.abs(pr.upper)))
    assert np.all(P >= pr.lower - slack) and np.all(P <= pr.upper + slack)
    es = rs.problem(0).e_switch
    mr = es.evaluate_many(smp.thetas) / smp.e_orig
    s2 = 4 * mcr.tol * max(1.0, abs(mcr.upper))
    assert np.all(mr >= mcr.lower - s2) and np.all(mr <= mcr.upper + s2)
