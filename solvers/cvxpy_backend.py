"""cvxpy backend for convex programmes with non-quadratic losses and a norm constraint.

Standard form (a *convex loss programme*)::

    minimise   Σ_t w_t · mean_i s_ti · ℓ_t((F_t x + g_t)_i ; y_ti)  +  x'Qx - 2q'x
    subject to x'Bx <= r

with non-negative weights ``w_t`` (cvxpy Parameters, so a sequence of weights
re-uses one compiled problem), row weights ``s_ti >= 0`` and losses ℓ in
``squared`` ``(y - z)²``, ``absolute`` ``|y - z|``, ``hinge``
``max(0, 1 - y·z)`` (y in ±1) and ``logistic`` ``log(1 + exp(-y·z))``.

Certificate: besides the solver status and feasibility, a Lagrangian duality
gap. With ν the multiplier cvxpy returns for ``x'Bx <= r``, the dual function
``q(ν) = min_x f(x) + ν(x'Bx - r)`` is an unconstrained convex problem; any
value of it is a lower bound on the optimum, so ``f(x) - q(ν)`` bounds the
sub-optimality of x.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._base import Certificate, Solver, SolverError, SolverResult, SolverStatus

__all__ = ["LossTerm", "ConvexLossProgram", "loss_values"]

LOSSES = ("squared", "absolute", "hinge", "logistic")


def loss_values(loss: str, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Per-row values of a standard-form loss at predictions z."""
    if loss == "squared":
        return (y - z) ** 2
    if loss == "absolute":
        return np.abs(y - z)
    if loss == "hinge":
        return np.maximum(0.0, 1 - y * z)
    return np.logaddexp(0.0, -y * z)


@dataclass
class LossTerm:
    """One term ``mean_i s_i ℓ((F x + g)_i ; y_i)`` of a convex loss programme."""

    loss: str
    F: np.ndarray
    g: np.ndarray
    y: np.ndarray
    row_weights: np.ndarray | None = None

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise ValueError(
                f"The 'loss' parameter of LossTerm must be one of {list(LOSSES)}. Got {self.loss!r} instead."
            )
        self.F = np.asarray(self.F, dtype=float)
        m = self.F.shape[0]
        self.g = np.broadcast_to(np.asarray(self.g, dtype=float), (m,)).copy()
        self.y = np.asarray(self.y, dtype=float).ravel()
        self.row_weights = np.ones(m) if self.row_weights is None else np.asarray(self.row_weights, dtype=float)

    def expr(self, x):
        import cvxpy as cp

        z = self.F @ x + self.g
        if self.loss == "squared":
            e = cp.square(self.y - z)
        elif self.loss == "absolute":
            e = cp.abs(self.y - z)
        elif self.loss == "hinge":
            e = cp.pos(1 - cp.multiply(self.y, z))
        else:
            e = cp.logistic(-cp.multiply(self.y, z))
        return cp.sum(cp.multiply(self.row_weights / self.row_weights.size, e))

    def value(self, x: np.ndarray) -> float:
        e = loss_values(self.loss, self.y, self.F @ x + self.g)
        return float(np.sum(self.row_weights * e) / self.row_weights.size)


