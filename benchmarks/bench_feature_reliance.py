"""feature_reliance of a linear model: every feature's exact e_switch from one set of sufficient statistics.

Prints, in one run, on the same model and data (n = 1,000,000, p = 50):
1. rashomon.feature_reliance, all 50 features, exact all-pairs U-statistic (best of 5, measured before
   and after the sklearn run so both sides see the same machine load), and its peak extra memory
   (tracemalloc, one call);
2. the previous per-feature closed form (one O(n·|G|) pass per feature, plus the predictions), best of 3;
3. sklearn.inspection.permutation_importance(n_repeats=1), all 50 features (one run: it is an
   estimate from one permutation per feature, not the exact value);
and the ratios between them, and the largest relative difference between 1 and 2.

Run: python benchmarks/bench_feature_reliance.py
"""

import os
import sys
import tracemalloc

import numpy as np
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LinearRegression

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time  # noqa: E402
from rashomon import feature_reliance  # noqa: E402
from rashomon.reliance._linear import linear_squared_e_switch  # noqa: E402

rng = np.random.default_rng(0)
n, p = 1_000_000, 50
X = rng.normal(size=(n, p))
y = X @ rng.normal(size=p) + rng.normal(size=n)
lin = LinearRegression().fit(X, y)

ours = lambda: feature_reliance(lin, X, y)  # noqa: E731
t_ours, fr = best_time(ours, repeat=5)
assert all(r.closed_form for r in fr.results)
tracemalloc.start()
ours()
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()


def per_feature():
    pred = lin.predict(X)
    return np.array([linear_squared_e_switch(X, y, pred, lin.coef_, [k])[1] for k in range(p)])


t_old, old = best_time(per_feature)
t_sk, sk = best_time(
    lambda: permutation_importance(lin, X, y, n_repeats=1, random_state=0, scoring="neg_mean_squared_error", n_jobs=1),
    repeat=1,
)
t_ours = min(t_ours, best_time(ours, repeat=5)[0])
rel = float(np.max(np.abs(fr.e_switch - old) / old))
print(f"[linear, n={n:,}, p={p}] feature_reliance, all {p} features, exact: {t_ours:.3f} s (goal < 0.5 s)")
print(f"  peak extra memory of one call: {peak / 2**20:.1f} MiB (X itself: {X.nbytes / 2**20:.0f} MiB)")
print(f"  previous per-feature closed form          : {t_old:.3f} s -> {t_old / t_ours:.1f}x")
print(f"  sklearn permutation_importance(n_repeats=1): {t_sk:.2f} s -> {t_sk / t_ours:.0f}x (goal >= 100x)")
print(f"  max relative difference to the per-feature values: {rel:.1e}")
print(
    f"  exact difference of feature 0: {fr.difference[0]:.6f}; sklearn's one-permutation estimate "
    f"{sk.importances[0, 0]:.6f}"
)
