"""Partial dependence (Friedman 2001), ICE (Goldstein et al. 2015), PD-based importance
(Greenwell et al. 2018) and the Rashomon PD band.

PD and ICE are computed by brute force: every row with the feature(s) set to
each grid value, predictions batched in blocks of bounded memory. This is what
scikit-learn's ``partial_dependence(method="brute")`` does (and the tests check
equality with it); here it also takes plain callables, crisp classifiers
(share of each predicted class), centred curves and the spread of ICE curves.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ._validation import RashomonInputError, check_choice, check_positive_int, check_X, resolve_group

__all__ = ["partial_dependence", "PartialDependenceResult", "pd_importance", "PDImportanceResult",
           "rashomon_pd_band", "RashomonPDBand"]

_MAX_ROWS = 2_000_000


@dataclass(frozen=True)
class PartialDependenceResult:
    """PD/ICE of one feature (1-D) or a pair (2-D).

    Attributes
    ----------
    features : tuple of str
    grid : list of ndarray
        Grid values per feature.
    average : ndarray of shape (n_outputs, *grid_shape)
        PD. Outputs: 1 for regressors; one per class for classifiers
        (probabilities, or the share of rows predicted as each class for crisp
        classifiers).
    individual : ndarray of shape (n_outputs, n_samples, *grid_shape) or None
        ICE curves (``kind="individual"`` or ``"both"``).
    std : ndarray of shape (n_outputs, *grid_shape)
        Standard deviation of the ICE curves at each grid value.
    outputs : list
        Output labels (classes).
    response : {"regression", "proba", "crisp"}
    centered : bool
        Curves anchored to 0 at ``center_value``.
    categorical : tuple of bool
    feature_values : ndarray of shape (n_samples, n_features_plotted)
        The data's values of the feature(s), for rugs.
    original_values : ndarray of shape (n_samples,) or None
        Each row's value at its own x (marked on ICE curves by the uncertainty plots).
    """

    features: tuple
    grid: list
    average: np.ndarray
    individual: np.ndarray | None
    std: np.ndarray
    outputs: list
    response: str
    centered: bool = False
    center_value: Any = None
    categorical: tuple = ()
    feature_values: np.ndarray | None = field(default=None, repr=False)
    original_values: np.ndarray | None = field(default=None, repr=False)

    def to_frame(self) -> pd.DataFrame:
        if len(self.grid) == 1:
            return pd.DataFrame({"grid": self.grid[0], **{f"pd[{o}]": self.average[k] for k, o in enumerate(self.outputs)},
                                 **{f"std[{o}]": self.std[k] for k, o in enumerate(self.outputs)}})
        g0, g1 = np.meshgrid(self.grid[0], self.grid[1], indexing="ij")
        return pd.DataFrame({self.features[0]: g0.ravel(), self.features[1]: g1.ravel(),
                             **{f"pd[{o}]": self.average[k].ravel() for k, o in enumerate(self.outputs)}})

    def plot(self, *, ax: Any = None, **kwargs: Any):
        from .plotting import PDDisplay

        return PDDisplay.from_result(self).plot(ax=ax, **kwargs)


def _prediction_fn(estimator, response):
    """Return (fn(X) -> (n, n_outputs) array, response kind, outputs)."""
    from sklearn.base import is_classifier

    is_model = any(hasattr(estimator, m) for m in ("predict", "predict_proba"))
    is_clf = is_model and (is_classifier(estimator) or hasattr(estimator, "classes_"))
    if response == "auto":
        response = "proba" if (is_clf and hasattr(estimator, "predict_proba")) else ("crisp" if is_clf else "regression")
    if response == "proba":
        if not hasattr(estimator, "predict_proba"):
            raise RashomonInputError("The 'response' parameter of partial_dependence is 'proba', but the estimator has no predict_proba.")
        return (lambda Z: np.asarray(estimator.predict_proba(Z), dtype=float)), "proba", list(estimator.classes_)
    if response == "crisp":
        classes = np.asarray(getattr(estimator, "classes_", None)) if hasattr(estimator, "classes_") else None
        pred = estimator.predict if hasattr(estimator, "predict") else estimator

        def onehot(Z):
            p = np.asarray(pred(Z))
            cls = classes if classes is not None else np.unique(p)
            return (p[:, None] == cls[None, :]).astype(float)

        return onehot, "crisp", (list(classes) if classes is not None else None)
    pred = estimator.predict if hasattr(estimator, "predict") else estimator
    return (lambda Z: np.asarray(pred(Z), dtype=float).reshape(len(Z), -1)), "regression", ["prediction"]


def _grid_for(x, grid_resolution, percentiles, categorical):
    """scikit-learn's grid rule: the unique values when there are fewer than
    ``grid_resolution`` (or the feature is categorical), else evenly spaced points
    between the ``percentiles`` (``scipy.stats.mstats.mquantiles``, as sklearn)."""
    from scipy.stats.mstats import mquantiles

    vals = np.unique(x)
    if categorical or len(vals) < grid_resolution:
        return vals
    lo, hi = np.asarray(mquantiles(x, prob=percentiles))
    if np.isclose(lo, hi):
        return vals
    return np.linspace(lo, hi, grid_resolution)


def partial_dependence(
    estimator: Any,
    X: Any,
    features: Any,
    *,
    grid: Any = None,
    grid_resolution: int = 50,
    percentiles: tuple[float, float] = (0.05, 0.95),
    kind: Literal["average", "individual", "both"] = "average",
    centered: bool = False,
    center_value: Any = None,
    categorical_features: Any = None,
    response: Literal["auto", "regression", "proba", "crisp"] = "auto",
) -> PartialDependenceResult:
    """Partial dependence and ICE of one feature or a pair of features.

    Parameters
    ----------
    estimator : fitted estimator or callable
    X : array-like or DataFrame of shape (n_samples, n_features)
    features : int, str, or a pair of them
        One feature (1-D PD) or two (2-D PD).
    grid : array-like or list of two, default=None
        Grid values; default: the unique values when there are at most
        ``grid_resolution`` of them (and always for categorical features), else
        ``grid_resolution`` points evenly spaced between the ``percentiles``.
    kind : {"average", "individual", "both"}, default="average"
    centered : bool, default=False
        Anchor every curve at 0 at ``center_value`` (default: the lowest grid
        value of each feature) — centred PD/ICE (c-ICE).
    categorical_features : list of int/str, default=None
        Features whose grid is their set of values.
    response : {"auto", "regression", "proba", "crisp"}, default="auto"
        ``"crisp"``: for classifiers, the share of rows predicted as each class.

    Returns
    -------
    PartialDependenceResult
    """
    func = "partial_dependence"
    check_choice(kind, ("average", "individual", "both"), "kind", func)
    check_choice(response, ("auto", "regression", "proba", "crisp"), "response", func)
    grid_resolution = check_positive_int(grid_resolution, "grid_resolution", func, minimum=2)
    Xa, columns = check_X(X, func, min_rows=1)
    group = resolve_group(features, columns, Xa.shape[1], func)
    if isinstance(features, (list, tuple)) and len(features) == 2:
        idx = [resolve_group(f, columns, Xa.shape[1], func)[0] for f in features]
    else:
        idx = list(group)
    if len(idx) > 2:
        raise RashomonInputError(f"The 'features' parameter of {func} must be one feature or a pair. Got {features!r} instead.")
    cats = set()
    if categorical_features is not None:
        for c in categorical_features:
            cats.add(resolve_group(c, columns, Xa.shape[1], func)[0])
    if grid is None:
        grids = [_grid_for(Xa[:, j], grid_resolution, percentiles, j in cats) for j in idx]
    else:
        grids = [np.asarray(grid, dtype=float)] if len(idx) == 1 else [np.asarray(g, dtype=float) for g in grid]
        if len(grids) != len(idx) or any(g.ndim != 1 or g.size == 0 for g in grids):
            raise RashomonInputError(f"The 'grid' parameter of {func} must hold one 1-D array per feature.")
    fn, resp, outputs = _prediction_fn(estimator, response)
    n = Xa.shape[0]
    mesh = np.array(np.meshgrid(*grids, indexing="ij")).reshape(len(idx), -1).T  # G × len(idx)
    G = len(mesh)
    block = max(1, _MAX_ROWS // max(n, 1))
    ice = None
    for g0 in range(0, G, block):
        pts = mesh[g0:g0 + block]
        Z = np.repeat(Xa[None], len(pts), axis=0)
        for k, j in enumerate(idx):
            Z[:, :, j] = pts[:, k][:, None]
        Z = Z.reshape(-1, Xa.shape[1])
        data = pd.DataFrame(Z, columns=columns) if columns is not None else Z
        P = fn(data).reshape(len(pts), n, -1)  # pts × n × outputs
        ice = P if ice is None else np.concatenate([ice, P], axis=0)
    ice = np.transpose(ice, (2, 1, 0))  # outputs × n × G
    if outputs is None:
        outputs = list(range(ice.shape[0]))
    anchor = None
    if centered:
        if center_value is None:
            anchor_idx = 0
            anchor = tuple(g[0] for g in grids)
        else:
            cv = np.atleast_1d(np.asarray(center_value, dtype=float))
            anchor_idx = int(np.argmin(np.sum((mesh - cv[None, :]) ** 2, axis=1)))
            anchor = tuple(mesh[anchor_idx])
        ice = ice - ice[:, :, anchor_idx:anchor_idx + 1]
    shape = tuple(len(g) for g in grids)
    average = ice.mean(axis=1).reshape((ice.shape[0],) + shape)
    std = ice.std(axis=1).reshape((ice.shape[0],) + shape)
    individual = ice.reshape(ice.shape[:2] + shape) if kind in ("individual", "both") else None
    names = tuple(columns[j] if columns else f"x{j}" for j in idx)
    return PartialDependenceResult(names, grids, average, individual, std, outputs, resp, centered, anchor,
                                   tuple(j in cats for j in idx), Xa[:, idx])


@dataclass(frozen=True)
class PDImportanceResult:
    """PD-based importance: sd of the PD curve (numeric) or range/4 (categorical)."""

    names: list
    importances: np.ndarray
    categorical: list
    results: list = field(repr=False, default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"importance": self.importances, "categorical": self.categorical},
                            index=pd.Index(self.names, name="feature"))

    def plot(self, *, ax: Any = None):
        from .plotting import RelianceDisplay

        disp = RelianceDisplay(self.names, self.importances, kind="difference", method="PD importance")
        disp.plot(ax=ax)
        disp.ax_.set_xlabel("PD-based importance (Greenwell et al. 2018)")
        return disp


def pd_importance(estimator: Any, X: Any, features: Any = None, *, categorical_features: Any = None,
                  grid_resolution: int = 50, percentiles: tuple[float, float] = (0.0, 1.0), output: int = -1) -> PDImportanceResult:
    """PD-based importance (Greenwell, Boehmke & McCarthy 2018).

    Numeric features: the standard deviation (ddof = 1, as R's ``sd``) of the PD
    curve over its grid; categorical: (max - min) / 4. For classifiers, the PD
    of class ``output`` (default the last, the positive class of a binary model).
    """
    func = "pd_importance"
    Xa, columns = check_X(X, func, min_rows=1)
    p = Xa.shape[1]
    idx = list(range(p)) if features is None else [resolve_group(f, columns, p, func)[0] for f in features]
    cats = set() if categorical_features is None else {resolve_group(c, columns, p, func)[0] for c in categorical_features}
    vals, results = [], []
    for j in idx:
        r = partial_dependence(estimator, X, j, grid_resolution=grid_resolution, percentiles=percentiles,
                               categorical_features=[j] if j in cats else None)
        curve = r.average[output]
        vals.append((curve.max() - curve.min()) / 4 if j in cats else (curve.std(ddof=1) if curve.size > 1 else 0.0))
        results.append(r)
    names = [columns[j] if columns else f"x{j}" for j in idx]
    return PDImportanceResult(names, np.asarray(vals, dtype=float), [j in cats for j in idx], results)


# --------------------------------------------------------------------------- Rashomon PD band
@dataclass(frozen=True)
class RashomonPDBand:
    """Range of PD(v) over every model of the class in the Rashomon set, at each grid value.

    Attributes
    ----------
    grid : ndarray of shape (G,)
    lower, upper : ndarray of shape (G,)
        Certified: every model of the class with ``e_orig <= epsilon_abs`` has
        PD(v) in [lower, upper] (up to ``duality_gap``).
    reference : ndarray of shape (G,)
        PD of the class's loss minimiser.
    lower_models, upper_models : list of ndarray
        Parameters θ attaining each end.
    duality_gap : ndarray of shape (2, G)
        Certified gaps (attained value minus the dual bound) of each end.
    epsilon_abs : float
    feature : str
    """

    grid: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    reference: np.ndarray
    lower_models: list = field(repr=False)
    upper_models: list = field(repr=False)
    duality_gap: np.ndarray = field(repr=False, default=None)
    epsilon_abs: float = math.nan
    feature: str = ""
    pd_vectors: np.ndarray = field(repr=False, default=None)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"grid": self.grid, "lower": self.lower, "reference": self.reference, "upper": self.upper})

    def plot(self, *, ax: Any = None, pd_result: PartialDependenceResult | None = None, **kwargs: Any):
        from .plotting import RashomonPDBandDisplay

        return RashomonPDBandDisplay(self, pd_result).plot(ax=ax, **kwargs)


def _linear_extreme(seq_factory, Q0, c0, k0, a, eps, B, r, sign, tol=1e-10, max_iter=200):
    """min sign·a'θ  s.t.  θ'Q0θ - 2c0'θ + k0 <= eps, θ'Bθ <= r, by the dual on the e_orig constraint.

    For λ > 0 the Lagrangian ``sign·a'θ + λ(e_orig(θ) - eps)`` is minimised over the
    ball by the exact QCQP engine (A = λQ0, b = λc0 - sign·a/2); its value q(λ) is a
    lower bound on the optimum, concave in λ, with slope e_orig(θ_λ) - eps.
    Bisection on the slope; the minimiser at the crossing is feasible and attains
    the bound up to the reported gap.
    """
    from solvers import SolverStatus

    # A(λ) = λ Q0 ; b(λ) = λ c0 - sign a / 2: a sequence in λ with A0 = 0, b0 = -sign a / 2
    seq = seq_factory(np.zeros_like(Q0), -0.5 * sign * a, Q0, c0)

    def at(lam):
        res = seq.solve(lam, check=False)
        if res.status is SolverStatus.UNBOUNDED or res.x is None:
            return None, -math.inf, math.inf
        th = res.x
        e = float(th @ Q0 @ th - 2 * c0 @ th + k0)
        q = float(sign * a @ th + lam * (e - eps)) if res.status is SolverStatus.OPTIMAL else -math.inf
        return th, q, e

    best_q, best_th, best_val = -math.inf, None, math.inf
    lo, hi = 0.0, None
    th, q, e = at(0.0)
    if th is not None and e <= eps:
        return th, q, float(sign * a @ th) - q
    lam = 1.0
    for _ in range(200):
        th, q, e = at(lam)
        best_q = max(best_q, q)
        if th is not None and e <= eps:
            hi = lam
            if sign * a @ th < best_val:
                best_val, best_th = float(sign * a @ th), th
            break
        lo, lam = lam, lam * 2
    if hi is None:
        raise RashomonInputError("rashomon_pd_band: the Rashomon set could not be reached (epsilon too small?).")
    for _ in range(max_iter):
        if best_th is not None and best_val - best_q <= tol * max(1.0, abs(best_val)):
            break
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        th, q, e = at(mid)
        best_q = max(best_q, q)
        if th is not None and e <= eps:
            hi = mid
            if sign * a @ th < best_val:
                best_val, best_th = float(sign * a @ th), th
        else:
            lo = mid
    return best_th, best_q, best_val - best_q


def rashomon_pd_band(
    model_class: Any,
    X: Any,
    y: Any,
    feature: Any,
    *,
    epsilon: float = 0.1,
    epsilon_kind: Literal["relative", "additive", "absolute"] = "relative",
    grid: Any = None,
    grid_resolution: int = 20,
    percentiles: tuple[float, float] = (0.05, 0.95),
    tol: float = 1e-9,
) -> RashomonPDBand:
    """Minimum and maximum of PD(v) over all models of the class in the Rashomon set.

    PD(v) is linear in the parameters θ (``PD(v) = a(v)'θ + a₀(v)``), so each end
    at each grid value is a linear objective under two quadratic constraints
    (``e_orig <= ε_abs`` and the class's norm), a convex problem solved exactly:
    the e_orig constraint is dualised and each Lagrangian is minimised over the
    norm ball by the exact QCQP engine; the dual value certifies the bound.

    Parameters
    ----------
    model_class : LinearModelClass or KernelModelClass
    X, y : data
    feature : int or str
    epsilon, epsilon_kind : as in :func:`model_class_reliance`
    grid, grid_resolution, percentiles : as in :func:`partial_dependence`
    tol : float, default=1e-9
        Relative duality gap at which the search stops.

    Returns
    -------
    RashomonPDBand
    """
    from solvers import QCQPSequence

    from ._mcr import _epsilon_abs, _prepare

    func = "rashomon_pd_band"
    Xa, ya, columns, group, _ = _prepare(model_class, X, y, feature, func)
    if len(group) != 1:
        raise RashomonInputError(f"The 'feature' parameter of {func} must be a single feature.")
    j = group[0]
    prob = model_class.build(Xa, ya, group, columns, func)
    eo = prob.e_orig
    ref = QCQPSequence(eo.Q, eo.c, prob.B, prob.r).solve(0.0)
    e_min = eo(ref.x)
    eps = _epsilon_abs(epsilon, epsilon_kind, e_min, e_min, func)
    g = _grid_for(Xa[:, j], grid_resolution, percentiles, False) if grid is None else np.asarray(grid, dtype=float).ravel()
    # PD(v) = a(v)'θ + a0(v): the class's affine prediction map, averaged over the data with x_j = v
    A_rows, a0 = [], []
    for v in g:
        Z = Xa.copy()
        Z[:, j] = v
        P, p0 = prob.prediction_map(Z, average=True)
        A_rows.append(P[0])
        a0.append(p0[0])
    A_rows, a0 = np.array(A_rows), np.array(a0)

    def factory(A0, b0, A1, b1):
        return QCQPSequence(A0, b0, prob.B, prob.r, A1=A1, b1=b1)

    lower, upper, lm, um, gaps = [], [], [], [], []
    for a, base in zip(A_rows, a0):
        th_lo, q_lo, gap_lo = _linear_extreme(factory, eo.Q, eo.c, eo.k, a, eps, prob.B, prob.r, +1.0, tol)
        th_hi, q_hi, gap_hi = _linear_extreme(factory, eo.Q, eo.c, eo.k, a, eps, prob.B, prob.r, -1.0, tol)
        lower.append(base + q_lo)  # certified: every member has a'θ >= q_lo
        upper.append(base - q_hi)
        lm.append(th_lo)
        um.append(th_hi)
        gaps.append((gap_lo, gap_hi))
    reference = A_rows @ ref.x + a0
    name = columns[j] if columns else f"x{j}"
    return RashomonPDBand(g, np.array(lower), np.array(upper), reference, lm, um, np.array(gaps).T, float(eps), name,
                          np.column_stack([A_rows, a0]))
