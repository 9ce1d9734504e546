"""The null model (the best constant model of the class) on every set, the explained ε, and defaults that say so."""

from __future__ import annotations

import numpy as np
import pytest

from rashomon import LinearModelClass, RashomonSet
from rashomon.utils.validation import RashomonInputError


def test_multiplicity_regression_needs_threshold_unless_target_is_binary():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = X[:, 0] + rng.normal(size=80)
    rs = RashomonSet(LinearModelClass(), 0.1).fit(X, y)
    with pytest.raises(RashomonInputError, match="'threshold' parameter of RashomonSet.multiplicity"):
        rs.multiplicity()
    assert rs.multiplicity(threshold=0.0).threshold == 0.0
    yb = (y > 0).astype(float)  # a 0/1 target keeps the default 0.5
    rb = RashomonSet(LinearModelClass(), 0.1).fit(X, yb)
    assert rb.multiplicity().threshold == 0.5


# ---------------------------------------------------------------- e_null against brute force, per class
def _grid_min(loss_of_constant, lo, hi, n=200001):
    """min over a fine grid of constants, refined once around the best point (brute force)."""
    c = np.linspace(lo, hi, n)
    vals = np.array([loss_of_constant(v) for v in c])
    k = int(np.argmin(vals))
    c2 = np.linspace(c[max(k - 1, 0)], c[min(k + 1, n - 1)], 2001)
    return min(vals[k], min(loss_of_constant(v) for v in c2))


def _weak(seed=1, n=120, beta=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = 2.0 + beta * X[:, 0] + rng.normal(size=n)
    return X, y


def _fit(mc, eps, X, y, **kw):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RashomonWarning)
        return RashomonSet(mc, eps, **kw).fit(X, y)


from rashomon import HingeModelClass, KernelModelClass, LogisticModelClass  # noqa: E402
from rashomon.utils.validation import RashomonWarning  # noqa: E402


@pytest.mark.parametrize("intercept", [True, False])
def test_e_null_linear_is_the_best_constant_by_brute_force(intercept):
    X, y = _weak()
    w = np.random.default_rng(2).integers(1, 4, size=len(y)).astype(float)
    rs = _fit(LinearModelClass(fit_intercept=intercept), 0.1, X, y)
    rw = _fit(LinearModelClass(fit_intercept=intercept), 0.1, X, y).reweighted(w)
    if intercept:  # every constant is in the class: the least MSE over a grid of constants
        brute = _grid_min(lambda c: np.mean((y - c) ** 2), y.min(), y.max())
        brute_w = _grid_min(lambda c: np.average((y - c) ** 2, weights=w), y.min(), y.max())
    else:  # no intercept: the only constant model is f = 0
        brute, brute_w = np.mean(y**2), np.average(y**2, weights=w)
    # the grid's spacing (range/2e5, refined 2000×) leaves an error far below 1e-9 of the loss
    assert rs.e_null_ == pytest.approx(brute, rel=1e-9)
    assert rw.e_null_ == pytest.approx(brute_w, rel=1e-9)
    assert rs.e_min_ <= rs.e_null_ * (1 + 1e-12)  # the constant model is in the class


@pytest.mark.parametrize("intercept", ["mean", "free", 1.5])
def test_e_null_kernel_by_brute_force(intercept):
    X, y = _weak(n=60)
    rs = _fit(KernelModelClass(gamma=0.5, intercept=intercept), 0.1, X, y)
    if intercept == "free":
        brute = _grid_min(lambda c: np.mean((y - c) ** 2), y.min(), y.max())
    else:  # α = 0 is the class's only constant function: its fixed μ (the mean of y, or the given value)
        mu = np.mean(y) if intercept == "mean" else 1.5
        brute = np.mean((y - mu) ** 2)
    assert rs.e_null_ == pytest.approx(brute, rel=1e-9)
    assert rs.e_min_ <= rs.e_null_ * (1 + 1e-12)


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
@pytest.mark.parametrize("intercept", [True, False])
def test_e_null_classifiers_by_brute_force(cls, intercept):
    X, y = _weak()
    yb = (y > 2.4).astype(int)  # unbalanced labels: the best constant is not 0
    ye = 2.0 * yb - 1.0
    rs = _fit(cls(norm_bound=1.0, fit_intercept=intercept), 0.05, X, yb)
    if cls is LogisticModelClass:
        loss = lambda c: np.mean(np.logaddexp(0.0, -ye * c))  # noqa: E731
    else:
        loss = lambda c: np.mean(np.maximum(0.0, 1.0 - ye * c))  # noqa: E731
    brute = _grid_min(loss, -5.0, 5.0) if intercept else loss(0.0)
    # logistic: grid spacing 5e-5 refined 2000×, a quadratic error below 1e-12; hinge: its minimum sits at a
    # grid point (c = ±1) exactly
    assert rs.e_null_ == pytest.approx(brute, rel=1e-9)
    assert rs.e_min_ <= rs.e_null_ * (1 + 1e-9)


