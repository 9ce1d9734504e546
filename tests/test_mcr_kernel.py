"""Kernel MCR: exact e_switch by the Hadamard identity, KernelRidge reference, valid and attained bounds."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

from rashomon import KernelModelClass, mcr_envelope, model_class_reliance, model_reliance

from ._brute import brute_e_switch


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 2, size=n)  # a binary column, as race/sex in COMPAS
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.4 * X[:, 2] + 0.2 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("intercept", ["mean", "free"])
@pytest.mark.parametrize("group", [(0,), (0, 2), (1,)])
def test_e_switch_equals_brute_force(kernel, intercept, group):
    X, y = _data()
    prob = KernelModelClass(kernel=kernel, gamma=0.4, norm_bound=2.0, intercept=intercept).build(X, y, group, None)
    rng = np.random.default_rng(1)
    for _ in range(3):
        th = rng.normal(size=prob.B.shape[0]) * 0.3
        f = prob.to_model(th)["predict"]
        ref = brute_e_switch(f, lambda a, b: (a - b) ** 2, X, y, list(group))
        assert prob.e_switch(th) == pytest.approx(ref, rel=1e-9)
        assert prob.e_orig(th) == pytest.approx(np.mean((y - f(X)) ** 2), rel=1e-9)
        assert th @ prob.B @ th == pytest.approx(
            float(
                prob.to_model(th)["alpha"]
                @ np.exp(
                    -0.4
                    * (
                        ((prob.to_model(th)["dictionary"][:, None] - prob.to_model(th)["dictionary"][None]) ** 2).sum(
                            -1
                        )
                        if kernel == "rbf"
                        else np.abs(
                            prob.to_model(th)["dictionary"][:, None] - prob.to_model(th)["dictionary"][None]
                        ).sum(-1)
                    )
                )
                @ prob.to_model(th)["alpha"]
            ),
            rel=1e-6,
        )


def test_non_factorising_callable_kernel_streams_pairs():
    X, y = _data(n=30)
    k = lambda A, B: (1 + A @ B.T) ** 2  # noqa: E731  (polynomial: does not factorise)
    prob = KernelModelClass(kernel=k, norm_bound=5.0).build(X, y, (0,), None)
    th = np.random.default_rng(2).normal(size=prob.B.shape[0]) * 0.1
    f = prob.to_model(th)["predict"]
    assert prob.e_switch(th) == pytest.approx(brute_e_switch(f, lambda a, b: (a - b) ** 2, X, y, [0]), rel=1e-9)


def test_divide_option_matches_divide_estimator():
    X, y = _data(n=41)
    prob = KernelModelClass(gamma=0.3, norm_bound=2.0, e_switch="divide").build(X, y, (1,), None)
    th = np.random.default_rng(3).normal(size=prob.B.shape[0]) * 0.3
    f = prob.to_model(th)["predict"]
    assert prob.e_switch(th) == pytest.approx(model_reliance(f, X, y, 1, method="divide").e_switch, rel=1e-9)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_reference_reproduces_sklearn_kernel_ridge(kernel):
    X, y = _data(n=60)
    X = np.vstack([X, X[:5]])  # duplicates: the dictionary of unique rows merges them
    y = np.r_[y, y[:5] + 0.1]
    mc = KernelModelClass(kernel=kernel, gamma=0.3)
    prob = mc.build(X, y, (0,), None)
    th_ref = prob.par.reference_theta
    ref = prob.to_model(th_ref)
    # ridge_alpha is the penalty actually used (the grid value times the mean multiplicity of rows)
    kr = KernelRidge(alpha=prob.info["ridge_alpha"], kernel=kernel, gamma=0.3).fit(X, y - y.mean())
    Xt = np.random.default_rng(5).normal(size=(20, 3))
    np.testing.assert_allclose(ref["predict"](Xt), kr.predict(Xt) + y.mean(), rtol=1e-7, atol=1e-7)
    # the reference norm is the class's norm bound
    assert prob.r == pytest.approx(float(th_ref @ th_ref))


def _sample_alpha_models(prob, eps, rng, n=3000, centre=None, spread=1.0):
    d = prob.B.shape[0]
    free = int(prob.B[0, 0] == 0)
    dim = d - free
    u = rng.normal(size=(n, dim))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    th = u * np.sqrt(prob.r) * rng.uniform(size=(n, 1)) ** (1 / dim) * spread
    if centre is not None:
        th = th + centre[free:]
        th = th[np.sum(th**2, 1) <= prob.r]
    if free:
        # best μ offset for each θ, then uniform in its feasible interval
        full = np.hstack([np.zeros((len(th), 1)), th])
        eo0 = prob.e_orig.evaluate_many(full)
        slope = 2 * (full @ prob.e_orig.Q[:, 0] - prob.e_orig.c[0])  # d e_orig / dμ at μ = 0
        m_star = -slope / 2
        e_best = eo0 - m_star**2
        ok = e_best <= eps
        half = np.sqrt(np.maximum(eps - e_best[ok], 0))
        full = full[ok]
        full[:, 0] = m_star[ok] + half * rng.uniform(-1, 1, size=ok.sum())
        return full
    e = prob.e_orig.evaluate_many(th)
    return th[e <= eps]


@pytest.mark.parametrize("intercept", ["mean", "free"])
@pytest.mark.parametrize("group", [(0,), (2,)])
def test_kernel_bounds_valid_and_attained(intercept, group):
    X, y = _data(n=60, seed=3)
    mc = KernelModelClass(gamma=0.3, dictionary=12, intercept=intercept)
    res = model_class_reliance(mc, X, y, list(group), epsilon=0.3)
    prob = mc.build(X, y, group, None)
    rng = np.random.default_rng(9)
    total = 0
    for centre, spread in [(None, 1.0), (res.lower_model.theta, 0.1), (res.upper_model.theta, 0.1)]:
        th = _sample_alpha_models(prob, res.epsilon_abs, rng, centre=centre, spread=spread)
        eo = prob.e_orig.evaluate_many(th)
        es = prob.e_switch.evaluate_many(th)
        mr = es / eo
        assert np.all(mr >= res.lower - 1e-9) and np.all(mr <= res.upper + 1e-9)
        total += len(th)
        # spot-check the forms against the exact estimator on the model itself
        for t, e_o, e_s in zip(th[:3], eo[:3], es[:3]):
            f = prob.to_model(t)["predict"]
            assert model_reliance(f, X, y, list(group)).ratio == pytest.approx(e_s / e_o, rel=1e-9)
    assert total >= 200
    for model, bound in ((res.lower_model, res.lower), (res.upper_model, res.upper)):
        f = model.params["predict"]
        mr = model_reliance(f, X, y, list(group))
        assert mr.e_orig <= res.epsilon_abs * (1 + 1e-9)
        assert mr.ratio == pytest.approx(bound, rel=1e-6, abs=1e-6)
    assert res.lower_tight and res.upper_tight


def test_kernel_envelope_and_gamma_selection():
    X, y = _data(n=50, seed=4)
    mc = KernelModelClass(dictionary=15)  # gamma and norm bound by leave-one-out
    env = mcr_envelope(mc, X, y, 0, epsilons=[0.1, 0.3])
    assert np.all(env.lower <= env.upper)
    assert env.lower[1] <= env.lower[0] + 1e-9


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(kernel="poly"), "'kernel'"),
        (dict(intercept="median"), "'intercept'"),
        (dict(gamma=-1.0), "'gamma'"),
        (dict(dictionary=10_000), "'dictionary'"),
        (dict(e_switch="sampled"), "'e_switch'"),
    ],
)
def test_bad_kernel_class_arguments(kw, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        model_class_reliance(KernelModelClass(**({"gamma": 0.3, "norm_bound": 1.0} | kw)), X, y, 0)


@pytest.mark.parametrize("cls", ["linear", "kernel_mean", "kernel_free"])
def test_sample_weight_counts_equal_replicated_rows(cls):
    from rashomon import LinearModelClass

    X, y = _data(n=30, seed=6)
    w = np.random.default_rng(0).multinomial(30, np.ones(30) / 30).astype(float)
    Xr, yr = np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int))
    if cls == "linear":
        mc = LinearModelClass(norm_bound=1.0)
    else:
        mc = KernelModelClass(
            gamma=0.3, norm_bound=1.0, dictionary=X[:8], intercept=0.2 if cls == "kernel_mean" else "free"
        )
    for group in [(0,), (0, 2)]:
        a = mc.build(X, y, group, None, sample_weight=w)
        b = mc.build(Xr, yr, group, None)
        for qa, qb in ((a.e_orig, b.e_orig), (a.e_switch, b.e_switch)):
            np.testing.assert_allclose(qa.Q, qb.Q, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(qa.c, qb.c, rtol=1e-9, atol=1e-12)
            assert qa.k == pytest.approx(qb.k, rel=1e-12)
        ra = model_class_reliance(mc, X, y, list(group), sample_weight=w)
        rb = model_class_reliance(mc, Xr, yr, list(group))
        assert ra.lower == pytest.approx(rb.lower, rel=1e-7) and ra.upper == pytest.approx(rb.upper, rel=1e-7)


def test_kernel_cache_reuses_matrices():
    from rashomon import RashomonSet

    X, y = _data(n=40, seed=7)
    mc = KernelModelClass(gamma=0.3, norm_bound=1.0, dictionary=X[:10])
    rs = RashomonSet(mc, 0.1).fit(X, y)
    a = rs.problem(0)
    assert len(rs._cache) == 1
    w = np.random.default_rng(1).multinomial(40, np.ones(40) / 40).astype(float)
    b = rs.reweighted(w).problem(0)  # reuses the cached kernel matrices
    assert len(rs._cache) == 1
    c = mc.build(X, y, (0,), sample_weight=w)  # from scratch
    np.testing.assert_allclose(b.e_switch.Q, c.e_switch.Q, rtol=1e-12)
    np.testing.assert_allclose(a.e_orig.Q, mc.build(X, y, (0,)).e_orig.Q, rtol=1e-12)
