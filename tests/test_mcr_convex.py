"""Linear MCR under hinge, logistic and absolute losses: certified lower end, labelled inner upper value."""

import numpy as np
import pytest

from rashomon import LinearModelClass, model_class_reliance, model_reliance

LOSS_FOR_MR = {"hinge": "hinge", "logistic": None, "absolute_error": "absolute_error"}


def _data(loss, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 2, n)
    if loss == "absolute_error":
        return X, X @ [1.0, 0.5, 0.8] + rng.normal(size=n)
    return X, (X[:, 0] + 0.7 * X[:, 2] + 0.5 * rng.normal(size=n) > 0.3).astype(int)


def _mr(loss, X, y, coef, icpt, group):
    f = lambda Z: Z @ coef + icpt  # noqa: E731
    if loss == "logistic":
        L = lambda yy, z: np.logaddexp(0.0, -(2 * yy - 1) * z)  # noqa: E731
        r = model_reliance(f, X, y, group, loss=L)
    else:
        r = model_reliance(f, X, y, group, loss=LOSS_FOR_MR[loss])
    return r.ratio, r.e_orig


def _sample(X, y, loss, r, eps, rng, centres, n=2000):
    """Models in the Rashomon set: θ = (μ, standardised β) scattered around members of the set at several
    spreads, kept when inside the norm ball and under ε."""
    m, s = X.mean(0), X.std(0)
    Z = (X - m) / s
    ye = 2 * y - 1 if loss != "absolute_error" else y
    out = []
    for c in centres:
        for spread in (0.05, 0.2, 0.5):
            th = c[None, :] + spread * rng.normal(size=(n // 6, len(c)))
            th = th[np.sum(th[:, 1:] ** 2, 1) <= r]
            z = th[:, 1:] @ Z.T + th[:, :1]
            if loss == "hinge":
                L = np.maximum(0, 1 - ye * z)
            elif loss == "logistic":
                L = np.logaddexp(0, -ye * z)
            else:
                L = np.abs(ye - z)
            out.append(th[L.mean(1) <= eps])
    th = np.vstack(out)
    coefs = th[:, 1:] / s
    return coefs, th[:, 0] - coefs @ m


@pytest.mark.usefixtures("small_budget")
@pytest.mark.parametrize("loss", ["hinge", "logistic", "absolute_error"])
def test_convex_lower_end_valid_tight_and_upper_inner_value(loss):
    X, y = _data(loss)
    res = model_class_reliance(LinearModelClass(norm_bound=2.0), X, y, 0, loss=loss, epsilon=0.25)
    assert res.loss == {"logistic": "log_loss"}.get(loss, loss) and res.lower_certified  # the package's name
    if loss == "absolute_error":
        assert not res.upper_certified and not res.upper_tight and "inner value" in res.notes
    else:  # classifier losses: the upper end is a certified outer bound, the member an inner value
        assert res.upper_certified and res.upper >= res.upper_model.mr and res.upper_gap >= 0
    centres = [res.lower_model.theta, res.upper_model.theta, res.reference_model.theta]
    coefs, icpts = _sample(X, y, loss, 2.0, res.epsilon_abs, np.random.default_rng(1), centres)
    assert len(coefs) >= 30
    mrs = []
    pick = np.random.default_rng(2).choice(len(coefs), size=min(150, len(coefs)), replace=False)
    for c, b in zip(coefs[pick], icpts[pick]):
        mr, e = _mr(loss, X, y, c, b, [0])
        assert e <= res.epsilon_abs * (1 + 1e-9)
        assert mr >= res.lower - 1e-7  # certified lower bound holds for every sampled member
        mrs.append(mr)
    # tight lower end: the returned model lies in the set and attains the bound (solver accuracy ~1e-5)
    mr_lo, e_lo = _mr(loss, X, y, res.lower_model.coef, res.lower_model.intercept, [0])
    assert e_lo <= res.epsilon_abs * (1 + 1e-7)
    assert res.lower_tight and mr_lo == pytest.approx(res.lower, rel=1e-4)
    # the inner upper value is attained by a member of the set and beats every sampled member
    mr_up, e_up = _mr(loss, X, y, res.upper_model.coef, res.upper_model.intercept, [0])
    assert e_up <= res.epsilon_abs * (1 + 1e-6)
    assert mr_up == pytest.approx(res.upper_model.mr, rel=1e-9)
    if loss != "absolute_error":
        assert mr_up == pytest.approx(res.upper - res.upper_gap, rel=1e-9)
    assert res.upper >= max(mrs) - 1e-9


@pytest.mark.usefixtures("small_budget")
def test_convex_lower_end_conservative_when_it_needs_negative_gamma():
    X, y = _data("hinge")
    res = model_class_reliance(LinearModelClass(norm_bound=2.0), X, y, 2, loss="hinge", epsilon=1.0)
    assert res.lower_certified and "γ < 0" in res.notes
    assert res.lower_model is not None and res.lower_model.mr >= res.lower


def test_convex_loss_errors():
    X, y = _data("hinge")
    with pytest.raises(ValueError, match="'y'.*labels"):
        model_class_reliance(LinearModelClass(norm_bound=1.0), X, y + 3, 0, loss="hinge")
    with pytest.raises(ValueError, match="'loss'"):
        model_class_reliance(LinearModelClass(norm_bound=1.0), X, y, 0, loss="huber")
    from rashomon import KernelModelClass

    with pytest.raises(ValueError, match="LinearModelClass"):
        model_class_reliance(KernelModelClass(gamma=1.0, norm_bound=1.0), X, y, 0, loss="hinge")


def test_convex_rashomon_set_fits_reference_and_epsilon_once():
    from rashomon import KernelModelClass, RashomonSet
    from rashomon import model_class_reliance as mcr_wrapper

    X, y = _data("logistic")
    rs = RashomonSet(LinearModelClass(), 0.1, loss="logistic").fit(X, y)
    assert rs.e_min_ > 0 and rs.e_ref_ == pytest.approx(rs.e_min_)
    assert rs.epsilon_abs_ == pytest.approx(1.1 * rs.e_ref_)
    assert rs.loss_ == "log_loss"  # "logistic" is an alias of the package's name
    assert rs.parametrization_.r > 0 and rs.parametrization_.info["loss"] == "log_loss"
    assert rs.reference_.coef_.shape == (3,) and np.isfinite(rs.reference_.intercept_)
    z = X @ rs.reference_.coef_ + rs.reference_.intercept_
    assert np.mean(np.logaddexp(0, -(2 * y - 1) * z)) == pytest.approx(rs.e_ref_, rel=1e-9)
    res = rs.model_class_reliance(0)
    wrap = mcr_wrapper(LinearModelClass(), X, y, 0, loss="logistic", epsilon=0.1)
    for a in ("lower", "upper", "e_min", "e_ref", "epsilon_abs"):
        assert getattr(res, a) == pytest.approx(getattr(wrap, a), rel=1e-9), a
    assert res.e_ref == rs.e_ref_ and res.epsilon_abs == rs.epsilon_abs_
    ref = res.reference_model
    assert ref.estimator is not None and np.allclose(ref.theta, rs.reference_theta_)
    assert res.lower <= ref.mr + 1e-7 and ref.mr <= res.upper + 1e-7
    # a member passed back as the reference keeps its θ; a fitted classifier is projected through decision_function
    rs2 = RashomonSet(LinearModelClass(), 0.1, loss="logistic", reference=rs.reference_).fit(X, y)
    assert np.allclose(rs2.reference_theta_, rs.reference_theta_, atol=1e-8)
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=0.01).fit(X, y)
    rs3 = RashomonSet(LinearModelClass(), 0.1, loss="logistic", reference=clf).fit(X, y)
    e_clf = np.mean(np.logaddexp(0, -(2 * y - 1) * clf.decision_function(X)))
    assert rs3.e_ref_ == pytest.approx(e_clf, rel=1e-9) and rs3.e_ref_ >= rs3.e_min_
    assert np.allclose(rs3.reference_.coef_, clf.coef_.ravel())
    with pytest.raises(ValueError, match="not a model of the class"):
        from sklearn.tree import DecisionTreeClassifier

        RashomonSet(LinearModelClass(), 0.1, loss="logistic", reference=DecisionTreeClassifier().fit(X, y)).fit(X, y)
    with pytest.raises(ValueError, match="'loss'.*'model_class'"):
        RashomonSet(KernelModelClass(gamma=1.0, norm_bound=1.0), 0.1, loss="hinge").fit(X, y)
