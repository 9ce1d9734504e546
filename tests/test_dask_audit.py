"""audit() on a Dask DataFrame / Parquet (out of core): equal to the in-memory audit when the split and the
ridge penalty are the same, the split rule, the ε rule's leave-one-out loss, clear errors, the CLI."""

from __future__ import annotations

import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import rashomon
from rashomon import RashomonInputError

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from compas_audit import compas_frame  # noqa: E402

RTOL = 1e-9  # Dask vs in memory, same split and α: both exact, only the summation order differs
TARGET = "v_decile_score"
GROUPS = {"inadmissible": ["race", "sex"], "admissible": ["priors_count", "charge", "age", "agecat"]}


@pytest.fixture(scope="module")
def table():
    """COMPAS (violent; African-American and Caucasian) with two categorical columns and a 0/1 split column."""
    df = compas_frame()
    raw = rashomon.datasets.load_compas("violent", races=("African-American", "Caucasian"))
    df["charge"] = raw["c_charge_degree"].to_numpy()
    df["agecat"] = raw["age_cat"].to_numpy()
    df["is_train"] = np.random.default_rng(0).random(len(df)) < 0.15
    return df


@pytest.fixture(scope="module")
def parquet_dir(table, tmp_path_factory):
    path = tmp_path_factory.mktemp("compas_parquet")
    for i, part in enumerate(np.array_split(np.arange(len(table)), 3)):
        table.iloc[part].to_parquet(path / f"part{i}.parquet")
    return path


def _close(a, b, keys=("mcr_lower", "mcr_upper", "mr_ref", "refit_loss_ratio")):
    assert list(a.groups) == list(b.groups)
    for name in a.groups:
        for k in keys:
            x, z = getattr(a.groups[name], k), getattr(b.groups[name], k)
            assert abs(x - z) <= RTOL * abs(z), (name, k, x, z)


def test_parquet_audit_equals_in_memory_with_the_same_split_and_alpha(client, table, parquet_dir, monkeypatch):
    from rashomon.audit import _fit

    monkeypatch.setattr(_fit, "RIDGE_ALPHAS", np.array([3.0]))  # the one α both paths can choose
    kw = dict(model_class="linear", split="is_train", epsilon=3.0, epsilon_kind="absolute")
    mem = rashomon.audit(table, TARGET, GROUPS, **kw)
    assert mem.n_train == int(table["is_train"].sum()) and mem.n_test == len(table) - mem.n_train
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rashomon.audit(str(parquet_dir), TARGET, GROUPS, **kw)
    _close(out, mem)
    assert (out.n_train, out.n_test, out.features) == (mem.n_train, mem.n_test, mem.features)
    assert out.e_ref == pytest.approx(mem.e_ref, rel=RTOL) and out.epsilon_abs == 3.0
    assert out.reference["norm"] == pytest.approx(mem.reference["norm"], rel=RTOL)
    assert (
        out.meta["encoding"]
        == mem.meta["encoding"]
        == {"agecat": ["25 - 45", "Greater than 45", "Less than 25"], "charge": ["F", "M"]}
    )
    assert out.meta["standardised"] == mem.meta["standardised"] == ["priors_count", "age"]
    assert out.meta["engine"] == "out-of-core (Dask)" and out.meta["n_partitions"] == 3
    assert len(out.meta["input_sha256"]) == 64 and out.meta["input_name"] == parquet_dir.name
    # the reference lies in its set, inside every group's interval
    for g in out.groups.values():
        assert g.mcr_lower <= g.mr_ref <= g.mcr_upper


def test_epsilon_rule_uses_the_exact_leave_one_out_loss(client, table):
    from sklearn.linear_model import Ridge

    from rashomon.audit import _fit
    from rashomon.audit._checks import prepare

    small = table.iloc[:1500]
    res = rashomon.audit(
        dd.from_pandas(small, npartitions=4), TARGET, GROUPS, model_class="linear", split="is_train", epsilon=0.1
    )
    # brute force: refit the ridge without each training row (the in-memory audit's preprocessing)
    prep = prepare(small, TARGET, GROUPS, None, sep=None, drop_missing=False, split="is_train")
    tr = np.flatnonzero(prep["train_mask"])
    X, scaled = _fit._preprocess(prep["work"], prep["features"], tr)
    assert scaled == res.meta["standardised"]
    X, y = X[tr], prep["work"][TARGET].to_numpy()[tr]
    alpha = res.reference["alpha"]
    loo = np.mean(
        [
            (y[i] - Ridge(alpha=alpha).fit(np.delete(X, i, 0), np.delete(y, i)).predict(X[i : i + 1])[0]) ** 2
            for i in range(len(y))
        ]
    )
    assert res.cv_loss == pytest.approx(loo, rel=1e-9)
    assert res.epsilon_abs == pytest.approx(res.e_ref + 0.1 * loo, rel=1e-12)
    assert "leave-one-out" in res.meta["epsilon_rule"]


