"""The trust-region subproblem ``min z'Sz - 2c'z  s.t.  ||z||² <= r`` (S symmetric, indefinite allowed).

Two exact solvers of its secular equation ``||(S + νI)^{-1}c|| = √r`` (ν >= 0, ``S + νI ⪰ 0``):

* :func:`trust_region_eigh` — one symmetric eigendecomposition, then safeguarded Newton on the
  diagonalised equation; handles every case, the *hard case* included.
* :func:`trust_region_cholesky` — Moré & Sorensen (1983): safeguarded Newton on
  ``1/||z(ν)|| - 1/√r`` with one Cholesky factorisation of ``S + νI`` per iteration (≈ p³/3 flops
  against ≈ 9p³ for the eigendecomposition), started from a predicted ν. A successful
  factorisation *proves* ``S + νI ≻ 0`` (up to its backward error, ~p·eps·||S||), so with the KKT
  equations it certifies the global minimum. It returns None where it does not settle (the hard
  case, S singular at the answer) and the caller falls back to the eigendecomposition.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

__all__ = ["trust_region_eigh", "trust_region_cholesky", "eigh"]

_EPS = np.finfo(float).eps
_F64 = (np.empty((1, 1)),)
_SYEVR, _SYEVR_LWORK = linalg.get_lapack_funcs(("syevr", "syevr_lwork"), _F64)
_POTRF, _POTRS, _TRTRS = linalg.get_lapack_funcs(("potrf", "potrs", "trtrs"), _F64)
_LWORK: dict[int, dict] = {}


def eigh(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.linalg.eigh(M)`` (LAPACK ``dsyevr``, the same call and workspace, so the same bits),
    without the per-call argument handling and workspace query: it is half the cost of a γ-step's
    eigendecomposition at p ≈ 50. M must be finite and symmetric (only its lower triangle is read)."""
    n = M.shape[0]
    lw = _LWORK.get(n)
    if lw is None:
        lwork, liwork, info = _SYEVR_LWORK(n=n, lower=1)
        if info != 0:
            return linalg.eigh(M)
        lw = _LWORK[n] = {"lwork": int(lwork), "liwork": int(liwork)}
    w, v, _, _, info = _SYEVR(a=M, compute_v=1, lower=1, overwrite_a=0, **lw)
    if info != 0:  # let scipy raise its own error
        return linalg.eigh(M)
    return w, v


