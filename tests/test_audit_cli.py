"""Regression tests for the audit's input handling, CLI, reprs, progress, metadata and show_versions.

Fast: the linear class, small training parts, cv=3; one kernel run on a small table.
"""

import io
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rashomon
from rashomon import RashomonInputError
from rashomon.audit import _fit
from rashomon.audit.cli import main as cli_main
from rashomon.datasets import load_bike_sharing, load_concrete, load_pima_diabetes, load_wine_quality

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from compas_audit import GROUPS as COMPAS_GROUPS  # noqa: E402
from compas_audit import compas_frame  # noqa: E402

FAST = dict(model_class="linear", cv=3, progress=False)
META_KEYS = {
    "loss",
    "epsilon_rule",
    "epsilon_value",
    "hyperparameters",
    "encoding",
    "standardised",
    "n_rows_input",
    "n_rows_used",
    "n_rows_dropped",
    "missing_by_column",
    "train_size",
    "package_version",
    "date",
    "input_sha256",
    "input_name",
    "ci_method",
    "n_bootstrap",
    "null_model",  # e_min, e_ref, epsilon_abs, e_null and the share of the explained loss the set keeps
}


@pytest.fixture
def no_fit(monkeypatch):
    """Any fit is a failure: errors must come before any computing."""
    import rashomon.audit._audit  # noqa: F401  (loaded lazily otherwise; before patching _fit, which it imports from)

    def boom(*a, **k):
        raise AssertionError("computing started before the input error")

    monkeypatch.setattr(_fit, "_fit_reference", boom)
    monkeypatch.setattr(sys.modules["rashomon.audit._audit_regression"], "_fit_reference", boom)


def _table(n=120, seed=0):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "c": rng.normal(size=n),
            "color": rng.choice(["red", "green", "blue"], size=n),
        }
    )
    df["y"] = 2 * df["a"] - df["b"] + (df["color"] == "red") + 0.3 * rng.normal(size=n)
    return df


def _cli(args, capsys):
    code = cli_main(["audit", *map(str, args)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


# ---------------------------------------------------------------- missing values
def test_missing_values_error_counts_per_column_then_drop(no_fit):
    df = load_bike_sharing("day")
    df.loc[::5, "hum"] = np.nan
    df.loc[1::7, "temp"] = np.nan
    with pytest.raises(
        RashomonInputError,
        match=r"'data' parameter of audit.*no missing.*drop_missing=True.*231 of 731 rows.*'temp': 105, 'hum': 147",
    ):
        rashomon.audit(df, "cnt", {"weather": ["temp", "hum"]}, train_size=100, **FAST)


def test_drop_missing_records_counts():
    df = load_bike_sharing("day")
    df.loc[::5, "hum"] = np.nan
    res = rashomon.audit(
        df, "cnt", {"weather": ["temp", "hum"], "season": ["season"]}, train_size=100, drop_missing=True, **FAST
    )
    m = res.meta
    assert m["n_rows_input"] == 731 and m["n_rows_dropped"] == 147 and m["n_rows_used"] == 584
    assert m["missing_by_column"] == {"hum": 147}
    assert res.n_train + res.n_test == 584


# ---------------------------------------------------------------- categorical columns
def test_categorical_one_hot_all_levels_and_group_expands():
    res = rashomon.audit(_table(), "y", {"colour": ["color"], "num": ["a", "b"]}, train_size=60, **FAST)
    assert res.meta["encoding"] == {"color": ["blue", "green", "red"]}
    assert res.groups["colour"].features == ("color=blue", "color=green", "color=red")
    assert "color=red" not in res.meta["standardised"] and set(res.meta["standardised"]) == {"a", "b"}
    assert res.groups["colour"].mcr_upper > 1.0


def test_too_many_levels_is_an_error(no_fit):
    df = load_bike_sharing("day")
    with pytest.raises(RashomonInputError, match=r"'features'.*at most 50 levels.*'dteday' with 731 levels"):
        rashomon.audit(df, "cnt", {"g": ["dteday", "temp"]}, **FAST)


# ---------------------------------------------------------------- target in a group / features
@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(groups={"g": ["a", "y"]}), r"'groups'.*must not contain the target.*'y' in group 'g'"),
        (dict(groups={"g": ["a"]}, features=["a", "y"]), r"'features'.*must not contain the target"),
    ],
)
def test_target_among_inputs_rejected(kw, match, no_fit):
    with pytest.raises(RashomonInputError, match=match):
        rashomon.audit(_table(), "y", **kw, **FAST)


