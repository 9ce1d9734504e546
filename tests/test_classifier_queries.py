"""The set's queries for the classifier classes (logistic, hinge): ranges of linear functionals (scores,
probabilities, coefficients, PD), multiplicity, the ε envelope, sampling and the importance cloud.

Validity: 1,000 members sampled from each set, each verified in the set from scratch (loss recomputed
from the member's coef_ / intercept_ on the raw X, ball from θ), every one inside every range.
Tightness: the returned members are in the set and attain the bound within the stated gap; on a 2-D
problem the ranges match a brute-force grid over θ.

Stated tolerances: membership to 1e-12 relative (the loss summed in another order); sampled values inside a
range up to 1e-9·max(1, |value|) (rounding of the score);
gaps (attained minus certified bound) at most 1e-8·max(1, |bound|) for the logistic loss (solver floor about
1e-10) and 1e-3·max(1, |bound|) for the hinge (smoothing floor τ·log 2/μ with τ = 1e-7, and projected Newton
on the sharply smoothed hinge stopping short on some rows; typical gaps are 1e-6).
"""

import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.special import expit  # noqa: E402

from rashomon import HingeModelClass, LinearModelClass, LogisticModelClass, RashomonSet  # noqa: E402
from rashomon.utils.validation import RashomonInputError  # noqa: E402

GAP = {"logistic": 1e-8, "hinge": 1e-3}
CLASSES = [LogisticModelClass, HingeModelClass]


def _data(n=120, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * [1.0, 3.0, 0.5][:p] + [0.0, 10.0, -2.0][:p]
    s = X @ np.array([1.0, -0.3, 0.8][:p]) + 3.0
    y = (s + rng.logistic(size=n) > 0).astype(int)
    return X, y


def _name(rs):
    return rs._margin.loss.name


def _loss_from_scratch(name, X, y01, coef, intercept):
    """e_orig of a linear classifier recomputed from its user-unit coefficients (labels ±1)."""
    m = (2.0 * y01 - 1.0) * (X @ coef + intercept)
    return float(np.mean(np.logaddexp(0.0, -m) if name == "logistic" else np.maximum(0.0, 1.0 - m)))


def _in_set(rs, X, y, theta):
    par = rs.parametrization_
    at = par.member_attributes(theta)
    e = _loss_from_scratch(_name(rs), X, y, at["coef_"], at["intercept_"])
    return e <= rs.epsilon_abs_ * (1 + 1e-12) and theta @ par.B @ theta <= par.r * (1 + 1e-9)


@pytest.fixture(scope="module", params=CLASSES, ids=["logistic", "hinge"])
def fitted(request):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the package's notice that ε_abs >= e_null (the set holds a constant model) is no leak; on some of
        # these small sets it holds
        warnings.filterwarnings("ignore", message=".*null model")
        rs = RashomonSet(request.param(norm_bound=3.0), 0.1).fit(X, y)
        smp = rs.sample(1000, random_state=0)
    return rs, X, y, smp


def _check_range(res, values, name, tol_gap):
    """values: (n_members, m) — every sampled member inside; gaps >= 0 and within the stated tolerance."""
    lo, hi = res.lower[None, :], res.upper[None, :]
    slack = 1e-9 * np.maximum(1.0, np.abs(values))
    assert np.all(values >= lo - slack) and np.all(values <= hi + slack)
    g = res.gap
    assert np.all(g >= -1e-12)
    assert np.all(g[0] <= tol_gap * np.maximum(1.0, np.abs(res.lower)))
    assert np.all(g[1] <= tol_gap * np.maximum(1.0, np.abs(res.upper)))


def test_sampled_members_are_in_the_set_and_reproducible(fitted):
    rs, X, y, smp = fitted
    assert len(smp) == 1000 and smp.method == "hit_and_run"
    assert all(_in_set(rs, X, y, th) for th in smp.thetas)
    assert np.all(smp.e_orig <= rs.epsilon_abs_ * (1 + 1e-12)) and np.all(smp.norm <= rs.parametrization_.r)
    # the members are spread (not one point): losses cover much of [e_min, ε]
    assert np.ptp(smp.e_orig) > 0.3 * (rs.epsilon_abs_ - rs.e_min_)
    again = rs.sample(50, random_state=3)
    np.testing.assert_array_equal(again.thetas, rs.sample(50, random_state=3).thetas)
    assert not np.array_equal(again.thetas, rs.sample(50, random_state=4).thetas)
    df = smp.to_frame()
    assert list(df.columns[:3]) == ["e_orig", "norm", "intercept"] and len(df) == 1000
    with pytest.raises(RashomonInputError, match="rejection.*hit_and_run"):
        rs.sample(10, method="rejection")


def test_score_ranges_valid_by_sampling_and_tight(fitted):
    rs, X, y, smp = fitted
    rows = X[:25] if _name(rs) == "logistic" else X[:8]  # the hinge's solves are slower
    res = rs.prediction_range(rows, return_models=True, scale="score")
    assert res.scale == "score"
    scores = smp.predict(rows)
    _check_range(res, scores, _name(rs), GAP[_name(rs)])
    for i in range(len(rows)):
        for end, val in (("lower", res.lower_attained[i]), ("upper", res.upper_attained[i])):
            m = res.member(i, end)
            assert _in_set(rs, X, y, m.theta_)
            assert m.decision_function(rows[i : i + 1])[0] == pytest.approx(val, rel=1e-12, abs=1e-12)
    # the reference is inside; labels that can flip are the rows whose range contains 0
    assert np.all(res.lower <= res.reference + 1e-12) and np.all(res.reference <= res.upper + 1e-12)
    flip = res.flippable(0.0)
    np.testing.assert_array_equal(flip, (res.lower_attained <= 0) & (res.upper_attained > 0))


def test_probability_scale_is_sigma_of_the_score_range():
    X, y = _data()
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.1).fit(X, y)
    s = rs.prediction_range(X[:10], scale="score")
    p = rs.prediction_range(X[:10])  # the logistic class's default scale
    assert p.scale == "probability" and s.scale == "score"
    np.testing.assert_allclose(p.lower, expit(s.lower), rtol=1e-14)
    np.testing.assert_allclose(p.upper, expit(s.upper), rtol=1e-14)
    assert np.all((p.lower >= 0) & (p.upper <= 1))
    rh = RashomonSet(HingeModelClass(norm_bound=3.0), 0.1).fit(X, y)
    with pytest.raises(RashomonInputError, match="scale.*probability.*hinge"):
        rh.prediction_range(X[:3], scale="probability")


