"""Audits of binary outcomes (logistic / hinge classes) and of a model the user already fitted.

CLI runs on COMPAS two-year recidivism, Pima (``Outcome``), breast cancer with string labels and red wine
with ``quality >= 6``: each writes an HTML report (opened in headless Chromium when one is installed) and a
JSON file with the classifier MCR per group. Small budgets throughout (few training rows, 3-fold CV, a
few ambiguity rows, no bootstrap unless the test is about it).
"""

import html
import json
import re
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest

import rashomon
from rashomon import RashomonInputError, model_reliance
from rashomon.audit import _report_classifier
from rashomon.audit.cli import main
from rashomon.datasets import load_compas, load_pima_diabetes, load_wine_quality

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_report import _CHECK_SCRIPT, _chromium, _run_chromium, _text  # noqa: E402

FAST = ["--train-size", "300", "--cv", "3", "--ambiguity-rows", "10", "--quiet"]
RECID_GROUPS = {"race_sex": ["race", "sex"], "history_age": ["priors_count", "c_charge_degree", "age"]}


def _recid_raw() -> pd.DataFrame:
    raw = load_compas("two_year")
    return raw[["race", "sex", "priors_count", "c_charge_degree", "age", "two_year_recid"]].reset_index(drop=True)


@pytest.fixture(scope="module")
def recid_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("recid") / "compas_two_year.csv"
    _recid_raw().to_csv(path, index=False)
    return path


def _cli(tmp_path, data, target, groups, extra=(), name="out"):
    out, js = tmp_path / name, tmp_path / f"{name}.json"
    args = ["audit", "--data", str(data), "--target", target, *FAST, "--out", str(out), "--json", str(js), *extra]
    for g, cols in groups.items():
        args += ["--group", f"{g}={','.join(cols)}"]
    assert main(args) == 0
    return out / "report.html", json.loads(js.read_text())


def _check_json(res: dict, groups, model_class="logistic"):
    assert res["_meta"]["model_class"] == model_class
    for g in groups:
        d = res[g]
        assert d["mcr_lower"] <= d["mcr_lower_attained"] <= d["mcr_upper_attained"] <= d["mcr_upper"]
        assert d["mcr_lower"] <= d["mr_ref"] <= d["mcr_upper"]
    c = res["_meta"]["classifier"]
    assert 0.5 < c["reference_metrics"]["auc"] <= 1 and 0 <= c["ambiguity"]["ambiguity"] <= 1
    assert c["ambiguity"]["scale"] == ("probability" if model_class == "logistic" else "score")


def _open_in_chromium(report: Path, tmp_path: Path, n_groups: int) -> str:
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
    checks = json.loads(html.unescape(m.group(1)))
    assert len(checks["images"]) == n_groups + 1 and checks["errors"] == []
    for im in checks["images"]:
        assert im["complete"] and im["naturalWidth"] >= 1000, im
    return _text(proc.stdout)


def _report_states(text: str, res: dict):
    assert "log loss" in text and "Accuracy" in text and "AUC" in text
    assert "MCR+ (certified outer bound)" in text and "MCR− attained" in text
    assert "Ambiguity" in text and "sign stability" in text.lower()
    for g, d in res.items():
        if not g.startswith("_"):
            for v in (d["mr_ref"], d["mcr_lower"], d["mcr_upper"], d["mcr_upper_attained"]):
                assert f"{v:.4f}" in text


# ------------------------------------------------------------------ CLI runs on four tables


def test_cli_compas_recidivism(recid_csv, tmp_path):
    report, res = _cli(tmp_path, recid_csv, "two_year_recid", RECID_GROUPS)
    _check_json(res, RECID_GROUPS)
    assert res["_meta"]["n_rows_used"] == 6172 and res["_meta"]["loss"] == "log loss"
    text = _text(report.read_text(encoding="utf-8"))
    _report_states(text, res)
    assert "probability threshold 0.5" in text
    _report_states(_open_in_chromium(report, tmp_path, len(RECID_GROUPS)), res)  # the numbers as rendered


