"""The audit's "Fairness over the Rashomon set" section (``audit(..., sensitive=...)``, ``--sensitive``).

Small tables (a few hundred COMPAS rows, a ``split`` column so that the held-out rows are known), 3-fold CV, no
bootstrap. The report's figures are checked against the direct ``RashomonSet`` calls on the audit's own set.
"""

import html
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from rashomon import RashomonInputError, audit
from rashomon.audit.cli import main
from rashomon.datasets import load_compas

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_report import _CHECK_SCRIPT, _chromium, _run_chromium, _text  # noqa: E402

TOL = 1e-12  # the audit calls the same engines on the same set: equal up to rounding
VIOLENT_GROUPS = {"inadmissible": ["race", "sex"], "admissible": ["priors_count", "c_charge_degree", "age"]}
RECID_GROUPS = {"sex": ["sex"], "history_age": ["priors_count", "c_charge_degree", "age"]}  # race not a feature
RECID_FEATURES = ["sex", "priors_count", "c_charge_degree", "age"]


@pytest.fixture(scope="module")
def violent() -> pd.DataFrame:
    """COMPAS violent recidivism (African-American and Caucasian): 600 rows, the first 200 fit the reference."""
    df = load_compas("violent", races=("African-American", "Caucasian"))
    df = df[["race", "sex", "priors_count", "c_charge_degree", "age", "v_decile_score", "decile_score"]].iloc[:600]
    df = df.reset_index(drop=True)
    df["train"] = np.arange(len(df)) < 200
    return df


@pytest.fixture(scope="module")
def recid() -> pd.DataFrame:
    """COMPAS two-year recidivism, three groups of race, 800 rows (300 fit the reference), the decile score as a
    probability-scale benchmark."""
    df = load_compas("two_year")
    df = df[df["race"].isin(["African-American", "Caucasian", "Hispanic"])]
    df = df[RECID_FEATURES + ["race", "two_year_recid", "decile_score"]].iloc[:800].reset_index(drop=True)
    df["decile_prob"] = (df["decile_score"] - 0.5) / 10
    df["train"] = np.arange(len(df)) < 300
    return df


def _same_rows(got: list, dr) -> None:
    want = dr.to_frame()
    assert [r["disparity"] for r in got] == list(want["disparity"])
    for r, (_, w) in zip(got, want.iterrows()):
        for k in ("lower", "lower_attained", "reference", "upper_attained", "upper"):
            assert r[k] == pytest.approx(w[k], rel=TOL, abs=TOL), k
        assert r["exact"] == bool(w["exact"])


def _roundtrip(res, tmp_path) -> dict:
    path = tmp_path / "res.json"
    res.to_json(path)
    return json.loads(path.read_text())["_meta"]["fairness"]


# ------------------------------------------------------------------ regression: COMPAS violent, linear class


