"""The hinge class's faster pieces against brute-force references.

* The SVM path's exact line search (``_svm_path._line_search``), which sorts only the breakpoints inside a
  bracket of the root, against the root found from every breakpoint sorted (the piecewise-linear derivative
  evaluated at each): equal to 1e-12 relative (both are exact up to rounding of sums over the rows).
"""

import numpy as np
import pytest

from rashomon import HingeModelClass, RashomonSet
from rashomon.model_classes._svm_path import _line_search


def _root_from_all_breakpoints(phi0, dd, u, delta, cw, tau):
    """The root of φ'(t) = φ'(0) + tΔ'Δ - Σ cw δ (h'(u - tδ) - h'(u)) from φ' at every breakpoint (brute force)."""

    def dphi(t):
        return phi0 + t * dd - cw * delta @ (np.clip((u - t * delta) / tau, 0, 1) - np.clip(u / tau, 0, 1))

    nz = delta != 0
    ts = np.concatenate([[0.0], u[nz] / delta[nz], (u[nz] - tau) / delta[nz], [-phi0 / dd]])
    ts = np.unique(ts[ts >= 0])
    vals = np.array([dphi(t) for t in ts])
    j = int(np.argmax(vals >= 0))
    t0, t1 = ts[j - 1], ts[j]
    return t0 - vals[j - 1] * (t1 - t0) / (vals[j] - vals[j - 1])


@pytest.mark.parametrize("seed", range(20))
def test_line_search_equals_the_root_over_every_breakpoint(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    tau = float(10.0 ** rng.uniform(-5, 0))
    u = rng.normal(size=n) * rng.choice([tau, 1.0])
    delta = rng.normal(size=n) * rng.choice([1e-3, 1.0, 10.0])
    delta[rng.random(n) < 0.1] = 0.0
    cw = rng.uniform(0.1, 3.0, size=n) * 10.0 ** rng.uniform(-3, 2)
    dd = float(10.0 ** rng.uniform(-3, 2))
    phi0 = -float(10.0 ** rng.uniform(-3, 2))
    got = _line_search(phi0, dd, u, delta, cw, tau)
    ref = _root_from_all_breakpoints(phi0, dd, u, delta, cw, tau)
    assert abs(got - ref) <= 1e-12 * max(1.0, abs(ref))


def _hinge_data(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = rng.normal(size=p) * 0.7
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ beta + 0.3)))).astype(int)
    return X, y


def _clarabel_min(rs, c):
    """min c'θ over the hinge set with its ball, by cvxpy + CLARABEL (accurate to about 1e-8)."""
    import cvxpy as cp

    ms = rs._margin
    th = cp.Variable(ms.D.shape[1])
    loss = cp.sum(cp.pos(1 - cp.multiply(ms.y, ms.D @ th)))
    Bp = ms.B[ms.o :, ms.o :]
    L = np.linalg.cholesky(0.5 * (Bp + Bp.T))
    cons = [loss <= len(ms.y) * rs.epsilon_abs_, cp.sum_squares(L.T @ th[ms.o :]) <= ms.r]
    cp.Problem(cp.Minimize(c @ th), cons).solve(solver="CLARABEL")
    return float(c @ th.value)


def test_hinge_rays_give_members_and_valid_half_spaces():
    """Each row's ray (``_rays_hinge.ray_points``): its points are members (exact hinge loss and ball recomputed),
    and each subgradient half-space ``c'θ >= b`` holds over the whole set: b is at most CLARABEL's ``min c'θ``
    (to 1e-6 relative, CLARABEL's accuracy with room), and so is the bound it gives with the enclosing ellipsoid."""
    from rashomon.sets.margin._rays_hinge import ray_points
    from rashomon.sets.margin._screen import screen_of
    from rashomon.sets.rows._ranges import engine_of

    X, y = _hinge_data(300, 3, seed=5)
    rs = RashomonSet(HingeModelClass(), 0.1).fit(X, y)
    eng = engine_of(rs, "test")
    scr = screen_of(eng)
    P, p0 = rs.parametrization_.prediction_map(X[:24])
    F = np.vstack([P, -P])
    T, inside, T0, L0, G = ray_points(eng._batch(), F)
    assert inside.all()
    ms = rs._margin
    for th in T:
        loss = float(np.mean(np.maximum(0.0, 1.0 - ms.y * (ms.D @ th))))
        assert loss <= rs.epsilon_abs_ * (1 + 1e-12)
        assert th[ms.o :] @ ms.B[ms.o :, ms.o :] @ th[ms.o :] <= ms.r * (1 + 1e-12)
    rows, C, b = scr._planes(T0, L0, G)
    assert rows.all()
    tb = scr.tangents(F, C, b)
    for k in range(len(F)):
        ref_c = _clarabel_min(rs, C[k])
        assert b[k] <= ref_c + 1e-6 * max(1.0, abs(ref_c))
        ref_f = _clarabel_min(rs, F[k])
        assert tb[k] <= ref_f + 1e-6 * max(1.0, abs(ref_f))
        assert (F[k] @ T[k]) >= ref_f - 1e-6 * max(1.0, abs(ref_f))


