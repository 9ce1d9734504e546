"""``rashomon.show_versions()``: which rashomon is imported, and the versions of its dependencies."""

from __future__ import annotations

import platform
import sys
import warnings

__all__ = ["show_versions"]

DIST_NAME = "rashomon-mcr"
OTHER_DIST = "rashomon-py"  # an unrelated project that also installs an importable ``rashomon``
_DEPS = ["numpy", "scipy", "sklearn", "cvxpy", "osqp", "pandas", "matplotlib"]
_DEP_DISTS = {"sklearn": "scikit-learn"}


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _module_version(mod: str) -> str:
    try:
        m = __import__(mod)
    except Exception:  # noqa: BLE001 - an optional dependency may be missing or broken
        return "not installed"
    return str(getattr(m, "__version__", None) or _dist_version(_DEP_DISTS.get(mod, mod)) or "unknown")


def show_versions(*, file=None) -> dict:
    """Print and return the versions a bug report needs.

    Keys: ``rashomon`` (``rashomon.__version__``), ``distribution`` (the version
    of the installed ``rashomon-mcr`` distribution, or "not installed"),
    ``path`` (the folder ``rashomon`` was imported from), ``python``,
    ``platform``, ``numpy``, ``scipy``, ``scikit-learn``, ``cvxpy``, ``osqp``,
    ``pandas``, ``matplotlib``, and ``rashomon-py``: the version of the
    unrelated ``rashomon-py`` distribution if it is installed (it shares the
    import name ``rashomon``; a warning is issued), else "not installed".
    """
    import rashomon

    dist = _dist_version(DIST_NAME)
    other = _dist_version(OTHER_DIST)
    info = {
        "rashomon": getattr(rashomon, "__version__", "unknown"),
        "distribution": f"{DIST_NAME} {dist}" if dist else f"{DIST_NAME} not installed",
        "path": str(rashomon.__path__[0]) if hasattr(rashomon, "__path__") else str(getattr(rashomon, "__file__", "")),
        "python": sys.version.replace("\n", " "),
        "platform": platform.platform(),
    }
    for mod in _DEPS:
        info[_DEP_DISTS.get(mod, mod)] = _module_version(mod)
    info[OTHER_DIST] = other or "not installed"
    out = file if file is not None else sys.stdout
    width = max(map(len, info))
    print("rashomon (model class reliance; distribution rashomon-mcr)", file=out)
    for k, v in info.items():
        print(f"{k:>{width}}: {v}", file=out)
    if other:
        msg = (
            f"The unrelated distribution '{OTHER_DIST}' {other} is installed and shares the import name 'rashomon'; "
            f"'import rashomon' may load either one (imported from {info['path']}). "
            f"Uninstall one of them (pip uninstall {OTHER_DIST})."
        )
        print(f"WARNING: {msg}", file=out)
        warnings.warn(msg, UserWarning, stacklevel=2)
    return info
