"""Validity and tightness of the classifier MCR bounds (issue 28, item 2), checked independently of the engine.

(a) Members sampled from the set (``RashomonSet.sample``) lie inside every certified interval of
``model_class_reliance``: Pima (logistic, hinge) and breast cancer's first 300 rows on 6 features. Each member's MR is
computed here from the definition (the all-pairs U-statistic, mean over i != j of the loss of row j with x_k taken
from row i), vectorised over members, and that computation is checked against ``rashomon.model_reliance`` on the
member's estimator for the extreme members (and one other) of every feature. The fast test covers one feature per
set (the feature of issue 28's largest gap); every feature is in the slow one.

(b) Brute-force grids on 2-parameter sets (one feature and an intercept; two features without intercept), logistic and
hinge: a dense 601 x 601 grid over a box holding the set (checked: no grid point on the box's edge is in the set),
points with e_orig <= eps_abs and θ'Bθ <= r kept, the MR of each computed from the definition. (i) Every grid MR lies in
[lower, upper]; (ii) both bounds lie within 1 % of the grid's extremes.

Tolerances: the brute-force sums are exact up to rounding, so "inside" allows 1e-9 relative (to max(1, |bound|)).
The extremes lie between grid points (mostly on the set's boundary): a 601 x 601 grid alone misses them by up to 1e-3
relative (measured), so each grid extreme is refined by hill-climbing on local grids, 5 times finer at each of 4 levels (their
points are checked by (i) too). The refined extremes from 401, 601 and 801 grids agree within 7.4e-5 relative
(measured on these sets), far below the 1 % asked of the bounds in (ii).

Measured on 734004c (bound vs refined grid extreme, relative to the extreme): logistic, one feature + intercept: lower
0.030 %, upper 0.96 %; logistic, two features: lower 1.10 %, upper 1.67 % (x0), both <= 0.01 % (x1); hinge, one
feature + intercept: lower 0.0000 %, upper 3.50 %; hinge, two features: lower 1.13 %, upper 2.49 % (x0), upper 1.97 %
(x1). (ii) is therefore an expected failure on three of the four sets (strict: the marks must go when they pass).
"""

import functools
import warnings

import numpy as np
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet, model_reliance

RTOL = 1e-9  # rounding of the brute-force sums
TIGHT = 0.01  # issue 28: bounds within 1 % of a brute-force grid's extremes
BC6 = ["mean radius", "mean texture", "mean smoothness", "mean concavity", "worst area", "worst concave points"]


def _loss(name):
    if name == "hinge":
        return lambda m: np.maximum(0.0, 1.0 - m)
    return lambda m: np.log1p(np.exp(-np.abs(m))) - np.minimum(m, 0.0)  # log(1 + e^-m), 5x faster than logaddexp


def _pm1(y):
    y = np.asarray(y, float)
    return np.where(y == y.max(), 1.0, -1.0)


def _brute(D, ye, thetas, k, name, chunk=250):
    """(MR ratio, e_orig) of each row of ``thetas`` switching design column k, from the definition:
    e_switch = Σ_{i≠j} L(y_j (s_j + (D_ik - D_jk) θ_k)) / (n(n-1)), grouping the rows i by their value of D_ik."""
    L = _loss(name)
    n = len(ye)
    vals, counts = np.unique(D[:, k], return_counts=True)
    mr, eo = np.empty(len(thetas)), np.empty(len(thetas))
    for a in range(0, len(thetas), chunk):
        T = thetas[a : a + chunk]
        S = T @ D.T  # (m, n) original scores
        Lo = L(ye * S)
        es = -Lo.sum(1)  # the pair i = j is not a pair
        for v, c in zip(vals, counts):
            es += c * L(ye * (S + np.outer(T[:, k], v - D[:, k]))).sum(1)
        es /= n * (n - 1.0)
        eo[a : a + chunk] = Lo.mean(1)
        mr[a : a + chunk] = es / eo[a : a + chunk]
    return mr, eo


def _via_model_reliance(rs, X, theta, feature):
    """MR of θ by the package's generic model_reliance, on the member's scores (its decision_function)."""
    L = _loss(rs.loss_)
    est = rs.parametrization_.estimator(theta)
    return model_reliance(est.decision_function, X, _pm1(rs.y_), feature, loss=lambda y, p: L(y * p)).ratio


def _data(name):
    if name == "pima":
        from rashomon.datasets import load_pima_diabetes

        d = load_pima_diabetes()
        return d.drop(columns="Outcome"), d["Outcome"]
    from sklearn.datasets import load_breast_cancer

    b = load_breast_cancer(as_frame=True)
    return b.data[BC6].iloc[:300], b.target.iloc[:300]