def test_coefficient_ranges_valid_by_sampling(fitted):
    rs, X, y, smp = fitted
    res = rs.coef_range(return_models=True)
    df = smp.to_frame()
    vals = df[["intercept"] + [c for c in df.columns if c.startswith("coef_")]].to_numpy()
    _check_range(res, vals, _name(rs), GAP[_name(rs)])
    std = rs.coef_range(standardize=True)
    sd = rs.parametrization_.sd
    np.testing.assert_allclose(std.lower[1:], res.lower[1:] * sd, rtol=GAP[_name(rs)], atol=1e-9)
    assert all(_in_set(rs, X, y, t) for t in res.lower_models)
    assert set(res.to_frame().columns) >= {"coefficient", "lower", "upper", "sign_stable"}


def test_pd_band_on_the_score_scale_valid_by_sampling(fitted):
    rs, X, y, smp = fitted
    band = rs.pd_band(0, grid_resolution=5)
    assert band.scale == "score"
    vecs = band.pd_vectors  # PD(v) = a(v)'θ + a0(v)
    pd_members = smp.thetas @ vecs[:, :-1].T + vecs[:, -1][None, :]
    slack = 1e-9 * np.maximum(1.0, np.abs(pd_members))
    assert np.all(pd_members >= band.lower - slack) and np.all(pd_members <= band.upper + slack)
    assert np.all(band.duality_gap <= GAP[_name(rs)] * np.maximum(1.0, np.abs(np.vstack([band.lower, band.upper]))))
    assert all(_in_set(rs, X, y, t) for t in band.upper_models)


