"""The logistic class out of core, for ``bench_out_of_core.py --classes logistic``: the binary target ``y > E[y]`` of
the generated files, the norm bound of ``LogisticModelClass()`` (cross-validated) on the first 20,000 rows, a subset
check of the Dask fit, divide MR of x0 and multiplicity of 300 rows against memory (to 1e-9), then the full run in a
fresh process: the fit, ``multiplicity`` of the first ``--sample`` rows and the MR of x0, with peak memory."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import numpy as np

from _common import peak_rss_mib

P = 20
PART = 250_000
COLS = [f"x{i}" for i in range(P)]


def files(directory: str, rows: int) -> list[str]:
    import os

    return [os.path.join(directory, f"part{k:05d}.parquet") for k in range(-(-rows // PART))]


def binary(y):
    """The binary target of the logistic runs: y above its mean Σβ (the columns of X have mean 1)."""
    rng = np.random.default_rng(0)
    mix = np.eye(P) + 0.3 * rng.normal(size=(P, P)) / np.sqrt(P)  # noqa: F841 (the draws of write(), in order)
    beta = rng.normal(size=P) * 0.5
    beta[0] = 1.0
    return (y > float(beta.sum())).astype(int)


def logistic_queries(X, yb, sample, r):
    from rashomon import LogisticModelClass, RashomonSet, model_reliance

    t0, c0 = time.perf_counter(), time.process_time()
    rs = RashomonSet(LogisticModelClass(norm_bound=r), 0.05).fit(X, yb)
    t1, c1 = time.perf_counter(), time.process_time()
    mult = rs.multiplicity(sample) if len(sample) else None  # --sample 0: the fit and MR only
    t2, c2 = time.perf_counter(), time.process_time()
    rs._bench_cpu = (c1 - c0, c2 - c1)  # CPU seconds of the process (with in-process workers: theirs too)
    from rashomon.sets.scale import is_dask_margin

    if mult is not None and is_dask_margin(rs):
        from rashomon.sets.rows._ranges import engine_of

        eng = engine_of(rs, "multiplicity")
        pts = {f"stage {k}": v for k, v in getattr(eng.screen(), "points", {}).items()}
        rs._bench_passes = {"passes": eng.passes, **pts}  # all passes of the engine, then the points stage's
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

        # the workers are threads of this process: each one's memory monitor reads the whole process (driver, both
        # workers, the sample), and at 80% of a per-worker limit it pauses every worker at once, with nothing left to
        # free memory: a deadlock (seen at 1.49 GiB of 1.86 with a 10^5-row sample). The peak is measured instead.
        client = Client(
            LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, memory_limit=0)
        )
    else:
        dask.config.set(scheduler="threads")
    fs = files(directory, rows)
    sample = pd.concat([pd.read_parquet(f, columns=COLS) for f in fs[: max(1, -(-n_sample // PART))]]).iloc[:n_sample]
    ddf = dd.read_parquet(fs)
    from rashomon.sets.scale import _dask_margin_points as pts

    grad = pts.value_grad

    def logged(eng, T):  # one line per pass of batched points (stderr), to follow a long run
        t = time.perf_counter()
        out = grad(eng, T)
        print(f"pass of {len(T)} points: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
        return out

    pts.value_grad = logged
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
                "passes": getattr(rs, "_bench_passes", None),
                "cpu_fit_multiplicity": getattr(rs, "_bench_cpu", None),
                "partitions": ddf.npartitions,
            }
        )
    )
    if client is not None:
        client.close()


def logistic_main(args, script: str) -> None:
    r = logistic_norm(args.dir)
    logistic_subset_check(args.dir, args.subset, r)
    cmd = [sys.executable, script, "--child", "logistic", "--rows", str(args.rows), "--dir", args.dir]
    cmd += ["--scheduler", args.scheduler, "--sample", str(args.sample), "--norm", repr(r)]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)  # the child's progress lines go to stderr as they come
    if out.returncode != 0:
        sys.exit(out.returncode)
    q = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"[logistic full n={q['rows']:,}, p={P}, {q['partitions']} partitions, scheduler={args.scheduler}] "
        f"e_min {q['e_min']:.9f}; multiplicity of {q['sample']:,} rows: ambiguity {q['ambiguity']}, "
        f"settled {q['settled']}; passes of multiplicity {q['passes']}; MR(x0, {q['mr_method']}) {q['mr']:.9f}"
    )
    print(
        f"  fit {q['t'][0]:.1f} s, multiplicity {q['t'][1]:.1f} s, MR {q['t'][2]:.1f} s; peak resident memory "
        f"{q['peak_mib']:.0f} MiB (one process: the driver, the sample and both workers; required < 2048 per "
        f"worker, so < 4096 for the two with the driver counted in: {'OK' if q['peak_mib'] < 4096 else 'FAIL'}; "
        f"the whole process under 2048 as well: {'yes' if q['peak_mib'] < 2048 else 'no'}); CPU {q['cpu_s']:.1f} s"
    )
