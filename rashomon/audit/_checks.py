"""Input checks of :func:`rashomon.audit`, all run before any computing: reading the CSV (``_read_csv.py``:
separator sniffing, binary/empty files, repeated header names), group names and their file-name slugs, writable output folders, missing
values, one-hot encoding of categorical columns, ``train_size``; and the progress reporter.
"""

from __future__ import annotations

import hashlib
import numbers
import os
import re
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..utils import checkpoint
from ..utils.validation import RashomonInputError
from ._read_csv import _read_table, _roles, merge_duplicate_columns

__all__ = ["group_slug", "check_group_names", "check_writable_dir", "check_cv_rule", "prepare"]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\- ]{0,63}$")
_MAX_LEVELS = 50


def group_slug(name: str) -> str:
    """The file-name stem of a (validated) group name: spaces become ``_``; ``envelope_<slug>.png``."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", str(name).strip())


def check_group_names(names: list, func: str = "audit", param: str = "groups") -> None:
    """Group names: non-empty, safe (see module docs), no duplicates, distinct file names."""
    seen: dict = {}
    for name in names:
        if not isinstance(name, str) or not _NAME_RE.match(name) or name != name.strip():
            raise RashomonInputError(
                f"The '{param}' parameter of {func} must have names of 1-64 letters, digits, '_', '-', '.' or spaces, "
                f"starting with a letter or digit (they name output files). Got {name!r} instead."
            )
        key = group_slug(name).lower()
        if key in seen:
            what = "twice" if seen[key] == name else f"and {seen[key]!r} (same file name {group_slug(name)!r})"
            raise RashomonInputError(
                f"The '{param}' parameter of {func} must have distinct group names. Got {name!r} {what} instead."
            )
        seen[key] = name


def check_split_train_size(split: Any, train_size: Any, func: str) -> None:
    """A ``split`` column names the training rows: ``train_size`` must then be left to None."""
    if split is not None and train_size is not None:
        raise RashomonInputError(
            f"The 'train_size' parameter of {func} must be None when 'split' names the training "
            f"rows. Got {train_size!r} instead."
        )


CV_RULES = ("stratified", "hash")


def check_cv_rule(cv_rule: Any, model_class: str, dask_input: bool, func: str) -> str | None:
    """The fold rule of a classifier class's reference: ``"stratified"`` (in memory, the default) or ``"hash"``
    (the logistic class; the only rule on Dask, its default there). None for the regression classes."""
    if cv_rule is not None and cv_rule not in CV_RULES:
        raise RashomonInputError(
            f"The 'cv_rule' parameter of {func} must be None, 'stratified' or 'hash'. Got {cv_rule!r} instead."
        )
    if model_class not in ("logistic", "hinge"):
        if cv_rule is not None:
            raise RashomonInputError(
                f"The 'cv_rule' parameter of {func} must be None (not given) with model_class={model_class!r} (it chooses the "
                f"folds of a classifier class, 'logistic' or 'hinge'). Got {cv_rule!r} instead."
            )
        return None
    if dask_input:
        if cv_rule == "stratified":
            raise RashomonInputError(
                f"The 'cv_rule' parameter of {func} must be 'hash' or None when data is a Dask DataFrame (or a "
                "Parquet path read through Dask): stratified folds need every row in memory. Got "
                f"{cv_rule!r} instead; pass cv_rule='hash' to the in-memory audit for the same folds."
            )
        return "hash" if model_class == "logistic" else None  # hinge: refused by the model_class check
    if cv_rule == "hash" and model_class != "logistic":
        raise RashomonInputError(
            f"The 'cv_rule' parameter of {func} must be 'stratified' or None with model_class='hinge' (the hash "
            "rule fits the logistic class). Got 'hash' instead."
        )
    return cv_rule or "stratified"


def check_writable_dir(path: str | Path, func: str = "audit", param: str = "out") -> Path:
    """Create ``path`` (and parents) and write/delete a temporary file in it; a clear error if that fails."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".rashomon-write-test-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be a writable folder. Got {str(path)!r} "
            f"instead ({exc.strerror or exc})."
        ) from None
    return path


