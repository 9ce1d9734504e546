"""Reading an audit's CSV table (:func:`rashomon.audit`): the separator sniffed unless given, binary, empty and
undecodable files refused, numbers with a decimal comma read as numbers (with a note), and repeated header names
kept as written, then merged when the copies are
identical or refused when the audit uses a name whose copies differ."""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..utils.validation import RashomonInputError

__all__ = ["merge_duplicate_columns"]


def _sniff_sep(head: str) -> str:
    lines = [ln for ln in head.splitlines() if ln.strip()][:20]
    if not lines:
        return ","
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def _read_table(path: Any, sep: str | None, func: str) -> tuple[pd.DataFrame, str, str, str]:
    """Read a CSV path; returns (frame, sha256 of the file bytes, file name, separator used)."""
    path = Path(path)
    if not path.is_file():
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be an existing CSV file. Got {str(path)!r} instead "
            f"({'a folder' if path.is_dir() else 'no such file'})."
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be a readable CSV file. Got {str(path)!r} instead ({exc.strerror})."
        ) from None
    digest = hashlib.sha256(raw).hexdigest()
    if not raw.strip():
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be a CSV file with a header and rows. Got an empty file {path.name!r} instead."
        )
    head = raw[:8192]
    if path.suffix in (".gz", ".zip", ".bz2", ".xz"):
        head = b""  # compressed: let pandas decompress, sniff from its first lines below
    elif b"\x00" in head:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be a text CSV file. Got {path.name!r}, which looks binary "
            f"(NUL bytes in its first {len(head)} bytes) instead."
        )
    if sep is None:
        if head:
            sep = _sniff_sep(head.decode("utf-8", errors="replace"))
        else:
            try:
                sep = _sniff_sep(
                    "\n".join(
                        pd.read_csv(path, sep="\x1f", header=None, nrows=20, engine="python").iloc[:, 0].astype(str)
                    )
                )
            except Exception:  # noqa: BLE001 - fall back to the default separator
                sep = ","
    elif not isinstance(sep, str) or not sep:
        raise RashomonInputError(
            f"The 'sep' parameter of {func} must be a non-empty string or None (sniffed). Got {sep!r} instead."
        )
    try:
        df = pd.read_csv(path, sep=sep)
        header = (
            _header_names(raw, sep)
            if head
            else [
                None if pd.isna(v) else str(v)
                for v in pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str).iloc[0]
            ]
        )
    except UnicodeDecodeError as exc:
        raise RashomonInputError(
            f"The 'data' parameter of {func} must be a UTF-8 text CSV file. Got {path.name!r}, which could not be decoded ({exc.reason}) instead."
        ) from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:  # EmptyDataError is a ValueError
        raise RashomonInputError(
            f"The 'data' parameter of {func} could not be read as CSV (sep={sep!r}): {exc}"
        ) from None
    df.attrs[_NOTES] = _decimal_commas(df, sep)
    if header is not None and len(header) == df.shape[1]:
        # pandas renames a repeated header name (a, a -> a, a.1): keep the names as written, so that the
        # copies are merged or refused by merge_duplicate_columns, never audited under an invented name
        counts = pd.Series([h for h in header if h]).value_counts()
        df.columns = [h if h and counts[h] > 1 else c for h, c in zip(header, df.columns)]
    return df, digest, path.name, sep


#: ``DataFrame.attrs`` key of the reading's notes (carried by pandas through the renames to
#: :func:`merge_duplicate_columns`, which adds them to the audit's notes)
_NOTES = "rashomon_read_notes"
_DECIMAL_COMMA = re.compile(r"^[+-]?(\d+,\d*|,\d+|\d+)([eE][+-]?\d+)?$")


