"""Tightness of the squared-loss MCR ends: bound minus attained value, before and after.

Every feature of diabetes (scikit-learn), red and white wine, concrete, bike-sharing (day), a weak-signal
synthetic set (20,000 rows, uncentred features, at ε = 0.10 and 0.15) and COMPAS (the paper's protocol,
``examples/compas_fisher2019.py``), for LinearModelClass (standardised, and on the raw columns: the intercept is
then far from the loss minimiser's) and KernelModelClass (COMPAS: the paper's kernel class only), kinds ratio and
difference, both ends, at ε = 0.1 (COMPAS: the paper's ε).

"Before" is another checkout (``--before PATH``, e.g. ``git worktree add --detach ../main-wt main``), run in
a subprocess of the same interpreter that imports ``rashomon`` from PATH, in the same run, one dataset at a time,
alternating with this tree ("after"), so that the machine's load falls on both. Printed
per dataset × class × kind: features, the largest relative gap ``(bound - attained)/max(1, |bound|)`` over both
ends before and after, the ends not within 1e-6, and the CPU time per feature (after/before). Then a check of a
few instances against a cvxpy/SCS Shor relaxation (exact where its solution has rank one) and a summary.
Brute-force grids on 2-parameter sets are in ``tests/test_two_constraint.py``.
``--classifier`` measures the logistic and hinge bounds instead (``_tightness_classifier.py``: its own options).

    python benchmarks/bench_tightness.py --before ../main-wt [--quick | --datasets diabetes,concrete]
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
REPEATS = 3


NAMES = ("diabetes", "red wine", "white wine", "concrete", "bike day", "weak synthetic", "compas (paper)")


def datasets(names):
    import pandas as pd
    from sklearn.datasets import load_diabetes

    from rashomon.datasets import load_bike_sharing, load_concrete, load_wine_quality

    out = {}
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    out["diabetes"] = (X, y)
    for c in ("red", "white"):
        d = load_wine_quality(c)
        out[f"{c} wine"] = (d.drop(columns="quality"), d["quality"].astype(float))
    d = load_concrete()
    out["concrete"] = (d.drop(columns="strength"), d["strength"])
    d = load_bike_sharing("day")
    out["bike day"] = (
        d.drop(columns=["instant", "dteday", "casual", "registered", "cnt"]).astype(float),
        d["cnt"].astype(float),
    )
    rng = np.random.default_rng(3)  # weak signal, 20,000 rows, features not centred (one binary)
    Z = rng.normal(size=(20_000, 5)) @ (np.eye(5) + 0.5 * rng.normal(size=(5, 5))) + 3.0
    Z[:, 0] = Z[:, 0] > 3.0
    out["weak synthetic"] = (
        pd.DataFrame(Z, columns=[f"x{j}" for j in range(5)]),
        Z @ (0.2 * rng.normal(size=5)) + 2.0 * rng.normal(size=20_000) + 5.0,
    )
    return {k: (pd.DataFrame(X).astype(float), pd.Series(y).astype(float)) for k, (X, y) in out.items() if k in names}


def worker(names) -> dict:
    """Results for the datasets ``names`` with the rashomon on sys.path (this tree or --before): {key: [rows]}."""
    import rashomon

    res = {}
    for name, (X, y) in datasets(names).items():
        Xs = (X - X.mean()) / X.std(ddof=0).replace(0, 1)
        p = X.shape[1]
        classes = {
            "linear": (rashomon.LinearModelClass(), X),
            "linear raw": (rashomon.LinearModelClass(standardize=False), X),
            "kernel": (rashomon.KernelModelClass(gamma=1.0 / p, dictionary=100, alpha=1.0), Xs),
        }
        for cname, (mc, XX) in classes.items():
            for eps in (0.1, 0.15) if name == "weak synthetic" else (0.1,):
                rs = rashomon.RashomonSet(mc, eps).fit(XX, y)
                for kind in ("ratio", "difference"):
                    tag = f" ε={eps}" if name == "weak synthetic" else ""
                    res[f"{name}|{cname}|{kind}{tag}"] = _rows(rs, XX.columns, kind)
    if "compas (paper)" in names:
        from rashomon.datasets import load_compas_fisher2019

        d = load_compas_fisher2019()
        s = d.settings
        mc = rashomon.KernelModelClass(kernel="rbf", gamma=s["sigma"], alpha=s["n_alpha"], intercept=s["mu"])
        ref = mc.fit_reference(d.X_train, d.y_train)
        rs = rashomon.RashomonSet(mc, 0.1 * s["cv_loss"], epsilon_kind="additive", reference=ref).fit(
            d.X_test, d.y_test
        )
        for kind in ("ratio", "difference"):
            res[f"compas (paper)|kernel|{kind}"] = _rows(rs, d.X_test.columns, kind)
    return res


def _rows(rs, columns, kind):
    rows = []
    for f in columns:
        t = math.inf
        for _ in range(REPEATS):  # the least of a few runs: a 5-50 ms query on a shared machine is noisy
            t0 = time.process_time()  # CPU seconds (one BLAS thread in the worker): wall time follows the load
            r = rs.model_class_reliance(f, kind=kind)
            t = min(t, time.process_time() - t0)
        rows.append(
            {
                "feature": str(f),
                "lower": r.lower,
                "upper": r.upper,
                "lower_gap": r.lower_gap,
                "upper_gap": r.upper_gap,
                "tight": bool(r.lower_tight and r.upper_tight),
                "seconds": t,
                "notes": r.notes,
            }
        )
    return rows


def _rel(row):
    return max(row["lower_gap"] / max(1.0, abs(row["lower"])), row["upper_gap"] / max(1.0, abs(row["upper"])))


def _tree_from(tree: str) -> None:
    """Import ``rashomon`` (and ``rashomon.solvers``, the folder ``solvers/``) from the checkout ``tree``, ahead of
    the editable install's own mapping, which a PYTHONPATH does not override (a "before" worker would otherwise
    run this tree's package)."""
    import importlib.abc
    import importlib.util

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, target=None, path_=None):
            parts = name.split(".")
            if parts[0] != "rashomon":
                return None
            rel = ["solvers", *parts[2:]] if parts[1:2] == ["solvers"] else parts
            loc = os.path.join(tree, *rel)
            if os.path.isdir(loc):
                return importlib.util.spec_from_file_location(
                    name, os.path.join(loc, "__init__.py"), submodule_search_locations=[loc]
                )
            return importlib.util.spec_from_file_location(name, loc + ".py") if os.path.isfile(loc + ".py") else None

    sys.meta_path.insert(0, Finder())


