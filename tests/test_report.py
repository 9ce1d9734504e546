"""The HTML audit report: what it states, its figures, and the page as a browser renders it.

The browser test drives headless Chromium through its command line (no Python
dependency): a screenshot of the report, and ``--dump-dom`` of a test-only copy
of the page carrying a small script that records each image's ``naturalWidth``
and any error (``window.onerror``, failed resources, ``console.error``) into a
``<pre id="checks">``. It is skipped only when no Chromium binary exists
(``.ci/run`` installs the Debian package ``chromium``).
"""

import dataclasses
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rashomon
from rashomon.audit import _report

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from compas_audit import GROUPS, compas_frame  # noqa: E402


@pytest.fixture(scope="module")
def result():
    df = compas_frame().sample(n=400, random_state=0).reset_index(drop=True)
    return rashomon.audit(
        df, "v_decile_score", GROUPS, model_class="linear", train_size=120, cv=3, bootstrap=5, random_state=0, n_jobs=1
    )


@pytest.fixture(scope="module")
def report(result, tmp_path_factory):
    import matplotlib

    matplotlib.use("Agg")
    out = tmp_path_factory.mktemp("report")
    result.to_html(out / "report.html")
    return out / "report.html"


def _text(page: str) -> str:
    """Visible text of a page, whitespace collapsed."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r'src="data:[^"]*"', "", page)
    page = re.sub(r"</?(b|i|sup|sub|code|span|a)\b[^>]*>", "", page)  # inline tags: no space
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _png_size(path: Path) -> tuple:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


# ------------------------------------------------------------------ what the page states


def test_report_states_what_was_done(result, report):
    text = _text(report.read_text(encoding="utf-8"))
    meta = result.meta
    assert "squared error" in text
    assert f"ε = {result.epsilon_abs:.4g}" in text
    assert str(meta["epsilon_rule"]) in text
    for label in ("penalty α (ridge)", "norm bound"):
        assert label in text
    assert f"{meta['hyperparameters']['norm_bound']:.4g}" in text
    assert "No categorical column needed encoding" in text
    assert "priors_count, age" in text  # standardised columns
    assert "The input table had 400 rows." in text and "dropped" not in text
    assert "400 rows were used: 120 (seeded random) fitted the reference" in text
    assert "95% intervals by percentile bootstrap over held-out rows, from 5 bootstrap resamples" in text
    assert f"rashomon {rashomon.__version__}" in text
    assert meta["input_sha256"] in text and meta["date"] in text
    # every group: bounds as in the table, and whether they are tight
    for g in result.groups.values():
        assert f"{g.mcr_lower:.4f}" in text and f"{g.mcr_upper:.4f}" in text
        assert g.mcr.lower_tight and g.mcr.upper_tight
    assert text.count("Both ends are tight: a model of the set attains each bound within 2−20") == 2
    # how to read it
    assert "How to read this" in text
    for s in (
        "MR = 1: scrambling changes nothing",
        "MR > 1: the model relies on the group",
        "MR < 1: scrambling the variables improves the loss",
        "not relying on the group in a helpful way",
    ):
        assert s in text


def test_report_sentences_follow_the_results(result, tmp_path):
    g = result.groups["admissible"]
    loose = dataclasses.replace(g.mcr, upper_tight=False, upper_gap=0.0123)
    groups = {**result.groups, "admissible": dataclasses.replace(g, mcr=loose)}
    meta = {
        **result.meta,
        "n_rows_input": 410,
        "n_rows_used": 400,
        "n_rows_dropped": 10,
        "missing_by_column": {"age": 7, "race": 3, "sex": 0},
        "n_bootstrap": 0,
        "encoding": {"charge": ["F", "M"]},
    }
    res = dataclasses.replace(result, groups=groups, bootstrap=0, meta=meta)
    figs = {"summary": ""}  # figures are not what is checked here
    res.to_html(tmp_path / "r.html", figures=figs)
    text = _text((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert text.count("Both ends are tight") == 1
    assert (
        f"MCR+ is not tight: the certified bound is {g.mcr_upper:.4f}, the best model found has MR "
        f"{g.mcr_upper - 0.0123:.4f} (0.0123 below)"
    ) in text
    assert "MCR− is tight within 2−20" in text
    assert "10 rows with missing values were dropped (missing values: age 7, race 3)" in text
    assert "No bootstrap was run" in text and "bootstrap resamples" not in text
    assert "charge → F, M" in text


def test_report_without_meta_falls_back(result, tmp_path):
    res = dataclasses.replace(result, meta={})
    res.to_html(tmp_path / "r.html", figures={})
    text = _text((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert f"rashomon {rashomon.__version__}" in text
    assert f"{result.n_train + result.n_test} rows were used" in text
    assert "squared error" in text and "norm bound" in text
    assert "5 bootstrap resamples" in text


def test_figures_are_large_self_contained_and_safely_named(result, report, tmp_path):
    page = report.read_text(encoding="utf-8")
    srcs = re.findall(r'<img [^>]*src="([^"]+)"', page)
    assert len(srcs) == len(result.groups) + 1 and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing loaded from outside the file
    for stem in ("envelope_inadmissible", "envelope_admissible", "summary"):
        w, _ = _png_size(report.parent / f"{stem}.png")
        assert w >= 1000
        assert (report.parent / f"{stem}.svg").stat().st_size > 1000
    # group names that are not file names
    res = dataclasses.replace(
        result, groups={"race / sex": result.groups["inadmissible"], "Race  Sex": result.groups["admissible"]}
    )
    figs = _report.write_figures(res, tmp_path)
    assert list(figs) == ["envelope_race_sex", "envelope_Race_Sex_2", "summary"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{k}.{e}" for k in figs for e in ("png", "svg"))


def test_envelope_marks_the_reference_and_frames_the_interval(result):
    import matplotlib.pyplot as plt

    g = result.groups["inadmissible"]
    ref = g.mcr.reference_model
    d = result.plot("inadmissible")
    labels = [t.get_text() for t in d.ax_.get_legend().get_texts()]
    assert any(s.startswith("reference (MR") for s in labels) and "loss minimiser" not in " ".join(labels)
    np.testing.assert_allclose(d.reference_.get_offsets()[0], [ref.mr, ref.e_orig])
    x0, x1 = d.ax_.get_xlim()
    y0, y1 = d.ax_.get_ylim()
    assert x0 < min(g.mcr_lower, ref.mr) and max(g.mcr_upper, ref.mr) < x1
    assert (x1 - x0) < 3 * (g.mcr_upper - g.mcr_lower) + 1.0  # framed around the interval, not the whole path
    assert y0 < ref.e_orig < result.epsilon_abs < y1
    assert d.m_grid.size >= 500  # the envelope is drawn on a dense grid, whatever the number of steps
    plt.close("all")


# ------------------------------------------------------------------ in a browser

_CHECK_SCRIPT = """<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(e.message || ("failed to load " + ((e.target && (e.target.src || e.target.href)) || "a resource")).slice(0, 80));
  }, true);
  var orig = console.error;
  console.error = function () { errors.push(Array.prototype.join.call(arguments, " ")); orig.apply(console, arguments); };
  window.addEventListener("load", function () {
    var imgs = Array.prototype.map.call(document.images, function (im) {
      return {alt: im.alt, complete: im.complete, naturalWidth: im.naturalWidth, naturalHeight: im.naturalHeight};
    });
    var pre = document.createElement("pre");
    pre.id = "checks";
    pre.textContent = JSON.stringify({images: imgs, errors: errors});
    document.body.appendChild(pre);
  });
})();
</script>"""


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        binary,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def test_report_in_headless_chromium(result, report, tmp_path):
    binary = _chromium()
    if binary is None:
        pytest.skip("no Chromium binary (chromium, chromium-browser or google-chrome) on PATH; .ci/run installs it")
    page = report.read_text(encoding="utf-8")
    probe = tmp_path / "report_probe.html"
    probe.write_text(page.replace("<head>", "<head>" + _CHECK_SCRIPT, 1), encoding="utf-8")

    t0 = time.perf_counter()
    shot = tmp_path / "report.png"
    proc = _run_chromium(
        binary, tmp_path / "profile1", f"--screenshot={shot}", "--window-size=1280,4000", report.as_uri()
    )
    assert shot.exists(), proc.stderr[-2000:]
    assert _png_size(shot) == (1280, 4000)
    keep = os.environ.get("RASHOMON_REPORT_SCREENSHOT")
    if keep:  # to look at it: RASHOMON_REPORT_SCREENSHOT=/tmp/report.png pytest tests/test_report.py
        shutil.copy(shot, keep)

    proc = _run_chromium(binary, tmp_path / "profile2", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri())
    elapsed = time.perf_counter() - t0
    dom = proc.stdout
    m = re.search(r'<pre id="checks">(.*?)</pre>', dom, flags=re.S)
    assert m, f"the check script did not run (chromium exit {proc.returncode}): {proc.stderr[-2000:]}"
    checks = json.loads(html.unescape(m.group(1)))
    # every image decoded, at the resolution it was rendered at
    assert len(checks["images"]) == len(result.groups) + 1
    for im in checks["images"]:
        assert im["complete"] and im["naturalWidth"] >= 1000, im
    assert checks["errors"] == []
    console_errors = [
        ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln and ("ERROR" in ln or "error" in ln.lower())
    ]
    assert console_errors == []
    # the key numbers, formatted as in the table, are in the rendered text
    text = _text(dom)
    for g in result.groups.values():
        for v in (g.mr_ref, g.mcr_lower, g.mcr_upper):
            assert f"{v:.4f}" in text
    assert "How to read this" in text and "Both ends are tight" in text
    assert elapsed < 120
