"""Notebook display: every result type has a short text repr and a compact, escaped HTML table.

``test_every_result_type_is_covered`` introspects the public names: a new result class (one with
``to_frame``) that does not use :class:`rashomon.utils.DisplayMixin`, or has no case here, fails.
"""

import importlib
import inspect
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import BayesianRidge, LinearRegression

import rashomon
import rashomon.inference
import rashomon.inspection
import rashomon.reliance
import rashomon.sets
from rashomon import (
    KernelModelClass,
    LinearModelClass,
    LogisticModelClass,
    RashomonSet,
    corrected_resampled_ttest,
    feature_reliance,
    learner_importance,
    learner_pd,
    likelihood_importance,
    model_reliance,
    partial_dependence,
    pd_importance,
    pimp,
    select_epsilon,
)
from rashomon.sets import bootstrap_mcr
from rashomon.utils import DisplayMixin
from rashomon.utils._display import MAX_LINES, MAX_ROWS, format_value

#: a text repr has at most this many lines
N_LINES = 10


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 150
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b<i>", "c"])  # a name that needs escaping
    y = X["a"] + 0.5 * X["b<i>"] + 0.3 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def rset(data):
    return RashomonSet(LinearModelClass(), 0.1).fit(*data)


@pytest.fixture(scope="module")
def results(data, rset):
    """One instance of every result type, on small data (name -> (object, numbers its display must show))."""
    X, y = data
    rs = rset
    out = {}
    unfitted = RashomonSet(LinearModelClass(), 0.1)
    out["unfitted set"] = (unfitted, ["0.1"])
    out["set"] = (rs, [rs.epsilon_abs_, rs.e_ref_, rs.e_min_, "relative", "150"])
    mcr = rs.model_class_reliance("a")
    out["mcr"] = (mcr, [mcr.lower, mcr.upper, mcr.epsilon_abs, mcr.lower_gap])
    out["mcr model"] = (mcr.reference_model, [mcr.reference_model.mr])
    out["mcr step"] = (mcr.steps[0], [mcr.steps[0].gamma])
    env = rs.envelope(["a"], epsilons=[0.02, 0.1], epsilon_kind="relative")
    out["envelope"] = (env, [env.lower[0], env.upper[-1]])
    pr = rs.prediction_range()
    out["prediction range"] = (pr, [pr.lower[0], pr.upper[-1], float(np.median(pr.width)), "prediction"])
    cr = rs.coef_range()
    out["coef range"] = (cr, [cr.lower[0], cr.upper[1], "intercept"])
    fr = rs.functional_range([0.0, 1.0, 1.0, 0.0], names=["a+b"])
    out["functional range"] = (fr, [fr.lower[0], fr.upper[0]])
    mult = rs.multiplicity(threshold=0.0)
    out["multiplicity"] = (mult, [mult.ambiguity, mult.discrepancy_lower])
    smp = rs.sample(30, random_state=0, method="rejection")
    out["sample"] = (smp, ["rejection", smp.acceptance_rate])
    cloud = rs.importance_cloud(n_models=30, random_state=0)
    out["cloud"] = (cloud, [cloud.lower[0], cloud.upper[0], cloud.reference[0]])
    band = rs.pd_band("a", grid_resolution=8)
    out["pd band"] = (band, [band.lower[0], band.upper[-1]])
    boot = bootstrap_mcr(rs, ["a"], n_resamples=3)
    out["bootstrap"] = (boot, [boot.interval("a", "upper")[0]])
    eps = select_epsilon(LinearModelClass(), X, y, rule="cv_1se", cv=3, random_state=0)
    out["epsilon choice"] = (eps, [eps.epsilon, eps.cv_loss])
    m = LinearRegression().fit(X, y)
    mr = model_reliance(m, X, y, "a", method="permutation", n_repeats=3, random_state=0)
    out["model reliance"] = (mr, [mr.ratio, mr.e_orig])
    frel = feature_reliance(m, X, y)
    out["feature reliance"] = (frel, [frel.ratio[0], frel.ratio[2]])
    li = learner_importance(LinearRegression(), X, y, n_refits=3, random_state=0)
    out["learner importance"] = (li, [li.importances_mean[0], li.ci_lower[0]])
    lpd = learner_pd(LinearRegression(), X, y, "a", n_refits=3, grid_resolution=6, random_state=0)
    out["learner pd"] = (lpd, [lpd.mean[0]])
    tt = corrected_resampled_ttest(LinearRegression(), BayesianRidge(), X, y, n_refits=3, random_state=0)
    out["t-test"] = (tt, [tt.p_value, tt.mean_difference])
    pm = pimp(m, X, y, n_permutations=5, random_state=0)
    out["pimp"] = (pm, [pm.p_values_adjusted[0]])
    pdr = partial_dependence(m, X, "a", grid_resolution=6)
    out["pd"] = (pdr, [pdr.average[0][0]])
    pdi = pd_importance(m, X)
    out["pd importance"] = (pdi, [pdi.importances[0]])
    ui = likelihood_importance(BayesianRidge().fit(X, y), X, y, n_repeats=2, random_state=0)
    out["uncertainty importance"] = (ui, [ui.importances_mean[0]])
    groups = (X["a"] > 0).astype(int).to_numpy()
    dr = rs.disparity_range(groups)
    out["disparity range"] = (dr, [dr.lower[0], dr.upper[0]])
    ld = rs.least_disparate(groups, epsilons=[0.02, 0.1])
    out["least disparate"] = (ld, [ld.disparity, ld.certified_lower])
    out["disparity frontier"] = (ld.frontier, [ld.frontier.reference_disparity])
    order = rs.reliance_order(["a", "c"], critical=False)
    out["reliance order"] = (order, [order.epsilon_abs])
    diff = next(iter(order.differences.values()))
    out["reliance difference"] = (diff, [diff.lower, diff.upper])
    table = X.assign(y=y)
    audit = rashomon.audit(
        table,
        "y",
        {"num": ["a", "b<i>"]},
        train_size=90,
        bootstrap=0,
        n_jobs=1,
        model_class="linear",
        cv=3,
        progress=False,
    )
    g = audit.groups["num"]
    out["audit"] = (audit, [g.mcr_lower, g.mcr_upper, audit.epsilon_abs])
    out["group audit"] = (g, [g.mr_ref, g.mcr_upper])
    return out


