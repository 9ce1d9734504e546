"""The lower end's slab minorants affine in the margin and the switched coefficient (rashomon/sets/margin/
_lower_faces.py): every piece below the exact row function on its box (random points, logistic and hinge, narrow
and wide slabs, t above 1); every slab's bound below the MR of the sampled members in it and below a brute-force
grid's minimum on a 2-parameter set; and tight: the bound within 2% of the best member on a small set, and a
zero-width slab at the member's coefficient within 0.5% of the member."""

import math
import warnings

import numpy as np
import pytest

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet
from rashomon.sets.margin._ascent import coordinate_extremes
from rashomon.sets.margin._bounds import ScoreRanges
from rashomon.sets.margin._lower_bnb import _Slabs, lower_slab_bound
from rashomon.sets.margin._lower_faces import face_pieces
from rashomon.sets.margin._mcr import _bound_loss
from rashomon.sets.margin._sample import sample_margin_members
from rashomon.sets.margin._terms import MarginTerms

from ._brute import margin_loss as _loss
from ._brute import three_param_data as _data

TOL = 1e-9  # rounding of the brute-force sums (relative)


def _setup(cls, seed=0, eps=0.15):
    X, y = _data(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs = RashomonSet(cls(norm_bound=3.0), eps).fit(X, y)
    ms, e = rs._margin, rs.epsilon_abs_
    k = 1 + ms.o
    lo, hi = ms.intercept_range(e)
    bl = _bound_loss(ms.loss)
    R = ScoreRanges(ms.D, ms.y, ms.B, ms.r, lo, hi, bl, bl.offset, e, ms.theta_min)
    T = MarginTerms(ms.D, ms.y, np.array([k]))
    lim = coordinate_extremes(ms, T, ms.loss, e, lo, hi).coef_range(k)
    return rs, ms, e, k, lo, hi, R, T, lim


def _mr_many(D, y, k, thetas, name):
    """Ratio MR of many θ from the definition (all n(n-1) pairs), and e_orig."""
    n = len(y)
    dk = D[:, k][:, None] - D[:, k][None, :]
    s = thetas @ D.T
    sw = s[:, None, :] + dk[None, :, :] * thetas[:, k][:, None, None]
    L = _loss(y[None, None, :] * sw, name)
    e_s = (L.sum(axis=(1, 2)) - np.trace(L, axis1=1, axis2=2)) / (n * (n - 1))
    e_o = _loss(y[None, :] * s, name).mean(axis=1)
    return e_s / e_o, e_o


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
@pytest.mark.parametrize("t", [0.95, 1.3])
@pytest.mark.parametrize("width", [1e-3, 0.1, 0.5])
def test_pieces_below_row_functions(cls, t, width):
    """At 1,500 random points (m, b) of each row's box, ``max_p c + β m + β_b (b - b0)`` <= the exact
    ``φ_j(m, b) = [Σ_v cnt_v ℓ(m + y_j (G_v - g_j) b) - ℓ(m)]/(n-1) - (t - τ) ℓ(m)`` (τ: three values)."""
    rs, ms, e, k, lo, hi, R, T, lim = _setup(cls)
    sl = _Slabs(ms, T, R, ms.loss, e, ms.e_min_lower, lo, hi, t)
    name = ms.loss.name
    a0, b1 = lim
    mid = 0.5 * (a0 + b1) + 0.1 * (b1 - a0)
    a, b = mid - 0.5 * width * (b1 - a0), mid + 0.5 * width * (b1 - a0)
    sd = sl.slab(a, b)
    assert sd is not None
    rng = np.random.default_rng(0)
    n = sl.n
    for tau in (0.0, 0.4 * t, t):
        c, beta, bb = face_pieces(sl, sd, tau)
        u = rng.random((1500, sl.nr))
        m = sd["mlo"][None, :] + u * (sd["mhi"] - sd["mlo"])[None, :]
        bs = a + rng.random(1500) * (b - a)
        bs[:2] = a, b  # the faces themselves
        sw = (
            m[:, :, None]
            + (sl.y * 1.0)[None, :, None] * (sl.G[None, None, :] - sl.g[None, :, None]) * bs[:, None, None]
        )
        F = (_loss(sw, name) * sl.cnt[None, None, :]).sum(axis=2)
        own = _loss(m, name)
        phi = (F - own) / (n - 1.0) - (t - tau) * own
        low = np.max(c[None] + beta[None] * m[:, :, None] + bb[None] * (bs[:, None, None] - 0.5 * (a + b)), axis=2)
        assert np.all(low <= phi + 1e-12 * (1.0 + np.abs(phi)))


@pytest.mark.usefixtures("small_budget")
@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_every_slab_below_its_members(cls):
    """1,000 sampled members: each of 8 slabs' bound (at t = the best member's MR) is below the MR of every sampled
    member whose coefficient lies in it, and the whole bound below all of them."""
    rs, ms, e, k, lo, hi, R, T, lim = _setup(cls)
    res = rs.model_class_reliance(1)
    assert "γ < 0" in res.notes
    name = ms.loss.name
    thetas = sample_margin_members(rs, 1000, random_state=2)
    mr, eo = _mr_many(ms.D, ms.y, k, thetas, name)
    assert np.all(eo <= e * (1 + 1e-12))
    sl = _Slabs(ms, T, R, ms.loss, e, ms.e_min_lower, lo, hi, res.lower_model.mr)
    edges = np.linspace(lim[0], lim[1], 9)
    for a, b in zip(edges[:-1], edges[1:]):
        v = sl.cell(a, b, res.lower_model.theta, "ratio", (0.3 * sl.t,))[0]
        inside = (thetas[:, k] >= a) & (thetas[:, k] <= b)
        if inside.any():
            assert v <= mr[inside].min() + TOL
    bound, _ = lower_slab_bound(
        ms, T, R, ms.loss, e, lo, hi, "ratio", res.lower_model.theta, res.lower_model.mr, lim, max_slabs=24
    )
    assert bound <= mr.min() + TOL and res.lower <= mr.min() + TOL


@pytest.mark.usefixtures("small_upper_budget")
def test_grid_two_parameters():
    """Intercept and one weak feature (γ < 0 needed): below the minimum of a 301 x 301 grid inside S, within 1%."""
    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=50), 1)
    y = (0.4 * x + rng.logistic(size=50) > 0).astype(float)
    rs = RashomonSet(LogisticModelClass(norm_bound=4.0), 0.2).fit(x[:, None], y)
    ms, eps = rs._margin, rs.epsilon_abs_
    res = rs.model_class_reliance(0)
    assert "γ < 0" in res.notes
    lo, hi = ms.intercept_range(eps)
    bmax = math.sqrt(ms.r / ms.B[1, 1])
    mu, beta = np.meshgrid(np.linspace(lo[0], hi[0], 301), np.linspace(-bmax, bmax, 301))
    th = np.stack([mu.ravel(), beta.ravel()], 1)
    inside = (th[:, 1] ** 2 * ms.B[1, 1] <= ms.r) & (_loss(ms.y[None, :] * (th @ ms.D.T), "logistic").mean(1) <= eps)
    gmin = float(_mr_many(ms.D, ms.y, 1, th[inside], "logistic")[0].min())
    assert gmin - 0.01 * gmin <= res.lower <= gmin + TOL


