"""The audit of a binary outcome with a classifier class (logistic or hinge): the computing part of :func:`audit`.

1. Reference: the class's own loss minimiser on the training rows (``RashomonSet(class).fit(train)``: the norm
   bound chosen by the class's default, a cross-validated L2 fit of the same loss, and θ_min over that ball).
2. Its cross-validated loss: ``cv`` stratified folds of the training rows, each refitted by the class over the
   same ball (same standardisation and norm bound), scored on the fold's rows in the class's loss.
3. The set on the held-out rows: the same parametrisation, ε_abs = held-out loss of the reference +
   ``epsilon`` × the CV loss (the paper's rule, in log loss or hinge loss).
4. Per group: MR of the reference, MCR (lower end certified and attained; upper end a certified outer bound
   with an attained inner value), the refit without the group.
5. The reference's held-out log loss, accuracy and AUC (scikit-learn), the ambiguity at a probability
   threshold on a seeded sample of held-out rows, coefficient sign stability, and bootstrap intervals: of the
   reference's MR always (cheap: :mod:`._estimator`), of MCR only on request (each resample refits the set and
   reruns every MCR search; its measured cost is reported).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from ..sets import RashomonSet
from ..utils.validation import RashomonInputError
from ._estimator import FixedModel

__all__ = [
    "drop_constant_columns",
    "fit_classifier_reference",
    "hash_rule_text",
    "classifier_extras",
    "reference_model",
    "bootstrap_classifier_mcr",
]


def _class(model_class: str):
    from ..model_classes import HingeModelClass, LogisticModelClass

    return LogisticModelClass() if model_class == "logistic" else HingeModelClass()


def drop_constant_columns(X: np.ndarray, features: list, groups: dict, tr: np.ndarray, func: str):
    """Encoded columns constant on the training rows (a level absent from them) are dropped: the classifier
    class standardises its inputs on those rows. Returns ``(X, features, groups, dropped)``; a group left
    empty is an error naming it."""
    sd = X[tr].std(axis=0)
    dropped = [c for c, s in zip(features, sd) if not s > 0]
    if not dropped:
        return X, features, groups, []
    keep = [j for j, s in enumerate(sd) if s > 0]
    new_groups = {name: [c for c in cols if c not in dropped] for name, cols in groups.items()}
    empty = [name for name, cols in new_groups.items() if not cols]
    if empty:
        raise RashomonInputError(
            f"The 'groups' parameter of {func} must name columns that vary on the training rows. "
            f"Got group {empty[0]!r}, all of whose columns {groups[empty[0]]} are constant there, "
            "instead."
        )
    return X[:, keep], [features[j] for j in keep], new_groups, dropped


def _scores_loss(member, X: np.ndarray, y01: np.ndarray, columns: list) -> float:
    ml = member.parametrization_.info["margin_loss"]
    s = np.asarray(member.decision_function(pd.DataFrame(X, columns=columns)), dtype=float)
    return float(np.mean(ml.exact((2.0 * y01 - 1.0) * s)))


def hash_rule_text(lambdas, n_folds: int) -> str:
    """The hash fold rule and its penalty grid, in words (the report's and ``meta["cv_rule"]``)."""
    lam = np.asarray(lambdas, dtype=float)
    return (
        f"hash fold rule: norm bound from L2 logistic regression (mean log loss + λ/2·||β||² on the standardised "
        f"columns), penalty λ among {len(lam)} log-spaced values from {lam.max():g} to {lam.min():g} by "
        f"{n_folds}-fold cross-validated log loss, folds from a seeded row hash (fold = floor(v·cv), v a 64-bit "
        "hash of the row's encoded values), every fold and penalty fitted exactly by Newton steps; the bound is "
        "the squared norm of the fit on all training rows; the CV log loss at the chosen penalty is the CV loss "
        "of the ε rule"
    )


def stratified_rule_text(model_class: str, n_folds: int) -> str:
    """The stratified fold rule and the class's penalty grid, in words."""
    grid = (
        "penalty C among 10 log-spaced values from 1e-04 to 1e+04 by 5-fold stratified cross-validated accuracy "
        "(scikit-learn's LogisticRegressionCV)"
        if model_class == "logistic"
        else "penalty C among 11 log-spaced values from 0.001 to 100 by 5-fold cross-validated accuracy of exact "
        "hinge SVM fits"
    )
    return (
        f"stratified fold rule: norm bound from the squared norm of an L2 {model_class} fit, {grid}; the CV loss "
        f"from {n_folds} shuffled stratified folds of the training rows, each refitted by the class over the same "
        "ball"
    )


def _hash_reference(Xtr, ytr, columns: list, fold_u, n_folds: int):
    """The reference, class, CV loss and info of the hash fold rule (the out-of-core audit's, in memory)."""
    from ..model_classes import LogisticModelClass
    from ..sets.scale import folds_from_hash, memory_reducer, penalised_logistic_cv

    res = penalised_logistic_cv(
        memory_reducer(Xtr, ytr, folds_from_hash(fold_u, n_folds)), Xtr.mean(axis=0), Xtr.std(axis=0), n_folds
    )
    mc = LogisticModelClass(norm_bound=max(res["norm"], 1e-12))
    rs_tr = RashomonSet(mc, 0.0, epsilon_kind="additive").fit(pd.DataFrame(Xtr, columns=columns), ytr)
    info = {
        "kind": "logistic regression (the class's loss minimiser)",
        "norm": float(rs_tr.parametrization_.r),
        "training_loss": float(rs_tr.e_min_),
        "cv_folds": int(n_folds),
        "cv_rule": hash_rule_text(res["lambdas"], n_folds),
        "cv_lambda": res["lambda"],
        "cv_passes": res["passes"],
    }
    return rs_tr.reference_, mc, res["cv_loss"], info


def fit_classifier_reference(Xtr, ytr, columns: list, model_class: str, cv: int, seed: int, fold_u=None):
    """``(reference member, class, cv_loss, info)``: the class's minimiser on the training rows and its
    ``cv``-fold loss (folds refitted over the same ball; ``cv=0``: no CV, nan). With ``fold_u`` (the training
    rows' fold hash, logistic class): the hash fold rule (``audit(cv_rule="hash")``), ``cv`` folds."""
    from sklearn.model_selection import StratifiedKFold

    if fold_u is not None:
        return _hash_reference(Xtr, ytr, columns, fold_u, cv)

    mc = _class(model_class)
    frame = pd.DataFrame(Xtr, columns=columns)
    rs_tr = RashomonSet(mc, 0.0, epsilon_kind="additive").fit(frame, ytr)
    ref = rs_tr.reference_
    par = rs_tr.parametrization_
    losses = []
    for a, b in StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed).split(Xtr, ytr) if cv else ():
        fold = RashomonSet(mc, 0.0, epsilon_kind="additive", reference=ref).fit(frame.iloc[a], ytr[a])
        losses.append(_scores_loss(par.estimator(fold.theta_min_), Xtr[b], ytr[b], columns))
    info = {
        "kind": f"{model_class} regression (the class's loss minimiser)"
        if model_class == "logistic"
        else "linear SVM (hinge; the class's loss minimiser)",
        "norm": float(par.r),
        "training_loss": float(rs_tr.e_min_),
        "cv_folds": int(cv),
        "cv_rule": stratified_rule_text(model_class, cv),
    }
    return ref, mc, float(np.mean(losses)) if losses else float("nan"), info


