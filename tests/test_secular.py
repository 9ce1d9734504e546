"""The two exact trust-region subproblem solvers agree; the Cholesky one declines the hard case."""

import numpy as np
import pytest

from rashomon.solvers import QCQPSequence, SolverStatus
from rashomon.solvers._secular import trust_region_cholesky, trust_region_eigh


def _objective(S, c, z):
    return float(z @ S @ z - 2 * c @ z)


@pytest.mark.parametrize("seed", range(4))
def test_cholesky_and_eigendecomposition_give_the_same_minimum(seed):
    rng = np.random.default_rng(seed)
    n_chol = 0
    for _ in range(150):
        m = int(rng.integers(1, 40))
        M = rng.normal(size=(m, m))
        S = (M + M.T) / 2 + rng.uniform(-2, 2) * np.eye(m)  # indefinite or definite
        c = rng.normal(size=m) * rng.uniform(0.01, 10)
        r = float(rng.uniform(0.1, 10))
        ref = trust_region_eigh(S, c, r)
        got = trust_region_cholesky(S, c, r, nu0=float(rng.uniform(0, 3)))
        if got is None:
            continue
        n_chol += 1
        z, nu, _ = got
        assert z @ z <= r * (1 + 1e-12)
        # a factorisation succeeded at ν: S + νI ≻ 0, so (z, ν) is a global minimiser (KKT + PSD)
        assert np.all(np.linalg.eigvalsh(S + nu * np.eye(m)) > -1e-10 * max(1.0, np.abs(S).max()))
        assert np.linalg.norm((S + nu * np.eye(m)) @ z - c) <= 1e-10 * (np.abs(S).max() + nu + 1) * (
            np.linalg.norm(z) + 1
        )
        assert _objective(S, c, z) == pytest.approx(_objective(S, c, ref[0]), rel=1e-10, abs=1e-12)
        assert nu == pytest.approx(ref[1], rel=1e-8, abs=1e-10)
    assert n_chol >= 140  # only near-hard instances may be declined


def test_hard_case_is_declined_and_solved_by_the_eigendecomposition():
    lam = np.array([-1.0, 0.5, 2.0])
    S, c, r = np.diag(lam), np.array([0.0, 0.1, 0.1]), 4.0  # c ⟂ lowest eigenvector, pseudo-inverse point inside
    assert trust_region_cholesky(S, c, r) is None
    z, nu, hard, _, _ = trust_region_eigh(S, c, r)
    assert hard and nu == pytest.approx(1.0) and z @ z == pytest.approx(r)
    res = QCQPSequence(S, c, np.eye(3), r).solve(0.0)
    assert res.status is SolverStatus.OPTIMAL and res.info["hard_case"] and not res.info["cholesky"]


def test_warm_started_sequence_equals_fresh_solves():
    rng = np.random.default_rng(7)
    p = 20
    M0, M1 = rng.normal(size=(p, p)), rng.normal(size=(p, p))
    A0, A1 = M0 @ M0.T / p, (M1 + M1.T) / 2
    b0, b1, B = rng.normal(size=p), rng.normal(size=p), np.diag(rng.uniform(0.5, 2, p))
    seq = QCQPSequence(A0, b0, B, 1.0, A1=A1, b1=b1)
    for g in rng.uniform(-0.5, 0.5, 30):
        got = seq.solve(g, certificate="reduced")
        ref = QCQPSequence(A0 + g * A1, b0 + g * b1, B, 1.0).solve(0.0)
        assert got.status is ref.status is SolverStatus.OPTIMAL
        assert got.objective == pytest.approx(ref.objective, rel=1e-10, abs=1e-12)
        assert got.multiplier == pytest.approx(ref.multiplier, rel=1e-8, abs=1e-10)


def test_no_overflow_warning_near_a_singular_shift():
    """Found by the long hypothesis profile: on this 3-row RBF set ||L⁻¹z|| overflows in a Moré–Sorensen step
    (S + νI nearly singular). The step falls back to bisection by design; no numpy RuntimeWarning may leak, and
    the bounds stay certified and ordered."""
    import warnings

    from rashomon import KernelModelClass, RashomonSet

    X = np.array(
        [
            [34.55841921, 82.16181435, 0.33043708],
            [-130.31572316, 90.53558667, 0.44637457],
            [-53.69532354, 58.11181042, 0.3645724],
        ]
    )
    y = np.array([0.50850886, 0.28100273, 0.34357176])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = RashomonSet(KernelModelClass(kernel="rbf", gamma=0.5, intercept="mean"), 0.01).fit(X, y)
        for f in range(3):
            r = rs.model_class_reliance(f, kind="ratio")
            assert r.certified and r.lower <= r.reference_model.mr <= r.upper
