"""Certified outer bound on classifier MCR+ from row envelopes on slabs (rashomon/sets/margin/_secant.py):
valid on members sampled from the set (MR by brute force from the definition), above the maximum found
by a grid over a 2-D set, and its building blocks (slab ranges, concave majorants) checked directly.
The members attaining both ends (rashomon/sets/margin/_descent.py, _ascent.py) reach the grid's
extremes on the 2-D set, and the whole result is deterministic (the slab bound's budget is work, not time)."""

import math
import warnings

import numpy as np
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet
from rashomon.sets.margin._bounds import ScoreRanges, intercept_interval
from rashomon.sets.margin._mcr import _bound_loss
from rashomon.sets.margin._sample import sample_margin_members
from rashomon.sets.margin._secant import SecantBound, slab_ranges, upper_hull
from rashomon.sets.margin._terms import MarginTerms

TOL = 1e-9  # rounding of the brute-force sums; the bounds themselves carry their own (smaller) safety margin


def _loss(name, m):
    return np.logaddexp(0.0, -m) if name == "logistic" else np.maximum(0.0, 1.0 - m)


def _brute_mr(D, y, k, theta, name, kind):
    """MR of θ from the definition: mean loss over the n(n-1) pairs i != j of row j with x_k taken from row i."""
    n = len(y)
    s = D @ theta  # original scores
    sw = s[None, :] + (D[:, k][:, None] - D[:, k][None, :]) * theta[k]  # [i, j]: row j with row i's x_k
    L = _loss(name, y[None, :] * sw)
    e_s = (L.sum() - np.trace(L)) / (n * (n - 1))
    e_o = float(np.mean(_loss(name, y * s)))
    return (e_s / e_o if kind == "ratio" else e_s - e_o), e_o


def _secant(rs, k, kind, inner, max_slabs=8):
    ms = rs._margin
    eps = rs.epsilon_abs_
    lo, hi = intercept_interval(ms.D, ms.y, ms.o, ms.B, ms.r, ms.loss, eps)
    bl = _bound_loss(ms.loss)
    R = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, eps, ms.theta_min)
    T = MarginTerms(ms.D, ms.y, np.array([k]))
    sb = SecantBound(ms, T, R, ms.loss, eps, ms.e_min_lower, lo, hi)
    return sb.bound(kind, inner, budget=math.inf, max_slabs=max_slabs)


def _small(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 3)), 1)
    X[:, 1] += 0.6 * X[:, 0]
    y = (X @ [1.0, -0.7, 0.4] + rng.logistic(size=n) > 0).astype(float)
    return X, y


