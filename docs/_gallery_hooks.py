"""sphinx-gallery hooks of the rashomon docs, importable by name so that Sphinx can cache the configuration.

The examples save their figures to files (as a user running them does), and some also leave them open. One
scraper shows each figure once, one per row at the page's width: the figures still open, or, when an example
closed its figures (the audit's report writer does), the PNGs it wrote below its folder during the build. A PNG
written while figures are open is the same figure saved; showing both drew every figure twice.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

_START = time.time()  # PNGs older than this build are stale outputs of earlier runs
_SEEN: dict[str, float] = {}


def _written_pngs(block_vars) -> list[Path]:
    """PNGs written below the example's folder since the last block (each reported once)."""
    src = Path(block_vars["src_file"]).parent
    out = []
    for png in sorted(src.rglob("*.png")):
        if "auto_examples" in png.parts:
            continue
        mtime = png.stat().st_mtime
        if mtime < _START or _SEEN.get(str(png)) == mtime:
            continue
        _SEEN[str(png)] = mtime
        out.append(png)
    return out


def _scrape(block, block_vars, gallery_conf):
    import matplotlib.pyplot as plt
    from sphinx_gallery.scrapers import figure_rst

    written = _written_pngs(block_vars)
    paths = []
    if plt.get_fignums():  # open figures: the saved PNGs are copies of them
        for num in plt.get_fignums():
            dest = next(block_vars["image_path_iterator"])
            plt.figure(num).savefig(dest)
            paths.append(dest)
        plt.close("all")
    else:
        for png in written:
            dest = next(block_vars["image_path_iterator"])
            shutil.copyfile(png, dest)
            paths.append(dest)
    # one figure per row at the page's width (sphinx-gallery puts several figures of one block side by side, where
    # each is a thumbnail too small to read)
    return "".join(figure_rst([path], gallery_conf["src_dir"]) for path in paths)


def _get_sg_image_scraper():
    return _scrape


def reset_state(gallery_conf, fname):
    """Close every figure between examples."""
    import matplotlib.pyplot as plt

    plt.close("all")
