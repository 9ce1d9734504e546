"""A norm bound that does not bind costs nothing: ``norm_bound`` = inf, 1e6, automatic and default, side by side.

Two sets, every variant fitted and queried in the same process, in CPU seconds with one BLAS thread:

* a logistic set (synthetic, ``--n`` x ``--p``, ε = 0.05 relative) that a far smaller bound contains: fit,
  ``multiplicity()`` of every row, score ranges of ``--rows`` rows, ``model_class_reliance`` of feature 0;
* the linear diabetes set (442 x 10, ε = 0.05 relative): fit, ``coef_range``, ``prediction_range`` of 50 rows, MCR
  of feature 0; glassy 0.1.0 (if installed) on the same OLS set (its radius 5 % of the OLS loss).

Variants: ``inf`` (the loss's own set); ``1e6``; ``automatic`` (the bound the set chose for 1e6, given explicitly:
the tightest box); ``default`` (``norm_bound=None``: a cross-validated norm, a different, smaller set); and
``1e6 before``: 1e6 with the automatic tightening switched off (the code before it, run in this process). The
first three must give the same bounds (the same set) and times; the ratios are against ``inf``.

    python benchmarks/bench_norm_bound.py [--n 2000] [--p 5] [--rows 200] [--glassy-path DIR] [--reps 2000]

``--glassy-path DIR`` puts DIR first on ``sys.path`` (a glassy checkout that is not installed). The head-to-head
times ``coef_range`` against ``coef_bounds`` and ``prediction_range(X[:50])`` against ``disagreement(X[:50])``
alternately, ``--reps`` calls each, five rounds, best round per call.
"""

import argparse
import contextlib
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

import rashomon.sets._loss_only as loss_only
from rashomon import LinearModelClass, LogisticModelClass, RashomonSet


@contextlib.contextmanager
def no_tightening():
    """The code before the automatic tightening: the class's bound is used as given."""
    saved = loss_only.tighten_margin, loss_only.tighten_quadratic
    loss_only.tighten_margin = loss_only.tighten_quadratic = lambda rs, func: None
    try:
        yield
    finally:
        loss_only.tighten_margin, loss_only.tighten_quadratic = saved


def cpu(fn, repeat=1):
    """Best CPU time of ``repeat`` calls and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def logistic_data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X @ np.linspace(1.0, 0.2, p) + rng.logistic(size=n) > 0).astype(int)
    return X, y


def run_variants(make, X, y, queries, r_auto_from="1e6"):
    """Fit each variant and run the queries; returns {variant: {name: (seconds, summary)}} and the r used."""
    out, rs_used = {}, {}
    variants = [("inf", np.inf), ("1e6", 1e6), ("automatic", None), ("default", None), ("1e6 before", 1e6)]
    for name, nb in variants:
        if name == "automatic":
            nb = rs_used[r_auto_from]
        ctx = no_tightening() if name == "1e6 before" else contextlib.nullcontext()
        with ctx:
            t, rs = cpu(lambda nb=nb: RashomonSet(make(nb), 0.05).fit(X, y))
            rows = {"fit": (t, None)}
            for q, fn in queries.items():
                rows[q] = cpu(lambda fn=fn, rs=rs: fn(rs), repeat=1)
        rs_used[name] = rs.parametrization_.r
        out[name] = rows
    return out, rs_used


def report(title, res, r_used, fmt):
    print(f"\n{title}")
    names = list(res)
    queries = list(res[names[0]])
    print(f"{'variant':<12} {'r used':>12} " + " ".join(f"{q:>22}" for q in queries))
    for v in names:
        cells = []
        for q in queries:
            t, s = res[v][q]
            base = res["inf"][q][0]
            shown = f"{t * 1e3:8.3f}ms" if t < 0.1 else f"{t:9.3f}s"
            cells.append(f"{shown} ({t / max(base, 1e-12):5.1f}x)")
        print(f"{v:<12} {r_used[v]:12.5g} " + " ".join(f"{c:>22}" for c in cells))
    print("bounds:")
    for v in names:
        print(f"  {v:<12} " + "; ".join(f"{q}: {fmt[q](res[v][q][1])}" for q in queries if q in fmt))


def logistic_part(n, p, rows):
    X, y = logistic_data(n, p)
    queries = {
        "multiplicity": lambda rs: rs.multiplicity(),
        "score ranges": lambda rs: rs.prediction_range(X[:rows], scale="score"),
        "MCR x0": lambda rs: rs.model_class_reliance(0),
    }
    fmt = {
        "multiplicity": lambda m: f"ambiguity {m.ambiguity:.4f} ({int(m.flips.sum())} rows)",
        "score ranges": lambda r: f"mean width {np.mean(r.upper - r.lower):.6f}",
        "MCR x0": lambda r: f"[{r.lower:.6f}, {r.upper:.6f}]",
    }
    res, r_used = run_variants(LogisticModelClass, X, y, queries)
    report(f"Logistic set, {n} x {p}, eps = 0.05 relative (CPU seconds; ratio to inf)", res, r_used, fmt)
    a, b = res["inf"], res["1e6"]
    d = max(
        np.max(np.abs(a["score ranges"][1].lower - b["score ranges"][1].lower)),
        np.max(np.abs(a["score ranges"][1].upper - b["score ranges"][1].upper)),
    )
    print(f"  inf vs 1e6: largest score-range difference {d:.2e}")


def head_to_head(rs, pz, Xq, reps):
    """Per-call CPU seconds of ours and glassy's queries, timed alternately (best of five rounds each)."""
    calls = {
        "coef ours": lambda: rs.coef_range(),
        "coef glassy": lambda: pz.coef_bounds(),
        "pred ours": lambda: rs.prediction_range(Xq),
        "pred glassy": lambda: pz.disagreement(Xq),
    }
    best = dict.fromkeys(calls, np.inf)
    for _ in range(5):
        for k, f in calls.items():
            f()
            t = time.process_time()
            for _ in range(reps):
                f()
            best[k] = min(best[k], (time.process_time() - t) / reps)
    return best