@pytest.mark.usefixtures("small_budget")
@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
@pytest.mark.parametrize("kind", ["ratio", "difference"])
def test_sampled_members_below_secant_bound(cls, kind):
    X, y = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the package's notice that ε_abs >= e_null (the set holds a constant model) is no leak; on some of
        # these small sets it holds
        warnings.filterwarnings("ignore", message=".*null model")
        rs = RashomonSet(cls(norm_bound=3.0), 0.15).fit(X, y)
        thetas = sample_margin_members(rs, 1000, random_state=1)
        ms = rs._margin
        name = ms.loss.name
        for feat in (1,):
            k = feat + ms.o
            res = rs.model_class_reliance(feat, kind=kind)
            sec = _secant(rs, k, kind, res.upper_model.mr, max_slabs=6)
            assert np.isfinite(sec) and sec >= res.upper_model.mr - TOL
            vals = np.array([_brute_mr(ms.D, ms.y, k, th, name, kind) for th in thetas])
            mrs, eos = vals[:, 0], vals[:, 1]
            assert len(thetas) == 1000 and np.all(eos <= rs.epsilon_abs_ * (1 + 1e-12))
            assert np.all(mrs <= sec + TOL)  # the new bound alone
            assert np.all(mrs <= res.upper + TOL) and np.all(mrs >= res.lower - TOL)
            # the attaining member is in the set and has the reported MR
            for mod in (res.upper_model, res.lower_model):  # the attaining members are in the set
                th = mod.theta
                mr, eo = _brute_mr(ms.D, ms.y, k, th, name, kind)
                assert eo <= rs.epsilon_abs_ and th @ ms.B @ th <= ms.r * (1 + 1e-9)
                assert mr == pytest.approx(mod.mr, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
@pytest.mark.parametrize("kind", ["ratio", "difference"])
def test_two_dimensional_grid_reference(cls, kind):
    """One feature and an intercept: a 401 x 401 grid over (μ, β) inside S gives the true extremes to the grid's
    resolution; they lie inside the certified bounds, the new bound is tighter than the surrogate one, and the
    members found attain the grid's extremes within 1e-3 (MR < 1 at the lower end: the γ = 0 minimiser, MR = 1,
    is not the answer there)."""
    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=40), 1)
    y = (x + rng.logistic(size=40) > 0).astype(float)
    rs = RashomonSet(cls(norm_bound=4.0), 0.2).fit(x[:, None], y)
    ms, eps = rs._margin, rs.epsilon_abs_
    res = rs.model_class_reliance(0, kind=kind)
    mu, beta = np.meshgrid(np.linspace(-4, 4, 401), np.linspace(-2.1, 2.1, 401))
    th = np.stack([mu.ravel(), beta.ravel()], 1)
    inside = (th[:, 1] ** 2 * ms.B[1, 1] <= ms.r) & (_loss(ms.loss.name, ms.y[None, :] * (th @ ms.D.T)).mean(1) <= eps)
    assert inside.sum() > 1000
    grid = np.array([_brute_mr(ms.D, ms.y, 1, t, ms.loss.name, kind)[0] for t in th[inside]])
    sec = _secant(rs, 1, kind, res.upper_model.mr)
    assert grid.max() <= sec + TOL and grid.max() <= res.upper + TOL
    assert grid.min() >= res.lower - TOL
    th_u = res.upper_model.theta
    assert _brute_mr(ms.D, ms.y, 1, th_u, ms.loss.name, kind)[1] <= eps
    for mod in (res.lower_model, res.upper_model):  # members of S, exact loss and ball
        mr, eo = _brute_mr(ms.D, ms.y, 1, mod.theta, ms.loss.name, kind)
        assert eo <= eps and mod.theta @ ms.B @ mod.theta <= ms.r
        assert mr == pytest.approx(mod.mr, rel=1e-9, abs=1e-12)
    assert res.lower_model.mr <= grid.min() + 1e-3 and res.lower_model.mr < (1.0 if kind == "ratio" else 0.0)
    assert res.upper_model.mr >= grid.max() - 1e-3
    lo, hi = intercept_interval(ms.D, ms.y, ms.o, ms.B, ms.r, ms.loss, eps)
    bl = _bound_loss(ms.loss)
    from rashomon.sets.margin._bounds import surrogate_bound

    R = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, eps, ms.theta_min)
    T = MarginTerms(ms.D, ms.y, np.array([1]))
    old, _ = surrogate_bound(T, R, bl, bl.offset, th_u, eps, kind, "upper", ms.B, ms.r)
    assert sec < old  # measurably tighter (figures in the module's report)


def test_slab_ranges_against_sampled_points():
    rng = np.random.default_rng(2)
    d, k = 4, 2
    A = rng.normal(size=(d, d))
    P = A @ A.T + 0.1 * np.eye(d)
    centre, delta = rng.normal(size=d), 0.7
    C = rng.normal(size=(30, d))
    a, b = centre[k] - 0.1, centre[k] + 0.4
    lo, hi = slab_ranges(C, centre, P, delta, k, a, b)
    # points of the cut ellipsoid: uniform directions, radii, kept when inside the slab
    L = np.linalg.cholesky(P)
    z = rng.normal(size=(200000, d))
    z *= (rng.uniform(size=(200000, 1)) ** (1 / d)) / np.linalg.norm(z, axis=1, keepdims=True)
    pts = centre + math.sqrt(delta) * z @ L.T
    pts = pts[(pts[:, k] >= a) & (pts[:, k] <= b)]
    vals = pts @ C.T
    assert np.all(vals.min(0) >= lo - 1e-9) and np.all(vals.max(0) <= hi + 1e-9)
    assert np.all(vals.max(0) >= hi - 0.05 * (hi - lo)) and np.all(vals.min(0) <= lo + 0.05 * (hi - lo))
    # a slab outside the ellipsoid is empty
    r = math.sqrt(delta * P[k, k])
    lo2, hi2 = slab_ranges(C, centre, P, delta, k, centre[k] + 1.1 * r, centre[k] + 2 * r)
    assert np.all(lo2 > hi2)


