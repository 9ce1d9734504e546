"""Exact ranges over a Rashomon set: predictions, coefficients, functionals, multiplicity, sampling, cloud.

Validity (no sampled member outside a range), tightness (the ends are attained by members inside
the set), exactness against an independent solver (cvxpy, one problem per row), ambiguity against
its brute-force count, on linear and kernel classes.
"""

import cvxpy as cp
import numpy as np
import pytest

from rashomon import KernelModelClass, LinearModelClass, RashomonInputError, RashomonSet

REL = 1e-9  # members inside the set, relative
SOLVER_REL = 1e-6  # agreement with cvxpy (its own accuracy)


def _problem(seed, kind):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(25, 60)), int(rng.integers(1, 5))
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3.0, size=p) + rng.normal(size=p)
    y = X @ rng.normal(size=p) + rng.uniform(0.3, 2.0) * rng.normal(size=n)
    eps = float(rng.uniform(0.01, 0.5))
    if kind == "linear":
        mc = LinearModelClass(norm_bound=None if seed % 3 else float(rng.uniform(0.05, 2.0)))
    else:
        mc = KernelModelClass(gamma=float(rng.uniform(0.05, 1.0)) if seed % 2 else None)
    return RashomonSet(mc, epsilon=eps).fit(X, y), X, rng


def _in_set(rs, th):
    """e_orig(θ) <= ε_abs and θ'Bθ <= r to REL, the loss measured from the least-loss member
    (``e(θ) - e_min`` without the cancellation of the expanded quadratic on near-interpolating sets)."""
    par, eo = rs.parametrization_, rs.e_orig_form_
    Q = 0.5 * (eo.Q + eo.Q.T)  # the form is symmetric up to rounding; its gradient is 2·sym(Q)θ
    d = th - rs.theta_min_
    excess = d @ Q @ d + 2 * (Q @ rs.theta_min_ - eo.c) @ d
    return excess <= rs.epsilon_abs_ - rs.e_min_ + REL * rs.epsilon_abs_ and th @ par.B @ th <= par.r * (1 + REL)


def _term_scale(rs, x, th):
    """Σ |terms| of one prediction ``x ↦ c(x)'θ + c0`` (kernel: |[1, K(x, D)]|·|T|·|θ| + |μ|)."""
    par = rs.parametrization_
    if hasattr(par, "kernel_matrix"):
        K = np.abs(par.kernel_matrix(x))
        A = np.hstack([np.ones((1, 1)), K]) @ np.abs(par.T) if par.free else K @ np.abs(par.W)
        return float(A[0] @ np.abs(th) + abs(par.mu))
    P, p0 = par.prediction_map(x)
    return float(np.abs(P[0]) @ np.abs(th) + abs(p0[0]))


