"""A norm bound that does not bind: ``norm_bound=np.inf`` (the loss's own set) and the automatic tightening.

The set with an inactive bound is the loss's set, so every answer equals the ``np.inf`` one and an independent
reference on the loss alone (cvxpy; the closed form of the OLS ellipsoid, and glassy where installed).
"""

import math

import numpy as np
import pytest

from rashomon import HingeModelClass, LinearModelClass, LogisticModelClass, RashomonSet
from rashomon.model_classes import MarginLoss
from rashomon.model_classes.norm_bounds import ellipsoid_norm_bound, margin_norm_bound, polyhedral_norm_bound
from rashomon.utils.validation import RashomonInputError


@pytest.fixture(scope="module")
def diabetes():
    from sklearn.datasets import load_diabetes

    return load_diabetes(return_X_y=True)


def _logistic_data(n=400, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X @ np.linspace(1.0, 0.3, p) + rng.logistic(size=n) > 0).astype(int)
    return X, y


# ------------------------------------------------------------------ the bound itself
def test_ellipsoid_norm_bound_is_the_maximum_on_the_sphere():
    # max ‖a + Aw‖² over ‖w‖ <= 1 in 2-D, brute force on 200,000 points of the circle: the bound is above every
    # point and within 1e-9 of the best (the circle's grid spacing 3e-5 rad changes the value by < 1e-9 relative)
    rng = np.random.default_rng(3)
    for _ in range(5):
        a, A = rng.normal(size=3), rng.normal(size=(3, 2))
        t = np.linspace(0, 2 * np.pi, 200_000)
        W = np.c_[np.cos(t), np.sin(t)]
        vals = np.sum((a[None, :] + W @ A.T) ** 2, axis=1)
        r = ellipsoid_norm_bound(a, A)
        assert r >= vals.max() and r <= vals.max() * (1 + 1e-8)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_margin_bound_contains_the_loss_set_members():
    # every member found by cvxpy (extremes of 40 random directions of the loss's set) has θ'Bθ <= r*, and r* is
    # within 3x of the largest (the self-concordant minorant is loose only by the curvature's variation)
    cp = pytest.importorskip("cvxpy")
    X, y = _logistic_data()
    n = len(y)
    D = np.c_[np.ones(n), X]
    Dy = np.where(y > 0, 1.0, -1.0)[:, None] * D
    B = np.diag([0.0, 1.0, 1.0, 1.0])
    th = cp.Variable(4)
    loss = cp.sum(cp.logistic(-Dy @ th)) / n
    cp.Problem(cp.Minimize(loss)).solve()
    t0, level = th.value, loss.value * 1.05
    r = margin_norm_bound(Dy, t0, level, B, MarginLoss("logistic"))
    rng = np.random.default_rng(1)
    best = 0.0
    for _ in range(40):
        v = rng.normal(size=3)
        cp.Problem(cp.Maximize(v @ th[1:]), [loss <= level]).solve()
        best = max(best, float(th.value[1:] @ th.value[1:]))
    assert best <= r and r <= 3 * best
    lp = polyhedral_norm_bound(Dy, ((0.0, 0.0), (0.0, -1.0), (math.log(2.0), -0.5)), level, B)
    assert best <= lp


# ------------------------------------------------------------------ squared loss: closed forms
def test_linear_inf_and_inactive_bound_equal_the_loss_set(diabetes):
    X, y = diabetes
    sets = {nb: RashomonSet(LinearModelClass(norm_bound=nb), 0.05).fit(X, y) for nb in (np.inf, 1e6)}
    a, b = sets[np.inf], sets[1e6]
    assert a.parametrization_.r == pytest.approx(b.parametrization_.r, rel=1e-9)
    assert a.parametrization_.info["norm_bound_requested"] == np.inf
    ca, cb = a.coef_range(return_models=True), b.coef_range()
    # the same closed form on the same ellipsoid: equal to rounding (1e-9 relative of the coefficients' scale)
    scale = np.abs(ca.upper).max()
    assert np.allclose(ca.lower, cb.lower, rtol=0, atol=1e-9 * scale)
    assert np.allclose(ca.upper, cb.upper, rtol=0, atol=1e-9 * scale)
    # members attain the ends and lie in the set
    eo = a.e_orig_form_
    for th in np.vstack([ca.lower_models, ca.upper_models]):
        assert eo(th) <= a.epsilon_abs_ * (1 + 1e-12)
    # the independent reference: the loss's set in raw coefficients (intercept, slopes), no ball, from the normal
    # equations: {(θ - θ_ols)'(D'D/n)(θ - θ_ols) <= ε - e_ols}; the ranges are θ_ols ± sqrt((ε - e_ols)·diag((D'D/n)⁻¹))
    # (double precision on a condition number of about 1e3: 1e-9 relative of the ranges' scale)
    n = len(y)
    D = np.c_[np.ones(n), X]
    th_ols = np.linalg.lstsq(D, y, rcond=None)[0]
    e_ols = float(np.mean((y - D @ th_ols) ** 2))
    half = np.sqrt((a.epsilon_abs_ - e_ols) * np.diag(np.linalg.inv(D.T @ D / n)))
    assert np.allclose(ca.lower, th_ols - half, rtol=0, atol=1e-9 * scale)
    assert np.allclose(ca.upper, th_ols + half, rtol=0, atol=1e-9 * scale)