def test_api_compas_regression_equals_direct_calls(violent, tmp_path):
    res = audit(
        violent,
        "v_decile_score",
        VIOLENT_GROUPS,
        model_class="linear",
        split="train",
        cv=3,
        sensitive="race",
        benchmark_column="decile_score",
    )
    f = res.fairness
    assert f is res.meta["fairness"] and f["sensitive"] == "race" and f["n_held_out"] == 400
    rs = res.rashomon_set
    te = ~violent["train"].to_numpy()
    sens = violent["race"].to_numpy()[te]
    # the disparity range: the direct call on the audit's set, row for row
    dr = rs.disparity_range(sens, "mean_prediction")
    assert dr.exact.all()
    _same_rows(f["disparity"]["mean_prediction"]["rows"], dr)
    assert set(f["disparity"]) == {"mean_prediction"}  # no positive rate for a regression class
    assert f["groups"] == ["African-American", "Caucasian"] and f["reference_group"] == "African-American"
    # the least disparate member and its loss beside the reference's
    feats = [list(g.features) for g in res.groups.values()]
    ld = rs.least_disparate(sens, "mean_prediction", features=feats, frontier=False)
    got = f["least_disparate"]
    assert got["disparity"] == pytest.approx(ld.disparity, abs=TOL)
    assert got["loss"] == pytest.approx(ld.loss, rel=TOL) and got["e_ref"] == pytest.approx(res.e_ref, rel=TOL)
    assert got["certified_lower"] <= abs(got["disparity"]) + 1e-9 and got["loss"] <= res.epsilon_abs * (1 + 1e-9)
    assert [r["group"] for r in got["reliance"]] == list(VIOLENT_GROUPS)
    # the deployed score: its place equals least_disparate(benchmark=...) on the same rows
    bench = violent["decile_score"].to_numpy(dtype=float)[te]
    lb = rs.least_disparate(sens, "mean_prediction", benchmark=bench, frontier=False).benchmark
    (b,) = f["benchmarks"]
    row = b["metrics"]["mean_prediction"]["rows"][0]
    assert b["name"] == "column decile_score" and row["value"] == pytest.approx(lb["disparity"], abs=TOL)
    assert row["position"] == lb["position"]
    gv = pd.Series(bench).groupby(sens).mean()
    assert row["value"] == pytest.approx(gv["Caucasian"] - gv["African-American"], abs=1e-12)
    assert b["loss"] == pytest.approx(np.mean((violent["v_decile_score"].to_numpy()[te] - bench) ** 2))
    # the certified order of the groups: reliance_order on the same set
    order = rs.reliance_order({k: list(g.features) for k, g in res.groups.items()}, critical=True)
    got_rel = f["order"]["relations"]
    assert [(r["a"], r["b"]) for r in got_rel] == [(r.a, r.b) for r in order.relations.itertuples()]
    for r, w in zip(got_rel, order.relations.itertuples()):
        assert r["lower"] == pytest.approx(w.lower, rel=1e-9)
    (d,) = f["order"]["differences"]
    rd = rs.reliance_difference(list(res.groups["inadmissible"].features), list(res.groups["admissible"].features))
    assert (d["a"], d["b"]) == ("inadmissible", "admissible") and d["lower"] == pytest.approx(rd.lower, rel=1e-9)
    # cost stated; the JSON carries the same figures
    assert f["seconds"]["total_s"] > 0 and res.timings["fairness_s"] == f["seconds"]["total_s"]
    js = _roundtrip(res, tmp_path)
    assert js["disparity"]["mean_prediction"]["rows"] == json.loads(
        json.dumps(f["disparity"]["mean_prediction"]["rows"])
    )
    assert js["least_disparate"]["loss"] == got["loss"]


def _open_in_chromium(report: Path, tmp_path: Path) -> str:
    binary = _chromium()
    if binary is None:
        pytest.skip("no Chromium binary (chromium, chromium-browser or google-chrome) on PATH; .ci/run installs it")
    probe = report.parent / "probe.html"
    probe.write_text(
        report.read_text(encoding="utf-8").replace("<head>", "<head>" + _CHECK_SCRIPT, 1), encoding="utf-8"
    )
    proc = _run_chromium(binary, tmp_path / "profile", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri())
    m = re.search(r'<pre id="checks">(.*?)</pre>', proc.stdout, flags=re.S)
    assert m, f"the check script did not run (chromium exit {proc.returncode}): {proc.stderr[-2000:]}"
    assert json.loads(html.unescape(m.group(1)))["errors"] == []
    return _text(proc.stdout)


def _cli(tmp_path, csv, target, groups, extra):
    out, js = tmp_path / "out", tmp_path / "res.json"
    args = [
        "audit",
        "--data",
        str(csv),
        "--target",
        target,
        "--split",
        "train",
        "--cv",
        "3",
        "--quiet",
        "--out",
        str(out),
        "--json",
        str(js),
        *extra,
    ]
    for g, cols in groups.items():
        args += ["--group", f"{g}={','.join(cols)}"]
    assert main(args) == 0
    return out / "report.html", json.loads(js.read_text())


def _section(text: str) -> str:
    i = text.index("Fairness over the Rashomon set")
    return text[i:]


