"""The exact QCQP engine: certificates on >= 1,000 random instances, cvxpy, dense grids."""

import numpy as np
import pytest

from rashomon.solvers import QCQPSequence, SolverError, SolverStatus, qcqp_certificate, solve_qcqp

TOL = 1e-8  # relative KKT tolerance each certified solve must meet (the engine's default)


def _orth(rng, p):
    return np.linalg.qr(rng.normal(size=(p, p)))[0]


def random_instance(rng, kind, p):
    """One QCQP ``(A, b, B, r)``; kinds cover indefinite A, PD/PSD/singular B, cond up to 1e12, hard cases."""
    Q = _orth(rng, p)
    r = float(rng.uniform(0.1, 10))
    if kind == "hard":
        # Built in whitened coordinates: S has λ₁ < 0, c ⟂ its eigenvector and is small enough
        # that the pseudo-inverse point lies strictly inside the ball.
        lam = np.sort(rng.uniform(-3, 5, size=p))
        lam[0] = min(lam[0], -1.0)
        if p > 1:
            lam[1:] = np.maximum(lam[1:], lam[0] + 0.5)
        U = _orth(rng, p)
        ct = rng.normal(size=p)
        ct[0] = 0.0
        ct *= 0.1 * np.sqrt(r) * (lam[1] - lam[0] if p > 1 else 1.0) / (np.linalg.norm(ct) + 1e-300)
        L = Q * rng.uniform(0.5, 2.0, size=p)  # B = L L'
        S = (U * lam) @ U.T
        A = L @ S @ L.T
        b = L @ (U @ ct)
        return A, b, L @ L.T, r
    M = rng.normal(size=(p, p))
    A = (M + M.T) / 2
    if kind == "ill_A":
        A = (Q * np.exp(rng.uniform(0, np.log(1e12), p)) * rng.choice([-1, 1], p)) @ Q.T
    if kind == "convex":
        A = M @ M.T / p
    if kind == "ill_B":
        lamB = np.exp(rng.uniform(0, np.log(1e12), p))
    elif kind in ("pd", "ill_A", "convex"):
        lamB = rng.uniform(0.5, 2, p)
    else:  # "singular": B PSD with a nullspace, A PSD on it so the problem stays bounded
        lamB = rng.uniform(0.1, 10, p)
        nk = int(rng.integers(1, max(1, p // 3) + 1)) if p > 1 else 0
        lamB[:nk] = 0.0
        N = Q[:, :nk]
        A = A + 3 * (np.abs(np.linalg.eigvalsh(A)).max() + 1) * N @ N.T
    B = (Q * lamB) @ Q.T
    b = rng.normal(size=p) * rng.uniform(0.1, 10)
    return A, b, B, r


KINDS = ["pd", "singular", "ill_B", "ill_A", "hard", "convex"]


def _instances(n_per_kind=180, seed=0):
    rng = np.random.default_rng(seed)
    for kind in KINDS:
        for _ in range(n_per_kind):
            p = int(rng.integers(1, 51))
            yield kind, random_instance(rng, kind, p)


def test_thousand_random_instances_pass_their_certificate():
    n = 0
    hard_seen = 0
    for kind, (A, b, B, r) in _instances():
        res = solve_qcqp(A, b, B, r)  # raises SolverError if the certificate fails
        assert res.status is SolverStatus.OPTIMAL, (kind, res.certificate)
        assert res.certificate.passed(TOL)
        # Independent re-check of the certificate from the returned (x, ν) alone.
        again = qcqp_certificate(A, b, B, r, res.x, res.multiplier)
        assert again.passed(TOL), (kind, again)
        assert res.multiplier >= 0
        hard_seen += bool(res.info.get("hard_case"))
        n += 1
    assert n >= 1000
    assert hard_seen >= 100  # the hard-case instances really exercise the hard-case branch


def test_global_optimality_against_random_feasible_points():
    rng = np.random.default_rng(1)
    for kind in KINDS:
        for _ in range(20):
            A, b, B, r = random_instance(rng, kind, int(rng.integers(1, 8)))
            res = solve_qcqp(A, b, B, r)
            Z = rng.normal(size=(2000, A.shape[0]))
            q = np.einsum("ij,jk,ik->i", Z, B, Z)
            Z = Z * np.sqrt(r * rng.uniform(0, 1, size=(2000, 1)) / np.maximum(q, 1e-300)[:, None])
            vals = np.einsum("ij,jk,ik->i", Z, A, Z) - 2 * Z @ b
            assert vals.min() >= res.objective - 1e-9 * (1 + abs(res.objective))


def test_convex_instances_agree_with_cvxpy():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(2)
    for _ in range(30):
        p = int(rng.integers(1, 20))
        A, b, B, r = random_instance(rng, "convex", p)
        res = solve_qcqp(A, b, B, r)
        x = cp.Variable(p)
        prob = cp.Problem(
            cp.Minimize(cp.quad_form(x, cp.psd_wrap(A)) - 2 * b @ x), [cp.quad_form(x, cp.psd_wrap(B)) <= r]
        )
        prob.solve(solver=cp.CLARABEL)
        assert res.objective == pytest.approx(prob.value, rel=1e-6, abs=1e-7)
        # cvxpy's point may violate x'Bx <= r by its own tolerance: scale it back inside, then the
        # exact solution must be at least as good.
        xc = x.value * min(1.0, np.sqrt(r / (x.value @ B @ x.value)))
        assert res.objective <= xc @ A @ xc - 2 * b @ xc + 1e-12 * (1 + abs(prob.value))


def test_p2_instances_agree_with_dense_grid():
    rng = np.random.default_rng(3)
    t = np.linspace(0, 2 * np.pi, 4001)
    rad = np.sqrt(np.linspace(0, 1, 801))
    # ill_A (cond 1e12) is left out: a 4001-angle grid cannot resolve such a sharp minimum.
    for kind in ["pd", "hard", "convex"]:
        for _ in range(10):
            A, b, B, r = random_instance(rng, kind, 2)
            res = solve_qcqp(A, b, B, r)
            L = np.linalg.cholesky(B)
            U = np.stack([np.cos(t), np.sin(t)], 1)
            Z = (rad[:, None, None] * U[None] * np.sqrt(r)).reshape(-1, 2)
            X = np.linalg.solve(L.T, Z.T).T  # x'Bx = ||z||² <= r
            vals = np.einsum("ij,jk,ik->i", X, A, X) - 2 * X @ b
            assert vals.min() >= res.objective - 1e-9 * (1 + abs(res.objective))
            assert vals.min() == pytest.approx(res.objective, rel=1e-3, abs=1e-3)


def test_unbounded_when_A_is_negative_on_the_nullspace_of_B():
    B = np.diag([1.0, 0.0])
    assert solve_qcqp(np.diag([1.0, -1.0]), np.zeros(2), B, 1.0).status is SolverStatus.UNBOUNDED
    # A zero on the free direction but b is not: also unbounded
    assert solve_qcqp(np.diag([1.0, 0.0]), np.array([0.0, 1.0]), B, 1.0).status is SolverStatus.UNBOUNDED
    # A zero on the free direction and b too: bounded, flat direction
    res = solve_qcqp(np.diag([-1.0, 0.0]), np.array([0.3, 0.0]), B, 1.0)
    assert res.status is SolverStatus.OPTIMAL
    assert res.objective == pytest.approx(-1.0 - 0.6)


def test_sequence_equals_fresh_solves():
    rng = np.random.default_rng(4)
    A0, b0, B, r = random_instance(rng, "singular", 12)
    A1, b1, _, _ = random_instance(rng, "singular", 12)
    seq = QCQPSequence(A0, b0, B, r, A1=A1, b1=b1)
    for g in [-0.3, 0.0, 0.7, 2.0]:
        got = seq.solve(g, check=False)
        ref = solve_qcqp(A0 + g * A1, b0 + g * b1, B, r, check=False)
        assert got.status == ref.status
        if got.status is SolverStatus.OPTIMAL:
            assert got.objective == pytest.approx(ref.objective, rel=1e-10, abs=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match="'r'"):
        solve_qcqp(np.eye(2), np.zeros(2), np.eye(2), -1.0)
    with pytest.raises(ValueError, match="'B'.*positive semi-definite"):
        solve_qcqp(np.eye(2), np.zeros(2), -np.eye(2), 1.0)
    with pytest.raises(ValueError, match="'b0'"):
        solve_qcqp(np.eye(2), np.zeros(3), np.eye(2), 1.0)
    with pytest.raises(ValueError, match="'A0'.*finite"):
        solve_qcqp(np.full((2, 2), np.nan), np.zeros(2), np.eye(2), 1.0)


def test_inaccurate_solve_raises():
    seq = QCQPSequence(np.eye(2), np.ones(2), np.eye(2), 1.0, tol=0.0)  # nothing passes tol=0 exactly...
    res = seq.solve(0.0, check=False)
    if res.status is SolverStatus.INACCURATE:
        with pytest.raises(SolverError):
            seq.solve(0.0)
