"""Exact QCQP engine vs a generic cvxpy solve on the same convex instances.

Prints time per solve for p = 50, 200, 1000 and the ratio, plus the per-γ cost
of a QCQPSequence (B factored once) on a non-convex sequence.
"""

import os
import sys
import time

import cvxpy as cp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time  # noqa: E402
from rashomon.solvers import QCQPSequence, solve_qcqp  # noqa: E402

rng = np.random.default_rng(0)
print(f"{'p':>6} {'exact (s)':>10} {'cvxpy (s)':>10} {'ratio':>7} {'|obj diff|/|obj|':>17} {'exact cert':>11}")
for p in (50, 200, 1000):
    M = rng.normal(size=(p, p))
    A = M @ M.T / p + 1e-3 * np.eye(p)
    Q = np.linalg.qr(rng.normal(size=(p, p)))[0]
    B = (Q * rng.uniform(0.5, 2.0, p)) @ Q.T
    b = rng.normal(size=p) * 5
    r = 1.0
    t_ex, ex = best_time(lambda: solve_qcqp(A, b, B, r), repeat=3)  # noqa: B023  (called within this iteration)
    x = cp.Variable(p)
    prob = cp.Problem(cp.Minimize(cp.quad_form(x, cp.psd_wrap(A)) - 2 * b @ x), [cp.quad_form(x, cp.psd_wrap(B)) <= r])
    t0 = time.perf_counter()
    prob.solve(solver=cp.CLARABEL)
    t_cv = time.perf_counter() - t0
    print(
        f"{p:>6} {t_ex:>10.4f} {t_cv:>10.4f} {t_cv / t_ex:>6.1f}x {abs(ex.objective - prob.value) / abs(prob.value):>17.2e} {ex.certificate.worst():>11.1e}"
    )

p = 200
M = rng.normal(size=(p, p))
A0, A1 = M @ M.T / p, (M + M.T) / 2
seq = QCQPSequence(A0, rng.normal(size=p), np.eye(p), 1.0, A1=A1, b1=rng.normal(size=p))
gammas = np.linspace(-1, 1, 21)
t0 = time.perf_counter()
for g in gammas:
    seq.solve(g)
print(
    f"QCQPSequence p={p}: {(time.perf_counter() - t0) / len(gammas) * 1e3:.1f} ms per gamma (indefinite A(γ), certified)"
)
