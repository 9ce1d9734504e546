"""audit(model_class="kernel") on a Dask DataFrame / Parquet: equal to the in-memory kernel audit when the split
and the grids of bandwidth and penalty are the same (one point each), the report's fields, the CLI."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import rashomon

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from compas_audit import compas_frame  # noqa: E402

RTOL = 1e-9  # Dask vs in memory, same split, bandwidth and penalty: both exact, only the summation order differs
TARGET = "v_decile_score"
GROUPS = {"inadmissible": ["race", "sex"], "admissible": ["priors_count", "age"]}


@pytest.fixture(scope="module")
def table():
    df = compas_frame().iloc[:1500].reset_index(drop=True)
    df["is_train"] = np.random.default_rng(0).random(len(df)) < 0.2
    return df


@pytest.fixture(scope="module")
def parquet_dir(table, tmp_path_factory):
    path = tmp_path_factory.mktemp("compas_kernel_parquet")
    for i, part in enumerate(np.array_split(np.arange(len(table)), 3)):
        table.iloc[part].to_parquet(path / f"part{i}.parquet")
    return path


def test_parquet_kernel_audit_equals_in_memory(client, table, parquet_dir, monkeypatch):
    from rashomon.audit import _fit

    monkeypatch.setattr(_fit, "KERNEL_GAMMA_FACTORS", (0.3,))  # the one point both paths can choose
    monkeypatch.setattr(_fit, "KERNEL_ALPHAS", np.array([1.0]))
    kw = dict(model_class="kernel", split="is_train", epsilon=3.0, epsilon_kind="absolute")
    mem = rashomon.audit(table, TARGET, GROUPS, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rashomon.audit(str(parquet_dir), TARGET, GROUPS, **kw)
    assert out.model_class == mem.model_class == "kernel"
    assert (out.n_train, out.n_test, out.features) == (mem.n_train, mem.n_test, mem.features)
    for key in ("gamma", "alpha", "rkhs_norm", "intercept", "dictionary_size"):
        assert out.reference[key] == pytest.approx(mem.reference[key], rel=RTOL), key
    assert out.e_ref == pytest.approx(mem.e_ref, rel=RTOL) and out.epsilon_abs == 3.0
    for name in mem.groups:
        for k in ("mcr_lower", "mcr_upper", "mr_ref", "refit_loss_ratio"):
            x, z = getattr(out.groups[name], k), getattr(mem.groups[name], k)
            assert abs(x - z) <= RTOL * abs(z), (name, k, x, z)
    assert out.meta["engine"] == "out-of-core (Dask)" and "leave-one-out" in out.meta["cv_rule"]
    for g in out.groups.values():
        assert g.mcr_lower <= g.mr_ref <= g.mcr_upper


@pytest.mark.filterwarnings("ignore:RashomonSet.fit.*null model")  # 120 training rows: the reference explains little
def test_kernel_audit_chooses_by_leave_one_out_and_runs_from_the_cli(client, table, tmp_path):
    from rashomon.audit.cli import main

    small = table.iloc[:600]
    res = rashomon.audit(
        dd.from_pandas(small, npartitions=2), TARGET, GROUPS, model_class="kernel", split="is_train", epsilon=0.05
    )
    assert res.model_class == "kernel" and res.cv_loss == res.reference["loo_mse"] > 0
    assert res.epsilon_abs > res.e_ref
    path = tmp_path / "t.parquet"
    small.to_parquet(path)
    out = tmp_path / "report.json"
    args = ["audit", "--data", str(path), "--target", TARGET, "--group", "inadmissible=race,sex", "--quiet"]
    code = main(
        args + ["--split", "is_train", "--epsilon", "0.05", "--no-plots", "--json", str(out)]
    )  # the default class: kernel
    js = json.loads(out.read_text())
    assert code == 0 and js["_meta"]["engine"] == "out-of-core (Dask)"
