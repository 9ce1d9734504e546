"""Disparity ranges and the least disparate member over Rashomon sets (issue 29).

Validity: 1,000 sampled members inside every range (every metric, regression and logistic sets); exactness:
linear-functional ranges against cvxpy/Clarabel (1e-6), the squared group loss and the zero-disparity member
attained; members' metrics against fairlearn's MetricFrame (1e-12).
"""

import json

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    false_positive_rate,
    mean_prediction,
    selection_rate,
    true_positive_rate,
)
from scipy.special import expit
from sklearn.metrics import mean_squared_error

from rashomon import KernelModelClass, LinearModelClass, LogisticModelClass, RashomonSet
from rashomon.utils.validation import RashomonInputError

SOLVER_REL = 1e-6  # agreement with cvxpy / Clarabel (its own accuracy)
FAIRLEARN_TOL = 1e-12
REG_METRICS = [
    ("mean_prediction", {}),
    ("mean_residual", {}),
    ("group_loss", {}),
    ("positive_rate", {"threshold": 0.0}),
    ("true_positive_rate", {"threshold": 0.0, "positive": 1.0}),
    ("false_positive_rate", {"threshold": 0.0, "positive": 1.0}),
]
CLF_METRICS = [
    ("mean_prediction", {}),
    ("mean_residual", {}),
    ("group_loss", {}),
    ("positive_rate", {}),
    ("true_positive_rate", {}),
    ("false_positive_rate", {}),
    ("mean_prediction", {"scale": "score"}),
]


def _data(seed=0, n=240, classify=False):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame({"a": rng.normal(size=n) + 0.5 * s, "b": rng.normal(size=n), "s": s})
    lin = X.a + 0.5 * X.b + 0.4 * X.s
    y = (lin + rng.logistic(size=n) > 0.3).astype(float) if classify else (lin + rng.normal(size=n)).round()
    return X, y


@pytest.fixture(scope="module")
def reg_set():
    X, y = _data()
    return RashomonSet(LinearModelClass(), 0.1).fit(X, y), X, y


@pytest.fixture(scope="module")
def clf_set():
    X, y = _data(1, 300, classify=True)
    return RashomonSet(LogisticModelClass(), 0.05).fit(X, y), X, y


def _cvxpy_min(rs, c, sign):
    par, eo = rs.parametrization_, rs.e_orig_form_
    lam, U = np.linalg.eigh(0.5 * (eo.Q + eo.Q.T))
    L = U * np.sqrt(np.clip(lam, 0.0, None))
    th = cp.Variable(len(eo.c))
    cons = [
        cp.sum_squares(L.T @ th) - 2 * eo.c @ th + eo.k <= rs.epsilon_abs_,
        cp.quad_form(th, cp.psd_wrap(par.B)) <= par.r,
    ]
    prob = cp.Problem(cp.Minimize(sign * (c @ th)), cons)
    try:
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    except cp.SolverError:
        prob.solve(solver="CLARABEL")
    return sign * prob.value


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("kind", ["linear", "kernel"])
@pytest.mark.parametrize("metric", ["mean_prediction", "mean_residual"])
def test_linear_disparity_equals_cvxpy(kind, metric):
    X, y = _data(3, 150)
    mc = LinearModelClass() if kind == "linear" else KernelModelClass(dictionary=40)
    rs = RashomonSet(mc, 0.1).fit(X, y)
    res = rs.disparity_range("s", metric)
    assert res.exact.all() and res.method.startswith("exact")
    P, p0 = rs.parametrization_.prediction_map(rs.X_)
    g1, g0 = rs.X_[:, 2] == 1, rs.X_[:, 2] == 0
    c = P[g1].mean(0) - P[g0].mean(0)
    c0 = p0[g1].mean() - p0[g0].mean()
    if metric == "mean_residual":
        c, c0 = -c, y[g1].mean() - y[g0].mean() - c0
    assert res.lower[0] == pytest.approx(_cvxpy_min(rs, c, 1.0) + c0, rel=SOLVER_REL, abs=SOLVER_REL)
    assert res.upper[0] == pytest.approx(_cvxpy_min(rs, c, -1.0) + c0, rel=SOLVER_REL, abs=SOLVER_REL)
    # each end attained by a member of the set
    for end, v in (("lower", res.lower_attained[0]), ("upper", res.upper_attained[0])):
        th = (res.lower_models if end == "lower" else res.upper_models)[0]
        assert rs.e_orig_form_(th) <= rs.epsilon_abs_ * (1 + 1e-12)
        assert res.evaluate(th)[0, 0] == pytest.approx(v, abs=1e-12)


