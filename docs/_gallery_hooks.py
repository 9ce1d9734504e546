"""sphinx-gallery hooks of the rashomon docs, importable by name so that Sphinx can cache the configuration.

The examples save their figures to files (as a user running them does), so besides matplotlib's open
figures every PNG an example writes below its folder during the build is shown on its gallery page.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

_START = time.time()  # PNGs older than this build are stale outputs of earlier runs
_SEEN: dict[str, float] = {}


def _new_pngs(block, block_vars, gallery_conf):
    from sphinx_gallery.scrapers import figure_rst

    src = Path(block_vars["src_file"]).parent
    paths = []
    for png in sorted(src.rglob("*.png")):
        if "auto_examples" in png.parts:
            continue
        mtime = png.stat().st_mtime
        if mtime < _START or _SEEN.get(str(png)) == mtime:
            continue
        _SEEN[str(png)] = mtime
        dest = next(block_vars["image_path_iterator"])
        shutil.copyfile(png, dest)
        paths.append(dest)
    return figure_rst(paths, gallery_conf["src_dir"])


def _get_sg_image_scraper():
    return _new_pngs


def reset_state(gallery_conf, fname):
    """Close every figure between examples."""
    import matplotlib.pyplot as plt

    plt.close("all")
