"""Random sweep of squared-loss MCR ends: how many are attained within 1e-6 of their certified bound.

Each seed draws one weak-signal regression problem (``_drawn`` of ``tests/test_difference_ends.py``: 300,
3,000 or 20,000 rows, 2-8 correlated, partly binary, uncentred features, ε_rel in [0.10, 0.15], a random
group of features to switch), fits ``LinearModelClass(standardize=False)`` and asks both kinds (ratio,
difference) of ``model_class_reliance``. An end *misses* when ``gap > 1e-6·max(1, |bound|)``: the best
member found is further than that from the certified bound. These are the problems where the γ-search's
path jumps and the two-constraint solver (``solvers/two_constraint.py``) has to close the end.

``--seeds`` takes a list (``1710753957,833700311``) or a count with a sweep seed (``20000@7``: 20,000 seeds
drawn by ``default_rng(7)``). ``--check`` runs a multi-start SLSQP on each miss: a member it finds beyond the
certified bound would be a validity bug (printed as INVALID). ``--before PATH`` times the same seeds with
another checkout in the same run (chunks alternating, each in a subprocess with one BLAS thread), reporting
CPU seconds (``time.process_time``) per seed and their ratio. ``--out FILE`` appends one JSON line per seed
(a long sweep can be resumed with ``--resume``).

    nice python benchmarks/sweep_two_constraint.py --seeds 20000@11 --out sweep.jsonl
    python benchmarks/sweep_two_constraint.py --seeds 1710753957,833700311 --check
    python benchmarks/sweep_two_constraint.py --seeds 600@5 --before ../main-wt
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REL = 1e-6


sys.path.insert(0, os.path.dirname(HERE))
from tests._draws import weak_signal_problem as drawn  # noqa: E402  (the tests' problems, the same draws)


def one(seed) -> dict:
    """Both kinds' ends of one seed's problem: bounds, gaps, CPU seconds."""
    import rashomon

    X, y, eps, group = drawn(seed)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the null-model warning of weak-signal sets
        rs = rashomon.RashomonSet(rashomon.LinearModelClass(standardize=False), eps).fit(X, y)
    out = {"seed": int(seed), "n": int(X.shape[0]), "p": int(X.shape[1]), "ends": []}
    for kind in ("ratio", "difference"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = rs.model_class_reliance(group, kind=kind)
        for side in ("lower", "upper"):
            b, gap = float(getattr(r, side)), float(getattr(r, f"{side}_gap"))
            m = getattr(r, f"{side}_model")
            out["ends"].append(
                {
                    "kind": kind,
                    "side": side,
                    "bound": b,
                    "gap": gap,
                    "member": float(m.mr) if m is not None else math.nan,
                    "miss": bool(not gap <= REL * max(1.0, abs(b))),
                }
            )
    out["cpu"] = time.process_time() - t0
    return out


def slsqp(seed, kind, side, starts=12):
    """The best member a multi-start SLSQP finds for one end (an inner value, to compare with the bound)."""
    from scipy.optimize import minimize

    import rashomon

    X, y, eps_rel, group = drawn(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = rashomon.RashomonSet(rashomon.LinearModelClass(standardize=False), eps_rel).fit(X, y)
    prob, eps = rs.problem(group), rs.epsilon_abs_
    eo, es = prob.e_orig, prob.e_switch
    sgn = 1.0 if side == "lower" else -1.0
    obj = (lambda x: sgn * (es(x) - eo(x))) if kind == "difference" else (lambda x: sgn * es(x) / eo(x))
    cons = [{"type": "ineq", "fun": lambda x: eps - eo(x)}, {"type": "ineq", "fun": lambda x: prob.r - x @ prob.B @ x}]
    rng = np.random.default_rng(seed)
    th = rs.theta_min_
    best = math.inf
    for i in range(starts):
        x0 = th if i == 0 else th + rng.normal(size=len(th)) * 0.3 * 2.0 ** (i % 4 - 2) * (1 + np.abs(th))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            o = minimize(obj, x0, constraints=cons, method="SLSQP", options={"ftol": 1e-15, "maxiter": 500})
        if eo(o.x) <= eps * (1 + 1e-12) and o.x @ prob.B @ o.x <= prob.r * (1 + 1e-12):
            best = min(best, float(o.fun))
    return sgn * best


def _seeds(spec: str) -> list[int]:
    if "@" in spec:
        n, s = spec.split("@")
        return [int(v) for v in np.random.default_rng(int(s)).integers(0, 2**31 - 1, int(n))]
    return [int(v) for v in spec.split(",") if v]


def _worker(seeds, out_path=None):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        for s in seeds:
            try:
                row = one(s)
            except Exception as exc:  # noqa: BLE001 - a sweep records the failure and goes on
                row = {"seed": int(s), "error": f"{type(exc).__name__}: {exc}", "ends": [], "cpu": math.nan}
            line = json.dumps(row)
            if out_path:
                with open(out_path, "a") as fh:
                    fh.write(line + "\n")
            else:
                print(line, flush=True)


def _run(path, seeds) -> list[dict]:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("SWEEP_TREE", None)
    if path:
        env["SWEEP_TREE"] = path
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--seeds", ",".join(map(str, seeds))]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    if res.returncode:
        raise SystemExit(f"worker failed ({path or 'this tree'}):\n{res.stderr[-3000:]}")
    return [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]


def _summary(rows, label=""):
    misses = [(r["seed"], e) for r in rows for e in r["ends"] if e["miss"]]
    errors = [r for r in rows if "error" in r]
    probs = len({s for s, _ in misses})
    cpu = np.array([r["cpu"] for r in rows if math.isfinite(r["cpu"])])
    print(
        f"{label}{len(rows)} problems, {4 * len(rows)} ends: {len(misses)} ends missed in {probs} problems, "
        f"{len(errors)} errors; CPU s/problem mean {cpu.mean() if len(cpu) else math.nan:.4f}"
    )
    for s, e in misses:
        print(
            f"  {s} {e['kind']:>10} {e['side']:>5}: bound {e['bound']:.9g} member {e['member']:.9g} gap {e['gap']:.3g}"
        )
    for r in errors:
        print(f"  {r['seed']} error: {r['error']}")
    return misses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", required=True, help="a list of seeds, or COUNT@SWEEP_SEED")
    ap.add_argument("--check", action="store_true", help="multi-start SLSQP on each miss (is the bound valid?)")
    ap.add_argument("--check-all", action="store_true", help="multi-start SLSQP on every end")
    ap.add_argument("--before", help="another checkout: the same seeds timed with it, in the same run")
    ap.add_argument("--out", help="append one JSON line per seed to this file")
    ap.add_argument("--resume", action="store_true", help="skip the seeds already in --out")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    seeds = _seeds(args.seeds)
    if args.worker:
        if os.environ.get("SWEEP_TREE"):
            sys.path.insert(0, HERE)
            from bench_tightness import _tree_from

            _tree_from(os.environ["SWEEP_TREE"])
        _worker(seeds)
        return 0
    if args.before:  # chunks alternating between the checkouts, the order flipping, so the load falls on both
        after, before = [], []
        chunk = 25
        for i in range(0, len(seeds), chunk):
            part = seeds[i : i + chunk]
            order = [(after, None), (before, os.path.abspath(args.before))]
            for dest, path in order if (i // chunk) % 2 == 0 else order[::-1]:
                dest.extend(_run(path, part))
        _summary(before, "before: ")
        _summary(after, "after:  ")
        cb = np.array([r["cpu"] for r in before])
        ca = np.array([r["cpu"] for r in after])
        ok = np.isfinite(cb) & np.isfinite(ca)
        q = ca[ok] / cb[ok]
        print(
            f"CPU seconds, total before {cb[ok].sum():.2f}, after {ca[ok].sum():.2f} (ratio {ca[ok].sum() / cb[ok].sum():.3f}); "
            f"per problem after/before: median {np.median(q):.3f}, largest {q.max():.2f}"
        )
        seeds_ok = [r["seed"] for r, k in zip(after, ok) if k]
        for i in np.argsort(q)[::-1][:3]:
            print(f"  {seeds_ok[i]}: {cb[ok][i]:.4f} s -> {ca[ok][i]:.4f} s")
        return 0
    if args.out and args.resume and os.path.exists(args.out):
        with open(args.out) as fh:
            done = {json.loads(line)["seed"] for line in fh if line.strip()}
        seeds = [s for s in seeds if s not in done]
    if args.out:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            _worker(seeds, args.out)
        with open(args.out) as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    else:
        from threadpoolctl import threadpool_limits

        rows = []
        with threadpool_limits(1):
            for s in seeds:
                rows.append(one(s))
    misses = _summary(rows)
    if args.check or args.check_all:
        which = [(r["seed"], e) for r in rows for e in r["ends"]] if args.check_all else misses
        print("multi-start SLSQP (member beyond the bound: INVALID; SLSQP better than our member by > 1e-6: SHORT):")
        for s, e in which:
            ref = slsqp(s, e["kind"], e["side"])
            sgn = 1.0 if e["side"] == "lower" else -1.0
            tol = max(1.0, abs(ref))
            valid = sgn * (ref - e["bound"]) >= -1e-9 * tol
            short = sgn * (e["member"] - ref) > REL * tol
            print(
                f"  {s} {e['kind']:>10} {e['side']:>5}: bound {e['bound']:.9g} member {e['member']:.9g} "
                f"SLSQP {ref:.9g}{'' if valid else '  INVALID'}{'  SHORT' if short else ''}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