@pytest.mark.parametrize("kind", ["linear", "kernel"])
def test_validity_by_sampling_on_random_problems(kind):
    """50 problems x 1,000 members: every member predicts inside every row's range (and, linear,
    has coefficients inside the coefficient ranges); the ends are attained by members of the set."""
    violations = 0
    for seed in range(50):
        rs, X, rng = _problem(seed, kind)
        Xn = np.vstack([X[:10], rng.normal(size=(10, X.shape[1])) * 2])
        pr = rs.prediction_range(Xn, return_models=True)
        smp = rs.sample(1000, random_state=seed)
        assert len(smp) == 1000
        P = smp.predict(Xn)
        slack = 1e-9 * np.maximum(1.0, np.abs(pr.upper - pr.lower))
        violations += int(np.sum(P < pr.lower - slack) + np.sum(P > pr.upper + slack))
        assert np.all(pr.lower <= pr.lower_attained + 1e-12) and np.all(pr.upper_attained <= pr.upper + 1e-12)
        for i in range(len(Xn)):
            for end, val in (("lower", pr.lower_attained[i]), ("upper", pr.upper_attained[i])):
                m = pr.member(i, end)
                assert _in_set(rs, m.theta_)
                # predict and the range's map sum the same terms in another order ((K W) θ vs K (W θ)):
                # equal to 1e-12 of the value, or to 1e-15 of the sum of the terms' magnitudes where
                # they cancel (kernel rows whose terms reach 1e5 for a prediction of 1)
                tol = max(1e-12, 1e-15 * _term_scale(rs, Xn[i : i + 1], m.theta_))
                assert m.predict(Xn[i : i + 1])[0] == pytest.approx(val, rel=1e-12, abs=tol)
        gap = pr.gap
        # certified gap: 1e-8 of the range (the kernel problems here reach cond(Q) ~ 1e9, and members are
        # moved inside the set as evaluated in θ, which costs up to cond(Q)·eps of the objective)
        assert np.all(gap >= -1e-12) and np.all(gap <= 1e-8 * np.maximum(1.0, np.abs(pr.upper - pr.lower)))
        if kind == "linear":
            cr = rs.coef_range(return_models=True)
            coefs = smp.to_frame().drop(columns=["e_orig", "norm"]).to_numpy()  # intercept, coef_0, ...
            violations += int(np.sum(coefs < cr.lower - 1e-9) + np.sum(coefs > cr.upper + 1e-9))
    assert violations == 0


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("kind", ["linear", "kernel"])
def test_ranges_match_cvxpy_per_row(kind):
    for seed in (1, 2, 3):
        rs, X, rng = _problem(seed, kind)
        par, eo = rs.parametrization_, rs.e_orig_form_
        Xn = rng.normal(size=(5, X.shape[1]))
        pr = rs.prediction_range(Xn)
        P, p0 = par.prediction_map(Xn)
        lam, U = np.linalg.eigh(0.5 * (eo.Q + eo.Q.T))
        L = U * np.sqrt(np.clip(lam, 0.0, None))  # Q = L L'
        for i in range(len(Xn)):
            for sign, mine in ((1.0, pr.lower[i]), (-1.0, pr.upper[i])):
                th = cp.Variable(len(eo.c))
                cons = [
                    cp.sum_squares(L.T @ th) - 2 * eo.c @ th + eo.k <= rs.epsilon_abs_,
                    cp.quad_form(th, cp.psd_wrap(par.B)) <= par.r,
                ]
                prob = cp.Problem(cp.Minimize(sign * (P[i] @ th)), cons)
                try:
                    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
                except cp.SolverError:  # its tight settings can stall; its defaults are then the reference
                    prob.solve(solver="CLARABEL")
                theirs = sign * prob.value + p0[i]
                assert mine == pytest.approx(theirs, rel=SOLVER_REL, abs=SOLVER_REL)


def test_ambiguity_is_the_brute_force_count_and_discrepancy_is_attained():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    y = (X @ [1.0, -0.5, 0.2] + rng.normal(size=120) > 0).astype(float)
    rs = RashomonSet(LinearModelClass(), epsilon=0.05).fit(X, y)
    m = rs.multiplicity(threshold=0.5)
    pr = rs.prediction_range()
    above = pr.reference > 0.5
    brute = np.where(above, pr.lower_attained <= 0.5, pr.upper_attained > 0.5)
    assert np.array_equal(m.flips, brute)
    assert m.ambiguity == pytest.approx(brute.mean())
    # the discrepancy member is in the set and flips exactly discrepancy_lower of the decisions
    th = m.discrepancy_model.theta_
    assert _in_set(rs, th)
    flipped = (m.discrepancy_model.predict(X) > 0.5) != above
    assert flipped.mean() == pytest.approx(m.discrepancy_lower)
    assert 0 < m.discrepancy_lower <= m.discrepancy_upper == m.ambiguity
    # no sampled member flips more than the ambiguity allows, nor a row outside the flippable ones
    P = rs.sample(2000, random_state=0).predict(X)
    assert not np.any(((P > 0.5) != above[None, :])[:, ~m.flips])
    assert m.to_frame().shape == (120, 6)  # with the scale column


