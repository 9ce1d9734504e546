"""Exact global solver for one-constraint QCQPs (the trust-region family).

Standard form: minimise ``x'Ax - 2b'x`` subject to ``x'Bx <= r``; A symmetric
(indefinite allowed), B symmetric PSD (singular allowed), r > 0.

Method
------
1. *Factor B once* (``eigh``): ``B = V_R Λ V_R'`` on its range, ``V_N`` spans its
   nullspace. With ``x = T [z; w]``, ``T = [V_R Λ^{-1/2}, V_N]``, the constraint
   becomes ``||z||² <= r`` and w is free.
2. *Free directions.* Minimising over w needs ``Ã_ww ⪰ 0``; a direction d with
   ``Ã_ww d = 0`` must also have ``Ã_zw d = 0`` and ``d'b̃_w = 0``, otherwise the
   problem is unbounded. Eliminating w (Schur complement) leaves a
   trust-region subproblem ``min z'Sz - 2c'z, ||z||² <= r``.
3. *Trust-region subproblem* (:mod:`._secular`): the multiplier solves the secular equation
   ``||(S + νI)^{-1}c|| = √r``. First by Moré & Sorensen's (1983) safeguarded Newton with one
   Cholesky factorisation of ``S + νI`` per iteration, started from the multiplier the previous
   solves of the sequence predict (a secant in γ), usually 1–4 factorisations; a successful
   factorisation proves ``S + νI ≻ 0``. Where that does not settle (the *hard case*, S singular at
   the answer) or misses the certificate: one symmetric eigendecomposition ``S = QΛQ'`` and
   safeguarded Newton on the diagonalised equation in the shift ``δ = ν + λ_min`` (so nearly-hard
   cases keep full relative precision); the hard case (c orthogonal to the lowest eigenspace and
   the pseudo-inverse solution inside the ball) adds the eigenvector that reaches the boundary.
4. *Certificate* in the original coordinates (no trust in the transformation):
   stationarity, complementarity, feasibility and the smallest eigenvalue of
   ``A + νB`` (``"reduced"``: its sign from the factorisation of step 3).

Cost: setting up a :class:`QCQPSequence` costs one ``eigh`` of B and forming
``T'A₀T, T'A₁T`` (O(p³)); each solve for a new γ forms ``Ã₀ + γÃ₁`` (O(p²)),
one Schur elimination over the nullity k of B (O(p²k)), a few Cholesky factorisations of the
reduced p−k matrix (≈ (p−k)³/3 flops each; the eigendecomposition it replaces is ≈ 9(p−k)³)
and, for the full certificate, one eigenvalues-only ``eigvalsh`` of ``A + νB`` (≈ 4/3 p³ flops).
"""

from __future__ import annotations

import copy
import math

import numpy as np
from scipy import linalg

from ..utils import one_blas_thread
from ._base import DEFAULT_TOL, Certificate, Solver, SolverResult, SolverStatus
from ._secular import eigh, trust_region_cholesky, trust_region_eigh

__all__ = ["QCQPSequence", "solve_qcqp", "qcqp_certificate"]

_EPS = np.finfo(float).eps


def _sym(M: np.ndarray) -> np.ndarray:
    return 0.5 * (M + M.T)


def _quad_form_factor(B: np.ndarray) -> np.ndarray:
    """F with ``B = F F'`` (from eigh), so ``x'Bx = ||F'x||²`` is evaluated without the
    eps·cond(B) cancellation of a dense ``x @ B @ x``."""
    lam, V = linalg.eigh(_sym(np.asarray(B, dtype=float)))
    return V * np.sqrt(np.clip(lam, 0.0, None))


