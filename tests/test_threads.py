"""BLAS threads of the package's own loops (``rashomon.utils._threads``): one thread in a scoped limit that
restores the caller's setting, and the same bits whatever the caller's thread count or ``n_jobs``."""

import numpy as np
import pytest
from joblib import Parallel, delayed
from threadpoolctl import threadpool_info, threadpool_limits

from rashomon import KernelModelClass, LinearModelClass, RashomonSet, model_class_reliance
from rashomon.utils import _threads, one_blas_thread, single_blas_thread


def _blas_threads():
    return sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})


def _kernel_case(n=400, m=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 0] = rng.integers(0, 2, n)
    y = X[:, 0] + np.sin(X[:, 1]) + 0.5 * X[:, 2] * X[:, 3] + rng.normal(size=n)
    D = X[rng.choice(n, m, replace=False)]
    return KernelModelClass(gamma=0.2, dictionary=D, norm_bound=4.0), X, y, [0, 1]


def _linear_case(n=10_000, p=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 1] += 0.7 * X[:, 0]
    y = X @ (rng.normal(size=p) * 0.3) + X[:, 0] + rng.normal(size=n)
    return LinearModelClass(), X, y, 0


def _bits(case):
    mc, X, y, f = case
    r = model_class_reliance(mc, X, y, f, epsilon=0.1)
    return (r.lower, r.upper, r.e_min, r.lower_model.theta.tobytes(), r.upper_model.theta.tobytes(), len(r.steps))


@pytest.mark.parametrize("make", [_kernel_case, _linear_case], ids=["kernel", "linear"])
def test_mcr_same_bits_under_1_and_2_blas_threads_and_in_joblib_workers(make):
    """Kernel MCR (400 rows, a 100-point dictionary) and linear MCR (10,000 rows, p = 20) give the same bits
    under threadpool_limits(1) and (2) around the call, and in two loky workers (n_jobs=2, one BLAS thread
    each). With the limit switched off both differed between 1 and 2 threads (OpenBLAS 0.3.30/0.3.31):
    the threaded eigh of K_D and products such as D'WD, D'y change their last bits."""
    case = make()
    out = []
    for k in (2, 1):
        with threadpool_limits(limits=k):
            out.append(_bits(case))
    out += Parallel(n_jobs=2)(delayed(_bits)(case) for _ in range(2))
    assert all(o == out[0] for o in out[1:])


def test_the_limit_is_scoped_and_restores_the_callers_setting():
    """Inside a query the BLAS libraries run one thread (seen from a user kernel called by the fit); after it,
    and after an error inside it, the caller's own setting is back (2, or the 1 the caller chose)."""
    seen = []

    def kernel(X, D):
        seen.append(_blas_threads())
        return np.exp(-0.5 * ((X[:, None, :] - D[None, :, :]) ** 2).sum(-1))

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(80, 2)), rng.normal(size=80)
    for k in (2, 1):
        with threadpool_limits(limits=k):
            callers = _blas_threads()  # [k] (a library built for fewer threads would cap it)
            RashomonSet(KernelModelClass(kernel=kernel, norm_bound=1.0, dictionary=20), 0.1).fit(X, y)
            assert _blas_threads() == callers
            with pytest.raises(ValueError):
                with one_blas_thread():
                    assert _blas_threads() == [1]
                    raise ValueError("inside")
            assert _blas_threads() == callers
    assert seen and all(s == [1] for s in seen)
    assert _threads._STATE["depth"] == 0 and _threads._STATE["limiter"] is None


def test_nested_scopes_and_decorator():
    @one_blas_thread
    def inner():
        return _threads._STATE["depth"], _blas_threads()

    with threadpool_limits(limits=2):
        callers = _blas_threads()
        assert inner() == (1, [1])
        with one_blas_thread():
            assert inner() == (2, [1])
            assert single_blas_thread(inner) == (3, [1])
        assert _blas_threads() == callers


def test_the_controller_is_built_once():
    """threadpoolctl's library enumeration (milliseconds) is not repeated at every scope: the controller is
    reused while no module is imported."""
    with one_blas_thread():
        pass
    c = _threads._controller()
    for _ in range(3):
        with one_blas_thread():
            pass
    assert _threads._controller() is c


def test_the_switch_for_the_benchmark_turns_the_limit_off():
    old = _threads._set_enabled(False)
    try:
        with threadpool_limits(limits=2):
            callers = _blas_threads()
            with one_blas_thread():
                assert _blas_threads() == callers
    finally:
        _threads._set_enabled(old)
    with threadpool_limits(limits=2), one_blas_thread():
        assert _blas_threads() == [1]


def test_distinct_rows_agrees_with_numpy_unique():
    """ridge_loo's copy check (a row hash, in place of np.unique(Z, axis=0) when no row repeats: the saving
    that keeps one-thread linear MCR at n = 10⁵ faster than two threads were) agrees with np.unique, -0.0
    included; the fit on rows in np.unique's (sorted) order agrees to rounding."""
    from rashomon.model_classes._linear import distinct_rows, ridge_loo

    rng = np.random.default_rng(0)
    cases = [
        rng.normal(size=(500, 4)),
        rng.integers(0, 3, size=(500, 3)).astype(float),
        np.array([[0.0, 1.0], [-0.0, 1.0]]),
        np.arange(20.0).reshape(10, 2),
        np.ones((1, 3)),
    ]
    dup = rng.normal(size=(300, 3))
    dup[7] = dup[200]
    for Z in cases + [dup]:
        assert distinct_rows(Z) == (len(np.unique(Z, axis=0)) == len(Z))
    Z, y = cases[0], rng.normal(size=500)
    a = ridge_loo(Z, y, np.logspace(-3, 3, 13))
    U, inv = np.unique(Z, axis=0, return_inverse=True)  # the np.unique path (rows sorted): the same fit
    order = np.argsort(inv.ravel())
    b = ridge_loo(Z[order], y[order], np.logspace(-3, 3, 13))
    assert a[0] == b[0] and np.allclose(a[1], b[1], rtol=1e-12) and abs(a[3] - b[3]) <= 1e-12 * b[3]