def test_ranges_match_a_brute_force_boundary_in_two_dimensions():
    """θ = (β1, β2) without intercept: the boundary of the set traced along 20,000 rays from θ_min (bisection
    on exact membership); min and max of c'θ over the traced boundary against the ranges (the traced points
    are members, and the convex boundary between neighbouring rays is within ~ρ·Δφ² ≈ 1e-7 of them)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    y = (X @ [1.5, -1.0] + rng.logistic(size=80) > 0).astype(int)
    phi = np.linspace(0.0, 2 * np.pi, 20000, endpoint=False)
    for cls in CLASSES:
        rs = RashomonSet(cls(fit_intercept=False, standardize=False, norm_bound=4.0), 0.15).fit(X, y)
        par, t0 = rs.parametrization_, rs.theta_min_
        D, ys = par.design(X), 2.0 * y - 1.0

        def member(T):
            M = ys[None, :] * (T @ D.T)  # noqa: B023  (called within this iteration)
            e = np.mean(np.logaddexp(0, -M) if cls is LogisticModelClass else np.maximum(0, 1 - M), axis=1)  # noqa: B023  (called within this iteration)
            return (e <= rs.epsilon_abs_) & (np.einsum("ij,jk,ik->i", T, par.B, T) <= par.r)  # noqa: B023  (called within this iteration)

        def trace(angles):
            lo, hi = np.zeros(len(angles)), np.full(len(angles), 10.0)
            dirs = np.column_stack([np.cos(angles), np.sin(angles)])
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                ok = member(t0[None, :] + mid[:, None] * dirs)  # noqa: B023  (called within this iteration)
                lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
            P = t0[None, :] + lo[:, None] * dirs  # noqa: B023  (called within this iteration)
            assert member(P).all() and not member(t0[None, :] + hi[:, None] * dirs).any()  # noqa: B023  (called within this iteration)
            return P

        P = trace(phi)
        C = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.3, -2.0]])
        res = rs.functional_range(C)
        dphi = phi[1] - phi[0]
        for k, c in enumerate(C):
            for sgn, end in ((1.0, res.lower[k]), (-1.0, -res.upper[k])):
                # refine around the best ray (the extreme may sit at a corner of the ball and the loss boundary)
                j = int(np.argmin(sgn * (P @ c)))
                best = float(np.min(sgn * (trace(phi[j] + np.linspace(-2, 2, 4001) * dphi) @ c)))
                assert best >= end - 1e-9
                assert best - end <= GAP[_name(rs)] * max(1.0, abs(end)) + 1e-6


def test_multiplicity_ambiguity_is_exact_and_the_discrepancy_member_is_in_the_set(fitted):
    rs, X, y, smp = fitted
    rows = X[:30] if _name(rs) == "logistic" else X[:10]
    mult = rs.multiplicity(rows, scale="score")
    assert mult.threshold == 0.0 and mult.scale == "score"
    r = mult.ranges
    above = r.reference > 0
    brute = np.where(above, r.lower_attained <= 0, r.upper_attained > 0)
    assert mult.ambiguity == pytest.approx(brute.mean())
    # no sampled member flips a row the ranges call non-flippable; each member's share <= the upper end
    flips = (smp.predict(rows) > 0) != above[None, :]
    assert not np.any(flips[:, ~mult.flips])
    assert flips.mean(axis=1).max() <= mult.discrepancy_upper + 1e-12
    assert mult.discrepancy_lower <= mult.discrepancy_upper
    m = mult.discrepancy_model
    assert _in_set(rs, X, y, m.theta_)
    assert np.mean((m.decision_function(rows) > 0) != above) == pytest.approx(mult.discrepancy_lower)
    if _name(rs) == "logistic":  # the default: the probability scale at 0.5, the same decisions
        mp = rs.multiplicity(rows)
        assert mp.threshold == 0.5 and mp.scale == "probability" and mp.ambiguity == mult.ambiguity
        assert np.all((mp.ranges.lower >= 0) & (mp.ranges.upper <= 1))


@pytest.mark.usefixtures("small_budget")
def test_envelope_monotone_in_epsilon_and_valid(fitted):
    rs, X, y, smp = fitted
    env = rs.envelope(0, [0.02, 0.05, 0.1] if _name(rs) == "logistic" else [0.05, 0.1])
    order = np.argsort(env.epsilons)
    assert np.all(np.diff(env.lower[order]) <= 1e-12) and np.all(np.diff(env.upper[order]) >= -1e-12)
    res = rs.model_class_reliance(0)
    # at the set's own ε both are valid for the same set: they overlap and hold the reference's MR (the MCR+
    # outer bound is refined within a time budget, so the two runs need not give identical bounds)
    i = int(np.argmin(np.abs(env.epsilons - rs.epsilon_abs_)))
    ref = res.reference_model.mr
    assert env.lower[i] <= ref + 1e-9 and ref <= env.upper[i] + 1e-9
    assert env.lower[i] <= res.upper and res.lower <= env.upper[i]
    for r in env.results:
        assert r.lower <= r.lower_model.mr + 1e-12 and r.upper_model.mr <= r.upper + 1e-12
        assert _in_set(rs, X, y, r.lower_model.theta) and _in_set(rs, X, y, r.upper_model.theta)
    lo, up = env.bounds(0.5 * (env.epsilons[order[0]] + env.epsilons[order[1]]))
    assert (lo, up) == (env.lower[order[1]], env.upper[order[1]])
    with pytest.raises(RashomonInputError, match="bounds"):
        env.bounds(2 * env.epsilons.max())
    if _name(rs) == "hinge":
        return  # the cloud of the hinge set is checked in test_importance_cloud_members_inside_mcr
    # every sampled member (loss <= ε of the set = the largest grid value) has MR inside the bounds
    cloud = rs.importance_cloud([0], n_models=200, random_state=0)
    assert np.all(cloud.samples[:, 0] >= env.lower[order[-1]] - 1e-9)
    assert np.all(cloud.samples[:, 0] <= env.upper[order[-1]] + 1e-9)
    assert np.all(env.envelope(np.array([env.lower[order[-1]] - 1.0])) >= env.epsilons.max())


def test_importance_cloud_members_inside_mcr(fitted, request):
    rs, X, y, smp = fitted
    feats = [0, 2] if _name(rs) == "logistic" else [2]
    if _name(rs) == "hinge":  # validity only (the same bits across processes: the logistic set's two features)
        request.getfixturevalue("small_budget")
    cloud = rs.importance_cloud(feats, n_models=300, random_state=1)
    assert cloud.method == "hit_and_run" and cloud.samples.shape == (300, len(feats))
    assert np.all(cloud.samples >= cloud.lower[None, :] - 1e-9)
    assert np.all(cloud.samples <= cloud.upper[None, :] + 1e-9)
    assert np.all((cloud.lower <= cloud.reference) & (cloud.reference <= cloud.upper))
    if _name(rs) == "hinge":
        return
    again = rs.importance_cloud(feats, n_models=300, random_state=1, n_jobs=2)  # features in two processes
    np.testing.assert_array_equal(cloud.samples, again.samples)
    np.testing.assert_array_equal(cloud.lower, again.lower)
    np.testing.assert_array_equal(cloud.upper, again.upper)
    np.testing.assert_array_equal(cloud.reference, again.reference)


@pytest.mark.usefixtures("small_budget")
def test_plots_render_for_a_classifier_set(fitted):
    rs, X, y, smp = fitted
    res = rs.prediction_range(X[:15] if _name(rs) == "logistic" else X[:4], scale="score")
    d = res.plot(threshold=0.0)
    assert "score" in d.ax_.get_ylabel()
    assert len(d.ax_.collections) + len(d.ax_.lines) > 0
    s = smp.plot()
    assert len(s.ax_.patches) > 0
    cl = rs.importance_cloud([0], n_models=50, random_state=0).plot()  # an outer bound: not labelled exact
    labels = {t.get_text() for t in cl.ax_.get_legend().get_texts()}
    assert ("exact MCR" in labels) == bool(cl.cloud.mcr[0].upper_tight and cl.cloud.mcr[0].lower_tight)
    if _name(rs) == "hinge":
        return plt.close("all")
    env = rs.envelope(0, [0.05, 0.1])
    e = env.plot()
    assert np.all(np.isfinite(e.envelope[np.isfinite(e.envelope)]))
    b = env.plot_band()
    assert b is not None
    plt.close("all")


@pytest.mark.parametrize("cls", CLASSES)
def test_sampler_is_uniform_on_a_two_dimensional_set(cls):
    """Against a fine grid of the set (θ in 2-D, no intercept): the sampled members' mean and quadrant shares
    match the uniform law on the set (4,000 draws; tolerances of 4 standard errors with 4x the variance for
    the chains' correlation)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 2))
    y = (X @ [1.5, -1.0] + rng.logistic(size=80) > 0).astype(int)
    rs = RashomonSet(cls(fit_intercept=False, standardize=False, norm_bound=4.0), 0.15).fit(X, y)
    par = rs.parametrization_
    g = np.linspace(-2.1, 2.1, 601)
    T = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2)
    M = (2.0 * y - 1.0)[None, :] * (T @ par.design(X).T)
    e = np.mean(np.logaddexp(0, -M) if cls is LogisticModelClass else np.maximum(0, 1 - M), axis=1)
    G = T[(e <= rs.epsilon_abs_) & (np.einsum("ij,jk,ik->i", T, par.B, T) <= par.r)]
    smp = rs.sample(4000, random_state=0).thetas
    se = np.sqrt(4 * G.var(axis=0) / len(smp))
    assert np.all(np.abs(smp.mean(axis=0) - G.mean(axis=0)) <= 4 * se)
    med = np.median(G, axis=0)
    for j in range(2):
        share = np.mean(smp[:, j] > med[j])
        assert abs(share - 0.5) <= 4 * np.sqrt(4 * 0.25 / len(smp))


