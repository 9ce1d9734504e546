"""Classifier MCR against rashomon-py's sampled logistic MCR.

What rashomon-py 0.3.1 computes (read from its source, ``rashomon/rashomon_set.py`` and
``rashomon/_sklearn.py``):

* its logistic set is ``{θ = (b, β) : L(θ) <= L̂ + ε}`` with the *penalised* mean-loss objective
  ``L(θ) = mean_i [log(1 + e^{s_i}) - y_i s_i] + (λ/2)·||β||²``, ``s_i = b + x_i'β``, y in {0, 1}, the
  intercept unpenalised (``penalize_intercept=False``), and ``L̂ = min L``;
* ``RashomonSet.from_sklearn(LogisticRegression())`` converts scikit-learn's ``C`` to ``λ = 1/(C·n)``
  (scikit-learn's default C = 1 gives λ = 1/n) and keeps its intercept;
* ``ε`` is relative by default (``epsilon_mode="percent_loss"``: ε_abs = ρ·L̂, ρ = 0.02 by default);
* ``model_class_reliance`` draws ``n_samples=100`` models (``sampler="ellipsoid"`` by default: uniform
  in the quadratic approximation ``(θ - θ̂)'H(θ - θ̂) <= 2ε`` of the set, so a draw may lie outside
  the set; ``"hitandrun"`` stays inside) and estimates each one's reliance with ``n_permutations=16``
  random permutations; ``mcr_min``/``mcr_max`` are the extremes over the draws (an inner interval).
  ``metric="loss_ratio"`` is Fisher, Rudin & Dominici's ratio with the log loss -- our MR; the
  default ``metric="score"`` is an accuracy drop, which is not MR, so ``loss_ratio`` is used.

The same set in ours. Both packages get the same standardised data Z (population sd). Their set is
inside ``{mean log loss <= L̂ + ε} ∩ {||β||² <= r}`` with ``r = 2(L̂ + ε - e*)/λ`` and ``e*`` the
unpenalised least mean log loss (a member has ``mean loss + (λ/2)||β||² <= L̂ + ε`` and
``mean loss >= e*``). That is ``RashomonSet(LogisticModelClass(norm_bound=r, standardize=False),
L̂ + ε, epsilon_kind="absolute")`` on Z (``standardize=False``: the ball is ``||β||² <= r`` on Z's
scale; the intercept is free). Ours is therefore a superset of theirs, not equal to it (their set
couples the loss with the norm; our class is a norm ball cut by the loss): every member of theirs
is a member of ours, so our certified interval must contain the MR of each of their members.

Printed per feature: their interval (permutation estimates), the exact MR range of their draws
(our all-pairs U-statistic, ``rashomon.model_reliance``), ours [certified lower, certified upper],
the MR of the members of our set attaining each end and whether each is in *their* set too,
whether ours contains theirs, and per data set the membership of their draws in both sets and the
time ratio (wall and CPU; the machine is shared, CPU time is the steadier figure). rashomon-py shares the import name ``rashomon``; it runs in its own virtual environment
(``benchmarks/.envs/rashomon-py``, see ``bench_multiplicity.py``), never as a dependency.

    python benchmarks/bench_mcr_classification_peers.py [--epsilon 0.02] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import run_in_venv  # noqa: E402
from bench_mcr_classification import datasets  # noqa: E402
from bench_multiplicity import peer_python  # noqa: E402
from rashomon import LogisticModelClass, RashomonSet, model_reliance  # noqa: E402

PEER_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.linear_model import LogisticRegression
from rashomon import RashomonSet
d = np.load(sys.argv[1]); Z, y, rho = d["Z"], d["y"], float(d["rho"])
warnings.simplefilter("ignore")  # their collinearity notices (COMPAS one-hot columns)
out = {"version": __import__("importlib.metadata").metadata.version("rashomon-py")}
t, c = time.perf_counter(), time.process_time()
m = LogisticRegression(max_iter=10000, tol=1e-10).fit(Z, y)   # scikit-learn's defaults: C = 1, intercept
rs = RashomonSet.from_sklearn(m, Z, y, epsilon=rho, random_state=0)   # epsilon_mode="percent_loss"
out["t_fit"], out["c_fit"] = time.perf_counter() - t, time.process_time() - c
out.update(lam=float(rs._lambda), L_hat=float(rs._L_hat), eps=float(rs._epsilon_value),
           theta_hat=rs._theta_hat.tolist())
for sampler in ("ellipsoid", "hitandrun"):
    t, c = time.perf_counter(), time.process_time()
    res = rs.model_class_reliance(Z, y, metric="loss_ratio", sampler=sampler, random_state=0)
    dt, dc = time.perf_counter() - t, time.process_time() - c
    if sampler == "ellipsoid":
        TH = rs.sample_ellipsoid(n_samples=100, random_state=0)
    else:
        TH = rs.sample_hitandrun(n_samples=100, burnin=100, thin=2, random_state=0, compute_diagnostics=False)
    out[sampler] = {"t_mcr": dt, "c_mcr": dc, "mcr_min": res["mcr_min"].tolist(), "mcr_max": res["mcr_max"].tolist(),
                    "imp": res["importance_matrix"].tolist(), "theta": TH.tolist(),
                    "contains": rs.contains_many(TH).tolist()}
json.dump(out, open(sys.argv[2], "w"))
"""