def test_upper_hull_is_least_concave_majorant():
    rng = np.random.default_rng(3)
    X = np.sort(rng.uniform(-3, 3, size=(50, 12)), axis=1)
    F = rng.normal(size=(50, 12))
    x0, f0, sl = upper_hull(X, F)
    vals = (f0[:, None, :] + sl[:, None, :] * (X[:, :, None] - x0[:, None, :])).min(axis=2)
    assert np.all(vals >= F - 1e-12)  # a majorant at the points
    t = np.linspace(0, 1, 7)
    for j in range(50):  # concave, and equal to the points at the hull's vertices (least)
        m = X[j, 0] + (X[j, -1] - X[j, 0]) * t
        v = (f0[j][None, :] + sl[j][None, :] * (m[:, None] - x0[j][None, :])).min(axis=1)
        assert np.all(np.diff(v, 2) <= 1e-9)
        assert np.isclose(vals[j, 0], F[j, 0]) and np.isclose(vals[j, -1], F[j, -1])
        assert np.isclose(vals[j].max(), F[j].max())


def test_hulls_with_repeated_abscissae():
    """Points sharing an x with different values (a one-point row, a repeated grid point): the upper hull reaches
    the largest of them and the lower hull (``_lower_faces._hull``) the least; it kept whichever came last
    (x = [.5, .5, .5], F = [1, 3, 2] gave a "majorant" of 2)."""
    from rashomon.sets.margin._lower_faces import _hull

    rng = np.random.default_rng(5)
    X = np.sort(np.round(rng.uniform(-2, 2, size=(200, 9)), 1), axis=1)  # many ties
    X[:20] = 0.5  # one-point rows
    F = rng.normal(size=X.shape)
    x0, f0, sl = upper_hull(X, F)
    vals = (f0[:, None, :] + sl[:, None, :] * (X[:, :, None] - x0[:, None, :])).min(axis=2)
    assert np.all(vals >= F - 1e-12)
    assert np.allclose(vals[:20].max(axis=1), F[:20].max(axis=1))
    _, vx, vf = _hull(X, F)
    for j in range(len(X)):  # the lower hull through its vertices is below every point and reaches the least
        assert np.all(np.interp(X[j], vx[j], vf[j]) <= F[j] + 1e-12)
        assert vf[j].min() == pytest.approx(F[j].min(), abs=1e-12)


@pytest.mark.usefixtures("small_budget")
@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_deterministic(cls):
    """Same inputs, same result, bit for bit: the slab bound's budget counts work, never seconds."""
    X, y = _small(n=80, seed=4)
    out = []
    for _ in range(2):
        rs = RashomonSet(cls(norm_bound=3.0), 0.15).fit(X, y)
        res = rs.model_class_reliance(0)
        out.append((res.lower, res.upper, res.lower_model.theta.tobytes(), res.upper_model.theta.tobytes()))
    assert out[0] == out[1]
    assert np.isfinite(out[0][1])