def _check_train_size(train_size: Any, n: int, func: str) -> int:
    """Count of training rows: an int >= 10, a fraction in (0, 1), or None: min(500, n // 2)."""
    if train_size is None:
        count = min(500, n // 2)
    elif isinstance(train_size, (bool, np.bool_)) or not isinstance(train_size, numbers.Real):
        raise RashomonInputError(
            f"The 'train_size' parameter of {func} must be a fraction in (0, 1) or a row count >= 10. Got {train_size!r} instead."
        )
    elif isinstance(train_size, numbers.Integral) or (float(train_size).is_integer() and float(train_size) >= 1):
        count = int(train_size) if isinstance(train_size, numbers.Integral) else int(float(train_size))
    elif 0 < float(train_size) < 1:
        count = int(round(float(train_size) * n))
    else:
        raise RashomonInputError(
            f"The 'train_size' parameter of {func} must be a fraction in (0, 1) or a row count >= 10. Got {train_size!r} instead."
        )
    if not 10 <= count <= n - 10:
        raise RashomonInputError(
            f"The 'train_size' parameter of {func} must leave at least 10 rows on each side (n = {n} usable rows). "
            f"Got {train_size!r} ({count} training rows) instead."
        )
    return count


class _Progress:
    """One tqdm bar per phase on a terminal; plain ``[rashomon] ...`` lines otherwise; nothing when disabled."""

    def __init__(self, enabled: bool):
        self.enabled = bool(enabled)
        self.tty = self.enabled and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()

    @contextmanager
    def phase(self, desc: str, total: int = 1):
        checkpoint(f"phase {desc}")  # named points where the signal tests pause the run (no-op otherwise)

        def ticked(update):
            def tick(k=1):
                update(k)
                checkpoint(f"tick {desc}")

            return tick

        if not self.enabled:
            yield ticked(lambda k=1: None)
            return
        t0 = time.perf_counter()
        if self.tty:
            from tqdm.auto import tqdm

            bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=True)
            try:
                yield ticked(bar.update)
            finally:
                bar.close()
        else:
            print(f"[rashomon] {desc} ...", file=sys.stderr, flush=True)
            yield ticked(lambda k=1: None)
            print(f"[rashomon] {desc}: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)


def _frame_sha256(df: pd.DataFrame) -> str:
    return hashlib.sha256(df.to_csv(index=False).encode("utf-8")).hexdigest()


def check_columns(
    data: Any,
    target: Any,
    groups: Any,
    features: Any,
    func: str,
    cols_hint: str = "",
    split: Any = None,
    labels_ok: bool = False,
) -> tuple[dict, list]:
    """Check the target, groups, features (and the ``split`` column) against the columns of ``data`` (a pandas
    or Dask DataFrame: only its column names and dtypes are read); returns ``(groups, features)`` normalised."""
    ncols = len(data.columns)
    repeated = sorted(
        set(map(str, data.columns[data.columns.duplicated()])) & set(_roles(target, groups, features, split))
    )
    if repeated:  # out of core (a Dask frame): the copies are not compared, which would take a pass over the data
        raise RashomonInputError(
            f"The 'data' parameter of {func} must not repeat the names of the columns the audit "
            f"uses. Got {repeated} more than once instead; drop or rename the copies."
        )

    def unknown(param, c, extra=""):
        shown = list(map(str, data.columns[:12])) + (["..."] if ncols > 12 else [])
        return RashomonInputError(
            f"The '{param}' parameter of {func} must name columns of the data{extra}. "
            f"Got unknown column {c!r} instead; columns are {shown}{cols_hint}."
        )

    # ---------------------------------------------------------------- target, groups, features
    if not isinstance(target, str) or target not in data.columns:
        raise unknown("target", target)
    if not isinstance(groups, dict) or not groups:
        raise RashomonInputError(
            f"The 'groups' parameter of {func} must be a non-empty dict of name -> list of columns. Got {groups!r} instead."
        )
    check_group_names(list(groups), func)
    groups = {name: ([cols] if isinstance(cols, str) else list(cols)) for name, cols in groups.items()}
    for name, cols in groups.items():
        if not cols:
            raise RashomonInputError(
                f"The 'groups' parameter of {func} must have non-empty groups. Got an empty group {name!r} instead."
            )
        for c in cols:
            if c not in data.columns:
                raise unknown("groups", c, f" (group {name!r})")
            if c == target:
                raise RashomonInputError(
                    f"The 'groups' parameter of {func} must not contain the target. Got the target "
                    f"column {target!r} in group {name!r} instead."
                )
        if len(set(cols)) != len(cols):
            raise RashomonInputError(
                f"The 'groups' parameter of {func} must not repeat a column within a group. Got {cols} in group {name!r} instead."
            )
    if features is None:
        features = list(dict.fromkeys(c for cols in groups.values() for c in cols))
    else:
        features = [features] if isinstance(features, str) else list(features)
        for c in features:
            if c not in data.columns:
                raise unknown("features", c)
            if c == target:
                raise RashomonInputError(
                    f"The 'features' parameter of {func} must not contain the target. Got the target column {target!r} instead."
                )
        missing_f = [c for cols in groups.values() for c in cols if c not in features]
        if missing_f:
            raise RashomonInputError(
                f"The 'groups' parameter of {func} must use columns among the features. Got {missing_f}, "
                f"which are not in 'features', instead."
            )
        if len(set(features)) != len(features):
            raise RashomonInputError(
                f"The 'features' parameter of {func} must not repeat a column. Got {features} instead."
            )
    if not labels_ok and not (
        pd.api.types.is_numeric_dtype(data.dtypes[target]) or pd.api.types.is_bool_dtype(data.dtypes[target])
    ):
        raise RashomonInputError(
            f"The 'target' parameter of {func} must name a numeric column (or a binary one with "
            f"model_class 'logistic' or 'hinge'). Got {target!r} with dtype {data.dtypes[target]} instead."
        )
    if split is not None:
        if not isinstance(split, str) or split not in data.columns:
            raise unknown("split", split)
        if split == target or split in features:
            raise RashomonInputError(
                f"The 'split' parameter of {func} must name a column that is neither the target "
                f"nor a feature. Got {split!r} instead."
            )
    return groups, features


def split_mask(values: Any, column: str, func: str) -> np.ndarray:
    """The training rows marked by a ``split`` column: True/False or 0/1 values (True, 1: a training row)."""
    s = pd.Series(values)
    ok = pd.api.types.is_bool_dtype(s) or (pd.api.types.is_numeric_dtype(s) and bool(s.isin([0, 1]).all()))
    if not ok:
        shown = sorted(map(str, pd.unique(s.astype(str))))[:4]
        raise RashomonInputError(
            f"The 'split' parameter of {func} must name a column of True/False or 0/1 values (True: "
            f"a training row). Got column {column!r} with values {shown} instead."
        )
    return s.to_numpy(dtype=bool)


def prepare(
    data: Any,
    target: str,
    groups: dict,
    features: list | None,
    *,
    sep: str | None,
    drop_missing: bool,
    func: str = "audit",
    split: str | None = None,
    model_class: str | None = "kernel",
    positive_label: Any = None,
) -> dict:
    """Read and check the table, the target, the groups and the features; one-hot encode; handle missing values.

    Returns a dict: ``work`` (numeric frame: encoded features then the target), ``features`` and ``groups``
    (encoded column names), ``encoding``, ``n_input``, ``missing_by_column``, ``digest``, ``input_name``,
    ``train_mask`` (from the ``split`` column, else None), ``model_class`` (resolved: None picks logistic for
    a binary target), ``labels`` (a classifier's levels, else None), ``raw`` (the table's rows kept, every
    column, in ``work``'s order) and ``groups_raw``. No model is fitted here.
    """
    from ._target import REGRESSION_CLASSES, resolve_target

    # ---------------------------------------------------------------- the table
    original = data
    if isinstance(data, (str, Path)):
        data, digest, input_name, sep_used = _read_table(data, sep, func)
    elif isinstance(data, pd.DataFrame):
        digest, input_name, sep_used = None, "DataFrame", None
    else:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be a DataFrame or a CSV path. Got {type(data).__name__} instead."
        )
    if data.shape[0] == 0 or data.shape[1] == 0:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must have rows and columns. Got a table of shape {data.shape} instead."
        )
    data = data.rename(columns=lambda c: str(c).strip() if isinstance(c, str) else c)
    data, notes = merge_duplicate_columns(data, _roles(target, groups, features, split), func)
    cols_hint = ""
    if sep_used is not None and data.shape[1] == 1:
        cols_hint = f" (the file was read as a single column with separator {sep_used!r}; pass sep / --sep)"

    groups, features = check_columns(
        data, target, groups, features, func, cols_hint, split, labels_ok=model_class not in REGRESSION_CLASSES
    )
    if not isinstance(drop_missing, (bool, np.bool_)):
        raise RashomonInputError(
            f"The 'drop_missing' parameter of {func} must be True or False. Got {drop_missing!r} instead."
        )
    df = data[features + [target] + ([split] if split is not None else [])].copy()
    n_input = len(df)
    na = df.isna()
    missing_by_column = {str(c): int(k) for c, k in na.sum().items() if k}
    rows_na = int(na.any(axis=1).sum())
    if rows_na and not drop_missing:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must have no missing values in the target and features "
            f"(or pass drop_missing=True / --drop-missing). Got {rows_na} of {n_input} rows with missing "
            f"values; per column: {missing_by_column} instead."
        )
    keep = ~na.any(axis=1).to_numpy()
    raw = data.iloc[np.flatnonzero(keep)].reset_index(drop=True)  # the kept rows, every column (a user's model)
    if rows_na:
        df = df[keep].reset_index(drop=True)
    train_mask = None if split is None else split_mask(df[split], split, func)
    y_all, model_class, labels = resolve_target(df[target], target, model_class, positive_label, func)
    if not np.all(np.isfinite(y_all)):
        raise RashomonInputError(
            f"The 'target' parameter of {func} must name a finite column. Got {int(np.sum(~np.isfinite(y_all)))} "
            f"infinite value(s) in {target!r} instead."
        )
    encoding: dict = {}
    expanded: dict = {}
    num_cols = {}
    for c in features:
        s = df[c]
        if pd.api.types.is_bool_dtype(s):
            num_cols[c] = s.astype(float)
            expanded[c] = [c]
        elif pd.api.types.is_numeric_dtype(s):
            v = s.to_numpy(dtype=float)
            if not np.all(np.isfinite(v)):
                raise RashomonInputError(
                    f"The 'features' parameter of {func} must name finite columns. Got {int(np.sum(~np.isfinite(v)))} "
                    f"infinite value(s) in {c!r} instead."
                )
            num_cols[c] = v
            expanded[c] = [c]
        else:
            levels = sorted(map(str, s.astype(str).unique()))
            if len(levels) > _MAX_LEVELS:
                raise RashomonInputError(
                    f"The 'features' parameter of {func} must name numeric columns or categorical ones with at most "
                    f"{_MAX_LEVELS} levels (one-hot encoded). Got {c!r} with {len(levels)} levels "
                    f"(e.g. {levels[:3]}) instead; drop it or encode it first."
                )
            encoding[str(c)] = levels
            sv = s.astype(str)
            expanded[c] = []
            for lv in levels:
                name = f"{c}={lv}"
                num_cols[name] = (sv == lv).to_numpy(dtype=float)
                expanded[c].append(name)
    enc_features = [e for c in features for e in expanded[c]]
    if len(set(enc_features)) != len(enc_features):
        raise RashomonInputError(
            f"The 'features' parameter of {func} must give distinct columns after one-hot encoding. Got {enc_features} instead."
        )
    groups_enc = {name: [e for c in cols for e in expanded[c]] for name, cols in groups.items()}
    work = pd.DataFrame({c: num_cols[c] for c in enc_features})
    work[target] = y_all
    n = len(work)
    if n < 20:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must have at least 20 usable rows (10 to fit, 10 held out). Got {n} "
            f"(of {n_input}; {rows_na} with missing values dropped) instead."
        )
    if digest is None:
        digest = _frame_sha256(original)
    return {
        "work": work,
        "features": enc_features,
        "groups": groups_enc,
        "encoding": encoding,
        "n_input": n_input,
        "missing_by_column": missing_by_column,
        "digest": digest,
        "input_name": input_name,
        "train_mask": train_mask,
        "notes": notes,
        "model_class": model_class,
        "labels": labels,
        "raw": raw,
        "groups_raw": groups,
        "groups_raw_features": features,
    }
