"""MCR beside other CPU-bound work: kernel (n = 3,000, D = 400) and linear (n = 100,000, p = 50), quiet and
with two competing CPU-bound processes, with the package's BLAS thread policy and without it (the old
behaviour), in one run.

The policy (``rashomon/utils/_threads.py``) runs the package's loops with one BLAS thread in a scoped limit.
"old" switches it off for the run (``rashomon.utils._threads._set_enabled(False)``, an internal switch kept
for this benchmark), so BLAS runs with its default threads, as before the policy: the same code, the same
data, one process. The load is two ``python -c "while True: pass"`` processes (as many as the 2 cores),
started after the quiet runs and killed at the end.

Prints, per case and mode, the median wall and CPU time (CPU = this process's, all its threads) over the
repetitions, the ratio under load / quiet, and new / old. Asserts the policy's results are the same bits
quiet, under load and under ``threadpool_limits(1)`` and ``(2)`` around the call.

On a machine shared with other jobs "quiet" is whatever they leave: print the load average (done at each
phase) and read the CPU column too. With one BLAS thread this process's CPU time does not depend on the
others' load; with BLAS's threads it grows with the time they spin waiting for a descheduled partner.

Usage: ``python benchmarks/bench_under_load.py [--reps 3] [--no-old]``. Goals: under load <= 2.5x quiet;
quiet no slower than old.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from rashomon import KernelModelClass, LinearModelClass, model_class_reliance
from rashomon.utils import _threads


def kernel_case(n=3000, m=400, p=5, seed=0):  # as benchmarks/bench_mcr_kernel.py
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 0] = rng.integers(0, 2, n)
    X[:, 1] = rng.integers(0, 2, n)
    y = X[:, 0] + np.sin(X[:, 2]) + 0.5 * X[:, 3] * X[:, 4] + rng.normal(size=n)
    D = X[rng.choice(n, m, replace=False)]
    return KernelModelClass(gamma=0.2, dictionary=D, norm_bound=4.0), X, y, [0, 1]


def linear_case(n=100_000, p=50):  # as benchmarks/bench_mcr_linear.py
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    X[:, 1] += 0.7 * X[:, 0]
    beta = rng.normal(size=p) * 0.3
    beta[0] = 1.0
    y = X @ beta + rng.normal(size=n)
    return LinearModelClass(), X, y, 0


def run(case):
    mc, X, y, f = case
    w0, c0 = time.perf_counter(), time.process_time()
    r = model_class_reliance(mc, X, y, f, epsilon=0.1)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    bits = (r.lower, r.upper, r.e_min, r.lower_model.theta.tobytes(), r.upper_model.theta.tobytes())
    return wall, cpu, bits


def load_text():
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-old", action="store_true", help="skip the old behaviour (its loaded runs are slow)")
    args = ap.parse_args()
    cases = {"kernel n=3,000 D=400": kernel_case(), "linear n=100,000 p=50": linear_case()}
    modes = ["new"] + ([] if args.no_old else ["old"])
    blas = ", ".join(
        f"{lib['internal_api']} {lib['version']} ({lib['num_threads']} threads)"
        for lib in threadpool_info()
        if lib["user_api"] == "blas"
    )
    print(f"{os.cpu_count()} CPUs; BLAS: {blas}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')!r}")
    model_class_reliance(
        KernelModelClass(gamma=0.2, norm_bound=1.0, dictionary=20),  # warm-up (imports)
        np.random.default_rng(1).normal(size=(200, 3)),
        np.arange(200) % 3.0,
        0,
    )
    times = {}  # (case, mode, condition) -> [(wall, cpu)]
    bits = {}  # (case, mode) -> set of result bits
    busy = []

    def measure(condition):
        print(f"[{condition}] {load_text()}", flush=True)
        for _ in range(args.reps):
            for name, case in cases.items():
                for mode in modes:
                    old = _threads._set_enabled(mode == "new")
                    try:
                        wall, cpu, b = run(case)
                    finally:
                        _threads._set_enabled(old)
                    times.setdefault((name, mode, condition), []).append((wall, cpu))
                    bits.setdefault((name, mode), set()).add(b)
                    print(f"  {name:24s} {mode}: wall {wall:6.2f} s, CPU {cpu:6.2f} s", flush=True)

    try:
        measure("quiet")
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        time.sleep(1.0)
        measure("2 busy processes")
        print(f"[end] {load_text()}")
    finally:
        for p in busy:
            p.kill()
        for p in busy:
            p.wait()
    for name, case in cases.items():  # the policy's bits do not depend on the caller's thread count
        for k in (1, 2):
            with threadpool_limits(limits=k):
                bits[(name, "new")].add(run(case)[2])

    print(f"\nmedian over {args.reps} runs: wall (CPU) in s")
    print(f"{'case':24s} {'mode':4s} {'quiet':>16s} {'under load':>16s} {'load/quiet':>10s} {'(CPU)':>7s}")
    med = {}
    for name in cases:
        for mode in modes:
            q = times[(name, mode, "quiet")]
            lo = times[(name, mode, "2 busy processes")]
            mq = (statistics.median(w for w, _ in q), statistics.median(c for _, c in q))
            ml = (statistics.median(w for w, _ in lo), statistics.median(c for _, c in lo))
            med[(name, mode)] = (mq, ml)
            print(
                f"{name:24s} {mode:4s} {mq[0]:7.2f} ({mq[1]:6.2f}) {ml[0]:7.2f} ({ml[1]:6.2f}) {ml[0] / mq[0]:9.2f}x "
                f"{ml[1] / mq[1]:6.2f}x"
            )
    if "old" in modes:
        print("\nnew / old, wall (CPU): quiet, under load")
        for name in cases:
            (nq, nl), (oq, ol) = med[(name, "new")], med[(name, "old")]
            print(
                f"  {name:24s} {nq[0] / oq[0]:5.2f}x ({nq[1] / oq[1]:4.2f}x)  {nl[0] / ol[0]:5.2f}x ({nl[1] / ol[1]:4.2f}x)"
            )
            same = bits[(name, "old")] == bits[(name, "new")]
            print(f"  {'':24s} old results {'the same bits as' if same else 'differ in the last bits from'} new")
    for name in cases:
        assert len(bits[(name, "new")]) == 1, f"{name}: results differ between runs or thread counts"
    print("\nnew: the same bits in every run, quiet, under load and under threadpool_limits(1) and (2)")


if __name__ == "__main__":
    main()