def test_epsilon_zero_is_the_minimiser():
    """ε = e_ref = e_min: the ranges shrink to the minimiser's values (valid, within the stated gap) and the
    sampler returns members (the minimiser, to rounding)."""
    X, y = _data()
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.0).fit(X, y)
    res = rs.prediction_range(X[:4], scale="score")
    ref = rs.reference_.decision_function(X[:4])
    assert np.all(res.lower <= ref + 1e-12) and np.all(ref <= res.upper + 1e-12)
    assert np.all(res.width <= 1e-5)
    smp = rs.sample(20, random_state=0)
    assert np.all(smp.e_orig <= rs.epsilon_abs_ * (1 + 1e-12))
    np.testing.assert_allclose(smp.thetas, np.tile(rs.theta_min_, (20, 1)), atol=1e-5)


def test_unsupported_queries_are_clear_errors():
    X, y = _data()
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.1).fit(X, y)
    with pytest.raises(RashomonInputError, match=r"conditional.*LogisticModelClass.*log_loss"):
        rs.envelope(0, [0.1], conditional=True)
    with pytest.raises(RashomonInputError, match=r"model_class_reliance.*LogisticModelClass.*log_loss"):
        rs.model_class_reliance(0, conditional=True)
    for call in (lambda: rs.problem(0), lambda: rs.searcher(0)):
        with pytest.raises(
            RashomonInputError, match=r"RashomonSet\.(problem|model_class_reliance).*LogisticModelClass.*log_loss"
        ):
            call()
    with pytest.raises(RashomonInputError, match="threshold.*probability"):
        rs.multiplicity(X[:5], 1.5, scale="probability")
    ra = RashomonSet(LinearModelClass(), 0.1, loss="absolute_error").fit(X, X[:, 0] + y)
    with pytest.raises(RashomonInputError, match=r"prediction_range.*absolute_error"):
        ra.prediction_range(X[:3])
    with pytest.raises(RashomonInputError, match=r"envelope.*absolute_error"):
        ra.envelope(0, [0.1])