def run_peer(Z, y, rho):
    py = peer_python()
    if py is None:
        return None
    return run_in_venv(py, PEER_SCRIPT, Z=Z, y=y, rho=rho)


def mean_log_loss(theta, A, y):
    s = A @ theta.T
    return np.mean(np.logaddexp(0.0, s) - y[:, None] * s, axis=0)


def unpenalised_min(A, y):
    """e*: the least mean log loss over all (b, β) (Newton's method to a gradient norm of 1e-13)."""
    th = np.zeros(A.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(A @ th)))
        g = A.T @ (p - y) / len(y)
        if np.linalg.norm(g) < 1e-13:
            break
        H = (A * (p * (1 - p))[:, None]).T @ A / len(y)
        th -= np.linalg.solve(H, g)
    return float(mean_log_loss(th[None, :], A, y)[0]), float(np.linalg.norm(g))


def exact_mr(theta, Z, y, j):
    """Our exact (all-pairs U-statistic) MR of the linear score θ = (b, β) under the log loss."""

    def logloss(yy, s):
        return np.logaddexp(0.0, s) - yy * s

    return model_reliance(lambda X: theta[0] + X @ theta[1:], Z, y, j, loss=logloss).ratio


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilon", type=float, default=0.02, help="rashomon-py's relative ε (ρ; its default 0.02)")
    ap.add_argument("--quick", action="store_true", help="first 3 features of each data set")
    args = ap.parse_args(argv)
    print(
        f"rashomon-py's logistic set, ε = {args.epsilon} x L̂ (its default percent_loss), λ from "
        "LogisticRegression() (C = 1: λ = 1/n); ours contains it (module notes). MR = log-loss ratio."
    )
    for name, X, y in list(datasets())[:3]:
        cols = list(X.columns)
        Xa, ya = X.to_numpy(float), np.asarray(y, dtype=float)
        Z = (Xa - Xa.mean(0)) / Xa.std(0)
        peer = run_peer(Z, ya, args.epsilon)
        if peer is None:
            return 1
        A = np.hstack([np.ones((len(Z), 1)), Z])
        lam, L_hat, eps = peer["lam"], peer["L_hat"], peer["eps"]
        e_star, gnorm = unpenalised_min(A, ya)
        r = 2.0 * (L_hat + eps - e_star) / lam * (1 + 1e-9)
        t, c = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rs = RashomonSet(
                LogisticModelClass(norm_bound=r, standardize=False), L_hat + eps, epsilon_kind="absolute"
            ).fit(Z, ya)
        t_fit, c_fit = time.perf_counter() - t, time.process_time() - c
        print(
            f"\n{name} ({Z.shape[0]} x {Z.shape[1]}), rashomon-py {peer['version']}: λ = {lam:.3g}, "
            f"L̂ = {L_hat:.6f}, ε_abs = {eps:.3g}; e* = {e_star:.6f} (gradient {gnorm:.1e}); our ball "
            f"||β||² <= r = {r:.4g}, loss <= {L_hat + eps:.6f} (our e_min {rs.e_min_:.6f})"
        )
        # membership of their draws
        for sampler in ("ellipsoid", "hitandrun"):
            th = np.asarray(peer[sampler]["theta"])
            loss = mean_log_loss(th, A, ya)
            norm2 = np.sum(th[:, 1:] ** 2, axis=1)
            ours = (loss <= rs.epsilon_abs_ * (1 + 1e-12)) & (norm2 <= r)
            theirs = np.asarray(peer[sampler]["contains"])
            print(
                f"  their {sampler} draws: {int(theirs.sum())}/{len(th)} in their set, {int(ours.sum())}/{len(th)}"
                f" in ours (loss <= threshold and inside the ball; max ||β||²/r = {norm2.max() / r:.3g}); "
                f"in ours but not theirs {int((ours & ~theirs).sum())}, in theirs but not ours "
                f"{int((theirs & ~ours).sum())}"
            )
        feats = cols[:3] if args.quick else cols
        t_ours = c_ours = 0.0
        rows = []

        def in_theirs(member):
            """Their membership test: mean log loss + (λ/2)||β||² <= L̂ + ε."""
            th = np.r_[member.estimator.intercept_, member.estimator.coef_]
            return float(mean_log_loss(th[None, :], A, ya)[0] + 0.5 * lam * th[1:] @ th[1:]) <= L_hat + eps  # noqa: B023  (called within this iteration)

        for f in feats:
            j = cols.index(f)
            t, c = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                res = rs.model_class_reliance(j)
            t_ours, c_ours = t_ours + time.perf_counter() - t, c_ours + time.process_time() - c
            row = {
                "feature": f,
                "ours": (res.lower, res.upper),
                "members": (
                    res.lower_model.mr,
                    in_theirs(res.lower_model),
                    res.upper_model.mr,
                    in_theirs(res.upper_model),
                ),
            }
            for sampler in ("ellipsoid", "hitandrun"):
                P = peer[sampler]
                lo, hi = P["mcr_min"][j + 1], P["mcr_max"][j + 1]  # column 0 is their intercept
                th = np.asarray(P["theta"])
                members = np.asarray(P["contains"], dtype=bool)
                ex = np.array([exact_mr(t_, Z, ya, j) for t_ in th[members]]) if members.any() else np.array([np.nan])
                row[sampler] = (lo, hi, float(ex.min()), float(ex.max()))
            rows.append(row)
        print(
            f"  {'feature':<22} {'ours [cert. lower, cert. upper]':>32} {'our attaining members':>28} | "
            f"{'theirs: ellipsoid (perm.)':>25} {'exact MR of members':>22} in | {'hit-and-run (perm.)':>22} "
            f"{'exact MR of members':>22} in"
        )
        for row in rows:
            lo, hi = row["ours"]
            cells = []
            for sampler in ("ellipsoid", "hitandrun"):
                a, b, ea, eb = row[sampler]
                ok_perm = lo <= a and b <= hi
                ok_exact = lo <= ea and eb <= hi if np.isfinite(ea) else True
                cells.append(
                    f"[{a:.4f}, {b:.4f}] [{ea:.4f}, {eb:.4f}] {'yes' if ok_perm else 'NO '}/"
                    f"{'yes' if ok_exact else 'NO '}"
                )
            ml, tl, mu, tu = row["members"]
            mem = f"{ml:.4f}{'*' if tl else ' '} {mu:.4f}{'*' if tu else ' '}"
            print(f"  {row['feature'][:22]:<22} [{lo:14.4f}, {hi:14.4f}] {mem:>28} | {cells[0]:>54} | {cells[1]:>54}")
        per_feature = len(cols) / len(feats)
        for sampler in ("ellipsoid", "hitandrun"):
            t_theirs = peer["t_fit"] + peer[sampler]["t_mcr"]
            c_theirs = peer["c_fit"] + peer[sampler]["c_mcr"]
            t_o, c_o = t_fit + t_ours * per_feature, c_fit + c_ours * per_feature
            print(
                f"  time, all {len(cols)} features{' (ours extrapolated)' if per_feature > 1 else ''}: theirs "
                f"({sampler}, 100 draws x 16 permutations) {t_theirs:.2f} s wall / {c_theirs:.2f} s CPU, ours "
                f"(certified both ends) {t_o:.2f} s wall / {c_o:.2f} s CPU -> ours/theirs {t_o / t_theirs:.2f} "
                f"wall, {c_o / c_theirs:.2f} CPU"
            )
    print(
        "\n'in' = ours contains theirs: their permutation-estimated interval / the exact MR range of their "
        "draws that lie in their set. Our attaining members: the MR of the members of our set found at each end "
        "(inner values); '*' = that member is in their set too (so their own set reaches that MR)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