def test_cli_pima(tmp_path):
    path = tmp_path / "pima.csv"
    load_pima_diabetes().to_csv(path, index=False)
    groups = {"glucose": ["Glucose"], "body": ["BMI", "Age"]}
    report, res = _cli(tmp_path, path, "Outcome", groups)
    _check_json(res, groups)
    _report_states(_text(report.read_text(encoding="utf-8")), res)
    _open_in_chromium(report, tmp_path, len(groups))


def test_cli_breast_cancer_string_labels(tmp_path):
    from sklearn.datasets import load_breast_cancer

    bc = load_breast_cancer(as_frame=True)
    df = bc.data.iloc[:, :6].copy()
    df.columns = [c.replace(" ", "_") for c in df.columns]
    df["diagnosis"] = np.asarray(bc.target_names)[bc.target]
    path = tmp_path / "bc.csv"
    df.to_csv(path, index=False)
    groups = {"size": ["mean_radius", "mean_area"], "texture": ["mean_texture"]}
    report, res = _cli(tmp_path, path, "diagnosis", groups, ["--positive-label", "malignant", "--train-size", "200"])
    _check_json(res, groups)
    labels = res["_meta"]["classifier"]["labels"]
    assert labels["positive"] == "malignant" and labels["n_positive"] == 212
    text = _text(report.read_text(encoding="utf-8"))
    _report_states(text, res)
    assert "coded 1 for malignant" in text
    _open_in_chromium(report, tmp_path, len(groups))


def test_cli_red_wine_quality_at_least_6(tmp_path):
    wine = load_wine_quality("red")
    df = wine.drop(columns="quality").rename(columns=lambda c: c.replace(" ", "_"))
    df["good"] = (wine["quality"] >= 6).astype(int)
    path = tmp_path / "wine.csv"
    df.to_csv(path, index=False)
    groups = {"alcohol": ["alcohol"], "acidity": ["volatile_acidity", "citric_acid"]}
    report, res = _cli(tmp_path, path, "good", groups, ["--features", "alcohol,volatile_acidity,citric_acid,sulphates"])
    _check_json(res, groups)
    _report_states(_text(report.read_text(encoding="utf-8")), res)
    _open_in_chromium(report, tmp_path, len(groups))


def test_cli_hinge_class(tmp_path):
    path = tmp_path / "pima.csv"
    load_pima_diabetes().to_csv(path, index=False)
    groups = {"glucose": ["Glucose"]}
    report, res = _cli(tmp_path, path, "Outcome", groups, ["--model-class", "hinge", "--features", "Glucose,BMI,Age"])
    _check_json(res, groups, "hinge")
    assert res["_meta"]["loss"] == "hinge" and res["_meta"]["classifier"]["reference_metrics"]["log_loss"] is None
    text = _text(report.read_text(encoding="utf-8"))
    assert "score threshold 0" in text and "not defined (the hinge class" in text


# ------------------------------------------------------------------ the reference and ε


def test_reference_is_the_class_minimiser_and_eps_rule():
    df = load_pima_diabetes()
    df["train"] = _split_column(len(df), 300)
    res = rashomon.audit(
        df,
        "Outcome",
        {"glucose": ["Glucose"]},
        features=["Glucose", "BMI", "Age"],
        split="train",
        cv=3,
        ambiguity_rows=5,
    )
    rs = res.rashomon_set
    # the reference is the class's loss minimiser on the training rows: refitting the class there gives it back
    from rashomon import LogisticModelClass, RashomonSet

    tr = np.flatnonzero(df["train"].to_numpy())
    X = df[["Glucose", "BMI", "Age"]].to_numpy(float)
    X = (X - X[tr].mean(0)) / X[tr].std(0)
    again = RashomonSet(LogisticModelClass(), 0.0, epsilon_kind="additive").fit(X[tr], df["Outcome"].to_numpy()[tr])
    np.testing.assert_allclose(rs.reference_theta_, again.theta_min_, atol=1e-6)
    assert res.reference["training_loss"] == pytest.approx(again.e_min_, abs=1e-10)
    assert res.epsilon_abs == pytest.approx(res.e_ref + 0.1 * res.cv_loss, rel=1e-12)
    assert res.meta["epsilon_rule"].startswith("held-out loss of the reference + 0.1")