# ---------------------------------------------------------------- separators
@pytest.fixture(scope="module")
def wine_csv(tmp_path_factory):
    d = tmp_path_factory.mktemp("wine")
    paths = {}
    for color in ("red", "white"):
        p = d / f"winequality-{color}.csv"
        load_wine_quality(color).to_csv(p, sep=";", index=False)
        paths[color] = p
    return paths


@pytest.mark.parametrize("color", ["red", "white"])
def test_semicolon_csv_sniffed(wine_csv, color, tmp_path, capsys):
    code, out, err = _cli(
        [
            "--data",
            wine_csv[color],
            "--target",
            "quality",
            "--group",
            "alcohol=alcohol",
            "--group",
            "acid=fixed acidity,volatile acidity",
            "--model-class",
            "linear",
            "--cv",
            "3",
            "--train-size",
            "150",
            "--no-plots",
            "--quiet",
            "--json",
            tmp_path / "w.json",
        ],
        capsys,
    )
    assert code == 0, err
    assert "alcohol" in out and err == ""


def test_wrong_sep_names_separator(wine_csv, capsys, no_fit):
    code, _, err = _cli(
        ["--data", wine_csv["red"], "--sep", ",", "--target", "quality", "--group", "g=alcohol", "--no-plots"], capsys
    )
    assert code == 2 and "Traceback" not in err
    assert re.search(
        r"error: .*'--target' option.*unknown column 'quality'.*single column with separator ','.*--sep", err
    )


def test_api_sep_none_and_explicit(wine_csv):
    res = rashomon.audit(wine_csv["red"], "quality", {"alcohol": ["alcohol"]}, sep=None, train_size=0.1, **FAST)
    res2 = rashomon.audit(str(wine_csv["red"]), "quality", {"alcohol": ["alcohol"]}, sep=";", train_size=0.1, **FAST)
    assert res.groups["alcohol"].mcr_upper == res2.groups["alcohol"].mcr_upper
    assert res.meta["input_name"] == "winequality-red.csv" and res.meta["train_size"] == 160
    import hashlib

    assert res.meta["input_sha256"] == hashlib.sha256(wine_csv["red"].read_bytes()).hexdigest()


# ---------------------------------------------------------------- group names
@pytest.mark.parametrize(
    "groups,match",
    [
        ({"a/b": ["a"]}, r"'groups'.*letters, digits.*Got 'a/b'"),
        ({"<x>": ["a"]}, r"Got '<x>'"),
        ({"": ["a"]}, r"Got ''"),
        ({"a b": ["a"], "a_b": ["b"]}, r"distinct group names.*'a_b' and 'a b'"),
        ({"A": ["a"], "a": ["b"]}, r"distinct group names"),
    ],
)
def test_group_names_validated_before_computing(groups, match, no_fit):
    with pytest.raises(RashomonInputError, match=match):
        rashomon.audit(_table(), "y", groups, **FAST)


def test_cli_duplicate_group_names(tmp_path, capsys, no_fit):
    p = tmp_path / "t.csv"
    _table().to_csv(p, index=False)
    code, _, err = _cli(["--data", p, "--target", "y", "--group", "g=a", "--group", "g=b", "--no-plots"], capsys)
    assert code == 2 and re.search(
        r"error: The '--group' parameter of rashomon audit must have distinct group names. Got 'g' twice", err
    )


