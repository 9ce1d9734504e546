"""Nothing lost, nothing run: the audit's outputs never replace an input or each other, a model file is loaded
only after every other input is checked (a pickle runs code), a failing run leaves no folder, and warnings are
written for CLI users (none with --quiet)."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

import rashomon
from rashomon import RashomonInputError
from rashomon.audit import _fit
from rashomon.audit.cli import main as cli_main


@pytest.fixture
def no_fit(monkeypatch):
    """Any fit is a failure: errors must come before any work."""
    import rashomon.audit._audit  # noqa: F401

    def boom(*a, **k):
        raise AssertionError("work started before the input error")

    monkeypatch.setattr(_fit, "_fit_reference", boom)
    monkeypatch.setattr(sys.modules["rashomon.audit._audit_regression"], "_fit_reference", boom)


def _table(n=80, seed=0):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n)})
    df["y"] = 2 * df["a"] - df["b"] + 0.3 * rng.normal(size=n)
    return df


class _Payload:
    """A pickle whose loading writes a marker file (as a malicious one would run any code)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


@pytest.fixture
def files(tmp_path):
    data = tmp_path / "t.csv"
    _table().to_csv(data, index=False)
    marker = tmp_path / "MARKER"
    est = tmp_path / "model.joblib"
    est.write_bytes(pickle.dumps(_Payload(marker)))
    return tmp_path, data, est, marker


