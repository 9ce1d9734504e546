# Every target creates and uses its own virtual environment in .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-test

.PHONY: demo lint test bench repro docs clean

LINT_PATHS := rashomon solvers tests benchmarks examples docs

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	MPLBACKEND=Agg $(PY) examples/compas_fisher2019.py --json demo-output/compas_fisher2019.json
	MPLBACKEND=Agg $(PY) examples/compas_audit.py --bootstrap 100 --n-jobs 2 --out demo-output --json demo-output/compas.json
	MPLBACKEND=Agg $(PY) examples/compas_recidivism_audit.py --bootstrap 100 --out demo-output --json demo-output/compas_recidivism.json
	MPLBACKEND=Agg $(PY) examples/wine_envelope.py --out demo-output
	MPLBACKEND=Agg $(PY) examples/multiplicity.py --out demo-output --json demo-output/multiplicity.json
	@echo "Open demo-output/report.html (COMPAS audit), demo-output/compas_recidivism.html (two-year recidivism, logistic class) and demo-output/*.png"

# ruff (lint and format) and mypy on the package; `make test` runs them first.
lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/mypy

# the suite in TEST_WORKERS pytest-xdist processes (whole files per worker, so module fixtures are fitted
# once), one BLAS thread each; TEST_WORKERS=0 runs it in this process
TEST_WORKERS ?= 2
test: $(STAMP) lint
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 MPLBACKEND=Agg \
		$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; MPLBACKEND=Agg $(PY) $$f || exit 1; done

repro: $(STAMP)
	MPLBACKEND=Agg $(PY) -m pytest -q -s -m slow
	MPLBACKEND=Agg $(PY) -m pytest -q tests/test_properties.py --hypothesis-profile=long
	MPLBACKEND=Agg $(PY) benchmarks/coverage.py --reps 100

DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): pyproject.toml | $(STAMP)
	$(PY) -m pip install -e ".[test,docs]"
	touch $(DOCS_STAMP)

# the site, with warnings as errors and nitpicky cross-references; every example runs (docs/_build/html)
docs: $(DOCS_STAMP)
	MPLBACKEND=Agg $(PY) -m sphinx -b html -W --keep-going -n docs docs/_build/html

clean:
	rm -rf $(VENV) demo-output build *.egg-info .mypy_cache .ruff_cache