def test_hinge_ranges_conic_path_and_fallback_agree(monkeypatch):
    """Hinge score ranges: the conic solve (CLARABEL's point and multiplier, certified by this package's own
    Lagrangian bound) answers every row-end here, and the Lagrangian search alone (the fallback when CLARABEL
    fails) gives the same ranges within both certified gaps; every bound <= its attained value."""
    import rashomon.sets.margin._ranges as mr

    X, y = _data(n=100)
    used = []
    fast = mr.MarginFunctionalRange._hinge_fast

    def spy(self, c, tol, corner):
        out = fast(self, c, tol, corner)
        used.append(out is not None)
        return out

    monkeypatch.setattr(mr.MarginFunctionalRange, "_hinge_fast", spy)
    _no_batch(monkeypatch)  # the per-row path (the batch's fallback) is the one tested here
    rs = RashomonSet(HingeModelClass(norm_bound=3.0), 0.1).fit(X, y)
    a = rs.prediction_range(X[:6]).to_frame()
    assert used and all(used)
    monkeypatch.setattr(mr.MarginFunctionalRange, "_hinge_program", lambda self: None)
    rs2 = RashomonSet(HingeModelClass(norm_bound=3.0), 0.1).fit(X, y)
    b = rs2.prediction_range(X[:6]).to_frame()
    for f in (a, b):
        assert np.all(f.lower_gap >= 0) and np.all(f.upper_gap >= 0)
    slack = a.lower_gap + b.lower_gap + 1e-12
    assert np.all(np.abs(a.lower - b.lower) <= slack)
    slack = a.upper_gap + b.upper_gap + 1e-12
    assert np.all(np.abs(a.upper - b.upper) <= slack)


