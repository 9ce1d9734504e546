"""The files an audit run reads and writes (``rashomon audit``): checked before any work starts.

No output may replace an input (``--data``, ``--estimator``) or another output of the same run
(``--json``, the report ``--out/--report-name`` and its figures): paths are compared after resolving
``~``, ``..`` and symbolic links, and by device and inode when both exist (hard links). Folders are
checked writable without being created (the nearest existing folder is test-written), so a run that
fails leaves no folder behind; :func:`remove_created` removes the empty ones a failed write made.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ..utils.validation import RashomonInputError

__all__ = ["check_outputs", "check_writable_target", "missing_dirs", "remove_created"]

_FUNC = "rashomon audit"


def _resolve(p: Any) -> Path:
    return Path(os.path.abspath(Path(p).expanduser())).resolve()


def _same(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _inside(child: Path, folder: Path) -> bool:
    return child != folder and folder in child.parents


def missing_dirs(path: Any) -> list[Path]:
    """The folders that writing into ``path`` would create, deepest first."""
    out, p = [], _resolve(path)
    while not p.exists() and p != p.parent:
        out.append(p)
        p = p.parent
    return out


def check_writable_target(path: Any, param: str, func: str = _FUNC) -> None:
    """``path`` is a writable folder, or one that can be created: its nearest existing ancestor is a folder
    where a temporary file can be written (and deleted). Nothing is created."""
    p = _resolve(path)
    if p.exists() and not p.is_dir():
        reason = "a file"
    else:
        missing = missing_dirs(p)
        base = missing[-1].parent if missing else p
        reason = ""
        if not base.is_dir():
            reason = f"{str(base)!r} is a file, not a folder"
        else:
            try:
                fd, tmp = tempfile.mkstemp(dir=base, prefix=".rashomon-write-test-")
                os.close(fd)
                os.unlink(tmp)
            except OSError as exc:
                reason = exc.strerror or str(exc)
    if reason:
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be a writable folder. Got {str(path)!r} instead ({reason})."
        )


def _figure_file(name: str, prefix: str) -> bool:
    """A file name the report's figures may take (``{prefix}summary`` or ``{prefix}envelope_*``, .png / .svg)."""
    return re.fullmatch(re.escape(prefix) + r"(summary|envelope_.*)\.(png|svg)", name, flags=re.IGNORECASE) is not None


def check_outputs(*, data: Any, estimator: Any, json_path: Any, out: Any, report_name: str, func: str = _FUNC) -> None:
    """Refuse, before any work starts, an output path that is an input or another output of the run.

    Inputs: ``data`` (a file, or a folder of Parquet files: nothing may be written inside it) and
    ``estimator``. Outputs: ``json_path`` and, when ``out`` is not None, ``out / report_name`` and the
    figure files written beside it.
    """
    inputs = [(opt, _resolve(p)) for opt, p in (("--data", data), ("--estimator", estimator)) if p is not None]
    outputs: list[tuple[str, Path]] = []
    if json_path is not None:
        outputs.append(("--json", _resolve(json_path)))
    prefix = "" if report_name == "report.html" else f"{Path(report_name).stem}_"
    out_dir = None if out is None else _resolve(out)
    if out_dir is not None:
        outputs.append(("--out/--report-name", out_dir / report_name))
    for opt, path in outputs:
        for iopt, ipath in inputs:
            if _same(path, ipath) or _inside(path, ipath):
                where = "is" if _same(path, ipath) else "is inside"
                raise RashomonInputError(
                    f"The '{opt}' option of {func} must not overwrite an input. Got {str(path)!r}, which "
                    f"{where} the {iopt} {'folder' if ipath.is_dir() else 'file'} {str(ipath)!r}, instead."
                )
    if out_dir is not None:
        for iopt, ipath in inputs:
            if ipath.is_dir() and (_same(out_dir, ipath) or _inside(out_dir, ipath)):
                raise RashomonInputError(
                    f"The '--out' option of {func} must not be inside the {iopt} folder {str(ipath)!r}. "
                    f"Got {str(out_dir)!r} instead."
                )
        others = inputs + outputs[:1] if json_path is not None else inputs
        for opt, p in others:
            if _same(p.parent, out_dir) and _figure_file(p.name, prefix):
                raise RashomonInputError(
                    f"The '--out' option of {func} must not be the folder of the {opt} file {str(p)!r}: the "
                    f"report's figure {p.name!r} would replace it. Got {str(out_dir)!r} instead."
                )
    if (
        json_path is not None
        and out_dir is not None
        and (_same(outputs[0][1], out_dir) or _inside(out_dir, outputs[0][1]))
    ):
        raise RashomonInputError(
            f"The '--json' option of {func} must be a file outside the --out folder's path. Got "
            f"{str(outputs[0][1])!r}, with --out {str(out_dir)!r}, instead."
        )
    if len(outputs) == 2 and _same(outputs[0][1], outputs[1][1]):
        raise RashomonInputError(
            f"The '--json' option of {func} must not be the HTML report's path. Got {str(outputs[0][1])!r}, "
            "the report --out/--report-name, instead."
        )


def remove_created(folders: list[Path]) -> None:
    """Remove the folders of ``folders`` (deepest first) that exist and are empty: those a failed run created."""
    for d in folders:
        try:
            d.rmdir()
        except OSError:
            break
