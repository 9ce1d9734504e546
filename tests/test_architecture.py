"""The layout rules, checked with ``ast``: no cross-package private imports (a subpackage may use its parent's), no import cycles,
no module over about 400 lines, and ``solvers/`` installed as ``rashomon.solvers`` only."""

import ast
import importlib.util
import subprocess
import sys
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


def _cycle_tool():
    """``tools/import_cycles.py``, the script anyone can run (``python tools/import_cycles.py``)."""
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "tools" / "import_cycles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_import_cycles():
    """Every import counts (at the top, inside a function, inside a class); only ``if TYPE_CHECKING:`` is left out."""
    tool = _cycle_tool()
    graph = tool.graph()
    assert set(graph) == set(MODULES)
    found = tool.cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(", ".join(c) for c in found)


def test_a_planted_cycle_is_found(tmp_path):
    """The rule bites: one import inside a function that closes a loop is reported, in a package on disk and in the
    package's own graph with one planted edge."""
    tool = _cycle_tool()
    pkg = tmp_path / "rashomon"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text(
        "from ..lazy import lazy_exports\n__all__, __getattr__, __dir__ = lazy_exports(__name__, {'f': '._a'})\n"
    )
    (pkg / "lazy.py").write_text("")
    (pkg / "sub" / "_a.py").write_text("from .._b import g\n\ndef f():\n    return g()\n")
    (pkg / "_b.py").write_text(
        "def g():\n    from .sub import f  # closes the loop through the lazy table\n\n    return f\n"
    )
    (pkg / "_c.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from ._b import g\n")
    graph = tool.graph({"rashomon": pkg})
    assert tool.cycles(graph) == [["rashomon._b", "rashomon.sub._a"]]
    assert graph["rashomon._c"] == set()  # typing-only imports never run
    real = tool.graph()
    real["rashomon.utils.validation"].add("rashomon.sets._rashomon_set")
    assert any("rashomon.utils.validation" in c and "rashomon.sets._rashomon_set" in c for c in tool.cycles(real))


def test_cycle_script_exits_zero():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "import_cycles.py")], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 import cycle(s)" in out.stdout


def test_sets_has_one_folder_per_concern():
    folders = {p.name for p in (ROOT / "rashomon" / "sets").iterdir() if (p / "__init__.py").exists()}
    assert folders == {"fairness", "margin", "quadratic", "rows", "scale"}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    n = len(MODULES[name].read_text().splitlines())
    assert n <= 420, f"{name} has {n} lines (the layout keeps modules under about 400)"


def test_solvers_is_installed_inside_rashomon():
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert cfg["package-dir"]["rashomon.solvers"] == "solvers"
    assert "solvers" not in cfg["packages"] and "rashomon.solvers" in cfg["packages"]
    # every folder of the package is listed, so a wheel holds all of it
    folders = {
        ".".join(("rashomon", *p.parent.relative_to(ROOT / "rashomon").parts))
        for p in (ROOT / "rashomon").rglob("__init__.py")
    }
    assert folders | {"rashomon.solvers"} == set(cfg["packages"])
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
    missing = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "rashomon").rglob("*.py")
        if not (target / path.relative_to(ROOT)).exists()
    ]
    assert not missing, f"not installed: {missing}"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import rashomon.solvers as s; "
        "assert s.__file__.startswith(sys.argv[1]), s.__file__; "
        "import importlib.util; print(importlib.util.find_spec('solvers'))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(target)], check=True, capture_output=True, text=True, cwd=tmp_path
    ).stdout
    assert out.strip() == "None"
