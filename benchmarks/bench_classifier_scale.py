"""Classifier row queries at real sizes: screened multiplicity against the exact range of every row.

For synthetic logistic (and hinge) sets of n rows x p features, in CPU seconds of this process with one BLAS thread
(the machine is shared: CPU time, not wall time, and ratios measured in the same run):

* fit;
* ``prediction_range`` of 1,000 rows (both ends of each row exact to 1e-10);
* ``multiplicity()`` of every row: screened (members, certified outer bounds, the undecided rows solved until
  decided) against the previous method, the exact range of every row (``prediction_range`` of all rows, then the
  flips; skipped above ``--exact-max`` rows), with the flips compared row by row;
* the peak resident memory of the process.

    python benchmarks/bench_classifier_scale.py                 # 10^4 x 10 logistic and hinge, 3 x 10^4 x 20
    python benchmarks/bench_classifier_scale.py --sizes 100000x20 --exact-max 0
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from threadpoolctl import threadpool_limits

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet


def data(n: int, p: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = rng.normal(size=p) * 0.5
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ beta)))).astype(int)
    return X, y


def cpu(f):
    t = time.process_time()
    out = f()
    return out, time.process_time() - t


def run(n: int, p: int, loss: str, exact_max: int, eps: float) -> None:
    X, y = data(n, p)
    cls = LogisticModelClass if loss == "logistic" else HingeModelClass
    rs, t_fit = cpu(lambda: RashomonSet(cls(), eps).fit(X, y))
    m = min(1000, n)
    _, t_pr = cpu(lambda: rs.prediction_range(X[:m], scale="score"))
    mult, t_mult = cpu(lambda: rs.multiplicity(threshold=0.0, scale="score"))
    line = (
        f"{loss:8s} {n:>8d} x {p:<3d} fit {t_fit:7.2f} s | prediction_range({m}) {t_pr:7.2f} s | "
        f"multiplicity {t_mult:7.2f} s (ambiguity {mult.ambiguity:.4f}; settled {mult.settled})"
    )
    print(line, flush=True)
    if n <= exact_max:
        ex, t_ex = cpu(lambda: rs.prediction_range(scale="score"))
        # rows where the exact ranges decide the flip (an attained end crosses 0, or a certified end does not):
        # there the flips must agree; elsewhere the exact method stopped with a gap across 0
        above = ex.reference > 0
        decided = np.where(above, (ex.lower_attained <= 0) | (ex.lower > 0), (ex.upper_attained > 0) | (ex.upper <= 0))
        same = np.array_equal(ex.flippable(0.0)[decided], mult.flips[decided])
        extra = int((mult.flips & ~decided).sum())
        print(
            f"{'':8s} exact range of every row (previous method) {t_ex:7.2f} s: {t_ex / t_mult:5.1f}x the screened "
            f"time; flips equal on the {int(decided.sum())} rows it decides: {same}; of the {int((~decided).sum())} "
            f"it leaves open, the screen witnesses {extra} flips",
            flush=True,
        )
        assert same, "screened flips differ from the exact ranges"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000x10,30000x20", help="comma-separated NxP (default: %(default)s)")
    ap.add_argument("--losses", default="logistic,hinge", help="default: %(default)s")
    ap.add_argument("--exact-max", type=int, default=10000, help="largest n timed by the exact method")
    ap.add_argument("--epsilon", type=float, default=0.1, help="relative ε (default: %(default)s)")
    args = ap.parse_args()
    with threadpool_limits(1):
        for size in args.sizes.split(","):
            n, p = (int(v) for v in size.lower().split("x"))
            for loss in args.losses.split(","):
                run(n, p, loss, args.exact_max, args.epsilon)
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
