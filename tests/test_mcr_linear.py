"""Linear MCR: validity by sampling the Rashomon set, tightness, dense grids, envelope, invariance."""

import numpy as np
import pandas as pd
import pytest

import rashomon
from rashomon import LinearModelClass, mcr_envelope, model_class_reliance, model_reliance

TIGHT = 1e-6  # returned models attain the bounds within this (relative to max(1, |bound|))


def _data(seed=0, n=150, p=3, corr=0.8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if p > 1:
        X[:, 1] += corr * X[:, 0]
    beta = np.array([1.0, 0.5, 0.2, -0.3, 0.1])[:p]
    y = X @ beta + rng.normal(size=n)
    return X * rng.uniform(0.5, 3, size=p) + rng.normal(size=p), y


def _mr_of(X, y, coef, intercept, group, kind):
    """Reliance of f(x) = x'coef + intercept via the exact estimator (independent of the MCR forms)."""
    f = lambda Z: Z @ coef + intercept  # noqa: E731
    r = model_reliance(f, X, y, list(group))
    return (r.ratio if kind == "ratio" else r.difference), r.e_orig


def _sample_rashomon_set(X, y, r, eps, rng, n_samples=4000, centre=None, spread=1.0):
    """Models (coef, intercept) in {β̃'β̃ <= r, e_orig <= eps}: β̃ uniform in the ball (or a smaller
    ball around ``centre``), rejected on the best intercept's loss, intercept uniform in its interval."""
    n, p = X.shape
    m, s = X.mean(0), X.std(0)
    Z = (X - m) / s
    d = rng.normal(size=(n_samples, p))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    rad = np.sqrt(r) * rng.uniform(size=(n_samples, 1)) ** (1 / p)
    B = d * rad * spread + (0 if centre is None else centre)
    B = B[np.sum(B**2, 1) <= r]
    res = y[None, :] - B @ Z.T  # n_samples × n
    mu_star = res.mean(1)
    e_best = ((res - mu_star[:, None]) ** 2).mean(1)
    ok = e_best <= eps
    B, mu_star, e_best = B[ok], mu_star[ok], e_best[ok]
    half = np.sqrt(np.maximum(eps - e_best, 0))
    mu = mu_star + half * rng.uniform(-1, 1, size=len(half))
    coefs = B / s
    intercepts = mu - coefs @ m
    return coefs, intercepts


@pytest.mark.parametrize("kind", ["ratio", "difference"])
@pytest.mark.parametrize("seed", range(6))
def test_bounds_valid_for_sampled_models_and_attained(kind, seed):
    rng = np.random.default_rng(100 + seed)
    X, y = _data(seed, p=3)
    group = [int(rng.integers(0, 3))] if seed % 2 == 0 else [0, 2]
    mc = LinearModelClass()
    res = model_class_reliance(mc, X, y, group, epsilon=0.1, kind=kind)
    r, eps = res.steps and mc.build(X, y, tuple(group), None).r, res.epsilon_abs
    checked = 0
    centres = [None] + [res.lower_model.theta[1:], res.upper_model.theta[1:]]
    for centre, spread in zip(centres, [1.0, 0.15, 0.15]):
        coefs, ints = _sample_rashomon_set(X, y, r, eps, rng, centre=centre, spread=spread)
        for c, b in zip(coefs[:300], ints[:300]):
            mr, e = _mr_of(X, y, c, b, group, kind)
            assert e <= eps * (1 + 1e-9)
            assert res.lower - 1e-9 <= mr <= res.upper + 1e-9, (mr, res.lower, res.upper)
            checked += 1
    assert checked >= 300
    # Tightness: the returned models are in the set and attain the bounds.
    for model, bound in ((res.lower_model, res.lower), (res.upper_model, res.upper)):
        mr, e = _mr_of(X, y, model.coef, model.intercept, group, kind)
        assert e <= eps * (1 + 1e-9)
        assert np.sum((model.coef * X.std(0)) ** 2) <= r * (1 + 1e-9)
        assert mr == pytest.approx(bound, rel=TIGHT, abs=TIGHT)
    assert res.lower_tight and res.upper_tight and res.certified


def _grid_mcr(X, y, group, r, eps, kind, n_ang=720, n_rad=240, n_mu=41):
    """Dense grid over the p = 2 disk of standardised coefficients × the feasible intercepts."""
    m, s = X.mean(0), X.std(0)
    Z = (X - m) / s
    t = np.linspace(0, 2 * np.pi, n_ang, endpoint=False)
    rad = np.sqrt(r) * np.sqrt(np.linspace(0, 1, n_rad))
    Bs = (rad[:, None, None] * np.stack([np.cos(t), np.sin(t)], 1)[None]).reshape(-1, 2)
    res = y[None, :] - Bs @ Z.T
    mu_star = res.mean(1)
    e_best = ((res - mu_star[:, None]) ** 2).mean(1)
    keep = e_best <= eps
    Bs, mu_star, e_best = Bs[keep], mu_star[keep], e_best[keep]
    half = np.sqrt(eps - e_best)
    n = len(y)
    g = list(group)
    o = [j for j in range(2) if j not in g]
    vals = []
    for u in np.linspace(-1, 1, n_mu):
        mu = mu_star + u * half
        e_o = e_best + (u * half) ** 2
        # exact all-pairs switched loss for each model, closed form (centred sums)
        uu = Z[:, g] @ Bs[:, g].T  # n × models
        rr = y[:, None] - mu[None, :] - Z[:, o] @ Bs[:, o].T
        diag = ((rr - uu) ** 2).sum(0)
        total = (
            n * ((rr - rr.mean(0)) ** 2).sum(0)
            + n * ((uu - uu.mean(0)) ** 2).sum(0)
            + n * n * (rr.mean(0) - uu.mean(0)) ** 2
        )
        e_s = (total - diag) / (n * (n - 1))
        vals.append(e_s / e_o if kind == "ratio" else e_s - e_o)
    vals = np.concatenate(vals)
    return vals.min(), vals.max()


@pytest.mark.parametrize("kind", ["ratio", "difference"])
@pytest.mark.parametrize("feature", [0, 1])
def test_p2_dense_grid_agrees(kind, feature):
    rng = np.random.default_rng(7)
    n = 120
    X = rng.normal(size=(n, 2))
    y = 1.0 * X[:, 0] + 0.15 * X[:, 1] + rng.normal(size=n)  # x1 weak: MCR- < 1 needs γ < 0
    mc = LinearModelClass(norm_bound=1.5)
    # ε = 20 %: a thinner set (5 %) needs a far finer grid to resolve its extremes.
    res = model_class_reliance(mc, X, y, feature, epsilon=0.2, kind=kind)
    lo, hi = _grid_mcr(X, y, [feature], 1.5, res.epsilon_abs, kind, n_ang=1000, n_rad=300, n_mu=21)
    assert res.lower - 1e-9 <= lo and hi <= res.upper + 1e-9  # valid: no grid model outside
    scale = max(1.0, abs(res.upper))
    assert lo == pytest.approx(res.lower, abs=1e-3 * scale)  # tight: the grid reaches the bounds
    assert hi == pytest.approx(res.upper, abs=1e-3 * scale)


def test_lower_end_below_one_needs_negative_gamma():
    rng = np.random.default_rng(7)
    n = 120
    X = rng.normal(size=(n, 2))
    y = 1.0 * X[:, 0] + 0.15 * X[:, 1] + rng.normal(size=n)
    res = model_class_reliance(LinearModelClass(norm_bound=1.5), X, y, 1, epsilon=0.2)
    assert res.lower < 1.0
    assert res.gamma_lower < 0
    assert res.lower_tight
    # At γ = 0 alone (the authors' search) the bound is conservative:
    at0 = [s for s in res.steps if s.side == "lower" and s.gamma == 0.0][0]
    assert at0.h_star / res.epsilon_abs < res.lower - 1e-3


@pytest.mark.parametrize("kind", ["ratio", "difference"])
def test_envelope_matches_direct_results(kind):
    X, y = _data(3)
    mc = LinearModelClass()
    eps = [0.02, 0.05, 0.1, 0.2]
    env = mcr_envelope(mc, X, y, 0, epsilons=eps, kind=kind)
    for e, lo, hi, res in zip(eps, env.lower, env.upper, env.results):
        direct = model_class_reliance(mc, X, y, 0, epsilon=e, kind=kind)
        assert res.epsilon_abs == pytest.approx(direct.epsilon_abs, rel=1e-12)
        b = env.bounds(direct.epsilon_abs)
        scale = max(1.0, abs(direct.upper))
        # Both are valid bounds, each within tol·scale of a model that attains it, so they agree to
        # the search tolerance (the envelope's warm-started γ sequence differs from a cold search).
        assert b[0] == pytest.approx(direct.lower, abs=2 * TIGHT * scale)
        assert b[1] == pytest.approx(direct.upper, abs=2 * TIGHT * scale)
        assert b[0] >= res.lower - 1e-12 and b[1] <= res.upper + 1e-12  # all steps: never looser
        assert lo == pytest.approx(direct.lower, abs=2 * TIGHT * scale)
        assert hi == pytest.approx(direct.upper, abs=2 * TIGHT * scale)
    # monotone in ε, and the envelope curve sits below every model found
    assert np.all(np.diff(env.lower) <= 1e-9) and np.all(np.diff(env.upper) >= -1e-9)
    for s in env.steps:
        if s.theta is not None:
            m = s.e_switch / s.e_orig if kind == "ratio" else s.e_switch - s.e_orig
            assert env.envelope(np.array([m]))[0] <= s.e_orig * (1 + 1e-9) + 1e-12


def test_rescaling_features_leaves_mcr_unchanged():
    X, y = _data(4)
    D = np.array([10.0, 0.01, 3.0])
    a = model_class_reliance(LinearModelClass(norm_bound=2.0), X, y, 1)
    b = model_class_reliance(LinearModelClass(norm_bound=2.0), X * D, y, 1)
    assert b.lower == pytest.approx(a.lower, rel=1e-9) and b.upper == pytest.approx(a.upper, rel=1e-9)
    # raw-coefficient penalty: X -> X/D turns coefficients β into Dβ, so M -> D⁻¹ M D⁻¹ is the same class
    M = np.diag([1.0, 2.0, 0.5])
    c = model_class_reliance(LinearModelClass(norm_bound=2.0, penalty_matrix=M, standardize=False), X, y, 1)
    d = model_class_reliance(
        LinearModelClass(norm_bound=2.0, penalty_matrix=np.diag(1 / D) @ M @ np.diag(1 / D), standardize=False),
        X / D,
        y,
        1,
    )
    assert d.lower == pytest.approx(c.lower, rel=1e-9) and d.upper == pytest.approx(c.upper, rel=1e-9)


def test_epsilon_kinds_and_reference():
    from sklearn.linear_model import LinearRegression

    X, y = _data(5)
    mc = LinearModelClass()
    base = model_class_reliance(mc, X, y, 0, epsilon=0.1)
    assert base.e_ref == base.e_min and base.epsilon_abs == pytest.approx(base.e_min * 1.1)
    add = model_class_reliance(mc, X, y, 0, epsilon=0.05, epsilon_kind="additive")
    assert add.epsilon_abs == pytest.approx(base.e_min + 0.05)
    ab = model_class_reliance(mc, X, y, 0, epsilon=base.epsilon_abs, epsilon_kind="absolute")
    assert ab.lower == pytest.approx(base.lower, rel=1e-12) and ab.upper == pytest.approx(base.upper, rel=1e-12)
    # a reference inside the class: the class's own reference shrunk towards 0 (a fitted estimator)
    from rashomon import RashomonSet

    rs0 = RashomonSet(mc, 0.1).fit(X, y)
    th = rs0.theta_min_.copy()
    th[1:] *= 0.9
    inside = LinearRegression()
    inside.coef_, inside.intercept_ = (
        rs0.parametrization_.estimator(th).coef_,
        rs0.parametrization_.estimator(th).intercept_,
    )
    ref = model_class_reliance(mc, X, y, 0, epsilon=0.1, reference=inside)
    assert ref.e_ref == pytest.approx(np.mean((y - inside.predict(X)) ** 2), rel=1e-12)
    assert ref.lower - 1e-9 <= ref.reference_model.mr <= ref.upper + 1e-9
    # OLS has a larger norm than the ridge bound: a clear error that says by how much
    ols = LinearRegression().fit(X, y)
    with pytest.raises(
        rashomon.RashomonInputError,
        match=r"'reference' parameter of RashomonSet.fit lies outside the class's norm bound",
    ):
        model_class_reliance(mc, X, y, 0, epsilon=0.1, reference=ols)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    named = model_class_reliance(mc, df, y, "a")
    assert named.features == ("a",) and named.lower == pytest.approx(base.lower, rel=1e-12)
    assert len(named.to_frame()) == len(named.steps)


def test_ridge_reference_norm_bound_and_model_reliance_consistency():
    X, y = _data(6)
    res = model_class_reliance(LinearModelClass(), X, y, 0)
    ref = res.reference_model
    mr_direct = model_reliance(lambda Z: Z @ ref.coef + ref.intercept, X, y, 0)
    assert mr_direct.ratio == pytest.approx(ref.mr, rel=1e-9)
    assert res.lower <= ref.mr <= res.upper


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(epsilon=-0.1), "'epsilon'"),
        (dict(epsilon=0.01, epsilon_kind="absolute"), "below the best loss"),
        (dict(kind="odds"), "'kind'"),
        (dict(epsilon_kind="percent"), "'epsilon_kind'"),
        (dict(features="zz"), "'features'"),
        (dict(features=[]), "empty group"),
    ],
)
def test_bad_input(kw, match):
    X, y = _data(0)
    features = kw.pop("features", 0)
    with pytest.raises(ValueError, match=match):
        model_class_reliance(LinearModelClass(), X, y, features, **kw)


