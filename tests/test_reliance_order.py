"""Reliance differences MR(a) - MR(b) over a Rashomon set and the certified order of features (issue 29)."""

import json

import numpy as np
import pandas as pd
import pytest

from rashomon import KernelModelClass, LinearModelClass, LogisticModelClass, RashomonSet
from rashomon.utils.validation import RashomonInputError

GRID = 801


def _two_param_set(seed, eps=0.2):
    rng = np.random.default_rng(seed)
    n = 80
    x1 = rng.normal(size=n)
    X = np.column_stack([x1, 0.6 * x1 + 0.8 * rng.normal(size=n)])
    y = X @ [1.0, 0.7] + rng.normal(size=n)
    rs = RashomonSet(LinearModelClass(fit_intercept=False), eps).fit(X, y)
    assert rs.parametrization_.dim == 2
    return rs


def _grid_values(rs, kind):
    """Brute force: every θ of an 801² grid over the set's bounding box, kept when inside the set."""
    box = rs.functional_range(np.eye(2))
    t0 = np.linspace(box.lower[0], box.upper[0], GRID)
    t1 = np.linspace(box.lower[1], box.upper[1], GRID)
    T = np.array(np.meshgrid(t0, t1)).reshape(2, -1).T
    par = rs.parametrization_
    eo = rs.e_orig_form_.evaluate_many(T)
    inside = (eo <= rs.epsilon_abs_) & (np.einsum("ij,jk,ik->i", T, par.B, T) <= par.r)
    T, eo = T[inside], eo[inside]
    ea = rs.problem(0).e_switch.evaluate_many(T)
    eb = rs.problem(1).e_switch.evaluate_many(T)
    return (ea - eb) / eo if kind == "ratio" else ea - eb


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["ratio", "difference"])
def test_reliance_difference_equals_brute_force_grid(seed, kind):
    rs = _two_param_set(seed)
    rd = rs.reliance_difference(0, 1, kind=kind)
    v = _grid_values(rs, kind)
    assert len(v) > 1000
    scale = max(1.0, rd.upper - rd.lower)
    # valid: no grid member outside; tight: the grid reaches both ends within its resolution
    assert v.min() >= rd.lower - 1e-9 * scale and v.max() <= rd.upper + 1e-9 * scale
    assert v.min() - rd.lower <= 2e-3 * scale and rd.upper - v.max() <= 2e-3 * scale
    assert rd.exact
    for end, val in (("lower", rd.lower_attained), ("upper", rd.upper_attained)):
        th = rd.lower_theta if end == "lower" else rd.upper_theta
        assert rs.e_orig_form_(th) <= rs.epsilon_abs_
        assert th @ rs.parametrization_.B @ th <= rs.parametrization_.r * (1 + 1e-12)
        ea, eb, eo = rs.problem(0).e_switch(th), rs.problem(1).e_switch(th), rs.e_orig_form_(th)
        assert val == pytest.approx((ea - eb) / eo if kind == "ratio" else ea - eb, abs=1e-12)


@pytest.mark.parametrize("cls", ["linear", "kernel"])
def test_sampled_members_inside_reliance_difference(cls):
    rng = np.random.default_rng(3)
    n = 150
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = X.a + 0.8 * X.b + 0.3 * X.c + rng.normal(size=n)
    mc = LinearModelClass() if cls == "linear" else KernelModelClass(dictionary=30)
    rs = RashomonSet(mc, 0.1).fit(X, y)
    smp = rs.sample(1000, random_state=0)
    eo = rs.e_orig_form_.evaluate_many(smp.thetas)
    for a, b in (("a", "b"), ("b", ["a", "c"])):
        for kind in ("ratio", "difference"):
            rd = rs.reliance_difference(a, b, kind=kind)
            ea = rs.problem(a).e_switch.evaluate_many(smp.thetas)
            eb = rs.problem(b).e_switch.evaluate_many(smp.thetas)
            v = (ea - eb) / eo if kind == "ratio" else ea - eb
            tol = 1e-9 * max(1.0, rd.upper - rd.lower)
            assert v.min() >= rd.lower - tol and v.max() <= rd.upper + tol
            assert rd.exact
            # consistent with the two MCR intervals (the difference is at least as tight)
            ra, rb = rs.model_class_reliance(a, kind=kind), rs.model_class_reliance(b, kind=kind)
            assert rd.lower >= ra.lower - rb.upper - 1e-6 and rd.upper <= ra.upper - rb.lower + 1e-6


