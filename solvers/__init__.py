"""Optimisation engines for rashomon (no statistics in here), installed as ``rashomon.solvers``.

Every backend implements the :class:`Solver` contract (what it takes, returns and certifies).

* :mod:`rashomon.solvers.trust_region` — exact, certified global solver for
  ``min x'Ax - 2b'x  s.t.  x'Bx <= r`` (A indefinite, B PSD possibly singular),
  with :class:`QCQPSequence` for the γ-sequences of MCR.
* :mod:`rashomon.solvers.osqp_qp` — OSQP for convex QPs with linear constraints, set up
  once and warm-started along a sequence.
* :mod:`rashomon.solvers.cvxpy_backend` — cvxpy for convex programmes with
  non-quadratic losses and a norm constraint.
"""
from ._base import DEFAULT_TOL, Certificate, Solver, SolverError, SolverResult, SolverStatus
from .trust_region import QCQPSequence, qcqp_certificate, solve_qcqp

__all__ = [
    "DEFAULT_TOL",
    "Certificate",
    "Solver",
    "SolverError",
    "SolverResult",
    "SolverStatus",
    "QCQPSequence",
    "qcqp_certificate",
    "solve_qcqp",
]
from .cvxpy_backend import ConvexLossProgram, LossTerm  # noqa: E402
from .osqp_qp import QPSequence, qp_certificate  # noqa: E402

__all__ += ["ConvexLossProgram", "LossTerm", "QPSequence", "qp_certificate"]
