"""Tightness of the classifier MCR bounds: gaps and time per feature, before and after.

Called by ``benchmarks/bench_tightness.py --classifier`` (or run directly). Sets: ``RashomonSet(LogisticModelClass(),
0.1)`` and ``RashomonSet(HingeModelClass(), 0.1)`` (default norm bound, as ``bench_mcr_classification.py``) on

* ``pima``: Pima diabetes, all 8 features, target Outcome;
* ``bc30``: scikit-learn breast cancer, all 569 rows and 30 features;
* ``bc6``: breast cancer, the first 300 rows and 6 features: mean radius, mean texture, mean smoothness,
  mean concavity, worst area, worst concave points (size, texture and shape);
* ``compas``: COMPAS two-year recidivism (race, sex and charge-degree dummies, priors count, age; as
  ``bench_mcr_classification.py``);
* ``wine_red``: red wine, quality >= 6.

For every feature, ``kind="ratio"`` with the default budget (no ``max_time=``/``tol=`` passed): the certified lower
bound, the MR of the lower member, the MR of the upper (best) member, the certified upper bound, and

* upper gap = (upper bound - upper member MR) / |upper bound|,
* lower gap = (lower member MR - lower bound) / |lower member MR|,

and the seconds of the one ``model_class_reliance`` call (wall clock and process CPU time of the worker).

"Before" is another checkout (``--before PATH``), "after" is ``--after PATH`` (default: ``$PYTHONPATH`` if set, else
this tree). Each runs in a subprocess of the same interpreter with ``PYTHONPATH`` set to it (the worker below
imports ``rashomon`` from there), one set at a time, the two alternating, so the machine's load falls on both.

``--search`` adds an independent reference per feature: a multi-start local search (SciPy SLSQP, analytic
gradients) maximising and minimising MR over {θ : e_orig(θ) <= ε_abs, θ'Bθ <= r}, from θ_min, the reference, our
member and 4 sampled members. MR and e_orig are computed here from the set's design (``parametrization_.design``),
labels and ``epsilon_abs_``; each point the search returns is first made exactly feasible (bisection towards θ_min
along the segment, the set being convex) and its MR recomputed by ``rashomon.model_reliance`` on the member's
estimator. It reports when the search beats our members (by more than 1e-9 relative) and when it violates a bound
(must never happen).

    python benchmarks/_tightness_classifier.py --before ../h-bench-base [--quick | --sets pima,bc6] [--search]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SETS = ("pima", "bc6", "bc30", "compas", "wine_red")
QUICK = ("pima", "bc6")
BC6 = ["mean radius", "mean texture", "mean smoothness", "mean concavity", "worst area", "worst concave points"]
REL = 1e-9  # "beats" / "violates": by more than this, relative to max(1, |value|)
TARGETS = {"median upper gap": 0.02, "max upper gap": 0.10, "max lower gap": 0.02, "seconds per feature": 10.0}


def load(name):
    """(X frame, y) of one set."""
    import pandas as pd

    if name == "pima":
        from rashomon.datasets import load_pima_diabetes

        d = load_pima_diabetes()
        return d.drop(columns="Outcome"), d["Outcome"]
    if name in ("bc30", "bc6"):
        from sklearn.datasets import load_breast_cancer

        b = load_breast_cancer(as_frame=True)
        return (b.data, b.target) if name == "bc30" else (b.data[BC6].iloc[:300], b.target.iloc[:300])
    if name == "compas":
        from rashomon.datasets import load_compas

        c = load_compas()
        X = pd.get_dummies(c[["race", "sex", "c_charge_degree"]], drop_first=True, dtype=float)
        X["priors_count"], X["age"] = c["priors_count"].astype(float), c["age"].astype(float)
        return X, c["two_year_recid"]
    if name == "wine_red":
        from rashomon.datasets import load_wine_quality

        w = load_wine_quality("red")
        return w.drop(columns="quality"), (w["quality"] >= 6).astype(int)
    raise SystemExit(f"unknown set {name!r}; choose from {', '.join(SETS)}")


def _L(loss):
    """(loss, derivative) of the margin m = y·score."""
    if loss == "hinge":
        return (lambda m: np.maximum(0.0, 1.0 - m)), (lambda m: -(m < 1.0).astype(float))
    return (lambda m: np.log1p(np.exp(-np.abs(m))) - np.minimum(m, 0.0)), (
        lambda m: -0.5 * (1.0 - np.tanh(0.5 * m))
    )  # -1/(1+e^m)


class _Problem:
    """MR (ratio) and e_orig of θ, with gradients, from the design D and labels ±1, switching design column k."""

    def __init__(self, D, ye, k, loss):
        self.D, self.ye, self.k = D, ye, k
        self.L, self.dL = _L(loss)
        self.vals, self.counts = np.unique(D[:, k], return_counts=True)
        self.delta = self.vals[None, :] - D[:, k][:, None]  # row j with x_k = v, minus its own
        n = len(ye)
        self.nn = n * (n - 1.0)

    def e_orig(self, th):
        return float(np.mean(self.L(self.ye * (self.D @ th))))

    def e_orig_grad(self, th):
        return self.D.T @ (self.dL(self.ye * (self.D @ th)) * self.ye) / len(self.ye)

    def mr(self, th, grad=False):
        s = self.D @ th
        mo = self.ye * s
        lo = self.L(mo)
        ms = self.ye[:, None] * (s[:, None] + self.delta * th[self.k])
        es = (np.sum(self.L(ms) @ self.counts) - lo.sum()) / self.nn
        eo = lo.mean()
        if not grad:
            return es / eo
        W = self.dL(ms) * self.ye[:, None]
        wo = self.dL(mo) * self.ye
        gs = self.D.T @ (W @ self.counts - wo)
        gs[self.k] += np.sum(W * self.delta * self.counts[None, :])
        gs /= self.nn
        go = self.D.T @ wo / len(self.ye)
        return es / eo, (gs * eo - es * go) / eo**2


def _feasible(P, th, th_min, eps, B, r):
    """θ itself when exactly in the set, else the farthest point of the segment θ_min → θ in the set (bisection)."""

    def ok(t):
        return P.e_orig(t) <= eps and t @ B @ t <= r

    if ok(th):
        return th
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(th_min + mid * (th - th_min)) else (lo, mid)
    return th_min + lo * (th - th_min)


def search(rs, X, f, members, n_random=4, maxiter=150):
    """(min MR, max MR) found by multi-start SLSQP over the set, each verified by rashomon.model_reliance."""
    from scipy.optimize import minimize

    import rashomon

    par, eps = rs.parametrization_, float(rs.epsilon_abs_)
    y = np.asarray(rs.y_, float)
    ye = np.where(y == y.max(), 1.0, -1.0)
    D = par.design(np.asarray(rs.X_, float))
    k = list(X.columns).index(f) + (D.shape[1] - X.shape[1])
    P = _Problem(D, ye, k, rs.loss_)
    B, r = par.B, float(par.r)
    th_min = np.asarray(rs.theta_min_, float)
    assert abs(P.e_orig(th_min) - rs.e_min_) <= 1e-8 * max(1.0, rs.e_min_), "labels/design do not give e_min_"
    starts = [th_min, np.asarray(rs.reference_theta_, float)] + [np.asarray(m.theta, float) for m in members]
    starts += list(rs.sample(n_random, random_state=0).thetas)
    cons = [
        {"type": "ineq", "fun": lambda t: eps - P.e_orig(t), "jac": lambda t: -P.e_orig_grad(t)},
        {"type": "ineq", "fun": lambda t: r - t @ B @ t, "jac": lambda t: -2.0 * B @ t},
    ]
    out = {}
    for side, sgn in (("min", 1.0), ("max", -1.0)):
        best, best_th = None, None
        for t0 in starts:

            def fun(t, s=sgn):
                v, g = P.mr(t, grad=True)
                return s * v, s * g

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = minimize(
                    fun, t0, jac=True, method="SLSQP", constraints=cons, options={"maxiter": maxiter, "ftol": 1e-12}
                )
            th = _feasible(P, res.x, th_min, eps, B, r)
            v = P.mr(th)
            if best is None or sgn * v < sgn * best:
                best, best_th = v, th
        loss = lambda yy, p: P.L(yy * p)  # noqa: E731  (the same loss, on the member's predictions)
        mr = rashomon.model_reliance(par.estimator(best_th), X, ye, f, loss=loss).ratio
        out[side] = float(mr)
    return out["min"], out["max"]


def worker(names, do_search=False) -> dict:
    """{"set|loss": [rows]} with the rashomon on sys.path (this tree, --before or --after)."""
    import rashomon
    import rashomon.solvers

    res = {"_rashomon": os.path.dirname(rashomon.__file__), "_solvers": os.path.dirname(rashomon.solvers.__file__)}
    for name in names:
        X, y = load(name)
        for cls in (rashomon.LogisticModelClass, rashomon.HingeModelClass):
            t = time.perf_counter()
            rs = rashomon.RashomonSet(cls(), 0.1).fit(X, y)
            fit_s = time.perf_counter() - t
            rows = []
            for f in X.columns:
                t, c = time.perf_counter(), time.process_time()
                r = rs.model_class_reliance(f, kind="ratio")
                dt, dc = time.perf_counter() - t, time.process_time() - c
                lm, um = r.lower_model.mr, r.upper_model.mr
                row = {
                    "feature": str(f),
                    "lower": r.lower,
                    "lower_member": lm,
                    "upper_member": um,
                    "upper": r.upper,
                    "upper_gap": (r.upper - um) / abs(r.upper),
                    "lower_gap": (lm - r.lower) / abs(lm),
                    "certified": bool(r.certified),
                    "seconds": dt,
                    "cpu_seconds": dc,
                    "fit_seconds": fit_s,
                    "notes": r.notes,
                }
                if do_search:
                    t = time.perf_counter()
                    smin, smax = search(rs, X, f, [r.lower_model, r.upper_model])
                    row.update(search_min=smin, search_max=smax, search_seconds=time.perf_counter() - t)
                rows.append(row)
            res[f"{name}|{rs.loss_}"] = rows
    return res


def run_worker(pythonpath, names, do_search=False) -> dict:
    if not os.path.isfile(os.path.join(pythonpath, "rashomon", "__init__.py")):  # else the installed tree is used
        raise SystemExit(f"{pythonpath} is not a checkout of rashomon (no rashomon/__init__.py)")
    env = dict(os.environ, PYTHONPATH=pythonpath, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    # the editable install maps rashomon.solvers to the installed tree's solvers/: use the checkout's own
    env["BENCH_SOLVERS"] = os.path.join(pythonpath, "solvers")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--sets", ",".join(names)]
    out = subprocess.run(cmd + (["--search"] if do_search else []), capture_output=True, text=True, env=env, cwd="/")
    if out.returncode:
        raise SystemExit(f"worker failed ({pythonpath}):\n{out.stderr[-3000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if os.path.realpath(res["_rashomon"]) != os.path.realpath(os.path.join(pythonpath, "rashomon")):
        raise SystemExit(f"the worker imported rashomon from {res['_rashomon']}, not from {pythonpath}")
    if os.path.realpath(res["_solvers"]) != os.path.realpath(env["BENCH_SOLVERS"]):
        raise SystemExit(f"the worker imported rashomon.solvers from {res['_solvers']}, not from {pythonpath}")
    return res


def _tol(v):
    return REL * max(1.0, abs(v))


def summary(rows) -> dict:
    up = np.array([x["upper_gap"] for x in rows])
    lo = np.array([x["lower_gap"] for x in rows])
    s = np.array([x["seconds"] for x in rows])
    c = np.array([x["cpu_seconds"] for x in rows])
    out = {
        "n": len(rows),
        "median_upper_gap": float(np.median(up)),
        "max_upper_gap": float(up.max()),
        "max_lower_gap": float(lo.max()),
        "median_s": float(np.median(s)),
        "max_s": float(s.max()),
        "median_cpu_s": float(np.median(c)),
        "max_cpu_s": float(c.max()),
    }
    if "search_max" in rows[0]:
        out["search_beats_upper"] = [
            x["feature"] for x in rows if x["search_max"] > x["upper_member"] + _tol(x["upper_member"])
        ]
        out["search_beats_lower"] = [
            x["feature"] for x in rows if x["search_min"] < x["lower_member"] - _tol(x["lower_member"])
        ]
        out["search_violates"] = [
            x["feature"]
            for x in rows
            if x["search_max"] > x["upper"] + _tol(x["upper"]) or x["search_min"] < x["lower"] - _tol(x["lower"])
        ]
        out["search_beats_by_0.1%"] = [
            x["feature"]
            for x in rows
            if x["search_max"] > x["upper_member"] * (1 + 1e-3) or x["search_min"] < x["lower_member"] * (1 - 1e-3)
        ]
        out["search_max_excess"] = max(
            max(x["search_max"] - x["upper_member"], x["lower_member"] - x["search_min"]) for x in rows
        )
    return out


def report(after, before=None) -> list[str]:
    """Per set and loss: the figures before and after side by side, then the targets."""
    lines = [
        "Classifier MCR, kind='ratio', every feature. upper gap = (bound - best member)/|bound|; lower gap = "
        "(member - bound)/|member|; s = wall seconds of one model_class_reliance (cpu: process CPU).",
        f"{'set | loss':<20}{'feat':>5}{'':>3}{'med up gap':>11}{'max up gap':>11}{'max lo gap':>11}"
        f"{'med s':>8}{'max s':>8}{'med cpu':>8}{'max cpu':>8}",
    ]
    keys = [k for k in after if not k.startswith("_")]
    for key in keys:
        for label, res in (("before", before), ("after", after)):
            if res is None or key not in res:
                continue
            s = summary(res[key])
            lines.append(
                f"{key if label == 'before' or before is None else '':<20}{s['n']:>5}  {label[0]}"
                f"{s['median_upper_gap']:>11.2%}{s['max_upper_gap']:>11.2%}{s['max_lower_gap']:>11.2%}"
                f"{s['median_s']:>8.2f}{s['max_s']:>8.2f}{s['median_cpu_s']:>8.2f}{s['max_cpu_s']:>8.2f}"
            )
            if "search_violates" in s:
                lines.append(
                    f"{'':<28}search: beats upper member on {len(s['search_beats_upper'])}, lower member on "
                    f"{len(s['search_beats_lower'])} (either by > 0.1 %: {len(s['search_beats_by_0.1%'])}), "
                    f"largest excess {s['search_max_excess']:.3g}; "
                    f"VIOLATES a bound on {s['search_violates'] or 'none'}"
                )
    lines.append("(b = before, a = after)")
    for label, res in (("before", before), ("after", after)):
        if res is None:
            continue
        S = [summary(res[k]) for k in keys if k in res]
        worst = {
            "median upper gap": max(s["median_upper_gap"] for s in S),
            "max upper gap": max(s["max_upper_gap"] for s in S),
            "max lower gap": max(s["max_lower_gap"] for s in S),
            "seconds per feature": max(s["max_s"] for s in S),
        }
        cpu = max(s["max_cpu_s"] for s in S)
        lines.append(
            f"targets, {label}: "
            + "; ".join(
                f"{k} <= {f'{TARGETS[k]:g} s' if k.startswith('seconds') else f'{TARGETS[k]:.0%}'}: worst "
                f"{f'{v:.3g} s (wall; CPU {cpu:.3g} s)' if k.startswith('seconds') else f'{v:.2%}'} "
                f"{'MET' if v <= TARGETS[k] else 'NOT MET'}"
                for k, v in worst.items()
            )
        )
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="a checkout of the old code (PYTHONPATH for the 'before' worker)")
    ap.add_argument(
        "--before-json", help="take 'before' from the 'after' results of an earlier run's --json (not re-run)"
    )
    ap.add_argument("--after", help="a checkout of the new code (default: $PYTHONPATH if set, else this tree)")
    ap.add_argument("--quick", action="store_true", help="pima and bc6 only")
    ap.add_argument("--sets", help="comma-separated subset of: " + ", ".join(SETS))
    ap.add_argument("--search", action="store_true", help="add the multi-start local search reference")
    ap.add_argument("--json", help="write {'before':…, 'after':…} here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    names = args.sets.split(",") if args.sets else (QUICK if args.quick else SETS)
    if args.worker:
        if os.environ.get("BENCH_SOLVERS"):
            sys.path.insert(0, HERE)
            from bench_tightness import _solvers_from

            _solvers_from(os.environ["BENCH_SOLVERS"])
        print(json.dumps(worker(names, args.search)))
        return 0
    after_path = os.path.abspath(args.after or os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or ROOT)
    paths = [("after", after_path)] + ([("before", os.path.abspath(args.before))] if args.before else [])
    got = {"after": {}, "before": {} if args.before else None}
    if args.before_json:
        with open(args.before_json) as fh:
            got["before"] = json.load(fh)["after"]
    for i, name in enumerate(names):  # one set at a time, the order flipping
        for which, path in paths if i % 2 == 0 else paths[::-1]:
            t = time.perf_counter()
            got[which].update(run_worker(path, [name], args.search))
            print(
                f"  [{which}: {name} in {time.perf_counter() - t:.0f} s, rashomon from {got[which]['_rashomon']}]",
                flush=True,
            )
    print("\n".join(report(got["after"], got["before"])))
    print("load average (1, 5, 15 min) at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({**got, "sets": list(names), "before_path": args.before, "after_path": after_path}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