def test_secant_budget_counts_work():
    """The slab bound stops on its work budget (a count); below one slab's cost it still bounds the whole
    b-range with one slab programme (a valid bound), and never more than one."""
    X, y = _small()
    rs = RashomonSet(LogisticModelClass(norm_bound=3.0), 0.15).fit(X, y)
    ms, eps = rs._margin, rs.epsilon_abs_
    lo, hi = intercept_interval(ms.D, ms.y, ms.o, ms.B, ms.r, ms.loss, eps)
    bl = _bound_loss(ms.loss)
    R = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, eps, ms.theta_min)
    T = MarginTerms(ms.D, ms.y, np.array([1 + ms.o]))
    inner = rs.model_class_reliance(1).upper_model.mr
    sb = SecantBound(ms, T, R, ms.loss, eps, ms.e_min_lower, lo, hi)
    v = sb.bound("ratio", inner, budget=0.5 * sb.slab_cost())
    assert np.isfinite(v) and v >= inner - TOL and 0 < sb.work == sb._seen
    vals = []
    for k in (1.0, 4.0, 16.0):
        sb = SecantBound(ms, T, R, ms.loss, eps, ms.e_min_lower, lo, hi)
        budget = k * sb.slab_cost()
        vals.append(sb.bound("ratio", inner, budget=budget))
        assert 0 < sb.work <= budget + sb._seen  # an evaluation starts only when its estimate fits
    assert all(np.isfinite(vals)) and vals[-1] <= vals[0] and min(vals) >= inner - TOL


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_coordinate_extremes_bound_the_coefficient(cls):
    """The certified interval of the switched coefficient from the coordinate searches' Lagrangian bounds
    (it cuts the slabs of the outer bound) contains the coefficient of 1,000 sampled members and of the
    searches' own points, and is near those points: within 1e-3 of the width (logistic: the dual is nearly
    tight), 1e-2 for the hinge (its points meet the smoothed constraint e_orig,τ <= ε, a subset of S, and
    the bound pays the smoothing's τ log 2)."""
    from rashomon.sets.margin._ascent import coordinate_extremes

    X, y = _small(n=80, seed=2)
    rs = RashomonSet(cls(norm_bound=3.0), 0.15).fit(X, y)
    ms, eps = rs._margin, rs.epsilon_abs_
    lo, hi = intercept_interval(ms.D, ms.y, ms.o, ms.B, ms.r, ms.loss, eps)
    k = 1 + ms.o
    T = MarginTerms(ms.D, ms.y, np.array([k]))
    ext = coordinate_extremes(ms, T, ms.loss, eps, lo, hi)
    b_lo, b_hi = ext.coef_range(k)
    assert np.isfinite(b_lo) and np.isfinite(b_hi)
    coefs = np.array([th[k] for th in sample_margin_members(rs, 1000, random_state=3)] + [p[k] for p in ext.points])
    assert np.all(coefs >= b_lo) and np.all(coefs <= b_hi)
    width = b_hi - b_lo
    rel = 1e-3 if cls is LogisticModelClass else 1e-2
    assert b_hi - max(p[k] for p in ext.points) <= rel * width
    assert min(p[k] for p in ext.points) - b_lo <= rel * width
    assert ext.coef_range(k + 1) == (-math.inf, math.inf)  # a coordinate not searched
    # the set's intercept interval: Jensen's cut by the same bounds along ± the intercept
    i_lo, i_hi = ms.intercept_range(eps)
    icpt = np.array([th[0] for th in sample_margin_members(rs, 1000, random_state=4)])
    assert np.all(icpt >= i_lo[0]) and np.all(icpt <= i_hi[0])
    assert lo[0] <= i_lo[0] <= i_hi[0] <= hi[0] and (i_hi[0] - i_lo[0]) < 0.9 * (hi[0] - lo[0])


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_no_intercept_set_and_surrogate_fallback_are_valid(monkeypatch, cls):
    """A set without intercept (no intercept interval to cut): every grid point of the 2-D set has its brute-force
    MR inside the certified interval, and the members attaining both ends are in the set. With the slab bound
    made to give nothing, the hinge falls back to the surrogate outer bound: finite, certified, still valid."""
    import rashomon.sets.margin._mcr as mm

    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 2))
    y = (X @ [1.2, -0.8] + rng.logistic(size=60) > 0).astype(int)
    rs = RashomonSet(cls(fit_intercept=False, standardize=False, norm_bound=3.0), 0.2).fit(X, y)
    ms, eps = rs._margin, rs.epsilon_abs_
    g = np.linspace(-1.8, 1.8, 181)
    G = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2)
    vals = np.array([_brute_mr(ms.D, ms.y, 0, th, ms.loss.name, "ratio") for th in G])
    inside = (vals[:, 1] <= eps) & (np.einsum("ij,jk,ik->i", G, ms.B, G) <= ms.r)
    assert inside.sum() > 100
    res = rs.model_class_reliance(0)
    assert res.certified and np.all(vals[inside, 0] >= res.lower - TOL) and np.all(vals[inside, 0] <= res.upper + TOL)
    for m in (res.lower_model, res.upper_model):
        assert m.e_orig <= eps * (1 + 1e-12) and m.theta @ ms.B @ m.theta <= ms.r * (1 + 1e-9)
    monkeypatch.setattr(mm, "secant_upper_bound", lambda *a, **k: math.nan)
    fb = rs.model_class_reliance(0)
    assert np.isfinite(fb.upper) and fb.upper_certified and np.all(vals[inside, 0] <= fb.upper + TOL)


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_row_envelopes_majorise_the_switched_rows(cls):
    """The concave pieces ψ_j of one slab lie above φ'_j(m, b) = Σ_v w_vj ℓ(m + c_vj b) - Λ' ℓ(m), computed by
    brute force from the definition (pairs i ≠ j), at every grid margin of every row and every b of the slab
    (11 values, ends included); Λ' = 1.3."""
    X, y = _small(n=50, seed=6)
    rs = RashomonSet(cls(norm_bound=3.0), 0.2).fit(X, y)
    ms, eps = rs._margin, rs.epsilon_abs_
    lo, hi = intercept_interval(ms.D, ms.y, ms.o, ms.B, ms.r, ms.loss, eps)
    bl = _bound_loss(ms.loss)
    R = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, eps, ms.theta_min)
    k = 1 + ms.o
    sb = SecantBound(ms, MarginTerms(ms.D, ms.y, np.array([k])), R, ms.loss, eps, ms.e_min_lower, lo, hi)
    sb.rest = False  # the pieces in the full margins m_j (the logistic's rest-margin form: test_margin_bnb.py)
    b_lo, b_hi = sb.b_range()
    a, b = b_lo + 0.3 * (b_hi - b_lo), b_lo + 0.6 * (b_hi - b_lo)
    lam = 1.3
    x0, f0, sl = sb.pieces(a, b, lam)
    mlo, mhi = sb._ranges(sb.C, a, b)
    mlo, mhi = np.maximum(mlo, R.lo_o), np.minimum(mhi, R.hi_o)
    name, D, yy, n = ms.loss.name, ms.D, ms.y, len(ms.y)
    worst = -np.inf
    for j in range(n):
        c = yy[j] * (np.delete(D[:, k], j) - D[j, k])  # the other rows' values, switched into row j
        for m in np.linspace(mlo[j], mhi[j], 23):
            psi = np.min(f0[j] + sl[j] * (m - x0[j]))
            for bb in np.linspace(a, b, 11):
                phi = np.mean(_loss(name, m + c * bb)) - lam * _loss(name, np.array([m]))[0]
                worst = max(worst, phi - psi)
    assert worst <= 1e-12