def test_bad_model_class_and_data():
    X, y = _data(0)
    with pytest.raises(ValueError, match="'model_class'"):
        model_class_reliance("linear", X, y, 0)
    Xc = X.copy()
    Xc[:, 2] = 1.0
    with pytest.raises(ValueError, match="constant"):
        model_class_reliance(LinearModelClass(), Xc, y, 0)
    with pytest.raises(ValueError, match="'norm_bound'"):
        model_class_reliance(LinearModelClass(norm_bound=-1), X, y, 0)
    with pytest.raises(ValueError, match="'X'.*NaN"):
        model_class_reliance(LinearModelClass(), np.where(X > 2, np.nan, X), y, 0)


def test_envelope_is_a_lower_bound_on_loss_and_plots_its_values():
    import matplotlib

    matplotlib.use("Agg")
    X, y = _data(1)
    env = mcr_envelope(LinearModelClass(), X, y, 0, epsilons=[0.05, 0.1, 0.2])
    disp = env.plot()
    assert disp.interval_.get_xdata()[0] == pytest.approx(env.bounds(env.epsilons.max())[0])
    band = env.plot_band()
    order = np.argsort(env.epsilons)
    np.testing.assert_allclose(band.lower, env.lower[order])
    # Independent check of the envelope: every model of the class has loss >= envelope(its MR).
    # Models: the attaining members of every result, and random members of the norm ball.
    res = env.results[1]
    rs_models = [r.lower_model for r in env.results] + [r.upper_model for r in env.results]
    for m in rs_models:
        assert env.envelope([m.mr])[0] <= m.e_orig * (1 + 1e-9)
    prob = LinearModelClass().build(X, y, (0,))
    rng = np.random.default_rng(0)
    th = rng.normal(size=(500, prob.B.shape[0]))
    th *= np.sqrt(prob.r / np.einsum("ij,jk,ik->i", th, prob.B, th))[:, None] * rng.uniform(0, 1, (500, 1))
    eo, es = prob.e_orig.evaluate_many(th), prob.e_switch.evaluate_many(th)
    assert np.all(env.envelope(es / eo) <= eo * (1 + 1e-9))
    # at the MCR ends the envelope meets ε (the bounds are tight)
    np.testing.assert_allclose(res.envelope([res.lower, res.upper]), res.epsilon_abs, rtol=1e-5)
    d2 = res.plot()
    assert d2.ax_.get_ylabel() != ""


def test_ridge_loo_equals_sklearn_ridgecv():
    from sklearn.linear_model import RidgeCV

    from rashomon.model_classes import ridge_loo

    rng = np.random.default_rng(0)
    alphas = np.logspace(-4, 4, 81)
    for n, p, fi in [(60, 5, True), (200, 12, True), (80, 6, False)]:
        Z = rng.normal(size=(n, p)) * rng.uniform(0.5, 2, p) + rng.normal(size=p)
        y = Z @ rng.normal(size=p) + 2 * rng.normal(size=n) + 3
        a, b, c, loo = ridge_loo(Z, y, alphas, fi)
        sk = RidgeCV(alphas=alphas, fit_intercept=fi).fit(Z, y)
        assert a == sk.alpha_
        np.testing.assert_allclose(b, sk.coef_, rtol=1e-10, atol=1e-12)
        assert c == pytest.approx(sk.intercept_, rel=1e-10, abs=1e-12)
        assert loo == pytest.approx(-sk.best_score_, rel=1e-10)
