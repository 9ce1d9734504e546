"""Kernel audit of bike-sharing hour (17,379 rows, ``rashomon.datasets.load_bike_sharing("hour")``), without bootstrap.

The audit of ``benchmarks/audit_seeds.py`` (target ``cnt``; groups "weather" and "time", which together are
every feature; RBF kernel class; seed 0), end to end: the reference's 10-fold cross-validation (bandwidth and
penalty), the set on the held-out rows, MR, MCR and the refit without each group. At the default training
part (500 rows: a dictionary of 500) and at ``--train-size 2000`` (a dictionary of 2,000, where the
dictionary-size costs dominate).

With ``--before PATH`` (a checkout of the code to compare with, e.g. ``git worktree add --detach ../main-wt
main``), the same audit runs in a subprocess of the same interpreter with ``PYTHONPATH=PATH``, one size at a
time alternating with this tree, so the machine's load falls on both. Printed: wall seconds per phase and
in total, and the largest relative difference of every reported number (MR, MCR ends, refit ratios,
CV loss, e_ref, ε_abs) between the two.

    python benchmarks/bench_kernel_audit.py [--before ../main-wt] [--train-size 500,2000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(train_size: int) -> dict:
    """One audit with the rashomon on sys.path; its times and numbers."""
    sys.path.insert(0, HERE)
    import rashomon
    from audit_seeds import bike_hourly

    df, target, groups = bike_hourly()
    t0 = time.perf_counter()
    res = rashomon.audit(
        df, target, groups, model_class="kernel", random_state=0, bootstrap=0, n_jobs=1, train_size=train_size
    )
    wall = time.perf_counter() - t0
    nums = {"cv_loss": res.cv_loss, "e_ref": res.e_ref, "epsilon_abs": res.epsilon_abs}
    for name, g in res.groups.items():
        nums.update({f"{name} mr": g.mr_ref, f"{name} lower": g.mcr_lower, f"{name} upper": g.mcr_upper})
        nums[f"{name} refit"] = g.refit_loss_ratio
    out = {"wall": wall, "timings": dict(res.timings), "numbers": nums, "n_test": res.n_test}
    return out | {"package": os.path.dirname(rashomon.__file__)}


def run_worker(pythonpath: str | None, train_size: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    else:
        env.pop("PYTHONPATH", None)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(train_size)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    if out.returncode:
        raise SystemExit(f"worker failed ({pythonpath or 'this tree'}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="a checkout of the code to compare with (e.g. a worktree of main)")
    ap.add_argument("--train-size", default="500,2000", help="comma-separated training-part sizes")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.worker)))
        return 0
    sizes = [int(s) for s in args.train_size.split(",")]
    for i, ts in enumerate(sizes):
        order = [("after", os.path.dirname(HERE))] + ([("before", os.path.abspath(args.before))] if args.before else [])
        runs = {}
        for which, path in order if i % 2 == 0 else order[::-1]:
            runs[which] = run_worker(path, ts)
        a = runs["after"]
        print(f"\nbike-sharing hour, kernel audit, {ts} training rows, {a['n_test']} held-out rows, no bootstrap")
        print(f"{'':<10}{'total s':>10}{'reference':>12}{'MR+MCR+refit':>14}")
        for which in ("before", "after"):
            if which in runs:
                r = runs[which]
                t = r["timings"]
                print(
                    f"{which:<10}{r['wall']:>10.1f}{t['reference_fit_s']:>12.1f}{t['mr_mcr_s']:>14.1f}   {r['package']}"
                )
        if "before" in runs:
            b = runs["before"]
            print(f"speed-up {b['wall'] / a['wall']:.1f}x; goal <= 30 s end to end: {a['wall'] <= 30}")
            worst = max(abs(a["numbers"][k] - v) / max(abs(v), 1e-300) for k, v in b["numbers"].items())
            print(f"largest relative difference of the reported numbers: {worst:.1e}")
        for k, v in a["numbers"].items():
            print(f"    {k:<16}{v:.10g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