def test_bootstrap_mcr_on_request_states_its_cost():
    df = load_pima_diabetes()
    res = rashomon.audit(
        df,
        "Outcome",
        {"glucose": ["Glucose"]},
        features=["Glucose", "BMI"],
        train_size=200,
        cv=3,
        ambiguity_rows=5,
        bootstrap=3,
        bootstrap_mcr=True,
    )
    g = res.groups["glucose"]
    assert set(g.ci) == {"mr_ref", "mcr_lower", "mcr_upper"} and len(g.bootstrap_draws["mcr_upper"]) == 3
    b = res.meta["classifier"]["bootstrap"]
    assert b["mcr"] and b["seconds_per_resample"] > 0
    assert "s per resample" in _text(_report_classifier.classifier_section(res))


@pytest.mark.parametrize(
    "values, label, positive",
    [
        ([True, False, True], None, True),
        ([0, 1, 1], None, 1),
        ([1, 2, 2], "2", 2),
        (["a", "b", "b"], "b", "b"),
        ([True, False, True], "false", False),
    ],
)
def test_positive_label_matching(values, label, positive):
    from rashomon.audit._target import resolve_target

    y, mc, labels = resolve_target(pd.Series(values), "t", None, label)
    assert mc == "logistic" and labels["positive"] == positive
    np.testing.assert_array_equal(y, [float(v == positive) for v in values])


# ------------------------------------------------------------------ target checks (no fitting)


@pytest.mark.parametrize(
    "target, kw, match",
    [
        (
            "quality",
            dict(model_class="logistic"),
            r"'target' parameter of audit must name a binary column .* 4 distinct values",
        ),
        ("alcohol", dict(model_class="hinge"), r"'target' parameter of audit must name a binary column"),
        ("label", {}, r"'positive_label' parameter of audit must name the level of 'label' coded 1"),
        ("label", dict(positive_label="nope"), r"'positive_label' parameter of audit must be one of the levels"),
        (
            "label",
            dict(model_class="linear"),
            r"'target' parameter of audit must name a numeric column \(or a binary one",
        ),
        (
            "good",
            dict(model_class="kernel", positive_label=1),
            r"'positive_label' parameter of audit applies to a binary",
        ),
        ("good", dict(model_class="forest"), r"'model_class' parameter of audit must be one of"),
    ],
)
def test_target_errors_name_the_argument(target, kw, match):
    wine = load_wine_quality("red").rename(columns=lambda c: c.replace(" ", "_")).head(60)
    wine["good"] = (wine["quality"] >= 6).astype(int)
    wine["label"] = np.where(wine["good"] == 1, "yes", "no")
    with pytest.raises(RashomonInputError, match=match):
        rashomon.audit(wine, target, {"a": ["sulphates"]}, features=["sulphates", "pH"], **kw)