class _Checker(HTMLParser):
    """Collects the text and checks that every opened tag (but void ones) is closed in order."""

    VOID = {"br", "hr", "img", "meta", "link", "input", "col"}

    def __init__(self):
        super().__init__()
        self.stack, self.text, self.errors, self.tags = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _parse(html_text):
    p = _Checker()
    p.feed(html_text)
    p.close()
    assert not p.errors and not p.stack, (p.errors, p.stack)
    return p


def _shows(number, text):
    return (format_value(number) if not isinstance(number, str) else number) in text


def test_every_result_type_is_covered(results):
    """Every public class with ``to_frame`` (a result) uses DisplayMixin and has a case above."""
    covered = {type(obj) for obj, _ in results.values()}
    missing = []
    audit_results = importlib.import_module("rashomon.audit._results")

    for mod in (rashomon, rashomon.sets, rashomon.reliance, rashomon.inference, rashomon.inspection, audit_results):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) and (hasattr(obj, "to_frame") or obj.__name__.endswith("Result")):
                if not issubclass(obj, DisplayMixin):
                    missing.append(f"{name} does not use DisplayMixin")
                elif obj not in covered and not any(issubclass(c, obj) for c in covered):
                    missing.append(f"{name} has no case in test_display")
    assert not missing, missing