def test_linear_prediction_ranges_match_glassy(diabetes):
    glassy = pytest.importorskip("glassy")
    X, y = diabetes
    rs = RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05).fit(X, y)
    pz = glassy.Prism.from_data(X, y, r=5.0)  # 5 % above the OLS fit's loss: our ε = 0.05 relative
    d = pz.disagreement(X[:50])
    pr = rs.prediction_range(X[:50])
    cb = np.array(list(pz.coef_bounds().values()))
    cr = rs.coef_range()
    # two closed forms of one ellipsoid: equal to 1e-9 relative (glassy inverts X'X, we solve with Cholesky)
    assert np.allclose(pr.lower, d["min"], rtol=1e-9) and np.allclose(pr.upper, d["max"], rtol=1e-9)
    assert np.allclose(cr.lower[1:], cb[:, 0], rtol=1e-9) and np.allclose(cr.upper[1:], cb[:, 1], rtol=1e-9)


def test_members_carry_the_class_as_defined(diabetes):
    # a member of a tightened set, used as the reference on other rows, defines the set with the class's own bound
    X, y = diabetes
    rs = RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05).fit(X[:300], y[:300])
    member = rs.coef_range(return_models=True).member(1, "upper")
    assert member.parametrization_.r == np.inf
    other = RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05, reference=member).fit(X[300:], y[300:])
    assert other.parametrization_.loss_only and np.isfinite(other.parametrization_.r)


def test_linear_finite_bound_that_binds_is_kept(diabetes):
    X, y = diabetes
    rs = RashomonSet(LinearModelClass(norm_bound=1.0), 0.05).fit(X, y)
    assert rs.parametrization_.r == 1.0 and not getattr(rs.parametrization_, "loss_only", False)


def test_linear_inf_needs_full_column_rank(diabetes):
    X, y = diabetes
    Xd = np.c_[X, X[:, 0] + X[:, 1]]
    with pytest.raises(RashomonInputError, match="norm_bound.*full column rank"):
        RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05).fit(Xd, y)


def test_reweighted_starts_from_the_class_bound(diabetes):
    # a reweighted copy is tightened again from the class's own bound: 1e6 and inf give the same set
    X, y = diabetes
    w = np.r_[np.full(200, 3.0), np.ones(len(y) - 200)]
    a, b = (RashomonSet(LinearModelClass(norm_bound=nb), 0.05).fit(X, y).reweighted(w) for nb in (1e6, np.inf))
    assert a.parametrization_.r == pytest.approx(b.parametrization_.r, rel=1e-9)
    assert a.parametrization_.untightened.r == 1e6 and b.parametrization_.untightened.r == np.inf
    assert np.allclose(a.coef_range().upper, b.coef_range().upper, rtol=1e-9)


# ------------------------------------------------------------------ classifiers
@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_classifier_inf_equals_large_bound(cls):
    X, y = _logistic_data(300, 3)
    sets = [RashomonSet(cls(norm_bound=nb), 0.05).fit(X, y) for nb in (np.inf, 1e6)]
    r = [s.parametrization_.r for s in sets]
    assert r[0] < 1e3 and r[0] == pytest.approx(r[1], rel=1e-9)
    assert sets[0].e_min_ == pytest.approx(sets[1].e_min_, rel=1e-9)
    pr = [s.prediction_range(X[:40]) for s in sets]
    # both are certified ranges of one set, each exact to its tolerance (1e-10 relative ends, the hinge's
    # smoothing τ = 1e-7): equal to 1e-6
    assert np.allclose(pr[0].lower, pr[1].lower, atol=1e-6) and np.allclose(pr[0].upper, pr[1].upper, atol=1e-6)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_logistic_inactive_bound_ranges_equal_the_loss_set_reference():
    # the prediction ranges of the tightened set equal those of the loss's set computed by cvxpy (no ball)
    cp = pytest.importorskip("cvxpy")
    X, y = _logistic_data(300, 3)
    rs = RashomonSet(LogisticModelClass(norm_bound=1e6), 0.05).fit(X, y)
    assert rs.parametrization_.r < 1e3
    n = len(y)
    D = np.c_[np.ones(n), (X - X.mean(0)) / X.std(0)]
    Dy = np.where(y > 0, 1.0, -1.0)[:, None] * D
    th = cp.Variable(4)
    cons = [cp.sum(cp.logistic(-Dy @ th)) / n <= rs.epsilon_abs_]
    pr = rs.prediction_range(X[:10], scale="score", return_models=True)
    loss = cp.sum(cp.logistic(-Dy @ th)) / n
    tight = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "max_iter": 500}
    exact = 0
    for i in range(10):
        for sign, bound, member in ((1, pr.lower[i], pr.lower_models[i]), (-1, -pr.upper[i], pr.upper_models[i])):
            prob = cp.Problem(cp.Minimize(sign * D[i] @ th), cons)
            val = prob.solve(solver="CLARABEL", **tight)
            # validity: the reference's point is feasible to 1e-12, so its value is above the certified bound
            assert bound <= val + 1e-9
            # our member lies in the loss's set (the ball plays no part) and attains the bound to 1e-9
            m = Dy @ member
            assert np.mean(np.logaddexp(0.0, -m)) <= rs.epsilon_abs_ * (1 + 1e-12)
            assert sign * D[i] @ member - bound <= 1e-9
            if prob.status == "optimal" and float(loss.value) <= rs.epsilon_abs_ + 1e-12:
                assert bound == pytest.approx(val, abs=1e-9)  # both exact: equal to 1e-9
                exact += 1
    assert exact >= 10  # most of the 20 reference solves converge to 1e-12


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_classifier_inf_on_separable_data_is_an_error(cls):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(RashomonInputError, match="norm_bound.*separable"):
        RashomonSet(cls(norm_bound=np.inf), 0.05).fit(X, y)
    rs = RashomonSet(cls(norm_bound=10.0), 0.05).fit(X, y)  # a finite bound binds and is kept
    assert rs.parametrization_.r == 10.0