@pytest.mark.parametrize("metric,kw", REG_METRICS)
def test_sampled_members_inside_every_range_regression(reg_set, metric, kw):
    rs, X, y = reg_set
    smp = rs.sample(1000, random_state=0)
    for kind in ("difference", "ratio"):
        if kind == "ratio" and metric == "mean_residual":
            continue
        if kind == "ratio" and metric == "mean_prediction":
            continue  # the mean prediction of a group can be 0 on this set (y centred)
        res = rs.disparity_range("s", metric, kind=kind, **kw)
        D = res.evaluate(smp.thetas)
        slack = 1e-9 * np.maximum(1.0, np.abs(res.upper - res.lower))
        assert np.all(D >= res.lower - slack) and np.all(D <= res.upper + slack)
        assert np.all(res.lower <= res.lower_attained + 1e-15) and np.all(res.upper_attained <= res.upper + 1e-15)
        if metric in ("mean_prediction", "mean_residual", "group_loss"):  # exact
            assert res.exact[0]
            assert res.gap[:, 0].max() <= 1e-6 * max(1.0, abs(res.upper[0]))


@pytest.mark.parametrize("metric,kw", CLF_METRICS)
def test_sampled_members_inside_every_range_logistic(clf_set, metric, kw):
    rs, X, y = clf_set
    smp = rs.sample(1000, random_state=0)
    res = rs.disparity_range("s", metric, **kw)
    D = res.evaluate(smp.thetas)
    slack = 1e-9 * np.maximum(1.0, np.abs(res.upper - res.lower))
    assert np.all(D >= res.lower - slack) and np.all(D <= res.upper + slack)
    assert np.all(res.gap >= -1e-15)
    # the score scale is linear: exact; the probability scale and the rates: outer bounds flagged as such
    assert res.exact[0] == (kw.get("scale") == "score")


def _fairlearn_by_group(metric, y, pred, s, positive, threshold):
    yb = (y == positive).astype(int) if positive is not None else y
    if metric == "mean_prediction":
        return MetricFrame(metrics=mean_prediction, y_true=y, y_pred=pred, sensitive_features=s)
    if metric == "mean_residual":
        return MetricFrame(
            metrics=lambda t, p: float(np.mean(t - p)),
            y_true=yb if positive is not None else y,
            y_pred=pred,
            sensitive_features=s,
        )
    if metric == "group_loss":
        return MetricFrame(metrics=mean_squared_error, y_true=y, y_pred=pred, sensitive_features=s)
    f = {
        "positive_rate": selection_rate,
        "true_positive_rate": true_positive_rate,
        "false_positive_rate": false_positive_rate,
    }[metric]
    return MetricFrame(metrics=f, y_true=yb, y_pred=(pred > threshold).astype(int), sensitive_features=s)


@pytest.mark.parametrize("metric,kw", REG_METRICS)
def test_members_metrics_equal_fairlearn_regression(reg_set, metric, kw):
    rs, X, y = reg_set
    res = rs.disparity_range("s", metric, **kw)
    spec = res.spec
    for end in ("lower", "upper"):
        m = res.member(0, end)
        pred = m.predict(X)
        mf = _fairlearn_by_group(metric, y.to_numpy(), pred, X["s"], spec.positive, spec.threshold)
        ours = spec.group_values(m.theta_)[0]
        assert np.abs(ours - mf.by_group.to_numpy()).max() <= FAIRLEARN_TOL
        d = res.evaluate(m.theta_)[0]
        assert abs(d[-1] - mf.difference()) <= FAIRLEARN_TOL  # between groups: max - min
        if metric == "positive_rate":
            yhat = (pred > spec.threshold).astype(int)
            assert abs(d[-1] - demographic_parity_difference(y, yhat, sensitive_features=X["s"])) <= FAIRLEARN_TOL


