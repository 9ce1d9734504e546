"""Classifier row queries at real sizes: screened multiplicity against the exact range of every row.

For synthetic logistic (and hinge) sets of n rows x p features, in CPU seconds of this process with one BLAS thread
(the machine is shared: CPU time, not wall time, and ratios measured in the same run):

* fit;
* ``prediction_range`` of 1,000 rows (both ends of each row exact to 1e-10);
* ``multiplicity()`` of every row (with ``--baseline`` also on three fresh sets, without the line search stage,
  with it but without the inner ellipsoids, and with both, in the same process, flips compared row by row): screened (members, certified outer bounds, the undecided rows solved until
  decided) against the previous method, the exact range of every row (``prediction_range`` of all rows, then the
  flips; skipped above ``--exact-max`` rows), with the flips compared row by row;
* 50 row ends (25 of the 1,000 rows, both ends) against cvxpy + CLARABEL (to 1e-6; up to ``--cvxpy-max`` rows);
* the peer ``rashomon-py`` (its own ε-set: L2-penalised loss within ε of its minimum, intercept unpenalised): fit,
  ``functional_range`` (both ends) and ``can_flip`` on ``--peer-rows`` rows, in a subprocess whose import path is
  ``--peer DIR`` (a directory holding its ``rashomon`` package: it has this package's import name), CPU seconds of
  that process, with the per-1,000-rows figure scaled from the rows timed;
* the peak resident memory of the process;
* with ``--compare DIR`` (a directory holding another version's ``rashomon`` package, e.g. a worktree of ``main``):
  ``prediction_range`` of the same rows by that version and by this one, alternating in fresh subprocesses
  (``--rounds`` each), CPU seconds of each subprocess with one BLAS thread, medians and their ratio (the machine may
  be shared: both sides see the same load), the two versions' ends compared.

    python benchmarks/bench_classifier_scale.py                 # 10^4 x 10 logistic and hinge, 3 x 10^4 x 20
    python benchmarks/bench_classifier_scale.py --sizes 100000x20 --exact-max 0
    python benchmarks/bench_classifier_scale.py --sizes 100000x20 --exact-max 0 --cvxpy-max 0 --rows 100 --no-multiplicity
    python benchmarks/bench_classifier_scale.py --peer /tmp/peer  # pip install --target /tmp/peer rashomon-py
    python benchmarks/bench_classifier_scale.py --sizes 10000x10 --losses logistic --compare ../main --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from rashomon import HingeModelClass, LogisticModelClass, RashomonSet

PEER = r"""
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
import rashomon
n, p, k, eps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
rng = np.random.default_rng(0)
X = rng.normal(size=(n, p))
beta = rng.normal(size=p) * 0.5
y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ beta)))).astype(int)
with threadpool_limits(1):
    t = time.process_time()
    rs = rashomon.RashomonSet(estimator="logistic", epsilon=eps, epsilon_mode="percent_loss", fit_intercept=True)
    rs.fit(X, y)
    t_fit = time.process_time() - t
    t = time.process_time()
    for i in range(k):
        rs.functional_range(np.concatenate([[1.0], X[i]]))
    t_range = time.process_time() - t
    t = time.process_time()
    flips = rs.can_flip(X[:k])
    t_flip = time.process_time() - t
print(json.dumps({"version": getattr(rashomon, "__version__", "?"), "fit": t_fit, "range": t_range,
                  "flip": t_flip, "flips": int(flips.sum())}))
"""

# prediction_range of the first k rows by the rashomon package on this subprocess's path (CPU seconds, one BLAS thread)
ROWS = r"""
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from rashomon import HingeModelClass, LogisticModelClass, RashomonSet
n, p, k, eps, loss, dump = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
rng = np.random.default_rng(0)
X = rng.normal(size=(n, p))
beta = rng.normal(size=p) * 0.5
y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ beta)))).astype(int)
with threadpool_limits(1):
    rs = RashomonSet((LogisticModelClass if loss == "logistic" else HingeModelClass)(), eps).fit(X, y)
    t = time.process_time()
    pr = rs.prediction_range(X[:k], scale="score")
    t = time.process_time() - t
