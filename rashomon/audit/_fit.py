"""The audit's fits: standardisation, the reference (hyper-parameters by CV, fitted by the class), bootstrap chunks."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..model_classes import KernelModelClass, LinearModelClass
from ..utils.validation import RashomonInputError

__all__: list = []


def _preprocess(df: pd.DataFrame, features: list[str], train_idx: np.ndarray):
    X = df[features].to_numpy(dtype=float, copy=True)
    scaled = []
    for j, c in enumerate(features):
        vals = np.unique(X[:, j])
        if not (len(vals) <= 2 and set(vals.tolist()) <= {0.0, 1.0}):
            mu, sd = X[train_idx, j].mean(), X[train_idx, j].std()
            if sd == 0:
                raise RashomonInputError(f"The 'features' parameter of audit names a column ({c!r}) that is constant on the training part.")
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
    from sklearn.model_selection import GridSearchCV, KFold

    folds = KFold(n_splits=cv, shuffle=True, random_state=seed)
    if model_class == "kernel":
        from sklearn.kernel_ridge import KernelRidge

        base = 1.0 / Xtr.shape[1]
        grid = {"gamma": [base * f for f in (0.03, 0.1, 0.3, 1.0, 3.0)], "alpha": list(np.logspace(-3, 2, 11))}
        gs = GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=folds, scoring="neg_mean_squared_error", n_jobs=n_jobs).fit(Xtr, ytr - ytr.mean())
        gamma, alpha = float(gs.best_params_["gamma"]), float(gs.best_params_["alpha"])
        ybar = float(ytr.mean())
        mc = KernelModelClass(kernel="rbf", gamma=gamma, alpha=alpha, intercept=ybar)
        ref = mc.fit_reference(Xtr, ytr)
        info = {"kind": "kernel ridge (rbf)", "gamma": gamma, "alpha": alpha,
                "rkhs_norm": ref.parametrization_.r, "intercept": ybar,
                "dictionary_size": int(ref.parametrization_.info["dictionary_size"])}
    else:
        from sklearn.linear_model import Ridge

        gs = GridSearchCV(Ridge(), {"alpha": list(np.logspace(-3, 3, 25))}, cv=folds, scoring="neg_mean_squared_error", n_jobs=n_jobs).fit(Xtr, ytr)
        ref = gs.best_estimator_
        norm = float(ref.coef_ @ ref.coef_)
        info = {"kind": "ridge", "alpha": float(ref.alpha), "norm": norm}
        mc = LinearModelClass(norm_bound=max(norm, 1e-12), standardize=False, penalty_matrix=np.eye(Xtr.shape[1]))
        # The reference fitted by the class (least squares over the ball ||β||² <= the ridge norm: the ridge
        # fit itself, up to solver tolerance), so it is a member by construction even when one-hot dummies
        # make the columns collinear (the ridge estimator's own θ is then not the projection's θ).
        ref = mc.fit_reference(Xtr, ytr)
    return ref, mc, float(-gs.best_score_), info


def _boot_chunk(rs, groups, seeds, kind, tol):
    """MR(f_ref), MCR− and MCR+ of every group on each resample (row weights on the held-out set)."""
    out = []
    n = rs.X_.shape[0]
    for s in seeds:
        w = np.random.RandomState(s).multinomial(n, np.full(n, 1.0 / n)).astype(float)
        rb = rs.reweighted(w)
        row = {}
        for name, group in groups.items():
            res = rb.model_class_reliance(list(group), kind=kind, tol=tol)
            row[name] = (res.reference_model.mr, res.lower, res.upper)
        out.append(row)
    return out