def linear_part(reps_h2h=2000):
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    Xq = X[:50]
    reps = 200

    def per_call(fn):
        def run(rs):
            fn(rs)
            t = time.process_time()
            for _ in range(reps):
                out = fn(rs)
            return out, (time.process_time() - t) / reps

        return run

    queries = {
        "coef_range": per_call(lambda rs: rs.coef_range()),
        "prediction 50": per_call(lambda rs: rs.prediction_range(Xq)),
        "MCR x0": lambda rs: (rs.model_class_reliance(0), None),
    }
    res, r_used = run_variants(LinearModelClass, X, y, queries)
    for v in res:  # per-call times of the range queries replace the totals
        for q in ("coef_range", "prediction 50"):
            (out, t) = res[v][q][1]
            res[v][q] = (t, out)
        res[v]["MCR x0"] = (res[v]["MCR x0"][0], res[v]["MCR x0"][1][0])
    fmt = {
        "coef_range": lambda r: f"width[1] {r.upper[1] - r.lower[1]:.9g}",
        "prediction 50": lambda r: f"mean width {np.mean(r.upper - r.lower):.9g}",
        "MCR x0": lambda r: f"[{r.lower:.6f}, {r.upper:.6f}]",
    }
    report("Linear diabetes set, 442 x 10, eps = 0.05 relative (CPU seconds per call; ratio to inf)", res, r_used, fmt)
    try:
        import glassy
    except ImportError:
        print("glassy: not installed (pip install glassy==0.1.0 to compare)")
        return
    pz = glassy.Prism.from_data(X, y, r=5.0)
    t_c = cpu(lambda: [pz.coef_bounds() for _ in range(reps)])[0] / reps
    t_p = cpu(lambda: [pz.disagreement(Xq) for _ in range(reps)])[0] / reps
    ours_c, ours_p = res["inf"]["coef_range"], res["inf"]["prediction 50"]
    cb = np.array(list(pz.coef_bounds().values()))
    dg = pz.disagreement(Xq)
    dc = max(np.max(np.abs(ours_c[1].lower[1:] - cb[:, 0])), np.max(np.abs(ours_c[1].upper[1:] - cb[:, 1])))
    dp = max(np.max(np.abs(ours_p[1].lower - dg["min"])), np.max(np.abs(ours_p[1].upper - dg["max"])))
    print(
        f"glassy {glassy.__version__}: coef_bounds {t_c * 1e3:.4f} ms/call (ours {ours_c[0] * 1e3:.4f} ms, "
        f"{ours_c[0] / t_c:.1f}x glassy), disagreement 50 rows {t_p * 1e3:.4f} ms/call (ours "
        f"{ours_p[0] * 1e3:.4f} ms, {ours_p[0] / t_p:.1f}x glassy)"
    )
    print(
        f"  largest difference from glassy: coefficients {dc:.2e} (of {np.abs(cb).max():.3g}), "
        f"predictions {dp:.2e} (of {np.abs(dg['max']).max():.3g})"
    )
    rs = RashomonSet(LinearModelClass(norm_bound=np.inf), 0.05).fit(X, y)
    b = head_to_head(rs, pz, Xq, reps_h2h)
    print(
        f"  head to head ({reps_h2h} calls, best of 5 alternating rounds): coef_range "
        f"{b['coef ours'] * 1e6:.1f} us vs coef_bounds {b['coef glassy'] * 1e6:.1f} us "
        f"({b['coef ours'] / b['coef glassy']:.2f}x); prediction_range(50) {b['pred ours'] * 1e6:.1f} us vs "
        f"disagreement {b['pred glassy'] * 1e6:.1f} us ({b['pred ours'] / b['pred glassy']:.2f}x)"
    )
    # large queries: per row
    Xb = np.tile(X, (12, 1))
    t_g = cpu(lambda: pz.disagreement(Xb), repeat=5)[0]
    t_o = cpu(lambda: rs.prediction_range(Xb), repeat=5)[0]  # the set of the head-to-head
    print(f"  {len(Xb)} rows: glassy {t_g * 1e3:.3f} ms, ours {t_o * 1e3:.3f} ms ({t_o / t_g:.2f}x glassy)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--p", type=int, default=5)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--parts", default="linear,logistic", help="comma-separated: linear (with glassy), logistic")
    ap.add_argument("--glassy-path", default=None, help="directory holding the glassy package (put first on sys.path)")
    ap.add_argument("--reps", type=int, default=2000, help="calls per round of the head-to-head with glassy")
    args = ap.parse_args()
    if args.glassy_path:
        sys.path.insert(0, args.glassy_path)
    parts = set(args.parts.split(","))
    with threadpool_limits(1):
        if "linear" in parts:
            linear_part(args.reps)
        if "logistic" in parts:
            logistic_part(args.n, args.p, args.rows)


if __name__ == "__main__":
    main()