def test_cli_three_levels_is_a_clear_error(tmp_path, capsys):
    df = load_wine_quality("red").rename(columns=lambda c: c.replace(" ", "_")).head(80)
    path = tmp_path / "w.csv"
    df.to_csv(path, index=False)
    assert (
        main(
            [
                "audit",
                "--data",
                str(path),
                "--target",
                "quality",
                "--model-class",
                "logistic",
                "--group",
                "a=sulphates",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "The '--target' option of rashomon audit must name a binary column" in capsys.readouterr().err


# ------------------------------------------------------------------ auditing a model the user already fitted


def _numeric_recid() -> pd.DataFrame:
    raw = _recid_raw()
    return pd.DataFrame(
        {
            "black": (raw["race"] == "African-American").astype(float),
            "male": (raw["sex"] == "Male").astype(float),
            "priors_count": raw["priors_count"].astype(float),
            "felony": (raw["c_charge_degree"] == "F").astype(float),
            "age": raw["age"].astype(float),
            "two_year_recid": raw["two_year_recid"],
        }
    )


def _split_column(n: int, n_train: int = 600) -> np.ndarray:
    train = np.zeros(n, dtype=bool)
    train[np.random.RandomState(1).choice(n, n_train, replace=False)] = True
    return train


def test_hist_gradient_boosting_from_the_cli(tmp_path):
    from sklearn.ensemble import HistGradientBoostingClassifier

    df = _numeric_recid()
    df["train"] = _split_column(len(df))
    feats = ["black", "male", "priors_count", "felony", "age"]
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(
        df.loc[df.train, feats], df.loc[df.train, "two_year_recid"]
    )
    joblib.dump(model, tmp_path / "model.joblib")
    path = tmp_path / "recid.csv"
    df.to_csv(path, index=False)
    groups = {"inadmissible": ["black", "male"]}
    args = [
        "audit",
        "--data",
        str(path),
        "--target",
        "two_year_recid",
        "--group",
        "inadmissible=black,male",
        "--features",
        ",".join(feats),
        "--split",
        "train",
        "--cv",
        "3",
        "--ambiguity-rows",
        "5",
        "--quiet",
        "--estimator",
        str(tmp_path / "model.joblib"),
        "--out",
        str(tmp_path / "o"),
        "--json",
        str(tmp_path / "r.json"),
    ]
    assert main(args) == 0
    res = json.loads((tmp_path / "r.json").read_text())
    held = df[~df.train]
    expected = model_reliance(model, held[feats], held["two_year_recid"], ["black", "male"]).ratio
    assert res["inadmissible"]["model_mr"] == pytest.approx(expected, rel=1e-12)
    assert res["_meta"]["user_model"]["loss"] == "log_loss"
    g = res["inadmissible"]
    assert g["bracketed"] == (g["mcr_lower"] <= g["model_mr"] <= g["mcr_upper"])
    text = _text((tmp_path / "o" / "report.html").read_text(encoding="utf-8"))
    assert "Your model" in text and f"{expected:.4f}" in text and "HistGradientBoostingClassifier" in text
    _check_json(res, groups)


class _Decoded:
    """The pipeline seen through integer codes of its string columns (model_reliance takes numbers only;
    MR does not depend on how a group's values are coded)."""

    _estimator_type = "classifier"

    def __init__(self, model, levels):
        self.model, self.levels, self.classes_ = model, levels, model.classes_

    def predict_proba(self, X):
        X = X.copy()
        for c, lv in self.levels.items():
            X[c] = np.asarray(lv, dtype=object)[X[c].to_numpy().astype(int)]
        return self.model.predict_proba(X)


def test_onehot_pipeline_with_strings_and_bootstrap():
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    df = _recid_raw()
    df["train"] = _split_column(len(df))
    feats = ["race", "sex", "priors_count", "c_charge_degree", "age"]
    pipe = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["race", "sex", "c_charge_degree"]),
            (StandardScaler(), ["priors_count", "age"]),
        ),
        LogisticRegression(max_iter=500),
    ).fit(df.loc[df.train, feats], df.loc[df.train, "two_year_recid"])
    res = rashomon.audit(
        df,
        "two_year_recid",
        {"race_sex": ["race", "sex"]},
        features=feats,
        split="train",
        cv=3,
        ambiguity_rows=5,
        estimator=pipe,
        bootstrap=20,
    )
    held = df[~df.train].reset_index(drop=True)
    levels = {c: sorted(held[c].unique()) for c in ("race", "sex", "c_charge_degree")}
    coded = held[feats].copy()
    for c, lv in levels.items():
        coded[c] = coded[c].map({v: i for i, v in enumerate(lv)}).astype(float)
    expected = model_reliance(
        _Decoded(pipe, levels), coded, held["two_year_recid"], ["race", "sex"], loss="log_loss"
    ).ratio
    g = res.groups["race_sex"]
    assert g.extra["model_mr"] == pytest.approx(expected, rel=1e-12)
    lo, hi = g.extra["model_mr_ci"]
    assert lo <= hi and len(g.extra["model_mr_draws"]) == 20
    assert "mr_ref" in g.ci and "mcr_lower" not in g.ci  # MCR is bootstrapped only on request
    # one resample, brute force: model_reliance on the resampled rows equals the weighted value
    from rashomon.audit._estimator import estimator_model, weighted_mr

    te = np.flatnonzero(~df["train"].to_numpy())
    fm = estimator_model(pipe, df, te, feats, df["two_year_recid"].to_numpy(), df["two_year_recid"].to_numpy(float))
    idx = np.random.RandomState(3).randint(0, len(te), len(te))
    w = np.bincount(idx, minlength=len(te))[None, :]
    again = model_reliance(
        _Decoded(pipe, levels), coded.iloc[idx], held["two_year_recid"].iloc[idx], ["race", "sex"], loss="log_loss"
    ).ratio
    assert weighted_mr(fm, ["race", "sex"], w)[0] == pytest.approx(again, rel=1e-12)
    assert "bracketed" in res.to_frame().columns