@pytest.mark.parametrize(
    "case",
    [
        "unfitted set",
        "set",
        "mcr",
        "mcr model",
        "mcr step",
        "envelope",
        "prediction range",
        "coef range",
        "functional range",
        "multiplicity",
        "sample",
        "cloud",
        "pd band",
        "bootstrap",
        "epsilon choice",
        "model reliance",
        "feature reliance",
        "learner importance",
        "learner pd",
        "t-test",
        "pimp",
        "pd",
        "pd importance",
        "uncertainty importance",
        "audit",
        "group audit",
        "disparity range",
        "least disparate",
        "disparity frontier",
        "reliance order",
        "reliance difference",
    ],
)
def test_html_and_text_repr(results, case):
    obj, numbers = results[case]
    html_text = obj._repr_html_()
    p = _parse(html_text)
    text = "".join(p.text)
    assert type(obj).__name__ in text
    for v in numbers:
        assert _shows(v, text), (case, v, text[:400])
    # escaped: a column name with markup is text, never a tag
    assert "i" not in p.tags
    # compact: a capped number of table rows
    assert html_text.count("<tr") <= 3 * (MAX_ROWS + 3)
    r = repr(obj)
    assert len(r.splitlines()) <= N_LINES, r
    assert "array(" not in r and "\n\n" not in r, r


def test_range_over_many_rows_is_a_summary(results):
    """A prediction range over 150 rows shows width quantiles and the first and last rows, not all rows."""
    pr = results["prediction range"][0]
    html_text = pr._repr_html_()
    assert "quantiles" in html_text and "first and last of 150 rows" in html_text
    assert html_text.count("<tr") < 40
    assert "scale" in repr(pr) and len(repr(pr).splitlines()) <= MAX_LINES + 2


def test_set_repr_fitted_or_not(results):
    assert "fitted=False" in repr(results["unfitted set"][0])
    r = repr(results["set"][0])
    for key in (
        "LinearModelClass",
        "epsilon=0.1 (relative)",
        "epsilon_abs_=",
        "e_ref_=",
        "e_min_=",
        "n_rows=150",
        "features=[a, b<i>, c]",
    ):
        assert key in r, r


def test_no_acceptance_rate_for_hit_and_run(rset):
    """The rate of a method that was not used is not shown (it read like a failure)."""
    smp = rset.sample(20, random_state=0, method="hit_and_run")
    assert smp.method == "hit_and_run"
    for text in (repr(smp), smp._repr_html_()):
        assert "acceptance" not in text and "hit_and_run" in text
    rej = rset.sample(20, random_state=0, method="rejection")
    assert "acceptance_rate=" in repr(rej)


def test_kernel_sample_shows_the_method(data):
    X, y = data
    rs = RashomonSet(KernelModelClass(gamma=0.5), 0.1).fit(X.iloc[:60], y.iloc[:60])
    smp = rs.sample(10, random_state=0)
    r = repr(smp)
    assert f"method={smp.method}" in r
    assert "acceptance_rate=0.0," not in r and not r.rstrip(")").endswith("acceptance_rate=0.0")
    assert ("acceptance_rate" in r) == (smp.method == "rejection")


def test_classifier_range_says_its_scale(data):
    X, y = data
    yb = (y > 0).astype(int)
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, yb)
    pr = rs.prediction_range(X.iloc[:4])
    assert f"scale={pr.scale}" in repr(pr) and pr.scale in pr._repr_html_()


# ------------------------------------------------------------------ attained inside certified


def test_prediction_range_repr_is_well_formed(results):
    """One closing parenthesis at the end, the scale once."""
    r = repr(results["prediction range"][0])
    assert r.count("scale=") == 1 and "\n," not in r and r.endswith("\n)") and r.count(")") == 1, r


def test_set_repr_cuts_feature_names_between_names():
    rng = np.random.default_rng(1)
    names = ["residual sugar", "fixed acidity", "volatile acidity", "citric acid", "chlorides", "sulphates"]
    X = pd.DataFrame(rng.normal(size=(40, 6)), columns=names)
    rs = RashomonSet(LinearModelClass(), 0.1).fit(X, X.sum(axis=1) + rng.normal(size=40))
    r = repr(rs)
    shown = r.split("features=[", 1)[1].split("]", 1)[0]
    listed, more = shown.split(", ... (+")
    assert listed.split(", ") == names[: len(listed.split(", "))]  # whole names only
    assert more == f"{len(names) - len(listed.split(', '))} more)"
    assert format_value(["a", "b"]) == "[a, b]"


