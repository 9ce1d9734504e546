"""fit_reference of the classifier classes is the class's own loss minimiser over its norm ball.

Checked three ways: its loss equals the set's e_min_ on the same rows (the same solve, 1e-8); it equals
an independent cvxpy solve of min loss s.t. β̃'Mβ̃ <= r (1e-6, cvxpy's accuracy); with an inactive ball
it is scikit-learn's unpenalised LogisticRegression (coefficients to 1e-5). The member is accepted as
``reference=`` by a set fitted on other rows (the audit's held-out layout).
"""

import numpy as np
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    y = (0.4 + X @ [1.0, -0.3, 1.5] + rng.logistic(size=n) > 0).astype(int)
    return X, y


def _loss(mc, member, X, y):
    m = (2.0 * y - 1.0) * member.decision_function(X)
    return float(np.mean(np.logaddexp(0.0, -m) if isinstance(mc, LogisticModelClass) else np.maximum(0.0, 1.0 - m)))


def _cvxpy_min(mc, par, X, y):
    """min over the class's ball of the mean loss, by cvxpy (independent of the package's solver)."""
    cp = pytest.importorskip("cvxpy")
    D = par.design(X)
    ye = 2.0 * y - 1.0
    th = cp.Variable(D.shape[1])
    marg = cp.multiply(ye, D @ th)
    obj = cp.sum(cp.logistic(-marg)) if isinstance(mc, LogisticModelClass) else cp.sum(cp.pos(1 - marg))
    Ms = par.B[par.o :, par.o :]
    L = np.linalg.cholesky(0.5 * (Ms + Ms.T))
    prob = cp.Problem(cp.Minimize(obj / len(y)), [cp.sum_squares(L.T @ th[par.o :]) <= par.r])
    prob.solve(solver=cp.CLARABEL)
    return float(prob.value)


CLASSES = [LogisticModelClass, HingeModelClass]


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_reference_is_the_class_minimiser(cls, fit_intercept):
    X, y = _data()
    mc = cls(fit_intercept=fit_intercept)  # norm_bound=None: the cross-validated norm (binds in 3 of the 4 cases)
    ref = mc.fit_reference(X, y)
    par = ref.parametrization_
    assert par.in_class(ref.theta_)
    rs = RashomonSet(mc, 0.05).fit(X, y)
    loss = _loss(mc, ref, X, y)
    assert abs(loss - rs.e_min_) <= 1e-8
    np.testing.assert_array_equal(ref.theta_, rs.theta_min_)  # the same solve, one BLAS thread: the same bits
    assert abs(rs.e_ref_ - rs.e_min_) <= 1e-8
    # an independent solve of the same problem: cvxpy's Clarabel (its accuracy ~1e-8; 1e-6 stated)
    assert loss == pytest.approx(_cvxpy_min(mc, par, X, y), abs=1e-6)
    # the least-squares fit over the ball (what fit_reference returned before) is worse in the class's loss
    from rashomon.solvers import QCQPSequence

    eo = par.e_orig(X, 2.0 * y - 1.0)
    ls = par.estimator(QCQPSequence(eo.Q, eo.c, par.B, par.r).solve(0.0).x)
    assert _loss(mc, ls, X, y) > loss + 1e-4


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_logistic_reference_with_an_inactive_ball_is_the_mle(fit_intercept):
    from sklearn.linear_model import LogisticRegression

    X, y = _data(seed=1)
    ref = LogisticModelClass(norm_bound=1e4, fit_intercept=fit_intercept).fit_reference(X, y)
    sk = LogisticRegression(
        C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=1000, fit_intercept=fit_intercept
    ).fit(X, y)
    np.testing.assert_allclose(ref.coef_, sk.coef_.ravel(), rtol=1e-5, atol=1e-7)
    assert ref.intercept_ == pytest.approx(float(np.ravel(sk.intercept_)[0]) if fit_intercept else 0.0, abs=1e-6)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_reference_from_training_rows_defines_the_set_on_held_out_rows(cls, fit_intercept):
    X, y = _data(n=300, seed=2)
    tr, te = slice(0, 180), slice(180, None)
    mc = cls(norm_bound=2.0, fit_intercept=fit_intercept)  # a given norm bound: no cross-validated norm to fit
    ref = mc.fit_reference(X[tr], y[tr])
    rs = RashomonSet(mc, 0.05, reference=ref).fit(X[te], y[te])
    assert rs.parametrization_ is ref.parametrization_
    np.testing.assert_array_equal(rs.reference_theta_, ref.theta_)
    assert rs.e_ref_ == pytest.approx(_loss(mc, ref, X[te], y[te]), abs=1e-12)
    assert rs.e_min_ <= rs.e_ref_ + 1e-12
    assert rs.epsilon_abs_ == pytest.approx(rs.e_ref_ + 0.05 * rs.e_ref_)
    # labels ±1 give the same member
    ref_pm = mc.fit_reference(X[tr], 2 * y[tr] - 1)
    np.testing.assert_allclose(ref_pm.theta_, ref.theta_, rtol=1e-12, atol=1e-14)
