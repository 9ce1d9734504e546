"""OSQP and cvxpy backends: certificates, agreement with the exact engine, warm starts."""

import numpy as np
import pytest

from rashomon.solvers import ConvexLossProgram, LossTerm, QPSequence, SolverStatus, solve_qcqp


def _qp(seed=0, p=30):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(p, p))
    A0 = M @ M.T / p
    A1 = np.diag(rng.uniform(0, 1, p))
    b0, b1 = rng.normal(size=p), rng.normal(size=p)
    # an l1-ball-like box plus a sum constraint
    C = np.vstack([np.eye(p), np.ones((1, p))])
    l = np.r_[-np.ones(p), -2.0]  # noqa: E741  (OSQP's names: l <= Cx <= u)
    u = np.r_[np.ones(p), 2.0]
    return A0, b0, A1, b1, C, l, u


def test_osqp_warm_equals_cold_and_takes_fewer_iterations():
    A0, b0, A1, b1, C, l, u = _qp()  # noqa: E741  (OSQP's names)
    warm = QPSequence(A0, b0, C, l, u, A1, b1)
    it_warm = it_cold = 0
    for g in np.linspace(0, 2, 40):
        rw = warm.solve(g)
        rc = QPSequence(A0, b0, C, l, u, A1, b1, warm_start=False).solve(g)
        assert rw.status is rc.status is SolverStatus.OPTIMAL
        assert rw.certificate.passed(1e-6) and rc.certificate.passed(1e-6)
        np.testing.assert_allclose(rw.x, rc.x, atol=1e-6)
        assert rw.objective == pytest.approx(rc.objective, rel=1e-8, abs=1e-10)
        it_warm += rw.iterations
        it_cold += rc.iterations
    assert it_warm < it_cold


def test_osqp_agrees_with_exact_engine_on_inactive_box():
    # With a box that is not active, the QP optimum is the unconstrained one; compare to the QCQP
    # engine on a huge ball.
    rng = np.random.default_rng(1)
    p = 8
    M = rng.normal(size=(p, p))
    A = M @ M.T + np.eye(p)
    b = rng.normal(size=p)
    qp = QPSequence(A, b, np.eye(p), -1e3 * np.ones(p), 1e3 * np.ones(p)).solve()
    ex = solve_qcqp(A, b, np.eye(p), 1e8)
    np.testing.assert_allclose(qp.x, ex.x, atol=1e-7)


def test_osqp_infeasible_status():
    res = QPSequence(
        np.eye(2), np.zeros(2), np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1.0, -np.inf]), np.array([np.inf, 0.0])
    ).solve(check=False)
    assert res.status is SolverStatus.INFEASIBLE


@pytest.mark.parametrize("loss", ["hinge", "logistic", "absolute", "squared"])
def test_cvxpy_backend_certified_and_better_than_feasible_points(loss):
    rng = np.random.default_rng(2)
    F = rng.normal(size=(60, 4))
    y = (
        np.sign(F[:, 0] + 0.3 * rng.normal(size=60))
        if loss in ("hinge", "logistic")
        else F @ [1, 2, 0, 0] + rng.normal(size=60)
    )
    B = np.diag([1.0, 2.0, 0.5, 1.0])
    prog = ConvexLossProgram([LossTerm(loss, F, 0.0, y), LossTerm(loss, F[::-1], 0.2, y)], B, 0.7)
    for w in [(1.0, 0.0), (1.0, 3.0), (0.0, 1.0)]:
        res = prog.solve(w)
        assert res.status is SolverStatus.OPTIMAL
        assert res.certificate.duality_gap <= 1e-6
        assert res.x @ B @ res.x <= 0.7 * (1 + 1e-6)
        Z = rng.normal(size=(500, 4))
        Z *= np.sqrt(0.7 * rng.uniform(size=(500, 1)) / np.einsum("ij,jk,ik->i", Z, B, Z)[:, None])
        vals = [prog.objective(z, w) for z in Z]
        assert min(vals) >= res.objective - 1e-6 * max(1, abs(res.objective))


def test_cvxpy_squared_matches_exact_engine():
    rng = np.random.default_rng(3)
    F = rng.normal(size=(50, 5))
    y = F @ rng.normal(size=5) + rng.normal(size=50)
    B = np.eye(5)
    res = ConvexLossProgram([LossTerm("squared", F, 0.0, y)], B, 0.3).solve([1.0])
    # mean (y - Fx)^2 = x'(F'F/n)x - 2(F'y/n)'x + const
    n = len(y)
    ex = solve_qcqp(F.T @ F / n, F.T @ y / n, B, 0.3)
    # A duality-gap certificate bounds the objective; the point error is of order sqrt(gap / curvature),
    # so x is compared at 1e-3 and the objective at the certified level.
    assert res.objective == pytest.approx(ex.objective + y @ y / n, rel=1e-7)
    assert res.objective >= ex.objective + y @ y / n - 1e-12
    np.testing.assert_allclose(res.x, ex.x, atol=1e-3)


def test_loss_term_validates():
    with pytest.raises(ValueError, match="'loss'"):
        LossTerm("huber", np.eye(2), 0.0, np.ones(2))


def test_every_backend_implements_the_solver_contract():
    from rashomon.solvers import QCQPSequence, Solver

    for cls in (QCQPSequence, QPSequence, ConvexLossProgram):
        assert issubclass(cls, Solver) and cls.backend
    seq = QCQPSequence(np.eye(2), np.ones(2), np.eye(2), 1.0)
    res = seq.solve(0.0)
    assert res.status is SolverStatus.OPTIMAL and res.certificate.passed(seq.tol)
    np.testing.assert_allclose(res.x, np.ones(2) / np.sqrt(2), rtol=1e-10)  # min |x-1|² on the unit ball
    with pytest.raises(ValueError, match="'param' parameter of QCQPSequence.solve must be finite"):
        seq.solve(float("nan"))
