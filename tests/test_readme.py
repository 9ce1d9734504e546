"""Each Python block of the README runs on its own, in a fresh interpreter (a reader copies one block, not all)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_readme_has_python_blocks():
    assert len(_python_blocks()) >= 2


@pytest.mark.parametrize("i", range(len(_python_blocks())))
def test_readme_block_runs_on_its_own(i, tmp_path):
    code = _python_blocks()[i]
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning:rashomon", "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"README block {i + 1} failed:\n{code}\n{proc.stderr[-3000:]}"