FAST = {"pima": ["Glucose"], "bc6": ["mean texture"]}  # the features of issue 28's largest gaps


def _check_sampled(data, cls, features):
    X, y = _data(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no third-party warning may leak
        rs = RashomonSet(cls(), 0.1).fit(X, y)
        sample = rs.sample(1000, random_state=0)
    par, eps = rs.parametrization_, rs.epsilon_abs_
    D, ye = par.design(np.asarray(rs.X_, float)), _pm1(rs.y_)
    o = D.shape[1] - X.shape[1]
    th = np.asarray(sample.thetas)
    assert th.shape == (1000, D.shape[1])
    norms = np.einsum("ij,jk,ik->i", th, par.B, th)
    assert np.all(norms <= par.r * (1 + RTOL))
    for f in features:
        k = list(X.columns).index(f) + o
        res = rs.model_class_reliance(f)
        mr, eo = _brute(D, ye, th, k, rs.loss_)
        assert np.all(eo <= eps * (1 + RTOL))  # the members are in the set
        tl, tu = RTOL * max(1.0, abs(res.lower)), RTOL * max(1.0, abs(res.upper))
        assert np.all(mr >= res.lower - tl), (f, mr.min(), res.lower)
        assert np.all(mr <= res.upper + tu), (f, mr.max(), res.upper)
        # the attaining members are in the set, with the MR reported
        for m in (res.lower_model, res.upper_model):
            bm, be = _brute(D, ye, np.asarray(m.theta, float)[None, :], k, rs.loss_)
            assert be[0] <= eps * (1 + RTOL) and bm[0] == pytest.approx(m.mr, rel=RTOL)
        # the brute force is the package's model_reliance on the member's estimator
        for i in (int(np.argmin(mr)), int(np.argmax(mr)), 0):
            assert _via_model_reliance(rs, X, th[i], f) == pytest.approx(mr[i], rel=RTOL)


@pytest.mark.usefixtures("small_budget")
@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
@pytest.mark.parametrize("data", ["pima", "bc6"])
def test_sampled_members_inside_every_interval(data, cls):
    _check_sampled(data, cls, FAST[data])


@pytest.mark.slow
@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
@pytest.mark.parametrize("data", ["pima", "bc6"])
def test_sampled_members_inside_every_interval_all_features(data, cls):
    _check_sampled(data, cls, list(_data(data)[0].columns))


def _two_parameter_set(cls, design):
    """A 2-parameter set: one feature and an intercept ('intercept'), or two features without it ('plain')."""
    rng = np.random.default_rng(1)
    if design == "intercept":
        x = np.round(2 * rng.normal(size=50)) / 2
        y = (x + rng.logistic(size=50) > 0).astype(int)
        X = x[:, None]
        mc = cls(norm_bound=4.0)
    else:
        X = np.round(2 * rng.normal(size=(50, 2))) / 2
        X[:, 1] += 0.5 * X[:, 0]
        y = (X @ [1.2, -0.8] + rng.logistic(size=50) > 0).astype(int)
        mc = cls(fit_intercept=False, standardize=False, norm_bound=3.0)
    return X, y, RashomonSet(mc, 0.1).fit(X, y)


def _inside(rs, G):
    par = rs.parametrization_
    D, ye = par.design(np.asarray(rs.X_, float)), _pm1(rs.y_)
    eo = _loss(rs.loss_)(ye * (G @ D.T)).mean(1)
    return (eo <= rs.epsilon_abs_) & (np.einsum("ij,jk,ik->i", G, par.B, G) <= par.r)


def _grid(rs, n=601):
    """The grid points in the set, on a box whose edge holds none of them (found by doubling a coarse box)."""
    half = np.array([1.0, 1.0])
    centre = np.asarray(rs.theta_min_, float)
    for _ in range(30):
        g = [np.linspace(c - h, c + h, 101) for c, h in zip(centre, half)]
        G = np.stack(np.meshgrid(*g, indexing="ij"), -1)
        inn = _inside(rs, G.reshape(-1, 2)).reshape(101, 101)
        grow = np.array([inn[[0, -1], :].any(), inn[:, [0, -1]].any()])
        if not grow.any():
            break
        half = np.where(grow, 2 * half, half)
    else:
        raise AssertionError("no box holds the set")
    ext = np.array([g[i][np.flatnonzero(inn.any(axis=1 - i))[[0, -1]] + [-1, 1]] for i in range(2)])  # a step out
    for _ in range(20):  # the fine grid: widen any side whose edge holds a point of the set (a thin set)
        g = [np.linspace(a, b, n) for a, b in ext]
        G = np.stack(np.meshgrid(*g, indexing="ij"), -1).reshape(-1, 2)
        inn = _inside(rs, G)
        edge = inn.reshape(n, n)
        grow = np.array([[edge[0, :].any(), edge[-1, :].any()], [edge[:, 0].any(), edge[:, -1].any()]])
        if not grow.any():  # the set lies inside the box
            break
        ext += 0.05 * (ext[:, 1:] - ext[:, :1]) * grow * [-1, 1]
    else:
        raise AssertionError("no box holds the set")
    assert inn.sum() > 10_000
    return G[inn], (ext[:, 1] - ext[:, 0]) / (n - 1)


def _refine(rs, D, ye, k, pt, h, sign, levels=4, m=41):
    """The grid's extreme ``pt`` (sign +1: max, -1: min) refined by hill-climbing on local m x m grids of half-width
    4 spacings: the window re-centres on its best point until that stops moving (so it can follow a flat boundary),
    then the spacing shrinks 5-fold. Returns (best MR, every MR computed, their points)."""
    best_pt, best, seen, pts = np.asarray(pt, float), -np.inf * sign, [], []
    for _ in range(levels):
        for _ in range(100):
            g = [np.linspace(c - 4 * s, c + 4 * s, m) for c, s in zip(best_pt, h)]
            G = np.stack(np.meshgrid(*g, indexing="ij"), -1).reshape(-1, 2)
            G = G[_inside(rs, G)]
            mr, _ = _brute(D, ye, G, k, rs.loss_, chunk=2000)
            seen.append(mr)
            pts.append(G)
            i = int(np.argmax(sign * mr))
            if not sign * mr[i] > sign * best:
                break
            best, best_pt = mr[i], G[i]
        h = h / 5
    return best, np.concatenate(seen), np.concatenate(pts)


@functools.cache
def _grid_check(cls, design):
    """Per feature: (lower gap, upper gap) of the bounds against the grid's extremes, relative to them; asserts (i)."""
    X, y, rs = _two_parameter_set(cls, design)
    par = rs.parametrization_
    D, ye = par.design(np.asarray(rs.X_, float)), _pm1(rs.y_)
    grid, h = _grid(rs)
    out = []
    for f in range(X.shape[1]):
        k = f + D.shape[1] - X.shape[1]
        res = rs.model_class_reliance(f)
        mr, _ = _brute(D, ye, grid, k, rs.loss_, chunk=2000)
        lo, mr_lo, pt_lo = _refine(rs, D, ye, k, grid[np.argmin(mr)], h, -1.0)
        hi, mr_hi, pt_hi = _refine(rs, D, ye, k, grid[np.argmax(mr)], h, 1.0)
        mr, pts = np.concatenate([mr, mr_lo, mr_hi]), np.concatenate([grid, pt_lo, pt_hi])
        # (i) valid: every grid member inside the certified interval
        assert mr.min() >= res.lower - RTOL * max(1.0, abs(res.lower)), (mr.min(), res.lower)
        assert mr.max() <= res.upper + RTOL * max(1.0, abs(res.upper)), (mr.max(), res.upper)
        for i in (int(np.argmin(mr)), int(np.argmax(mr))):  # the definition is the package's model_reliance
            assert _via_model_reliance(rs, X, pts[i], f) == pytest.approx(mr[i], rel=RTOL)
        assert mr.min() == lo and mr.max() == hi
        out.append(((lo - res.lower) / abs(lo), (res.upper - hi) / abs(hi)))
    return tuple(out)


@pytest.mark.parametrize("design", ["intercept", "plain"])
@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_grid_inside_bounds(cls, design):
    _grid_check(cls, design)


def _loose(gaps):
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"issue 28: bounds not yet within 1 % of the grid on 734004c: {gaps}"
    )


@pytest.mark.parametrize(
    "cls, design",
    [
        (LogisticModelClass, "intercept"),
        pytest.param(LogisticModelClass, "plain", marks=_loose("lower 1.10 %, upper 1.67 % (x0)")),
        (HingeModelClass, "intercept"),
        pytest.param(HingeModelClass, "plain", marks=_loose("lower 1.13 %, upper 2.49 % (x0); upper 1.97 % (x1)")),
    ],
)
def test_bounds_within_one_percent_of_grid(cls, design):
    gaps = _grid_check(cls, design)
    assert all(lo <= TIGHT and up <= TIGHT for lo, up in gaps), gaps
