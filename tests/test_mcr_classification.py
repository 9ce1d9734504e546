"""Classifier MCR (logistic and hinge classes): valid and certified at both ends, checked on members
sampled from the set, a closed-form case, and the RashomonSet API."""

import warnings

import numpy as np
import pytest

from rashomon import HingeModelClass, LinearModelClass, LogisticModelClass, RashomonSet, model_reliance
from rashomon.datasets import load_pima_diabetes
from rashomon.sets.margin._sample import sample_margin_members
from rashomon.utils.validation import RashomonInputError

TOL = 2.0**-20


def _pima(n=250):
    df = load_pima_diabetes().iloc[:n]
    return df.drop(columns="Outcome"), df["Outcome"]


def _mr_of(rs, th, group):
    T = rs._margin
    from rashomon.sets.margin._terms import MarginTerms

    terms = MarginTerms(T.D, T.y, np.asarray(group) + T.o)
    return terms.e_switch(th, T.loss) / terms.e_orig(th, T.loss), terms.e_orig(th, T.loss)


@pytest.mark.usefixtures("small_budget")
@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_sampled_members_inside_certified_interval(cls):
    X, y = _pima()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = RashomonSet(cls(), 0.1).fit(X, y)
        thetas = sample_margin_members(rs, 1000, random_state=0, thin=2)
        for feat in ("Glucose", "Age"):
            res = rs.model_class_reliance(feat)
            g = [list(X.columns).index(feat)]
            assert res.lower_certified and res.upper_certified and res.certified
            assert res.lower <= res.reference_model.mr <= res.upper
            assert res.lower_gap >= 0 and res.upper_gap >= 0
            # the attaining members are in the set, with the MR reported
            for m in (res.lower_model, res.upper_model):
                mr, eo = _mr_of(rs, m.theta, g)
                assert eo <= res.epsilon_abs and m.theta @ rs._margin.B @ m.theta <= rs._margin.r * (1 + 1e-9)
                assert mr == pytest.approx(m.mr, rel=1e-12)
            assert res.lower_model.mr - res.lower == pytest.approx(res.lower_gap, abs=1e-12)
            # 1,000 members from the set: every one's MR inside [lower, upper]
            assert len(thetas) == 1000
            mrs = np.array([_mr_of(rs, th, g)[0] for th in thetas])
            eos = np.array([_mr_of(rs, th, g)[1] for th in thetas])
            assert np.all(eos <= res.epsilon_abs)
            assert np.all(mrs >= res.lower - 1e-9) and np.all(mrs <= res.upper + 1e-9)
            assert mrs.max() <= res.upper_model.mr + 1e-9 or res.upper_gap > 0


def test_members_match_model_reliance():
    X, y = _pima()
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
    res = rs.model_class_reliance("BMI")
    est = res.upper_model.estimator
    f = lambda Z: np.asarray(Z) @ est.coef_ + est.intercept_  # noqa: E731
    L = lambda yy, z: np.logaddexp(0.0, -(2 * yy - 1) * z)  # noqa: E731
    mr = model_reliance(f, X.to_numpy(), y.to_numpy(), [5], loss=L)
    assert mr.ratio == pytest.approx(res.upper_model.mr, rel=1e-9)
    assert mr.e_orig == pytest.approx(res.upper_model.e_orig, rel=1e-9)


@pytest.mark.usefixtures("small_budget")
def test_closed_form_independent_feature():
    """A feature crossed with every other row (full factorial): e_switch = e_orig for every model, so MCR is
    exactly [1, 1] (ratio) and [0, 0] (difference), certified and tight; MR from the explicit n(n-1) pairs is 1
    on 20 sampled members. Breaking the balance (one row dropped) goes back to the general path."""
    rng = np.random.default_rng(0)
    base = rng.normal(size=(60, 2))
    yb = (base[:, 0] + 0.5 * rng.logistic(size=60) > 0).astype(float)
    vals = np.array([-1.0, 0.0, 2.0])
    X = np.vstack([np.column_stack([base, np.full(60, v)]) for v in vals])
    y = np.tile(yb, 3)
    for cls in (LogisticModelClass, HingeModelClass):
        res = RashomonSet(cls(norm_bound=2.0), 0.1).fit(X, y).model_class_reliance(2)
        assert res.lower_model.mr == pytest.approx(1.0, abs=1e-12)
        assert res.upper_model.mr == pytest.approx(1.0, abs=1e-12)
        assert res.lower == res.upper == 1.0 and res.certified and res.lower_tight and res.upper_tight
        rs = RashomonSet(cls(norm_bound=2.0), 0.1).fit(X, y)
        dif = rs.model_class_reliance(2, kind="difference")
        assert dif.lower == dif.upper == 0.0 and abs(dif.upper_model.mr) <= 1e-12
        D, ye, k = rs._margin.D, rs._margin.y, 2 + rs._margin.o
        i, j = np.where(~np.eye(len(ye), dtype=bool))
        Dsw = D[j].copy()
        Dsw[:, k] = D[i, k]
        for th in sample_margin_members(rs, 20, random_state=0):
            mr = np.mean(rs._margin.loss.exact(ye[j] * (Dsw @ th))) / np.mean(rs._margin.loss.exact(ye * (D @ th)))
            assert mr == pytest.approx(1.0, abs=1e-12)
        gen = RashomonSet(cls(norm_bound=2.0), 0.1).fit(X[1:], y[1:]).model_class_reliance(2)
        assert gen.lower < gen.upper and "independent" not in gen.notes