@pytest.mark.parametrize("metric,kw", CLF_METRICS[:-1])
def test_members_metrics_equal_fairlearn_logistic(clf_set, metric, kw):
    rs, X, y = clf_set
    res = rs.disparity_range("s", metric, **kw)
    spec = res.spec
    for th in (res.lower_models[0], res.upper_models[0], rs.reference_theta_):
        m = rs.parametrization_.estimator(th)
        p = expit(m.decision_function(X))
        if metric == "group_loss":
            from sklearn.metrics import log_loss

            mf = MetricFrame(
                metrics=lambda t, q: log_loss(t, q, labels=[0, 1]), y_true=y, y_pred=p, sensitive_features=X["s"]
            )
        else:
            mf = _fairlearn_by_group(metric, y.to_numpy(), p, X["s"], 1.0, spec.threshold)
        ours = spec.group_values(th)[0]
        assert np.abs(ours - mf.by_group.to_numpy()).max() <= FAIRLEARN_TOL


def test_ratio_between_row_is_fairlearns_demographic_parity_ratio(clf_set):
    rs, X, y = clf_set
    rr = rs.disparity_range("s", "positive_rate", kind="ratio")
    th = rr.upper_models[-1]
    yhat = (expit(rs.parametrization_.estimator(th).decision_function(X)) > 0.5).astype(int)
    assert abs(rr.evaluate(th)[0, -1] - demographic_parity_ratio(y, yhat, sensitive_features=X["s"])) <= FAIRLEARN_TOL


def test_ratio_linear_is_certified_and_attained():
    X, y = _data(4, 200)
    y = y + 10.0  # positive predictions on the whole set
    rs = RashomonSet(LinearModelClass(), 0.1).fit(X, y)
    res = rs.disparity_range("s", "mean_prediction", kind="ratio")
    assert res.exact[0]
    smp = rs.sample(1000, random_state=1)
    D = res.evaluate(smp.thetas)[:, 0]
    assert D.min() >= res.lower[0] - 1e-12 and D.max() <= res.upper[0] + 1e-12
    # a fine scan of the ratio on the segment between the two end members never leaves the range
    t = np.linspace(0, 1, 101)[:, None]
    seg = res.lower_models[0] + t * (res.upper_models[0] - res.lower_models[0])
    assert res.evaluate(seg)[:, 0].min() >= res.lower[0] - 1e-12


def test_three_groups_reference_and_between_row(reg_set):
    rs, X, y = reg_set
    g = np.random.default_rng(0).choice(["x", "y", "z"], size=len(y))
    res = rs.disparity_range(g, "mean_prediction", reference_group="y")
    assert res.names == ["x - y", "z - y", "max - min"] and res.reference_group == "y"
    smp = rs.sample(1000, random_state=2)
    D = res.evaluate(smp.thetas)
    assert np.all(D >= res.lower - 1e-12) and np.all(D <= res.upper + 1e-12)
    assert res.exact[:2].all()
    mf = MetricFrame(metrics=mean_prediction, y_true=y, y_pred=res.member(2, "upper").predict(X), sensitive_features=g)
    assert abs(res.upper_attained[2] - mf.difference()) <= FAIRLEARN_TOL