np.save(dump, np.stack([pr.lower, pr.upper]))
gap = float(np.max(pr.gap / np.maximum(1.0, np.abs([pr.lower, pr.upper]))))
print(json.dumps({"t": t, "gap": gap}))
"""


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


def cvxpy_min(rs, a):
    """min a'θ over the set by cvxpy + CLARABEL; None when CLARABEL fails or is inaccurate."""
    import cvxpy as cp

    ms = rs._margin
    th = cp.Variable(ms.D.shape[1])
    mg = cp.multiply(ms.y, ms.D @ th)
    loss = cp.sum(cp.logistic(-mg)) if ms.loss.name == "logistic" else cp.sum(cp.pos(1 - mg))
    Bp = ms.B[ms.o :, ms.o :]
    L = np.linalg.cholesky(0.5 * (Bp + Bp.T))
    cons = [loss <= len(ms.y) * rs.epsilon_abs_, cp.sum_squares(L.T @ th[ms.o :]) <= ms.r]
    prob = cp.Problem(cp.Minimize(a @ th), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver="CLARABEL")
        except cp.error.SolverError:
            return None
    return float(prob.value) if prob.status == "optimal" else None


def check_cvxpy(rs, X, pr, ends: int) -> str:
    rows = np.random.default_rng(1).choice(len(pr.lower), size=ends // 2, replace=False)
    P, p0 = rs.parametrization_.prediction_map(X[rows])
    worst, compared, t0 = 0.0, 0, time.perf_counter()
    for k, i in enumerate(rows):
        for sign, end in ((1.0, pr.lower[i]), (-1.0, pr.upper[i])):
            v = cvxpy_min(rs, sign * P[k])
            if v is not None:
                compared += 1
                worst = max(worst, abs(sign * v + p0[k] - end) / max(1.0, abs(end)))
    ok = worst <= 1e-6
    line = (
        f"{compared} of {ends} row ends against cvxpy: worst relative difference {worst:.1e} ({'ok' if ok else 'FAIL'})"
    )
    line += f", cvxpy {time.perf_counter() - t0:.0f} s wall"
    assert ok, line
    return line


def peer(dir_: str, n: int, p: int, k: int, eps: float) -> str:
    env = dict(os.environ, PYTHONPATH=dir_, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", PEER, str(n), str(p), str(k), str(eps)],
        env=env,
        capture_output=True,
        text=True,
        cwd=dir_,
    )
    if out.returncode:
        return f"peer failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return (
        f"peer rashomon-py {r['version']}: fit {r['fit']:.2f} s | functional_range of {k} rows {r['range']:.2f} s "
        f"({r['range'] * 1000 / k:.1f} s per 1,000 rows) | can_flip of {k} rows {r['flip']:.2f} s "
        f"({r['flip'] * n / k:.0f} s scaled to all {n} rows; {r['flips']} flips)"
    )


def compare(dir_: str, n: int, p: int, loss: str, args) -> str:
    """prediction_range of ``--rows`` rows by the version in ``dir_`` and by this one, alternating in subprocesses."""
    import tempfile

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    times: dict[str, list[float]] = {"other": [], "this": []}
    gaps, ends = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for name, path in (("other", os.path.abspath(dir_)), ("this", here)):
                env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
                dump = os.path.join(tmp, f"{name}.npy")
                argv = [str(n), str(p), str(min(args.rows, n)), str(args.epsilon), loss, dump]
                out = subprocess.run(  # cwd: `-c` puts it first on the path
                    [sys.executable, "-c", ROWS, *argv], env=env, capture_output=True, text=True, cwd=path
                )
                if out.returncode:
                    return f"compare failed ({name}): {out.stderr.strip().splitlines()[-1:]}"
                r = json.loads(out.stdout.strip().splitlines()[-1])
                times[name].append(r["t"])
                gaps[name], ends[name] = r["gap"], np.load(dump)
    diff = float(np.max(np.abs(ends["other"] - ends["this"]) / np.maximum(1.0, np.abs(ends["other"]))))
    o, t = float(np.median(times["other"])), float(np.median(times["this"]))
    return (
        f"prediction_range({min(args.rows, n)}) alternating {args.rounds}x in subprocesses: {dir_} {o:.2f} s "
        f"(largest gap {gaps['other']:.1e}), this version {t:.2f} s (largest gap {gaps['this']:.1e}): ratio "
        f"{t / o:.2f}; ends differ by at most {diff:.1e} relative"
    )