@one_blas_thread
def qcqp_certificate(
    A: np.ndarray, b: np.ndarray, B: np.ndarray, r: float, x: np.ndarray, nu: float, B_factor: np.ndarray | None = None
) -> Certificate:
    """Relative KKT residuals of ``x`` with multiplier ``nu`` for the QCQP standard form.

    ``B_factor`` (F with B = FF', computed from B when omitted) evaluates x'Bx.
    """
    F = _quad_form_factor(B) if B_factor is None else B_factor
    H = A + nu * B
    eig = linalg.eigvalsh(H)
    eig_a = linalg.eigvalsh(A)
    # Normwise backward-error scale: magnitudes of the terms summed, so cancellation in
    # A + νB (ν large, A indefinite) is not mistaken for inaccuracy.
    h_norm = max(abs(eig_a[0]), abs(eig_a[-1])) + nu * float(np.sum(F * F, axis=0).max(initial=0.0)) + 1e-300
    x_norm = float(np.linalg.norm(x))
    stat = float(np.linalg.norm(H @ x - b)) / (h_norm * x_norm + float(np.linalg.norm(b)) + 1e-300)
    Fx = F.T @ x
    xBx = float(Fx @ Fx)
    xAx = float(x @ A @ x)
    scale = abs(xAx) + 2 * abs(float(b @ x)) + nu * r + 1e-300
    comp = nu * abs(r - xBx) / scale
    feas = max(0.0, xBx - r) / r
    return Certificate(stationarity=stat, complementarity=comp, feasibility=feas, min_eigenvalue=float(eig[0] / h_norm))


