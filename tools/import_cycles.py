"""List the import cycles of the ``rashomon`` package (every import, at import time or inside a function).

    python tools/import_cycles.py          # prints each cycle; exit status 1 if there is any, 0 otherwise

The graph has one node per module. An edge ``a -> b`` means that module ``a`` imports module ``b`` anywhere in its
source: at the top, inside a function, or inside a class. Only imports under ``if TYPE_CHECKING:`` are left out,
because they never run. A name taken from a package (``from ..sets import RashomonSet``) leads to the module that the
package's lazy table (:func:`rashomon.utils.lazy.lazy_exports`) says holds it; a lazy table itself imports
nothing until a name is asked for, so it adds no edge. A cycle is a strongly connected component of this graph with
more than one module (or a module importing itself).

``tests/test_architecture.py`` runs :func:`cycles` on the package, and on a planted cycle, so the rule is enforced.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: package name -> folder (the repository's ``solvers/`` is installed as ``rashomon.solvers``)
PACKAGES = {"rashomon": ROOT / "rashomon", "rashomon.solvers": ROOT / "solvers"}


def modules(packages: dict[str, Path] = PACKAGES) -> dict[str, Path]:
    """``{module name: path}`` for every module under ``packages``."""
    out: dict[str, Path] = {}
    for prefix, base in packages.items():
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            if prefix == "rashomon" and parts[:1] == ["solvers"]:
                continue
            out[".".join([prefix, *parts]) if parts else prefix] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below ``node``, skipping the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for sub in child.orelse:
                yield sub
                yield from _walk(sub)
            continue
        yield child
        yield from _walk(child)


def _lazy_table(tree: ast.Module, package: str) -> dict[str, str]:
    """The ``lazy_exports`` table of a package ``__init__``: public name -> absolute module name."""
    literals = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_exports" and len(node.args) >= 2:
            arg = node.args[1]
            if isinstance(arg, ast.Name):
                arg = literals.get(arg.id, arg)
            if isinstance(arg, ast.Dict):
                table = ast.literal_eval(arg)
                return {k: _absolute(v, package) for k, v in table.items()}
    return {}


def _absolute(target: str, package: str) -> str:
    if not target.startswith("."):
        return target
    level = len(target) - len(target.lstrip("."))
    base = package.split(".")
    base = base[: len(base) - (level - 1)]
    rest = target[level:]
    return ".".join(base + ([rest] if rest else []))


def graph(packages: dict[str, Path] = PACKAGES, prefix: str = "rashomon") -> dict[str, set[str]]:
    """The import graph ``{module: modules it imports}`` (names resolved through lazy tables)."""
    mods = modules(packages)
    trees = {name: ast.parse(path.read_text(), str(path)) for name, path in mods.items()}
    is_pkg = {name: path.name == "__init__.py" for name, path in mods.items()}
    lazy = {name: _lazy_table(trees[name], name) for name in mods if is_pkg[name]}

    def resolve(mod: str, name: str | None) -> str | None:
        """The module that ``from mod import name`` (or ``import mod``) leads to; None outside the package."""
        if name is not None and f"{mod}.{name}" in mods:
            return f"{mod}.{name}"
        if mod not in mods:
            return None
        if is_pkg.get(mod) and name is not None and name in lazy.get(mod, {}):
            return lazy[mod][name]
        return mod

    out: dict[str, set[str]] = {}
    for name, tree in trees.items():
        package = name if is_pkg[name] else name.rsplit(".", 1)[0]
        deps: set[str] = set()
        for node in _walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = _absolute("." * node.level + (node.module or ""), package) if node.level else node.module or ""
                if mod.startswith(prefix):
                    deps.update(d for a in node.names if (d := resolve(mod, a.name)) is not None)
            elif isinstance(node, ast.Import):
                deps.update(d for a in node.names if a.name.startswith(prefix) and (d := resolve(a.name, None)))
        out[name] = deps
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``g`` with a cycle (Tarjan), each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in g:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in g.get(v, ()):
                found.append(sorted(comp))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(found, key=lambda c: (-len(c), c))


def main() -> int:
    found = cycles(graph())
    for comp in found:
        print(f"cycle of {len(comp)} modules: " + ", ".join(comp))
    print(f"{len(found)} import cycle(s) in the rashomon package")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