def test_linear_class_with_logistic_loss_routes_to_classifier_path():
    X, y = _pima(150)
    a = RashomonSet(LinearModelClass(norm_bound=1.5), 0.1, loss="logistic").fit(X, y).model_class_reliance(1)
    b = RashomonSet(LogisticModelClass(norm_bound=1.5), 0.1).fit(X, y).model_class_reliance(1)
    assert a.lower == pytest.approx(b.lower, rel=1e-12) and a.upper == pytest.approx(b.upper, rel=1e-12)
    assert a.upper_certified


def test_classifier_bad_inputs():
    X, y = _pima(100)
    with pytest.raises(RashomonInputError, match="'y' parameter of RashomonSet.fit"):
        RashomonSet(LogisticModelClass(), 0.1).fit(X, y + 2)
    with pytest.raises(RashomonInputError, match="'loss' parameter"):
        RashomonSet(LogisticModelClass(), 0.1, loss="hinge").fit(X, y)
    with pytest.raises(RashomonInputError, match="'smoothing' parameter of HingeModelClass"):
        RashomonSet(HingeModelClass(smoothing=0.5), 0.1).fit(X, y)
    with pytest.raises(RashomonInputError, match="both classes"):
        RashomonSet(LogisticModelClass(), 0.1).fit(X, np.ones(len(y)))


def _small_set(cls, n=40):
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 4, size=n).astype(float), rng.normal(size=n)])
    y = (X[:, 0] - 0.5 * X[:, 1] + rng.logistic(size=n) > 0).astype(float)
    return RashomonSet(cls(norm_bound=2.0), 0.1).fit(X, y)


@pytest.mark.parametrize("gamma", [0.0, 0.7])
def test_hinge_step_certificate_against_exact_program(gamma):
    """The hinge γ-step (smoothing schedule, weak-duality bound): the bound is below the exact minimum of
    the piecewise-linear program over all n(n-1) pairs (cvxpy, Clarabel) and the returned point's exact
    objective is within the requested accuracy of the bound."""
    import cvxpy as cp

    from rashomon.sets.margin._bounds import intercept_interval
    from rashomon.sets.margin._terms import MarginTerms

    rs = _small_set(HingeModelClass)
    ms = rs._margin
    D, y, n = ms.D, ms.y, len(ms.y)
    T = MarginTerms(D, y, np.array([1 + ms.o]))
    lo, hi = intercept_interval(D, y, ms.o, ms.B, ms.r, ms.loss, rs.epsilon_abs_)
    atol = 1e-7
    th, lb, ok = ms.solve(gamma, 1.0, T, lo, hi, None, atol=atol)
    f = gamma * T.e_orig(th, ms.loss) + T.e_switch(th, ms.loss)
    # brute force: every ordered pair i != j, the group's column from row i, the rest from row j
    i, j = np.where(~np.eye(n, dtype=bool))
    Dsw = D[j].copy()
    Dsw[:, 1 + ms.o] = D[i, 1 + ms.o]
    t = cp.Variable(D.shape[1])
    obj = gamma * cp.sum(cp.pos(1 - cp.multiply(y, D @ t))) / n + cp.sum(cp.pos(1 - cp.multiply(y[j], Dsw @ t))) / len(
        i
    )
    P = ms.B[ms.o :, ms.o :]
    cons = [cp.quad_form(t[ms.o :], 0.5 * (P + P.T)) <= ms.r, t[0] >= lo[0], t[0] <= hi[0]]
    exact = cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL")
    assert ok
    assert lb <= exact + 1e-8  # valid
    assert f - lb <= atol * (1 + 1e-6)  # tight to the requested accuracy
    assert exact <= f + 1e-8  # (sanity of the reference)
    assert th[ms.o :] @ P @ th[ms.o :] <= ms.r * (1 + 1e-9) and lo[0] - 1e-12 <= th[0] <= hi[0] + 1e-12