def test_hinge_line_search_settles_rows_with_the_exact_flips(monkeypatch):
    """With and without the hinge's ray stage: the same flips as the exact range of every row; with it, fewer rows
    solved exactly."""
    from rashomon.sets.margin import _screen

    X, y = _hinge_data(500, 4, seed=21)
    on = RashomonSet(HingeModelClass(), 0.1).fit(X, y).multiplicity(scale="score")
    monkeypatch.setattr(_screen, "_RAYS", False)
    off = RashomonSet(HingeModelClass(), 0.1).fit(X, y).multiplicity(scale="score")
    np.testing.assert_array_equal(on.flips, off.flips)
    assert on.settled["line search"] > 0 and off.settled["line search"] == 0
    assert on.settled["solved"] < off.settled["solved"]
    ex = RashomonSet(HingeModelClass(), 0.1).fit(X, y).prediction_range(scale="score")
    np.testing.assert_array_equal(on.flips, ex.flippable(0.0))
    slack = 1e-9 * np.maximum(1.0, np.abs(ex.lower))
    assert np.all(on.ranges.lower <= ex.lower + slack) and np.all(on.ranges.upper >= ex.upper - slack)


def _lp_min_no_ball(rs, c):
    """``(min c'θ, θ)`` over the hinge set without the ball (HiGHS, dual simplex, feasibility 1e-10)."""
    from scipy.optimize import linprog

    ms = rs._margin
    Z = ms.y[:, None] * ms.D
    n, d = Z.shape
    A_ub = np.block([[-Z, -np.eye(n)], [np.zeros((1, d)), np.ones((1, n))]])
    b_ub = np.concatenate([-np.ones(n), [n * rs.epsilon_abs_]])
    res = linprog(
        np.concatenate([c, np.zeros(n)]),
        A_ub=A_ub,
        b_ub=b_ub,
        bounds=[(None, None)] * d + [(0, None)] * n,
        method="highs-ds",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    assert res.status == 0, res.message
    return res.fun, res.x[:d]


@pytest.mark.parametrize("norm_bound", [None, 1e4])
def test_exact_finish_on_the_rows_near_their_kink(monkeypatch, norm_bound):
    """The exact finish followed on the rows near their kink only (``_hinge_exact._row`` above 1,024 rows): the same
    ends as on every row (1e-12 relative: both are exact KKT points), certified to 1e-10, equal to the linear
    programme (HiGHS) where the ball does not bind (1e-7: HiGHS' accuracy on 1,500 rows), and the near rows alone
    finish most ends."""
    from rashomon.sets.margin import _hinge_exact

    X, y = _hinge_data(1500, 3, seed=4)
    calls = {"near": 0, "far": 0}
    orig = _hinge_exact._row_on

    def counted(*args):
        got = orig(*args)
        if args[-1] is not None:
            calls["near"] += 1
            calls["far"] += got is _hinge_exact._FAR
        return got

    monkeypatch.setattr(_hinge_exact, "_row_on", counted)
    monkeypatch.setattr(_hinge_exact, "_NEAR_MIN", 64)
    rs = RashomonSet(HingeModelClass(norm_bound=norm_bound), 0.1).fit(X, y)
    rows = X[:16]
    pr = rs.prediction_range(rows, scale="score")
    assert calls["near"] > 0 and calls["far"] < 0.5 * calls["near"]
    monkeypatch.setattr(_hinge_exact, "_NEAR_MIN", 10**9)
    full = RashomonSet(HingeModelClass(norm_bound=norm_bound), 0.1).fit(X, y).prediction_range(rows, scale="score")
    for a, b in ((pr.lower, full.lower), (pr.upper, full.upper)):
        assert np.all(np.abs(a - b) <= 1e-12 * np.maximum(1.0, np.abs(b)))
    rel = pr.gap / np.maximum(1.0, np.abs([pr.lower, pr.upper]))
    assert np.all(rel <= 1e-10)
    if norm_bound is None:
        return  # the default ball binds at most ends: no linear programme to compare with
    P, p0 = rs.parametrization_.prediction_map(rows)
    ms = rs._margin
    Bp = ms.B[ms.o :, ms.o :]
    checked = 0
    for k in range(len(rows)):
        for sign, end in ((1.0, pr.lower[k]), (-1.0, pr.upper[k])):
            v, th = _lp_min_no_ball(rs, sign * P[k])
            if th[ms.o :] @ Bp @ th[ms.o :] >= ms.r * (1 - 1e-6):
                continue  # the ball binds: not a linear programme
            checked += 1
            assert abs(sign * v + p0[k] - end) <= 1e-7 * max(1.0, abs(end))
    assert checked >= 20
