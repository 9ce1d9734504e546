"""Exact e_switch of tree ensembles: prediction paths / threshold cells vs the generic streamed path.

Prints, in one run, for HistGradientBoostingRegressor(max_iter=100) and RandomForestRegressor(100
trees) at n = 20,000 (8 features, one switched feature, squared loss):
1. model_reliance(..., method="exact") as used by default (exact_algorithm "tree-paths"): time,
   peak traced memory (tracemalloc: every numpy allocation during the call) and the process's
   peak RSS so far;
2. the generic streamed exact path (closed_form=False, one prediction per (distinct value, row)),
   timed on the first SLICE distinct values of the switched feature and scaled linearly to all of
   them (its cost is exactly proportional to the number of values: the same blocks, the same rows);
3. for HistGradientBoosting, the threshold-cell path (one prediction per (occupied cell, row));
4. the relative difference between the default and the generic exact value on the first 800 rows
   (the generic path in full).

Run: python benchmarks/bench_tree_eswitch.py
"""

import os
import resource
import sys
import time
import tracemalloc

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

sys.path.insert(0, os.path.dirname(__file__))

from rashomon import model_reliance  # noqa: E402
from rashomon.reliance._exact import distinct_cells, exact_e_switch  # noqa: E402
from rashomon.reliance._tree_cells import threshold_cells  # noqa: E402
from rashomon.utils.losses import Predictor, get_loss  # noqa: E402

MAX_ROWS = (256 * 2**20) // (8 * (8 + 4))  # the generic path's block, as model_reliance sets it

rng = np.random.default_rng(0)
n = 20_000
X = rng.normal(size=(n, 8))
y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + rng.normal(scale=0.3, size=n)


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def generic_slice(model, n_values):
    """Time of the generic exact path over the first n_values distinct values, and the total count."""
    pred = Predictor(model, get_loss("squared_error", "bench"), None, "bench")
    values, inverse, counts = distinct_cells(X, (0,))
    t, _ = timed(lambda: exact_e_switch(pred, X, y, (0,), MAX_ROWS, None, (values[:n_values], inverse, counts)))
    return t, len(values)


def case(name, model, slice_values, goal, cells=False):
    model.fit(X, y)
    tracemalloc.start()
    t_fast, res = timed(lambda: model_reliance(model, X, y, 0))
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    rss = rss_mib()
    t_slice, n_values = generic_slice(model, slice_values)
    t_generic = t_slice * n_values / slice_values
    print(
        f"[{name}, n={n:,}] exact e_switch, default ({res.exact_algorithm}): {t_fast:.2f} s (goal {goal}); "
        f"peak traced {traced:.0f} MiB, process peak RSS {rss:.0f} MiB; ratio {res.ratio:.4f}"
    )
    print(
        f"  generic streamed exact path: {t_slice:.2f} s for {slice_values} of {n_values:,} distinct values "
        f"-> {t_generic:.0f} s for all (scaled) -> default is {t_generic / t_fast:.0f}x faster"
    )
    if cells:
        pred = Predictor(model, get_loss("squared_error", "bench"), None, "bench")
        tc = threshold_cells(model, X, (0,))
        t_cells, _ = timed(lambda: exact_e_switch(pred, X, y, (0,), MAX_ROWS, None, tc))
        print(
            f"  threshold-cell path ({len(tc[0])} occupied cells): {t_cells:.2f} s -> default is "
            f"{t_cells / t_fast:.1f}x faster, generic/cells {t_generic / t_cells:.0f}x"
        )
    m = 800
    a = model_reliance(model, X[:m], y[:m], 0).e_switch
    b = model_reliance(model, X[:m], y[:m], 0, closed_form=False).e_switch
    print(f"  check on the first {m} rows: |default - generic| / generic = {abs(a - b) / b:.1e}")


case(
    "HistGradientBoostingRegressor(max_iter=100)",
    HistGradientBoostingRegressor(max_iter=100, random_state=0),
    slice_values=100,
    goal="<= 5 s, >= 40x, < 500 MiB",
    cells=True,
)
case(
    "RandomForestRegressor(n_estimators=100)",
    RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=2),
    slice_values=20,
    goal="<= 60 s",
)
