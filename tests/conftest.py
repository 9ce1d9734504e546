"""Shared pytest set-up: hypothesis profiles (``--hypothesis-profile=long`` in ``make repro``), the
2-worker ``LocalCluster`` of the Dask tests, and one BLAS thread per pytest-xdist worker (``make test`` runs
two workers)."""

import os
import warnings

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")  # no window, whichever process draws first
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Each worker is one process on a shared machine: BLAS runs one thread in it (two workers on two cores
    # would otherwise start four or more threads). Child processes (CLI runs, loky workers) inherit it.
    for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")


def pytest_configure(config):
    """Under pytest-xdist, cap the BLAS libraries already loaded at one thread (the environment variables
    above only reach the libraries loaded after them)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from threadpoolctl import threadpool_limits

        config._blas_limit = threadpool_limits(limits=1)


try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is in the test extra; without it the property tests are skipped
    pass
else:
    _common = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("default", max_examples=15, **_common)
    settings.register_profile("medium", max_examples=150, **_common)
    settings.register_profile("long", max_examples=2000, **_common)
    settings.load_profile("default")


@pytest.fixture(scope="module")
def client():
    """A 2-worker ``dask.distributed`` LocalCluster (threads), one per test module; skipped without distributed."""
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no third-party warning may leak
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0")
        cl = distributed.Client(cluster)
    yield cl
    cl.close()
    cluster.close()


@pytest.fixture(autouse=True)
def _no_clipped_text():
    """Every figure a test leaves open has all its text inside (``tests/_plotcheck.py``), then is closed."""
    yield
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:  # no test of this session drew anything yet
        return
    from tests._plotcheck import assert_texts_inside

    try:
        for num in plt.get_fignums():
            assert_texts_inside(plt.figure(num))
    finally:
        plt.close("all")


@pytest.fixture
def small_budget(monkeypatch):
    """The classifier bounds' work budgets at 1/8 of their defaults, for tests of validity and determinism only.

    A bound is valid whatever its budget (the cells not yet evaluated when the budget ends are merged and
    bounded, ``rashomon/sets/margin/_bnb.py``), and the budget counts work, never seconds, so a small one keeps
    every validity and same-bits assertion meaningful -- it also exercises the merge of the unevaluated cells.
    Tightness at the default budget is asserted by the tests that do not use this fixture (2-D grids within 1 %,
    the tight lower end, the members against independent searches) and measured by
    ``benchmarks/bench_tightness.py``.
    """
    from rashomon.sets.margin import _lower_bnb

    _shrink(monkeypatch, ((_lower_bnb, "_LOWER_WORK"),))
    _shrink_upper(monkeypatch)


@pytest.fixture
def small_upper_budget(monkeypatch):
    """Only the MCR+ search's budget at 1/8 (``small_budget``), for tests that assert the lower end's tightness."""
    _shrink_upper(monkeypatch)


def _shrink_upper(monkeypatch):
    from rashomon.sets.margin import _secant

    _shrink(monkeypatch, ((_secant, "SECANT_WORK"), (_secant, "HINGE_WORK")))


def _shrink(monkeypatch, names):
    for mod, name in names:
        monkeypatch.setattr(mod, name, getattr(mod, name) / 8)
