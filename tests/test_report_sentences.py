"""Every conditional sentence of the audit report, checked against its condition on reports built from real runs:
with and without bootstrap, with and without categorical columns, with a level dropped from the design, regression
and binary outcomes. Shares are written as percentages."""

import dataclasses
import html
import re

import numpy as np
import pandas as pd
import pytest

import rashomon
from rashomon.audit import _report, _report_classifier, _report_fairness, _report_text
from rashomon.datasets import load_pima_diabetes


def _text(page: str) -> str:
    """Visible text of a page (or fragment), whitespace collapsed."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r"</?(b|i|sup|sub|code|span|a)\b[^>]*>", "", page)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _page(result, tmp_path, name="r.html") -> str:
    result.to_html(tmp_path / name, figures={"summary": ""})
    return _text((tmp_path / name).read_text(encoding="utf-8"))


def _table(n=160, seed=0, categorical=True):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n)})
    df["y"] = 2 * df["a"] - df["b"] + 0.3 * rng.normal(size=n)
    if categorical:
        df["color"] = rng.choice(["red", "green", "blue"], size=n)
        df["y"] += df["color"] == "red"
    return df


FAST = {"model_class": "linear", "train_size": 80, "cv": 3, "random_state": 0, "n_jobs": 1}


@pytest.fixture(scope="module")
def reg_boot():
    """Regression, a categorical column (no level dropped), 3 bootstrap resamples."""
    return rashomon.audit(_table(), "y", {"num": ["a", "b"], "col": ["color"]}, bootstrap=3, **FAST)


@pytest.fixture(scope="module")
def reg_plain():
    """Regression, numeric columns only, no bootstrap."""
    return rashomon.audit(_table(categorical=False), "y", {"num": ["a", "b"]}, bootstrap=0, **FAST)


def _pima(n=300):
    df = load_pima_diabetes().iloc[:n].copy()
    df["agegroup"] = np.where(df["Age"] > 60, "old", np.where(df["Age"] > 35, "mid", "young"))
    rng = np.random.RandomState(0)
    df["train"] = (rng.rand(len(df)) < 0.5) & (df["Age"] <= 60)  # no "old" row fits the reference
    return df


@pytest.fixture(scope="module")
def binary_drop():
    """Logistic, a categorical column whose level "old" is absent from the training rows, no bootstrap, the
    ambiguity on every held-out row."""
    return rashomon.audit(
        _pima(),
        "Outcome",
        {"glucose": ["Glucose"], "age": ["agegroup"]},
        features=["Glucose", "agegroup"],
        split="train",
        cv=3,
        ambiguity_rows=None,
    )


@pytest.fixture(scope="module")
def binary_boot():
    """Logistic, numeric columns only, 2 bootstrap resamples (MR of the reference), the ambiguity on a sample."""
    return rashomon.audit(
        _pima(),
        "Outcome",
        {"glucose": ["Glucose"]},
        features=["Glucose", "BMI"],
        train_size=150,
        cv=3,
        ambiguity_rows=40,
        bootstrap=2,
    )


# ------------------------------------------------------------------ intervals: bootstrap or not


def test_intervals_sentence_follows_the_bootstrap(reg_boot, reg_plain, tmp_path):
    with_b, without = _page(reg_boot, tmp_path, "a.html"), _page(reg_plain, tmp_path, "b.html")
    assert "95% intervals by percentile bootstrap over held-out rows, from 3 bootstrap resamples" in with_b
    assert "No bootstrap was run (bootstrap = 0)" not in with_b
    assert "No bootstrap was run (bootstrap = 0)" in without and "bootstrap resamples" not in without


def test_closing_remark_on_resampling_only_after_a_bootstrap(reg_boot, reg_plain, binary_drop, tmp_path):
    reflect = "The bootstrap intervals reflect resampling of the held-out rows only"
    none = "No bootstrap was run, so no interval here describes sampling uncertainty"
    with_b = _page(reg_boot, tmp_path, "a.html")
    assert reflect in with_b and none not in with_b
    for res in (reg_plain, binary_drop):
        text = _page(res, tmp_path, "b.html")
        assert none in text and "reflect resampling" not in text


def test_classifier_bootstrap_cost_sentence(binary_drop, binary_boot):
    without = _text(_report_classifier.bootstrap_cost_text(binary_drop))
    assert without.startswith("No bootstrap was run; MCR was not bootstrapped")
    with_b = _text(_report_classifier.bootstrap_cost_text(binary_boot))
    assert with_b.startswith("The bootstrap (2 resamples) gave intervals for the MR of the reference; MCR itself")


# ------------------------------------------------------------------ encoding: none, all levels, a level dropped


def test_encoding_without_categorical_columns(reg_plain, binary_boot, tmp_path):
    for res in (reg_plain, binary_boot):
        text = _page(res, tmp_path)
        assert "No categorical column needed encoding: all features were numeric." in text
        assert "one-hot" not in text


def test_encoding_with_every_level_kept(reg_boot, tmp_path):
    text = _page(reg_boot, tmp_path)
    assert "one-hot encoded with all their levels (no level dropped; a group naming the column" in text
    assert "color → blue, green, red" in text and "dropped from the design" not in text


def test_encoding_with_a_level_dropped(binary_drop, tmp_path):
    assert binary_drop.meta["classifier"]["dropped_constant_columns"] == ["agegroup=old"]
    text = _page(binary_drop, tmp_path)
    assert "no level dropped" not in text
    assert "agegroup → mid, old, young" in text
    assert (
        "This level was then dropped from the design, constant on the training rows (absent from them): "
        "agegroup=old." in text
    )


def test_standardised_columns_sentence(reg_boot, tmp_path):
    text = _page(reg_boot, tmp_path)
    assert "Numeric columns other than 0/1 were standardised" in text
    meta = {**reg_boot.meta, "standardised": []}
    res = dataclasses.replace(reg_boot, meta=meta, reference={**reg_boot.reference, "standardised_features": []})
    assert "No column was standardised" in _page(res, tmp_path, "b.html")


def test_one_hot_note_on_coefficients_only_with_categorical_columns(binary_drop, binary_boot):
    note = "With all levels of a categorical column one-hot encoded"
    assert note in _text(_report_classifier.classifier_section(binary_drop))
    assert "Coefficient sign stability" in _text(_report_classifier.classifier_section(binary_boot))
    assert note not in _text(_report_classifier.classifier_section(binary_boot))


# ------------------------------------------------------------------ rows and shares


def test_rows_dropped_sentence_only_when_rows_were_dropped(reg_boot, tmp_path):
    text = _page(reg_boot, tmp_path)
    assert "The input table had 160 rows." in text and "rows with missing values were dropped" not in text
    df = _table()
    df.loc[:4, "a"] = np.nan
    res = rashomon.audit(df, "y", {"num": ["a", "b"]}, drop_missing=True, bootstrap=0, **FAST)
    assert "5 rows with missing values were dropped (missing values: a 5)." in _page(res, tmp_path, "b.html")


def test_ambiguity_is_a_percentage_of_the_rows_it_was_measured_on(binary_drop, binary_boot):
    for res, where in ((binary_drop, "all"), (binary_boot, "sample")):
        amb = res.meta["classifier"]["ambiguity"]
        text = _text(_report_classifier.classifier_section(res))
        share = _report_text._pct(amb["ambiguity"])
        assert share.endswith("%") and share == f"{100 * amb['ambiguity']:.3g}%"
        assert f"{share} of the rows ({amb['n_flippable']} of {amb['n_rows']})" in text
        if where == "all":
            assert f"on all {amb['n_rows']} held-out rows" in text and "seeded sample" not in text
        else:
            assert f"on a seeded sample of 40 of the {amb['n_held_out']} held-out rows" in text
        assert f"at most {_report_text._pct(amb['discrepancy_upper'])} (certified)" in text
        acc = res.meta["classifier"]["reference_metrics"]["accuracy"]
        assert f"Accuracy {_report_text._pct(acc)} (score > 0" in text


def test_percentages_of_whole_and_no_rows():
    assert _report_text._pct(1.0) == "100%" and _report_text._pct(0.0) == "0%"
    assert _report_text._pct(0.886) == "88.6%" and _report_text._pct(0.004) == "0.4%"
    assert _report_text._pct(None) == "n/a"


# ------------------------------------------------------------------ headline and captions: attained and certified


def _loose(res, name, **kw):
    g = res.groups[name]
    return dataclasses.replace(
        res, groups={**res.groups, name: dataclasses.replace(g, mcr=dataclasses.replace(g.mcr, **kw))}
    )


def _with(g, **kw):
    """The group with its MCR result changed (bounds also on the group's own fields)."""
    m = dataclasses.replace(g.mcr, **kw)
    return dataclasses.replace(g, mcr=m, mcr_lower=m.lower, mcr_upper=m.upper)


def test_headline_certified_sentences(reg_boot):
    g = reg_boot.groups["num"]
    assert g.mcr_lower > 1
    assert "Every good model relies on this group (MCR− > 1)." in _text(_report_text.headline(g))
    low = _with(g, lower=0.5, upper=0.9)
    assert "No good model relies on this group in a helpful way (MCR+ ≤ 1)." in _text(_report_text.headline(low))
    mid = _with(g, lower=0.8, upper=1.2, lower_gap=0.0, upper_gap=0.0)
    text = _text(_report_text.headline(mid))
    assert "Some good models rely on this group (MCR+ > 1) while others do not need it (MCR− ≤ 1)." in text
    assert "attain" not in text  # both ends tight: one interval


def test_headline_names_the_attained_values_when_an_end_is_loose(reg_boot):
    g = reg_boot.groups["num"]
    loose = _with(g, lower=0.8, upper=1.2, upper_tight=False, upper_gap=0.25, lower_gap=0.0)
    text = _text(_report_text.headline(loose))
    assert "(certified bounds; the members found attain [0.8000, 0.9500]" in text
    assert "No member found relies on this group in a helpful way (attained MCR+ ≤ 1)" in text
    assert "Some good models rely" not in text
    above = _with(g, lower=0.9, upper=1.5, lower_tight=False, lower_gap=0.2, upper_gap=0.0)
    text = _text(_report_text.headline(above))
    assert (
        "Some good models rely on this group (MCR+ > 1) while whether some good model does without it is open" in text
    )


def test_binary_headline_uses_the_members_found(binary_drop, tmp_path):
    text = _page(binary_drop, tmp_path)
    for g in binary_drop.groups.values():
        x = g.extra
        if not g.mcr.upper_tight:
            assert (
                f"between {g.mcr_lower:.4f} and {g.mcr_upper:.4f} (certified bounds; the members found attain "
                f"[{x['mcr_lower_attained']:.4f}, {x['mcr_upper_attained']:.4f}]"
            ) in text


def test_captions_name_attained_only_when_a_bound_is_loose(reg_boot):
    tight = _text(_report._caption(reg_boot, "envelope_num", "num"))
    assert "thick red segment: the MCR interval [" in tight and "attained" not in tight
    assert "dark blue line" not in _report._caption(reg_boot, "summary", None)
    loose = _loose(reg_boot, "num", upper_tight=False, upper_gap=0.01)
    g = loose.groups["num"]
    text = _text(_report._caption(loose, "envelope_num", "num"))
    assert f"the certified MCR bounds [{g.mcr_lower:.4f}, {g.mcr_upper:.4f}]" in text
    assert f"attained [{g.mcr_lower:.4f}, {g.mcr_upper - 0.01:.4f}] by the members found" in text
    assert "dark blue line: the MRs attained by the members found" in _report._caption(loose, "summary", None)


# ------------------------------------------------------------------ fairness: the cost sentence


def _fair(least: bool) -> dict:
    ld = {
        "loss_name": "squared error",
        "certified_lower": 0.0,
        "exact": True,
        "disparity": 0.0,
        "loss": 1.0,
        "reference_disparity": 0.2,
        "e_ref": 0.9,
        "name": "1 - 0",
        "epsilon_abs": 1.1,
        "reliance": [],
    }
    return {
        "sensitive": "s",
        "group_rows": [{"group": 0, "n_rows": 50}, {"group": 1, "n_rows": 50}],
        "n_held_out": 100,
        "reference_group": 0,
        "disparity": {},
        "least_disparate": ld if least else None,
        "seconds": {"total_s": 1.0},
    }


def test_fairness_cost_mentions_the_frontier_only_with_a_least_disparate_member(reg_plain):
    frontier = "the least disparate member without its frontier over ε"
    with_ld = dataclasses.replace(reg_plain, meta={**reg_plain.meta, "fairness": _fair(True)})
    assert frontier in _text(_report_fairness.fairness_section(with_ld))
    without = dataclasses.replace(reg_plain, meta={**reg_plain.meta, "fairness": _fair(False)})
    text = _text(_report_fairness.fairness_section(without))
    assert "Cost of this section: total 1.00 s." in text and frontier not in text


def test_order_table_shows_attained_differences_or_says_none_were_searched():
    d = {"a": "x", "b": "z", "lower": -0.5, "upper": 0.9, "exact": False}
    o = {"relations": [], "method": "m"}
    searched = _text(
        _report_fairness._order_text({**o, "differences": [{**d, "lower_attained": -0.2, "upper_attained": 0.4}]})
    )
    assert "MR(x) − MR(z) -0.5 -0.2 0.4 0.9 outer bound" in searched
    assert "Attained: the differences of members found" in searched and "n/a" not in searched
    combined = _text(_report_fairness._order_text({**o, "differences": [d]}))
    assert "MR(x) − MR(z) -0.5 n/a n/a 0.9 outer bound" in combined
    assert "no member was searched for this difference" in combined
