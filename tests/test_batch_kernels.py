"""The batched classifier solver's shortcuts against direct computations.

* the loss and σ(-m) of one pass over the margins equal scipy's ``log_expit`` / ``expit`` (1e-15 relative per term,
  a few roundings: the summed loss to 1e-14 relative);
* a membership test that stops summing the loss once a partial sum exceeds ε (every term is >= 0) keeps the exact
  loss of every column below the cap and a lower bound above it;
* members moved into the ball by a radial factor, whose loss is bounded by convexity instead of recomputed, are in
  the set (the loss recomputed from scratch in user units), and the ends stopped at their certificate equal cvxpy
  (1e-6: CLARABEL's accuracy) with the ball active.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit, log_expit

from rashomon import LogisticModelClass, RashomonSet
from rashomon.sets.margin._batch_kernels import _softplus_sigmoid


def _data(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ rng.normal(size=p))))).astype(int)
    return X, y


def test_softplus_sigmoid_equals_scipy():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(3, 500)) * 8, np.array([[0.0, 800.0, -800.0, 1e-300, -40.0] * 100])])
    w = rng.random(500)
    val, S = _softplus_sigmoid(X.copy(), w)
    ref = -(log_expit(X) @ w)
    np.testing.assert_allclose(val, ref, rtol=1e-14, atol=0)
    np.testing.assert_allclose(S, expit(-X), rtol=1e-15, atol=0)  # relative: tiny σ(-m) keep their digits
    np.testing.assert_allclose(_softplus_sigmoid(X.copy(), w, False)[0], ref, rtol=1e-14, atol=0)


def _batch_of(rs):
    from rashomon.sets.rows._ranges import engine_of

    return engine_of(rs, "test")._batch()


def test_capped_loss_is_exact_below_the_cap_and_a_lower_bound_above():
    X, y = _data(3000, 4, seed=1)  # >= 2,048 distinct rows: the strided partial sums are used
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    bat = _batch_of(rs)
    T = rs._margin.theta_min[:, None] + np.random.default_rng(2).normal(size=(len(rs._margin.theta_min), 60)) * 0.3
    full = bat.loss(T)
    cap = float(np.median(full))
    capped = bat.loss(T, cap=cap)
    below = full <= cap
    assert 0 < below.sum() < len(full)
    np.testing.assert_allclose(capped[below], full[below], rtol=1e-14)
    assert np.all(capped[~below] > cap) and np.all(capped[~below] <= full[~below] * (1 + 1e-14))
    # every column equals the loss recomputed from scratch
    ms = rs._margin
    direct = np.mean(np.logaddexp(0.0, -(ms.y[:, None] * (ms.D @ T))), axis=0)
    np.testing.assert_allclose(full, direct, rtol=1e-13)


def _cvxpy_min(rs, a):
    import cvxpy as cp

    ms = rs._margin
    th = cp.Variable(ms.D.shape[1])
    loss = cp.sum(cp.logistic(-cp.multiply(ms.y, ms.D @ th)))
    Bp = ms.B[ms.o :, ms.o :]
    L = np.linalg.cholesky(0.5 * (Bp + Bp.T))
    prob = cp.Problem(
        cp.Minimize(a @ th), [loss <= len(ms.y) * rs.epsilon_abs_, cp.sum_squares(L.T @ th[ms.o :]) <= ms.r]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver="CLARABEL")
        except cp.error.SolverError:
            return None
    return float(prob.value) if prob.status == "optimal" else None


@pytest.mark.parametrize("norm_bound", [1.0, None], ids=["ball-active", "ball-wide"])
def test_members_bounded_by_convexity_are_in_the_set_and_ends_equal_cvxpy(norm_bound):
    pytest.importorskip("cvxpy")
    X, y = _data(400, 4, seed=3)
    mc = LogisticModelClass() if norm_bound is None else LogisticModelClass(norm_bound=norm_bound)
    rs = RashomonSet(mc, 0.1).fit(X, y)
    rows = X[:30]
    res = rs.prediction_range(rows, scale="score", return_models=True)
    assert np.all(res.gap >= -1e-12) and np.all(res.gap[0] <= 1e-10 * np.maximum(1.0, np.abs(res.lower)))
    assert np.all(res.gap[1] <= 1e-10 * np.maximum(1.0, np.abs(res.upper)))
    par, yy = rs.parametrization_, 2.0 * y - 1.0
    on_ball = 0
    for models in (res.lower_models, res.upper_models):
        for th in models:
            at = par.member_attributes(th)
            e = float(np.mean(np.logaddexp(0.0, -yy * (X @ at["coef_"] + at["intercept_"]))))
            q = th @ par.B @ th
            assert e <= rs.epsilon_abs_ * (1 + 1e-12) and q <= par.r * (1 + 1e-12)
            on_ball += q >= par.r * (1 - 1e-9)
    if norm_bound is not None:
        assert on_ball >= 10  # the ball binds at many ends: the convexity bound is exercised
    P, p0 = par.prediction_map(rows[:8])
    compared = 0
    for i in range(8):
        for sign, end in ((1.0, res.lower[i]), (-1.0, res.upper[i])):
            v = _cvxpy_min(rs, sign * P[i])
            if v is not None:
                compared += 1
                assert sign * v + p0[i] == pytest.approx(end, abs=1e-6 * max(1.0, abs(end)))
    assert compared >= 8


def test_sampled_hessians_keep_the_ends_certified(monkeypatch):
    """Above the outer products' memory budget the Newton Hessians come from every k-th row (they only steer Newton):
    the ends are still certified within 1e-10 and equal those of the exact Hessians within the two gaps."""
    from rashomon.sets.margin import _batch

    X, y = _data(600, 4, seed=4)
    rows = X[:40]
    a = RashomonSet(LogisticModelClass(), 0.1).fit(X, y).prediction_range(rows, scale="score")
    monkeypatch.setattr(_batch, "_ZZ_FLOATS", 600 * 15 // 3)  # not all kept: every 3rd row's
    monkeypatch.setattr(_batch, "_ZZ_SAMPLE", 600 * 15 // 3)
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    assert _batch_of(rs).stride == 3
    b = rs.prediction_range(rows, scale="score")
    for res in (a, b):
        assert np.all(res.gap[0] <= 1e-10 * np.maximum(1.0, np.abs(res.lower)))
        assert np.all(res.gap[1] <= 1e-10 * np.maximum(1.0, np.abs(res.upper)))
    assert np.all(np.abs(a.lower - b.lower) <= a.gap[0] + b.gap[0] + 1e-15)
    assert np.all(np.abs(a.upper - b.upper) <= a.gap[1] + b.gap[1] + 1e-15)
    mult = rs.multiplicity(scale="score")
    exact = rs.prediction_range(scale="score")
    np.testing.assert_array_equal(mult.flips, exact.flippable(0.0))