# ---------------------------------------------------------------- the explained ε and the warning
@pytest.mark.parametrize("eps", [0.0, 0.25, 0.5, 1.0])
def test_explained_kind_reads_epsilon_on_the_explained_loss(eps):
    X, y = _weak()
    for mc, yy in ((LinearModelClass(), y), (LogisticModelClass(norm_bound=1.0), (y > 2.4).astype(int))):
        rs = _fit(mc, eps, X, yy, epsilon_kind="explained")
        assert rs.epsilon_abs_ == pytest.approx(rs.e_min_ + eps * (rs.e_null_ - rs.e_min_), rel=1e-12)
        assert rs.explained_share_ == pytest.approx(1.0 - eps, abs=1e-9)


def test_weak_signal_set_shows_e_null_and_warns():
    X, y = _weak(beta=0.1)  # R² about 1 %: the default ε = 0.1 admits the mean
    with pytest.warns(RashomonWarning, match="null model's loss e_null"):
        rs = RashomonSet(LinearModelClass(), 0.1).fit(X, y)
    assert rs.epsilon_abs_ >= rs.e_null_ and rs.explained_share_ == 0.0
    text, html = repr(rs), rs._repr_html_()
    for name in ("e_min_", "e_ref_", "epsilon_abs_", "e_null_", "explained_kept=0.0%"):
        assert name in text
    assert "contains a constant model" in text and "e_null" in html and "contains a constant model" in html
    # a set that keeps less than half of the explained loss: a note, no warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = RashomonSet(LinearModelClass(), 0.7, epsilon_kind="explained").fit(X, y)
    assert "keeps < 50 % explained" in repr(rs) and "keeps 30.0%" in rs._repr_html_()


