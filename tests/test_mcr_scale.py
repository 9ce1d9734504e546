"""Classifier MCR at scale (10^6 rows): the bounded-memory paths, each checked against the plain one or brute force.

(a) ``unique_rows`` gives what ``np.unique(axis=0)`` gives (rows, order, classes), ties and signed zeros included.
(b) The set's e_orig terms build their switched parts only when asked, equal to the eager ones.
(c) The descent's Jaakkola–Jordan quadratic summed over parts of the cell terms equals the whole one (1e-12 relative:
rounding of the sums).
(d) The slab bound in row blocks (the large-set path, forced on a small set) gives the same slab values as the plain
one (1e-9 relative: the Hessian summed by blocks rounds differently, the certificate does not depend on it).
(e) A whole MCR on the large-set path (cells, no surrogate bounds, the slab bound in row blocks, all forced on Pima):
1,000 members sampled from the set lie inside its interval (brute-force MR, 1e-9 relative as in
``tests/test_margin_binned.py``), its members' MR is exact.
"""

import warnings

import numpy as np
import pytest

from rashomon import LogisticModelClass, RashomonSet
from rashomon.sets.margin import _binned, _secant, _slabs, _terms
from rashomon.sets.margin._binned import binned_terms
from rashomon.sets.margin._bounds import ScoreRanges, bound_loss
from rashomon.sets.margin._descent import _jj_quadratic
from rashomon.sets.margin._terms import MarginTerms, unique_rows

RTOL = 1e-9


def test_unique_rows_equals_numpy_unique():
    rng = np.random.default_rng(0)
    for trial in range(60):
        n, d = int(rng.integers(1, 200)), int(rng.integers(1, 5))
        A = rng.integers(-2, 3, size=(n, d)).astype(float)
        if trial % 3 == 0:
            A = rng.normal(size=(n, d))
        if trial % 5 == 0:
            A[:, 0] = -0.0 * A[:, 0]  # signed zeros are equal rows
        u, i, c = np.unique(A, axis=0, return_inverse=True, return_counts=True)
        u2, i2, c2 = unique_rows(A)
        assert np.array_equal(u, u2) and np.array_equal(i.ravel(), i2) and np.array_equal(c, c2)


def _pima():
    from rashomon.datasets import load_pima_diabetes

    d = load_pima_diabetes()
    X, y = d.drop(columns="Outcome"), d["Outcome"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return RashomonSet(LogisticModelClass(), 0.1).fit(X, y), X


def test_orig_terms_build_their_switched_parts_on_demand():
    rs, _ = _pima()
    ms = rs._margin
    assert "Dr" not in ms.orig.__dict__  # not built by the fit
    eager = MarginTerms(ms.D, ms.y, np.zeros(0, dtype=int))
    assert np.array_equal(ms.orig.Dr, eager.Dr) and np.array_equal(ms.orig._size, eager._size)
    th = ms.theta_min
    assert ms.orig.e_switch(th, ms.loss) == eager.e_switch(th, ms.loss)


def test_jj_quadratic_on_parts_equals_the_whole():
    rs, X = _pima()
    ms = rs._margin
    T = MarginTerms(ms.D, ms.y, np.array([list(X.columns).index("Glucose") + ms.o]))
    L, _ = binned_terms(T, cells=16)
    mj = ms.loss.smoothed(1e-3)
    th = ms.theta_min + 0.05
    whole = L.switch_quadratic(th, mj, mj.jj_curvature(L.switched_scores(th) * L.ys[None, :]))
    parts = L.split(3 * len(L.ys))
    assert len(parts) > 1 and sum(len(p.G) for p in parts) == len(L.G)
    q = _jj_quadratic(type("Split", (), {"split": lambda self, m: parts})(), th, mj)
    for a, b in ((q.Q, whole.Q), (q.c, whole.c), (q.k, whole.k)):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-14)


