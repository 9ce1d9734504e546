"""The closed-form answers of a linear set with an inactive ball (``norm_bound=np.inf``): ``coef_range`` is built
once per fit and served as copies, ``prediction_range`` of new rows comes from one product; both agree with the
textbook ellipsoid formulas, give the same bits on every call and under any caller thread count, and a refit
invalidates the cache."""

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from rashomon import LinearModelClass, RashomonSet
from rashomon.utils import RashomonInputError


def _data(seed=0, n=120, p=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.arange(1, p + 1) + np.arange(p)
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    return X, y


def _fit(X, y, **kw):
    return RashomonSet(LinearModelClass(norm_bound=np.inf, **kw), 0.05).fit(X, y)


def _brute_coef(X, y, eps_abs):
    """Coefficient ranges over {β : mean (y - [1 X]β)² <= ε_abs} from the textbook ellipsoid formula."""
    D = np.column_stack([np.ones(len(X)), X])
    Q = D.T @ D / len(X)
    bh = np.linalg.solve(Q, D.T @ y / len(X))
    slack = eps_abs - np.mean((y - D @ bh) ** 2)
    half = np.sqrt(slack * np.diag(np.linalg.inv(Q)))
    return bh - half, bh + half, D, Q, bh, slack


def _fields(r):
    return [getattr(r, k) for k in ("lower", "upper", "lower_attained", "upper_attained", "reference")]


@pytest.mark.parametrize("standardize", [False, True])
def test_cached_coef_range_matches_brute_force_and_repeats_bits(standardize):
    X, y = _data()
    rs = _fit(X, y)
    first = rs.coef_range(standardize=standardize)
    second = rs.coef_range(standardize=standardize)
    for a, b in zip(_fields(first), _fields(second)):
        assert a.tobytes() == b.tobytes()
    lo, hi, *_ = _brute_coef(X, y, rs.epsilon_abs_)
    sd = np.concatenate([[1.0], X.std(axis=0)]) if standardize else 1.0
    # tolerance: two different linear solves of a 6 x 6 system (condition ~1e2), relative 1e-9
    np.testing.assert_allclose(first.lower, lo * sd, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(first.upper, hi * sd, rtol=1e-9, atol=1e-9)
    assert second.tol == 1e-10 and rs.coef_range(tol=1e-6).tol == 1e-6


def test_a_mutated_result_does_not_change_the_next_answer():
    X, y = _data()
    rs = _fit(X, y)
    ref = rs.coef_range(return_models=True)
    keep = [a.copy() for a in _fields(ref)] + [ref.lower_models.copy(), list(ref.names)]
    for a in _fields(ref) + [ref.lower_models, ref.upper_models]:
        a[...] = np.nan
    ref.names[0] = "changed"
    again = rs.coef_range(return_models=True)
    for a, b in zip(_fields(again) + [again.lower_models, again.names], keep):
        np.testing.assert_array_equal(a, b)
    assert again.member(1, "upper").coef_.shape == (X.shape[1],)


def test_a_refit_invalidates_the_cached_answer():
    X, y = _data()
    rs = _fit(X, y)
    before = rs.coef_range()
    X2, y2 = _data(seed=1)
    rs.fit(X2, y2)
    after = rs.coef_range()
    fresh = _fit(X2, y2).coef_range()
    assert not np.allclose(after.lower, before.lower)
    np.testing.assert_array_equal(after.lower, fresh.lower)
    np.testing.assert_array_equal(after.upper, fresh.upper)
    rs.fit(X, y)  # back to the first data: the first answer again
    np.testing.assert_array_equal(rs.coef_range().lower, before.lower)


def test_prediction_range_matches_brute_force_and_any_thread_count():
    X, y = _data()
    rs = _fit(X, y)
    Xq = X[:50] + 0.3
    out = []
    for k in (2, 1, 2):
        with threadpool_limits(limits=k):
            out.append(rs.prediction_range(Xq))
    for r in out[1:]:
        for a, b in zip(_fields(out[0]), _fields(r)):
            assert a.tobytes() == b.tobytes()
    *_, D, Q, bh, slack = _brute_coef(X, y, rs.epsilon_abs_)
    Dq = np.column_stack([np.ones(len(Xq)), Xq])
    half = np.sqrt(slack * np.einsum("ij,ij->i", Dq, np.linalg.solve(Q, Dq.T).T))
    # tolerance: as above, relative 1e-9 of the prediction's scale
    np.testing.assert_allclose(out[0].lower, Dq @ bh - half, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(out[0].upper, Dq @ bh + half, rtol=1e-9, atol=1e-9)
    assert out[0].names == [str(i) for i in range(50)]
    assert np.all(out[0].lower <= out[0].lower_attained) and np.all(out[0].upper_attained <= out[0].upper)


def test_prediction_range_new_rows_keep_their_checks():
    X, y = _data()
    cols = [f"f{j}" for j in range(X.shape[1])]
    rs = _fit(pd.DataFrame(X, columns=cols), y)
    df = pd.DataFrame(X[:7], columns=cols)
    np.testing.assert_array_equal(rs.prediction_range(df[cols[::-1]]).lower, rs.prediction_range(df).lower)
    bad = df.copy()
    bad.iloc[2, 1] = np.nan
    with pytest.raises(RashomonInputError, match="prediction_range"):
        rs.prediction_range(bad)
    with pytest.raises(RashomonInputError, match="'X' parameter of RashomonSet.prediction_range"):
        _fit(X, y).prediction_range(X[:7, :3])
    with pytest.raises(RashomonInputError, match="prediction_range"):
        rs.prediction_range(df.rename(columns={"f0": "g0"}))


def test_closed_results_hold_exactly_their_dataclass_fields():
    """The closed-form results are built without re-running the dataclass's __init__: they must hold exactly
    its fields, and compare equal field by field to one built through it."""
    from dataclasses import fields, replace

    X, y = _data()
    rs = _fit(X, y)
    for res in (rs.coef_range(), rs.coef_range(), rs.prediction_range(X[:9]), rs.functional_range(np.ones(6))):
        assert set(vars(res)) == {f.name for f in fields(res)}
        again = replace(res)
        for f in fields(res):
            a, b = getattr(res, f.name), getattr(again, f.name)
            assert a is b or (isinstance(a, np.ndarray) and np.array_equal(a, b)) or a == b
    assert rs.prediction_range(X[:9]).scale == "prediction"


def _blas_threads():
    from threadpoolctl import threadpool_info

    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})


def test_a_cached_coef_range_reads_no_thread_count_and_the_policy_still_holds(monkeypatch):
    """A cache hit calls no BLAS, so it skips the thread policy (no library's count is read); a call that
    computes still runs under one BLAS thread and restores the caller's setting."""
    from rashomon.sets.rows import _ranges
    from rashomon.utils import _threads

    X, y = _data()
    rs = _fit(X, y)
    first = rs.coef_range()
    calls, seen = [], []
    real_controller, real_compute = _threads._controller, _ranges._coef_range

    def controller():
        calls.append(1)
        return real_controller()

    def compute(*args):
        seen.append(_blas_threads())
        return real_compute(*args)

    monkeypatch.setattr(_threads, "_controller", controller)
    monkeypatch.setattr(_ranges, "_coef_range", compute)
    again = rs.coef_range()
    assert calls == [] and seen == [] and np.array_equal(again.lower, first.lower)
    with threadpool_limits(limits=2):
        callers = _blas_threads()
        rs.coef_range(standardize=True)  # not cached yet: computed under the policy
        assert _blas_threads() == callers
    assert calls and seen == [[1]]
