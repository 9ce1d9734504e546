"""The table of an out-of-core audit: Parquet paths, checks of a Dask DataFrame, the split rule, the encoding.

Everything here runs partition by partition; nothing gathers the rows.

- :func:`read_parquet`: a ``.parquet`` file or a folder of them, read by ``dask.dataframe.read_parquet``
  (by pandas when Dask is not installed), with the SHA-256 of the files (streamed).
- :func:`check_table`: the checks of the in-memory audit (columns, dtypes, missing and infinite values, at
  most 50 levels per categorical column) in one pass over the partitions (:func:`_partition_summary`,
  merged on the client). The levels of a categorical column are the values present, as strings, sorted:
  the in-memory encoding.
- The split rule (:func:`hash_uniform`): a row fits the reference iff ``u < train_size / n`` where
  ``u ∈ [0, 1)`` is a 64-bit hash of the row's values (numeric columns as float64, categorical ones as
  strings, in the order features then target) mixed with the seed (SplitMix64). The same seed gives the
  same split whatever the partitioning, the row order or the machine; identical rows fall on the same
  side; the training count is binomial around ``train_size``. A ``split`` column overrides the rule.
- :func:`encode_partition`: the numeric design of one partition (one-hot dummies with all levels), the
  target and the 0/1 training mask.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..utils.validation import RashomonInputError
from ._checks import _MAX_LEVELS, check_columns, split_mask

__all__ = [
    "is_parquet_path",
    "read_parquet",
    "check_table",
    "hash_uniform",
    "encoded_uniform",
    "encode_partition",
    "TARGET",
    "MASK",
    "FOLD_SALT",
    "SAMPLE_SALT",
]

PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
TARGET, MASK = "__rashomon_target__", "__rashomon_train__"
_M64 = (1 << 64) - 1
#: added to the seed for the classifier audit's fold hash and held-out sample hash (independent of the split's)
FOLD_SALT, SAMPLE_SALT = 1 << 33, 1 << 34


def _parquet_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(f for f in path.rglob("*") if f.is_file() and f.suffix.lower() in PARQUET_SUFFIXES)


def is_parquet_path(data: Any) -> bool:
    """A path ending in .parquet/.parq/.pq, or a folder holding such files."""
    if not isinstance(data, (str, Path)):
        return False
    path = Path(data)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return True
    return path.is_dir() and bool(_parquet_files(path))


def read_parquet(data: Any, func: str) -> tuple[Any, str, str]:
    """``(frame, sha256 of the files, name)``: a Dask DataFrame, or a pandas one when Dask is not installed."""
    path = Path(data)
    if not path.exists():
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be an existing CSV or Parquet file (or a folder "
            f"of Parquet files). Got {str(path)!r} instead (no such file)."
        )
    files = _parquet_files(path)
    digest = hashlib.sha256()
    try:
        for f in files:
            digest.update(str(f.relative_to(path) if path.is_dir() else f.name).encode())
            with f.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
    except OSError as exc:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be readable Parquet. Got {str(path)!r} instead "
            f"({exc.strerror or exc})."
        ) from None
    try:
        try:
            import dask.dataframe as dd
        except ImportError:
            frame = pd.read_parquet(path)
        else:
            frame = dd.read_parquet(str(path))
    except ImportError as exc:
        raise RashomonInputError(
            f"The 'data' parameter of {func} is a Parquet path, which needs pyarrow (pip install "
            f"'rashomon[dask]'). Got {exc} instead."
        ) from None
    except (OSError, ValueError, TypeError) as exc:
        raise RashomonInputError(
            f"The 'data' parameter of {func} could not be read as Parquet ({str(path)!r}): {exc}"
        ) from None
    return frame, digest.hexdigest(), path.name


def _kind(dtype: Any) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    return "num" if pd.api.types.is_numeric_dtype(dtype) else "cat"


def _mix(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on uint64 (wrapping arithmetic)."""
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def hash_uniform(pdf: pd.DataFrame, columns: list, kinds: dict, seed: int) -> np.ndarray:
    """Per row ``u ∈ [0, 1)`` from the values of ``columns`` and the seed (see the module docstring)."""
    h = np.full(len(pdf), (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & _M64, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = _mix(h)
        for c in columns:
            s = pdf[c]
            if kinds[c] == "cat":
                v = pd.util.hash_array(s.astype(str).to_numpy(dtype=object))
            else:
                v = pd.util.hash_array(s.to_numpy(dtype=float) + 0.0)  # + 0.0: -0.0 hashes as 0.0
            h = _mix(h ^ v)
    return (h >> np.uint64(11)).astype(float) * 2.0**-53


def encoded_uniform(frame: pd.DataFrame, columns: list, seed: int, salt: int) -> np.ndarray:
    """Per row ``u ∈ [0, 1)`` from the encoded values of ``columns`` (floats: features after one-hot encoding,
    then the 0/1 target) and ``seed + salt``: the same numbers for an in-memory table and a Dask partition."""
    return hash_uniform(frame, list(columns), {c: "num" for c in columns}, (int(seed) + int(salt)) & _M64)


def _partition_summary(pdf: pd.DataFrame, features: list, kinds: dict, target: str, split: str | None) -> dict:
    """Counts of one partition: rows, missing values per column, then on the complete rows: infinite values,
    whether each numeric feature is 0/1, the levels of each categorical feature (at most 51 kept), and
    whether the split column holds 0/1 values."""
    na = pdf.isna()
    bad_rows = na.any(axis=1)
    d = pdf[~bad_rows] if bool(bad_rows.any()) else pdf
    out = {
        "n_input": len(pdf),
        "na": na.sum().to_dict(),
        "rows_na": int(bad_rows.sum()),
        "n": len(d),
        "inf": {},
        "binary": {},
        "levels": {},
        "split_bad": [],
    }
    for c in features + [target]:
        if kinds[c] != "cat":
            v = d[c].to_numpy(dtype=float)
            out["inf"][c] = int(np.count_nonzero(np.isinf(v)))
            if c != target:
                out["binary"][c] = bool(np.all((v == 0.0) | (v == 1.0)))
            else:  # a few of the target's values: a classifier class needs two
                out["target_values"] = set(np.unique(v[np.isfinite(v)])[:3].tolist())
        else:
            out["levels"][c] = set(sorted(map(str, d[c].astype(str).unique()))[: _MAX_LEVELS + 1])
    if split is not None:
        try:
            split_mask(d[split], split, "audit")
        except RashomonInputError:
            out["split_bad"] = sorted(map(str, pd.unique(d[split].astype(str))))[:4]
    return out


def check_table(
    ddf: Any, target: Any, groups: Any, features: Any, *, drop_missing: bool, split: str | None, func: str
) -> dict:
    """The in-memory audit's checks on a Dask DataFrame: metadata first, then one pass over the partitions.

    Returns ``frame`` (the used columns, rows with missing values dropped if asked), ``features`` and
    ``groups`` (encoded names), ``raw_features``, ``kinds``, ``levels`` and ``encoding``, ``binary`` (per
    encoded column), ``n_input``, ``n_used``, ``missing_by_column``, ``n_partitions``, ``target_values`` (a
    numeric target's values, at most 3 per partition: enough to tell a 0/1 target).
    """
    import dask

    ddf = ddf.rename(columns=lambda c: str(c).strip() if isinstance(c, str) else c)
    cols = pd.Index(ddf.columns)
    dup = sorted({str(c) for c in cols[cols.duplicated()]})
    if dup:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must have distinct column names. Got duplicated {dup} instead."
        )
    if len(cols) == 0:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must have rows and columns. Got a table with no columns instead."
        )
    groups, features = check_columns(ddf, target, groups, features, func, "", split)
    used = features + [target] + ([split] if split is not None else [])
    kinds = {c: _kind(ddf.dtypes[c]) for c in features + [target]}
    frame = ddf[used]
    parts = frame.to_delayed()
    summaries = dask.compute(*[dask.delayed(_partition_summary)(p, features, kinds, target, split) for p in parts])
    n_input = sum(s["n_input"] for s in summaries)
    if n_input == 0:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must have rows and columns. Got a table with 0 rows instead."
        )
    missing = {str(c): int(sum(s["na"].get(c, 0) for s in summaries)) for c in used}
    missing_by_column = {c: k for c, k in missing.items() if k}
    rows_na = sum(s["rows_na"] for s in summaries)
    if rows_na and not drop_missing:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must have no missing values in the target and features "
            f"(or pass drop_missing=True / --drop-missing). Got {rows_na} of {n_input} rows with missing "
            f"values; per column: {missing_by_column} instead."
        )
    if rows_na:
        frame = frame.dropna()
    inf = {c: sum(s["inf"].get(c, 0) for s in summaries) for c in features + [target] if kinds[c] != "cat"}
    if inf.get(target):
        raise RashomonInputError(
            f"The 'target' parameter of {func} must name a finite column. Got {inf[target]} "
            f"infinite value(s) in {target!r} instead."
        )
    for c in features:
        if inf.get(c):
            raise RashomonInputError(
                f"The 'features' parameter of {func} must name finite columns. Got {inf[c]} "
                f"infinite value(s) in {c!r} instead."
            )
    bad_split = [v for s in summaries for v in s["split_bad"]]
    if bad_split:
        raise RashomonInputError(
            f"The 'split' parameter of {func} must name a column of True/False or 0/1 values (True: "
            f"a training row). Got column {split!r} with values {sorted(set(bad_split))[:4]} instead."
        )
    encoding, expanded, binary = {}, {}, {}
    for c in features:
        if kinds[c] != "cat":
            expanded[c] = [c]
            binary[c] = all(s["binary"].get(c, True) for s in summaries)
            continue
        levels = sorted(set().union(*(s["levels"].get(c, set()) for s in summaries)))
        if len(levels) > _MAX_LEVELS:
            raise RashomonInputError(
                f"The 'features' parameter of {func} must name numeric columns or categorical ones with at most "
                f"{_MAX_LEVELS} levels (one-hot encoded). Got {c!r} with more than {_MAX_LEVELS} levels "
                f"(e.g. {levels[:3]}) instead; drop it or encode it first."
            )
        encoding[str(c)] = levels
        expanded[c] = [f"{c}={lv}" for lv in levels]
        binary.update({e: True for e in expanded[c]})
    enc_features = [e for c in features for e in expanded[c]]
    if len(set(enc_features)) != len(enc_features):
        raise RashomonInputError(
            f"The 'features' parameter of {func} must give distinct columns after one-hot encoding. Got {enc_features} instead."
        )
    n = sum(s["n"] for s in summaries)
    if n < 20:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must have at least 20 usable rows (10 to fit, 10 held out). Got {n} "
            f"(of {n_input}; {rows_na} with missing values dropped) instead."
        )
    return {
        "frame": frame,
        "features": enc_features,
        "groups": {g: [e for c in cs for e in expanded[c]] for g, cs in groups.items()},
        "raw_features": features,
        "kinds": kinds,
        "encoding": encoding,
        "binary": binary,
        "n_input": n_input,
        "n_used": n,
        "missing_by_column": missing_by_column,
        "n_partitions": len(parts),
        "target_values": set().union(*(s.get("target_values", set()) for s in summaries)),
    }


def encode_partition(
    pdf: pd.DataFrame,
    raw_features: list,
    kinds: dict,
    encoding: dict,
    target: str,
    split: str | None,
    seed: int,
    fraction: float,
) -> pd.DataFrame:
    """One partition's encoded features (float), the target (column ``TARGET``) and the 0/1 training mask
    (column ``MASK``: the split column, else the hash rule ``u < fraction``)."""
    out = {}
    for c in raw_features:
        if kinds[c] == "cat":
            sv = pdf[c].astype(str)
            for lv in encoding[str(c)]:
                out[f"{c}={lv}"] = (sv == lv).to_numpy(dtype=float)
        else:
            out[c] = pdf[c].to_numpy(dtype=float)
    out[TARGET] = pdf[target].to_numpy(dtype=float)
    if split is not None:
        out[MASK] = split_mask(pdf[split], split, "audit").astype(float)
    else:
        out[MASK] = (hash_uniform(pdf, raw_features + [target], kinds, seed) < fraction).astype(float)
    return pd.DataFrame(out, index=pdf.index)