def _decimal_commas(df: pd.DataFrame, sep: str) -> list:
    """Text columns whose every value is a number written with a decimal comma (``0,5``; a file separated by
    ``;``, tab or ``|``, as spreadsheets in many locales write them) are read as numbers, in place; one note
    per column converted."""
    notes: list = []
    if sep == ",":
        return notes
    for i in range(df.shape[1]):
        col = df.iloc[:, i]
        if not (col.dtype == object or pd.api.types.is_string_dtype(col)):
            continue
        vals = col.dropna().astype(str).str.strip()
        if vals.empty or not vals.str.contains(",", regex=False).any() or not vals.str.match(_DECIMAL_COMMA).all():
            continue
        num = pd.to_numeric(col.astype(str).str.strip().str.replace(",", ".", regex=False).where(col.notna()))
        df.isetitem(i, num)
        notes.append(
            f"Column {str(df.columns[i])!r} was read as numbers written with a decimal comma (e.g. "
            f"{vals.iloc[0]!r} = {float(num.dropna().iloc[0]):g})."
        )
    return notes


def _header_names(raw: bytes, sep: str) -> list | None:
    """The header row as written (the csv module on the first record), or None if it cannot be parsed."""
    import io

    text = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8-sig", errors="replace", newline="")
    try:
        return next(csv.reader(text, delimiter=sep)) if len(sep) == 1 else text.readline().rstrip("\r\n").split(sep)
    except (csv.Error, StopIteration):
        return None


def _roles(target: Any, groups: Any, features: Any, split: Any) -> dict:
    """{column: what the audit uses it as}, from the arguments before they are checked (for error messages)."""
    roles: dict = {}

    def add(cols: Any, role: str) -> None:
        for c in [cols] if isinstance(cols, str) else cols if isinstance(cols, (list, tuple)) else []:
            if isinstance(c, str):
                roles[c] = role

    add(split, "the split column")
    add(features, "a feature")
    for name, cols in groups.items() if isinstance(groups, dict) else []:
        add(cols, f"a column of group {name!r}")
    add(target, "the target")
    return roles


def merge_duplicate_columns(data: pd.DataFrame, roles: dict, func: str = "audit") -> tuple[pd.DataFrame, list]:
    """Columns sharing a name: identical copies are merged into one (with a note); copies that differ are an
    error if the audit uses the name (``roles``: {column: its role}), else left out. Returns ``(data, notes)``."""
    read_notes = list(data.attrs.pop(_NOTES, None) or [])
    cols = pd.Index(data.columns)
    repeated = list(dict.fromkeys(c for c in cols[cols.duplicated()]))
    if not repeated:
        return data, read_notes
    keep = np.ones(len(cols), dtype=bool)
    notes = read_notes
    for name in repeated:
        loc = cols.get_loc(name)  # a boolean mask or a slice for a repeated name
        pos = np.flatnonzero(loc) if isinstance(loc, np.ndarray) else np.arange(len(cols))[loc]
        first = data.iloc[:, pos[0]]
        n_diff = max(_rows_differing(first, data.iloc[:, p]) for p in pos[1:])
        where = f"{len(pos)} columns named {name!r} (columns {', '.join(str(p + 1) for p in pos)})"
        if n_diff and name in roles:
            raise RashomonInputError(
                f"The 'data' parameter of {func} must not repeat the name of a column the audit uses "
                f"({name!r} is {roles[name]}) with different values. Got {where} that differ in "
                f"{n_diff} of {len(data)} rows instead; rename or drop the copies."
            )
        keep[pos[1:] if not n_diff else pos] = False
        notes.append(
            f"The header repeats {name!r}: {where}; "
            + (
                "the copies are identical and were merged into one."
                if not n_diff
                else f"the copies differ in {n_diff} rows and the audit does not use them, so they were left out."
            )
        )
    return data.loc[:, keep], notes


def _rows_differing(a: pd.Series, b: pd.Series) -> int:
    """Rows where two columns differ (missing in both counts as equal; values of incomparable types differ)."""
    try:
        same = (a.to_numpy() == b.to_numpy()) | (a.isna().to_numpy() & b.isna().to_numpy())
    except (TypeError, ValueError):
        return len(a)
    return int(len(a) - np.count_nonzero(same))
