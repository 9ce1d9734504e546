"""Files are written whole or not at all (rashomon.utils._io): a write that fails (a full disk, an exception,
Ctrl-C) leaves no truncated file and no temporary file, keeps the previous version, and names the file.

The full-disk tests use a small tmpfs when the system allows mounting one (root), and otherwise a
monkeypatched file that fails with ENOSPC once a byte budget is spent; both run where they can.
"""

import errno
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rashomon
from rashomon.audit.cli import main as cli_main
from rashomon.utils import FileWriteError, atomic_write, save_figure, write_bytes, write_text

_PNG_END = b"IEND\xaeB`\x82"


def _complete(p: Path) -> bool:
    """Whether a written file is whole (each format's closing bytes; JSON parses)."""
    data = p.read_bytes()
    if p.suffix == ".png":
        return data.startswith(b"\x89PNG") and data.endswith(_PNG_END)
    if p.suffix == ".svg":
        return data.rstrip().endswith(b"</svg>")
    if p.suffix == ".html":
        return data.rstrip().endswith(b"</html>")
    if p.suffix == ".json":
        json.loads(data)
        return True
    raise AssertionError(f"unexpected file {p}")


def _check_folder(folder: Path) -> list:
    names = sorted(p.name for p in folder.iterdir())
    assert not [n for n in names if n.endswith(".tmp")], names  # no temporary file left
    for n in names:
        assert _complete(folder / n), f"{n} is truncated"
    return names