def test_switch_parts_blocks_and_sharp_path(monkeypatch):
    """Blockwise sums over the switched values equal the one-block sums; the sharp-smoothing path (kink
    neighbourhood only) equals the dense formula."""
    import rashomon.sets.margin._terms as mt
    from rashomon.model_classes import MarginLoss

    rs = _small_set(LogisticModelClass, n=120)
    ms = rs._margin
    th = ms.theta_min + 0.1
    for loss in (MarginLoss("logistic"), MarginLoss("hinge", 1e-2, 1.0), MarginLoss("hinge", 1e-5, 1.0)):
        one = mt.MarginTerms(ms.D, ms.y, np.array([1 + ms.o]))
        monkeypatch.setattr(mt, "_BLOCK", 150)  # one value of the group per block
        many = mt.MarginTerms(ms.D, ms.y, np.array([1 + ms.o]))
        monkeypatch.undo()
        assert len(many._blocks) > 1 and len(one._blocks) == 1
        for a, b in zip(one.switch_parts(th, loss, 2), many.switch_parts(th, loss, 2)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        assert one.e_switch(th, loss) == pytest.approx(many.e_switch(th, loss), rel=1e-13)
    rng = np.random.default_rng(0)
    m = 1 + rng.normal(size=500) * rng.choice([1e-6, 1e-4, 1.0], size=500)
    for tau in (1e-3, 1e-5, 1e-7):
        loss = MarginLoss("hinge", tau, 1.0)
        u = (1 - m) / tau
        p = 1 / (1 + np.exp(-np.clip(u, -700, 700)))
        l0, l1, l2 = mt._derivs(loss, m)
        np.testing.assert_allclose(l0, tau * np.logaddexp(0, u), rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(l1, -p, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(l2 * tau, p * (1 - p), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(mt._value(loss, m), l0, rtol=0, atol=0)


def test_hinge_default_ball_is_the_same_whatever_the_global_random_state():
    """The default norm bound of the hinge class comes from liblinear, which shuffles rows: its seed is fixed, so
    fits in different processes (different global random states) give the same set, bit for bit."""
    from rashomon import HingeModelClass, RashomonSet
    from rashomon.datasets import load_pima_diabetes

    p = load_pima_diabetes().iloc[:200]
    X, y = p.drop(columns="Outcome"), p["Outcome"]
    rs = []
    for seed in (1, 2):
        np.random.seed(seed)  # what liblinear draws from when it is not given a random_state
        rs.append(RashomonSet(HingeModelClass(), 0.1).fit(X, y))
    assert rs[0].parametrization_.r == rs[1].parametrization_.r
    assert rs[0].epsilon_abs_ == rs[1].epsilon_abs_


@pytest.mark.parametrize("keep", [True, False])
def test_switched_sums_over_row_classes_equal_all_pairs(monkeypatch, keep):
    """Rows sharing the rest of the design and the label are summed as one column (row classes): value,
    gradient and Hessian of e_switch equal the explicit sum over all n(n-1) ordered pairs, with heavy
    duplication (categorical rest columns, own values differing inside a class), weights kept or rebuilt."""
    import rashomon.sets.margin._terms as mt
    from rashomon.model_classes import MarginLoss

    rng = np.random.default_rng(3)
    n = 90
    D = np.column_stack([np.ones(n), rng.integers(0, 5, n), rng.integers(0, 2, n), rng.integers(0, 3, n)]).astype(float)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    if not keep:
        monkeypatch.setattr(mt, "_KEEP", 0)
    T = mt.MarginTerms(D, y, np.array([1]))
    assert len(T.ys) < n / 2  # the classes compress
    i, j = np.where(~np.eye(n, dtype=bool))
    Dsw = D[j].copy()
    Dsw[:, 1] = D[i, 1]
    th = np.array([0.2, -0.7, 1.1, 0.4])
    for loss in (MarginLoss("logistic"), MarginLoss("hinge", 0.05, 1.0)):
        m = y[j] * (Dsw @ th)
        l0, l1, l2 = mt._derivs(loss, m)
        f, g, H = T.switch_parts(th, loss, 2)
        assert f == pytest.approx(l0.mean(), rel=1e-13)
        np.testing.assert_allclose(g, Dsw.T @ (l1 * y[j]) / len(i), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(H, (Dsw.T * (l2 / len(i))) @ Dsw, rtol=1e-12, atol=1e-15)
        assert T.e_switch(th, loss) == pytest.approx(float(np.mean(loss.exact(m))), rel=1e-13)
    hv = np.maximum(0.0, 1.0 - y[j] * (Dsw @ th))
    assert T.hinge_dual(th, 0.1, 0.0, 1.0)[0] == pytest.approx(hv.mean(), rel=1e-13)


@pytest.mark.usefixtures("small_budget")
def test_same_bits_whatever_the_blas_thread_count():
    """COMPAS (6,172 rows: large enough for OpenBLAS to split n x d products across threads, which changed the
    last bit of the upper bound): fit and MCR give the same bits under 1 and 2 BLAS threads (a joblib worker
    has one), because both run with one."""
    import pandas as pd
    from threadpoolctl import threadpool_limits

    from rashomon.datasets import load_compas

    c = load_compas()
    X = pd.get_dummies(c[["race", "sex", "c_charge_degree"]], drop_first=True, dtype=float)
    X["priors_count"], X["age"] = c["priors_count"].astype(float), c["age"].astype(float)
    out = []
    for k in (2, 1):
        with threadpool_limits(limits=k):
            rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, c["two_year_recid"])
            r = rs.model_class_reliance("race_Asian")
        out.append(
            (rs.theta_min_.tobytes(), r.lower, r.upper, r.upper_model.theta.tobytes(), r.lower_model.theta.tobytes())
        )
    assert out[0] == out[1]