def test_inf_needs_a_supported_loss():
    X, y = _logistic_data(100, 2)
    with pytest.raises(RashomonInputError, match="norm_bound.*finite for loss='absolute_error'"):
        RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05, loss="absolute_error").fit(X, y.astype(float))


def test_kernel_inf_is_the_loss_set_when_the_design_has_full_rank():
    from rashomon import KernelModelClass

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = X[:, 0] + 0.3 * rng.normal(size=80)
    a, b = (RashomonSet(KernelModelClass(norm_bound=nb, gamma=0.5), 0.1).fit(X, y) for nb in (np.inf, 1e12))
    assert a.parametrization_.loss_only and b.parametrization_.loss_only
    assert a.parametrization_.r == pytest.approx(b.parametrization_.r, rel=1e-9) and b.parametrization_.r < 1e12
    pa, pb = a.prediction_range(X[:20]), b.prediction_range(X[:20])
    # one closed form from two least-loss points (a solve and the ball's solver; equal to 1e-12): 1e-9
    assert np.allclose(pa.lower, pb.lower, rtol=0, atol=1e-9) and np.allclose(pa.upper, pb.upper, rtol=0, atol=1e-9)


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_classifier_mcr_with_inf_equals_a_large_bound(cls, small_budget):
    # one set: each bound of one run lies within the other run's certified interval [bound, attained] (the ends
    # are certified bounds with attaining members; both runs see the same set, to the 1e-12 of their r)
    X, y = _logistic_data(200, 2)
    a, b = (RashomonSet(cls(norm_bound=nb), 0.05).fit(X, y).model_class_reliance(0) for nb in (np.inf, 1e6))
    for r1, r2 in ((a, b), (b, a)):
        assert r1.lower <= r2.lower + r2.lower_gap + 1e-9
        assert r1.upper >= r2.upper - r2.upper_gap - 1e-9


def test_fit_reference_with_inf_is_the_least_squares_fit(diabetes):
    from sklearn.linear_model import LinearRegression

    X, y = diabetes
    m = LinearModelClass(norm_bound=np.inf).fit_reference(X, y)
    ols = LinearRegression().fit(X, y)
    # the normal equations solved two ways (condition number about 1e3 on standardised columns): 1e-9 relative
    assert np.allclose(m.coef_, ols.coef_, rtol=1e-9, atol=1e-9 * np.abs(ols.coef_).max())
    with pytest.raises(RashomonInputError, match="norm_bound.*full column rank"):
        LinearModelClass(norm_bound=np.inf).fit_reference(np.c_[X, X[:, 0] - X[:, 1]], y)


def test_dask_inf_equals_in_memory(diabetes):
    da = pytest.importorskip("dask.array")
    X, y = diabetes
    a = RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05).fit(X, y)
    b = RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05).fit(
        da.from_array(X, chunks=100), da.from_array(y, chunks=100)
    )
    # the same set from summed co-moments (chunked sums: rounding 1e-13 relative): r to 1e-9, MCR to 1e-9
    assert b.parametrization_.loss_only
    assert b.parametrization_.r == pytest.approx(a.parametrization_.r, rel=1e-9)
    assert b.model_class_reliance(0).upper == pytest.approx(a.model_class_reliance(0).upper, rel=1e-9)


def test_ill_conditioned_loss_is_not_tightened():
    # two columns equal to 1e-6: the loss's ellipsoid is certified only to about cond·eps, so the bound is kept
    # (a finite one) or refused (np.inf) rather than guessed
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X = np.c_[X, X[:, 0] + 1e-6 * rng.normal(size=200)]
    y = X[:, 0] + rng.normal(size=200)
    rs = RashomonSet(LinearModelClass(norm_bound=1e6), 0.05).fit(X, y)
    assert rs.parametrization_.r == 1e6 and not getattr(rs.parametrization_, "loss_only", False)
    with pytest.raises(RashomonInputError, match="norm_bound.*condition number"):
        RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05).fit(X, y)