def test_upper_hull_rounds_equal_monotone_chain():
    """The two vertex searches behind ``upper_hull`` (removal rounds for few rows, the monotone chain for many)
    find the same vertices, ties and one-point rows included."""
    from rashomon.sets.margin._slabs import _equal_x_max, _monotone_chain, _rounds

    rng = np.random.default_rng(11)
    for trial in range(60):
        n, K = int(rng.integers(1, 40)), int(rng.integers(2, 30))
        X = np.sort(rng.uniform(-3, 3, size=(n, K)), axis=1)
        if trial % 2:
            X = np.sort(np.round(X), axis=1)  # many ties
        F = rng.normal(size=(n, K)) if trial % 3 else -(X**2) + 1e-3 * rng.normal(size=(n, K))
        F = _equal_x_max(X, F)
        (sa, ta), (sb, tb) = _monotone_chain(X, F), _rounds(X, F)
        for j in range(n):
            # the same vertices, one per abscissa (the chain may keep two points of a tie: equal x and F)
            va, vb = sa[j, : ta[j] + 1], sb[j, : tb[j] + 1]
            xa, ia = np.unique(X[j, va], return_index=True)
            xb, ib = np.unique(X[j, vb], return_index=True)
            assert np.array_equal(xa, xb) and np.array_equal(F[j, va][ia], F[j, vb][ib])