def test_cli_compas_kernel_race_not_a_feature(violent, tmp_path, capsys):
    csv = tmp_path / "violent.csv"
    violent.iloc[:400].to_csv(csv, index=False)  # 200 training, 200 held-out rows
    groups = {"sex": ["sex"], "admissible": ["priors_count", "c_charge_degree", "age"]}
    report, res = _cli(
        tmp_path,
        csv,
        "v_decile_score",
        groups,
        ["--model-class", "kernel", "--sensitive", "race", "--benchmark-column", "decile_score"],
    )
    assert "fairness (race): mean-prediction" in capsys.readouterr().out
    f = res["_meta"]["fairness"]
    mp = f["disparity"]["mean_prediction"]
    assert mp["method"].startswith("exact") and all(r["exact"] for r in mp["rows"])
    for r in mp["rows"]:
        assert r["lower"] <= r["reference"] <= r["upper"]
    assert f["least_disparate"]["loss"] <= res["_meta"]["epsilon_abs"] * (1 + 1e-9)
    assert f["benchmarks"][0]["name"] == "column decile_score" and "order" in f
    page = report.read_text(encoding="utf-8")
    text = _section(_text(page))
    assert "It is not an input of the models" in text and "The least disparate good model" in text
    assert "column decile_score" in text and "The certified order of the audited groups" in text
    assert "Cost of this section" in text
    assert _g4(mp["rows"][0]["upper"]) in text and _g4(f["least_disparate"]["loss"]) in text
    rendered = _section(_open_in_chromium(report, tmp_path))
    assert _g4(mp["rows"][0]["lower"]) in rendered


def _g4(v: float) -> str:
    return f"{v:.4g}"


# ------------------------------------------------------------------ binary: COMPAS two-year, logistic class


def test_api_logistic_three_groups_with_user_model(recid, tmp_path):
    ct = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["sex", "c_charge_degree"]), remainder="passthrough"
    )
    tr = recid["train"].to_numpy()
    model = make_pipeline(ct, LogisticRegression(max_iter=1000)).fit(
        recid.loc[tr, RECID_FEATURES], recid.loc[tr, "two_year_recid"]
    )
    res = audit(
        recid,
        "two_year_recid",
        RECID_GROUPS,
        split="train",
        cv=3,
        ambiguity_rows=10,
        sensitive="race",
        benchmark_column="decile_prob",
        estimator=model,
    )
    assert res.model_class == "logistic"
    f, rs = res.fairness, res.rashomon_set
    sens = recid["race"].to_numpy()[~tr]
    _same_rows(f["disparity"]["mean_prediction"]["rows"], rs.disparity_range(sens, "mean_prediction"))
    pr = rs.disparity_range(sens, "positive_rate", threshold=0.5)
    _same_rows(f["disparity"]["positive_rate"]["rows"], pr)
    assert (
        f["disparity"]["mean_prediction"]["scale"] == "probability"
        and f["disparity"]["positive_rate"]["threshold"] == 0.5
    )
    assert len(f["disparity"]["positive_rate"]["rows"]) == 3  # two groups against the reference, then max - min
    for d in f["disparity"].values():
        for r in d["rows"]:
            assert r["lower"] <= r["lower_attained"] <= r["upper_attained"] <= r["upper"]
    ld = f["least_disparate"]
    assert ld["loss_name"] == "log loss" and ld["e_ref"] == pytest.approx(res.e_ref, rel=TOL)
    # both benchmarks placed, on the probability scale: the user's model through predict_proba
    names = [b["name"] for b in f["benchmarks"]]
    assert names == ["column decile_prob", "your model (Pipeline)"]
    p = model.predict_proba(recid.loc[~tr, RECID_FEATURES])[:, 1]
    gv = pd.Series(p).groupby(sens).mean()
    user = f["benchmarks"][1]["metrics"]
    assert user["mean_prediction"]["rows"][-1]["value"] == pytest.approx(gv.max() - gv.min(), abs=1e-12)
    gr = pd.Series((p > 0.5).astype(float)).groupby(sens).mean()
    assert user["positive_rate"]["rows"][0]["value"] == pytest.approx(
        gr["Caucasian"] - gr["African-American"], abs=1e-12
    )
    # the classifier order: outer bounds from the audit's own MCR intervals
    (d,) = f["order"]["differences"]
    a, b = res.groups["sex"], res.groups["history_age"]
    assert d["lower"] == pytest.approx(a.mcr_lower - b.mcr_upper) and d["upper"] == pytest.approx(
        a.mcr_upper - b.mcr_lower
    )
    assert [(r["a"], r["b"]) for r in f["order"]["relations"]] == ([("history_age", "sex")] if d["upper"] < 0 else [])
    assert _roundtrip(res, tmp_path)["disparity"]["positive_rate"]["rows"][0]["upper"] == pytest.approx(pr.upper[0])


