"""Cheap bootstraps: resamples as row weights on cached statistics, warm-started γ-searches.

Every number is compared with rebuilding the resample from scratch; bounds agree to the search
tolerance (both runs attain each bound within tol, so they differ by at most tol·max(1, |bound|)),
everything else to rounding.
"""

import numpy as np
import pytest

from rashomon import KernelModelClass, LinearModelClass, RashomonInputError, RashomonSet
from rashomon.model_classes import _kernel_stats
from rashomon.sets import BootstrapMCR, bootstrap_mcr

TOL = 2.0**-20


def _data(n=60, seed=0):
    """Coded features (few distinct values, as race/sex/priors in COMPAS) and one continuous column."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 2, n), rng.integers(0, 5, n), rng.normal(size=n)])
    y = 0.8 * X[:, 0] + 0.3 * X[:, 2] + np.sin(X[:, 3]) + 0.3 * rng.normal(size=n)
    return X.astype(float), y


def _weights(seed, n):
    return np.random.RandomState(seed).multinomial(n, np.full(n, 1.0 / n)).astype(float)


def _kernel_set(n=60, seed=0, intercept="mean", kind="relative", epsilon=0.1):
    X, y = _data(n, seed)
    mc = KernelModelClass(gamma=0.3, norm_bound=1.5, dictionary=X[::5], intercept=intercept)
    return RashomonSet(mc, epsilon, epsilon_kind=kind).fit(X, y), X, y


def _close(a, b, tol=TOL):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b)) + 1e-12


GROUPS = {"pair": [0, 1], "coded": [2], "continuous": [3]}


@pytest.mark.parametrize("intercept", ["mean", "free"])
@pytest.mark.parametrize("kind", ["ratio", "difference"])
def test_equals_rebuilding_each_resample(intercept, kind):
    rs, X, y = _kernel_set(intercept=intercept)
    boot = bootstrap_mcr(rs, GROUPS, 6, kind=kind, random_state=3)
    for r, seed in enumerate(boot.seeds):
        w = _weights(seed, len(y))
        # from scratch: no cache, the same class, reference function and ε rule on the resample
        fresh = RashomonSet(rs.model_class, rs.epsilon, epsilon_kind=rs.epsilon_kind, reference=rs.reference_).fit(
            X, y, sample_weight=w
        )
        for name, group in GROUPS.items():
            res = fresh.model_class_reliance(group, kind=kind, tol=TOL)
            assert boot.draws[name]["mr_ref"][r] == pytest.approx(res.reference_model.mr, rel=1e-9)
            assert _close(boot.draws[name]["lower"][r], res.lower), (name, r)
            assert _close(boot.draws[name]["upper"][r], res.upper), (name, r)
            assert res.lower_tight and res.upper_tight
        assert boot.tight[name][r].all()


def test_cold_and_warm_searches_agree():
    rs, _, _ = _kernel_set(seed=1)
    warm = bootstrap_mcr(rs, GROUPS, 5, random_state=0)
    cold = bootstrap_mcr(rs, GROUPS, 5, random_state=0, warm_start=False)
    assert np.array_equal(warm.seeds, cold.seeds)
    for name in GROUPS:
        np.testing.assert_allclose(warm.draws[name]["mr_ref"], cold.draws[name]["mr_ref"], rtol=1e-12)
        for key in ("lower", "upper"):
            assert all(_close(a, b) for a, b in zip(warm.draws[name][key], cold.draws[name][key]))


def test_n_jobs_gives_identical_numbers():
    rs, _, _ = _kernel_set(seed=2)
    a = bootstrap_mcr(rs, GROUPS, 6, random_state=5, n_jobs=1)
    b = bootstrap_mcr(rs, GROUPS, 6, random_state=5, n_jobs=2)
    for name in GROUPS:
        for key in ("mr_ref", "lower", "upper"):
            assert np.array_equal(a.draws[name][key], b.draws[name][key])


def test_linear_class_and_single_group():
    X, y = _data(80, 4)
    rs = RashomonSet(LinearModelClass(), 0.1).fit(X, y)
    boot = bootstrap_mcr(rs, 2, 4, random_state=1)
    assert list(boot.draws) == ["x2"]
    for r, seed in enumerate(boot.seeds):
        res = rs.reweighted(_weights(seed, len(y))).model_class_reliance(2)
        assert _close(boot.draws["x2"]["lower"][r], res.lower) and _close(boot.draws["x2"]["upper"][r], res.upper)
    lo, hi = boot.interval("x2", "upper", 0.9)
    assert lo <= hi
    assert list(boot.to_frame().columns) == [
        "mr_ref_low",
        "mr_ref_high",
        "lower_low",
        "lower_high",
        "upper_low",
        "upper_high",
    ]


def test_random_state_instance_draws_the_audit_seeds():
    rs, _, _ = _kernel_set(n=40)
    boot = bootstrap_mcr(rs, [0], 3, random_state=np.random.RandomState(9))
    assert isinstance(boot, BootstrapMCR)
    np.testing.assert_array_equal(boot.seeds, np.random.RandomState(9).randint(0, 2**31 - 1, size=3))


def test_bad_inputs():
    rs, X, y = _kernel_set(n=40)
    with pytest.raises(RashomonInputError, match="n_resamples"):
        bootstrap_mcr(rs, [0], 0)
    with pytest.raises(RashomonInputError, match="kind"):
        bootstrap_mcr(rs, [0], 2, kind="sum")
    with pytest.raises(RashomonInputError, match="features"):
        bootstrap_mcr(rs, {}, 2)
    weighted = RashomonSet(rs.model_class, 0.1).fit(X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(RashomonInputError, match="sample_weight"):
        bootstrap_mcr(weighted, [0], 2)
    with pytest.raises(RashomonInputError, match="squared"):
        bootstrap_mcr(RashomonSet(LinearModelClass(norm_bound=1.0), 0.1, loss="absolute_error").fit(X, y), [0], 2)


# ------------------------------------------------------------------ the weighted statistics themselves
def _replicated_forms(mc, X, y, w, group):
    """e_orig and e_switch on the rows repeated w times (no weights anywhere)."""
    k = w.astype(int)
    prob = mc.build(np.repeat(X, k, axis=0), np.repeat(y, k), group)
    return prob.e_orig, prob.e_switch


@pytest.mark.parametrize("mode", ["pairs", "hadamard"])
@pytest.mark.parametrize("intercept", ["mean", "free"])
@pytest.mark.parametrize("group", [(0, 1), (2,), (3,), (0, 1, 2, 3)])
def test_weighted_statistics_equal_replicated_rows(mode, intercept, group, monkeypatch):
    """Both routes of the all-pairs sums (and e_orig) under counts w equal the forms on repeated rows."""
    X, y = _data(40, 5)
    mc = KernelModelClass(
        gamma=0.3, norm_bound=1.5, dictionary=X[::4], intercept=0.1 if intercept == "mean" else "free"
    )
    par = mc.parametrize(X, y)
    monkeypatch.setattr(_kernel_stats, "choose_mode", lambda *a: mode)
    cache: dict = {}
    for seed in range(3):
        w = _weights(seed, len(y))
        eo, es = _replicated_forms(mc, X, y, w, group)
        stats = par.statistics(X, y, cache)
        got_o, got_s = stats.e_orig(w), stats.e_switch(group, w)
        assert {p["mode"] for p in stats._groups.values()} == {mode}
        for a, b in ((got_o, eo), (got_s, es)):
            np.testing.assert_allclose(a.Q, b.Q, rtol=1e-9, atol=1e-12 * np.abs(b.Q).max())
            np.testing.assert_allclose(a.c, b.c, rtol=1e-9, atol=1e-12 * np.abs(b.c).max())
            assert a.k == pytest.approx(b.k, rel=1e-12)


def test_statistics_are_built_once_per_set():
    rs, _, y = _kernel_set(n=40)
    rs.problem([0, 1])
    stats = [v for k, v in rs._cache.items() if k[0] == "kernel_statistics"]
    assert len(stats) == 1
    for seed in range(3):
        rs.reweighted(_weights(seed, len(y))).problem([0, 1])
    assert [v for k, v in rs._cache.items() if k[0] == "kernel_statistics"] == stats
    assert list(stats[0]._groups) == [(0, 1)]


def test_streamed_pairs_under_weights():
    """A kernel that does not factorise (pairs streamed row by row) under counts w."""
    X, y = _data(24, 6)
    mc = KernelModelClass(kernel=lambda A, B: (1 + A @ B.T / 4) ** 2, norm_bound=1.0, dictionary=X[::4], intercept=0.1)
    par = mc.parametrize(X, y)
    w = _weights(1, len(y))
    eo, es = _replicated_forms(mc, X, y, w, (2,))
    got = par.e_switch(X, y, w, (2,), cache={})
    np.testing.assert_allclose(got.Q, es.Q, rtol=1e-9, atol=1e-12 * np.abs(es.Q).max())
    np.testing.assert_allclose(got.c, es.c, rtol=1e-9, atol=1e-12 * np.abs(es.c).max())
    assert got.k == pytest.approx(es.k, rel=1e-12)


def test_complementary_groups_share_pairs(monkeypatch):
    """X1 = {0, 1} and X1 = {2, 3} switch the same pairs: one pair matrix, one Gram, each its own linear term."""
    X, y = _data(40, 7)
    mc = KernelModelClass(gamma=0.3, norm_bound=1.5, dictionary=X[::4], intercept="free")
    par = mc.parametrize(X, y)
    monkeypatch.setattr(_kernel_stats, "choose_mode", lambda *a: "pairs")
    stats = par.statistics(X, y, {})
    for seed in range(2):
        w = _weights(seed, len(y))
        for group in [(0, 1), (2, 3)]:
            es = _replicated_forms(mc, X, y, w, group)[1]
            got = stats.e_switch(group, w)
            np.testing.assert_allclose(got.Q, es.Q, rtol=1e-9, atol=1e-12 * np.abs(es.Q).max())
            np.testing.assert_allclose(got.c, es.c, rtol=1e-9, atol=1e-12 * np.abs(es.c).max())
    assert stats._groups[(0, 1)]["P"] is stats._groups[(2, 3)]["P"]
