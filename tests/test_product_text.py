"""Product text speaks of the product: the README, the documentation sources, the package and the examples name
versions and dates, never the working sessions, issue numbers or commit hashes of how they were built.

``CHANGELOG.md`` is the history by version and is not checked. A dataset's provenance may cite the commit of
its source repository ("commit c062fbb5"): that is where the data came from, not how the package was built.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".rst", ".txt", ".html", ".toml", ".cfg", ".j2", ".css"}
SKIP_DIRS = {"_build", "auto_examples", "generated", "__pycache__", ".ipynb_checkpoints"}

PATTERNS = {
    "a working session": re.compile(r"\b[Ss]essions? \d|\b(this|that|previous|next|last) session\b|status by session"),
    "an issue number": re.compile(r"\b[Ii]ssues? #?\d+|\bbefore issue\b|\bthe issue('s)? (records|quotes|summary)"),
    "a commit hash": re.compile(r"\((?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}\)|\b[0-9a-f]{7,40} →"),
}


def _product_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for top in ("docs", "rashomon", "examples", "solvers", "benchmarks", "tools"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and not SKIP_DIRS.intersection(path.parts):
                files.append(path)
    return files


def _hits(text: str) -> list[tuple[int, str, str]]:
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for what, pattern in PATTERNS.items():
            if pattern.search(line):
                out.append((lineno, what, line.strip()))
    return out


@pytest.mark.parametrize(
    "line",
    [
        "before issue 28's item 2 (734004c)",
        "→ session 8 → now",
        "Session 9: make test back under 15 minutes",
        "faster classifier queries are issue 26's item 3",
        "a step 734004c → now",
        "measured in this session",
    ],
)
def test_the_patterns_catch_history(line):
    assert _hits(line), line


@pytest.mark.parametrize(
    "line",
    [
        "propublica/compas-analysis, commit c062fbb5, 2016",
        "measured 2026-11-26 for version 0.4.0",
        "the colour (#1f77b4) and the seed (12345678)",
        "a fitted session of the dask client",
    ],
)
def test_the_patterns_spare_product_text(line):
    assert not _hits(line), line


def test_product_text_names_no_session_issue_or_commit():
    found = []
    for path in _product_files():
        for lineno, what, line in _hits(path.read_text(encoding="utf-8", errors="replace")):
            found.append(f"{path.relative_to(ROOT)}:{lineno}: {what}: {line[:120]}")
    assert found == [], "product text speaks of how it was built:\n" + "\n".join(found)


def test_no_status_by_session_page():
    assert not (ROOT / "docs" / "status.md").exists()
    assert "status" not in (ROOT / "docs" / "index.rst").read_text(encoding="utf-8").split()
