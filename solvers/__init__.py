"""Optimisation engines for rashomon (no statistics in here), installed as ``rashomon.solvers``.

Every backend implements the :class:`Solver` contract (what it takes, returns and certifies).

* ``rashomon.solvers.trust_region`` — exact, certified global solver for
  ``min x'Ax - 2b'x  s.t.  x'Bx <= r`` (A indefinite, B PSD possibly singular),
  with :class:`QCQPSequence` for the γ-sequences of MCR.
* ``rashomon.solvers.two_constraint`` — global solver for the same objective under two
  convex quadratic constraints (the CDT problem), with a certified lower bound.
* ``rashomon.solvers.osqp_qp`` — OSQP for convex QPs with linear constraints, set up
  once and warm-started along a sequence.
* ``rashomon.solvers.cvxpy_backend`` — cvxpy for convex programmes with
  non-quadratic losses and a norm constraint.

Names load on first use (PEP 562), so importing one engine does not import the others'
dependencies (scipy.sparse, osqp, cvxpy).
"""

import importlib
import sys

# Public name -> module holding it. Adding a public name is one line here.
_EXPORTS = {
    "DEFAULT_TOL": "._base",
    "Certificate": "._base",
    "Solver": "._base",
    "SolverError": "._base",
    "SolverResult": "._base",
    "SolverStatus": "._base",
    "QCQPSequence": ".trust_region",
    "qcqp_certificate": ".trust_region",
    "solve_qcqp": ".trust_region",
    "ConvexLossProgram": ".cvxpy_backend",
    "LossTerm": ".cvxpy_backend",
    "QPSequence": ".osqp_qp",
    "qp_certificate": ".osqp_qp",
    "SmoothBallProgram": ".smooth_ball",
    "TwoConstraintResult": ".two_constraint",
    "solve_two_constraint": ".two_constraint",
    "quiet_highs": ".highs",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    vars(sys.modules[__name__])[name] = value  # later look-ups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
