"""audit(model_class="logistic") on a Dask DataFrame / Parquet: equal to the in-memory classifier audit with the
hash fold rule and the same split (a categorical column with every level beside the intercept included); the fold
rule's fits against an independent optimiser; partitions and schedulers; the report and the CLI.

Small tables, 3 folds and few ambiguity rows: the cost is the number of passes, each a Dask computation on the
module's 2-worker cluster; the 1,500-row run is marked slow (``make repro``)."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rashomon
from rashomon import RashomonInputError

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from compas_audit import compas_frame  # noqa: E402

RTOL = 1e-9  # Dask vs in memory: the same Newton iterations and searches, only the order of the row sums differs
TARGET = "high"
FEATURES = ["race", "sex", "felony", "priors_count", "age"]
GROUPS = {"inadmissible": ["race", "sex"], "admissible": ["felony"]}  # few values each: exact MR on Dask too
KW = dict(model_class="logistic", features=FEATURES, epsilon=0.05, cv=3, ambiguity_rows=40)


def _frame(n: int) -> pd.DataFrame:
    df = compas_frame().iloc[:n].reset_index(drop=True)
    df[TARGET] = (df.pop("v_decile_score") >= 5).astype(float)
    df["is_train"] = np.random.default_rng(0).random(len(df)) < 0.4
    return df.assign(agecat=pd.cut(df["age"], [0, 25, 45, 200], labels=["a", "b", "c"]).astype(str))


@pytest.fixture(scope="module")
def table():
    return _frame(500)


@pytest.fixture(scope="module")
def parquet_dir(table, tmp_path_factory):
    path = tmp_path_factory.mktemp("compas_logistic_parquet")
    for i, part in enumerate(np.array_split(np.arange(len(table)), 3)):
        table.iloc[part].to_parquet(path / f"part{i}.parquet")
    return path


def _close(a: float, b: float, scale: float = 1.0) -> bool:
    return abs(a - b) <= RTOL * max(abs(b), scale)


def _same(out, mem, witnessed=True):
    assert (out.n_train, out.n_test, out.features, out.model_class) == (
        mem.n_train,
        mem.n_test,
        mem.features,
        mem.model_class,
    )
    for k in ("e_ref", "epsilon_abs", "cv_loss"):
        assert _close(getattr(out, k), getattr(mem, k)), k
    for k in ("norm", "training_loss", "cv_lambda"):
        assert _close(out.reference[k], mem.reference[k]), k
    for name in mem.groups:
        for k in ("mr_ref", "refit_loss_ratio"):
            assert _close(getattr(out.groups[name], k), getattr(mem.groups[name], k)), (name, k)
    co, cm = out.meta["classifier"], mem.meta["classifier"]
    for k in ("accuracy", "log_loss", "positive_rate"):
        assert _close(co["reference_metrics"][k], cm["reference_metrics"][k]), k
    for k in ("ambiguity", "n_flippable", "discrepancy_upper", "n_rows") + (
        ("discrepancy_lower",) if witnessed else ()
    ):
        assert co["ambiguity"][k] == cm["ambiguity"][k], k
    for c in (co, cm):  # the share flipped by the best member each engine's screen visited: a witnessed lower end
        assert 0.0 <= c["ambiguity"]["discrepancy_lower"] <= c["ambiguity"]["discrepancy_upper"]
    assert len(co["coefficients"]) == len(cm["coefficients"])
    for a, b in zip(co["coefficients"], cm["coefficients"]):
        assert a["coefficient"] == b["coefficient"] and a["sign_stable"] == b["sign_stable"]
        assert _close(a["lower"], b["lower"]) and _close(a["upper"], b["upper"]), a["coefficient"]


def _equal_through_parquet(table, path, kw, groups=GROUPS, witnessed=True):
    for i, part in enumerate(np.array_split(np.arange(len(table)), 3)):
        table.iloc[part].to_parquet(path / f"part{i}.parquet")
    mem = rashomon.audit(table, TARGET, groups, split="is_train", cv_rule="hash", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rashomon.audit(str(path), TARGET, groups, split="is_train", **kw)
    _same(out, mem, witnessed)
    return out, mem


@pytest.mark.slow
def test_larger_parquet_logistic_audit_equals_in_memory(client, tmp_path):
    _equal_through_parquet(_frame(1500), tmp_path, dict(KW, cv=5, ambiguity_rows=100))


def test_parquet_logistic_audit_equals_in_memory_with_the_hash_fold_rule(client, table, tmp_path):
    import dask

    from rashomon.audit._report_text import _computation_text

    out, mem = _equal_through_parquet(table, tmp_path, KW)
    with dask.config.set(scheduler="sync"):  # one thread: the same graph as on the cluster, so the same bits
        alone = rashomon.audit(str(tmp_path), TARGET, GROUPS, split="is_train", **KW)
    assert (alone.e_ref, alone.epsilon_abs, alone.cv_loss) == (out.e_ref, out.epsilon_abs, out.cv_loss)
    for name in GROUPS:
        assert alone.groups[name].mr_ref == out.groups[name].mr_ref
        assert alone.groups[name].refit_loss_ratio == out.groups[name].refit_loss_ratio
    assert out.meta["engine"] == "out-of-core (Dask)" and out.meta["n_partitions"] == 3
    assert "row hash" in out.meta["cv_rule"] and "row hash" in mem.meta["classifier"]["cv_rule"]
    assert out.meta["classifier"]["mr_methods"] == {"inadmissible": "exact", "admissible": "exact"}
    # what the Dask class cannot compute is said, not dropped: MCR (no certified method on statistics), AUC
    assert any("MCR of the logistic class" in s for s in out.meta["skipped"])
    for g in out.groups.values():
        assert np.isnan(g.mcr_lower) and np.isnan(g.mcr_upper) and "not run" in g.mcr.notes
    # the in-memory MCR brackets the reference's MR computed out of core
    for name, g in mem.groups.items():
        assert g.mcr_lower <= out.groups[name].mr_ref <= g.mcr_upper
    assert out.meta["fold_rule"] == mem.meta["fold_rule"] == "hash"
    assert "7 log-spaced values from 10 to 1e-05" in out.meta["cv_rule"] and "from 10 to 1e-05" in mem.meta["cv_rule"]
    assert "Penalty choice: hash fold rule" in _computation_text(mem, mem.meta)
    # the stratified default is unchanged in memory
    default = rashomon.audit(table, TARGET, GROUPS, split="is_train", **KW)
    assert default.meta["fold_rule"] == "stratified" and "LogisticRegressionCV" in default.meta["cv_rule"]
    assert "stratified" in default.meta["classifier"]["cv_rule"]


def test_collinear_dummies_equal_in_memory(table, tmp_path):
    import dask

    # every level of agecat one-hot encoded beside the intercept, in memory as on Dask: a singular loss Hessian.
    # The best member each engine's screen meets may differ (witnessed discrepancy_lower); the rest is equal.
    kw = dict(KW, features=["race", "sex", "agecat", "priors_count"], ambiguity_rows=20)
    with dask.config.set(scheduler="sync"):  # the cluster is checked above; this is about the range engine
        out, mem = _equal_through_parquet(table.iloc[:300], tmp_path, kw, {"age group": ["agecat"]}, witnessed=False)
    assert out.features == mem.features == ("race", "sex", "agecat=a", "agecat=b", "agecat=c", "priors_count")
    assert out.meta["encoding"] == mem.meta["encoding"] == {"agecat": ["a", "b", "c"]}
    assert len(out.meta["skipped"]) == 3 and not any(
        "coefficient" in k or "ambiguity" in k for k in out.meta["skipped"]
    )
    assert all(np.isfinite(g.mr_ref) and g.refit_loss_ratio > 0 for g in out.groups.values())
    assert all(abs(c["lower"]) < 1e3 and abs(c["upper"]) < 1e3 for c in out.meta["classifier"]["coefficients"])


def test_fold_rule_fits_equal_an_independent_optimiser():
    from scipy.optimize import minimize

    from rashomon.sets.scale import folds_from_hash, memory_reducer, penalised_logistic_cv

    rng = np.random.default_rng(3)
    n, p, K = 400, 3, 4
    X = rng.normal(size=(n, p)) * [1.0, 3.0, 0.5] + 2.0
    y = (X @ [1.0, -0.4, 2.0] - 1.5 + rng.logistic(size=n) > 0).astype(float)
    fold = folds_from_hash(rng.random(n), K)
    mean, sd = X.mean(0), X.std(0)
    res = penalised_logistic_cv(memory_reducer(X, y, fold), mean, sd, K, [1.0, 0.01, 1e-4])
    assert res["converged"] and res["fold_sizes"] == [int(np.sum(fold == k)) for k in range(K)]
    D = np.column_stack([np.ones(n), (X - mean) / sd])
    ye = 2 * y - 1

    def fit(rows, lam):
        def f(t):
            m = ye[rows] * (D[rows] @ t)
            s = 1 / (1 + np.exp(m))
            g = -(D[rows] * (ye[rows] * s)[:, None]).mean(0) + lam * np.r_[0.0, t[1:]]
            return np.mean(np.logaddexp(0, -m)) + 0.5 * lam * t[1:] @ t[1:], g

        return minimize(f, np.zeros(p + 1), jac=True, method="L-BFGS-B", options=dict(gtol=1e-12, ftol=1e-15)).x

    for a, lam in enumerate(res["lambdas"]):
        cv = np.mean(
            [np.mean(np.logaddexp(0, -ye[fold == k] * (D[fold == k] @ fit(fold != k, lam)))) for k in range(K)]
        )
        assert abs(res["cv_losses"][a] - cv) <= 1e-8  # L-BFGS-B to gtol 1e-12: the reference's own accuracy
    th = fit(np.ones(n, dtype=bool), res["lambda"])
    np.testing.assert_allclose(res["theta"], th, atol=1e-6)
    assert res["norm"] == pytest.approx(float(th[1:] @ th[1:]), rel=1e-6)


def test_partitions_and_row_order(table):
    import dask

    data = table.drop(columns="is_train").iloc[:300]
    kw = dict(KW, train_size=0.4, random_state=5, ambiguity_rows=10)
    one = {"inadmissible": GROUPS["inadmissible"]}  # one group: fewer passes
    with dask.config.set(scheduler="sync"):  # the cluster: test_..._hash_fold_rule (the same bits as sync)
        runs = [
            rashomon.audit(dd.from_pandas(frame, npartitions=k), TARGET, one, **kw)
            for frame, k in ((data, 2), (data.sample(frac=1.0, random_state=3), 5))
        ]
    _same(runs[0], runs[1])  # the hash split and folds: the same rows whatever the partitioning and order
    n = len(data)
    assert abs(runs[0].n_train - 0.4 * n) < 5 * np.sqrt(n * 0.4 * 0.6)


def test_bad_inputs_on_dask(table):
    ddf = dd.from_pandas(table, npartitions=2)
    with pytest.raises(RashomonInputError, match=r"'target' parameter of audit must name a binary column .*'age'"):
        rashomon.audit(ddf, "age", GROUPS, model_class="logistic")
    with pytest.raises(RashomonInputError, match=r"'model_class' parameter .*hinge loss is not smooth"):
        rashomon.audit(ddf, TARGET, GROUPS, model_class="hinge")
    with pytest.raises(
        RashomonInputError,
        match=r"'cv_rule' parameter of audit must be 'hash' or None when data is a Dask DataFrame.*Got 'stratified'",
    ):
        rashomon.audit(ddf, TARGET, GROUPS, model_class="logistic", cv_rule="stratified")
    with pytest.raises(RashomonInputError, match=r"'positive_label' parameter of audit must be None"):
        rashomon.audit(ddf, TARGET, GROUPS, model_class="logistic", positive_label=1.0)
    with pytest.raises(RashomonInputError, match=r"'data' parameter of audit is a Dask DataFrame.*sensitive='race'"):
        rashomon.audit(ddf, TARGET, GROUPS, model_class="logistic", sensitive="race")
    few = table.iloc[:60]
    with pytest.raises(RashomonInputError, match=r"'cv' parameter of audit must leave rows in every fold"):
        rashomon.audit(
            dd.from_pandas(few, npartitions=2), TARGET, GROUPS, model_class="logistic", split="is_train", cv=40
        )


def test_report_and_cli_on_a_parquet_folder(parquet_dir, tmp_path, capsys):
    import dask

    from rashomon.audit.cli import main

    out = tmp_path / "report"
    js = tmp_path / "r.json"
    args = ["audit", "--data", str(parquet_dir), "--target", TARGET, "--group", "inadmissible=race,sex"]
    args += ["--features", "race,sex,priors_count", "--model-class", "logistic", "--cv-rule", "hash"]
    args += ["--split", "is_train", "--cv", "3", "--ambiguity-rows", "10", "--quiet", "--out", str(out)]
    with dask.config.set(scheduler="sync"):  # the report and the CLI; the cluster is checked above
        code = main(args + ["--json", str(js)])
    assert code == 0
    err = capsys.readouterr().err  # the table's NaN MCR columns are explained where they are printed
    assert "not run: MCR of the logistic class" in err and "in-memory sample" in err
    res = json.loads(js.read_text())
    assert res["_meta"]["engine"] == "out-of-core (Dask)" and res["_meta"]["n_partitions"] == 3
    assert res["_meta"]["fold_rule"] == "hash"
    html = next(out.glob("*.html")).read_text()
    assert "MCR was not run" in html and "row hash" in html and "Skipped out of core" in html
    assert "no model of the class in the set lies outside" not in html  # no bounds claimed where none were run
    assert ">not run</td>" in html and ">NaN</td>" not in html and "(3 partitions" in html
