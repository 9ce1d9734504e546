"""The layout rules, checked with ``ast``: no cross-package private imports (a subpackage may use its parent's), no import cycles,
no module over about 400 lines, and ``solvers/`` installed as ``rashomon.solvers`` only."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG_DIRS = {"rashomon": ROOT / "rashomon", "rashomon.solvers": ROOT / "solvers"}


def _modules():
    """{module name: path} for every module of the installed package (solvers/ as rashomon.solvers)."""
    out = {}
    for prefix, base in PKG_DIRS.items():
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts]) if parts else prefix
            if prefix == "rashomon" and parts[:1] == ["solvers"]:
                continue
            out[name] = path
    return out


MODULES = _modules()


def _package_of(name: str) -> str:
    path = MODULES[name]
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def _imports(name: str):
    """(imported module, imported names, lineno) for every import in module ``name`` (relative resolved)."""
    tree = ast.parse(MODULES[name].read_text())
    pkg = _package_of(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield mod, [a.name for a in node.names], node.lineno, _top_level(tree, node)
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, [], node.lineno, _top_level(tree, node)


def _top_level(tree, node):
    return node in tree.body


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _inside(here: str, owner: str) -> bool:
    """Whether package ``here`` is ``owner`` or one of its subpackages (e.g. the engine ``rashomon.sets.margin``
    may use the private pieces of ``rashomon.sets``; never the other way round, nor between siblings)."""
    return here == owner or here.startswith(owner + ".")


def test_no_cross_module_private_imports():
    bad = []
    for name in MODULES:
        here = _package_of(name)
        for mod, names, line, _ in _imports(name):
            if not mod.startswith("rashomon"):
                continue
            parts = mod.split(".")
            # a private module is private to the package (folder) that holds it and its subpackages
            for k, part in enumerate(parts):
                if _is_private(part):
                    owner = ".".join(parts[:k])
                    if not _inside(here, owner):
                        bad.append(f"{name}:{line} imports private module {mod}")
                    break
            # a private name is private to its module's package
            target = mod if mod in MODULES else None
            for nm in names:
                if _is_private(nm) and target is not None and not _inside(here, _package_of(target)):
                    bad.append(f"{name}:{line} imports private name {nm} from {mod}")
    assert not bad, "\n".join(bad)


def test_no_import_cycles_at_import_time():
    graph = {}
    for name in MODULES:
        deps = set()
        for mod, names, _, top in _imports(name):
            if not top or not mod.startswith("rashomon"):
                continue
            for cand in [mod] + [f"{mod}.{n}" for n in names]:
                if cand in MODULES and cand != name:
                    deps.add(cand)
        graph[name] = deps
    # a package __init__ importing its own submodules is not a cycle; drop edges child -> ancestor __init__
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    state, stack, cycles = {}, [], []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in graph[v]:
            if state.get(w) == 1:
                cycles.append(stack[stack.index(w) :] + [w])
            elif w not in state:
                visit(w)
        stack.pop()
        state[v] = 2

    for v in graph:
        if v not in state:
            visit(v)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    n = len(MODULES[name].read_text().splitlines())
    assert n <= 420, f"{name} has {n} lines (the layout keeps modules under about 400)"


def test_solvers_is_installed_inside_rashomon():
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert cfg["package-dir"]["rashomon.solvers"] == "solvers"
    assert "solvers" not in cfg["packages"] and "rashomon.solvers" in cfg["packages"]
    import rashomon.solvers

    assert Path(rashomon.solvers.__file__).resolve().parent == (ROOT / "solvers").resolve()


def test_installed_package_has_rashomon_solvers_and_no_top_level_solvers(tmp_path):
    # Install the project (no dependencies, no build isolation: offline) into a bare target folder,
    # then import from there in a clean interpreter that does not see the source tree.
    import subprocess
    import sys

    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    assert (target / "rashomon" / "solvers" / "trust_region.py").exists()
    assert not (target / "solvers").exists()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import rashomon.solvers as s; "
        "assert s.__file__.startswith(sys.argv[1]), s.__file__; "
        "import importlib.util; print(importlib.util.find_spec('solvers'))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(target)], check=True, capture_output=True, text=True, cwd=tmp_path
    ).stdout
    assert out.strip() == "None"