def test_reliance_order_relations_hasse_and_critical_epsilon():
    rng = np.random.default_rng(4)
    n = 200
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = 2.0 * X.a + 1.0 * X.b + 0.3 * X.c + rng.normal(size=n)
    rs = RashomonSet(LinearModelClass(), 0.05).fit(X, y)
    order = rs.reliance_order(["a", "b", "c"])
    assert order.holds("a", "b") and order.holds("b", "c") and order.holds("a", "c")
    assert not order.holds("b", "a")
    assert order.hasse_edges() == [("a", "b"), ("b", "c")]
    for r in order.relations.itertuples():
        lo, hi = r.critical_epsilon_abs_lower, r.critical_epsilon_abs_upper
        assert rs.epsilon_abs_ <= lo < hi < np.inf
        assert hi - lo <= 1e-3 * (lo - rs.e_min_) * 1.0001
        at_lo = RashomonSet(LinearModelClass(), lo, epsilon_kind="absolute").fit(X, y)
        assert at_lo.reliance_difference(r.a, r.b).lower > 0  # still holds (certified)
        at_hi = RashomonSet(LinearModelClass(), hi, epsilon_kind="absolute").fit(X, y)
        assert at_hi.reliance_difference(r.a, r.b).lower_attained <= 1e-12  # a member with MR(a) <= MR(b)
        assert r.critical_epsilon_lower == pytest.approx(lo / rs.e_ref_ - 1)  # the set's relative ε
    json.dumps(order.to_dict())
    import matplotlib

    matplotlib.use("Agg")
    order.plot()
    order.differences[("a", "b")].plot()


def test_reliance_order_groups_dict_and_errors():
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(120, 4)), columns=["a", "b", "c", "d"])
    y = X.a + X.b + 0.1 * X.c + rng.normal(size=120)
    rs = RashomonSet(LinearModelClass(), 0.05).fit(X, y)
    order = rs.reliance_order({"strong": ["a", "b"], "weak": ["c", "d"]}, critical=False)
    assert order.holds("strong", "weak")
    assert np.isnan(order.relations["critical_epsilon_abs_lower"].iloc[0])
    with pytest.raises(RashomonInputError, match="two or more features"):
        rs.reliance_order(["a"])
    with pytest.raises(RashomonInputError, match="'kind' parameter of RashomonSet.reliance_difference"):
        rs.reliance_difference("a", "b", kind="log")


def test_classifier_reliance_difference_is_outer_and_valid():
    from rashomon.sets.margin import MarginTerms

    rng = np.random.default_rng(6)
    n = 250
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = (1.5 * X.a + 0.5 * X.b + rng.logistic(size=n) > 0).astype(float)
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    rd = rs.reliance_difference("a", "b")
    assert not rd.exact and rd.lower <= rd.lower_attained <= rd.upper_attained <= rd.upper
    ms = rs._margin
    Ta, Tb = MarginTerms(ms.D, ms.y, np.array([0]) + ms.o), MarginTerms(ms.D, ms.y, np.array([1]) + ms.o)
    smp = rs.sample(200, random_state=0)
    v = np.array([(Ta.e_switch(t, ms.loss) - Tb.e_switch(t, ms.loss)) / Ta.e_orig(t, ms.loss) for t in smp.thetas])
    assert v.min() >= rd.lower and v.max() <= rd.upper
    order = rs.reliance_order(["a", "b"], critical=False)
    assert order.holds("a", "b") and np.isnan(order.relations["critical_epsilon_abs_lower"].iloc[0])


def _logistic_data():
    rng = np.random.default_rng(7)
    n = 300
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    y = (1.5 * X.a + 0.7 * X.b + 0.4 * X.c + 0.25 * X.d + rng.logistic(size=n) > 0).astype(float)
    return X, y