def test_split_rule_is_a_seeded_row_hash(client, table):
    from rashomon.audit._dask_table import hash_uniform

    cols = ["race", "sex", "priors_count", "charge", "age", "agecat", TARGET]
    kinds = {c: ("cat" if c in ("charge", "agecat") else "num") for c in cols}
    u = hash_uniform(table, cols, kinds, seed=7)
    shuffled = table.sample(frac=1.0, random_state=1)
    np.testing.assert_array_equal(hash_uniform(shuffled, cols, kinds, seed=7), u[shuffled.index.to_numpy()])
    assert not np.array_equal(hash_uniform(table, cols, kinds, seed=8), u)
    assert np.all((u >= 0) & (u < 1))
    dup = table.duplicated(subset=cols, keep=False).to_numpy()
    key = table[cols].astype(str).agg("|".join, axis=1)
    assert all(len(set(u[dup & (key == k).to_numpy()])) == 1 for k in key[dup].unique()[:20])  # same row, same u
    data = table.drop(columns="is_train")
    runs = [
        rashomon.audit(
            dd.from_pandas(frame, npartitions=k), TARGET, GROUPS, model_class="linear", train_size=0.4, random_state=5
        )
        for frame, k in ((data, 2), (data.sample(frac=1.0, random_state=3), 5))
    ]
    assert runs[0].n_train == runs[1].n_train
    _close(runs[0], runs[1])
    n = len(data)
    assert abs(runs[0].n_train - 0.4 * n) < 5 * np.sqrt(n * 0.4 * 0.6)  # binomial around train_size
    assert "hash" in runs[0].meta["split_rule"] and runs[0].meta["skipped"]


def test_unsupported_options_are_clear_errors(table):
    ddf = dd.from_pandas(table, npartitions=2)
    with pytest.raises(
        RashomonInputError,
        match=r"'model_class' parameter of audit must be 'linear', 'kernel' or 'logistic' when data is a Dask "
        r"DataFrame.*hinge loss is not smooth.*Got 'hinge' instead",
    ):
        rashomon.audit(ddf, TARGET, GROUPS, model_class="hinge")
    with pytest.raises(RashomonInputError, match=r"'bootstrap' parameter of audit must be 0 .*Got 20"):
        rashomon.audit(ddf, TARGET, GROUPS, model_class="linear", bootstrap=20)
    with pytest.raises(RashomonInputError, match=r"'train_size' parameter of audit must be None when 'split'"):
        rashomon.audit(ddf, TARGET, GROUPS, model_class="linear", split="is_train", train_size=0.5)
    with pytest.raises(RashomonInputError, match=r"'split' parameter of audit must name a column that is neither"):
        rashomon.audit(ddf, TARGET, GROUPS, model_class="linear", split="age")
    bad = table.assign(grp=np.arange(len(table)) % 3)
    for data in (bad, dd.from_pandas(bad, npartitions=2)):
        with pytest.raises(
            RashomonInputError,
            match=r"'split' parameter of audit must name a column of True/False or "
            r"0/1 values .*Got column 'grp' with values \['0', '1', '2'\]",
        ):
            rashomon.audit(data, TARGET, GROUPS, model_class="linear", split="grp")


def test_missing_values_as_in_memory(table):
    df = table.drop(columns="is_train").iloc[:400].copy()
    df.loc[df.index[:7], "age"] = np.nan
    df.loc[df.index[5:9], "charge"] = None
    msg = r"'data' parameter of audit must have no missing values.*Got 9 of 400 rows.*'charge': 4, 'age': 7\}"
    with pytest.raises(RashomonInputError, match=msg):
        rashomon.audit(df, TARGET, GROUPS, model_class="linear")
    with pytest.raises(RashomonInputError, match=msg):
        rashomon.audit(dd.from_pandas(df, npartitions=3), TARGET, GROUPS, model_class="linear")
    res = rashomon.audit(dd.from_pandas(df, npartitions=3), TARGET, GROUPS, model_class="linear", drop_missing=True)
    assert (res.meta["n_rows_input"], res.meta["n_rows_used"], res.meta["n_rows_dropped"]) == (400, 391, 9)
    assert res.n_train + res.n_test == 391


def test_cli_on_a_parquet_folder(client, parquet_dir, tmp_path, capsys):
    from rashomon.audit.cli import main

    base = [
        "audit",
        "--data",
        str(parquet_dir),
        "--target",
        TARGET,
        "--group",
        "inadmissible=race,sex",
        "--group",
        "admissible=priors_count,charge,age,agecat",
        "--quiet",
    ]
    assert main(base + ["--no-plots", "--model-class", "linear", "--bootstrap", "5"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"error: The '--bootstrap' option of rashomon audit must be 0 when data is a Dask", err)
    code = main(
        base
        + [
            "--model-class",
            "linear",
            "--split",
            "is_train",
            "--out",
            str(tmp_path / "rep"),
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "inadmissible" in out and "report:" in out
    js = json.loads((tmp_path / "r.json").read_text())
    assert js["_meta"]["engine"] == "out-of-core (Dask)" and js["_meta"]["n_partitions"] == 3
    page = (tmp_path / "rep" / "report.html").read_text()
    for text in (
        "out-of-core (Dask)",
        "3 partitions, 3 passes",
        "Split rule: a row fits the reference iff the column",
        "Skipped out of core: bootstrap intervals",
        "leave-one-out",
        "(column is_train) fitted",
    ):
        assert text in page, text


def test_parquet_file_without_dask_is_read_by_pandas(table, tmp_path, monkeypatch):
    import hashlib

    path = tmp_path / "compas.parquet"
    small = table.iloc[:600]
    small.to_parquet(path)
    kw = dict(model_class="linear", split="is_train", cv=3)
    mem = rashomon.audit(small, TARGET, GROUPS, **kw)
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)  # as if Dask were not installed
    res = rashomon.audit(path, TARGET, GROUPS, **kw)
    assert "engine" not in res.meta and res.meta["input_name"] == "compas.parquet"
    assert res.meta["input_sha256"] == hashlib.sha256(b"compas.parquet" + path.read_bytes()).hexdigest()
    for name in mem.groups:  # the same in-memory computation
        assert (res.groups[name].mcr_lower, res.groups[name].mcr_upper) == (
            mem.groups[name].mcr_lower,
            mem.groups[name].mcr_upper,
        )