class QCQPSequence(Solver):
    """Solve ``min x'(A₀+γA₁)x - 2(b₀+γb₁)'x  subject to  x'Bx <= r`` for many γ, factoring B once.

    Parameters
    ----------
    A0, A1 : ndarray of shape (p, p)
        Symmetric. ``A1`` defaults to zero.
    b0, b1 : ndarray of shape (p,)
        ``b1`` defaults to zero.
    B : ndarray of shape (p, p)
        Symmetric positive semi-definite.
    r : float
        Right-hand side, > 0.
    tol : float, default=1e-8
        Relative KKT tolerance the certificate must meet; a solve that misses it
        raises :class:`SolverError` (``check=True``) or returns status INACCURATE.
    rank_tol : float, optional
        Eigenvalues of B below ``rank_tol · λ_max(B)`` count as its nullspace
        (default ``100 · p · eps``).
    """

    backend = "trust_region"

    @one_blas_thread
    def __init__(self, A0, b0, B, r, A1=None, b1=None, *, tol: float = DEFAULT_TOL, rank_tol: float | None = None):
        A0 = np.asarray(A0, dtype=float)
        p = A0.shape[0]
        if A0.shape != (p, p):
            raise ValueError(f"The 'A0' parameter must be a square matrix. Got shape {A0.shape} instead.")
        B = np.asarray(B, dtype=float)
        b0 = np.asarray(b0, dtype=float).ravel()
        A1 = np.zeros((p, p)) if A1 is None else np.asarray(A1, dtype=float)
        b1 = np.zeros(p) if b1 is None else np.asarray(b1, dtype=float).ravel()
        for name, M in (("B", B), ("A1", A1)):
            if M.shape != (p, p):
                raise ValueError(f"The '{name}' parameter must have shape {(p, p)}. Got {M.shape} instead.")
        for name, v in (("b0", b0), ("b1", b1)):
            if v.shape != (p,):
                raise ValueError(f"The '{name}' parameter must have shape {(p,)}. Got {v.shape} instead.")
        for name, M in (("A0", A0), ("A1", A1), ("B", B), ("b0", b0), ("b1", b1)):
            if not np.all(np.isfinite(M)):
                raise ValueError(f"The '{name}' parameter must be finite.")
        if not (np.isfinite(r) and r > 0):
            raise ValueError(f"The 'r' parameter must be a finite float > 0. Got {r!r} instead.")
        self.A0, self.A1, self.b0, self.b1 = _sym(A0), _sym(A1), b0, b1
        self.B, self.r, self.p, self.tol = _sym(B), float(r), p, tol
        lam, V = linalg.eigh(self.B)
        lmax = max(lam[-1], 0.0)
        if lam[0] < -1e-10 * max(lmax, 1.0):
            raise ValueError(
                f"The 'B' parameter must be positive semi-definite. Its smallest eigenvalue is {lam[0]:.3g}."
            )
        cut = (rank_tol if rank_tol is not None else 100 * p * _EPS) * lmax
        rng_ = lam > cut
        if not np.any(rng_):
            raise ValueError("The 'B' parameter must not be zero.")
        self.k = int(np.sum(~rng_))  # nullity of B
        self.T = np.hstack([V[:, rng_] / np.sqrt(lam[rng_]), V[:, ~rng_]])
        self.B_factor = V[:, rng_] * np.sqrt(lam[rng_])
        self.m = p - self.k
        self._At0 = _sym(self.T.T @ self.A0 @ self.T)
        self._At1 = _sym(self.T.T @ self.A1 @ self.T)
        self._bt0 = self.T.T @ b0
        self._bt1 = self.T.T @ b1
        self._hist: list[tuple[float, float]] = []  # (γ, ν) of the last certified solves: warm starts
        self._b_norm = float(np.sum(self.B_factor * self.B_factor, axis=0).max(initial=0.0))  # λ_max(B)

    def swapped(self) -> QCQPSequence:
        """The family ``A1 + γA0, b1 + γb0`` on the same constraint, sharing this one's factorisation of B
        and transformed matrices (the two ends of an MCR search are such a pair)."""
        out = copy.copy(self)
        out.A0, out.A1, out.b0, out.b1 = self.A1, self.A0, self.b1, self.b0
        out._At0, out._At1, out._bt0, out._bt1 = self._At1, self._At0, self._bt1, self._bt0
        out._hist = []
        return out

    def problem(self, gamma: float) -> tuple[np.ndarray, np.ndarray]:
        """``(A(γ), b(γ))`` in the original coordinates."""
        return self.A0 + gamma * self.A1, self.b0 + gamma * self.b1

    def _solve(self, gamma: float = 0.0, *, certificate: str = "full") -> SolverResult:
        """Globally minimise the problem at multiplier ``gamma``.

        ``certificate="full"`` (default) checks the KKT conditions in the original
        coordinates, including ``eigvalsh(A + νB)``. ``"reduced"`` takes the
        smallest eigenvalue of ``A + νB`` from the factorisation already made
        (the reduced matrix ``S + νI`` and the free block), costing O(p²) instead
        of two more O(p³) eigenvalue solves; callers re-check the solutions they
        report with :func:`qcqp_certificate`.

        Returns a :class:`~solvers.SolverResult` whose status is OPTIMAL (certified
        at ``tol``), UNBOUNDED, or INACCURATE (only with ``check=False``;
        otherwise :class:`SolverError` is raised).
        """
        At = self._At0 + gamma * self._At1
        bt = self._bt0 + gamma * self._bt1
        m, k = self.m, self.k
        Szz, bz = At[:m, :m], bt[:m]
        info: dict = {"gamma": float(gamma)}
        if k:
            Aww, Azw, bw = At[m:, m:], At[:m, m:], bt[m:]
            scale = float(np.abs(At).max())  # nan or inf iff an entry is
            if not math.isfinite(scale):
                raise ValueError(f"The problem at gamma={gamma!r} is not finite (overflow in A0 + gamma*A1).")
            scale = max(scale, _EPS)
            tiny = 1e3 * max(k, m) * _EPS * scale
        if k == 1:  # one free direction (an unpenalised intercept): Ã_ww is a number, the Schur step rank one
            mu, a, bw0 = Aww[0], Azw[:, 0], float(bw[0])
            mu0 = float(mu[0])
            if mu0 < -tiny:
                return SolverResult(None, -np.inf, np.nan, SolverStatus.UNBOUNDED, None, 0, self.backend, info)
            if mu0 > tiny:
                S, c = Szz - np.multiply.outer(a / mu0, a), bz - a * (bw0 / mu0)  # symmetric as computed

                def free(z):
                    return np.concatenate((z, ((bw0 - a @ z) / mu0,)))
            else:  # Ã_ww = 0: the direction must leave the objective flat, or it is unbounded
                if np.abs(a).max(initial=0.0) > tiny or abs(bw0) > tiny * max(float(np.abs(bt).max()), tiny) / scale:
                    return SolverResult(None, -np.inf, np.nan, SolverStatus.UNBOUNDED, None, 0, self.backend, info)
                S, c = Szz, bz

                def free(z):
                    return np.concatenate((z, (0.0,)))
        elif k:
            mu, U = eigh(Aww)
            if mu[0] < -tiny:
                return SolverResult(None, -np.inf, np.nan, SolverStatus.UNBOUNDED, None, 0, self.backend, info)
            pos = mu > tiny
            # Directions with Ã_ww d = 0 must leave the objective flat, or it is unbounded.
            D = U[:, ~pos]
            if D.shape[1]:
                b_scale = max(np.abs(bt).max(), tiny)
                if (
                    np.abs(Azw @ D).max(initial=0.0) > tiny
                    or np.abs(D.T @ bw).max(initial=0.0) > 1e3 * max(k, m) * _EPS * b_scale
                ):
                    return SolverResult(None, -np.inf, np.nan, SolverStatus.UNBOUNDED, None, 0, self.backend, info)
            Up, mup = U[:, pos], mu[pos]
            G = (Azw @ Up) / mup  # Ã_zw Ã_ww^+ (on its range)
            S = _sym(Szz - G @ (Up.T @ Azw.T))
            c = bz - G @ (Up.T @ bw)

            def free(z):
                return np.concatenate([z, Up @ ((Up.T @ (bw - Azw.T @ z)) / mup)])
        else:
            S, c = Szz, bz

            def free(z):
                return z

        s_scale = float(np.abs(S).max(initial=0.0))
        if not math.isfinite(s_scale):  # nan or inf iff an entry is
            raise ValueError(f"The problem at gamma={gamma!r} is not finite (overflow in A0 + gamma*A1).")
        A, b = self.problem(gamma)
        # Moré–Sorensen (Cholesky factorisations) from the multiplier predicted by the previous solves;
        # one eigendecomposition where it does not settle (the hard case) or misses the certificate.
        for use_chol in (True, False):
            sol = trust_region_cholesky(S, c, self.r, self._guess(gamma)) if use_chol else None
            if sol is not None:
                z, nu, its, hard, lam_s = *sol, False, None
            elif use_chol:
                continue
            else:
                z, nu, hard, its, lam_s = trust_region_eigh(S, c, self.r)
            x = self.T @ free(z)
            if certificate == "reduced":
                cert, obj = self._reduced_certificate(
                    A, b, x, nu, lam_s if sol is None else s_scale + nu, mu if k else None
                )
            else:
                cert, obj = qcqp_certificate(A, b, self.B, self.r, x, nu, self.B_factor), None
            if cert.passed(self.tol):
                break
        info["cholesky"] = sol is not None
        if not cert.passed(self.tol):
            x, nu, cert = self._polish(A, b, x, nu, cert)
            info["polished"] = True
            obj = None
        if obj is None:
            obj = float(x @ A @ x - 2 * b @ x)
        status = SolverStatus.OPTIMAL if cert.passed(self.tol) else SolverStatus.INACCURATE
        info["hard_case"] = hard
        if status is SolverStatus.OPTIMAL:
            self._hist = (self._hist + [(float(gamma), float(nu))])[-32:]
        return SolverResult(x, obj, float(nu), status, cert, its, self.backend, info)

    def _guess(self, gamma: float) -> float:
        """The multiplier at γ predicted by the secant through the two nearest solved γ (0 for a first solve or
        next to an interior solution)."""
        h = self._hist
        if not h:
            return 0.0
        d = [abs(g - gamma) for g, _ in h]
        i = min(range(len(h)), key=d.__getitem__)
        g1, nu1 = h[i]
        if nu1 == 0.0 or len(h) == 1:
            return nu1
        d[i] = math.inf
        g2, nu2 = h[min(range(len(h)), key=d.__getitem__)]
        return max(nu1 + (nu2 - nu1) / (g2 - g1) * (gamma - g1), 0.0) if g2 != g1 else nu1

    def _reduced_certificate(self, A, b, x, nu, lam_s, mu_w):
        """KKT residuals in original coordinates, with the PSD check taken from the reduced factorisation.

        ``T'(A+νB)T = [[Ã_zz + νI, Ã_zw], [Ã_wz, Ã_ww]]`` is PSD iff ``Ã_ww ⪰ 0`` and its
        Schur complement ``S + νI ⪰ 0`` (T invertible), so ``min(λ(S) + ν, λ(Ã_ww))``
        decides the sign; it is scaled by the largest of these magnitudes. ``lam_s`` a number: the
        Cholesky factorisation of ``S + νI`` succeeded, which proves it positive definite, and the number
        bounds its eigenvalues (``max|S_ij| + ν``). Returns the certificate and the objective ``x'Ax - 2b'x``
        (from the same products).
        """
        F = self.B_factor
        Fx = F.T @ x
        Ax = A @ x
        res = Ax + nu * (F @ Fx) - b
        # 2-norms as np.linalg.norm computes them (sqrt of the dot product), without its dispatch
        scale_a = math.sqrt(float(np.vdot(A, A)))
        x_norm = math.sqrt(float(x @ x))
        stat = math.sqrt(float(res @ res)) / ((scale_a + nu * self._b_norm) * x_norm + math.sqrt(float(b @ b)) + 1e-300)
        xBx = float(Fx @ Fx)
        xAx, bx = float(x @ Ax), float(b @ x)
        comp = nu * abs(self.r - xBx) / (abs(xAx) + 2 * abs(bx) + nu * self.r + 1e-300)
        feas = max(0.0, xBx - self.r) / self.r
        if isinstance(lam_s, float):  # proved positive definite: only the free block's sign is left
            if mu_w is None:
                return Certificate(stat, comp, feas, min_eigenvalue=0.0), xAx - 2 * bx
            low, top = min(float(mu_w.min()), 0.0), max(lam_s, float(np.abs(mu_w).max())) + 1e-300
            return Certificate(stat, comp, feas, min_eigenvalue=low / top), xAx - 2 * bx
        eigs = lam_s + nu if lam_s.size else np.zeros(0)
        if mu_w is not None:
            eigs = np.concatenate([eigs, mu_w])
        top = float(np.max(np.abs(eigs), initial=0.0)) + 1e-300
        return Certificate(stat, comp, feas, min_eigenvalue=float(np.min(eigs, initial=0.0) / top)), xAx - 2 * bx

    def _polish(self, A, b, x, nu, cert):
        """Iterative refinement on the KKT system in the original coordinates.

        The transformation T is ill-conditioned when B is (condition numbers up to
        1e12); Newton steps on ``(A+νB)x = b`` (with ``x'Bx = r`` when ν > 0)
        remove the error it introduces. A step is kept only if it lowers the worst
        residual.
        """
        B, p = self.B, self.p
        for _ in range(3):
            H = A + nu * B
            res = H @ x - b
            if nu > 0:
                K = np.zeros((p + 1, p + 1))
                K[:p, :p] = H
                K[:p, p] = K[p, :p] = B @ x
                Fx = self.B_factor.T @ x
                rhs = np.concatenate([-res, [0.5 * (self.r - Fx @ Fx)]])
            else:
                K, rhs = H, -res
            step = linalg.lstsq(K, rhs, lapack_driver="gelsy")[0]
            x2 = x + step[:p]
            nu2 = max(0.0, nu + step[p]) if nu > 0 else nu
            Fx = self.B_factor.T @ x2
            q = Fx @ Fx
            if nu2 > 0 and q > 0:
                x2 = x2 * np.sqrt(self.r / q)
            cert2 = qcqp_certificate(A, b, B, self.r, x2, nu2, self.B_factor)  # polishing always re-checks in full
            if cert2.worst() >= cert.worst():
                break
            x, nu, cert = x2, nu2, cert2
            if cert.passed(self.tol):
                break
        return x, nu, cert


def solve_qcqp(A, b, B, r, *, tol: float = DEFAULT_TOL, check: bool = True) -> SolverResult:
    """Globally minimise ``x'Ax - 2b'x`` subject to ``x'Bx <= r`` (see :class:`QCQPSequence`)."""
    return QCQPSequence(A, b, B, r, tol=tol).solve(0.0, check=check)