def reference_model(ref, X: np.ndarray, y01: np.ndarray, columns: list) -> FixedModel:
    """The reference as a fixed model on the encoded held-out design (its own loss on its scores)."""
    ml = ref.parametrization_.info["margin_loss"]
    name = "log_loss" if ml.name == "logistic" else "hinge"

    def predict(f: pd.DataFrame) -> np.ndarray:
        return np.asarray(ref.decision_function(f[columns]), dtype=float)

    def loss_from(yy: np.ndarray, s: np.ndarray) -> np.ndarray:
        return ml.exact((2.0 * yy - 1.0) * s)

    return FixedModel(predict, loss_from, pd.DataFrame(X, columns=columns), y01, name, "reference")


def reference_metrics(ref, X: np.ndarray, y01: np.ndarray, columns: list) -> dict:
    """Held-out log loss (logistic only), accuracy and AUC of the reference (scikit-learn metrics)."""
    from scipy.special import expit
    from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

    s = np.asarray(ref.decision_function(pd.DataFrame(X, columns=columns)), dtype=float)
    logistic = ref.parametrization_.info["margin_loss"].name == "logistic"
    out = {
        "accuracy": float(accuracy_score(y01, s > 0)),
        "auc": float(roc_auc_score(y01, s)),
        "log_loss": float(log_loss(y01, expit(s), labels=[0, 1])) if logistic else None,
        "hinge_loss": None if logistic else float(np.mean(np.maximum(0.0, 1.0 - (2 * y01 - 1) * s))),
        "positive_rate": float(np.mean(y01)),
        "n": int(len(y01)),
    }
    return out