def run(n: int, p: int, loss: str, args) -> None:
    X, y = data(n, p)
    cls = LogisticModelClass if loss == "logistic" else HingeModelClass
    rs, t_fit = cpu(lambda: RashomonSet(cls(), args.epsilon).fit(X, y))
    m = min(args.rows, n)
    pr, t_pr = cpu(lambda: rs.prediction_range(X[:m], scale="score"))
    if args.baseline and loss == "logistic":  # fresh sets (engines built in the call), without and with the rays
        from rashomon.sets.margin import _screen

        fresh = [RashomonSet(cls(), args.epsilon).fit(X, y) for _ in range(3)]
        _screen._RAYS = False
        base, t_base = cpu(lambda: fresh[0].multiplicity(threshold=0.0, scale="score"))
        _screen._RAYS, _screen._INNER = True, False
        mid, t_mid = cpu(lambda: fresh[1].multiplicity(threshold=0.0, scale="score"))
        _screen._INNER = True
        new, t_new = cpu(lambda: fresh[2].multiplicity(threshold=0.0, scale="score"))
        assert np.array_equal(base.flips, new.flips) and np.array_equal(mid.flips, new.flips), "a stage changed a flip"
        print(
            f"{'':8s} multiplicity on a fresh set: without the line search {t_base:7.2f} s (settled {base.settled}); "
            f"with it, without the inner ellipsoids {t_mid:7.2f} s (settled {mid.settled}); with both "
            f"{t_new:7.2f} s (settled {new.settled}): {t_base / t_new:4.1f}x, {t_mid / t_new:4.1f}x; flips equal",
            flush=True,
        )
    line = (
        f"{loss:8s} {n:>8d} x {p:<3d} fit {t_fit:7.2f} s | prediction_range({m}) {t_pr:7.2f} s "
        f"(largest gap {float(np.max(pr.gap / np.maximum(1.0, np.abs([pr.lower, pr.upper])))):.1e}) | "
    )
    if args.compare:
        print(f"{'':8s} {compare(args.compare, n, p, loss, args)}", flush=True)
    if args.no_multiplicity:
        print(f"{line}peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB", flush=True)
        return
    mult, t_mult = cpu(lambda: rs.multiplicity(threshold=0.0, scale="score"))
    line += (
        f"multiplicity {t_mult:7.2f} s (ambiguity {mult.ambiguity:.4f}; settled {mult.settled}) | "
        f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
    print(line, flush=True)
    if n <= args.exact_max:
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
    if n <= args.cvxpy_max:
        print(f"{'':8s} {check_cvxpy(rs, X, pr, 50)}", flush=True)
    if args.peer and loss == "logistic":
        print(f"{'':8s} {peer(args.peer, n, p, min(args.peer_rows, n), args.epsilon)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000x10,30000x20", help="comma-separated NxP (default: %(default)s)")
    ap.add_argument("--losses", default="logistic,hinge", help="default: %(default)s")
    ap.add_argument("--exact-max", type=int, default=10000, help="largest n timed by the exact method")
    ap.add_argument("--cvxpy-max", type=int, default=10000, help="largest n whose row ends are checked by cvxpy")
    ap.add_argument("--epsilon", type=float, default=0.1, help="relative ε (default: %(default)s)")
    ap.add_argument("--rows", type=int, default=1000, help="rows of prediction_range (default: %(default)s)")
    ap.add_argument("--no-multiplicity", action="store_true", help="fit and prediction_range only")
    ap.add_argument("--baseline", action="store_true", help="also time multiplicity without the line search")
    ap.add_argument("--peer", default="", help="directory holding rashomon-py's package (timed in a subprocess)")
    ap.add_argument("--peer-rows", type=int, default=100, help="rows the peer is timed on (default: %(default)s)")
    ap.add_argument("--compare", default="", help="directory holding another version's package (timed alternately)")
    ap.add_argument("--rounds", type=int, default=5, help="alternations of --compare (default: %(default)s)")
    args = ap.parse_args()
    with threadpool_limits(1):
        for size in args.sizes.split(","):
            n, p = (int(v) for v in size.lower().split("x"))
            for loss in args.losses.split(","):
                run(n, p, loss, args)
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
