"""Classifier MCR on cells of the feature's values (``rashomon/sets/margin/_binned.py``): certified, checked by brute
force.

(a) The cell terms bound the exact all-pairs e_switch at random θ from both sides (Jensen below, after the own pairs'
correction ``e_orig/(n-1)``; Edmundson–Madansky above), and the one-point interval contains it: logistic and hinge,
a continuous feature and one with ties. (b) A whole MCR forced onto 16 cells (Pima, logistic, Glucose): 1,000 members
sampled from the set lie inside its interval, the exact run's members (no cells) too, and its members' MR is the
exact one (brute force). Tolerances: the brute-force sums are exact up to rounding (1e-9 relative, as in
``tests/test_classifier_validity.py``).
"""

import warnings

import numpy as np
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet
from rashomon.sets.margin import _binned
from rashomon.sets.margin._binned import binned_terms, exact_switch, switch_interval
from rashomon.sets.margin._lower_bnb import _abs_dev
from rashomon.sets.margin._terms import MarginTerms

RTOL = 1e-9


def _brute_mr(D, ye, theta, k, loss):
    """(MR ratio, e_orig) of θ switching design column k, from the definition (pairs i != j)."""
    s = D @ theta
    n = len(ye)
    eo = loss(ye * s)
    M = ye[None, :] * (s[None, :] + (D[:, k][:, None] - D[:, k][None, :]) * theta[k])  # row i's value into row j
    L = loss(M)
    es = (L.sum() - np.trace(L)) / (n * (n - 1.0))
    return es / eo.mean(), eo.mean()


def _logistic(m):
    return np.log1p(np.exp(-np.abs(m))) - np.minimum(m, 0.0)


def _set(cls, n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 1] = np.round(X[:, 1], 1)  # ties
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ [1.0, -0.5, 0.3])))).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RashomonSet(cls(), 0.1).fit(X, y)


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_cell_terms_and_interval_bound_the_exact_switched_loss(cls):
    rs = _set(cls, 500)
    ms = rs._margin
    n = len(ms.y)
    rng = np.random.default_rng(1)
    for f in (0, 1):
        T = MarginTerms(ms.D, ms.y, np.array([f + ms.o]))
        L, U = binned_terms(T, cells=12)
        assert len(L.G) <= 13 and len(U.G) <= 26
        for k in range(15):
            th = ms.theta_min + rng.normal(size=ms.D.shape[1]) * (0.6 if k else 0.0)
            ex, eo = T.e_switch(th, ms.loss), T.e_orig(th, ms.loss)
            assert exact_switch(T, th, ms.loss) == pytest.approx(ex, rel=1e-12)  # the members' exact evaluation
            lo, hi = L.e_switch(th, ms.loss) - eo / (n - 1.0), U.e_switch(th, ms.loss)
            assert lo <= ex * (1 + RTOL) and ex <= hi * (1 + RTOL), (f, lo, ex, hi)
            a, b = switch_interval(T, th, ms.loss, cells=64)
            assert a <= ex <= b
            assert (b - a) <= 1e-3 * ex  # 64 cells per side: tight
            a, b = switch_interval(T, th, ms.loss, cells=1000)  # no fewer cells than points: exact
            assert b - a <= 1e-9 * ex


def test_abs_dev_by_prefix_sums():
    rng = np.random.default_rng(2)
    G = np.unique(np.round(rng.normal(size=300), 1))
    cnt = rng.integers(1, 5, size=len(G)).astype(float)
    g = np.concatenate([G[::7], rng.normal(size=20)])
    assert np.allclose(_abs_dev(G, cnt, g), np.abs(G[None, :] - g[:, None]) @ cnt, rtol=1e-12, atol=1e-12)


@pytest.mark.usefixtures("small_budget")
def test_mcr_on_cells_is_valid(monkeypatch):
    from rashomon.datasets import load_pima_diabetes

    d = load_pima_diabetes()
    X, y = d.drop(columns="Outcome"), d["Outcome"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no third-party warning may leak
        rs = RashomonSet(LogisticModelClass(), 0.1).fit(X, y)
        exact = rs.model_class_reliance("Glucose")
        monkeypatch.setattr(_binned, "PAIRS", 0)
        monkeypatch.setattr(_binned, "CELL_PAIRS", 16 * len(y))  # 16 cells
        res = rs.model_class_reliance("Glucose")
        sample = rs.sample(1000, random_state=0)
    assert "cells of the feature" in res.notes and "cells of the feature" not in exact.notes
    par, eps = rs.parametrization_, rs.epsilon_abs_
    D = par.design(np.asarray(rs.X_, float))
    ye = np.where(np.asarray(rs.y_, float) == np.max(rs.y_), 1.0, -1.0)
    k = list(X.columns).index("Glucose") + (D.shape[1] - X.shape[1])
    th = np.asarray(sample.thetas)
    mrs = np.array([_brute_mr(D, ye, t, k, _logistic)[0] for t in th])
    tl, tu = RTOL * max(1.0, abs(res.lower)), RTOL * max(1.0, abs(res.upper))
    assert np.all(mrs >= res.lower - tl) and np.all(mrs <= res.upper + tu)
    # the exact run's members are members: inside the interval on cells
    assert res.lower - tl <= exact.lower_model.mr and exact.upper_model.mr <= res.upper + tu
    for m in (res.lower_model, res.upper_model):  # the members on cells: in the set, their MR exact
        bm, be = _brute_mr(D, ye, np.asarray(m.theta, float), k, _logistic)
        assert be <= eps * (1 + RTOL) and bm == pytest.approx(m.mr, rel=RTOL)
    assert res.lower <= res.lower_model.mr and res.upper_model.mr <= res.upper
