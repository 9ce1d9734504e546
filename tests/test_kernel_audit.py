"""The kernel audit on its statistics: the reference's cross-validation from one eigendecomposition per
bandwidth (equal to the fit on each fold's training part), and e_switch of a group and its complement
sharing one Hadamard Gram and the set's diagonal sums (equal to a fresh build and to brute force)."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.model_selection import KFold

from rashomon import KernelModelClass, RashomonSet
from rashomon.audit._fit import kernel_ridge_grid_cv

from ._brute import brute_e_switch


def _per_fold_cv(X, y, gammas, alphas, folds):
    """Kernel ridge refitted on each fold's training part: one eigendecomposition per (gamma, fold)."""
    D2 = cdist(X, X, "sqeuclidean")
    mse = np.zeros((len(alphas), len(gammas)))
    splits = list(folds.split(X))
    for tr, te in splits:
        for j, g in enumerate(gammas):
            K = np.exp(-g * D2[np.ix_(tr, tr)])
            lam, V = np.linalg.eigh(0.5 * (K + K.T))
            Vy = V.T @ y[tr]
            KV = np.exp(-g * D2[np.ix_(te, tr)]) @ V
            for i, a in enumerate(alphas):
                mse[i, j] += float(np.mean((y[te] - KV @ (Vy / (lam + a))) ** 2))
    return mse / len(splits)


@pytest.mark.parametrize("n, p, seed", [(60, 2, 0), (150, 5, 1), (231, 12, 2)])
def test_grid_cv_equals_refit_per_fold(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[5:15] = X[:10]  # duplicated rows
    X[:, 0] = rng.integers(0, 3, n)
    y = np.sin(X[:, 1]) + X[:, 0] + 0.3 * rng.normal(size=n)
    y -= y.mean()
    gammas = [f / p for f in (0.03, 0.1, 0.3, 1.0, 3.0)]
    alphas = list(np.logspace(-3, 2, 11))
    folds = KFold(10, shuffle=True, random_state=seed)
    new, old = kernel_ridge_grid_cv(X, y, gammas, alphas, folds), _per_fold_cv(X, y, gammas, alphas, folds)
    np.testing.assert_allclose(new, old, rtol=1e-9)
    assert np.argmin(new) == np.argmin(old)


def _continuous(n=36, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("intercept", ["mean", "free"])
def test_complementary_groups_share_the_hadamard_gram(intercept):
    from rashomon.model_classes._kernel_stats import KernelStatistics, choose_mode

    X, y = _continuous()
    mc = KernelModelClass(gamma=0.4, norm_bound=2.0, intercept=intercept)
    rs = RashomonSet(mc, 0.1).fit(X, y)
    par = rs.parametrization_
    assert choose_mode(len(X), len(X), par.D.shape[0], par.dim) == "hadamard"
    w = np.random.default_rng(4).multinomial(len(y), np.ones(len(y)) / len(y)).astype(float)
    for weights in (None, w):
        s = rs if weights is None else rs.reweighted(weights)
        for group in ((0,), (1, 2), (2,), (0, 1)):  # (0,) then its complement: the Gram is shared
            q = s.problem(list(group)).e_switch
            fresh = KernelStatistics(par, X, y, keep=False).e_switch(group, weights)  # nothing shared
            np.testing.assert_allclose(q.Q, fresh.Q, rtol=1e-10, atol=1e-13)
            np.testing.assert_allclose(q.c, fresh.c, rtol=1e-10, atol=1e-13)
            assert q.k == pytest.approx(fresh.k, rel=1e-12)
        th = np.random.default_rng(5).normal(size=par.dim) * 0.3
        if weights is None:
            for group in ((0,), (1, 2)):
                f = rs.parametrization_.estimator(th).predict
                ref = brute_e_switch(f, lambda a, b: (a - b) ** 2, X, y, list(group))
                assert rs.problem(list(group)).e_switch(th) == pytest.approx(ref, rel=1e-9)


def test_set_diagonal_sums_are_not_built_twice():
    X, y = _continuous(n=40, seed=6)
    rs = RashomonSet(KernelModelClass(gamma=0.3, norm_bound=1.0), 0.1).fit(X, y)
    rs.problem([0])
    (st,) = rs._cache.values()
    assert st._phi is None  # the diagonal came from the set's e_orig: no feature matrix was built
    G, g = st.diagonal(np.ones(len(y)))
    np.testing.assert_allclose(G / len(y), rs.e_orig_form_.Q, rtol=1e-12)
    import pickle

    par = pickle.loads(pickle.dumps(rs.parametrization_))  # the memo of the last rows is not pickled
    assert par._last_rows is None


def test_kernel_audit_equals_the_per_fold_path(monkeypatch):
    # the whole kernel audit with today's statistics against the same audit with the reference's CV refitted on
    # each fold (and the Hadamard Gram built for each group): every reported number to 1e-9
    import importlib

    import pandas as pd

    import rashomon

    fit = importlib.import_module("rashomon.audit._fit")
    _kernel_stats = importlib.import_module("rashomon.model_classes._kernel_stats")

    rng = np.random.default_rng(8)
    n = 220
    df = pd.DataFrame(
        {"a": rng.normal(size=n), "b": rng.integers(0, 2, n), "c": rng.normal(size=n), "d": rng.integers(0, 4, n)}
    )
    df["y"] = np.sin(df.a) + df.b + 0.3 * df.c * df.d + 0.3 * rng.normal(size=n)
    groups = {"first": ["a", "b"], "second": ["c", "d"]}

    def numbers():
        res = rashomon.audit(df, "y", groups, model_class="kernel", train_size=80, cv=5, random_state=2, n_jobs=1)
        out = [res.cv_loss, res.e_ref, res.epsilon_abs]
        for g in res.groups.values():
            out += [g.mr_ref, g.mcr_lower, g.mcr_upper, g.refit_loss_ratio]
        return np.array(out)

    new = numbers()
    monkeypatch.setattr(fit, "kernel_ridge_grid_cv", _per_fold_cv)
    monkeypatch.setattr(_kernel_stats, "_gram", lambda F, w: F.T @ (F * w[:, None]))
    old = numbers()
    np.testing.assert_allclose(new, old, rtol=1e-9)
