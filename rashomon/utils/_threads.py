"""The BLAS thread policy of the package's own numerical loops, in one place.

The quadratic engines (the γ-search, the trust-region QCQP steps, the range engine) and the
statistics they are built from call BLAS / LAPACK on small matrices (d = 50 to 400) hundreds of
times. On 2 cores (OpenBLAS 0.3.30/0.3.31, SkylakeX kernels) OpenBLAS's own threads make this
slower, not faster: kernel MCR (n = 3,000, D = 400) took 1.62 s quiet with the default two threads
against 1.08 s with one, and 10.6 s against 1.08 s beside two CPU-bound processes (a spinning BLAS
thread waits for its descheduled partner at every call); on a machine at load average 10 it took
21-47 s against 1.5 s. The products that could profit from threads are few: in linear MCR at
n = 10⁵, p = 50 the products over the n rows total about 0.22 s of 1.0 s CPU (one thread), so a
second thread could save at most about 0.1 s quiet. And threads change the bits: OpenBLAS splits
the long dimension of ``D'WD`` and ``D'y`` and threads a 400 × 400 ``eigh`` and a 3,000 × 400 ``K W``
differently (measured: different bits), so the same MCR differed in its last bits (kernel: θ's coordinates themselves) between
1 and 2 threads. Hence one policy: the package's computations run with **one BLAS thread**, in a
scoped limit that restores the caller's setting on exit (threadpoolctl), and results are the same
bits whatever the caller's thread count or ``n_jobs`` (``tests/test_threads.py``,
``benchmarks/bench_under_load.py``).

threadpoolctl's ``threadpool_limits`` enumerates the loaded libraries at every call (measured 3.8 ms
after importing numpy and scipy, 11 ms with scikit-learn and cvxpy loaded); the controller is
therefore built once and rebuilt only when modules were imported since (a new extension may have
brought a new BLAS or OpenMP). The outermost scope reads each library's thread count and sets and restores
it through the controller's per-library calls (``get_num_threads`` / ``set_num_threads``, about 4 µs in all,
against 60-80 µs for ``ThreadpoolController.limit``, which re-reads every library's full description on entry
and on exit), and nested scopes cost a counter. A query whose answer may call no BLAS (``coef_range`` of a
closed-form set, served from its cache) is marked :func:`scope_inside` and enters the scope only on the path
that calls BLAS. The limit is process-wide, as BLAS's own setting is: concurrent scopes from several Python threads share it, and the last one to leave restores the caller's values.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["one_blas_thread", "one_blas_thread_methods", "scope_inside", "single_blas_thread"]

F = TypeVar("F", bound=Callable[..., Any])

_LOCK = threading.Lock()
_STATE: dict = {"depth": 0, "limiter": None, "controller": None, "n_modules": -1, "enabled": True}


def _controller():
    """The cached :class:`threadpoolctl.ThreadpoolController` (rebuilt when modules were imported since)."""
    st = _STATE
    if st["controller"] is None or st["n_modules"] != len(sys.modules):
        import numpy  # noqa: F401  (the BLAS libraries the engines call are loaded before enumerating)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController

        st["controller"] = ThreadpoolController()
        st["n_modules"] = len(sys.modules)
    return st["controller"]


class _Scope:
    """The thread limit as a re-entrant context manager (one shared instance: entering costs a counter when
    nested, and at the outermost level one ``get_num_threads`` per library, no generator)."""

    __slots__ = ()

    def __enter__(self) -> None:
        st = _STATE
        with _LOCK:
            if st["depth"] == 0 and st["enabled"]:
                libs = _controller().lib_controllers
                old = [lib.get_num_threads() for lib in libs]
                for lib, n in zip(libs, old):
                    if n != 1:
                        lib.set_num_threads(1)
                st["limiter"] = (libs, old)
            st["depth"] += 1

    def __exit__(self, *exc: Any) -> None:
        st = _STATE
        with _LOCK:
            st["depth"] -= 1
            if st["depth"] == 0 and st["limiter"] is not None:
                (libs, old), st["limiter"] = st["limiter"], None
                for lib, n in zip(libs, old):
                    if n is not None and n != 1:
                        lib.set_num_threads(n)


_SCOPE = _Scope()


def _scope() -> _Scope:
    return _SCOPE


def one_blas_thread(fn: F | None = None):
    """Run with BLAS (and OpenMP) limited to one thread, restoring the caller's setting afterwards.

    Used as a context manager (``with one_blas_thread(): ...``) or a decorator (``@one_blas_thread``)
    on the package's numerical entry points. Scopes nest at the cost of a counter; only the outermost
    one sets and restores the limits. See the module docstring for the measurements behind the policy.
    """
    if fn is None:
        return _SCOPE
    if getattr(fn, "__rashomon_own_scope__", False):
        return fn  # the function enters the scope itself, where it calls BLAS (see scope_inside)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any):
        with _SCOPE:
            return fn(*args, **kwargs)

    return wrapper


def single_blas_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn(*args)`` with BLAS (and OpenMP) limited to one thread (:func:`one_blas_thread`).

    Parallel tasks call this so that a loky worker, a Dask worker and the parent process
    all use the same thread count, hence the same floating-point reductions: results do not
    depend on ``n_jobs`` or the joblib backend.
    """
    with _SCOPE:
        return fn(*args)


def scope_inside(fn: F) -> F:
    """Mark ``fn`` as entering :func:`one_blas_thread` itself wherever it calls BLAS.

    :func:`one_blas_thread` and :func:`one_blas_thread_methods` then leave it unwrapped, so an answer that
    calls no BLAS (one served from a cache) skips reading every library's thread count. Keeping the results' bits independent of the caller's thread count is then
    ``fn``'s duty.

    Parameters
    ----------
    fn : callable
        The function (or method) to mark.

    Returns
    -------
    callable
        ``fn`` itself, marked.
    """
    fn.__rashomon_own_scope__ = True  # type: ignore[attr-defined]
    return fn


def _set_enabled(enabled: bool) -> bool:
    """Turn the policy on or off; returns the previous value. For the benchmark that times the old
    behaviour (``benchmarks/bench_under_load.py``) and the tests; not public."""
    with _LOCK:
        old, _STATE["enabled"] = _STATE["enabled"], bool(enabled)
    return old


def one_blas_thread_methods(*names: str) -> Callable[[type], type]:
    """Class decorator: the methods ``names`` of the class (its own or inherited) run under
    :func:`one_blas_thread`. One line at the class applies the policy to every public query."""

    def apply(cls: type) -> type:
        for name in names:
            setattr(cls, name, one_blas_thread(getattr(cls, name)))
        return cls

    return apply
