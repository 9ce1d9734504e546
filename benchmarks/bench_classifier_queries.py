"""Queries of classifier Rashomon sets on every row of a real table, against cvxpy and
rashomon-py, measured in the same run.

Sets: breast cancer (scikit-learn's ``load_breast_cancer``, 569 x 30), logistic and hinge classes; COMPAS two-year
recidivism (ProPublica's filters, 6,172 rows; one-hot race / sex / charge degree plus age and priors, as the audit
encodes them), logistic class; ε = 0.1 relative everywhere. Printed per set:

* wall and CPU seconds of ``prediction_range`` and ``multiplicity`` over every row, and of ``coef_range``
  (targets on a quiet 2-core machine: breast cancer logistic <= 3 s each, hinge <= 10 s each, COMPAS logistic
  multiplicity <= 10 s; the machine may be shared, so CPU time is printed too), the rows the batch left to the
  per-row search, and the largest certified gap;
* agreement with cvxpy + CLARABEL (exponential cone / LP epigraph, the ball as a quadratic constraint) on 50
  sampled row-ends: CLARABEL's optimum must lie in [our bound - 1e-6, our attained value + 1e-6] (relative to
  max(1, |value|)); CLARABEL's own "inaccurate" answers are counted and left out; its time per row-end against
  ours (all rows' time / row-ends);
* rashomon-py 0.3.1 (its own venv, ``bench_multiplicity.peer_python``): its exact ``functional_range`` (both ends of
  a row's score; Lagrangian trace with Newton solves) and ``can_flip`` (exact per-row flip test at score 0, with a
  strong-convexity screen) timed on the same standardised data and ε, beside ours on the set that contains theirs
  (its set is ``{mean log loss + (λ/2)||β||² <= L̂ + ε}``, λ = 1/n from ``LogisticRegression()``; ours is that loss
  bound cut by the ball ``||β||² <= 2(L̂ + ε - e*)/λ``, see ``bench_mcr_classification_peers.py``): no
  package has the other's set, so the ranges differ (ours contain theirs; counted); the time ratio is per row.
  rashomon-py has no hinge-loss set (``estimator must be 'logistic' or 'linear'``): no peer for the hinge rows.

    python benchmarks/bench_classifier_queries.py [--quick] [--no-peer]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import run_in_venv  # noqa: E402
from bench_multiplicity import peer_python  # noqa: E402
from rashomon import HingeModelClass, LogisticModelClass, RashomonSet  # noqa: E402
from rashomon.datasets import load_compas  # noqa: E402
from rashomon.sets.rows._ranges import engine_of  # noqa: E402

PEER_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.linear_model import LogisticRegression
from rashomon import RashomonSet
d = np.load(sys.argv[1]); Z, y, rho, k = d["Z"], d["y"], float(d["rho"]), int(d["k"])
warnings.simplefilter("ignore")
out = {"version": __import__("importlib.metadata").metadata.version("rashomon-py")}
m = LogisticRegression(max_iter=10000, tol=1e-10).fit(Z, y)
rs = RashomonSet.from_sklearn(m, Z, y, epsilon=rho, random_state=0)
out.update(lam=float(rs._lambda), L_hat=float(rs._L_hat), eps=float(rs._epsilon_value))
A = np.hstack([np.ones((len(Z), 1)), Z])
t, c = time.perf_counter(), time.process_time()
out["ranges"] = [list(rs.functional_range(a)) for a in A[:k]]
out["t_range"], out["c_range"] = time.perf_counter() - t, time.process_time() - c
t, c = time.perf_counter(), time.process_time()
out["flips"] = rs.can_flip(Z, 0.0).tolist()
out["t_flip"], out["c_flip"] = time.perf_counter() - t, time.process_time() - c
json.dump(out, open(sys.argv[2], "w"))
"""


def breast_cancer():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X, y