class ConvexLossProgram(Solver):
    """A convex loss programme, compiled once; ``solve`` takes the term weights.

    Parameters
    ----------
    terms : list of LossTerm
    B : ndarray of shape (p, p)
        PSD matrix of the norm constraint ``x'Bx <= r``.
    r : float
    Q, q : optional quadratic and linear parts (Q PSD).
    solver : str, default="CLARABEL"
    tol : float, default=1e-6
        Relative duality gap (and feasibility) the certificate must meet.
    """

    backend = "cvxpy"

    def __init__(self, terms, B, r, Q=None, q=None, *, solver: str = "CLARABEL", tol: float = 1e-6):
        import cvxpy as cp

        self.terms = list(terms)
        p = self.terms[0].F.shape[1]
        self.B = np.asarray(B, dtype=float)
        self.r = float(r)
        if not (np.isfinite(self.r) and self.r > 0):
            raise ValueError(f"The 'r' parameter must be a finite float > 0. Got {r!r} instead.")
        self.Q = None if Q is None else np.asarray(Q, dtype=float)
        self.q = np.zeros(p) if q is None else np.asarray(q, dtype=float)
        self.solver, self.tol, self.p = solver, tol, p
        self.x = cp.Variable(p)
        self.w = [cp.Parameter(nonneg=True, value=1.0) for _ in self.terms]
        self.nu = cp.Parameter(nonneg=True, value=0.0)
        lam, V = np.linalg.eigh(0.5 * (self.B + self.B.T))
        self._Bh = (V * np.sqrt(np.clip(lam, 0, None))).T  # x'Bx = ||Bh x||²
        f = self._objective_expr(self.x)
        self._primal = cp.Problem(cp.Minimize(f), [cp.sum_squares(self._Bh @ self.x) <= self.r])
        self._dual = cp.Problem(cp.Minimize(f + self.nu * (cp.sum_squares(self._Bh @ self.x) - self.r)))

    def _objective_expr(self, x):
        import cvxpy as cp

        f = sum(w * t.expr(x) for w, t in zip(self.w, self.terms)) - 2 * self.q @ x
        if self.Q is not None:
            f = f + cp.quad_form(x, cp.psd_wrap(0.5 * (self.Q + self.Q.T)))
        return f

    def objective(self, x: np.ndarray, weights) -> float:
        val = sum(w * t.value(x) for w, t in zip(weights, self.terms)) - 2 * float(self.q @ x)
        if self.Q is not None:
            val += float(x @ self.Q @ x)
        return float(val)

    def _solve(self, weights) -> SolverResult:
        """Minimise with term weights ``weights`` (one non-negative float per term)."""
        import cvxpy as cp

        weights = [float(w) for w in weights]
        if len(weights) != len(self.terms) or min(weights) < 0:
            raise ValueError("The 'weights' parameter must hold one non-negative float per term.")
        for par, w in zip(self.w, weights):
            par.value = w
        import warnings

        try:
            with warnings.catch_warnings():
                # "Solution may be inaccurate": judged below by our own duality-gap certificate.
                warnings.simplefilter("ignore", UserWarning)
                self._primal.solve(solver=self.solver)
        except cp.error.SolverError as exc:
            raise SolverError(f"cvxpy/{self.solver} failed: {exc}") from None
        st = self._primal.status
        if st in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            return SolverResult(None, np.nan, np.nan, SolverStatus.INFEASIBLE, None, backend=self.backend)
        if st in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
            return SolverResult(None, -np.inf, np.nan, SolverStatus.UNBOUNDED, None, backend=self.backend)
        x = np.asarray(self.x.value, dtype=float)
        nu = max(float(np.ravel(self._primal.constraints[0].dual_value)[0]), 0.0)
        fx = self.objective(x, weights)
        xBx = float(np.sum((self._Bh @ x) ** 2))
        self.nu.value = nu
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                self._dual.solve(solver=self.solver)
            lower = float(self._dual.value) if self._dual.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) else -np.inf
        except cp.error.SolverError:
            lower = -np.inf
        gap = max(0.0, fx - lower) / max(1.0, abs(fx))
        cert = Certificate(
            stationarity=0.0,  # nonsmooth objective: optimality is certified by the duality gap
            complementarity=nu * abs(self.r - xBx) / max(1.0, abs(fx)),
            feasibility=max(0.0, xBx - self.r) / self.r,
            duality_gap=gap,
        )
        status = SolverStatus.OPTIMAL if cert.passed(self.tol) else SolverStatus.INACCURATE
        res = SolverResult(
            x,
            fx,
            nu,
            status,
            cert,
            int(self._primal.solver_stats.num_iters or 0),
            self.backend,
            {"lower_bound": lower, "cvxpy_status": st},
        )
        return res