@pytest.mark.usefixtures("small_upper_budget")
def test_tight_on_a_small_set():
    """Logistic, 3 parameters: the reported lower end within 2% of its member, and a zero-width slab at the
    member's coefficient within 0.5% of it (the width-free part of the relaxation is nearly exact here)."""
    rs, ms, e, k, lo, hi, R, T, lim = _setup(LogisticModelClass)
    res = rs.model_class_reliance(1)
    mr = res.lower_model.mr
    assert res.lower_gap <= 0.02 * mr
    sl = _Slabs(ms, T, R, ms.loss, e, ms.e_min_lower, lo, hi, mr)
    bk = float(res.lower_model.theta[k])
    w = 1e-9 * (lim[1] - lim[0])
    v = sl.cell(bk - w, bk + w, res.lower_model.theta, "ratio", (0.4 * mr,))[0]
    assert mr - 0.005 * mr <= v <= mr + TOL


@pytest.mark.parametrize("cls", [LogisticModelClass, HingeModelClass])
def test_set_row_ranges_contain_members(cls):
    """The set's certified row ranges (._lower_ranges) contain every sampled member's margins and the extreme
    members found by the coordinate searches, and are no wider than the ellipsoid's."""
    from rashomon.sets.margin._lower_ranges import set_row_ranges

    rs, ms, e, k, lo, hi, R, T, lim = _setup(cls)
    rlo, rhi = set_row_ranges(ms, e)
    thetas = sample_margin_members(rs, 1000, random_state=3)
    M = (thetas @ ms.D.T) * ms.y[None, :]
    assert np.all(M >= rlo[None, :] - 1e-9) and np.all(M <= rhi[None, :] + 1e-9)
    assert np.all(np.isfinite(rlo)) and np.mean(rhi - rlo) <= np.mean(R.hi_o - R.lo_o)