def test_functional_range_is_the_general_form():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    y = X @ [1.0, 0.5, 0.0] + rng.normal(size=80)
    rs = RashomonSet(LinearModelClass(), epsilon=0.1).fit(X, y)
    P, p0 = rs.parametrization_.prediction_map(X[:4])
    fr = rs.functional_range(P, p0)
    pr = rs.prediction_range(X[:4])
    np.testing.assert_allclose(fr.lower, pr.lower, rtol=1e-12)
    np.testing.assert_allclose(fr.upper, pr.upper, rtol=1e-12)
    # a contrast: prediction at row 0 minus row 1
    one = rs.functional_range(P[0] - P[1], names=["contrast"])
    assert one.lower[0] <= (P[0] - P[1]) @ rs.reference_theta_ <= one.upper[0]
    assert list(one.to_frame()["name"]) == ["contrast"]
    with pytest.raises(RashomonInputError, match="'c' parameter of RashomonSet.functional_range"):
        rs.functional_range(np.ones(7))


def test_coefficient_ranges_and_sign_stability():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = X @ [2.0, 0.0, -1.0] + rng.normal(size=200)
    rs = RashomonSet(LinearModelClass(), epsilon=0.05).fit(X, y)
    cr = rs.coef_range()
    df = cr.to_frame()
    assert list(df["coefficient"]) == ["intercept", "x0", "x1", "x2"]
    assert list(cr.sign_stable[1:]) == [True, False, True]
    ref = rs.reference_
    assert np.all(cr.lower[1:] <= ref.coef_ + 1e-12) and np.all(ref.coef_ <= cr.upper[1:] + 1e-12)
    with pytest.raises(RashomonInputError, match="linear model class"):
        RashomonSet(KernelModelClass(), epsilon=0.1).fit(X, y).coef_range()


def test_degenerate_set_is_one_model():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] + rng.normal(size=40)
    rs = RashomonSet(LinearModelClass(), epsilon=0.0).fit(X, y)
    pr = rs.prediction_range(X[:5])
    np.testing.assert_array_equal(pr.lower, pr.upper)
    smp = rs.sample(10, random_state=0)
    assert np.allclose(smp.thetas, rs.theta_min_)


def test_sampling_is_reproducible_and_methods_agree_on_the_loss_distribution():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(100, 2))
    y = X @ [1.0, 1.0] + rng.normal(size=100)
    rs = RashomonSet(LinearModelClass(norm_bound=50.0), epsilon=0.2).fit(X, y)
    a = rs.sample(500, method="rejection", random_state=3)
    b = rs.sample(500, method="rejection", random_state=3)
    np.testing.assert_array_equal(a.thetas, b.thetas)
    h = rs.sample(4000, method="hit_and_run", random_state=3)
    r = rs.sample(4000, method="rejection", random_state=4)
    assert h.method == "hit_and_run" and r.method == "rejection"
    # uniform in a 3-d ellipsoid: the loss excess has the same law (KS at a loose level)
    from scipy.stats import ks_2samp

    assert ks_2samp(h.e_orig, r.e_orig).pvalue > 1e-3
    with pytest.raises(RashomonInputError, match="'n_models' parameter of RashomonSet.sample"):
        rs.sample(0)
    with pytest.raises(RashomonInputError, match="'method' parameter of RashomonSet.sample"):
        rs.sample(5, method="mcmc")


def test_importance_cloud_points_inside_exact_mcr():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(150, 3))
    y = X @ [1.0, 0.5, 0.0] + rng.normal(size=150)
    for mc in (LinearModelClass(), KernelModelClass(gamma=0.3)):
        rs = RashomonSet(mc, epsilon=0.1).fit(X, y)
        cl = rs.importance_cloud(n_models=500, random_state=0)
        slack = 1e-9 * np.maximum(1, np.abs(cl.upper))
        assert np.all(cl.samples >= cl.lower - slack) and np.all(cl.samples <= cl.upper + slack)
        assert np.all(cl.lower <= cl.reference + slack) and np.all(cl.reference <= cl.upper + slack)
        assert cl.to_frame().shape == (3, 7) and cl.samples_frame().shape == (1500, 3)
        par = rs.importance_cloud(n_models=500, random_state=0, n_jobs=2)  # same numbers whatever n_jobs
        for a in ("lower", "upper", "reference", "samples"):
            np.testing.assert_array_equal(getattr(cl, a), getattr(par, a))


