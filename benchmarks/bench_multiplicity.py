"""Prediction ranges, coefficient ranges and sampling: rashomon (exact) against rashomon-py (sampled), same set.

The sets coincide for unpenalised least squares: rashomon-py's linear set is
``{θ : ½·MSE(θ) <= ½·MSE* + gap}`` (``LinearRegression``, ``epsilon_mode="absolute"``); ours is
``LinearModelClass`` with a norm bound too large to bind and ε_abs = MSE* + 2·gap. rashomon-py
shares the import name ``rashomon``, so it runs in its own virtual environment
(``benchmarks/.envs/rashomon-py``, created on first use with pip; skipped with a message when
that fails). The package never depends on it.

Printed: our exact range width / theirs sampled (>= 1 expected: sampled extremes are inner
bounds), ours / their closed-form ranges (= 1), time ratios; and our rows/second for a
linear class (p = 50) and a kernel class (400-point dictionary) against the issue's targets.

    python benchmarks/bench_multiplicity.py [--n-samples 2000] [--no-peer]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import run_in_venv  # noqa: E402
from rashomon import KernelModelClass, LinearModelClass, RashomonSet  # noqa: E402
from rashomon.datasets import load_pima_diabetes  # noqa: E402

HERE = Path(__file__).resolve().parent
ENV = HERE / ".envs" / "rashomon-py"
PEER = "rashomon-py==0.3.1"

PEER_SCRIPT = r"""
import json, sys, time
import numpy as np
from sklearn.linear_model import LinearRegression
from rashomon import RashomonSet
d = np.load(sys.argv[1]); X, y, Xn = d["X"], d["y"], d["Xn"]; gap = float(d["gap"]); n_samples = int(d["n_samples"])
m = LinearRegression().fit(X, y)
t = time.perf_counter()
rs = RashomonSet.from_sklearn(m, X, y, epsilon=gap, epsilon_mode="absolute", random_state=0)
t_fit = time.perf_counter() - t
A = np.hstack([np.ones((len(Xn), 1)), Xn])
t = time.perf_counter()
TH = rs.sample_hitandrun(n_samples, random_state=0)
P = TH @ A.T
t_sample = time.perf_counter() - t
t = time.perf_counter()
exact = np.array([rs.functional_range(a) for a in A])
t_exact = time.perf_counter() - t
t = time.perf_counter()
coef = np.array([rs.functional_range(e) for e in np.eye(A.shape[1])])
t_coef = time.perf_counter() - t
json.dump({"sampled_lo": P.min(0).tolist(), "sampled_hi": P.max(0).tolist(), "exact": exact.tolist(),
           "coef": coef.tolist(), "t_fit": t_fit, "t_sample": t_sample, "t_exact": t_exact, "t_coef": t_coef,
           "version": __import__("importlib.metadata").metadata.version("rashomon-py")}, open(sys.argv[2], "w"))
