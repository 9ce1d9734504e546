"""The built documentation site (``make docs``): four kinds of page open in headless Chromium with every image
decoded, and no broken internal link or anchor on them.

Skipped when the site has not been built (``make test`` runs before ``make docs``; ``.ci/run`` runs this file
again after ``make docs``). Screenshots are written to ``docs/_build/screenshots/`` to be looked at.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "_build" / "html"
PAGES = {
    "index": "index.html",
    "user guide (MCR)": "user_guide/mcr.html",
    "gallery (COMPAS)": "auto_examples/compas_audit.html",
    "API (RashomonSet)": "generated/rashomon.RashomonSet.html",
    "user guide (fairness)": "user_guide/fairness.html",
    "gallery (fairness)": "auto_examples/compas_fairness.html",
    "gallery (envelope)": "auto_examples/wine_envelope.html",
}
# figures each gallery page shows, once each (the examples save their figures and some keep them open: a second
# scraper used to show every such figure twice)
GALLERY_FIGURES = {
    "compas_fairness": 4,
    "wine_envelope": 2,
    "multiplicity": 1,
    "pd_examples": 2,
    "uncertainty_examples": 2,
}

pytestmark = pytest.mark.skipif(
    not (SITE / "index.html").exists(),
    reason="the site is not built (make docs); .ci/run runs this test after make docs",
)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.imgs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if tag == "img" and a.get("src"):
            self.imgs.append(a["src"])


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@pytest.mark.parametrize("name", list(PAGES))
def test_internal_links_and_images_resolve(name):
    page = SITE / PAGES[name]
    assert page.exists(), f"{name}: {page} was not built"
    links = _parse(page)
    broken = []
    for src in links.imgs:
        if urlsplit(src).scheme in ("http", "https", "data"):
            continue
        if not (page.parent / unquote(urlsplit(src).path)).resolve().exists():
            broken.append(f"image {src}")
    for href in links.hrefs:
        parts = urlsplit(href)
        if parts.scheme or href.startswith("mailto:"):
            continue
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            broken.append(f"link {href}")
            continue
        if parts.fragment and target.suffix == ".html":
            if parts.fragment not in _parse(target).ids:
                broken.append(f"anchor {href}")
    assert broken == [], f"{name}: {broken}"


def test_gallery_page_shows_the_examples_figures_and_output():
    page = (SITE / PAGES["gallery (COMPAS)"]).read_text(encoding="utf-8")
    assert "sphx-glr-script-out" in page  # the printed output
    imgs = _parse(SITE / PAGES["gallery (COMPAS)"]).imgs
    assert sum("sphx_glr_compas_audit_0" in s for s in imgs) >= 3, imgs  # the example's three figures


@pytest.mark.parametrize("example", sorted(GALLERY_FIGURES))
def test_gallery_shows_each_figure_once(example):
    page = SITE / "auto_examples" / f"{example}.html"
    imgs = {s for s in _parse(page).imgs if f"sphx_glr_{example}_0" in s and "thumb" not in s}
    assert len(imgs) == GALLERY_FIGURES[example], sorted(imgs)


def test_fairness_example_runs_within_a_minute():
    page = (SITE / PAGES["gallery (fairness)"]).read_text(encoding="utf-8")
    m = re.search(r"Total running time of the script:.*?\((\d+) minutes ([\d.]+) seconds\)", page, flags=re.S)
    assert m, "no running time on the page"
    assert 60 * int(m.group(1)) + float(m.group(2)) < 60


def test_fairness_guide_shows_its_figures():
    imgs = _parse(SITE / PAGES["user guide (fairness)"]).imgs
    assert sum("sphx_glr_compas_fairness_00" in s for s in imgs) == 4, imgs
    assert any("fairness_report" in s for s in imgs), imgs
    mcr = _parse(SITE / PAGES["user guide (MCR)"]).imgs
    assert any("sphx_glr_wine_envelope_001" in s for s in mcr), mcr


_CHECK = """<script>
window.__errors = [];
window.addEventListener('error', e => {
  const src = String(e.target && (e.target.src || e.target.href) || '');
  if (!src || src.startsWith('file:')) window.__errors.push(String(e.message || src));  // local resources only
}, true);
document.addEventListener('DOMContentLoaded', () => {
  // poll until every image is decoded, then wait for MathJax (served from the site's own _static) to typeset
  let waited = 0;
  const report = () => {
    const imgs = Array.from(document.images);
    const maths = Array.from(document.querySelectorAll('.math'));
    const pre = document.createElement('pre'); pre.id = 'checks';
    pre.textContent = JSON.stringify({
      images: imgs.map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0})),
      errors: window.__errors,
      maths: maths.length,
      typeset: maths.filter(m => m.querySelector('mjx-container')).length,
      mathjax: !!(window.MathJax && window.MathJax.version),
    });
    document.body.appendChild(pre);
  };
  const done = () => {
    const imgs = Array.from(document.images);
    if (imgs.some(i => !i.complete) && waited < 8000) { waited += 100; setTimeout(done, 100); return; }
    const mj = window.MathJax;
    if (document.querySelector('.math') && !(mj && mj.startup && mj.startup.promise) && waited < 8000) {
      waited += 100; setTimeout(done, 100); return;  // MathJax's script (deferred) has not started yet
    }
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(report, report); else report();
  };
  done();
});
</script>"""


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.mark.parametrize("name", list(PAGES))
def test_page_in_headless_chromium(name, tmp_path):
    binary = _chromium()
    if binary is None:
        pytest.skip("no Chromium binary on PATH; .ci/run installs the Debian package chromium")
    page = SITE / PAGES[name]
    probe = page.with_name(f".probe-{page.name}")
    probe.write_text(page.read_text(encoding="utf-8").replace("<head>", "<head>" + _CHECK, 1), encoding="utf-8")
    base = [
        binary,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
    ]
    try:
        proc = subprocess.run(
            base + [f"--user-data-dir={tmp_path / 'p1'}", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
            capture_output=True,
            text=True,
            timeout=180,
        )
        shots = SITE.parent / "screenshots"
        shots.mkdir(exist_ok=True)
        shot = shots / (re.sub(r"[^a-z]+", "_", name.lower()).strip("_") + ".png")
        subprocess.run(
            base
            + [
                f"--user-data-dir={tmp_path / 'p2'}",
                "--virtual-time-budget=10000",
                f"--screenshot={shot}",
                "--window-size=1280,1600",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        probe.unlink(missing_ok=True)
    m = re.search(r'<pre id="checks"[^>]*>(.*?)</pre>', proc.stdout, flags=re.S)
    assert m, f"the check script did not run: {proc.stderr[-2000:]}"
    checks = json.loads(html.unescape(m.group(1)))
    bad = [im["src"] for im in checks["images"] if not im["ok"]]
    assert bad == [], f"{name}: images not decoded: {bad}"
    assert checks["errors"] == [], checks["errors"]
    # every formula is typeset by the site's own MathJax (no network): the user guide's MCR page has maths
    if name == "user guide (MCR)":
        assert checks["mathjax"] and checks["maths"] > 10, (
            f"MathJax did not typeset (a stale site? make docs): {checks}"
        )
    assert checks["typeset"] == checks["maths"], f"{name}: {checks['maths'] - checks['typeset']} formulas not typeset"
    assert shot.exists() and shot.stat().st_size > 10_000
