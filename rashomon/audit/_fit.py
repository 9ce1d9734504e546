"""The audit's fits: standardisation and the reference (hyper-parameters by CV, fitted by the class)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model_classes import KernelModelClass, LinearModelClass
from ..utils.validation import RashomonInputError

__all__: list = []

MCR_TOL = 2.0**-20  # MCR search tolerance, as model_class_reliance's default
RIDGE_ALPHAS = np.logspace(-3, 3, 25)  # the linear reference's penalties (k-fold CV in memory, leave-one-out on Dask)


#: the kernel reference's grids: bandwidths (1/p) × these factors, and penalties (KernelRidge's alpha)
KERNEL_GAMMA_FACTORS = (0.03, 0.1, 0.3, 1.0, 3.0)
KERNEL_ALPHAS = np.logspace(-3, 2, 11)


def class_set(mc, reference, epsilon: float, epsilon_kind: str, cv_loss: float, Xte, yte, features: list):
    """One set for all groups: the class parametrised once (on the training rows, through the reference),
    e_orig built and e_min solved once on the held-out rows; ε = ``epsilon`` × the CV loss above the
    reference's held-out loss (``epsilon_kind="cv"``, the paper's rule) or ``epsilon`` itself (absolute)."""
    from ..sets import RashomonSet

    cv = epsilon_kind == "cv"
    return RashomonSet(
        mc,
        epsilon * cv_loss if cv else float(epsilon),
        epsilon_kind="additive" if cv else "absolute",
        reference=reference,
    ).fit(pd.DataFrame(Xte, columns=features), yte)


def group_mcrs(rs, features: list, groups: dict, pg, refit) -> tuple[dict, dict]:
    """MCR of every group on the set, with ``refit(kept column indices)``: the held-out loss ratio of the
    reference refitted without the group. Returns ``({group: column indices}, {group: figures})``."""
    gidx = {name: tuple(sorted(features.index(c) for c in cols)) for name, cols in groups.items()}
    results = {}
    for name, g in gidx.items():
        with pg.phase(f"MCR search: {name}", total=2) as tick:
            mcr = rs.model_class_reliance(list(g), tol=MCR_TOL)
            tick(1)
            ratio = refit([j for j in range(len(features)) if j not in g])
            tick(1)
        # the reference lies in the class, so its exact all-pairs MR is the forms at its θ (the same U-statistic
        # as model_reliance, without n² predictions)
        mr = float(mcr.reference_model.mr) if mcr.reference_model is not None else float("nan")
        results[name] = dict(mcr=mcr, mr=mr, refit=ratio)
    return gidx, results


def _preprocess(df: pd.DataFrame, features: list[str], train_idx: np.ndarray):
    X = df[features].to_numpy(dtype=float, copy=True)
    scaled = []
    for j, c in enumerate(features):
        vals = np.unique(X[:, j])
        if not (len(vals) <= 2 and set(vals.tolist()) <= {0.0, 1.0}):
            mu, sd = X[train_idx, j].mean(), X[train_idx, j].std()
            if sd == 0:
                raise RashomonInputError(
                    f"The 'features' parameter of audit names a column ({c!r}) that is constant on the training part."
                )
            X[:, j] = (X[:, j] - mu) / sd
            scaled.append(c)
    return X, scaled


def _fit_reference(Xtr, ytr, model_class, cv, seed, n_jobs=None):
    """Hyper-parameters by ``cv``-fold cross-validation, then the reference fitted *by the class*.

    The kernel reference is the class's own penalised fit (kernel ridge with the chosen
    bandwidth and penalty, dictionary = the unique training rows, μ = training mean): a member
    of the class by construction, whose RKHS norm is the class's norm bound. Returns
    ``(reference, model_class, cv_loss, info)``.
    """
    from sklearn.model_selection import KFold

    folds = KFold(n_splits=cv, shuffle=True, random_state=seed)
    if model_class == "kernel":
        base = 1.0 / Xtr.shape[1]
        gammas = [base * f for f in KERNEL_GAMMA_FACTORS]
        alphas = list(KERNEL_ALPHAS)
        ybar = float(ytr.mean())
        mse = kernel_ridge_grid_cv(Xtr, ytr - ybar, gammas, alphas, folds)
        i, j = np.unravel_index(int(np.argmin(mse)), mse.shape)
        gamma, alpha, cv_loss = float(gammas[j]), float(alphas[i]), float(mse[i, j])
        mc = KernelModelClass(kernel="rbf", gamma=gamma, alpha=alpha, intercept=ybar)
        ref = mc.fit_reference(Xtr, ytr)
        info = {
            "kind": "kernel ridge (rbf)",
            "gamma": gamma,
            "alpha": alpha,
            "rkhs_norm": ref.parametrization_.r,
            "intercept": ybar,
            "dictionary_size": int(ref.parametrization_.info["dictionary_size"]),
        }
    else:
        from sklearn.linear_model import Ridge
        from sklearn.model_selection import GridSearchCV

        gs = GridSearchCV(
            Ridge(), {"alpha": list(RIDGE_ALPHAS)}, cv=folds, scoring="neg_mean_squared_error", n_jobs=n_jobs
        ).fit(Xtr, ytr)
        ref = gs.best_estimator_
        norm = float(ref.coef_ @ ref.coef_)
        info = {"kind": "ridge", "alpha": float(ref.alpha), "norm": norm}
        mc = LinearModelClass(norm_bound=max(norm, 1e-12), standardize=False, penalty_matrix=np.eye(Xtr.shape[1]))
        # The reference fitted by the class (least squares over the ball ||β||² <= the ridge norm: the ridge
        # fit itself, up to solver tolerance), so it is a member by construction even when one-hot dummies
        # make the columns collinear (the ridge estimator's own θ is then not the projection's θ).
        ref = mc.fit_reference(Xtr, ytr)
        cv_loss = float(-gs.best_score_)
    return ref, mc, cv_loss, info


def kernel_ridge_grid_cv(X, y, gammas, alphas, folds) -> np.ndarray:
    """Mean held-out MSE over ``folds`` of RBF kernel ridge for every (alpha, gamma), shape (len(alphas), len(gammas)).

    The numbers of ``GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": gammas, "alpha": alphas}, cv=folds,
    scoring="neg_mean_squared_error")`` (unweighted mean over folds; alpha-major, the order in which
    scikit-learn's ParameterGrid lists them, so ``argmin`` breaks ties as its ``best_index_`` does), from one
    eigendecomposition per gamma on all the rows. Kernel ridge is ridge regression in the kernel's feature
    space, so the fit without a fold's rows F has the leave-group-out residuals ``(I - H_FF)⁻¹(y_F - ŷ_F)``
    exactly, with ``H = K(K + αI)⁻¹ = V diag(λ/(λ + α)) V'`` the hat matrix of the fit on all rows: for
    every alpha, one product of the fold's rows of V and one solve of the fold's size per fold, instead of
    one eigendecomposition of the training part per (gamma, fold). tests/test_audit.py checks the equality
    against scikit-learn and against the fit on each fold's training part.
    """
    from scipy.linalg import solve
    from scipy.spatial.distance import cdist

    D2 = cdist(X, X, "sqeuclidean")
    splits = [te for _, te in folds.split(X)]
    mse = np.zeros((len(alphas), len(gammas)))
    for j, g in enumerate(gammas):
        K = np.exp(-g * D2)
        lam, V = np.linalg.eigh(0.5 * (K + K.T))
        Vy = V.T @ y
        for i, a in enumerate(alphas):
            s = lam / (lam + a)
            res = y - V @ (s * Vy)
            for te in splits:
                Vf = V[te]
                M = np.eye(len(te)) - (Vf * s) @ Vf.T
                e = solve(0.5 * (M + M.T), res[te], assume_a="pos")
                mse[i, j] += float(np.mean(e * e))
    return mse / len(splits)