def _run(args, capsys):
    code = cli_main(["audit", "--quiet", *map(str, args)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _snapshot(folder):
    return {p: p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}


# ---------------------------------------------------------------- every output equal to an input or another output
def _collisions(d, data, est):
    base = ["--target", "y", "--group", "g=a"]
    (d / "o").mkdir(exist_ok=True)
    (d / "dual").mkdir(exist_ok=True)
    os.symlink(data, d / "link.csv")
    os.link(data, d / "hard.csv")
    dual_data = d / "dual" / "report.html"  # a data file that the report would replace
    dual_data.write_bytes(data.read_bytes())
    fig_data = d / "o" / "summary.png"  # a data file that a figure would replace
    fig_data.write_bytes(data.read_bytes())
    est_html = d / "m.html"  # an estimator file that a named report would replace
    est_html.write_bytes(est.read_bytes())
    return {
        "json is the data": (["--data", data, "--json", data, "--no-plots"], "'--json'"),
        "json is the data (link)": (["--data", data, "--json", d / "link.csv", "--no-plots"], "'--json'"),
        "json is the data (hard link)": (["--data", data, "--json", d / "hard.csv", "--no-plots"], "'--json'"),
        "json is the data (..)": (["--data", data, "--json", d / "o" / ".." / "t.csv", "--no-plots"], "'--json'"),
        "json is the estimator": (["--data", data, "--estimator", est, "--json", est, "--no-plots"], "'--json'"),
        "report is the data": (["--data", dual_data, "--out", d / "dual"], "'--out/--report-name'"),
        "report name is the data": (
            ["--data", dual_data, "--out", d / "dual", "--report-name", "report.html"],
            "'--out/--report-name'",
        ),
        "report is the estimator": (
            ["--data", data, "--estimator", est_html, "--out", d, "--report-name", "m.html"],
            "'--out/--report-name'",
        ),
        "figure is the data": (["--data", fig_data, "--out", d / "o"], "'--out'"),
        "json is the report": (["--data", data, "--out", d / "o", "--json", d / "o" / "report.html"], "'--json'"),
        "json is a figure": (["--data", data, "--out", d / "o", "--json", d / "o" / "envelope_g.svg"], "'--out'"),
        "json is the out folder": (["--data", data, "--out", d / "new", "--json", d / "new"], "'--json'"),
        "json in a named report's figures": (
            ["--data", data, "--out", d / "o", "--report-name", "r.html", "--json", d / "o" / "r_summary.png"],
            "'--out'",
        ),
    }, base


def test_every_output_equal_to_an_input_or_another_output_is_refused_before_work(files, capsys, no_fit):
    d, data, est, marker = files
    cases, base = _collisions(d, data, est)
    before = _snapshot(d)
    for name, (args, pattern) in cases.items():
        code, out, err = _run([*base, *args], capsys)
        assert code == 2, (name, err)
        assert err.startswith("rashomon audit: error: ") and pattern in err and "Traceback" not in err, (name, err)
        assert not marker.exists(), name
    assert _snapshot(d) == before  # no input rewritten, nothing added
    assert not (d / "new").exists()


def test_parquet_folder_is_not_written_into(tmp_path, capsys, no_fit):
    folder = tmp_path / "table"
    folder.mkdir()
    (folder / "part.csv").write_text("a,y\n1,2\n")
    code, _, err = _run(["--data", folder, "--target", "y", "--group", "g=a", "--json", folder / "r.json"], capsys)
    assert code == 2 and "inside the --data folder" in err
    code, _, err = _run(["--data", folder, "--target", "y", "--group", "g=a", "--out", folder / "rep"], capsys)
    assert code == 2 and "'--out" in err and not (folder / "rep").exists()


def test_distinct_outputs_are_all_written(tmp_path, capsys):
    data = tmp_path / "t.csv"
    _table().to_csv(data, index=False)
    args = ["--data", data, "--target", "y", "--group", "g=a", "--model-class", "linear", "--cv", "3"]
    args += ["--out", tmp_path / "o", "--json", tmp_path / "o" / "results.json"]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == sorted(
        ["envelope_g.png", "envelope_g.svg", "report.html", "results.json", "summary.png", "summary.svg"]
    )


# ---------------------------------------------------------------- a malicious pickle is never loaded early
def _bad_args(d, data):
    return {
        "missing data": ["--data", d / "nope.csv"],
        "bad epsilon": ["--data", data, "--epsilon", "-1"],
        "bad seed": ["--data", data, "--seed", "-3"],
        "unknown group column": ["--data", data, "--group", "h=zz"],
        "unknown target": ["--data", data, "--target", "zz"],
        "bad cv": ["--data", data, "--cv", "1"],
        "bad train size": ["--data", data, "--train-size", "2"],
        "unknown sensitive column": ["--data", data, "--sensitive", "zz"],
        "bad report name": ["--data", data, "--report-name", "r.txt"],
        "unwritable out": ["--data", data, "--out", data / "sub"],
        "json over the data": ["--data", data, "--json", data],
        "classifier option on a regression target": ["--data", data, "--model-class", "logistic"],
    }


def test_malicious_pickle_never_loaded_when_another_argument_is_invalid(files, capsys, no_fit):
    d, data, est, marker = files
    for name, args in _bad_args(d, data).items():
        base = {"--target": "y", "--out": d / "o"}
        pairs = dict(zip(args[::2], args[1::2]))
        argv = ["--group", "g=a", "--estimator", est]
        for k, v in {**base, **pairs}.items():
            argv += [k, v]
        code, _, err = _run(argv, capsys)
        assert code == 2, (name, err)
        assert not marker.exists(), f"{name}: the pickle ran before the error: {err}"
    # the same file with valid arguments is loaded (so it is a working payload), after every check, and
    # refused for not being a model
    code, _, err = _run(["--data", data, "--target", "y", "--group", "g=a", "--estimator", est, "--no-plots"], capsys)
    assert code == 2 and marker.exists() and "'--estimator'" in err and "fitted model" in err


def test_python_api_loads_an_estimator_path_last(files, no_fit):
    d, data, est, marker = files
    with pytest.raises(RashomonInputError, match="'epsilon'"):
        rashomon.audit(data, "y", {"g": ["a"]}, estimator=est, epsilon=-1.0, model_class="linear")
    with pytest.raises(RashomonInputError, match="'sensitive'"):
        rashomon.audit(data, "y", {"g": ["a"]}, estimator=str(est), sensitive="zz", model_class="linear")
    assert not marker.exists()
    with pytest.raises(RashomonInputError, match="'estimator'.*no such file"):
        rashomon.audit(data, "y", {"g": ["a"]}, estimator=d / "none.joblib", model_class="linear")


def test_estimator_file_gives_the_same_answer_as_the_object(tmp_path):
    import joblib

    df = _table(120)
    model = LinearRegression().fit(df[["a", "b", "c"]], df["y"])
    joblib.dump(model, tmp_path / "m.joblib")
    kw = dict(model_class="linear", cv=3, features=["a", "b", "c"])
    a = rashomon.audit(df, "y", {"g": ["a"]}, estimator=model, **kw)
    b = rashomon.audit(df, "y", {"g": ["a"]}, estimator=tmp_path / "m.joblib", **kw)
    assert a.groups["g"].extra["model_mr"] == b.groups["g"].extra["model_mr"]


# ---------------------------------------------------------------- skops: a format that runs no code
def test_skops_file_loaded_with_its_trusted_types(tmp_path, capsys):
    sio = pytest.importorskip("skops.io")
    import datetime

    df = _table(120)
    model = LinearRegression().fit(df[["a", "b", "c"]], df["y"])
    sio.dump(model, tmp_path / "m.skops")
    kw = dict(model_class="linear", cv=3, features=["a", "b", "c"])
    res = rashomon.audit(df, "y", {"g": ["a"]}, estimator=tmp_path / "m.skops", **kw)
    ref = rashomon.audit(df, "y", {"g": ["a"]}, estimator=model, **kw)
    assert res.groups["g"].extra["model_mr"] == ref.groups["g"].extra["model_mr"]
    model.fitted_on_ = datetime.date(2024, 1, 1)  # a type outside scikit-learn and NumPy
    sio.dump(model, tmp_path / "u.skops")
    untrusted = sio.get_untrusted_types(file=tmp_path / "u.skops")
    assert any(not t.startswith(("sklearn.", "numpy.")) for t in untrusted)
    with pytest.raises(RashomonInputError, match=r"'estimator'.*not trusted.*datetime.date.*trusted_types"):
        rashomon.audit(df, "y", {"g": ["a"]}, estimator=tmp_path / "u.skops", **kw)
    res = rashomon.audit(df, "y", {"g": ["a"]}, estimator=tmp_path / "u.skops", trusted_types=untrusted, **kw)
    assert res.groups["g"].extra["model_mr"] == ref.groups["g"].extra["model_mr"]
    df.to_csv(tmp_path / "t.csv", index=False)
    args = ["--data", tmp_path / "t.csv", "--target", "y", "--group", "g=a", "--features", "a,b,c"]
    args += ["--model-class", "linear", "--cv", "3", "--no-plots", "--estimator", tmp_path / "u.skops"]
    code, _, err = _run(args, capsys)
    assert code == 2 and "not trusted" in err and "--trust-type" in err
    code, _, err = _run([*args, *sum((["--trust-type", t] for t in untrusted), [])], capsys)
    assert code == 0, err
    (tmp_path / "bad.skops").write_bytes(b"not a zip")
    with pytest.raises(RashomonInputError, match=r"'estimator'.*\.skops file written by skops"):
        rashomon.audit(df, "y", {"g": ["a"]}, estimator=tmp_path / "bad.skops", **kw)


# ---------------------------------------------------------------- no folder left by a failing run
def test_failing_run_leaves_no_folder(tmp_path, capsys, monkeypatch, no_fit):
    monkeypatch.chdir(tmp_path)
    _table().to_csv("t.csv", index=False)
    code, _, err = _run(["--data", "t.csv", "--target", "zz", "--group", "g=a"], capsys)
    assert code == 2 and not Path("rashomon-audit").exists()
    code, _, err = _run(
        ["--data", "t.csv", "--target", "zz", "--group", "g=a", "--out", "a/b/c", "--json", "j/r.json"], capsys
    )
    assert code == 2 and not Path("a").exists() and not Path("j").exists()
    assert sorted(os.listdir(".")) == ["t.csv"]


def test_failed_write_removes_the_folders_it_created(tmp_path, capsys, monkeypatch):
    from rashomon.audit import _report

    monkeypatch.chdir(tmp_path)
    _table().to_csv("t.csv", index=False)

    def full_disk(result, out_dir, prefix=""):
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_report, "write_figures", full_disk)
    args = ["--data", "t.csv", "--target", "y", "--group", "g=a", "--model-class", "linear", "--cv", "3"]
    code, out, err = _run([*args, "--out", "x/y"], capsys)
    assert code == 1 and "No space left" in err and "MCR+" in out
    assert sorted(os.listdir(".")) == ["t.csv"]


# ---------------------------------------------------------------- warnings for CLI users; --quiet is quiet
def _cli_process(tmp_path, *extra):
    data = tmp_path / "t.csv"
    _table().to_csv(data, index=False)
    cmd = [sys.executable, "-m", "rashomon", "audit", "--data", str(data), "--target", "y", "--group", "g=a"]
    cmd += ["--model-class", "linear", "--cv", "3", "--no-plots", "--epsilon", "10", *extra]
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": ""}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def test_warnings_are_one_line_for_cli_users_and_quiet_silences_them(tmp_path):
    proc = _cli_process(tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "warning" in ln.lower()]
    assert lines and lines[0].startswith("rashomon audit: warning: The '--epsilon' option of rashomon audit is 10"), (
        lines
    )
    assert ".py:" not in proc.stderr and "check_relative_epsilon(" not in proc.stderr
    quiet = _cli_process(tmp_path, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


# ---------------------------------------------------------------- CSV dialects
def test_decimal_comma_numbers_read_as_numbers_and_text_columns_listed(tmp_path, capsys):
    df = _table(60)
    df["color"] = np.where(np.arange(60) % 3, "red", "blue")
    ref = tmp_path / "dot.csv"
    df.to_csv(ref, index=False, sep=";")
    comma = tmp_path / "comma.csv"
    df.to_csv(comma, index=False, sep=";", decimal=",")
    assert "," in comma.read_text().splitlines()[1]
    kw = dict(model_class="linear", cv=3)
    a = rashomon.audit(comma, "y", {"g": ["a", "color"]}, **kw)
    b = rashomon.audit(ref, "y", {"g": ["a", "color"]}, **kw)  # independent: the same numbers with a dot
    assert a.groups["g"].mcr_upper == pytest.approx(b.groups["g"].mcr_upper, rel=1e-9)
    assert a.meta["encoding"] == {"color": ["blue", "red"]}
    assert sum("decimal comma" in n for n in a.meta["notes"]) == 4  # a, b, c, y
    code, out, err = _run(["--data", comma, "--target", "y", "--group", "g=a,color", "--no-plots", "--cv", "3",
                           "--model-class", "linear"], capsys)  # fmt: skip
    assert code == 0 and "decimal comma" in err
    code = cli_main(["audit", "--data", str(comma), "--target", "y", "--group", "g=a,color", "--no-plots", "--cv",
                     "3", "--model-class", "linear"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0 and "text column 'color': one-hot encoded, 2 levels ('blue', 'red')" in err
    mixed = tmp_path / "mixed.csv"  # a text column with commas that are not all numbers stays text
    mixed.write_text("a;t;y\n" + "".join(f"{i},5;x,{i % 2}y;{i}\n" for i in range(30)))
    res = rashomon.audit(mixed, "y", {"g": ["a", "t"]}, **kw)
    assert res.meta["encoding"] == {"t": ["x,0y", "x,1y"]}