@pytest.mark.usefixtures("small_budget")
def test_classifier_critical_epsilon_certified_below_refuted_above():
    """Logistic set: feature a matters clearly more than d. The relation is certified at the returned lower end
    (refit there: the outer lower end is > 0) and refuted at the upper end by a member whose MR(a) - MR(d),
    measured independently by ``model_reliance`` on that member's estimator, is <= 0."""
    from rashomon import model_reliance
    from rashomon.sets.margin import MarginTerms

    X, y = _logistic_data()
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    order = rs.reliance_order(["a", "d"])
    assert order.holds("a", "d") and len(order.relations) == 1
    r = order.relations.iloc[0]
    lo, hi = r.critical_epsilon_abs_lower, r.critical_epsilon_abs_upper
    assert rs.epsilon_abs_ < lo < hi < np.inf
    assert bool(r.critical_refuted) and not bool(r.critical_exact) and "refuted" in r.note
    assert r.critical_epsilon_lower == pytest.approx(lo / rs.e_ref_ - 1)
    at_lo = RashomonSet(LogisticModelClass(), lo, epsilon_kind="absolute").fit(X, y)
    rd_lo = at_lo.reliance_difference("a", "d")
    assert rd_lo.lower > 0  # still holds (certified)
    ms = at_lo._margin  # and 200 members sampled from the set at lo all have MR(a) > MR(d)
    Ta, Td = MarginTerms(ms.D, ms.y, np.array([0]) + ms.o), MarginTerms(ms.D, ms.y, np.array([3]) + ms.o)
    v = [
        (Ta.e_switch(t, ms.loss) - Td.e_switch(t, ms.loss)) / Ta.e_orig(t, ms.loss)
        for t in at_lo.sample(200, random_state=0).thetas
    ]
    assert min(v) >= rd_lo.lower > 0
    at_hi = RashomonSet(LogisticModelClass(), hi, epsilon_kind="absolute").fit(X, y)
    rd = at_hi.reliance_difference("a", "d")
    assert rd.lower_attained <= 0
    est = rd.member("lower")
    assert rs._margin.orig.e_orig(rd.lower_theta, rs._margin.loss) <= hi * (1 + 1e-9)  # a member of the set at hi
    f = lambda Z: np.asarray(Z) @ est.coef_ + est.intercept_  # noqa: E731  the member's score
    L = lambda yy, z: np.logaddexp(0.0, -(2 * yy - 1) * z)  # noqa: E731  log loss on the score
    mr_a = model_reliance(f, X.to_numpy(), y.to_numpy(), [0], loss=L).ratio
    mr_d = model_reliance(f, X.to_numpy(), y.to_numpy(), [3], loss=L).ratio
    assert mr_a - mr_d == pytest.approx(rd.lower_attained, abs=1e-9)
    assert mr_a - mr_d <= 1e-9
    json.dumps(order.to_dict())


def test_classifier_critical_not_refuted_is_reported():
    """With epsilon_max just above the set's ε, no member breaks the relation: the upper end is inf, flagged."""
    X, y = _logistic_data()
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    order = rs.reliance_order(["a", "d"], epsilon_max=rs.epsilon_abs_ + 0.5 * (rs.epsilon_abs_ - rs.e_min_))
    r = order.relations.iloc[0]
    assert not bool(r.critical_refuted) and r.critical_epsilon_abs_upper == np.inf
    assert r.critical_epsilon_abs_lower >= rs.epsilon_abs_ and "not refuted" in r.note


@pytest.mark.slow
def test_hinge_critical_epsilon_certified_below_refuted_above():
    """The hinge class (about 30 s): certified at the bracket's lower end, refuted at its upper end."""
    from rashomon import HingeModelClass

    X, y = _logistic_data()
    rs = RashomonSet(HingeModelClass(), 0.05).fit(X, y)
    r = rs.reliance_order(["a", "d"]).relations.iloc[0]
    lo, hi = r.critical_epsilon_abs_lower, r.critical_epsilon_abs_upper
    assert rs.epsilon_abs_ < lo < hi < np.inf and bool(r.critical_refuted)
    assert RashomonSet(HingeModelClass(), lo, epsilon_kind="absolute").fit(X, y).reliance_difference("a", "d").lower > 0
    rd = RashomonSet(HingeModelClass(), hi, epsilon_kind="absolute").fit(X, y).reliance_difference("a", "d")
    assert rd.lower_attained <= 0


def _sixty_by_two():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (2.0 * X[:, 0] + 0.3 * X[:, 1] + rng.logistic(size=60) > 0).astype(float)
    return X, y