# ---------------------------------------------------------------------- batched queries (issue 26 items 2, 3)
def _no_batch(monkeypatch):
    """Every row through the per-row certified search (:meth:`MarginFunctionalRange._one`)."""
    import rashomon.sets.margin._batch as mb

    def none_certified(self, A, tol, decide=None):
        m, d = len(A), self.d
        return np.full(m, np.nan), np.full((m, d), np.nan), np.full(m, np.nan), np.zeros(m, dtype=bool)

    monkeypatch.setattr(mb.MarginBatch, "minimize", none_certified)


def _cvxpy_min(rs, a):
    """min a'θ over the set by cvxpy + CLARABEL (the peer the benchmark times); None when CLARABEL does not
    report an accurate optimum (its "optimal_inaccurate")."""
    import cvxpy as cp

    ms = rs._margin
    th = cp.Variable(ms.D.shape[1])
    mg = cp.multiply(ms.y, ms.D @ th)
    loss = cp.sum(cp.logistic(-mg)) if ms.loss.name == "logistic" else cp.sum(cp.pos(1 - mg))
    Bp = ms.B[ms.o :, ms.o :]
    L = np.linalg.cholesky(0.5 * (Bp + Bp.T))
    prob = cp.Problem(
        cp.Minimize(a @ th), [loss <= len(ms.y) * rs.epsilon_abs_, cp.sum_squares(L.T @ th[ms.o :]) <= ms.r]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the peer's own accuracy notices
        prob.solve(solver="CLARABEL")
    return float(prob.value) if prob.status == "optimal" else None


@pytest.mark.parametrize("cls", CLASSES, ids=["logistic", "hinge"])
def test_batched_ranges_equal_the_per_row_search_and_cvxpy(cls, monkeypatch):
    """All rows at once (batched Newton, certified per row) against the per-row certified search and cvxpy:
    equal within the two certified gaps (logistic about 1e-10) and cvxpy to 1e-6; every row answered by the
    batch, every attaining member in the set."""
    from rashomon.sets.rows._ranges import engine_of

    X, y = _data(n=150, seed=3)
    rs = RashomonSet(cls(norm_bound=3.0), 0.1).fit(X, y)
    rows = X[:40]
    eng = engine_of(rs, "test")
    eng.n_fallback = 0
    a = rs.prediction_range(rows, scale="score", return_models=True)
    c = rs.coef_range(return_models=True)
    if cls is LogisticModelClass:
        assert eng.n_fallback == 0
    for res, kind in ((a, "rows"), (c, "coefficients")):
        g, tg = res.gap, GAP[_name(rs)]
        assert np.all(g >= -1e-12) and np.all(g[0] <= tg * np.maximum(1.0, np.abs(res.lower)))
        assert np.all(g[1] <= tg * np.maximum(1.0, np.abs(res.upper)))
        for ms in (res.lower_models, res.upper_models):
            assert all(_in_set(rs, X, y, t) for t in ms), kind
    _no_batch(monkeypatch)
    rs2 = RashomonSet(cls(norm_bound=3.0), 0.1).fit(X, y)
    b = rs2.prediction_range(rows[:10], scale="score")
    for end in ("lower", "upper"):
        k = 0 if end == "lower" else 1
        slack = a.gap[k][:10] + b.gap[k] + 1e-9
        assert np.all(np.abs(getattr(a, end)[:10] - getattr(b, end)) <= slack)
    P, p0 = rs.parametrization_.prediction_map(rows[:6])
    compared = 0
    for i in range(6):  # cvxpy on a few row-ends (those it solves accurately)
        for sign, end in ((1.0, a.lower[i]), (-1.0, a.upper[i])):
            v = _cvxpy_min(rs, sign * P[i])
            if v is not None:
                compared += 1
                assert sign * v + p0[i] == pytest.approx(end, abs=1e-6 * max(1.0, abs(end)))
    assert compared >= 6


def test_multiplicity_flips_equal_the_per_row_exact_solves(monkeypatch):
    """Flips of every row of a small set (batched) equal those from the per-row certified search; each flip is
    witnessed by a member in the set."""
    X, y = _data(n=100, seed=5)
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.05).fit(X, y)
    mult = rs.multiplicity()
    r = mult.ranges
    for i in np.where(mult.flips)[0][:10]:
        m = r.member(i, "lower" if mult.reference_decision[i] else "upper")
        assert _in_set(rs, X, y, m.theta_)
        assert (m.decision_function(X[i : i + 1])[0] > 0) != mult.reference_decision[i]  # score > 0: p > 0.5
    _no_batch(monkeypatch)
    rs2 = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.05).fit(X, y)
    np.testing.assert_array_equal(rs2.multiplicity().flips, mult.flips)