def compas():
    c = load_compas()
    X = pd.get_dummies(c[["race", "sex", "c_charge_degree"]], drop_first=True, dtype=float)
    X["priors_count"], X["age"] = c["priors_count"].astype(float), c["age"].astype(float)
    return X, c["two_year_recid"]


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def cvxpy_ends(rs, P, ends):
    """min (end 0) or max (end 1) of rows of P (scores without their constant) by cvxpy + CLARABEL; NaN where it
    reports an inaccurate optimum."""
    import cvxpy as cp

    ms = rs._margin
    th, c = cp.Variable(ms.D.shape[1]), cp.Parameter(ms.D.shape[1])
    m = cp.multiply(ms.y, ms.D @ th)
    loss = cp.sum(cp.logistic(-m)) if ms.loss.name == "logistic" else cp.sum(cp.pos(1 - m))
    Bp = ms.B[ms.o :, ms.o :]
    L = np.linalg.cholesky(0.5 * (Bp + Bp.T))
    prob = cp.Problem(
        cp.Minimize(c @ th), [loss <= len(ms.y) * rs.epsilon_abs_, cp.sum_squares(L.T @ th[ms.o :]) <= ms.r]
    )
    out = []
    for p, e in zip(P, ends):
        sign = 1.0 if e == 0 else -1.0
        c.value = sign * p
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                prob.solve(solver="CLARABEL")
            except cp.error.SolverError:
                out.append(np.nan)
                continue
        out.append(sign * prob.value if prob.status == "optimal" else np.nan)
    return np.array(out)


def run_set(name, X, y, cls, targets, n_check, rng):
    rs = RashomonSet(cls(), 0.1).fit(X, y)
    n = len(X)
    eng = engine_of(rs, "bench")
    eng.n_fallback = 0
    pr, t_pr, c_pr = timed(lambda: rs.prediction_range(X, scale="score"))
    fb_pr = eng.n_fallback
    mu, t_mu, c_mu = timed(lambda: rs.multiplicity(X))
    cr, t_cr, c_cr = timed(lambda: rs.coef_range())
    print(f"\n{name}, {cls.__name__} ({n} x {X.shape[1]}; ε_abs = {rs.epsilon_abs_:.6g})")
    for what, t, c, tgt, extra in (
        (
            "prediction_range (all rows)",
            t_pr,
            c_pr,
            targets[0],
            f"left to the per-row search {fb_pr} of {2 * n} row-ends; max gap {pr.gap.max():.1e}",
        ),
        (
            "multiplicity (all rows)",
            t_mu,
            c_mu,
            targets[1],
            f"scale {mu.scale}, threshold {mu.threshold}: ambiguity {mu.ambiguity:.4f}, "
            f"discrepancy [{mu.discrepancy_lower:.4f}, {mu.discrepancy_upper:.4f}]",
        ),
        ("coef_range", t_cr, c_cr, None, f"max gap {cr.gap.max():.1e}"),
    ):
        verdict = (
            ""
            if tgt is None
            else f"target <= {tgt:g} s: {'OK' if t <= tgt else 'over (wall)'}"
            f"{'' if t <= tgt else ', CPU ' + ('OK' if c <= tgt else 'over')}"
        )
        print(f"  {what:<28} wall {t:7.2f} s  CPU {c:7.2f} s   {verdict}   {extra}")
    # cvxpy on sampled row-ends
    P, p0 = rs.parametrization_.prediction_map(X.to_numpy(dtype=float))
    rows = rng.choice(n, size=n_check, replace=False)
    ends = rng.integers(0, 2, size=n_check)
    (cv, t_cv, c_cv) = timed(lambda: cvxpy_ends(rs, P[rows], ends))
    cv = cv + p0[rows]
    bound = np.where(ends == 0, pr.lower[rows], pr.upper[rows])
    att = np.where(ends == 0, pr.lower_attained[rows], pr.upper_attained[rows])
    sgn = np.where(ends == 0, 1.0, -1.0)
    tol = 1e-6 * np.maximum(1.0, np.abs(att))
    ok = np.isfinite(cv)
    agree = (sgn * cv >= sgn * bound - tol) & (sgn * cv <= sgn * att + tol)
    ours_per = t_pr / (2 * n)
    print(
        f"  cvxpy (CLARABEL) on {n_check} sampled row-ends: {int(agree[ok].sum())}/{int(ok.sum())} agree to 1e-6 "
        f"(max |cvxpy - ours| {np.max(np.abs(cv[ok] - att[ok])) if ok.any() else np.nan:.1e}; CLARABEL inaccurate "
        f"on {int((~ok).sum())}); {t_cv / n_check:.4f} s per row-end vs ours {ours_per:.5f} "
        f"(ratio {t_cv / n_check / ours_per:.0f}x)"
    )
    return rs, pr, mu, t_pr, c_pr, t_mu, c_mu


