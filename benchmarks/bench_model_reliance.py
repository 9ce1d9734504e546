"""Model reliance speed: exact closed form vs scikit-learn's permutation_importance.

Prints, in one run:
1. exact e_switch for a linear model at n = 1,000,000, p = 50;
2. its ratio to sklearn.inspection.permutation_importance(n_repeats=5) on the
   same model and data (which is only an estimate of e_switch);
3. black-box exact e_switch (all n(n-1) pairs, streamed) at n = 20,000 with a
   tree ensemble: time and peak memory.
"""

import os
import sys

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LinearRegression

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time  # noqa: E402
from rashomon import model_reliance  # noqa: E402

rng = np.random.default_rng(0)
n, p = 1_000_000, 50
X = rng.normal(size=(n, p))
y = X @ rng.normal(size=p) + rng.normal(size=n)
lin = LinearRegression().fit(X, y)

t_ours, mr = best_time(lambda: model_reliance(lin, X, y, 0))
assert mr.closed_form
# permutation_importance always permutes every column; to compare like with like we time both
# one column (sklearn's own per-column routine) and all columns (the public function).
from sklearn.inspection._permutation_importance import _calculate_permutation_scores  # noqa: E402
from sklearn.metrics import check_scoring  # noqa: E402

scorer = check_scoring(lin, scoring="neg_mean_squared_error")
t_sk_one, scores = best_time(lambda: _calculate_permutation_scores(lin, X, y, None, 0, 0, 5, scorer, n), repeat=1)
t_sk_all, _ = best_time(
    lambda: permutation_importance(lin, X, y, n_repeats=5, random_state=0, scoring="neg_mean_squared_error", n_jobs=1),
    repeat=1,
)
from rashomon import feature_reliance  # noqa: E402

t_ours_all, _ = best_time(lambda: feature_reliance(lin, X, y), repeat=1)

print(f"[linear, n={n:,}, p={p}] exact e_switch (closed form), one feature: {t_ours:.3f} s  (goal < 1 s)")
print(
    f"  sklearn permutation_importance(n_repeats=5), one feature : {t_sk_one:.3f} s  -> ours {t_sk_one / t_ours:.1f}x faster (goal >= 20x)"
)
print(f"  all {p} features: ours {t_ours_all:.2f} s, sklearn {t_sk_all:.2f} s -> {t_sk_all / t_ours_all:.1f}x")
print(f"  exact difference {mr.difference:.6f}; sklearn's 5-permutation estimate {(-scores).mean() - mr.e_orig:.6f}")

n2 = 20_000
X2 = rng.normal(size=(n2, 8))
y2 = np.sin(X2[:, 0]) + X2[:, 1] * X2[:, 2] + rng.normal(scale=0.3, size=n2)
gbm = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X2, y2)
import time  # noqa: E402
import tracemalloc  # noqa: E402

t0 = time.perf_counter()
mr2 = model_reliance(gbm, X2, y2, 0, n_jobs=2, closed_form=False)  # the generic path (trees: bench_tree_eswitch.py)
elapsed = time.perf_counter() - t0
print(
    f"[black box, HistGradientBoosting(20 trees), n={n2:,}] exact e_switch over {n2 * (n2 - 1):,} pairs, n_jobs=2: "
    f"{elapsed:.1f} s; ratio {mr2.ratio:.4f}"
)
# Peak memory, in one process so tracemalloc sees every allocation. Blocks are capped by
# memory_limit (256 MiB of switched rows), not by n, so n = 4,000 (16 million pairs) already uses
# full-size blocks, as n = 20,000 does.
n3 = 4_000
tracemalloc.start()
t0 = time.perf_counter()
model_reliance(gbm, X2[:n3], y2[:n3], 0, n_jobs=1, closed_form=False)
t3 = time.perf_counter() - t0
peak = tracemalloc.get_traced_memory()[1] / 2**20
tracemalloc.stop()
print(
    f"  peak traced memory, n_jobs=1, n={n3:,} ({n3 * (n3 - 1):,} pairs, full-size blocks): {peak:.0f} MiB "
    f"(memory_limit 256 MiB; time {t3:.1f} s)"
)