def test_slab_bound_in_row_blocks_equals_the_plain_one(monkeypatch):
    rs, X = _pima()
    ms, eps = rs._margin, float(rs.epsilon_abs_)
    k = list(X.columns).index("Insulin") + ms.o
    T = MarginTerms(ms.D, ms.y, np.array([k]))
    lo, hi = ms.intercept_range(eps)
    bl = bound_loss(ms.loss)
    R = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, eps, ms.theta_min)
    plain = _secant.SecantBound(ms, T, R, ms.loss, eps, ms.e_min_lower, lo, hi)
    monkeypatch.setattr(_secant, "_LEAN_ROWS", 100)
    monkeypatch.setattr(_slabs, "ROW_BLOCK", 128)
    monkeypatch.setattr(_secant, "ROW_BLOCK", 128)
    monkeypatch.setattr("rashomon.sets.margin._secant_rows.ROW_BLOCK", 128)
    lean = _secant.SecantBound(ms, T, R, ms.loss, eps, ms.e_min_lower, lo, hi)
    assert lean.lean and not plain.lean
    b_lo, b_hi = plain.b_range()
    mid = 0.5 * (b_lo + b_hi)
    for a, b in ((b_lo, mid), (mid, b_hi)):
        for end in (a, b):
            pp, pl = plain.pieces(a, b, 1.2, end=end), lean.pieces(a, b, 1.2, end=end)
            assert all(np.array_equal(u, v) for u, v in zip(pp, pl))  # the envelopes: the same bits
            up, _ = plain.slab_value(a, b, 1.0, 0.5, 0.25, ms.theta_min, end=end)
            ul, _ = lean.slab_value(a, b, 1.0, 0.5, 0.25, ms.theta_min, end=end)
            assert ul == pytest.approx(up, rel=RTOL, abs=RTOL)


def _brute_mr(D, ye, theta, k):
    s = D @ theta
    n = len(ye)
    loss = lambda m: np.log1p(np.exp(-np.abs(m))) - np.minimum(m, 0.0)  # noqa: E731
    eo = loss(ye * s)
    L = loss(ye[None, :] * (s[None, :] + (D[:, k][:, None] - D[:, k][None, :]) * theta[k]))
    return (L.sum() - np.trace(L)) / (n * (n - 1.0)) / eo.mean(), eo.mean()


@pytest.mark.usefixtures("small_budget")
def test_mcr_on_the_large_set_path_is_valid(monkeypatch):
    rs, X = _pima()
    monkeypatch.setattr(_binned, "PAIRS", 0)
    monkeypatch.setattr(_binned, "CELL_PAIRS", 16 * len(X))  # 16 cells
    monkeypatch.setattr(_binned, "SURROGATE_PAIRS", 0)  # no surrogate bounds: the slab bound first
    monkeypatch.setattr(_binned, "SPLIT_PAIRS", 4 * len(X))
    monkeypatch.setattr(_secant, "_LEAN_ROWS", 100)
    monkeypatch.setattr(_secant, "ROW_BLOCK", 200)
    monkeypatch.setattr("rashomon.sets.margin._secant_rows.ROW_BLOCK", 200)
    monkeypatch.setattr(_terms, "_ROWS", 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = rs.model_class_reliance("BMI")
        sample = rs.sample(1000, random_state=0)
    assert "no quadratic-surrogate" in res.notes and res.certified
    par, eps = rs.parametrization_, rs.epsilon_abs_
    D = par.design(np.asarray(rs.X_, float))
    ye = np.where(np.asarray(rs.y_, float) == np.max(rs.y_), 1.0, -1.0)
    k = list(X.columns).index("BMI") + (D.shape[1] - X.shape[1])
    mrs = np.array([_brute_mr(D, ye, t, k)[0] for t in np.asarray(sample.thetas)])
    tl, tu = RTOL * max(1.0, abs(res.lower)), RTOL * max(1.0, abs(res.upper))
    assert np.all(mrs >= res.lower - tl) and np.all(mrs <= res.upper + tu)
    for m in (res.lower_model, res.upper_model):
        bm, be = _brute_mr(D, ye, np.asarray(m.theta, float), k)
        assert be <= eps * (1 + RTOL) and bm == pytest.approx(m.mr, rel=RTOL)
