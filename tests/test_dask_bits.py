"""Same bits for any partitioning: the out-of-core path re-blocks the rows at fixed global offsets, so the linear,
kernel and logistic sets, their queries and the audits are bit-identical whatever the number of partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rashomon
from rashomon import KernelModelClass, LinearModelClass, LogisticModelClass, RashomonSet

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
_inputs = pytest.importorskip("rashomon.sets.scale._dask_inputs")

PARTS = (1, 3, 7)


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of 1,024 rows, so that the 2,500-row tables below span three blocks and the reduction trees merge."""
    monkeypatch.setattr(_inputs, "_BLOCK_BYTES", 1 << 10)


def _table(n=2500, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3, size=p)
    z = X @ rng.normal(size=p) / 2
    cols = [f"x{j}" for j in range(p)]
    return pd.DataFrame(X, columns=cols).assign(
        reg=z + rng.normal(size=n), cls=(z + rng.logistic(size=n) > 0).astype(int)
    )


def _frames(df, k):
    ddf = dd.from_pandas(df, npartitions=k)
    return ddf[[c for c in df.columns if c.startswith("x")]], ddf


def test_block_rows_depend_on_the_columns_only():
    assert _inputs._block_rows(4) == 1024  # the floor
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_inputs, "_BLOCK_BYTES", 1 << 23)
        assert [_inputs._block_rows(p) for p in (1, 20, 1000)] == [1 << 20, 1 << 15, 1 << 10]


@pytest.mark.parametrize(
    "mc, target",
    [
        (LinearModelClass(), "reg"),
        (KernelModelClass(dictionary=40, gamma=0.3, norm_bound=3.0, random_state=0), "reg"),
        (LogisticModelClass(norm_bound=2.0), "cls"),
    ],
    ids=["linear", "kernel", "logistic"],
)
def test_every_partitioning_gives_the_same_bits(mc, target):
    df = _table()
    runs = []
    for k in PARTS:
        X, ddf = _frames(df, k)
        rs = RashomonSet(mc, 0.1).fit(X, ddf[target])
        out = [rs.e_min_, rs.epsilon_abs_, *np.ravel(rs.theta_min_)]
        if target == "cls":
            pr = rs.prediction_range(df[X.columns][:20])
            out += [*pr.lower, *pr.upper, *rs.multiplicity(df[X.columns][:20]).flips]
            mr = rashomon.model_reliance(rs.reference_, X, ddf[target], "x0")
            out += [mr.e_switch, mr.e_orig]
        else:
            m = rs.model_class_reliance("x0")
            out += [m.lower, m.upper]
        runs.append(np.asarray(out, dtype=float))
    for other in runs[1:]:
        np.testing.assert_array_equal(other, runs[0])  # bits, not a tolerance


def test_dask_array_chunks_give_the_same_bits():
    df = _table(seed=1)
    X, y = df[["x0", "x1", "x2", "x3"]].to_numpy(), df["reg"].to_numpy()
    fits = [
        RashomonSet(LinearModelClass(), 0.1).fit(da.from_array(X, chunks=(c, 4)), da.from_array(y, chunks=c))
        for c in (2500, 700, 333)
    ]
    ends = [(f.e_min_, f.model_class_reliance(1).lower, f.model_class_reliance(1).upper) for f in fits]
    assert len(set(ends)) == 1


@pytest.mark.parametrize("model_class", ["linear", "kernel", "logistic"])
def test_audit_on_any_partitioning_gives_the_same_bits(model_class):
    df = _table(n=3000, seed=2)
    target = "cls" if model_class == "logistic" else "reg"
    runs = [
        rashomon.audit(
            dd.from_pandas(df.drop(columns="reg" if target == "cls" else "cls"), npartitions=k),
            target,
            {"a": ["x0"], "b": ["x1", "x2"]},
            model_class=model_class,
            train_size=0.5,
            random_state=3,
        ).to_frame()
        for k in (2, 5)
    ]
    pd.testing.assert_frame_equal(runs[0], runs[1], check_exact=True)