def test_model_with_nan_inputs_outside_the_audit_features():
    from sklearn.ensemble import HistGradientBoostingClassifier

    df = _numeric_recid().head(400).copy()
    rng = np.random.RandomState(0)
    df["extra"] = np.where(rng.rand(len(df)) < 0.3, np.nan, rng.normal(size=len(df)))
    df["train"] = _split_column(len(df), 200)
    feats = ["black", "male", "priors_count", "felony", "age"]
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(
        df.loc[df.train, feats + ["extra"]], df.loc[df.train, "two_year_recid"]
    )
    res = rashomon.audit(
        df, "two_year_recid", {"sex": ["male"]}, features=feats, split="train", cv=3, ambiguity_rows=5, estimator=model
    )
    held = df[~df.train].reset_index(drop=True)
    X = held[feats + ["extra"]]
    y = held["two_year_recid"].to_numpy()
    # brute force over all ordered pairs i != j: row j with row i's group value
    p_orig = model.predict_proba(X)[np.arange(len(y)), y]
    n = len(y)
    tot = 0.0
    for v in (0.0, 1.0):
        Xs = X.copy()
        Xs["male"] = v
        lp = -np.log(np.clip(model.predict_proba(Xs)[np.arange(n), y], np.finfo(float).eps, 1))
        k = int((held["male"] == v).sum())
        tot += k * lp.sum() - lp[(held["male"] == v).to_numpy()].sum()
    e_orig = np.mean(-np.log(p_orig))
    assert res.groups["sex"].extra["model_mr"] == pytest.approx(tot / (n * (n - 1)) / e_orig, rel=1e-10)
    assert res.meta["user_model"]["columns"] == feats + ["extra"]


def test_estimator_errors():
    df = _numeric_recid().head(200)
    with pytest.raises(RashomonInputError, match="'estimator' parameter of audit must be a fitted model"):
        rashomon.audit(
            df, "two_year_recid", {"a": ["male"]}, features=["male", "age"], cv=3, ambiguity_rows=5, estimator=object()
        )


def test_regressor_beside_a_regression_class():
    from sklearn.linear_model import Ridge

    wine = load_wine_quality("red").rename(columns=lambda c: c.replace(" ", "_")).head(300).copy()
    wine["train"] = _split_column(len(wine), 120)
    feats = ["alcohol", "sulphates", "pH"]
    model = Ridge(alpha=1.0).fit(wine.loc[wine.train, feats], wine.loc[wine.train, "quality"])
    res = rashomon.audit(
        wine,
        "quality",
        {"alcohol": ["alcohol"]},
        features=feats,
        model_class="linear",
        cv=3,
        split="train",
        estimator=model,
        bootstrap=5,
    )
    held = wine[~wine.train]
    expected = model_reliance(model, held[feats], held["quality"], ["alcohol"]).ratio
    g = res.groups["alcohol"]
    assert g.extra["model_mr"] == pytest.approx(expected, rel=1e-10)
    assert res.meta["user_model"]["loss"] == "squared_error" and res.meta["user_model"]["same_loss_as_class"] is True
    assert len(g.extra["model_mr_draws"]) == 5


@pytest.mark.slow
def test_recidivism_example_runs(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import compas_recidivism_audit as ex

    assert ex.main(["--no-plots", "--ambiguity-rows", "5", "--bootstrap", "3", "--json", str(tmp_path / "r.json")]) == 0
    res = json.loads((tmp_path / "r.json").read_text())
    assert res["_meta"]["n_rows_used"] == 6172 and set(RECID_GROUPS) <= set(res)
    assert all("model_mr" in res[g] for g in RECID_GROUPS)
