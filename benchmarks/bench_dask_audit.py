"""The audit out of core: the bundled COMPAS table replicated to 10^6-10^7 rows in Parquet, through Dask.

    python benchmarks/bench_dask_audit.py [--rows 10000000] [--peer-rows 1000000] [--dir /tmp/rashomon_dask_audit]
                                          [--keep] [--logistic-rows 200000] [--only-logistic]

The table: the COMPAS violent-recidivism rows of examples/compas_audit.py (3,373 rows) with two
categorical columns (charge degree, age category, one-hot encoded by the audit) and a 0/1 column
``is_train`` (every other original row), replicated to --rows and written as Parquet files of 250,000 rows
(snappy). Groups: inadmissible = race, sex; admissible = priors_count, charge, age, agecat.

1. Equality: the bundled table in memory (pandas) and from Parquet through Dask, same split column, the
   ridge penalty grid reduced to one α (so both choose it) and ε absolute: the largest relative difference
   of MCR-, MCR+, MR and the refit ratio (required <= 1e-9).
2. Peer, --peer-rows rows, each side in a fresh process, the same ``split="is_train"``: the in-memory audit
   (``pandas.read_parquet`` then ``audit(frame)``) against the Dask audit of the Parquet folder. Wall time
   and peak resident memory (VmHWM) of each process, and their ratios.
3. --rows rows through Dask with the default split (seeded row hash, half the rows), in a fresh process:
   wall time by phase, CPU time, peak resident memory, throughput per row.

4. The logistic audit (binary target ``high`` = violent decile score >= 5; groups inadmissible = race, sex and
   admissible = priors_count, felony, age): equality on the bundled table with the hash fold rule in memory
   (``cv_rule="hash"``), then --logistic-rows rows through Dask in a fresh process (hash
   split, 10 folds, ambiguity on 500 held-out rows; replicated rows share their hash, so those are a few
   distinct rows): wall and CPU time by phase, passes of the CV, peak memory.

Replication makes exact duplicate rows: the hash split keeps all copies of a row on one side, and the
leave-one-out error (each row its own leave-out unit) is then close to the training error.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import peak_rss_mib  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
PART = 250_000
TARGET = "v_decile_score"
GROUPS = {"inadmissible": ["race", "sex"], "admissible": ["priors_count", "charge", "age", "agecat"]}
LOGISTIC = {"inadmissible": ["race", "sex"], "admissible": ["priors_count", "felony", "age"]}


def table():
    import rashomon
    from compas_audit import compas_frame

    df = compas_frame()
    raw = rashomon.datasets.load_compas("violent", races=("African-American", "Caucasian"))
    df["charge"] = raw["c_charge_degree"].to_numpy()
    df["agecat"] = raw["age_cat"].to_numpy()
    df["is_train"] = np.arange(len(df)) % 2 == 0
    df["high"] = (df["v_decile_score"] >= 5).astype(float)
    return df


def write(directory: Path, rows: int) -> list[Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    base = table()
    files = []
    for k, start in enumerate(range(0, rows, PART)):
        path = directory / f"part{k:05d}.parquet"
        files.append(path)
        if path.exists():
            continue
        idx = np.arange(start, min(start + PART, rows)) % len(base)
        pq.write_table(
            pa.Table.from_pandas(base.iloc[idx].reset_index(drop=True), preserve_index=False),
            path,
            compression="snappy",
        )
    return files


def child(mode: str, directory: str, split: str | None) -> None:
    import pandas as pd

    import rashomon

    t0 = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    if mode == "memory":
        data = pd.read_parquet(directory)
    else:
        import dask

        dask.config.set(scheduler="threads")
        data = directory
    res = rashomon.audit(data, TARGET, GROUPS, model_class="linear", split=split, random_state=0)
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "wall": wall,
                "peak_mib": peak_rss_mib(),
                "cpu_s": cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime,
                "timings": res.timings,
                "n_train": res.n_train,
                "n_test": res.n_test,
                "alpha": res.reference["alpha"],
                "partitions": res.meta.get("n_partitions"),
                "groups": {k: [g.mcr_lower, g.mcr_upper, g.mr_ref] for k, g in res.groups.items()},
            }
        )
    )


def child_logistic(directory: str) -> None:
    import dask

    import rashomon

    dask.config.set(scheduler="threads")
    t0, cpu0 = time.perf_counter(), time.process_time()
    res = rashomon.audit(directory, "high", LOGISTIC, model_class="logistic", random_state=0)
    print(
        json.dumps(
            {
                "wall": time.perf_counter() - t0,
                "cpu_s": time.process_time() - cpu0,
                "peak_mib": peak_rss_mib(),
                "timings": res.timings,
                "n_train": res.n_train,
                "n_test": res.n_test,
                "partitions": res.meta.get("n_partitions"),
                "cv_passes": res.reference["cv_passes"],
                "norm": res.reference["norm"],
                "skipped": res.meta["skipped"],
                "mr": {k: [g.mr_ref, g.extra["mr_method"], g.refit_loss_ratio] for k, g in res.groups.items()},
                "ambiguity": res.meta["classifier"]["ambiguity"]["ambiguity"],
            }
        )
    )


def logistic_equality(tmp: Path) -> None:
    import rashomon

    base = table()
    path = tmp / "bundled_logistic"
    path.mkdir(parents=True, exist_ok=True)
    for i, part in enumerate(np.array_split(np.arange(len(base)), 3)):
        base.iloc[part].to_parquet(path / f"part{i}.parquet")
    kw = dict(model_class="logistic", split="is_train", random_state=0)
    t0 = time.process_time()
    mem = rashomon.audit(base, "high", LOGISTIC, cv_rule="hash", **kw)
    t1 = time.process_time()
    out = rashomon.audit(str(path), "high", LOGISTIC, **kw)
    t2 = time.process_time()
    pairs = [(out.e_ref, mem.e_ref), (out.epsilon_abs, mem.epsilon_abs), (out.cv_loss, mem.cv_loss)]
    pairs += [(out.reference["norm"], mem.reference["norm"])]
    pairs += [(getattr(out.groups[g], k), getattr(mem.groups[g], k)) for g in mem.groups for k in ("refit_loss_ratio",)]
    exact = [g for g in mem.groups if out.groups[g].extra["mr_method"] == "exact"]
    pairs += [(out.groups[g].mr_ref, mem.groups[g].mr_ref) for g in exact]
    co, cm = out.meta["classifier"]["coefficients"], mem.meta["classifier"]["coefficients"]
    pairs += [(a[k], b[k]) for a, b in zip(co, cm) for k in ("lower", "upper")]
    worst = max(abs(a - b) / max(abs(b), 1.0) for a, b in pairs)
    amb = out.meta["classifier"]["ambiguity"]["ambiguity"] == mem.meta["classifier"]["ambiguity"]["ambiguity"]
    print(
        f"[4] logistic, bundled table ({len(base):,} rows), same split, hash folds: Dask vs in memory, largest "
        f"relative difference {worst:.1e} over {len(pairs)} figures (e_ref, ε_abs, CV loss, norm bound, refit "
        f"ratios, exact MRs {exact}, coefficient ranges; required <= 1e-9): {'OK' if worst <= 1e-9 else 'FAIL'}; "
        f"ambiguity equal: {amb}; CPU {t1 - t0:.1f} s in memory (with MCR), {t2 - t1:.1f} s Dask (no MCR)"
    )


def run_child(mode: str, directory: Path, split: str | None) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--dir", str(directory)] + (["--split", split] if split else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(out.returncode)
    return json.loads(out.stdout.strip().splitlines()[-1])


def equality_check(tmp: Path) -> None:
    import rashomon
    from rashomon.audit import _fit

    base = table()
    path = tmp / "bundled"
    path.mkdir(parents=True, exist_ok=True)
    for i, part in enumerate(np.array_split(np.arange(len(base)), 3)):
        base.iloc[part].to_parquet(path / f"part{i}.parquet")
    _fit.RIDGE_ALPHAS = np.array([3.0])
    kw = dict(model_class="linear", split="is_train", epsilon=3.0, epsilon_kind="absolute")
    mem = rashomon.audit(base, TARGET, GROUPS, **kw)
    out = rashomon.audit(str(path), TARGET, GROUPS, **kw)
    worst = max(
        abs(getattr(out.groups[g], k) - getattr(mem.groups[g], k)) / abs(getattr(mem.groups[g], k))
        for g in mem.groups
        for k in ("mcr_lower", "mcr_upper", "mr_ref", "refit_loss_ratio")
    )
    print(
        f"[1] bundled table ({len(base):,} rows), same split and α, Dask vs in memory: largest relative difference "
        f"{worst:.1e} (required <= 1e-9): {'OK' if worst <= 1e-9 else 'FAIL'}"
    )


def show(tag: str, r: dict) -> str:
    gs = "; ".join(f"{k} [{v[0]:.4f}, {v[1]:.4f}] MR {v[2]:.4f}" for k, v in r["groups"].items())
    return (
        f"{tag}: {r['wall']:.1f} s wall, {r['cpu_s']:.1f} s CPU, peak RSS {r['peak_mib']:.0f} MiB; "
        f"n_train {r['n_train']:,}, n_test {r['n_test']:,}, α {r['alpha']:.3g}; {gs}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--peer-rows", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp/rashomon_dask_audit")
    ap.add_argument("--keep", action="store_true", help="keep the Parquet files")
    ap.add_argument("--logistic-rows", type=int, default=500_000)
    ap.add_argument("--only-logistic", action="store_true", help="run only section 4 (the logistic audit)")
    ap.add_argument("--child", choices=["memory", "dask", "logistic"], help=argparse.SUPPRESS)
    ap.add_argument("--split", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "logistic":
        child_logistic(args.dir)
        return
    if args.child:
        child(args.child, args.dir, args.split)
        return
    root = Path(args.dir)
    if args.only_logistic:
        logistic_section(root, args.logistic_rows, args.keep)
        return
    equality_check(root)
    made = []
    for rows in sorted({args.peer_rows, args.rows}):
        folder = root / f"rows_{rows}"
        t = time.perf_counter()
        files = write(folder, rows)
        made.append(folder)
        size = sum(f.stat().st_size for f in files) / 2**20
        print(
            f"Parquet: {rows:,} rows, {len(files)} files, {size:.0f} MiB in {folder} "
            f"(written or found in {time.perf_counter() - t:.1f} s)"
        )
    peer = root / f"rows_{args.peer_rows}"
    mem = run_child("memory", peer, "is_train")
    dsk = run_child("dask", peer, "is_train")
    print(show(f"[2] {args.peer_rows:,} rows in memory (pandas) ", mem))
    print(show(f"[2] {args.peer_rows:,} rows out of core (Dask)", dsk))
    print(
        f"    Dask / in memory: time {dsk['wall'] / mem['wall']:.2f}x, peak memory {dsk['peak_mib'] / mem['peak_mib']:.2f}x"
    )
    big = run_child("dask", root / f"rows_{args.rows}", None)
    print(show(f"[3] {args.rows:,} rows out of core (Dask, hash split, {big['partitions']} partitions)", big))
    print(
        "    phases: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in big["timings"].items())
        + f"; {big['wall'] / args.rows * 1e6:.2f} µs per row wall, {big['cpu_s'] / args.rows * 1e6:.2f} CPU-µs per row"
        + f"; peak RSS {big['peak_mib']:.0f} MiB (bounded: {'OK' if big['peak_mib'] < 2048 else 'FAIL'} < 2 GiB)"
    )
    print(f"    on {os.cpu_count()} cores; timings on a shared machine are inflated.")
    logistic_section(root, args.logistic_rows, True)
    if not args.keep:
        for folder in made:
            for f in folder.glob("*.parquet"):
                f.unlink()


def logistic_section(root: Path, rows: int, keep: bool) -> None:
    logistic_equality(root)
    folder = root / f"rows_{rows}"
    files = write(folder, rows)
    r = run_child("logistic", folder, None)
    mr = "; ".join(f"{k} MR {v[0]:.4f} ({v[1]}), refit {v[2]:.4f}" for k, v in r["mr"].items())
    print(
        f"[4] logistic, {rows:,} rows out of core (Dask threads, hash split, {r['partitions']} partitions): "
        f"{r['wall']:.1f} s wall, {r['cpu_s']:.1f} s CPU (main process), peak RSS {r['peak_mib']:.0f} MiB; "
        f"n_train {r['n_train']:,}, n_test {r['n_test']:,}; CV {r['cv_passes']} passes, norm bound {r['norm']:.4g}; "
        f"{mr}; ambiguity {r['ambiguity']:.3f}"
    )
    print("    phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in r["timings"].items()))
    print("    skipped: " + "; ".join(r["skipped"]))
    if not keep:
        for f in files:
            f.unlink()


if __name__ == "__main__":
    main()
