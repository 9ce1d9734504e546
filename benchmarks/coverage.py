"""Coverage of learner-PD and learner-PFI confidence intervals (Molnar et al. 2023, simulation study).

DGPs (features U[0,1]^4, noise N(0,1)):
  linear:     y = x1 - x2 + e
  non-linear: y = x1 - sqrt(1 - x2) + x3*x4 + (x4/10)^2 + e
Learners: linear model, regression tree, random forest. n in {100, 1000}; 15 refits;
bootstrap (n rows with replacement, out-of-bag test) and subsampling (63.2% / 36.8%),
each without and with the Nadeau-Bengio correction (same refits for both).

Ground truth (the DGP's regression function f):
  PD of x1 at v: E[f(v, X2, X3, X4)] in closed form: linear v - 1/2; non-linear
  v - 2/3 + 1/4 + 1/300 (E sqrt(1 - x2) = 2/3, E x3 x4 = 1/4, E (x4/10)^2 = 1/300),
  at the grid v = 0.1, 0.3, 0.5, 0.7, 0.9.
  PFI of x1 (squared loss, difference): E[(f(X) - f(X with x1 replaced by an independent
  copy))^2] = 2 Var(x1) = 1/6 for both DGPs (x1 enters additively with coefficient 1).
Coverage: share of (simulation, grid point) pairs whose 95% interval contains the truth (PD),
and of simulations whose interval contains the PFI of x1.

    python benchmarks/coverage.py [--reps 100] [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

from rashomon.inference._inference import _corrected_ci, _refit_task
from rashomon.utils import get_loss, single_blas_thread

GRID = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
PFI_TRUE = 1.0 / 6.0


def dgp(kind, n, rng):
    X = rng.uniform(size=(n, 4))
    e = rng.normal(size=n)
    if kind == "linear":
        return X, X[:, 0] - X[:, 1] + e
    return X, X[:, 0] - np.sqrt(1 - X[:, 1]) + X[:, 2] * X[:, 3] + (X[:, 3] / 10) ** 2 + e


def pd_true(kind):
    return GRID - 0.5 if kind == "linear" else GRID - 2 / 3 + 1 / 4 + 1 / 300


LEARNERS = {
    "lm": lambda: LinearRegression(),
    "tree": lambda: DecisionTreeRegressor(min_samples_leaf=5, random_state=0),
    "rf": lambda: RandomForestRegressor(n_estimators=50, min_samples_leaf=5, random_state=0, n_jobs=1),
}


def one_rep(kind, learner, n, resampling, seed, n_refits=15):
    rng = np.random.RandomState(seed)
    X, y = dgp(kind, n, rng)
    L = get_loss("squared_error", "coverage")
    seeds = rng.randint(0, 2**31 - 1, size=n_refits)
    outs = [
        single_blas_thread(
            _refit_task, LEARNERS[learner](), X, y, None, int(s), resampling, 0.632, [(0,)], 5, L, (0, GRID)
        )
        for s in seeds
    ]
    pfi = np.array([o["pfi"][0] for o in outs])
    pdc = np.vstack([o["pd"] for o in outs])
    c = float(np.mean([o["n_test"] / o["n_train"] for o in outs]))
    res = {}
    truth = pd_true(kind)
    for corr, cc in (("plain", 0.0), ("corrected", c)):
        _, _, lo, hi = _corrected_ci(pdc.T, cc, 0.95)
        res[f"pd_{corr}"] = float(np.mean((lo <= truth) & (truth <= hi)))
        _, _, lo, hi = _corrected_ci(pfi, cc, 0.95)
        res[f"pfi_{corr}"] = float(lo <= PFI_TRUE <= hi)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="lm only, n = 100 (the reduced version in the test suite)")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args(argv)
    learners = ["lm"] if args.quick else ["lm", "tree", "rf"]
    ns = [100] if args.quick else [100, 1000]
    rows = []
    t0 = time.perf_counter()
    for kind in ["linear", "nonlinear"]:
        for learner in learners:
            for n in ns:
                cell = {}
                for resampling in ["bootstrap", "subsampling"]:
                    reps = args.reps if not (learner == "rf" and n == 1000) else max(20, args.reps // 2)
                    out = Parallel(n_jobs=args.n_jobs)(
                        delayed(one_rep)(kind, learner, n, resampling, 1000 * k + 7) for k in range(reps)
                    )
                    for key in out[0]:
                        cell[f"{resampling[:3]}_{key}"] = np.mean([o[key] for o in out])
                    cell["reps"] = reps
                rows.append((kind, learner, n, cell))
                print(
                    f"{kind:9s} {learner:4s} n={n:<5d} reps={cell['reps']:<4d} "
                    f"PD: boot {cell['boo_pd_plain']:.2f} / corr {cell['boo_pd_corrected']:.2f}, "
                    f"sub {cell['sub_pd_plain']:.2f} / corr {cell['sub_pd_corrected']:.2f} | "
                    f"PFI: boot {cell['boo_pfi_plain']:.2f} / corr {cell['boo_pfi_corrected']:.2f}, "
                    f"sub {cell['sub_pfi_plain']:.2f} / corr {cell['sub_pfi_corrected']:.2f}",
                    flush=True,
                )
    print(f"total {time.perf_counter() - t0:.0f} s")
    return rows


if __name__ == "__main__":
    main()