def test_group_name_with_space_and_out_folder_with_space(tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    p = tmp_path / "my table.csv"
    _table().to_csv(p, index=False)
    out = tmp_path / "my report <1>"
    code, out_txt, err = _cli(
        [
            "--data",
            p,
            "--target",
            "y",
            "--group",
            "my group=a,b",
            "--model-class",
            "linear",
            "--cv",
            "3",
            "--train-size",
            "0.5",
            "--out",
            out,
            "--quiet",
        ],
        capsys,
    )
    assert code == 0, err
    assert (out / "report.html").exists()
    from rashomon.audit._checks import group_slug

    assert group_slug("my group") == "my_group"


# ---------------------------------------------------------------- train size
@pytest.mark.parametrize("ts,n_train", [(0.25, 30), (30, 30), (30.0, 30), (None, 60)])
def test_train_size_count_or_fraction(ts, n_train):
    res = rashomon.audit(_table(), "y", {"g": ["a"]}, train_size=ts, **FAST)
    assert res.n_train == n_train and res.meta["train_size"] == n_train


@pytest.mark.parametrize("ts", [0, 1.0, 1.5, 5, 115, -0.5, True, "half", float("nan")])
def test_train_size_invalid(ts, no_fit):
    with pytest.raises(RashomonInputError, match=r"'train_size' parameter of audit"):
        rashomon.audit(_table(), "y", {"g": ["a"]}, train_size=ts, **FAST)


def test_cli_train_size_not_a_number(tmp_path, capsys, no_fit):
    p = tmp_path / "t.csv"
    _table().to_csv(p, index=False)
    code, _, err = _cli(["--data", p, "--target", "y", "--group", "g=a", "--train-size", "half", "--no-plots"], capsys)
    assert code == 2 and "'--train-size'" in err and "Traceback" not in err


# ---------------------------------------------------------------- output folder
def test_unwritable_out_detected_before_computing(tmp_path, capsys, no_fit):
    p = tmp_path / "t.csv"
    _table().to_csv(p, index=False)
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    code, _, err = _cli(["--data", p, "--target", "y", "--group", "g=a", "--out", blocker / "sub"], capsys)
    assert code == 2 and re.search(r"error: The '--out' parameter of rashomon audit must be a writable folder", err)
    code, _, err = _cli(
        ["--data", p, "--target", "y", "--group", "g=a", "--no-plots", "--json", blocker / "r.json"], capsys
    )
    assert code == 2 and "'--json'" in err


# ---------------------------------------------------------------- bad values and files
def test_bad_values_and_files(tmp_path, capsys, no_fit):
    p = tmp_path / "t.csv"
    _table().to_csv(p, index=False)
    code, _, err = _cli(["--data", p, "--target", "y", "--group", "g=a", "--epsilon", "nan", "--no-plots"], capsys)
    assert code == 2 and re.search(r"'--epsilon' option.*finite.*Got nan", err)
    df = _table()
    df.loc[3, "y"] = np.inf
    with pytest.raises(RashomonInputError, match=r"'target'.*finite.*1 infinite"):
        rashomon.audit(df, "y", {"g": ["a"]}, **FAST)
    with pytest.raises(RashomonInputError, match=r"'epsilon'.*> 0"):
        rashomon.audit(_table(), "y", {"g": ["a"]}, epsilon=0.0, epsilon_kind="absolute", **FAST)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    code, _, err = _cli(["--data", empty, "--target", "y", "--group", "g=a", "--no-plots"], capsys)
    assert code == 2 and "empty file 'empty.csv'" in err
    header_only = tmp_path / "h.csv"
    header_only.write_text("a,y\n")
    with pytest.raises(RashomonInputError, match=r"'data'.*rows"):
        rashomon.audit(header_only, "y", {"g": ["a"]}, **FAST)
    binary = tmp_path / "b.csv"
    binary.write_bytes(bytes(range(256)) * 8)
    code, _, err = _cli(["--data", binary, "--target", "y", "--group", "g=a", "--no-plots"], capsys)
    assert code == 2 and "looks binary" in err
    code, _, err = _cli(["--data", tmp_path / "nope.csv", "--target", "y", "--group", "g=a", "--no-plots"], capsys)
    assert code == 2 and "no such file" in err
    for e in (code, err):
        assert "Traceback" not in str(e)


# ---------------------------------------------------------------- results: plot, reprs, meta
@pytest.fixture(scope="module")
def small_result():
    return rashomon.audit(
        _table(), "y", {"colour": ["color"], "num": ["a", "b"]}, train_size=60, bootstrap=4, n_jobs=1, **FAST
    )


def test_plot_unknown_group(small_result):
    with pytest.raises(
        RashomonInputError,
        match=r"'group' parameter of AuditResult.plot must be one of \['colour', 'num'\]. Got 'nope'",
    ):
        small_result.plot("nope")


def test_short_reprs(small_result):
    g = small_result.groups["num"]
    rs = small_result.rashomon_set
    env = rs.envelope([0], epsilons=[0.01, 0.05, 0.1], epsilon_kind="relative", tol=1e-4)
    objs = [small_result, g, g.mcr, env]
    for obj in objs:
        r = repr(obj)
        assert len(r) < 300, (type(obj).__name__, len(r))
    assert f"{g.mcr_upper:.4g}" in repr(g) and "MCR [" in repr(small_result) and "upper=" in repr(g.mcr)


def test_meta_keys(small_result):
    m = small_result.meta
    assert set(m) == META_KEYS
    assert m["loss"] == "squared error" and m["epsilon_value"] == 0.1
    assert m["epsilon_rule"] == "held-out loss of the reference + 0.1 × its 3-fold CV loss"
    assert m["ci_method"] == "percentile bootstrap over held-out rows" and m["n_bootstrap"] == 4
    assert m["input_name"] == "DataFrame" and len(m["input_sha256"]) == 64
    assert m["package_version"] == rashomon.__version__ and re.match(r"\d{4}-\d\d-\d\dT", m["date"])
    assert m["hyperparameters"]["kernel"] == "linear" and m["hyperparameters"]["norm_bound"] > 0
    import json

    json.dumps(m)  # serialisable


# ---------------------------------------------------------------- progress
def test_progress_log_lines_and_quiet(capsys):
    rashomon.audit(
        _table(), "y", {"g": ["a"]}, model_class="linear", cv=3, train_size=60, bootstrap=3, n_jobs=1, progress=True
    )
    err = capsys.readouterr().err
    assert "[rashomon] fitting reference" in err and "[rashomon] MCR search: g" in err and "[rashomon] bootstrap" in err
    rashomon.audit(_table(), "y", {"g": ["a"]}, train_size=60, **FAST)
    assert capsys.readouterr().err == ""


def test_progress_bar_counts_resamples(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    fake = Tty()
    monkeypatch.setattr(sys, "stderr", fake)
    rashomon.audit(
        _table(), "y", {"g": ["a"]}, model_class="linear", cv=3, train_size=60, bootstrap=20, n_jobs=1, progress=True
    )
    text = fake.getvalue()
    assert "bootstrap resamples" in text and "20/20" in text


# ---------------------------------------------------------------- show_versions
def test_show_versions(capsys, monkeypatch):
    info = rashomon.show_versions()
    out = capsys.readouterr().out
    for k in (
        "rashomon",
        "distribution",
        "path",
        "python",
        "numpy",
        "scipy",
        "scikit-learn",
        "cvxpy",
        "osqp",
        "pandas",
        "matplotlib",
        "rashomon-py",
    ):
        assert k in info and k in out
    assert info["rashomon"] == rashomon.__version__
    assert info["path"] == str(Path(rashomon.__file__).parent)
    assert info["rashomon-py"] == "not installed"
    from rashomon.utils import _versions

    real = _versions._dist_version
    monkeypatch.setattr(_versions, "_dist_version", lambda name: "9.9" if name == "rashomon-py" else real(name))
    with pytest.warns(UserWarning, match="rashomon-py"):
        info = rashomon.show_versions(file=io.StringIO())
    assert info["rashomon-py"] == "9.9"


# ---------------------------------------------------------------- bundled tables
def test_bundled_tables_complete(tmp_path):
    cases = [
        (compas_frame(), "v_decile_score", COMPAS_GROUPS),
        (
            load_bike_sharing("day"),
            "cnt",
            {"weather": ["temp", "hum", "windspeed"], "calendar": ["season", "yr", "mnth"]},
        ),
        (load_bike_sharing("hour"), "cnt", {"weather": ["temp", "hum"], "hour": ["hr"]}),
        (load_pima_diabetes(), "Outcome", {"glucose": ["Glucose"], "body": ["BMI", "Age"]}),
        (load_concrete(), "strength", {"cement": ["cement"], "age": ["age"]}),
    ]
    for df, target, groups in cases:
        res = rashomon.audit(df, target, groups, train_size=100, **FAST)
        for g in res.groups.values():
            assert np.isfinite([g.mcr_lower, g.mr_ref, g.mcr_upper]).all()
            assert g.mcr_lower - 1e-6 <= g.mr_ref <= g.mcr_upper + 1e-6


def test_kernel_class_on_concrete(tmp_path, capsys):
    p = tmp_path / "concrete.csv"
    load_concrete().sample(n=300, random_state=0).to_csv(p, index=False)
    code, out, err = _cli(
        [
            "--data",
            p,
            "--target",
            "strength",
            "--group",
            "binder=cement,water",
            "--cv",
            "3",
            "--train-size",
            "80",
            "--no-plots",
            "--quiet",
        ],
        capsys,
    )
    assert code == 0, err
    assert "binder" in out


# ---------------------------------------------------------------- repeated header names
def _dup_csv(path, shift=0.0, n=60):
    """A CSV whose header repeats 'a' (columns 1 and 3): identical copies, or the second shifted."""
    df = _table(n)
    body = "".join(f"{a!r},{b!r},{a + shift!r},{y!r}\n" for a, b, y in zip(df["a"], df["b"], df["y"]))
    path.write_text("a,b,a,y\n" + body)
    return path


def test_repeated_header_identical_copies_merged_with_note(tmp_path, capsys):
    p = _dup_csv(tmp_path / "dup.csv")
    res = rashomon.audit(p, "y", {"g": ["a"], "h": ["b"]}, train_size=30, **FAST)
    ref = rashomon.audit(_table(60)[["a", "b", "y"]], "y", {"g": ["a"], "h": ["b"]}, train_size=30, **FAST)
    assert res.features == ("a", "b")  # never the invented 'a.1'
    assert res.groups["g"].mcr_upper == ref.groups["g"].mcr_upper and res.groups["g"].mr_ref == ref.groups["g"].mr_ref
    assert res.meta["notes"] == [
        "The header repeats 'a': 2 columns named 'a' (columns 1, 3); the copies are identical and were merged into one."
    ]
    assert "notes" not in ref.meta
    code, _, err = _cli(
        [
            "--data",
            p,
            "--target",
            "y",
            "--group",
            "g=a",
            "--model-class",
            "linear",
            "--cv",
            "3",
            "--train-size",
            "30",
            "--no-plots",
            "--quiet",
        ],
        capsys,
    )
    assert code == 0 and "note: The header repeats 'a'" in err


@pytest.mark.parametrize("groups,role", [({"g": ["a"]}, "a column of group 'g'"), ({"g": ["b"]}, None)])
def test_repeated_header_differing_copies(tmp_path, groups, role, capsys):
    p = _dup_csv(tmp_path / "dup.csv", shift=1.0)
    if role is not None:  # used by the audit: an error before any computing
        with pytest.raises(
            RashomonInputError,
            match=rf"'data' parameter of audit must not repeat the name of a column "
            rf"the audit uses \('a' is {role}\) with different values. Got 2 "
            rf"columns named 'a' \(columns 1, 3\) that differ in 60 of 60 rows",
        ):
            rashomon.audit(p, "y", groups, **FAST)
        code, _, err = _cli(["--data", p, "--target", "a", "--group", "g=b", "--no-plots"], capsys)
        assert code == 2 and "('a' is the target)" in err and "Traceback" not in err
    else:  # not used: left out, with a note
        res = rashomon.audit(p, "y", groups, train_size=30, **FAST)
        assert res.features == ("b",) and "differ in 60 rows and the audit does not use them" in res.meta["notes"][0]


def test_repeated_dataframe_columns_handled_alike(no_fit):
    df = _table(60)
    same = pd.concat([df[["a", "b"]], df[["a", "y"]]], axis=1)
    assert list(same.columns) == ["a", "b", "a", "y"]
    differ = same.copy()
    differ.iloc[5, 2] += 1.0
    with pytest.raises(RashomonInputError, match=r"\('a' is a feature\).*differ in 1 of 60 rows"):
        rashomon.audit(differ, "y", {"g": ["b"]}, features=["a", "b"], **FAST)
    from rashomon.audit._read_csv import merge_duplicate_columns

    merged, notes = merge_duplicate_columns(same, {"a": "a feature"})
    assert list(merged.columns) == ["a", "b", "y"] and "identical" in notes[0]
    pd.testing.assert_frame_equal(merged, df[["a", "b", "y"]])
    # out of core the copies are not compared: a repeated name the audit uses is an error (column checks only)
    from rashomon.audit._checks import check_columns

    with pytest.raises(
        RashomonInputError, match=r"must not repeat the names of the columns the audit uses. Got \['a'\]"
    ):
        check_columns(same, "y", {"g": ["a"]}, None, "audit")
    assert check_columns(same, "y", {"g": ["b"]}, None, "audit") == ({"g": ["b"]}, ["b"])


def _shared_data(name):
    for d in (ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data"):
        if (d / name).is_file():
            return d / name
    pytest.skip(f"the raw file {name} is not in ../shared/data or ../../shared/data")


def test_raw_compas_header_repeats_priors_count_and_decile_score(tmp_path, capsys):
    """ProPublica's raw file repeats priors_count and decile_score (identical copies): it must still audit."""
    raw = _shared_data("compas-scores-two-years.csv")
    with open(raw, encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(301)]  # the header as written and 300 rows
    p = tmp_path / "compas-head.csv"
    p.write_text("".join(lines), encoding="utf-8")
    header = lines[0].rstrip("\n").split(",")
    assert header.count("priors_count") == 2 and header.count("decile_score") == 2
    groups = {"inadmissible": ["race", "sex"], "admissible": ["priors_count", "age"]}
    res = rashomon.audit(p, "decile_score", groups, train_size=150, **FAST)
    assert [n.split(":")[0] for n in res.meta["notes"]] == [
        "The header repeats 'decile_score'",
        "The header repeats 'priors_count'",
    ]
    assert all("identical and were merged" in n for n in res.meta["notes"])
    # the same numbers as the table without the second copies
    df = pd.read_csv(p).drop(columns=["priors_count.1", "decile_score.1"])
    ref = rashomon.audit(df, "decile_score", groups, train_size=150, **FAST)
    for g in groups:
        assert res.groups[g].mcr_lower == ref.groups[g].mcr_lower and res.groups[g].mcr_upper == ref.groups[g].mcr_upper
    code, _, err = _cli(
        [
            "--data",
            p,
            "--target",
            "decile_score",
            "--group",
            "inadmissible=race,sex",
            "--group",
            "admissible=priors_count,age",
            "--model-class",
            "linear",
            "--cv",
            "3",
            "--train-size",
            "150",
            "--quiet",
            "--out",
            tmp_path / "rep",
        ],
        capsys,
    )
    assert code == 0, err
    assert err.count("note: The header repeats") == 2
    assert "The header repeats &#x27;priors_count&#x27;" in (tmp_path / "rep" / "report.html").read_text()
