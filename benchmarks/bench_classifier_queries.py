"""Queries of classifier Rashomon sets (issue 18 item 1): prediction ranges and sampling, against cvxpy.

On Pima (768 x 8, ``Outcome``), logistic and hinge classes, ε = 0.1 (relative): the score range of the
first ``N`` rows by :meth:`RashomonSet.prediction_range` (certified bound and attaining member per end),
and the same convex programmes solved by cvxpy + CLARABEL (exponential cone for the logistic loss, an LP
epigraph for the hinge; the ball as a quadratic constraint), timed in the same run. Printed: seconds per
row-end of each, the ratio, the largest certified gap of ours, and the agreement: cvxpy's optimum must lie
in [our bound - 1e-6, our attained value + 1e-6] (cvxpy's own accuracy is about 1e-7 to 1e-6). Then the
time to sample 1,000 members (hit-and-run) and to compute coefficient ranges.

    python benchmarks/bench_classifier_queries.py [--quick]
"""
import sys
import time
import warnings

import numpy as np

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet
from rashomon.datasets import load_pima_diabetes


def cvxpy_range(rs, rows):
    """min and max of each row's score over the set, by cvxpy + CLARABEL."""
    import cvxpy as cp

    ms = rs._margin
    D, y, B, r, o = ms.D, ms.y, ms.B, ms.r, ms.o
    d = D.shape[1]
    th = cp.Variable(d)
    m = cp.multiply(y, D @ th)
    if ms.loss.name == "logistic":
        loss = cp.sum(cp.logistic(-m))
    else:
        loss = cp.sum(cp.pos(1 - m))
    Bp = B[o:, o:]
    L = np.linalg.cholesky(0.5 * (Bp + Bp.T))
    cons = [loss <= len(y) * rs.epsilon_abs_, cp.sum_squares(L.T @ th[o:]) <= r]
    P = rs.parametrization_.design(rows)
    lo, hi, failures = [], [], [0]
    for p in P:
        for sign, out in ((1.0, lo), (-1.0, hi)):
            prob = cp.Problem(cp.Minimize(sign * (p @ th)), cons)
            try:
                prob.solve(solver="CLARABEL")
            except cp.error.SolverError:  # the peer's own failure: retried with SCS at high accuracy
                prob.solve(solver="SCS", eps=1e-9, max_iters=200000)
                failures[0] += 1
            out.append(sign * prob.value)
    return np.array(lo), np.array(hi), failures[0]


def main(quick=False):
    n_rows = 10 if quick else 40
    df = load_pima_diabetes()
    X, y = df.drop(columns="Outcome"), df["Outcome"]
    rows = X.iloc[:n_rows]
    print(f"Pima {X.shape}, epsilon = 0.1 (relative), score ranges of {n_rows} rows (both ends)")
    print(f"{'class':<10}{'ours s/row-end':>16}{'cvxpy s/row-end':>17}{'ratio':>8}{'max gap':>11}"
          f"{'agree':>7}{'sample 1000 s':>15}{'coef_range s':>14}")
    for cls in (LogisticModelClass, HingeModelClass):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rs = RashomonSet(cls(), 0.1).fit(X, y)
            t = time.perf_counter()
            res = rs.prediction_range(rows)
            ours = (time.perf_counter() - t) / (2 * n_rows)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # cvxpy's own warnings (the peer, not our package)
            c_lo, c_hi, n_fail = cvxpy_range(rs, rows)
        peer = (time.perf_counter() - t) / (2 * n_rows)
        agree = bool(np.all(c_lo >= res.lower - 1e-6) and np.all(c_lo <= res.lower_attained + 1e-6)
                     and np.all(c_hi <= res.upper + 1e-6) and np.all(c_hi >= res.upper_attained - 1e-6))
        t = time.perf_counter()
        rs.sample(1000, random_state=0)
        t_s = time.perf_counter() - t
        t = time.perf_counter()
        rs.coef_range()
        t_c = time.perf_counter() - t
        print(f"{cls.__name__[:-10]:<10}{ours:>16.4f}{peer:>17.4f}{peer / ours:>8.2f}{float(res.gap.max()):>11.2e}"
              f"{str(agree):>7}{t_s:>15.2f}{t_c:>14.2f}   (CLARABEL failed on {n_fail} of {2 * n_rows}: SCS used)")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