def test_least_disparate_exact_at_parity():
    rng = np.random.default_rng(7)
    n = 240
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "s": rng.integers(0, 2, n).astype(float)})
    y = X.a + 0.5 * X.b + 0.1 * X.s + rng.normal(size=n)
    rs = RashomonSet(LinearModelClass(), 0.1).fit(X, y)
    ld = rs.least_disparate("s", features=["a", "s"], benchmark=y.to_numpy())
    r = ld.range
    assert r.lower[0] < 0 < r.upper[0]
    assert ld.exact and ld.certified_lower == 0 and abs(ld.disparity) <= 1e-12
    th = ld.theta
    assert rs.e_orig_form_(th) <= rs.epsilon_abs_ and th @ rs.parametrization_.B @ th <= rs.parametrization_.r
    fr = ld.frontier
    assert fr.zero_loss_lower <= ld.loss <= fr.zero_loss_upper * (1 + 1e-12)
    # below the least loss at parity no member reaches parity (certified)
    below = RashomonSet(LinearModelClass(), fr.zero_loss_lower, epsilon_kind="absolute").fit(X, y)
    assert below.disparity_range("s").lower[-1] >= 0
    assert np.all(np.diff(fr.lower) <= 1e-12)  # the least disparity falls as ε grows
    assert list(ld.reliance["features"]) == ["a", "s"]
    assert ld.benchmark["position"] == "inside"
    json.dumps(ld.to_dict())


def test_least_disparate_when_parity_is_out_of_reach():
    X, y = _data(5, 200)
    y = y + 2.0 * X["s"]
    rs = RashomonSet(LinearModelClass(), 0.02).fit(X, y)
    ld = rs.least_disparate("s", frontier=False)
    r = ld.range
    assert r.lower[0] > 0
    assert ld.exact and ld.disparity == pytest.approx(r.lower[0], abs=1e-9)
    assert ld.certified_lower == pytest.approx(r.lower[0], abs=1e-9)
    bench = rs.least_disparate("s", frontier=False, benchmark=np.where(X["s"] == 1, 5.0, 0.0)).benchmark
    assert bench["position"] == "above" and bench["more_disparate_than_every_member"]


def test_group_loss_exact_with_members(reg_set):
    rs, X, y = reg_set
    res = rs.disparity_range("s", "group_loss")
    assert res.exact[0] and res.method.startswith("exact")
    for end in ("lower", "upper"):
        th = (res.lower_models if end == "lower" else res.upper_models)[0]
        assert rs.e_orig_form_(th) <= rs.epsilon_abs_


def test_logistic_least_disparate_positive_rate(clf_set):
    rs, X, y = clf_set
    ld = rs.least_disparate("s", "positive_rate", frontier=False, features=["s"])
    assert not ld.exact  # combinatorial: certified lower bound and an attained value
    assert ld.certified_lower <= abs(ld.disparity) + 1e-15
    assert ld.loss <= rs.epsilon_abs_


def test_plots_and_dicts(reg_set):
    import matplotlib

    matplotlib.use("Agg")
    rs, X, y = reg_set
    res = rs.disparity_range("s")
    res.plot(benchmark=0.3)
    ld = rs.least_disparate("s", epsilons=[0.02, 0.05, 0.1, 0.2])
    ld.plot()
    json.dumps(res.to_dict())
    assert "DisparityRange(" in repr(res) and len(repr(res)) < 300
    assert list(res.to_frame().columns)[:3] == ["disparity", "lower", "lower_attained"]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"sensitive": "nope"}, "'sensitive' parameter of RashomonSet.disparity_range must be a column name"),
        ({"sensitive": np.zeros(3)}, "1-d array of 240 group labels"),
        ({"sensitive": np.zeros(240)}, "two or more groups"),
        ({"sensitive": "s", "metric": "accuracy"}, "'metric' parameter of RashomonSet.disparity_range must be one of"),
        ({"sensitive": "s", "threshold": 0.5}, "applies to positive_rate"),
        ({"sensitive": "s", "metric": "mean_residual", "kind": "ratio"}, "must be 'difference'"),
        ({"sensitive": "s", "scale": "probability"}, "'scale' parameter"),
    ],
)
def test_bad_inputs(reg_set, kwargs, match):
    rs = reg_set[0]
    with pytest.raises(RashomonInputError, match=match):
        rs.disparity_range(**kwargs)


def test_bad_inputs_classifier(clf_set):
    rs = clf_set[0]
    with pytest.raises(RashomonInputError, match="'positive' parameter"):
        rs.disparity_range("s", "true_positive_rate", positive=0.0)
    with pytest.raises(RashomonInputError, match="'threshold' parameter .* in \\(0, 1\\)"):
        rs.disparity_range("s", "positive_rate", threshold=2.0)
