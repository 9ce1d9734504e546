"""The hinge class's default norm bound: the exact cross-validated linear SVM (rashomon/model_classes/_svm_path.py).

Tolerances. liblinear run to ``tol=1e-10, max_iter=10**6`` and Clarabel run to 1e-12 gaps both agree with the
exact fits to about 1e-9 relative (measured 1e-16..3e-10 on these data and on Pima's folds), so the
per-C checks use 1e-6 relative: three orders above what is observed, and far below the 3e-5 by which a
default-tolerance (1e-4) liblinear fit misses the optimum on COMPAS and wine. On a degenerate margin
(binary features) Clarabel's θ is only as close as its objective gap allows (see that test). Grid-search
comparisons are exact where the result is discrete (the fold scores and the chosen C are equal, not
close) and 1e-6 on r.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.svm import LinearSVC

from rashomon import HingeModelClass
from rashomon.model_classes import _svm_path
from rashomon.model_classes._svm_path import C_GRID, hinge_svm, hinge_svm_cv

REL = 1e-6


def _data(kind, n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    if kind == "overlap":
        y = np.where(X @ [1.0, -0.5, 0.25, 0.0] + rng.logistic(size=n) > 0, 1.0, -1.0)
    else:  # separable up to a few rows near the boundary
        y = np.where(X @ [2.0, -1.0, 0.5, 0.0] + 0.1 * rng.normal(size=n) > 0.3, 1.0, -1.0)
    return X, y


def _rows(X, y):
    return np.column_stack([X, np.ones(len(X))]) * y[:, None], np.ones(len(y))


def _liblinear(X, y, C):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc = LinearSVC(loss="hinge", C=C, max_iter=10**6, tol=1e-10, random_state=0).fit(X, y > 0)
    return np.r_[svc.coef_.ravel(), svc.intercept_], svc.n_iter_ < 10**6


def _clarabel(X, y, C, w=None):
    """½(||β||² + b²) + C Σ w_i max(0, 1 - y_i(x_i'β + b)): liblinear's objective (the bias is a feature of value 1)."""
    w = np.ones(len(y)) if w is None else w
    th = cp.Variable(X.shape[1] + 1)
    marg = cp.multiply(y, X @ th[:-1] + th[-1])
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(th) + C * (w @ cp.pos(1 - marg)))).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    return th.value


def _rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-12)


@pytest.mark.parametrize("kind", ["overlap", "separable"])
def test_each_fit_is_liblinears_and_clarabels_optimum(kind):
    X, y = _data(kind)
    G, w = _rows(X, y)
    converged, theta = 0, None
    for C in C_GRID:
        theta = hinge_svm(G, w, C, theta, tau=1.0 if theta is None else 0.01)
        assert theta is not None
        ref, ok = _liblinear(X, y, C)
        if ok:
            converged += 1
            assert _rel(theta, ref) < REL, C
        assert _rel(theta, _clarabel(X, y, C)) < REL, C
    assert converged == len(C_GRID)


def test_duplicates_and_a_degenerate_margin():
    """Repeated rows, the same z with both labels, and binary features (many rows on the margin)."""
    rng = np.random.default_rng(1)
    B = rng.integers(0, 2, size=(40, 5)).astype(float)
    y = np.where(B @ [1.0, -1.0, 1.0, 0.5, 0.0] + rng.logistic(size=40) > 0.7, 1.0, -1.0)
    X = np.vstack([B, B[:10], B[:5]])
    y = np.r_[y, y[:10], -y[:5]]
    merged = _svm_path._merge(X, y)
    assert len(merged[0]) < len(X)
    G = _rows(X, y)[0]

    def F(th, C):
        return 0.5 * th @ th + C * np.maximum(0.0, 1.0 - G @ th).sum()

    for C in C_GRID:
        theta = hinge_svm(*merged, C)
        assert theta is not None
        ref, ok = _liblinear(X, y, C)
        assert ok and _rel(theta, ref) < REL, C
        # Clarabel stops 1e-12 above the optimum here, which (F is 1-strongly convex) leaves its θ up to
        # sqrt(2e-12) ~ 1.4e-6 away on this degenerate margin (measured 2.7e-6 relative at C = 0.1): the
        # exact θ must be no worse in F, and Clarabel's within the distance its excess allows
        cl = _clarabel(X, y, C)
        excess = F(cl, C) - F(theta, C)
        assert excess > -1e-12 * (1 + F(cl, C)), C
        assert np.linalg.norm(cl - theta) <= np.sqrt(2 * max(excess, 0.0)) + 1e-9, C
        # merging is exact: the same optimum from the unmerged rows
        assert _rel(hinge_svm(*_rows(X, y), C), theta) < 1e-9, C


@pytest.mark.parametrize("kind", ["overlap", "separable"])
def test_grid_search_choice_equals_gridsearchcv(kind):
    X, y = _data(kind)
    svc = LinearSVC(loss="hinge", max_iter=10**6, tol=1e-10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # liblinear converges at every C and fold here
        gs = GridSearchCV(svc, {"C": list(C_GRID)}, cv=5).fit(X, y > 0)
    C, beta, b, means = hinge_svm_cv(X, y)
    np.testing.assert_array_equal(means, gs.cv_results_["mean_test_score"])
    assert C == gs.best_params_["C"]
    ref = gs.best_estimator_
    assert _rel(np.r_[beta, b], np.r_[ref.coef_.ravel(), ref.intercept_]) < REL
    r_ref = float(ref.coef_.ravel() @ ref.coef_.ravel())
    assert abs(beta @ beta / r_ref - 1) < REL


def test_default_norm_bound_through_the_class():
    """HingeModelClass().parametrize: r is the grid search's β'β on the standardised features, warning-free,
    the same bits on a second call."""
    X, y = _data("overlap", n=200, seed=3)
    X = X * [1.0, 10.0, 0.1, 3.0] + 5.0
    Z = (X - X.mean(0)) / X.std(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = HingeModelClass().parametrize(X, (y > 0).astype(int)).r
        r2 = HingeModelClass().parametrize(X, y).r
    beta = hinge_svm_cv(Z, y)[1]
    assert r == r2
    assert abs(r / float(beta @ beta) - 1) < 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(
            LinearSVC(loss="hinge", max_iter=10**6, tol=1e-10, random_state=0), {"C": list(C_GRID)}, cv=5
        ).fit(Z, y > 0)
    coef = gs.best_estimator_.coef_.ravel()
    assert abs(r / float(coef @ coef) - 1) < REL


def test_unverified_fit_falls_back_to_liblinear(monkeypatch):
    X, y = _data("overlap")
    monkeypatch.setattr(_svm_path, "hinge_svm", lambda *a, **k: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C, beta, b, _ = hinge_svm_cv(X, y)
    svc = LinearSVC(loss="hinge", C=C, max_iter=20000, random_state=0).fit(X, y > 0)
    np.testing.assert_array_equal(np.r_[beta, b], np.r_[svc.coef_.ravel(), svc.intercept_])


def test_margin_set_larger_than_four_dimensions():
    """Data symmetric in x2 (so β2 = 0 exactly): whole groups of 28-56 rows lie on the margin, more than
    4d = 12; the polish is tried once the smoothing zone has settled between two levels."""
    v = np.arange(1, 16.0)
    X = np.column_stack([np.r_[np.ones(30), np.zeros(30)], np.r_[v, -v, v, -v]])
    y = np.r_[np.ones(30), -np.ones(30)]
    y[[0, 15, 30, 45]] *= -1  # the same flips at x2 = ±1 in both groups
    for C in C_GRID:
        theta = hinge_svm(*_svm_path._merge(X, y), C)
        assert theta is not None
        ref, ok = _liblinear(X, y, C)
        assert ok and _rel(theta, ref) < REL, C
        assert abs(theta[1]) < 1e-12
    assert np.allclose(theta, [2.0, 0.0, -1.0], rtol=0, atol=1e-12)  # hard margin at x1 = 0 | 1
