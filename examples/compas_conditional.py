"""
Race in COMPAS: marginal vs conditional reliance (given the admissible variables).
==================================================================================

Marginal reliance scrambles race against everything; conditional reliance swaps
race only between defendants with similar criminal history, charge degree and
age (strata: leaves of a shallow tree on the admissible variables predicting
race). Both for the kernel-ridge reference and as MCR over its Rashomon set.

Run it::

    python examples/compas_conditional.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, KFold

# the examples folder (sphinx-gallery runs the script there, without __file__)
sys.path.insert(0, str(Path(globals().get("__file__", "compas_audit.py")).resolve().parent))
import rashomon  # noqa: E402
from compas_audit import compas_frame  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--subsample", type=int, default=None)
    ap.add_argument("--train-size", type=int, default=500)
    args = ap.parse_args(argv)
    df = compas_frame()
    if args.subsample:
        df = df.sample(n=args.subsample, random_state=args.seed).reset_index(drop=True)
    feats = ["race", "sex", "priors_count", "felony", "age"]
    rng = np.random.RandomState(args.seed)
    perm = rng.permutation(len(df))
    tr, te = perm[: args.train_size], perm[args.train_size :]
    X = df[feats].to_numpy(float, copy=True)
    for j in (2, 4):  # standardise priors_count and age on the training part
        X[:, j] = (X[:, j] - X[tr, j].mean()) / X[tr, j].std()
    y = df["v_decile_score"].to_numpy(float)
    ybar = y[tr].mean()
    grid = {"gamma": [0.2 * f for f in (0.03, 0.1, 0.3, 1.0, 3.0)], "alpha": list(np.logspace(-3, 2, 11))}
    kr = (
        GridSearchCV(
            KernelRidge(kernel="rbf"),
            grid,
            cv=KFold(10, shuffle=True, random_state=args.seed),
            scoring="neg_mean_squared_error",
        )
        .fit(X[tr], y[tr] - ybar)
        .best_estimator_
    )
    predict = lambda Z: kr.predict(Z) + ybar  # noqa: E731
    norm = float(kr.dual_coef_ @ kr._get_kernel(X[tr]) @ kr.dual_coef_)
    mc = rashomon.KernelModelClass(
        gamma=float(kr.gamma), dictionary=np.unique(X[tr], axis=0), norm_bound=norm, intercept=ybar
    )
    Xte, yte = X[te], y[te]
    # strata of the admissible variables (priors_count, felony, age), by a shallow tree predicting race
    strata = rashomon.make_strata(Xte[:, [0, 2, 3, 4]], (0,))
    e_ref = float(np.mean((yte - predict(Xte)) ** 2))
    eps = e_ref * 1.1
    marg = rashomon.model_reliance(predict, Xte, yte, 0)
    cond = rashomon.conditional_model_reliance(predict, Xte, yte, 0, strata=strata)
    mcr_m = rashomon.model_class_reliance(mc, Xte, yte, 0, epsilon=eps, epsilon_kind="absolute")
    mcr_c = rashomon.model_class_reliance(
        mc, Xte, yte, 0, epsilon=eps, epsilon_kind="absolute", conditional=True, strata=strata
    )
    print(
        f"{len(te)} held-out defendants, {len(np.unique(strata))} strata of the admissible variables; eps_abs = {eps:.4f}"
    )
    print(f"{'':28s}{'reference MR':>14s}{'MCR-':>10s}{'MCR+':>10s}")
    print(f"{'race, marginal':28s}{marg.ratio:14.4f}{mcr_m.lower:10.4f}{mcr_m.upper:10.4f}")
    print(f"{'race | admissible variables':28s}{cond.ratio:14.4f}{mcr_c.lower:10.4f}{mcr_c.upper:10.4f}")
    return 0


if __name__ == "__main__":
    status = main()
    if status:  # a script's exit status; none when it succeeds (sphinx-gallery runs it in-process)
        raise SystemExit(status)