def _grid_differences(rs, eps, k=41):
    """Brute force, independent of the MCR code: MR(x0) - MR(x1) (ratio; log loss written out, the switched
    loss over the n(n-1) pairs i != k) at every θ of a k³ grid over the set's box at ``eps`` that lies in the
    set (loss <= eps, inside the norm ball)."""
    from rashomon.sets.margin import MarginFunctionalRange

    ms = rs._margin
    D, yy, n = ms.D, ms.y, len(ms.y)
    b = MarginFunctionalRange(ms, eps).minimize(np.vstack([np.eye(3), -np.eye(3)]))[0]
    axes = [np.linspace(b[j], -b[j + 3], k) for j in range(3)]
    T = np.array(np.meshgrid(*axes)).reshape(3, -1).T
    eo = np.logaddexp(0.0, -yy * (T @ D.T)).mean(axis=1)
    keep = (eo <= eps) & (np.einsum("ij,jk,ik->i", T, ms.B, T) <= ms.r)
    T, eo = T[keep], eo[keep]

    def switched(j):
        base = T @ D.T - np.outer(T[:, j], D[:, j])  # (m, n): row i's score without feature j
        out = np.empty(len(T))
        for c in range(0, len(T), 500):
            M = yy[None, :, None] * (base[c : c + 500, :, None] + (T[c : c + 500, j, None] * D[:, j])[:, None, :])
            L = np.logaddexp(0.0, -M)
            out[c : c + 500] = (L.sum(axis=(1, 2)) - np.trace(L, axis1=1, axis2=2)) / (n * (n - 1))
        return out

    return (switched(1) - switched(2)) / eo


@pytest.mark.usefixtures("small_budget")
def test_classifier_critical_epsilon_sixty_by_two_against_a_grid():
    """The 60 x 2 logistic set with the default critical=True: the relation x0 > x1 holds at the set's ε and at
    the certified end of its bracket on every member of a 41³ grid (brute force), and a member of the set at the
    refuted end breaks it. The bracket lies inside [ε_abs, epsilon_max]."""
    X, y = _sixty_by_two()
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    order = rs.reliance_order([0, 1])
    assert order.holds("0", "1") and len(order.relations) == 1
    r = order.relations.iloc[0]
    lo, hi = r.critical_epsilon_abs_lower, r.critical_epsilon_abs_upper
    assert rs.epsilon_abs_ < lo < hi <= order.epsilon_max
    for eps, low in ((rs.epsilon_abs_, r.lower), (lo, 0.0)):
        v = _grid_differences(rs, eps)
        assert len(v) > 100 and v.min() > low  # every member at eps: MR(x0) - MR(x1) above the certified end
    assert bool(r.critical_refuted) and hi < np.inf
    rd = RashomonSet(LogisticModelClass(), hi, epsilon_kind="absolute").fit(X, y).reliance_difference(0, 1)
    assert rd.lower_attained <= 0
    assert rs._margin.orig.e_orig(rd.lower_theta, rs._margin.loss) <= hi * (1 + 1e-12)


@pytest.mark.usefixtures("small_budget")
def test_classifier_order_shares_one_mcr_per_feature(monkeypatch, capsys):
    """Three features: the three pairs share one MCR per feature at the set's ε (three calls, not six); every
    critical-ε probe is two MCRs at most; progress=True reports on stderr."""
    import rashomon.sets.fairness._order_margin as om

    X, y = _logistic_data()
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    calls = []
    real, real_mcr = om.margin_mcr, rs.model_class_reliance
    monkeypatch.setattr(om, "margin_mcr", lambda *a, **k: calls.append(k["epsilon_abs"]) or real(*a, **k))
    monkeypatch.setattr(rs, "model_class_reliance", lambda *a, **k: calls.append(rs.epsilon_abs_) or real_mcr(*a, **k))
    order = rs.reliance_order(["a", "b", "d"], critical=False, progress=True)
    assert calls == [rs.epsilon_abs_] * 3
    assert order.holds("a", "d")
    assert "[rashomon] reliance order" in capsys.readouterr().err
    calls.clear()
    order = rs.reliance_order(["a", "b", "d"])
    n_rel = len(order.relations)
    probes = [e for e in calls if e != rs.epsilon_abs_]
    assert len(calls) - len(probes) == 3 and len(probes) <= 2 * n_rel * (om.CLASSIFIER_PROBES + om.REFUTE_PROBES)
    for r in order.relations.itertuples():
        assert rs.epsilon_abs_ <= r.critical_epsilon_abs_lower < r.critical_epsilon_abs_upper


def test_epsilon_max_is_respected():
    """epsilon_max below the set's ε is an error; equal to it, nothing is searched past it."""
    X, y = _logistic_data()
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    with pytest.raises(RashomonInputError, match="'epsilon_max' parameter of RashomonSet.reliance_order"):
        rs.reliance_order(["a", "d"], epsilon_max=1e-9)
    order = rs.reliance_order(["a", "d"], epsilon_max=rs.epsilon_abs_)
    r = order.relations.iloc[0]
    assert r.critical_epsilon_abs_lower == rs.epsilon_abs_ == order.epsilon_max
    assert r.critical_epsilon_abs_upper == np.inf and not bool(r.critical_refuted)
    lin = RashomonSet(LinearModelClass(), 0.05).fit(X, X.a + 0.1 * X.d + np.random.default_rng(0).normal(size=len(X)))
    with pytest.raises(RashomonInputError, match="'epsilon_max'"):
        lin.reliance_order(["a", "d"], epsilon_max=0.5 * lin.epsilon_abs_)
    o = lin.reliance_order(["a", "d"], epsilon_max=lin.epsilon_abs_ * 1.001)
    assert (o.relations.critical_epsilon_abs_lower <= o.epsilon_max).all()


