"""Partial dependence (Friedman 2001), ICE (Goldstein et al. 2015), PD-based importance
(Greenwell et al. 2018) and the Rashomon PD band.

PD and ICE are computed by brute force: every row with the feature(s) set to
each grid value, predictions batched in blocks of bounded memory. This is what
scikit-learn's ``partial_dependence(method="brute")`` does (and the tests check
equality with it); here it also takes plain callables, crisp classifiers
(share of each predicted class), centred curves and the spread of ICE curves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..utils import DisplayMixin, feature_grid
from ..utils.validation import (
    Boolean,
    Integral,
    Options,
    Percentiles,
    RashomonInputError,
    check_feature_indices,
    check_grid,
    check_X,
    resolve_group,
    validate_params,
)

__all__ = ["partial_dependence", "PartialDependenceResult", "pd_importance", "PDImportanceResult"]

_MAX_ROWS = 2_000_000


@dataclass(frozen=True, repr=False)
class PartialDependenceResult(DisplayMixin):
    """PD/ICE of one feature (1-D) or a pair (2-D).

    Attributes
    ----------
    features : tuple of str
    grid : list of ndarray
        Grid values per feature.
    average : ndarray of shape (n_outputs, \\*grid_shape)
        PD. Outputs: 1 for regressors; one per class for classifiers
        (probabilities, or the share of rows predicted as each class for crisp
        classifiers).
    individual : ndarray of shape (n_outputs, n_samples, \\*grid_shape) or None
        ICE curves (``kind="individual"`` or ``"both"``).
    std : ndarray of shape (n_outputs, \\*grid_shape)
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

    def _display_(self) -> tuple[dict, list]:
        fields = {
            "features": list(self.features),
            "response": self.response,
            "outputs": list(self.outputs),
            "grid_points": "x".join(str(len(g)) for g in self.grid),
            "centered": self.centered,
            "ice_curves": 0 if self.individual is None else int(self.individual.shape[1]),
        }
        return fields, [("", self.to_frame())]

    def to_frame(self) -> pd.DataFrame:
        if len(self.grid) == 1:
            return pd.DataFrame(
                {
                    "grid": self.grid[0],
                    **{f"pd[{o}]": self.average[k] for k, o in enumerate(self.outputs)},
                    **{f"std[{o}]": self.std[k] for k, o in enumerate(self.outputs)},
                }
            )
        g0, g1 = np.meshgrid(self.grid[0], self.grid[1], indexing="ij")
        return pd.DataFrame(
            {
                self.features[0]: g0.ravel(),
                self.features[1]: g1.ravel(),
                **{f"pd[{o}]": self.average[k].ravel() for k, o in enumerate(self.outputs)},
            }
        )

    def plot(self, *, ax: Any = None, **kwargs: Any):
        from ..plotting import PDDisplay

        return PDDisplay.from_result(self).plot(ax=ax, **kwargs)


def _prediction_fn(estimator, response):
    """Return (fn(X) -> (n, n_outputs) array, response kind, outputs)."""
    from sklearn.base import is_classifier

    is_model = any(hasattr(estimator, m) for m in ("predict", "predict_proba"))
    is_clf = is_model and (is_classifier(estimator) or hasattr(estimator, "classes_"))
    if response == "auto":
        response = (
            "proba" if (is_clf and hasattr(estimator, "predict_proba")) else ("crisp" if is_clf else "regression")
        )
    if response == "proba":
        if not hasattr(estimator, "predict_proba"):
            raise RashomonInputError(
                "The 'response' parameter of partial_dependence is 'proba', but the estimator has no predict_proba."
            )
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


