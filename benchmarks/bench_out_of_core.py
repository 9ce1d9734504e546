"""Out-of-core linear MCR: n = 10^7 rows, p = 20, read from Parquet through Dask, with bounded memory.

    python benchmarks/bench_out_of_core.py [--rows 10000000] [--dir /tmp/rashomon_ooc]
                                           [--scheduler threads|distributed] [--keep]
                                           [--classes linear,logistic] [--sample 100000]

1. Writes n × (p + 1) float64 rows (X with correlated columns, y = Xβ + noise; no duplicate
   rows) as Parquet files of 250,000 rows under --dir (skipped when they already exist).
2. Subset check: the first 10^6 rows through Dask (``dask.dataframe.read_parquet``) and in
   memory (pandas): the MCR bounds of feature x0 and of the group {x1, x2} must agree to 1e-9
   (relative to max(1, |bound|)).
3. The full file in a fresh subprocess: ``RashomonSet(LinearModelClass(), 0.1).fit`` (ridge
   reference with leave-one-out penalty: two passes over the rows) and the MCR of x0, timed;
   peak resident memory of that process (VmHWM; with ``--scheduler distributed`` the 2-worker
   ``LocalCluster`` runs in the same process, so its workers are included). Prints throughput
   per row.

``--classes logistic`` (or ``linear,logistic``) runs the logistic class instead of (or after) the linear one, on
the binary target ``y > E[y]`` of the same files (generated from y, no extra column): the norm bound is that of
``LogisticModelClass()`` (cross-validated) on the first 20,000 rows; the subset check compares the Dask and
in-memory fit (θ_min, e_min), the divide MR of x0 and the multiplicity of 300 rows (flips, ambiguity) to
1e-9; the full run times the fit, ``multiplicity`` of the first ``--sample`` rows and the MR of x0 (divide
estimator: x0 is continuous), with the peak resident memory of the process (both workers).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import peak_rss_mib  # noqa: E402

P = 20
PART = 250_000
COLS = [f"x{i}" for i in range(P)]


def write(directory: str, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(0)
    mix = np.eye(P) + 0.3 * rng.normal(size=(P, P)) / np.sqrt(P)
    beta = rng.normal(size=P) * 0.5
    beta[0] = 1.0
    for k, start in enumerate(range(0, rows, PART)):
        path = os.path.join(directory, f"part{k:05d}.parquet")
        if os.path.exists(path):
            continue
        m = min(PART, rows - start)
        r = np.random.default_rng([1, k])
        X = r.normal(size=(m, P)) @ mix + 1.0
        y = X @ beta + r.normal(size=m)
        table = pa.table({**{c: X[:, i] for i, c in enumerate(COLS)}, "y": y})
        pq.write_table(table, path, compression="snappy")


def files(directory: str, rows: int) -> list[str]:
    return [os.path.join(directory, f"part{k:05d}.parquet") for k in range(-(-rows // PART))]


def mcr(X, y):
    from rashomon import LinearModelClass, RashomonSet

    t = time.perf_counter()
    rs = RashomonSet(LinearModelClass(), 0.1).fit(X, y)
    t_fit = time.perf_counter() - t
    a = rs.model_class_reliance("x0")
    b = rs.model_class_reliance(["x1", "x2"])
    return rs, a, b, t_fit, time.perf_counter() - t


def subset_check(directory: str, rows: int) -> None:
    import dask.dataframe as dd
    import pandas as pd

    fs = files(directory, rows)
    df = pd.concat([pd.read_parquet(f) for f in fs], ignore_index=True)
    rs_m, a_m, b_m, _, t_m = mcr(df[COLS], df["y"])
    del df
    ddf = dd.read_parquet(fs)
    rs_d, a_d, b_d, _, t_d = mcr(ddf[COLS], ddf["y"])
    worst = 0.0
    for x, z in ((a_m, a_d), (b_m, b_d)):
        for end in ("lower", "upper"):
            u, v = getattr(x, end), getattr(z, end)
            worst = max(worst, abs(u - v) / max(1.0, abs(u)))
    print(
        f"[subset n={rows:,}] in memory: x0 [{a_m.lower:.12f}, {a_m.upper:.12f}] {{x1,x2}} "
        f"[{b_m.lower:.12f}, {b_m.upper:.12f}] in {t_m:.2f} s"
    )
    print(
        f"[subset n={rows:,}] Dask:      x0 [{a_d.lower:.12f}, {a_d.upper:.12f}] {{x1,x2}} "
        f"[{b_d.lower:.12f}, {b_d.upper:.12f}] in {t_d:.2f} s"
    )
    print(
        f"  ridge alpha {rs_m.parametrization_.info['ridge_alpha']:.6g} / {rs_d.parametrization_.info['ridge_alpha']:.6g}; "
        f"largest relative difference of the bounds {worst:.2e} (required <= 1e-9): {'OK' if worst <= 1e-9 else 'FAIL'}"
    )
    if worst > 1e-9:
        sys.exit(1)


def binary(y):
    """The binary target of the logistic runs: y above its mean Σβ (the columns of X have mean 1)."""
    rng = np.random.default_rng(0)
    mix = np.eye(P) + 0.3 * rng.normal(size=(P, P)) / np.sqrt(P)  # noqa: F841 (the draws of write(), in order)
    beta = rng.normal(size=P) * 0.5
    beta[0] = 1.0
    return (y > float(beta.sum())).astype(int)


def logistic_queries(X, yb, sample, r):
    from rashomon import LogisticModelClass, RashomonSet, model_reliance

    t0 = time.perf_counter()
    rs = RashomonSet(LogisticModelClass(norm_bound=r), 0.05).fit(X, yb)
    t1 = time.perf_counter()
    mult = rs.multiplicity(sample) if len(sample) else None  # --sample 0: the fit and MR only
    t2 = time.perf_counter()
    mr = model_reliance(rs.reference_, X, yb, "x0", method="divide")
    t3 = time.perf_counter()
    return rs, mult, mr, (t1 - t0, t2 - t1, t3 - t2)


def logistic_norm(directory: str) -> float:
    import pandas as pd

    from rashomon import LogisticModelClass

    df = pd.read_parquet(files(directory, PART)[0]).iloc[:20_000]
    return float(LogisticModelClass().fit_reference(df[COLS], binary(df["y"])).parametrization_.r)


def logistic_subset_check(directory: str, rows: int, r: float) -> None:
    import dask.dataframe as dd
    import pandas as pd

    fs = files(directory, rows)
    df = pd.concat([pd.read_parquet(f) for f in fs], ignore_index=True)
    sample = df[COLS].iloc[:300]
    rs_m, mu_m, mr_m, t_m = logistic_queries(df[COLS], binary(df["y"]), sample, r)
    del df
    ddf = dd.read_parquet(fs)
    rs_d, mu_d, mr_d, t_d = logistic_queries(ddf[COLS], binary(ddf["y"]), sample, r)
    worst = max(
        float(np.max(np.abs(rs_m.theta_min_ - rs_d.theta_min_))),
        abs(rs_m.e_min_ - rs_d.e_min_) / rs_m.e_min_,
        abs(mr_m.e_switch - mr_d.e_switch) / mr_m.e_switch,
    )
    same = bool(np.array_equal(mu_m.flips, mu_d.flips))
    print(
        f"[logistic subset n={rows:,}, r={r:.4g}] e_min {rs_m.e_min_:.12f} / {rs_d.e_min_:.12f}; MR(x0, divide) "
        f"{mr_m.ratio:.12f} / {mr_d.ratio:.12f}; ambiguity of 300 rows {mu_m.ambiguity:.4f} / {mu_d.ambiguity:.4f}"
    )
    print(
        f"  in memory {sum(t_m):.1f} s, Dask {sum(t_d):.1f} s (fit {t_d[0]:.1f}, multiplicity {t_d[1]:.1f}, "
        f"MR {t_d[2]:.1f}); largest difference {worst:.2e} (required <= 1e-9), flips identical: {same}: "
        f"{'OK' if worst <= 1e-9 and same else 'FAIL'}"
    )
    if worst > 1e-9 or not same:
        sys.exit(1)


def logistic_full_run(directory: str, rows: int, scheduler: str, n_sample: int, r: float) -> None:
    """Runs in a fresh process (as :func:`full_run`): the logistic fit, multiplicity of a sample, MR of x0."""
    import dask
    import dask.dataframe as dd
    import pandas as pd

    client = None
    if scheduler == "distributed":
        from distributed import Client, LocalCluster

        client = Client(
            LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, memory_limit="2GB")
        )
    else:
        dask.config.set(scheduler="threads")
    fs = files(directory, rows)
    sample = pd.concat([pd.read_parquet(f, columns=COLS) for f in fs[: max(1, -(-n_sample // PART))]]).iloc[:n_sample]
    ddf = dd.read_parquet(fs)
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    rs, mult, mr, t = logistic_queries(ddf[COLS], binary(ddf["y"]), sample, r)
    peak = peak_rss_mib()
    now = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "rows": rs.X_.n_rows,
                "t": t,
                "peak_mib": peak,
                "cpu_s": now.ru_utime + now.ru_stime - cpu.ru_utime - cpu.ru_stime,
                "e_min": rs.e_min_,
                "ambiguity": None if mult is None else mult.ambiguity,
                "settled": None if mult is None else mult.settled,
                "mr": mr.ratio,
                "mr_method": mr.method,
                "sample": len(sample),
                "partitions": ddf.npartitions,
            }
        )
    )
    if client is not None:
        client.close()


def logistic_main(args) -> None:
    r = logistic_norm(args.dir)
    logistic_subset_check(args.dir, args.subset, r)
    cmd = [sys.executable, __file__, "--child", "--classes", "logistic", "--rows", str(args.rows), "--dir", args.dir]
    cmd += ["--scheduler", args.scheduler, "--sample", str(args.sample), "--norm", repr(r)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(out.returncode)
    q = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"[logistic full n={q['rows']:,}, p={P}, {q['partitions']} partitions, scheduler={args.scheduler}] "
        f"e_min {q['e_min']:.9f}; multiplicity of {q['sample']:,} rows: ambiguity {q['ambiguity']}, "
        f"settled {q['settled']}; MR(x0, {q['mr_method']}) {q['mr']:.9f}"
    )
    print(
        f"  fit {q['t'][0]:.1f} s, multiplicity {q['t'][1]:.1f} s, MR {q['t'][2]:.1f} s; peak resident memory "
        f"{q['peak_mib']:.0f} MiB (both workers; required < 2048 per worker): "
        f"{'OK' if q['peak_mib'] < 2048 else 'FAIL'}; CPU {q['cpu_s']:.1f} s"
    )


def full_run(directory: str, rows: int, scheduler: str) -> None:
    """Runs in a fresh process, so its peak resident memory is that of the Dask fit and queries alone."""
    import dask
    import dask.dataframe as dd

    client = None
    if scheduler == "distributed":
        from distributed import Client, LocalCluster

        client = Client(
            LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, memory_limit="1GB")
        )
    else:
        dask.config.set(scheduler="threads")
    ddf = dd.read_parquet(files(directory, rows))
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    rs, a, b, t_fit, t_all = mcr(ddf[COLS], ddf["y"])
    peak = peak_rss_mib()
    now = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = now.ru_utime + now.ru_stime - cpu.ru_utime - cpu.ru_stime
    print(
        json.dumps(
            {
                "rows": rs.X_.n_rows,
                "t_fit": t_fit,
                "t_all": t_all,
                "peak_mib": peak,
                "cpu_s": cpu_s,
                "x0": [a.lower, a.upper],
                "x12": [b.lower, b.upper],
                "alpha": rs.parametrization_.info["ridge_alpha"],
                "partitions": ddf.npartitions,
            }
        )
    )
    if client is not None:
        client.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--subset", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp/rashomon_ooc")
    ap.add_argument("--scheduler", choices=["threads", "distributed"], default="threads")
    ap.add_argument("--keep", action="store_true", help="keep the Parquet files")
    ap.add_argument("--classes", default="linear", help="comma-separated: linear, logistic")
    ap.add_argument("--sample", type=int, default=100_000, help="rows of the logistic multiplicity")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--norm", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    if args.child:
        if "logistic" in classes:
            logistic_full_run(args.dir, args.rows, args.scheduler, args.sample, args.norm)
        else:
            full_run(args.dir, args.rows, args.scheduler)
        return
    t = time.perf_counter()
    write(args.dir, args.rows)
    size = sum(os.path.getsize(f) for f in files(args.dir, args.rows)) / 2**30
    print(
        f"Parquet: {args.rows:,} rows × {P + 1} float64 columns, {size:.2f} GiB in {args.dir} "
        f"(written or found in {time.perf_counter() - t:.1f} s)"
    )
    if "logistic" in classes:
        logistic_main(args)
    if "linear" not in classes:
        if not args.keep:
            for f in files(args.dir, args.rows):
                os.remove(f)
        return
    subset_check(args.dir, args.subset)
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            "--rows",
            str(args.rows),
            "--dir",
            args.dir,
            "--scheduler",
            args.scheduler,
        ],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(out.returncode)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"[full n={r['rows']:,}, p={P}, {r['partitions']} partitions, scheduler={args.scheduler}] "
        f"x0 [{r['x0'][0]:.9f}, {r['x0'][1]:.9f}], {{x1,x2}} [{r['x12'][0]:.9f}, {r['x12'][1]:.9f}]; "
        f"ridge alpha {r['alpha']:.4g}"
    )
    print(
        f"  fit (2 passes over the rows) {r['t_fit']:.1f} s, fit + 2 MCR queries {r['t_all']:.1f} s: "
        f"{r['t_fit'] / r['rows'] * 1e9:.0f} ns per row ({r['rows'] / r['t_fit'] / 1e6:.2f} M rows/s); "
        f"peak resident memory {r['peak_mib']:.0f} MiB (required < 2048): "
        f"{'OK' if r['peak_mib'] < 2048 else 'FAIL'}"
    )
    print(f"  CPU time (user + sys, all threads) {r['cpu_s']:.1f} s: {r['cpu_s'] / r['rows'] * 1e9:.0f} CPU-ns per row")
    print(f"  on {os.cpu_count()} cores; timings on a shared machine are inflated.")
    if not args.keep:
        for f in files(args.dir, args.rows):
            os.remove(f)


if __name__ == "__main__":
    main()