def test_probability_scale_is_the_logistic_default_and_stated():
    X, y = _data(n=80)
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.1).fit(X, y)
    p = rs.prediction_range(X[:5])
    assert p.scale == "probability" and "scale=probability" in repr(p) and repr(p).count("scale=") == 1
    assert set(p.to_frame()["scale"]) == {"probability"} and np.all((p.lower > 0) & (p.upper < 1))
    assert "probability" in p.plot().ax_.get_ylabel()
    plt.close("all")
    m = rs.multiplicity(X[:5])
    assert (m.threshold, m.scale) == (0.5, "probability") and m.summary()["scale"] == "probability"
    assert set(m.to_frame()["scale"]) == {"probability"}
    m3 = rs.multiplicity(X[:5], 0.3)  # probability 0.3 is the score threshold logit(0.3)
    ms = rs.multiplicity(X[:5], float(np.log(0.3 / 0.7)), scale="score")
    np.testing.assert_array_equal(m3.flips, ms.flips)
    rh = RashomonSet(HingeModelClass(norm_bound=3.0), 0.1).fit(X, y)
    assert rh.prediction_range(X[:3]).scale == "score" and rh.multiplicity(X[:3]).scale == "score"


@pytest.mark.parametrize("bad", [1.5, 0.0, 1.0, -0.2])
def test_bad_probability_thresholds_are_clear_errors(bad):
    X, y = _data(n=80)
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.1).fit(X, y)
    with pytest.raises(
        RashomonInputError,
        match=r"'threshold' parameter of RashomonSet\.multiplicity must be in "
        r"\(0, 1\) on the probability scale\. Got",
    ):
        rs.multiplicity(X[:5], bad)
    with pytest.raises(
        RashomonInputError,
        match=r"'threshold' parameter of PredictionRange\.flippable must be in "
        r"\(0, 1\) on the probability scale",
    ):
        rs.prediction_range(X[:3]).flippable(bad)
    with pytest.raises(RashomonInputError, match="progress"):
        rs.prediction_range(X[:3], progress="yes")


def test_progress_reports_on_stderr(capsys):
    X, y = _data(n=80)
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.1).fit(X, y)
    rs.prediction_range(X[:5], progress=True)
    err = capsys.readouterr().err
    assert "[rashomon] RashomonSet.prediction_range: 5 rows" in err and "done in" in err
    rs.coef_range()
    assert capsys.readouterr().err == ""