def test_compas_two_year_audit_at_the_papers_rule_shows_e_null_and_warns(tmp_path):
    """The two-year recidivism audit (logistic class, ε = reference's held-out loss + 0.1 × its CV loss, 500
    training rows): its set keeps about 2 % of the loss the class explains, which the audit warns about, and the
    report and the CLI line show e_min, e_ref, ε_abs and e_null side by side."""
    from rashomon import audit
    from rashomon.audit._report_text import null_model_text
    from rashomon.datasets import load_compas

    feats = ["race", "sex", "priors_count", "c_charge_degree", "age"]
    df = load_compas("two_year")[feats + ["two_year_recid"]].reset_index(drop=True)
    train = np.zeros(len(df), dtype=bool)
    train[np.random.RandomState(0).choice(len(df), 500, replace=False)] = True
    df["train"] = train
    with pytest.warns(RashomonWarning, match=r"keeps only \d+\.\d% of the loss the class explains"):
        res = audit(
            df,
            "two_year_recid",
            {"race_sex": ["race", "sex"]},
            features=feats,
            model_class="logistic",
            epsilon=0.1,
            split="train",
            ambiguity_rows=10,
        )
    nm, rs = res.meta["null_model"], res.rashomon_set
    p = float(np.mean(rs.y_ == 1))
    assert nm["e_null"] == pytest.approx(-(p * np.log(p) + (1 - p) * np.log(1 - p)), rel=1e-12)  # base rate
    assert nm["e_min"] < nm["e_ref"] < nm["epsilon_abs"] < nm["e_null"]
    assert nm["explained_share"] < 0.05
    assert "keeps only" in null_model_text(res.meta)
    line = res.null_model_line()
    for part in ("e_min", "e_ref", "epsilon_abs", f"e_null {nm['e_null']:.4g}", f"{nm['explained_share']:.1%}"):
        assert part in line
    assert "e<sub>null</sub>" in null_model_text(res.meta)
    res.to_html(tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert f"e<sub>null</sub> {nm['e_null']:.4g}" in page and "keeps only" in page and "The null model" in page


def test_envelope_reads_explained_epsilons():
    X, y = _weak(beta=1.0)
    rs = _fit(LinearModelClass(), 0.2, X, y, epsilon_kind="explained")
    env = rs.envelope(0, [0.1, 0.4])
    np.testing.assert_allclose(env.epsilons, rs.e_min_ + np.array([0.1, 0.4]) * (rs.e_null_ - rs.e_min_), rtol=1e-12)
    env2 = RashomonSet(LinearModelClass(), 0.1).fit(X, y).envelope(0, [0.4], epsilon_kind="explained")
    np.testing.assert_allclose(env2.epsilons, env.epsilons[1:], rtol=1e-12)


def test_select_epsilon_places_each_rule_on_the_explained_scale():
    from rashomon import select_epsilon

    X, y = _weak(beta=0.5)
    for rule in ("cv_1se", "holdout_cv", "profile", "likelihood_ratio"):
        ch = select_epsilon(LinearModelClass(), X, y, rule)
        ref = LinearModelClass().fit_reference(X, y)
        e_min = float(np.mean((y - ref.predict(X)) ** 2))
        assert ch.e_min == pytest.approx(e_min, rel=1e-12) and ch.e_null == pytest.approx(np.var(y), rel=1e-12)
        rs = _fit(LinearModelClass(), ch.epsilon, X, y, epsilon_kind=ch.epsilon_kind)  # reference: the minimiser
        assert ch.explained_epsilon == pytest.approx((rs.epsilon_abs_ - e_min) / (np.var(y) - e_min), rel=1e-9)
        assert "explained_epsilon" in ch.to_frame().columns and "explained scale" in ch._repr_html_()
    yb = (y > 2.2).astype(int)
    ch = select_epsilon(LogisticModelClass(norm_bound=1.0), X, yb, "holdout_cv")
    rs = _fit(LogisticModelClass(norm_bound=1.0), ch.epsilon, X, yb, epsilon_kind="additive")
    # the same certified solve of the class's minimiser on the same rows: the same bits, up to summation order
    assert ch.e_null == pytest.approx(rs.e_null_, rel=1e-12) and ch.e_min == pytest.approx(rs.e_min_, rel=1e-12)
    assert ch.explained_epsilon == pytest.approx(ch.epsilon / (rs.e_null_ - rs.e_min_), rel=1e-9)


def test_audit_result_display_shows_e_null():
    import pandas as pd

    from rashomon import audit

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(160, 3)), columns=["a", "b", "c"])
    df["y"] = 2 * df["a"] - df["b"] + 0.3 * rng.normal(size=160)
    res = audit(df, "y", {"g": ["a"]}, model_class="linear", cv=3, train_size=60, bootstrap=0)
    nm = res.meta["null_model"]
    assert nm["explained_share"] > 0.5 and "keeps only" not in res.null_model_line()  # a strong signal: no note
    html = res._repr_html_()
    assert "e_null" in html and f"{nm['explained_share']:.1%}" in html
    assert res.null_model_line().startswith("losses: e_min")


def test_cli_summary_prints_the_losses_beside_e_null(tmp_path, capsys):
    import pandas as pd

    from rashomon.audit.cli import main

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(160, 3)), columns=["a", "b", "c"])
    df["y"] = 0.1 * df["a"] + rng.normal(size=160)  # weak signal: the set holds the null model
    df.to_csv(tmp_path / "t.csv", index=False)
    args = ["audit", "--data", str(tmp_path / "t.csv"), "--target", "y", "--group", "g=a", "--model-class", "linear"]
    with pytest.warns(RashomonWarning, match="null model"):
        code = main([*args, "--cv", "3", "--train-size", "60", "--no-plots", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("losses:"))
    assert all(k in line for k in ("e_min", "e_ref", "epsilon_abs", "e_null", "of the explained loss"))
    assert "contains a constant model" in line


def test_functions_take_the_explained_kind():
    from rashomon import model_class_reliance

    X, y = _weak(beta=1.0)
    res = model_class_reliance(LinearModelClass(), X, y, 0, epsilon=0.3, epsilon_kind="explained")
    rs = _fit(LinearModelClass(), 0.3, X, y, epsilon_kind="explained")
    same = rs.model_class_reliance(0)
    assert (res.lower, res.upper) == (same.lower, same.upper)
