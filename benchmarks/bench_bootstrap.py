"""COMPAS bootstrap: 1,000 resamples, both groups, kernel class.

The set is the audit's (``examples/compas_audit.py``: seed 0, 500 training rows, RBF kernel ridge
reference by 10-fold CV, ε = held-out loss + 0.1 × CV loss, 2,873 held-out rows) and the
resamples are the audit's (the same seeds). Two ways, measured in the same run:

* new: :func:`rashomon.sets.bootstrap_mcr` (row weights on the set's cached statistics,
  γ-searches warm-started from the full-data optimum), ``n_jobs`` workers;
* rebuild: each resample from scratch, ``RashomonSet(...).fit(X, y, sample_weight=w)`` then
  ``model_class_reliance`` per group (cold searches), over the same ``n_jobs`` workers, on the
  first ``--rebuild`` resamples (default 100) and extrapolated to all of them (said so);
* reweighted + cold search (the audit's loop before bootstrap_mcr, on today's statistics):
  ``rs.reweighted(w).model_class_reliance(group)``, same subset, to separate what the cached
  statistics and the warm-started searches each buy.

Then the per-resample numbers of both on the rebuilt resamples (in units of the search
tolerance: both attain each bound within tol, so they may differ by up to 1) and the 95%
percentile intervals.

    python benchmarks/bench_bootstrap.py [--resamples 1000] [--rebuild 100|all] [--n-jobs 2]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from joblib import Parallel, delayed  # noqa: E402

from compas_audit import GROUPS, compas_frame  # noqa: E402
from rashomon import RashomonSet  # noqa: E402
from rashomon.audit._fit import _fit_reference, _preprocess  # noqa: E402
from rashomon.sets import bootstrap_mcr  # noqa: E402
from rashomon.utils import single_blas_thread  # noqa: E402
from rashomon.utils.validation import seed_from  # noqa: E402

TOL = 2.0**-20
KEYS = ("mr_ref", "lower", "upper")


def audit_set(seed=0, train_size=500, cv=10):
    """The audit's set and its random state right before the bootstrap draws its seeds."""
    df = compas_frame()
    features = [c for cols in GROUPS.values() for c in cols]
    rng = np.random.RandomState(seed_from(seed, "audit"))
    perm = rng.permutation(len(df))
    tr, te = np.sort(perm[:train_size]), np.sort(perm[train_size:])
    X, _ = _preprocess(df, features, tr)
    y = df["v_decile_score"].to_numpy(dtype=float)
    ref, mc, cv_loss, _ = _fit_reference(X[tr], y[tr], "kernel", cv, int(rng.randint(2**31 - 1)))
    for _ in GROUPS:  # the audit refits without each group, one seed each
        rng.randint(2**31 - 1)
    Xte = pd.DataFrame(X[te], columns=features)
    rs = RashomonSet(mc, 0.1 * cv_loss, epsilon_kind="additive", reference=ref).fit(Xte, y[te])
    groups = {name: [features.index(c) for c in cols] for name, cols in GROUPS.items()}
    return rs, groups, rng, (mc, ref, Xte, y[te])


def _rebuild_chunk(spec, groups, seeds, eps):
    mc, ref, Xte, yte = spec
    n = len(yte)
    out = []
    for s in seeds:
        w = np.random.RandomState(s).multinomial(n, np.full(n, 1.0 / n)).astype(float)
        fresh = RashomonSet(mc, eps, epsilon_kind="additive", reference=ref).fit(Xte, yte, sample_weight=w)
        row = {}
        for name, g in groups.items():
            res = fresh.model_class_reliance(g, tol=TOL)
            row[name] = (res.reference_model.mr, res.lower, res.upper)
        out.append(row)
    return out


def _reweighted_chunk(rs, groups, seeds):
    n = rs.X_.shape[0]
    out = []
    for s in seeds:
        rb = rs.reweighted(np.random.RandomState(s).multinomial(n, np.full(n, 1.0 / n)).astype(float))
        row = {}
        for name, g in groups.items():
            res = rb.model_class_reliance(g, tol=TOL)
            row[name] = (res.reference_model.mr, res.lower, res.upper)
        out.append(row)
    return out