# ---------------------------------------------------------------- the helper
def test_atomic_write_replaces_whole_file_with_plain_permissions(tmp_path):
    p = tmp_path / "a.txt"
    write_text(p, "old")
    write_text(p, "new ünïcode\n")
    assert p.read_text(encoding="utf-8") == "new ünïcode\n" and sorted(os.listdir(tmp_path)) == ["a.txt"]
    mask = os.umask(0)
    os.umask(mask)
    assert (p.stat().st_mode & 0o777) == 0o666 & ~mask  # as open() gives, not mkstemp's 0o600
    write_bytes(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"


@pytest.mark.parametrize(
    "exc", [OSError(errno.ENOSPC, "No space left on device"), ValueError("bug"), KeyboardInterrupt()]
)
def test_failed_write_keeps_old_file_and_removes_temporary(tmp_path, exc):
    p = tmp_path / "results.json"
    write_text(p, '{"old": 1}')
    expected = FileWriteError if isinstance(exc, OSError) else type(exc)
    with pytest.raises(expected) as info:
        with atomic_write(p) as fh:
            fh.write('{"new": ' + "1" * 10000)
            raise exc
    assert json.loads(p.read_text()) == {"old": 1}
    assert os.listdir(tmp_path) == ["results.json"]
    if expected is FileWriteError:
        assert isinstance(info.value, OSError) and info.value.errno == errno.ENOSPC
        assert str(info.value) == (
            f"could not write {str(p)!r} (No space left on device); nothing was written under that name"
        )


def test_unwritable_folder_names_the_file(tmp_path):
    with pytest.raises(FileWriteError, match=r"could not write '.*nope/x.json' \(No such file or directory\)"):
        write_text(tmp_path / "nope" / "x.json", "{}")


def test_save_figure_format_from_suffix(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    for name in ("f.png", "f.svg"):
        save_figure(fig, tmp_path / name, dpi=50)
        assert _complete(tmp_path / name)
    plt.close(fig)


# ---------------------------------------------------------------- a full disk
@pytest.fixture(scope="module")
def result():
    rng = np.random.RandomState(0)
    df = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    df["y"] = df["a"] - df["b"] + 0.3 * rng.normal(size=80)
    return rashomon.audit(df, "y", {"g": ["a"], "h": ["b"]}, model_class="linear", cv=3, train_size=40)


@pytest.fixture(scope="module")
def written(result, tmp_path_factory):
    """The files of a complete save, in the order they are written, with their sizes."""
    d = tmp_path_factory.mktemp("complete")
    result.save(out_dir=d, json_path=d / "results.json")
    order = ["results.json"] + [f"{s}.{e}" for s in ("envelope_g", "envelope_h", "summary") for e in ("png", "svg")]
    order.append("report.html")
    assert sorted(order) == _check_folder(d)
    return [(n, (d / n).stat().st_size) for n in order]


def _budget(written, fail_at: str) -> int:
    """Bytes that hold every file written before ``fail_at`` and half of it (in 4 KiB pages, as tmpfs counts)."""
    pages = lambda size: -(-size // 4096)  # noqa: E731
    before = [s for n, s in written[: [n for n, _ in written].index(fail_at)]]
    size = dict(written)[fail_at]
    return 4096 * (sum(pages(s) for s in before) + max(1, pages(size) // 2))


@pytest.fixture
def tmpfs(tmp_path):
    """A function mounting a tmpfs of a given size on a new folder (skips where mount is not allowed)."""
    mounted = []

    def mount(size: int) -> Path:
        d = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
        d.mkdir()
        if os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a tmpfs needs root on a POSIX system (the monkeypatched variant runs instead)")
        r = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)], capture_output=True, text=True
        )
        if r.returncode != 0:
            pytest.skip(f"mount -t tmpfs failed here: {r.stderr.strip()}")
        mounted.append(d)
        return d

    yield mount
    for d in mounted:
        subprocess.run(["umount", str(d)], check=False)


@pytest.mark.parametrize("fail_at", ["results.json", "envelope_h.png", "report.html"])
def test_full_tmpfs_leaves_no_truncated_file(result, written, tmpfs, fail_at, capsys):
    if fail_at == "results.json":
        disk = tmpfs(64 * 1024)
        filler = disk / "filler.bin"
        with pytest.raises(OSError):  # fill it up (a plain write, not the package's)
            with open(filler, "wb") as fh:
                fh.write(b"\x00" * 128 * 1024)
        expected_present = []
    else:
        disk = tmpfs(_budget(written, fail_at))
        expected_present = sorted(n for n, _ in written[: [n for n, _ in written].index(fail_at)])
    with pytest.raises(FileWriteError, match=rf"could not write '{disk}/{fail_at}' \(No space left on device\)"):
        result.save(out_dir=disk, json_path=disk / "results.json")
    names = (
        [n for n in _check_folder(disk) if n != "filler.bin"]
        if fail_at != "results.json"
        else [n for n in os.listdir(disk) if n != "filler.bin"]
    )
    assert names == expected_present


def test_full_tmpfs_cli_exit_1_names_the_file(written, tmpfs, tmp_path, capsys):
    rng = np.random.RandomState(0)
    df = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    df["y"] = df["a"] - df["b"] + 0.3 * rng.normal(size=80)
    data = tmp_path / "t.csv"
    df.to_csv(data, index=False)
    disk = tmpfs(_budget(written, "envelope_g.svg"))
    code = cli_main(
        [
            "audit",
            "--data",
            str(data),
            "--target",
            "y",
            "--group",
            "g=a",
            "--group",
            "h=b",
            "--model-class",
            "linear",
            "--cv",
            "3",
            "--train-size",
            "40",
            "--quiet",
            "--out",
            str(disk),
            "--json",
            str(disk / "results.json"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1 and "MCR-" in out  # the results are printed
    assert err.startswith(
        f"rashomon audit: error: writing the report failed (FileWriteError: could not write "
        f"'{disk}/envelope_g.svg' (No space left on device)"
    )
    assert "Traceback" not in err and _check_folder(disk) == ["envelope_g.png", "results.json"]


@pytest.mark.parametrize("fail_at", ["results.json", "envelope_g.svg", "summary.png", "report.html"])
def test_write_failing_midway_monkeypatched(result, written, tmp_path, monkeypatch, fail_at):
    """Without tmpfs: every file write fails with ENOSPC once a byte budget is spent; an older complete
    version of the JSON survives a failed rewrite."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text('{"previous": "run"}')
    budget = [sum(s for n, s in written[: [n for n, _ in written].index(fail_at)]) + dict(written)[fail_at] // 2]
    real_fdopen = os.fdopen

    class Disk:
        def __init__(self, fh):
            self._fh = fh

        def write(self, data):
            if len(data) > budget[0]:
                self._fh.write(data[: budget[0]])
                budget[0] = 0
                raise OSError(errno.ENOSPC, "No space left on device")
            budget[0] -= len(data)
            return self._fh.write(data)

        def __getattr__(self, name):
            return getattr(self._fh, name)

    monkeypatch.setattr(os, "fdopen", lambda *a, **k: Disk(real_fdopen(*a, **k)))
    with pytest.raises(FileWriteError, match=rf"could not write '{out}/{fail_at}' \(No space left on device\)"):
        result.save(out_dir=out, json_path=out / "results.json")
    monkeypatch.undo()
    names = _check_folder(out)
    before = [n for n, _ in written[: [n for n, _ in written].index(fail_at)]]
    assert names == sorted(set(before) | {"results.json"})
    if fail_at == "results.json":
        assert json.loads((out / "results.json").read_text()) == {"previous": "run"}


def test_no_direct_writes_left_in_the_package():
    """Every write in rashomon/ and examples/ goes through rashomon.utils._io (a grep for the raw calls)."""
    import re

    root = Path(__file__).resolve().parents[1]
    raw = re.compile(
        r"\.write_text\(|\.write_bytes\(|\.savefig\((?!buf\b)|json\.dump\(|(?<!self)\.to_(json|csv|parquet)\((?!buf\b|index=False\))"
        r"|open\([^)]*[\"'][wax]b?\+?[\"']"
    )
    bad = []
    for f in sorted([*root.joinpath("rashomon").rglob("*.py"), *root.joinpath("examples").glob("*.py")]):
        if f.name == "_io.py":  # the helper itself
            continue
        for k, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if raw.search(line.split("#")[0]):
                bad.append(f"{f.relative_to(root)}:{k}: {line.strip()}")
    assert not bad, "\n".join(bad)
