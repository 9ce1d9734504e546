"""Slow reproductions, run by `make repro` (skipped by `make test`)."""

import json
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


@pytest.mark.slow
def test_compas_audit_1000_bootstraps(tmp_path):
    """Fisher et al. §10 on the full data with 1,000 held-out bootstraps (the authors' R run: 11.25 h)."""
    import compas_audit

    t0 = time.perf_counter()
    assert (
        compas_audit.main(
            ["--bootstrap", "1000", "--n-jobs", "2", "--json", str(tmp_path / "c.json"), "--out", str(tmp_path / "out")]
        )
        == 0
    )
    elapsed = time.perf_counter() - t0
    js = json.loads((tmp_path / "c.json").read_text())
    print(
        f"\nCOMPAS audit with 1,000 bootstraps of both groups: {elapsed:.0f} s "
        f"(bootstrap part {js['_meta']['timings']['bootstrap_s']:.0f} s)"
    )
    for g in ("inadmissible", "admissible"):
        r = js[g]
        assert r["mcr_lower"] <= r["mr_ref"] <= r["mcr_upper"]
        assert r["mcr_lower_ci"][0] <= r["mcr_lower"] <= r["mcr_lower_ci"][1] + 0.05
    assert js["admissible"]["mcr_lower"] > js["inadmissible"]["mcr_upper"]
