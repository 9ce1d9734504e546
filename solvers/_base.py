"""Statuses, results, certificates and the solver base class.

Standard forms (one per problem family):

* **QCQP** (``trust_region``): minimise ``x'Ax - 2b'x`` subject to ``x'Bx <= r``
  with A symmetric (possibly indefinite), B symmetric PSD (possibly singular),
  r > 0. Global optimality (S-lemma, Slater holds since x = 0 is strictly
  feasible): x* is optimal iff some ν >= 0 has ``(A + νB)x* = b``,
  ``A + νB ⪰ 0``, ``ν(r - x*'Bx*) = 0`` and ``x*'Bx* <= r``.
* **QP** (``osqp_qp``): minimise ``x'Ax - 2b'x`` subject to ``l <= Cx <= u``,
  A PSD.
* **Convex loss programme** (``cvxpy_backend``): minimise a non-negative
  combination of mean convex losses of affine functions of x (plus an optional
  quadratic) subject to ``x'Bx <= r``.
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..utils import one_blas_thread

__all__ = ["SolverStatus", "SolverError", "Certificate", "SolverResult", "Solver", "DEFAULT_TOL"]

#: Relative KKT tolerance a certified solve must meet.
DEFAULT_TOL = 1e-8


class SolverStatus(str, enum.Enum):
    """Canonical status shared by every backend."""

    OPTIMAL = "optimal"
    UNBOUNDED = "unbounded"
    INFEASIBLE = "infeasible"
    INACCURATE = "inaccurate"


class SolverError(RuntimeError):
    """A solve whose answer cannot be trusted (certificate failed, backend error)."""


@dataclass(frozen=True)
class Certificate:
    """Relative optimality residuals of a solution (all dimensionless).

    Attributes
    ----------
    stationarity : float
        ``||∇ Lagrangian|| / scale``; for the QCQP the normwise backward error
        ``||(A+νB)x - b|| / ((||A|| + ν||B||)·||x|| + ||b||)`` (2-norms).
    complementarity : float
        ``ν·|r - x'Bx|`` relative to the objective's scale (0 for an interior solution).
    feasibility : float
        Relative constraint violation (0 when feasible).
    min_eigenvalue : float
        Smallest eigenvalue of ``A + νB`` divided by ``||A|| + ν||B||``; must be
        ``>= -tol`` for a global optimum of a non-convex QCQP (``nan`` where not
        applicable).
    duality_gap : float
        Relative gap between primal and dual objective (``nan`` where not reported).
    """

    stationarity: float
    complementarity: float
    feasibility: float
    min_eigenvalue: float = float("nan")
    duality_gap: float = float("nan")

    def passed(self, tol: float = DEFAULT_TOL) -> bool:
        ok = self.stationarity <= tol and self.complementarity <= tol and self.feasibility <= tol
        if not np.isnan(self.min_eigenvalue):
            ok = ok and self.min_eigenvalue >= -tol
        if not np.isnan(self.duality_gap):
            ok = ok and self.duality_gap <= tol
        return bool(ok)

    def worst(self) -> float:
        vals = [self.stationarity, self.complementarity, self.feasibility]
        if not np.isnan(self.min_eigenvalue):
            vals.append(max(0.0, -self.min_eigenvalue))
        if not np.isnan(self.duality_gap):
            vals.append(self.duality_gap)
        return float(max(vals))


@dataclass(frozen=True)
class SolverResult:
    """Result of one solve.

    Attributes
    ----------
    x : ndarray of shape (p,) or None
        Minimiser (None when unbounded or infeasible).
    objective : float
        Optimal value in the family's standard form (``-inf`` when unbounded).
    multiplier : float or ndarray
        ν of the quadratic constraint (QCQP), or the dual vector y (QP).
    status : SolverStatus
    certificate : Certificate or None
    iterations : int
    backend : str
    info : dict
        Backend-specific extras (e.g. ``hard_case``).
    """

    x: np.ndarray | None
    objective: float
    multiplier: Any
    status: SolverStatus
    certificate: Certificate | None
    iterations: int = 0
    backend: str = ""
    info: dict = field(default_factory=dict)


class Solver(abc.ABC):
    """The solver contract, shared by every backend.

    A solver is set up once for a *family* of problems in one standard form (above),
    indexed by a parameter: γ for the sequences ``A(γ) = A0 + γA1, b(γ) = b0 + γb1``
    (:class:`~rashomon.solvers.QCQPSequence`, :class:`~rashomon.solvers.QPSequence`) or the
    term weights of a convex loss programme (:class:`~rashomon.solvers.ConvexLossProgram`).
    Setting up factorises / compiles once; each ``solve`` reuses that work.

    **Takes** the parameter (finite), ``check`` and backend options.
    **Returns** a :class:`SolverResult` in the family's standard form: the minimiser,
    the optimal value, the constraint multiplier(s), a :class:`Certificate` of relative
    KKT residuals (and duality gap where the backend reports one), iterations, backend name.
    **Certifies**: status ``OPTIMAL`` means the certificate passed at ``self.tol`` (so the
    value is the global optimum to that tolerance); ``UNBOUNDED`` and ``INFEASIBLE`` are
    proved statuses; ``INACCURATE`` means the answer cannot be trusted, and with
    ``check=True`` (default) ``solve`` raises :class:`SolverError` instead of returning it.

    Backends declare ``backend`` (a name) and implement ``_solve``.
    """

    backend: str = ""
    tol: float = DEFAULT_TOL

    @one_blas_thread
    def solve(self, param: Any = 0.0, *, check: bool = True, **options: Any) -> SolverResult:
        """Solve the member ``param`` of the family (see the class docstring for the contract)."""
        vals = np.atleast_1d(np.asarray(param, dtype=float))
        if not np.all(np.isfinite(vals)):
            raise ValueError(
                f"The 'param' parameter of {type(self).__name__}.solve must be finite. Got {param!r} instead."
            )
        res = self._solve(param, **options)
        if check and res.status is SolverStatus.INACCURATE:
            raise SolverError(
                f"{self.backend} solve at {param!r} failed its certificate at tol={self.tol:g}: "
                f"{res.certificate if res.certificate is not None else res.info}"
            )
        return res

    @abc.abstractmethod
    def _solve(self, param: Any, **options: Any) -> SolverResult:
        """One solve, without raising on an INACCURATE status (the base class decides)."""