def against_rashomon_py(name, X, y, k):
    """rashomon-py's exact functional_range (first k rows) and can_flip (all rows), ours on the set containing
    theirs, same standardised data and ε."""
    from bench_mcr_classification_peers import unpenalised_min

    py = peer_python()
    if py is None:
        print("  rashomon-py: not available (see above); no peer timing")
        return
    Xa, ya = X.to_numpy(float), np.asarray(y, dtype=float)
    sd = Xa.std(0)
    Z = (Xa - Xa.mean(0)) / np.where(sd > 0, sd, 1.0)
    peer = run_in_venv(py, PEER_SCRIPT, Z=Z, y=ya, rho=0.1, k=k)
    if peer is None:
        return
    A = np.hstack([np.ones((len(Z), 1)), Z])
    lam, L_hat, eps = peer["lam"], peer["L_hat"], peer["eps"]
    with np.errstate(all="ignore"):  # separable data (breast cancer): e* = 0, Newton diverges
        e_star, gnorm = unpenalised_min(A, ya)
    e_star = e_star if np.isfinite(e_star) and gnorm < 1e-8 else 0.0  # 0 <= e* always: a valid, larger ball
    r = 2.0 * (L_hat + eps - e_star) / lam * (1 + 1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # their one-hot columns are collinear-ish (COMPAS): not our warnings
        rs = RashomonSet(LogisticModelClass(norm_bound=r, standardize=False), L_hat + eps, epsilon_kind="absolute").fit(
            Z, ya
        )
    pr, t_pr, c_pr = timed(lambda: rs.prediction_range(Z[:k], scale="score"))
    mu, t_mu, c_mu = timed(lambda: rs.multiplicity(Z, scale="score"))
    theirs = np.array(peer["ranges"])
    contains = np.mean((pr.lower <= theirs[:, 0] + 1e-6) & (theirs[:, 1] <= pr.upper + 1e-6))
    flips_t = np.array(peer["flips"])
    print(
        f"  rashomon-py {peer['version']} ({name}, standardised, ε = 0.1·L̂ = {eps:.4g}, λ = {lam:.3g}); ours: "
        f"ball ||β||² <= {r:.4g} cut by loss <= {L_hat + eps:.6f} (contains theirs)"
    )
    print(
        f"    exact score ranges, {k} rows x 2 ends: theirs wall {peer['t_range']:.2f} s CPU {peer['c_range']:.2f} s;"
        f" ours wall {t_pr:.2f} s CPU {c_pr:.2f} s; ratio (theirs/ours) wall {peer['t_range'] / t_pr:.1f}x, "
        f"CPU {peer['c_range'] / c_pr:.1f}x; ours contain theirs on {contains:.0%} of rows"
    )
    print(
        f"    exact flips at score 0, all {len(Z)} rows: theirs (can_flip) wall {peer['t_flip']:.2f} s CPU "
        f"{peer['c_flip']:.2f} s, {flips_t.mean():.4f} flippable; ours (multiplicity: ranges + discrepancy) wall "
        f"{t_mu:.2f} s CPU {c_mu:.2f} s, {mu.ambiguity:.4f} flippable (a larger set); ratio wall "
        f"{peer['t_flip'] / t_mu:.2f}x, CPU {peer['c_flip'] / c_mu:.2f}x; every row they flip, ours flips: "
        f"{bool(np.all(mu.flips[flips_t]))}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="breast cancer only, 20 cvxpy row-ends")
    ap.add_argument("--no-peer", action="store_true", help="skip rashomon-py")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    n_check = 20 if args.quick else 50
    Xb, yb = breast_cancer()
    run_set("breast cancer", Xb, yb, LogisticModelClass, (3, 3), n_check, rng)
    if not args.no_peer:
        against_rashomon_py("breast cancer", Xb, yb, len(Xb))
    run_set("breast cancer", Xb, yb, HingeModelClass, (10, 10), n_check, rng)
    print("  rashomon-py 0.3.1 has no hinge-loss set ('estimator must be 'logistic' or 'linear''): no peer here")
    if not args.quick:
        Xc, yc = compas()
        run_set("COMPAS two-year recidivism", Xc, yc, LogisticModelClass, (None, 10), n_check, rng)
        if not args.no_peer:
            against_rashomon_py("COMPAS", Xc, yc, 500)
    return 0


if __name__ == "__main__":
    sys.exit(main())