def rebuild(spec, groups, seeds, eps, n_jobs, rs=None):
    """Each resample from scratch (or, given ``rs``, reweighted with cold searches), over joblib chunks."""
    chunks = [list(c) for c in np.array_split(seeds, min(len(seeds), 16))]
    rows = []
    jobs = (
        delayed(single_blas_thread)(_rebuild_chunk, spec, groups, c, eps)
        if rs is None
        else delayed(single_blas_thread)(_reweighted_chunk, rs, groups, c)
        for c in chunks
    )
    for c in Parallel(n_jobs=n_jobs)(jobs):
        rows.extend(c)
    return {name: {k: np.array([r[name][i] for r in rows]) for i, k in enumerate(KEYS)} for name in groups}


def _warm():
    import rashomon.sets.scale._bootstrap  # noqa: F401  (imports in the worker, not timed)
    import rashomon.solvers.trust_region  # noqa: F401

    return 0


def interval(v):
    return float(np.quantile(v, 0.025)), float(np.quantile(v, 0.975))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--rebuild", default="100", help="resamples rebuilt from scratch (a count or 'all')")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args(argv)
    B = args.resamples
    K = B if args.rebuild == "all" else min(B, int(args.rebuild))

    t0 = time.perf_counter()
    rs, groups, rng, spec = audit_set()
    print(
        f"set: {rs!r}, {rs.X_.shape[0]} rows, dictionary {spec[0].__class__.__name__} "
        f"rank {rs.parametrization_.dim} (built in {time.perf_counter() - t0:.1f} s)"
    )

    Parallel(n_jobs=args.n_jobs)(delayed(_warm)() for _ in range(4 * args.n_jobs))  # start the workers untimed
    t0 = time.perf_counter()
    new = bootstrap_mcr(rs, groups, B, random_state=rng, n_jobs=args.n_jobs, tol=TOL)
    t_new = time.perf_counter() - t0
    seeds = new.seeds

    t0 = time.perf_counter()
    old = rebuild(spec, groups, seeds[:K], rs.epsilon, args.n_jobs)
    t_old = time.perf_counter() - t0
    t_old_all = t_old * B / K
    t0 = time.perf_counter()
    rew = rebuild(spec, groups, seeds[:K], rs.epsilon, args.n_jobs, rs=rs)
    t_rew = time.perf_counter() - t0
    t_rew_all = t_rew * B / K

    print(f"\n{B} resamples, 2 groups, n_jobs={args.n_jobs}")
    print(f"  new  bootstrap_mcr                 : {t_new:8.1f} s  ({1e3 * t_new / B:.1f} ms / resample)")
    what = "measured" if K == B else f"{K} measured ({t_old:.1f} s), extrapolated x{B / K:g}"
    print(f"  rebuild each resample from scratch : {t_old_all:8.1f} s  ({what})")
    what = "measured" if K == B else f"{K} measured ({t_rew:.1f} s), extrapolated x{B / K:g}"
    print(f"  reweighted + cold searches         : {t_rew_all:8.1f} s  ({what})")
    print(f"  ratio rebuild / new                : {t_old_all / t_new:8.1f}")
    print(f"  ratio reweighted-cold / new        : {t_rew_all / t_new:8.1f}")

    print(f"\nper-resample agreement on the {K} rebuilt resamples: max |new - rebuild| / (tol·max(1, |value|))")
    for name in groups:
        parts = []
        for k in KEYS:
            a, b = new.draws[name][k][:K], old[name][k]
            parts.append(f"{k} {np.max(np.abs(a - b) / (TOL * np.maximum(1.0, np.abs(b)))):.2f}")
        cold = max(
            float(np.max(np.abs(new.draws[name][k][:K] - rew[name][k]) / (TOL * np.maximum(1.0, np.abs(rew[name][k])))))
            for k in KEYS
        )
        parts.append(f"(vs reweighted-cold: max {cold:.2f})")
        tight = int(new.tight[name].all(axis=1).sum())
        print(f"  {name:13s} " + ", ".join(parts) + f"; new bounds tight in {tight}/{B}")

    print(f"\n95% percentile intervals (new on all {B}; new and rebuild on the {K} rebuilt)")
    for name in groups:
        for k in KEYS:
            a = new.draws[name][k]
            line = f"  {name:13s} {k:7s} new[{B}] [{interval(a)[0]:.4f}, {interval(a)[1]:.4f}]"
            if K < B:
                line += f"  new[{K}] [{interval(a[:K])[0]:.4f}, {interval(a[:K])[1]:.4f}]"
            line += f"  rebuild[{K}] [{interval(old[name][k])[0]:.4f}, {interval(old[name][k])[1]:.4f}]"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
