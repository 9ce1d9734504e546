"""The batched logistic Newton's cheaper steps against direct computations.

* the loss and σ(-m) written into the margins' own array with two work arrays equal the allocating kernel to the
  bit (``Σ w min(x, 0)`` is half of ``Σ w (x - |x|)`` exactly), hence scipy's ``log_expit`` / ``expit``;
* a BFGS update satisfies the secant equation ``H₊s = y`` (1e-12 relative), stays symmetric positive definite, and
  leaves a Hessian unchanged for a pair without positive curvature;
* the ends found with secant-updated Hessians (the first step from θ_min's Hessian) equal the ends found with a
  fresh Hessian at every step and cvxpy (1e-10 relative: both are certified within the default tolerance; cvxpy:
  1e-6, CLARABEL's accuracy), with fewer Hessian products; rows stop once certified within 0.3 of the tolerance.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit, log_expit

from rashomon import LogisticModelClass, RashomonSet
from rashomon.sets.margin import _batch
from rashomon.sets.margin._batch_kernels import _bfgs, _softplus_sigmoid, _softplus_sigmoid_into


def test_in_place_kernel_equals_the_allocating_one_to_the_bit():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(3, 500)) * 8, np.array([[0.0, 800.0, -800.0, 1e-300, -40.0] * 100])])
    w = rng.random(500)
    ref_val, ref_S = _softplus_sigmoid(X.copy(), w)
    Xi = X.copy()
    val = _softplus_sigmoid_into(Xi, w, np.empty_like(X), np.empty_like(X))
    assert np.array_equal(val, ref_val) and np.array_equal(Xi, ref_S)
    np.testing.assert_allclose(val, -(log_expit(X) @ w), rtol=1e-14, atol=0)
    np.testing.assert_allclose(Xi, expit(-X), rtol=1e-15, atol=0)


def test_bfgs_secant_equation_and_curvature_guard():
    rng = np.random.default_rng(1)
    d, k = 6, 20
    M = rng.normal(size=(k, d, d))
    H = M @ M.transpose(0, 2, 1) + np.eye(d)
    A = rng.normal(size=(k, d, d))
    A = A @ A.transpose(0, 2, 1) + np.eye(d)  # the true curvature: y = A s
    s = rng.normal(size=(d, k))
    y = np.einsum("kij,jk->ik", A, s)
    y[:, 0] = -s[:, 0]  # no positive curvature: left unchanged
    H1 = _bfgs(H.copy(), s, y)
    np.testing.assert_array_equal(H1[0], H[0])
    Hs1 = np.einsum("kij,jk->ik", H1, s)
    np.testing.assert_allclose(Hs1[:, 1:], y[:, 1:], rtol=1e-12, atol=1e-12 * np.abs(y).max())
    np.testing.assert_allclose(H1, H1.transpose(0, 2, 1), rtol=0, atol=1e-12 * np.abs(H1).max())
    assert np.all(np.linalg.eigvalsh(H1) > 0)


def _cvxpy_min(rs, a):
    import cvxpy as cp

    ms = rs._margin
    th = cp.Variable(ms.D.shape[1])
    mg = cp.multiply(ms.y, ms.D @ th)
    Bp = ms.B[ms.o :, ms.o :]
    L = np.linalg.cholesky(0.5 * (Bp + Bp.T))
    cons = [cp.sum(cp.logistic(-mg)) <= len(ms.y) * rs.epsilon_abs_, cp.sum_squares(L.T @ th[ms.o :]) <= ms.r]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob = cp.Problem(cp.Minimize(a @ th), cons)
        prob.solve(solver="CLARABEL")
    return float(prob.value)


def test_secant_steps_give_the_same_certified_ends(monkeypatch):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 4))
    y = (rng.random(400) < expit(X @ np.array([1.0, -0.5, 0.3, 0.0]))).astype(int)
    counts, ends = {}, {}
    hess = _batch.MarginBatch.hessians
    for secant in (False, True):
        monkeypatch.setattr(_batch, "_SECANT", secant)
        n = [0]

        def counted(self, s, exact=False, out=None, n=n):
            n[0] += s.shape[1]
            return hess(self, s, exact, out)

        monkeypatch.setattr(_batch.MarginBatch, "hessians", counted)
        rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
        pr = rs.prediction_range(X[:60], scale="score")
        counts[secant], ends[secant] = n[0], (pr, rs)
    (a, _), (b, rs) = ends[False], ends[True]
    for u, v in ((a.lower, b.lower), (a.upper, b.upper)):
        np.testing.assert_allclose(v, u, rtol=2e-10, atol=2e-10)
    # rows stop once certified within _STOP (0.3) of the tolerance: ends as tight as exact Newton's leave them
    assert np.all(b.gap <= _batch._STOP * 1e-10 * np.maximum(1.0, np.abs([b.lower, b.upper])).max(0) + 1e-15)
    assert counts[True] < counts[False]
    P, p0 = rs.parametrization_.prediction_map(X[:3])
    for i in range(3):
        np.testing.assert_allclose(_cvxpy_min(rs, P[i]) + p0[i], b.lower[i], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(p0[i] - _cvxpy_min(rs, -P[i]), b.upper[i], rtol=1e-6, atol=1e-6)


def test_failed_chord_steps_are_retried_with_their_own_hessian(monkeypatch):
    """A secant-updated Hessian that is far off (here shrunk 5-fold at every step) fails its step; the row
    is then stepped with its own Hessian, for which its σ(-m), not kept after a chord step, is evaluated again: the
    same certified bounds (2e-10), members within 1e-6."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = (rng.random(300) < expit(X @ np.array([2.4, -1.8, 0.6]))).astype(int)
    ref = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).prediction_range(X[:30], scale="score")
    monkeypatch.setattr(_batch, "_bfgs", lambda H, dT, dG: H * 0.2)
    again = [0]
    value_grad = _batch.MarginBatch.value_grad

    def counted(self, T, out=None):
        if out is None and self._bufs is not None:  # inside a solve, not into its arrays: a row evaluated again
            again[0] += T.shape[1]
        return value_grad(self, T, out)

    monkeypatch.setattr(_batch.MarginBatch, "value_grad", counted)
    pr = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).prediction_range(X[:30], scale="score")
    assert again[0] > 0
    for u, v in ((ref.lower, pr.lower), (ref.upper, pr.upper)):
        np.testing.assert_allclose(v, u, rtol=2e-10, atol=2e-10)
    # certified either way; a row left uncertified after 40 such steps goes to the per-row search, whose member may
    # stop short of its bound (1.4e-7 here): its gap is reported
    assert np.all(pr.lower <= pr.lower_attained) and np.all(pr.upper_attained <= pr.upper)
    for u, v in ((ref.lower_attained, pr.lower_attained), (ref.upper_attained, pr.upper_attained)):
        np.testing.assert_allclose(v, u, rtol=0, atol=1e-6)