def _mcr_at(rs, group, eps, **opts):
    from rashomon.sets.margin import margin_mcr

    kw = dict(e_ref=rs.e_ref_, epsilon_abs=eps, reference_theta=rs.reference_theta_, kind="ratio", tol=2.0**-20)
    kw |= dict(max_iter=100, n_starts=5, random_state=0, func="f")
    return margin_mcr(rs._margin, rs._columns, group, **(kw | opts))


@pytest.mark.usefixtures("small_budget")
def test_one_sided_mcr_is_the_full_search_at_its_end_and_valid_at_the_other():
    """``margin_mcr(ends=...)``: the end searched has the full call's bound and member (same bits); the end left out
    keeps a bound that 1,000 members sampled from the set respect; ``gap_tol=inf`` (members only) keeps the
    ascent's best member; a gap target ``1 - m/T`` stops the slab search at a bound <= T (60 x 2 logistic set, at
    a larger ε than the set's, as the critical-ε brackets use it)."""
    from rashomon.sets.margin import MarginTerms

    X, y = _sixty_by_two()
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    eps = rs.e_min_ + 3.0 * (rs.epsilon_abs_ - rs.e_min_)
    big = RashomonSet(LogisticModelClass(), eps, epsilon_kind="absolute").fit(X, y)
    ms = big._margin
    thetas = big.sample(1000, random_state=0).thetas
    for j in (0, 1):  # x0: the lower end at γ >= 0; x1: below γ = 0 (descent and slab bound)
        T = MarginTerms(ms.D, ms.y, np.array([j]) + ms.o)
        mr = np.array([T.e_switch(t, ms.loss) / T.e_orig(t, ms.loss) for t in thetas])
        full = _mcr_at(rs, [j], eps)
        low = _mcr_at(rs, [j], eps, ends=("lower",), gap_tol=np.inf)
        up = _mcr_at(rs, [j], eps, ends=("upper",))
        mem = _mcr_at(rs, [j], eps, ends=("upper",), gap_tol=np.inf)
        assert low.lower == full.lower and np.array_equal(low.lower_model.theta, full.lower_model.theta)
        assert up.upper == full.upper and np.array_equal(up.upper_model.theta, full.upper_model.theta)
        assert np.array_equal(mem.upper_model.theta, full.upper_model.theta)
        for r in (low, up, mem):  # every bound valid (the sampled MRs: exact losses; rounding 1e-12 relative)
            assert mr.min() >= r.lower - 1e-12 * abs(r.lower) and mr.max() <= r.upper + 1e-12 * abs(r.upper)
        m = mem.upper_model.mr
        target = full.upper + 0.25 * (mem.upper - full.upper)  # between the full search's bound and the surrogate
        tgt = _mcr_at(rs, [j], eps, ends=("upper",), gap_tol=1.0 - m / target)
        assert tgt.upper <= target * (1 + 1e-12) and mr.max() <= tgt.upper + 1e-12 * abs(tgt.upper)


@pytest.mark.usefixtures("small_budget")
def test_classifier_critical_epsilon_difference_kind():
    """kind="difference" (MR+ of the weaker feature near 0, so the slab search's gap target falls back to its
    default when the best member is <= 0): certified at the bracket's lower end (a refit there: the outer lower end
    is > 0), refuted at its upper end by a member of the refitted set."""
    X, y = _sixty_by_two()
    rs = RashomonSet(LogisticModelClass(), 0.05).fit(X, y)
    r = rs.reliance_order([0, 1], kind="difference").relations.iloc[0]
    lo, hi = r.critical_epsilon_abs_lower, r.critical_epsilon_abs_upper
    assert rs.epsilon_abs_ < lo < hi < np.inf and bool(r.critical_refuted)
    at = {e: RashomonSet(LogisticModelClass(), e, epsilon_kind="absolute").fit(X, y) for e in (lo, hi)}
    assert at[lo].reliance_difference(0, 1, kind="difference").lower > 0
    assert at[hi].reliance_difference(0, 1, kind="difference").lower_attained <= 0