def test_standardized_coefficient_ranges_are_the_raw_ranges_times_sd():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(100, 3)) * [1.0, 10.0, 0.1]
    y = X @ [1.0, 0.1, 5.0] + rng.normal(size=100)
    rs = RashomonSet(LinearModelClass(), epsilon=0.1).fit(X, y)
    raw, std = rs.coef_range(), rs.coef_range(standardize=True)
    sd = X.std(axis=0)
    np.testing.assert_allclose(std.lower[1:], raw.lower[1:] * sd, rtol=1e-9)
    np.testing.assert_allclose(std.upper[1:], raw.upper[1:] * sd, rtol=1e-9)
    assert std.names[1] == "x0 (per SD)" and std.lower[0] == pytest.approx(raw.lower[0])


@pytest.mark.parametrize("kind", ["linear", "kernel"])
def test_mcr_validity_by_sampling_on_random_problems(kind):
    """50 problems per class x 100 members: every member's MR (ratio and difference) inside the certified
    MCR (stated tolerance 4·tol relative) and every member inside the set."""
    violations = 0
    for seed in range(100, 150):
        rs, X, rng = _problem(seed, kind)
        smp = rs.sample(100, random_state=seed)
        f = int(rng.integers(X.shape[1]))
        es = rs.problem(f).e_switch.evaluate_many(smp.thetas)
        for mr_kind, mr in (("ratio", es / smp.e_orig), ("difference", es - smp.e_orig)):
            res = rs.model_class_reliance(f, kind=mr_kind)
            slack = 4 * res.tol * max(1.0, abs(res.lower), abs(res.upper))
            violations += int(np.sum(mr < res.lower - slack) + np.sum(mr > res.upper + slack))
        violations += sum(not _in_set(rs, th) for th in smp.thetas)
    assert violations == 0


def test_kernel_multiplicity_and_functional_range():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(120, 2))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] + 0.5 * rng.normal(size=120) > 0).astype(float)
    rs = RashomonSet(KernelModelClass(gamma=0.5), epsilon=0.05).fit(X, y)
    m = rs.multiplicity(threshold=0.5)
    pr = m.ranges
    above = pr.reference > 0.5
    brute = np.where(above, pr.lower_attained <= 0.5, pr.upper_attained > 0.5)
    assert np.array_equal(m.flips, brute) and m.ambiguity == pytest.approx(brute.mean())
    assert _in_set(rs, m.discrepancy_model.theta_)
    assert ((m.discrepancy_model.predict(X) > 0.5) != above).mean() == pytest.approx(m.discrepancy_lower)
    P = rs.sample(500, random_state=1).predict(X)
    assert not np.any(((P > 0.5) != above[None, :])[:, ~m.flips])
    # a contrast between two rows, as a functional of θ
    Pm, p0 = rs.parametrization_.prediction_map(X[:2])
    fr = rs.functional_range(Pm[0] - Pm[1], p0[0] - p0[1], return_models=True)
    assert fr.lower[0] <= (Pm[0] - Pm[1]) @ rs.reference_theta_ + p0[0] - p0[1] <= fr.upper[0]
    assert _in_set(rs, fr.upper_models[0]) and _in_set(rs, fr.lower_models[0])


def test_prediction_range_in_blocks_equals_one_block(monkeypatch):
    import rashomon.sets.rows._ranges as ranges

    rng = np.random.default_rng(10)
    X = rng.normal(size=(150, 3))
    y = X[:, 0] + rng.normal(size=150)
    rs = RashomonSet(KernelModelClass(gamma=0.5), 0.1).fit(X, y)
    Xn = rng.normal(size=(250, 3))
    one = rs.prediction_range(Xn, return_models=True)
    monkeypatch.setattr(ranges, "_BLOCK", 64)  # the prediction map is built 64 rows at a time
    blocks = rs.prediction_range(Xn, return_models=True)
    assert blocks.names == one.names
    np.testing.assert_allclose(blocks.lower, one.lower, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocks.upper, one.upper, rtol=1e-10, atol=1e-12)
    assert blocks.lower_models.shape == one.lower_models.shape