@validate_params(
    {
        "grid_resolution": Integral(2),
        "percentiles": Percentiles(),
        "kind": Options(("average", "individual", "both")),
        "centered": Boolean(),
        "response": Options(("auto", "regression", "proba", "crisp")),
    }
)
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
    Xa, columns = check_X(X, func, min_rows=1)
    group = resolve_group(features, columns, Xa.shape[1], func)
    if isinstance(features, (list, tuple)) and len(features) == 2:
        idx = [resolve_group(f, columns, Xa.shape[1], func)[0] for f in features]
    else:
        idx = list(group)
    if len(idx) > 2:
        raise RashomonInputError(
            f"The 'features' parameter of {func} must be one feature or a pair. Got {features!r} instead."
        )
    cats = set(check_feature_indices(categorical_features, columns, Xa.shape[1], func, "categorical_features"))
    if grid is None:
        grids = [feature_grid(Xa[:, j], grid_resolution, percentiles, j in cats) for j in idx]
    else:
        grids = check_grid(grid, len(idx), func)
    if centered and center_value is not None:
        try:
            cv = np.atleast_1d(np.asarray(center_value, dtype=float))
        except (TypeError, ValueError):
            cv = np.array([np.nan])
        if cv.shape != (len(idx),) or not np.all(np.isfinite(cv)):
            raise RashomonInputError(
                f"The 'center_value' parameter of {func} must be None or {len(idx)} finite "
                f"float(s), one per feature. Got {center_value!r} instead."
            )
    fn, resp, outputs = _prediction_fn(estimator, response)
    n = Xa.shape[0]
    mesh = np.array(np.meshgrid(*grids, indexing="ij")).reshape(len(idx), -1).T  # G × len(idx)
    G = len(mesh)
    block = max(1, _MAX_ROWS // max(n, 1))
    blocks = []
    for g0 in range(0, G, block):
        pts = mesh[g0 : g0 + block]
        Z = np.repeat(Xa[None], len(pts), axis=0)
        for k, j in enumerate(idx):
            Z[:, :, j] = pts[:, k][:, None]
        Z = Z.reshape(-1, Xa.shape[1])
        data = pd.DataFrame(Z, columns=columns) if columns is not None else Z
        P = fn(data).reshape(len(pts), n, -1)  # pts × n × outputs
        blocks.append(P)
    ice = np.transpose(np.concatenate(blocks, axis=0), (2, 1, 0))  # outputs × n × G
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
        ice = ice - ice[:, :, anchor_idx : anchor_idx + 1]
    shape = tuple(len(g) for g in grids)
    average = ice.mean(axis=1).reshape((ice.shape[0],) + shape)
    std = ice.std(axis=1).reshape((ice.shape[0],) + shape)
    individual = ice.reshape(ice.shape[:2] + shape) if kind in ("individual", "both") else None
    names = tuple(columns[j] if columns else f"x{j}" for j in idx)
    return PartialDependenceResult(
        names,
        grids,
        average,
        individual,
        std,
        outputs,
        resp,
        centered,
        anchor,
        tuple(j in cats for j in idx),
        Xa[:, idx],
    )


@dataclass(frozen=True, repr=False)
class PDImportanceResult(DisplayMixin):
    """PD-based importance: sd of the PD curve (numeric) or range/4 (categorical)."""

    names: list
    importances: np.ndarray
    categorical: list
    results: list = field(repr=False, default_factory=list)

    def _display_(self) -> tuple[dict, list]:
        return {"n_features": len(self.names), "importance": dict(zip(self.names, self.importances))}, [
            ("", self.to_frame())
        ]

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {"importance": self.importances, "categorical": self.categorical},
            index=pd.Index(self.names, name="feature"),
        )

    def plot(self, *, ax: Any = None):
        from ..plotting import RelianceDisplay

        disp = RelianceDisplay(self.names, self.importances, kind="difference", method="PD importance")
        disp.plot(ax=ax)
        disp.ax_.set_xlabel("PD-based importance (Greenwell et al. 2018)")
        return disp


@validate_params({"grid_resolution": Integral(2), "percentiles": Percentiles(), "output": Integral()})
def pd_importance(
    estimator: Any,
    X: Any,
    features: Any = None,
    *,
    categorical_features: Any = None,
    grid_resolution: int = 50,
    percentiles: tuple[float, float] = (0.0, 1.0),
    output: int = -1,
) -> PDImportanceResult:
    """PD-based importance (Greenwell, Boehmke & McCarthy 2018).

    Numeric features: the standard deviation (ddof = 1, as R's ``sd``) of the PD
    curve over its grid; categorical: (max - min) / 4. For classifiers, the PD
    of class ``output`` (default the last, the positive class of a binary model).
    """
    func = "pd_importance"
    Xa, columns = check_X(X, func, min_rows=1)
    p = Xa.shape[1]
    idx = list(range(p)) if features is None else check_feature_indices(features, columns, p, func, "features")
    if not idx:
        raise RashomonInputError(
            f"The 'features' parameter of {func} must be None or a non-empty list of features. "
            f"Got {features!r} instead."
        )
    cats = set(check_feature_indices(categorical_features, columns, p, func, "categorical_features"))
    vals, results = [], []
    for j in idx:
        r = partial_dependence(
            estimator,
            X,
            j,
            grid_resolution=grid_resolution,
            percentiles=percentiles,
            categorical_features=[j] if j in cats else None,
        )
        if not -len(r.average) <= output < len(r.average):
            raise RashomonInputError(
                f"The 'output' parameter of {func} must be an output index in "
                f"[{-len(r.average)}, {len(r.average)}) (the model has {len(r.average)} "
                f"output(s)). Got {output} instead."
            )
        curve = r.average[output]
        vals.append((curve.max() - curve.min()) / 4 if j in cats else (curve.std(ddof=1) if curve.size > 1 else 0.0))
        results.append(r)
    names = [columns[j] if columns else f"x{j}" for j in idx]
    return PDImportanceResult(names, np.asarray(vals, dtype=float), [j in cats for j in idx], results)