"""


def peer_python() -> Path | None:
    py = ENV / "bin" / "python"
    if py.exists():
        return py
    try:
        subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True, capture_output=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", PEER], check=True, capture_output=True, timeout=600)
        return py
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"rashomon-py could not be installed into {ENV} ({exc}); skipping the peer comparison.")
        return None


def run_peer(X, y, Xn, gap, n_samples):
    py = peer_python()
    if py is None:
        return None
    return run_in_venv(py, PEER_SCRIPT, X=X, y=y, Xn=Xn, gap=gap, n_samples=n_samples)


def throughput(mc, X, y, Xn, label, target):
    rs = RashomonSet(mc, epsilon=0.05).fit(X, y)
    rs.prediction_range(Xn[:10])  # set-up (the pencil's diagonalisation) once per set
    t = time.perf_counter()
    rs.prediction_range(Xn)
    dt = time.perf_counter() - t
    rate = len(Xn) / dt
    print(
        f"  {label:<44} {len(Xn):>6} rows in {dt:6.3f} s = {rate:9.0f} rows/s (target >= {target:,}) "
        f"{'OK' if rate >= target else 'BELOW TARGET'}"
    )
    return rate


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-samples", type=int, default=2000)
    ap.add_argument("--no-peer", action="store_true")
    args = ap.parse_args(argv)

    df = load_pima_diabetes()
    X = df.drop(columns="Outcome").to_numpy(float)
    y = df["Outcome"].to_numpy(float)
    # the unbounded least-squares class: a norm bound far beyond any member of the set
    ols = np.linalg.lstsq(np.hstack([np.ones((len(X), 1)), X]), y, rcond=None)[0]
    mse = float(np.mean((y - np.hstack([np.ones((len(X), 1)), X]) @ ols) ** 2))
    gap = 0.01 * mse / 2  # rashomon-py's loss is ½·MSE: a 1% increase of the MSE
    print(f"Pima (768 x 8), linear probability score; set: MSE <= MSE* + {2 * gap:.5g} (1% of MSE* = {mse:.5f})")
    t = time.perf_counter()
    rs = RashomonSet(LinearModelClass(norm_bound=1e12), 2 * gap + mse, epsilon_kind="absolute").fit(X, y)
    pr = rs.prediction_range(X)
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    cr = rs.coef_range()
    t_coef = time.perf_counter() - t
    t = time.perf_counter()
    smp = rs.sample(args.n_samples, random_state=0)
    t_smp = time.perf_counter() - t
    print(
        f"  rashomon: fit + exact ranges of 768 rows {t_ours:.3f} s; coefficient ranges {t_coef:.4f} s; "
        f"{args.n_samples} members ({smp.method}) {t_smp:.3f} s"
    )
    peer = None if args.no_peer else run_peer(X, y, X, gap, args.n_samples)
    if peer is not None:
        lo, hi = np.array(peer["sampled_lo"]), np.array(peer["sampled_hi"])
        ex = np.array(peer["exact"])
        ratio = pr.width / (hi - lo)
        print(
            f"  rashomon-py {peer['version']}: hit-and-run {args.n_samples} models {peer['t_sample']:.3f} s; "
            f"its closed-form ranges of 768 rows {peer['t_exact']:.3f} s"
        )
        print(
            f"  width ours (exact) / theirs (sampled): median {np.median(ratio):.3f}, min {ratio.min():.3f} "
            f"(>= 1 expected)"
        )
        rel = np.max(np.abs(np.c_[pr.lower, pr.upper] - ex) / np.maximum(1, np.abs(ex)))
        print(f"  ours vs their closed-form per-row ranges: max relative difference {rel:.2e}")
        crel = np.max(
            np.abs(np.c_[cr.lower, cr.upper] - np.array(peer["coef"]))
            / np.maximum(1e-12, np.abs(np.array(peer["coef"])))
        )
        print(f"  coefficient ranges, ours vs theirs: max relative difference {crel:.2e}")
        print(
            f"  time ratio for the 768 ranges: theirs sampled / ours = {peer['t_sample'] / t_ours:.1f}x, "
            f"theirs closed form / ours = {peer['t_exact'] / t_ours:.1f}x"
        )
    print("\nThroughput of exact prediction ranges (both ends, certified):")
    rng = np.random.default_rng(0)
    Xl = rng.normal(size=(5000, 50))
    yl = Xl @ rng.normal(size=50) * 0.3 + rng.normal(size=5000)
    throughput(LinearModelClass(), Xl, yl, rng.normal(size=(20000, 50)), "linear class, p = 50 (ball active)", 10_000)
    Xk = rng.normal(size=(400, 5))
    yk = np.sin(Xk[:, 0]) + Xk[:, 1] + 0.3 * rng.normal(size=400)
    throughput(KernelModelClass(), Xk, yk, rng.normal(size=(4000, 5)), "kernel class, 400-point dictionary", 1_000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