def trust_region_cholesky(S: np.ndarray, c: np.ndarray, r: float, nu0: float = 0.0, max_iter: int = 16):
    """Moré–Sorensen solve from the guess ``nu0``: ``(z, ν, iterations)`` where the Cholesky factorisation
    of ``S + νI`` succeeded, or None when it does not settle within ``max_iter`` factorisations.

    ν is kept in a bracket ``[lo, hi]`` containing the answer: ``lo`` starts at ``-min S_ii`` (<= -λ_min)
    and rises to every ν whose factorisation fails or whose ``||z(ν)||`` exceeds √r; ``hi`` starts at a
    Gershgorin bound on ``-λ_min`` plus ``||c||/√r`` and falls to every ν with ``||z(ν)|| < √r``. Newton
    steps leaving the bracket are replaced by its geometric mean (Moré & Sorensen's safeguard), or by ν = 0
    when the bracket reaches down to 0 (an interior answer). It gives up (None) after ``max_iter``
    factorisations, or after three failed ones and two above the answer with none below it yet: the
    signature of the (nearly) hard case, where the answer sits at -λ_min and the eigendecomposition is
    the way.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # ||z||, ||L⁻¹z|| may overflow near a singular S + νI:
        return _cholesky_iterations(S, c, r, nu0, max_iter)  # inf/nan there leads to bisection or None, by design


def _cholesky_iterations(S: np.ndarray, c: np.ndarray, r: float, nu0: float, max_iter: int):
    m = S.shape[0]
    sr = math.sqrt(r)
    dg = S.diagonal().copy()
    lo, hi = max(0.0, -float(dg.min())), math.inf

    def bisect():  # the geometric mean of the bracket (Gershgorin's upper end, computed when first needed)
        nonlocal hi
        if hi == math.inf:
            hi = max(0.0, float((np.abs(S).sum(axis=1) - 2 * dg).max())) + math.sqrt(float(c @ c)) / sr
            hi = hi * (1 + 1e-12) + 1e-300  # exact in theory; rounding must not exclude the answer
        return max(math.sqrt(lo * hi), lo + 0.01 * (hi - lo)) if hi - lo > 1e-13 * hi else math.nan

    nu = max(float(nu0), lo)
    if nu == lo and lo > 0:  # S + loI has a zero diagonal entry: not positive definite
        nu = bisect()
    idx = np.arange(m)
    fails, right, left, zero_tried = 0, 0, False, nu == 0.0
    for its in range(1, max_iter + 1):
        M = S.copy()
        M[idx, idx] = dg + nu
        L, info = _POTRF(M, lower=1, clean=1, overwrite_a=1)
        if info != 0:  # S + νI not positive definite: ν <= -λ_min <= ν*
            lo, fails = max(lo, nu), fails + 1
            nu = bisect()
            if not math.isfinite(nu) or (fails >= 3 and right >= 2 and not left):
                return None
            continue
        z, info = _POTRS(L, c, lower=1)
        nz = math.sqrt(float(z @ z))
        if info != 0 or not math.isfinite(nz):
            return None
        if nu == 0.0 and nz <= sr:  # interior: S ≻ 0 and the Newton point is inside
            return z, 0.0, its
        if abs(nz - sr) <= 1e-13 * sr:
            return z * (sr / nz), nu, its
        if nz < sr:
            hi, right = nu, right + 1
        else:
            lo, left = nu, True
        w, info = _TRTRS(L, z, lower=1)
        ww = float(w @ w)
        new = nu + (nz * nz / ww) * (nz - sr) / sr if (info == 0 and ww > 0) else math.nan
        if abs(new - nu) <= 4 * _EPS * nu and abs(nz - sr) <= 1e-10 * sr:  # no further progress in floating point
            return z * (sr / nz), nu, its
        if not lo < new < hi:
            if lo == 0.0 and not zero_tried and new <= lo:
                new, zero_tried = 0.0, True
            else:
                new = bisect()
                if not math.isfinite(new):
                    return None
        nu = new
    return None


def trust_region_eigh(S: np.ndarray, c: np.ndarray, r: float):
    """Global minimiser of ``z'Sz - 2c'z`` over ``||z||² <= r``: returns (z, ν, hard_case, iterations, λ(S))."""
    m = S.shape[0]
    if m == 0:
        return np.zeros(0), 0.0, False, 0, np.zeros(0)
    lam, Q = eigh(S)
    ct = Q.T @ c
    l1 = lam[0]
    scale = max(abs(lam[0]), abs(lam[-1]), _EPS)
    sr = np.sqrt(r)
    d = lam - l1  # >= 0, exact zeros on the lowest eigenspace
    low = d <= 1e3 * m * _EPS * scale
    c_scale = float(np.linalg.norm(ct)) + 1e-300
    # Interior solution (ν = 0): S ⪰ 0 and the (pseudo-inverse) Newton point lies inside.
    if l1 >= -1e3 * m * _EPS * scale:
        if l1 > 1e3 * m * _EPS * scale:
            z0 = ct / lam
            if z0 @ z0 <= r:
                return Q @ z0, 0.0, False, 0, lam
        else:
            null = lam <= 1e3 * m * _EPS * scale
            if np.linalg.norm(ct[null]) <= 1e3 * m * _EPS * c_scale:
                z0 = np.where(null, 0.0, ct / np.where(null, 1.0, lam))
                if z0 @ z0 <= r:
                    return Q @ z0, 0.0, False, 0, lam
    # Boundary solution: ν = δ - λ₁ with δ > max(0, ... ) solving ||z(δ)|| = √r.
    delta_lo = max(l1, 0.0)  # ν >= 0  <=>  δ >= λ₁ ; and δ > 0 for S + νI ≻ 0
    # Hard case: c ⟂ lowest eigenspace and the pseudo-inverse point at δ = 0 is inside.
    if l1 <= 0 and np.linalg.norm(ct[low]) <= 1e3 * m * _EPS * c_scale:
        zp = np.where(low, 0.0, ct / np.where(low, 1.0, d))
        nz = zp @ zp
        if nz <= r:
            tau = np.sqrt(max(r - nz, 0.0))
            zp = zp.copy()
            zp[np.argmax(low)] = tau
            return Q @ zp, float(-l1), True, 0, lam

    def norm_z(delta):
        return float(np.linalg.norm(ct / (d + delta)))  # scaled 2-norm: no overflow of the squares

    hi = delta_lo + c_scale / sr + scale * _EPS
    while norm_z(hi) > sr:  # guard: the bound above is exact in theory
        hi *= 2.0
    lo = delta_lo
    its = 0
    # Newton on φ(δ) = 1/||z(δ)|| - 1/√r (concave, increasing): from the left of the root it
    # converges monotonically; any step leaving the bracket [lo, hi] is replaced by bisection.
    delta = lo if lo > 0 else 0.5 * (lo + hi)
    for its in range(1, 200):  # noqa: B007  (its is returned: the iteration count)
        dd = d + delta
        zc = ct / dd
        nz = float(np.linalg.norm(zc))
        if nz > sr:
            lo = delta
        else:
            hi = delta
        if abs(nz - sr) <= 4 * _EPS * sr:
            break
        # φ'(δ) = Σ (z_i/||z||)² / (d_i+δ) / ||z||, in the scaled form (no overflow or underflow of ||z||³)
        if nz > 0 and np.isfinite(nz):
            u = zc / nz
            dphi = float((u * u / dd).sum()) / nz
        else:
            dphi = 0.0  # bisect
        step = (1.0 / nz - 1.0 / sr) / dphi if dphi > 0 else np.inf
        new = delta + step
        if not (lo < new < hi):
            new = 0.5 * (lo + hi)
        if new == delta or hi - lo <= 4 * _EPS * max(abs(hi), 1e-300):
            break
        delta = new
    z = ct / (d + delta)
    nz = np.linalg.norm(z)
    if nz > 0:
        z = z * (sr / nz)  # land exactly on the sphere (relative change ~ eps)
    return Q @ z, float(max(delta - l1, 0.0)), False, its, lam