def _solvers_from(path: str) -> None:
    """Import ``rashomon.solvers`` from ``path`` (a checkout's solvers/) ahead of the editable install's mapping."""
    import importlib.abc
    import importlib.util

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, target=None, path_=None):
            if name == "rashomon.solvers" or name.startswith("rashomon.solvers."):
                rel = name.split(".")[2:]
                loc = os.path.join(path, *rel)
                if os.path.isdir(loc):
                    return importlib.util.spec_from_file_location(
                        name, os.path.join(loc, "__init__.py"), submodule_search_locations=[loc]
                    )
                return importlib.util.spec_from_file_location(name, loc + ".py")
            return None

    sys.meta_path.insert(0, Finder())


def run_worker(pythonpath: str | None, names) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("BENCH_TREE", None)
    if pythonpath:
        env["BENCH_TREE"] = pythonpath  # the other checkout's rashomon and solvers/, imported by the worker

    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--datasets", ",".join(names)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    if out.returncode:
        raise SystemExit(f"worker failed ({pythonpath or 'this tree'}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def sdp_check(n_features: int = 10):
    """Diabetes, linear class, ε = 0.1, difference kind: each end against the Shor relaxation of
    ``max / min e_switch - e_orig  s.t.  e_orig <= ε, θ'Bθ <= r`` (cvxpy, SCS)."""
    import cvxpy as cp
    from sklearn.datasets import load_diabetes

    import rashomon

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    rs = rashomon.RashomonSet(rashomon.LinearModelClass(), 0.1).fit(X, y)
    eps = rs.epsilon_abs_
    lines = []
    for f in list(X.columns)[:n_features]:
        prob = rs.problem(f)
        eo, es = prob.e_orig, prob.e_switch
        r = rs.model_class_reliance(f, kind="difference")
        p = len(eo.c)
        for side, sgn, ours in (("lower", 1.0, r.lower), ("upper", -1.0, r.upper)):
            Y = cp.Variable((p + 1, p + 1), symmetric=True)
            Xm, x = Y[1:, 1:], Y[1:, 0]
            A, b, k = sgn * (es.Q - eo.Q), sgn * (es.c - eo.c), sgn * (es.k - eo.k)
            cons = [
                Y >> 0,
                Y[0, 0] == 1,
                cp.trace(eo.Q @ Xm) - 2 * eo.c @ x + eo.k <= eps,
                cp.trace(prob.B @ Xm) <= prob.r,
            ]
            sdp = cp.Problem(cp.Minimize(cp.trace(A @ Xm) - 2 * b @ x + k), cons)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SCS's "may be inaccurate": the rank and value are printed
                sdp.solve(solver="SCS", eps=1e-9, max_iters=100_000)
            ev = np.linalg.eigvalsh(Y.value)
            rank_one = ev[-2] <= 1e-6 * ev[-1]
            val = sgn * sdp.value
            lines.append((f, side, ours, val, rank_one))
    return lines


def main() -> int:
    if "--classifier" in sys.argv[1:]:  # the classifier bounds: benchmarks/_tightness_classifier.py
        sys.path.insert(0, HERE)
        from _tightness_classifier import main as classifier_main

        return classifier_main([a for a in sys.argv[1:] if a != "--classifier"])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--classifier", action="store_true", help="classifier gaps instead (see _tightness_classifier.py)")
    ap.add_argument("--before", help="a checkout of the code to compare with (e.g. a worktree of main)")
    ap.add_argument("--quick", action="store_true", help="diabetes, concrete and the weak synthetic set only")
    ap.add_argument("--datasets", help="comma-separated subset of: " + ", ".join(NAMES))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = (
        args.datasets.split(",")
        if args.datasets
        else (("diabetes", "concrete", "weak synthetic") if args.quick else NAMES)
    )
    if args.worker:
        if os.environ.get("BENCH_TREE"):
            _tree_from(os.environ["BENCH_TREE"])
        print(json.dumps(worker(names)))
        return 0
    # one dataset at a time, the two checkouts alternating (the order flipping), so a change of the machine's
    # load during the run falls on both
    after, before = {}, ({} if args.before else None)
    for i, name in enumerate(names):
        order = [("after", os.path.dirname(HERE))] + ([("before", os.path.abspath(args.before))] if args.before else [])
        for which, path in order if i % 2 == 0 else order[::-1]:
            (after if which == "after" else before).update(run_worker(path, [name]))
    print(
        f"{'dataset | class | kind':<44}{'feat':>5}{'max rel gap before':>20}{'after':>10}"
        f"{'ends > 1e-6 before':>20}{'after':>7}{'s/feature before':>18}{'after':>8}{'ratio':>7}"
    )
    worst, n_ends, n_bad, ratios, worst_feats = 0.0, 0, 0, [], []
    for key, rows in after.items():
        g_a = max(_rel(x) for x in rows)
        bad_a = sum(
            (x["lower_gap"] / max(1, abs(x["lower"])) > 1e-6) + (x["upper_gap"] / max(1, abs(x["upper"])) > 1e-6)
            for x in rows
        )
        t_a = np.mean([x["seconds"] for x in rows])
        worst, n_ends, n_bad = max(worst, g_a), n_ends + 2 * len(rows), n_bad + bad_a
        if before is not None and key in before:
            rb = before[key]
            g_b = max(_rel(x) for x in rb)
            bad_b = sum(
                (x["lower_gap"] / max(1, abs(x["lower"])) > 1e-6) + (x["upper_gap"] / max(1, abs(x["upper"])) > 1e-6)
                for x in rb
            )
            t_b = np.mean([x["seconds"] for x in rb])
            ratios.extend(a["seconds"] / max(b["seconds"], 1e-9) for a, b in zip(rows, rb))
            worst_feats.extend(
                (a["seconds"] / max(b["seconds"], 1e-9), key, a["feature"], b["seconds"], a["seconds"], _rel(b))
                for a, b in zip(rows, rb)
            )
            print(
                f"{key:<44}{len(rows):>5}{g_b:>20.2e}{g_a:>10.2e}{bad_b:>20}{bad_a:>7}{t_b:>18.3f}{t_a:>8.3f}"
                f"{t_a / t_b:>7.2f}"
            )
        else:
            print(f"{key:<44}{len(rows):>5}{'':>20}{g_a:>10.2e}{'':>20}{bad_a:>7}{'':>18}{t_a:>8.3f}")
        for x in rows:
            if x["notes"]:
                print(f"    {x['feature']}: {x['notes']}")
    print(f"\nafter: {n_ends} ends, {n_bad} with (bound - attained)/max(1, |bound|) > 1e-6; largest {worst:.2e}")
    if ratios:
        r = np.array(ratios)
        print(
            f"time per feature after/before: median {np.median(r):.2f}, largest {r.max():.2f} "
            f"(features over 2x: {int(np.sum(r > 2))} of {len(r)})"
        )
        jumped = [w[0] for w in worst_feats if w[5] > 1e-6]
        if jumped:
            print(
                f"  features whose path jumps (gap > 1e-6 before, {len(jumped)}): median {np.median(jumped):.2f}, "
                f"largest {max(jumped):.2f}"
            )
        print("  largest ratios:")
        for q, key, f, tb, ta, gb in sorted(worst_feats, reverse=True)[:6]:
            print(f"    {q:5.2f}  {key} {f}: {tb:.4f} s -> {ta:.4f} s (gap before {gb:.1e})")
    print("\nShor relaxation (cvxpy/SCS) of the difference ends, diabetes, linear class (exact where rank one):")
    print(f"{'feature':<8}{'end':>7}{'ours':>14}{'SDP':>14}{'rank one':>10}{'|ours - SDP|':>14}")
    for f, side, ours, val, r1 in sdp_check():
        print(f"{f:<8}{side:>7}{ours:>14.6f}{val:>14.6f}{str(r1):>10}{abs(ours - val):>14.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
