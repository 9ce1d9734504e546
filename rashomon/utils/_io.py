"""Every file the package writes goes through here: written under a temporary name in the target folder,
then renamed into place (:func:`os.replace`, atomic on one file system).

So a file is either absent, the previous complete version, or the new complete version: never a
truncated one, whatever stops the write (a full disk, an exception, Ctrl-C, SIGTERM turned into an
exception by the CLI). A failed write removes its temporary file and raises :class:`FileWriteError`
(an :class:`OSError`) naming the file.

:func:`checkpoint` marks the phases of a long run where the test suite can pause the process to
send it a signal at a known moment; it does nothing unless the ``RASHOMON_TEST_PAUSE`` environment
variable is set (tests only).
"""

from __future__ import annotations

import fnmatch
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["FileWriteError", "atomic_write", "write_text", "write_bytes", "save_figure", "checkpoint"]

_TMP_SUFFIX = ".tmp"


class FileWriteError(OSError):
    """A file could not be written; nothing was left under its name (nor under a temporary one)."""

    #: The path that could not be written.
    path: str


def _temp_name(path: Path) -> Path:
    # hidden, same folder (same file system, so os.replace is a rename), unique per attempt
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{_TMP_SUFFIX}")


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", *, encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on success flush it to disk and rename it to ``path``.

    Parameters
    ----------
    path : str or path-like
        The file to (re)write. Its folder must exist.
    mode : {"w", "wb"}, default="w"
        Text or binary.
    encoding : str, default="utf-8"
        For text mode.

    Yields
    ------
    file object
        Write to it; do not close it.

    Raises
    ------
    FileWriteError
        The file could not be written (the message names it and gives the reason); the temporary
        file is removed and ``path`` is left as it was. Any other exception raised inside the block
        (including KeyboardInterrupt) also removes the temporary file and propagates unchanged.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb'; got {mode!r}")
    path = Path(path)
    tmp = _temp_name(path)
    fh = None
    try:
        try:
            # 0o666 & ~umask, as a plain open() would give (tempfile's mkstemp would give 0o600)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            fh = os.fdopen(fd, mode) if "b" in mode else os.fdopen(fd, mode, encoding=encoding, newline="")
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            checkpoint(f"write {path.name}")
            fh.close()
            fh = None
            os.replace(tmp, path)
        except OSError as exc:
            if isinstance(exc, FileWriteError):
                raise
            err = FileWriteError(
                f"could not write {str(path)!r} ({exc.strerror or exc}); nothing was written under that name"
            )
            err.errno, err.path = exc.errno, str(path)
            raise err from exc
    except BaseException:
        if fh is not None:
            try:
                fh.close()
            except OSError:  # the close of a failed write can fail again (ENOSPC on flush)
                pass
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write`)."""
    with atomic_write(path, "w", encoding=encoding) as fh:
        fh.write(text)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    with atomic_write(path, "wb") as fh:
        fh.write(data)


def save_figure(fig: Any, path: str | os.PathLike, **kwargs: Any) -> None:
    """``fig.savefig(path, **kwargs)`` written atomically; the format comes from the suffix unless given."""
    path = Path(path)
    kwargs.setdefault("format", path.suffix.lstrip(".").lower() or None)
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, **kwargs)


_paused: set = set()


def checkpoint(phase: str) -> None:
    """A named point of a long run (``"fit"``, ``"bootstrap"``, ``"write <file name>"``): a no-op.

    Tests only: with ``RASHOMON_TEST_PAUSE="<pattern>=<marker file>"`` the first phase matching the
    glob pattern creates the marker file and sleeps (up to 120 s), so that a test can signal the
    process at that phase.
    """
    spec = os.environ.get("RASHOMON_TEST_PAUSE")
    if not spec or "=" not in spec:
        return
    pattern, marker = spec.split("=", 1)
    if pattern in _paused or not fnmatch.fnmatchcase(phase, pattern):
        return
    _paused.add(pattern)
    with open(marker, "w") as fh:  # a test artefact, not package output
        fh.write(f"{os.getpid()} {phase}\n")
    time.sleep(120)