def test_mcr_shows_attained_beside_a_loose_bound(results):
    import dataclasses

    mcr = results["mcr"][0]
    assert mcr.lower_tight and mcr.upper_tight
    assert "attained" not in repr(mcr) and mcr.bounds_text() == f"[{mcr.lower:.4g}, {mcr.upper:.4g}] (tight)"
    loose = dataclasses.replace(mcr, upper_tight=False, upper_gap=0.0123)
    assert loose.upper_attained == pytest.approx(mcr.upper - 0.0123)
    assert f"attained=[{mcr.lower:.6g}, {mcr.upper - 0.0123:.6g}]" in repr(loose)
    text = "".join(_parse(loose._repr_html_()).text)
    assert "MCR_attained" in text and format_value(mcr.upper - 0.0123) in text
    assert loose.bounds_text() == (
        f"attained [{mcr.lower:.4g}, {mcr.upper - 0.0123:.4g}] within certified [{mcr.lower:.4g}, {mcr.upper:.4g}]"
    )
    s = loose.summary()
    assert s["mcr_upper_attained"] == pytest.approx(mcr.upper - 0.0123) and s["mcr_upper"] == mcr.upper


def test_disparity_range_shows_attained_within_certified(data):
    X, y = data
    rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, (y > 0).astype(int))
    d = rs.disparity_range((X["c"] > 0).astype(int))
    assert not d.exact[0]  # the probability-scale mean is an outer bound here
    want = (
        f"attained [{d.lower_attained[0]:.4g}, {d.upper_attained[0]:.4g}] within certified "
        f"[{d.lower[0]:.4g}, {d.upper[0]:.4g}]"
    )
    assert want in repr(d) and "(outer)" not in repr(d)
    text = "".join(_parse(d._repr_html_()).text)
    for v in (d.lower_attained[0], d.upper_attained[0], d.lower[0], d.upper[0]):
        assert format_value(v) in text
    assert "within certified" in text
    assert {"lower", "lower_attained", "upper_attained", "upper"} <= set(d.to_frame().columns)


def test_range_frames_carry_the_attained_ends(results):
    for case in ("prediction range", "coef range", "functional range"):
        r = results[case][0]
        df = r.to_frame()
        np.testing.assert_array_equal(df["lower_attained"], r.lower_attained)
        np.testing.assert_array_equal(df["upper_attained"], r.upper_attained)
        cols = list(df.columns)
        assert cols.index("lower") < cols.index("lower_attained") < cols.index("upper_attained") < cols.index("upper")


def test_one_loose_functional_shows_both_intervals(results):
    import dataclasses

    fr = results["functional range"][0]
    loose = dataclasses.replace(fr, upper_attained=fr.upper - 0.25)
    r = repr(loose)
    assert "all_tight=False" in r and "n_not_tight=1" in r
    assert f"attained=[{format_value(fr.lower_attained[0])}, {format_value(fr.upper[0] - 0.25)}]" in r
    assert f"certified=[{format_value(fr.lower[0])}, {format_value(fr.upper[0])}]" in r


def test_envelope_frame_carries_the_attained_ends(results):
    env = results["envelope"][0]
    df = env.to_frame()
    assert list(df.columns) == ["epsilon_abs", "mcr_lower", "mcr_lower_attained", "mcr_upper_attained", "mcr_upper"]
    np.testing.assert_allclose(df["mcr_upper_attained"], [r.upper - r.upper_gap for r in env.results])
    np.testing.assert_allclose(df["mcr_lower_attained"], [r.lower + r.lower_gap for r in env.results])
