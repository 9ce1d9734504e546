"""``import rashomon`` is light, and every public name still resolves (names load on first use)."""

import importlib
import json
import subprocess
import sys

import pytest

PACKAGES = [
    "rashomon",
    "rashomon.sets",
    "rashomon.model_classes",
    "rashomon.reliance",
    "rashomon.inspection",
    "rashomon.inference",
    "rashomon.audit",
    "rashomon.plotting",
    "rashomon.utils",
    "rashomon.solvers",
    "rashomon.datasets",
]
# Heavy or optional libraries that `import rashomon` must not load: they load when a name needs them.
LAZY = ["cvxpy", "matplotlib", "dask", "sklearn", "scipy", "pandas", "numpy", "joblib", "osqp"]


def _fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line."""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_rashomon_loads_no_numerical_library():
    loaded = _fresh(f"import json, sys, rashomon; print(json.dumps(sorted(m for m in {LAZY!r} if m in sys.modules)))")
    assert loaded == []


def test_solvers_alone_does_not_load_sparse_osqp_or_cvxpy():
    loaded = _fresh(
        "import json, sys; from rashomon.solvers import QCQPSequence; "
        "print(json.dumps(sorted(m for m in ['scipy.sparse', 'osqp', 'cvxpy', 'sklearn', 'pandas'] "
        "if m in sys.modules)))"
    )
    assert loaded == []


def test_mcr_path_does_not_load_plotting_cvxpy_or_dask():
    code = (
        "import json, sys, numpy as np; from rashomon import LinearModelClass, RashomonSet; "
        "rng = np.random.default_rng(0); X = rng.normal(size=(60, 3)); y = X[:, 0] + rng.normal(size=60); "
        "RashomonSet(LinearModelClass(), 0.1).fit(X, y).model_class_reliance(0); "
        "print(json.dumps(sorted(m for m in ['matplotlib', 'cvxpy', 'dask', 'osqp'] if m in sys.modules)))"
    )
    assert _fresh(code) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package):
    mod = importlib.import_module(package)
    for name in mod.__all__:
        assert getattr(mod, name) is not None, f"{package}.{name}"
        assert name in dir(mod)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        mod.not_a_name  # noqa: B018  (the attribute access itself is what is tested)


def test_from_import_every_top_level_name_in_a_fresh_process():
    import rashomon

    code = f"from rashomon import {', '.join(rashomon.__all__)}; import json; print(json.dumps('ok'))"
    assert _fresh(code) == "ok"
    assert _fresh("from rashomon import *; import json; print(json.dumps(RashomonSet.__name__))") == "RashomonSet"


def test_top_level_names_are_the_subpackage_objects():
    import rashomon

    for name in rashomon.__all__:
        value = getattr(rashomon, name)
        if name in ("__version__", "datasets"):
            continue
        home = [p for p in PACKAGES[1:] if name in getattr(importlib.import_module(p), "__all__", ())]
        assert home and all(getattr(importlib.import_module(p), name) is value for p in home), name


def test_rashomon_audit_is_the_function_even_after_importing_the_cli():
    # As before the names became lazy: the subpackage rashomon.audit never shadows the function.
    code = (
        "import json, rashomon.audit.cli, rashomon; import rashomon.audit as ra; from rashomon import audit; "
        "print(json.dumps([type(rashomon.audit).__name__, type(ra).__name__, type(audit).__name__]))"
    )
    assert _fresh(code) == ["function", "function", "function"]
    assert _fresh(
        "import json, rashomon; f = rashomon.audit; import rashomon.audit.cli; "
        "print(json.dumps([rashomon.audit is f, callable(rashomon.audit)]))"
    ) == [True, True]


def test_private_submodules_still_import():
    from rashomon.audit import _report  # noqa: F401
    from rashomon.utils import _versions  # noqa: F401
