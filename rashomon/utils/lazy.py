"""Lazy public names for rashomon's packages (PEP 562), so ``import rashomon`` stays light.

A package lists where each public name lives; the module holding it is imported the
first time the name is asked for (``rashomon.RashomonSet``, ``from rashomon import
RashomonSet``), and the value is then stored on the package, so later look-ups are
plain attribute reads. Adding a public name is one line in the package's table.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for a package whose public names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : mapping of str to str
        Public name -> module holding it, relative to ``package`` (e.g. ``"RashomonSet": ".sets"``).
    submodules : iterable of str
        Public submodules reachable as attributes (e.g. ``"datasets"``), imported on first use.

    Returns
    -------
    __all__ : list of str
        The public names: ``exports`` then ``submodules``.
    __getattr__ : callable
        The module-level ``__getattr__`` (PEP 562); unknown names raise AttributeError.
    __dir__ : callable
        The module-level ``__dir__``, listing the lazy names too.
    """
    table = dict(exports)
    subs = tuple(submodules)

    def __getattr__(name: str) -> Any:
        if name in table:
            value = getattr(importlib.import_module(table[name], package), name)
        elif name in subs:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        vars(sys.modules[package])[name] = value  # later look-ups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table) | set(subs))

    return [*table, *subs], __getattr__, __dir__