def test_cli_logistic_report(recid, tmp_path):
    csv = tmp_path / "recid.csv"
    recid.iloc[:600].to_csv(csv, index=False)
    report, res = _cli(
        tmp_path,
        csv,
        "two_year_recid",
        RECID_GROUPS,
        ["--ambiguity-rows", "10", "--sensitive", "race", "--benchmark-column", "decile_prob"],
    )
    f = res["_meta"]["fairness"]
    assert set(f["disparity"]) == {"mean_prediction", "positive_rate"}
    text = _section(_text(report.read_text(encoding="utf-8")))
    assert "Positive rate at probability threshold 0.5" in text and "outer bound" in text
    assert _g4(f["disparity"]["positive_rate"]["rows"][-1]["upper_attained"]) in text


# ------------------------------------------------------------------ bad inputs: clear errors before any computing


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"sensitive": "ethnicity"}, r"'sensitive' parameter of audit must name a column of the data.*'ethnicity'"),
        ({"sensitive": "v_decile_score"}, r"'sensitive' parameter of audit must not be the target"),
        (
            {"sensitive": "priors_count"},
            r"'sensitive' parameter of audit must name a group column with at most 20 levels",
        ),
        ({"sensitive": "one"}, r"'sensitive' parameter of audit must name a column with two or more groups"),
        (
            {"sensitive": "gappy"},
            r"'sensitive' parameter of audit must name a column without missing values.*1 missing",
        ),
        ({"sensitive": "rare"}, r"at least 10 held-out rows in every group. Got group 'x' of 'rare' with 3"),
        ({"benchmark_column": "decile_score"}, r"'benchmark_column' parameter of audit needs 'sensitive'"),
        (
            {"sensitive": "race", "benchmark_column": "nope"},
            r"'benchmark_column' parameter of audit must name a column",
        ),
        (
            {"sensitive": "race", "benchmark_column": "sex"},
            r"'benchmark_column' parameter of audit must name a numeric",
        ),
    ],
)
def test_bad_inputs_name_the_argument(violent, kw, match):
    df = violent.copy()
    df["one"] = "a"
    df["gappy"] = df["race"].where(df.index != 300)
    df["rare"] = np.where(np.arange(len(df)) >= 597, "x", "y")
    with pytest.raises(RashomonInputError, match=match):
        audit(df, "v_decile_score", VIOLENT_GROUPS, model_class="linear", split="train", cv=3, **kw)


def test_logistic_benchmark_must_be_probabilities(recid):
    with pytest.raises(RashomonInputError, match=r"'benchmark_column'.*probabilities in \[0, 1\].*\[1, 10\]"):
        audit(recid, "two_year_recid", RECID_GROUPS, split="train", sensitive="race", benchmark_column="decile_score")


def test_cli_errors_name_the_option(violent, tmp_path, capsys):
    csv = tmp_path / "violent.csv"
    violent.to_csv(csv, index=False)
    base = [
        "audit",
        "--data",
        str(csv),
        "--target",
        "v_decile_score",
        "--group",
        "adm=priors_count,age",
        "--split",
        "train",
        "--quiet",
        "--no-plots",
    ]
    assert main(base + ["--sensitive", "ethnicity"]) == 2
    assert "The '--sensitive' option of rashomon audit must name a column" in capsys.readouterr().err
    assert main(base + ["--benchmark-column", "decile_score"]) == 2
    assert "The '--benchmark-column' option of rashomon audit needs 'sensitive'" in capsys.readouterr().err