def classifier_extras(
    rs: RashomonSet,
    Xte: np.ndarray,
    columns: list,
    model_class: str,
    threshold: float,
    n_rows: int | None,
    seed: int,
    pg,
    sample_u=None,
) -> dict:
    """Ambiguity at ``threshold`` (probability for logistic, score 0 for hinge) on a seeded sample of ``n_rows``
    held-out rows (None: all; with ``sample_u``, the held-out rows' sample hash: the rows of smallest hash), and
    the coefficient ranges with their sign stability."""
    out: dict = {}
    n = Xte.shape[0]
    rows = np.arange(n)
    if sample_u is not None:
        rows = np.argsort(sample_u, kind="stable")[: n if n_rows is None else n_rows]
    elif n_rows is not None and n_rows < n:
        rows = np.sort(np.random.RandomState(seed).choice(n, n_rows, replace=False))
    t0 = time.perf_counter()
    with pg.phase(f"ambiguity on {len(rows)} held-out rows") as tick:
        if model_class == "logistic":
            mult = rs.multiplicity(pd.DataFrame(Xte[rows], columns=columns), threshold=threshold, scale="probability")
            scale = "probability"
        else:
            mult = rs.multiplicity(pd.DataFrame(Xte[rows], columns=columns), threshold=0.0, scale="score")
            scale, threshold = "score", 0.0
        tick(1)
    summ = mult.summary()
    out["ambiguity"] = {
        "threshold": float(threshold),
        "scale": scale,
        "n_rows": int(len(rows)),
        "n_held_out": int(n),
        "ambiguity": float(summ["ambiguity"]),
        "n_flippable": int(summ["n_flippable"]),
        "discrepancy_lower": float(summ["discrepancy_lower"]),
        "discrepancy_upper": float(summ["discrepancy_upper"]),
        "seconds": time.perf_counter() - t0,
    }
    t0 = time.perf_counter()
    with pg.phase("coefficient ranges") as tick:
        cr = rs.coef_range()
        tick(1)
    df = cr.to_frame()
    out["coefficients"] = [
        {
            "coefficient": str(r["coefficient"]),
            "lower": float(r["lower"]),
            "upper": float(r["upper"]),
            "sign_stable": bool(r["sign_stable"]),
        }
        for _, r in df.iterrows()
    ]
    out["coefficients_seconds"] = time.perf_counter() - t0
    return out


def bootstrap_classifier_mcr(
    mc, ref, epsilon_margin: float, Xte, yte, columns: list, gidx: dict, weights: np.ndarray, tol: float, tick
) -> tuple[dict, list]:
    """MCR on each resample (rows of ``weights``: counts): the set refitted on the resampled rows with the same
    reference, class and ε margin, every group's search rerun. Returns ``({group: {"lower": [...], "upper":
    [...]}}, seconds per resample)``."""
    draws: dict[str, dict[str, list[float]]] = {name: {"mcr_lower": [], "mcr_upper": []} for name in gidx}
    secs = []
    for w in weights:
        t0 = time.perf_counter()
        idx = np.repeat(np.arange(len(w)), w.astype(int))
        rs_b = RashomonSet(mc, epsilon_margin, epsilon_kind="additive", reference=ref).fit(
            pd.DataFrame(Xte[idx], columns=columns), yte[idx]
        )
        for name, g in gidx.items():
            m = rs_b.model_class_reliance(list(g), tol=tol)
            draws[name]["mcr_lower"].append(m.lower)
            draws[name]["mcr_upper"].append(m.upper)
        secs.append(time.perf_counter() - t0)
        tick(1)
    return draws, secs


def resample_weights(rng: np.random.RandomState, n: int, B: int) -> np.ndarray:
    """B bootstrap count vectors over n rows (seeds drawn from ``rng``)."""
    seeds = rng.randint(2**31 - 1, size=B)
    return (
        np.vstack([np.bincount(np.random.RandomState(s).randint(0, n, n), minlength=n) for s in seeds])
        if B
        else np.zeros((0, n))
    )


def check_classifier_options(threshold: Any, n_rows: Any, func: str) -> tuple[float, int | None]:
    from ..utils.validation import check_float, check_positive_int

    t = check_float(threshold, "ambiguity_threshold", func, low=0.0, high=1.0, strict=True)
    rows = None if n_rows is None else check_positive_int(n_rows, "ambiguity_rows", func, minimum=1)
    return t, rows
