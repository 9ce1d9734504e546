"""Bundled intersphinx inventories for NumPy, scikit-learn, matplotlib and Python.

The docs are built offline (CI machines reach package registries only), so intersphinx cannot download
``objects.inv`` from the projects' sites. The names these pages link to are listed here with their pages
on the official sites, and :func:`write_inventories` writes them in Sphinx's inventory format (version 2)
at build time. A name missing here is a nitpicky warning, so the list grows with the docstrings.
"""

from __future__ import annotations

import zlib
from pathlib import Path

SITES = {
    "python": ("Python", "3", "https://docs.python.org/3/"),
    "numpy": ("NumPy", "stable", "https://numpy.org/doc/stable/"),
    "sklearn": ("scikit-learn", "stable", "https://scikit-learn.org/stable/"),
    "matplotlib": ("Matplotlib", "stable", "https://matplotlib.org/stable/"),
}


def _sk(name: str, role: str = "py:function") -> tuple[str, str, str]:
    return name, role, f"modules/generated/{name}.html#$"


def _np(name: str, role: str = "py:function") -> tuple[str, str, str]:
    return name, role, f"reference/generated/{name}.html#$"


def _mpl(name: str, role: str = "py:class") -> tuple[str, str, str]:
    return name, role, f"api/_as_gen/{name}.html#$"


ENTRIES: dict[str, list[tuple[str, str, str]]] = {
    "python": [
        ("abc.ABC", "py:class", "library/abc.html#$"),
        ("enum.Enum", "py:class", "library/enum.html#$"),
        ("pathlib.Path", "py:class", "library/pathlib.html#$"),
        ("UserWarning", "py:exception", "library/exceptions.html#$"),
        ("ValueError", "py:exception", "library/exceptions.html#$"),
    ],
    "numpy": [
        _np("numpy.ndarray", "py:class"),
        _np("numpy.random.Generator", "py:class"),
        _np("numpy.random.default_rng"),
    ],
    "sklearn": [
        _sk("sklearn.base.BaseEstimator", "py:class"),
        _sk("sklearn.base.RegressorMixin", "py:class"),
        _sk("sklearn.base.ClassifierMixin", "py:class"),
        _sk("sklearn.inspection.permutation_importance"),
        _sk("sklearn.inspection.partial_dependence"),
        _sk("sklearn.linear_model.LogisticRegression", "py:class"),
        _sk("sklearn.linear_model.RidgeCV", "py:class"),
        _sk("sklearn.svm.LinearSVC", "py:class"),
        _sk("sklearn.kernel_ridge.KernelRidge", "py:class"),
        _sk("sklearn.model_selection.cross_val_score"),
        _sk("sklearn.model_selection.GridSearchCV", "py:class"),
        _sk("sklearn.pipeline.Pipeline", "py:class"),
        ("sklearn.set_config", "py:function", "modules/generated/sklearn.set_config.html#$"),
    ],
    "matplotlib": [
        _mpl("matplotlib.axes.Axes"),
        _mpl("matplotlib.figure.Figure"),
        ("matplotlib.pyplot.subplots", "py:function", "api/_as_gen/matplotlib.pyplot.subplots.html#$"),
    ],
}


def write_inventories(folder: Path) -> dict[str, str]:
    """Write ``<key>.inv`` for every site into ``folder``; returns {key: path}."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for key, (project, version, _) in SITES.items():
        body = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in ENTRIES[key])
        head = (
            f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
            "# The remainder of this file is compressed using zlib.\n"
        )
        path = folder / f"{key}.inv"
        data = head.encode() + zlib.compress(body.encode())
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        out[key] = str(path)
    return out
