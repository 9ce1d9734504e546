"""Out of core (linear, kernel and logistic classes): n = 10^7 rows, p = 20, read from Parquet through Dask.

    python benchmarks/bench_out_of_core.py [--rows 10000000] [--dir /tmp/rashomon_ooc]
                                           [--scheduler threads|distributed] [--keep]
                                           [--classes linear,kernel,logistic] [--dictionary 100] [--sample 100000]

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
4. ``--classes kernel``: the same for ``KernelModelClass`` (``_kernel_run``): the subset check (the
   dictionary drawn from the unique rows, as in memory), then on the full file the set fit (bandwidth
   and penalty by leave-one-out over two bandwidths, a dictionary of ``--dictionary`` rows drawn from the
   unique rows, as in memory) and the MCR of x0;
   with ``--scheduler distributed`` the 2 workers are processes and each reports its own peak memory.
5. ``--classes logistic``: the logistic class (``_ooc_logistic.py``) on the binary target ``y > E[y]`` of the
   same files: the norm bound of ``LogisticModelClass()`` (cross-validated) on the first 20,000 rows; the subset
   check compares the Dask and in-memory fit (θ_min, e_min), the divide MR of x0 and the multiplicity of 300 rows
   (flips, ambiguity) to 1e-9; the full run times the fit, ``multiplicity`` of the first ``--sample`` rows and the
   MR of x0 (divide estimator: x0 is continuous), with the peak resident memory of the process (both workers).
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
from _ooc_logistic import logistic_full_run, logistic_main  # noqa: E402

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


def _kernel_class(dictionary):
    from rashomon import KernelModelClass

    return KernelModelClass(dictionary=dictionary, gammas=[0.5 / P, 1.0 / P], alphas=np.logspace(-2, 2, 9))


def kernel_subset_check(directory: str, rows: int, m: int) -> None:
    import dask.dataframe as dd
    import pandas as pd

    from rashomon import RashomonSet

    fs = files(directory, rows)
    df = pd.concat([pd.read_parquet(f) for f in fs], ignore_index=True)
    t = time.perf_counter()
    rs_m = RashomonSet(_kernel_class(m), 0.1).fit(df[COLS], df["y"])
    a_m = rs_m.model_class_reliance("x0")
    t_m = time.perf_counter() - t
    del df
    ddf = dd.read_parquet(fs)
    t = time.perf_counter()
    rs_d = RashomonSet(_kernel_class(m), 0.1).fit(ddf[COLS], ddf["y"])
    a_d = rs_d.model_class_reliance("x0")
    t_d = time.perf_counter() - t
    same = bool(np.array_equal(rs_m.parametrization_.D, rs_d.parametrization_.D))
    worst = max(abs(a_m.lower - a_d.lower) / max(1.0, abs(a_m.lower)), abs(a_m.upper - a_d.upper) / max(1, a_m.upper))
    print(
        f"[kernel subset n={rows:,}, m={m}] in memory x0 [{a_m.lower:.12f}, {a_m.upper:.12f}] in {t_m:.1f} s; "
        f"Dask [{a_d.lower:.12f}, {a_d.upper:.12f}] in {t_d:.1f} s; same dictionary: {same}; "
        f"largest relative difference {worst:.2e}"
    )


def _worker_peaks(client) -> list[float]:
    def hwm() -> float:
        with open("/proc/self/status") as fh:
            line = next(x for x in fh if x.startswith("VmHWM"))
        return int(line.split()[1]) / 1024

    return [float(v) for v in client.run(hwm).values()]


def kernel_run(directory: str, rows: int, scheduler: str, m: int) -> None:
    """The kernel set on the full file, in a fresh process; peak memory of this process and of each worker."""
    import dask
    import dask.dataframe as dd

    from rashomon import RashomonSet

    client = None
    if scheduler == "distributed":
        from distributed import Client, LocalCluster

        client = Client(
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", memory_limit="2GB")
        )
    else:
        dask.config.set(scheduler="threads")
    ddf = dd.read_parquet(files(directory, rows))
    t = time.perf_counter()
    rs = RashomonSet(_kernel_class(m), 0.1).fit(ddf[COLS], ddf["y"])  # the seeded draw among the unique rows
    t_fit = time.perf_counter() - t
    a = rs.model_class_reliance("x0")
    t_all = time.perf_counter() - t
    out = {
        "rows": rs.X_.n_rows,
        "t_fit": t_fit,
        "t_all": t_all,
        "peak_mib": peak_rss_mib(),
        "x0": [a.lower, a.upper],
        "gamma": rs.parametrization_.info["gamma"],
        "alpha": rs.parametrization_.info["ridge_alpha"],
        "partitions": ddf.npartitions,
    }
    if client is not None:
        out["worker_peak_mib"] = _worker_peaks(client)
        client.close()
    print(json.dumps(out))


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


def linear_main(args) -> None:
    subset_check(args.dir, args.subset)
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            "linear",
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


def kernel_main(args) -> None:
    kernel_subset_check(args.dir, min(args.subset, args.rows), args.dictionary)
    cmd = [sys.executable, __file__, "--child", "kernel", "--rows", str(args.rows), "--dir", args.dir]
    cmd += ["--scheduler", args.scheduler, "--dictionary", str(args.dictionary)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(out.returncode)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    workers = r.get("worker_peak_mib")
    print(
        f"[kernel full n={r['rows']:,}, p={P}, m={args.dictionary}, {r['partitions']} partitions, "
        f"scheduler={args.scheduler}] x0 [{r['x0'][0]:.9f}, {r['x0'][1]:.9f}]; gamma {r['gamma']:.4g}, "
        f"alpha {r['alpha']:.4g}"
    )
    print(
        f"  fit (5 passes) {r['t_fit']:.1f} s, fit + MCR of x0 (one more pass) {r['t_all']:.1f} s; peak resident "
        f"memory of the driver {r['peak_mib']:.0f} MiB"
        + ("" if workers is None else f", of each worker {', '.join(f'{w:.0f}' for w in workers)} MiB")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--subset", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp/rashomon_ooc")
    ap.add_argument("--scheduler", choices=["threads", "distributed"], default="threads")
    ap.add_argument("--keep", action="store_true", help="keep the Parquet files")
    ap.add_argument("--classes", default="linear,kernel", help="comma-separated: linear, kernel, logistic")
    ap.add_argument("--dictionary", type=int, default=100, help="dictionary size of the kernel class")
    ap.add_argument("--sample", type=int, default=100_000, help="rows of the logistic multiplicity")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--norm", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    if args.child == "linear":
        full_run(args.dir, args.rows, args.scheduler)
        return
    if args.child == "kernel":
        kernel_run(args.dir, args.rows, args.scheduler, args.dictionary)
        return
    if args.child == "logistic":
        logistic_full_run(args.dir, args.rows, args.scheduler, args.sample, args.norm)
        return
    t = time.perf_counter()
    write(args.dir, args.rows)
    size = sum(os.path.getsize(f) for f in files(args.dir, args.rows)) / 2**30
    print(
        f"Parquet: {args.rows:,} rows × {P + 1} float64 columns, {size:.2f} GiB in {args.dir} "
        f"(written or found in {time.perf_counter() - t:.1f} s)"
    )
    if "linear" in classes:
        linear_main(args)
    if "kernel" in classes:
        kernel_main(args)
    if "logistic" in classes:
        logistic_main(args, __file__)
    if not args.keep:
        for f in files(args.dir, args.rows):
            os.remove(f)


if __name__ == "__main__":
    main()
