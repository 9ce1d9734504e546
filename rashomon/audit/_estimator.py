"""Model reliance of a fixed model on the held-out rows, with bootstrap resamples as row weights.

Used for the user's own fitted model (``audit(..., estimator=model)``) and for the classifier reference.
The exact all-pairs MR of :func:`rashomon.model_reliance`,

    e_switch = 1/(n(n-1)) Σ_i Σ_{j≠i} L(y_j, f(x1_i, x2_j)),

is computed over the *distinct* values v of the group: ``L[v, j] = L(y_j, f(v, x2_j))``. A resample with
counts w (row i drawn w_i times) is a data set whose ordered pairs of distinct positions give
``Σ_{i,j} w_i w_j L[v(i), j] - Σ_i w_i L[v(i), i]`` over ``m(m-1)`` pairs (m = Σ w), i.e.
``Σ_v C_v (L[v, :] @ w) - w @ l`` with ``C_v`` the count of value v: every resample's MR comes from the
same predictions, streamed over the distinct values (memory: a block of them times n). The model is
called on DataFrames with the table's own columns and dtypes (strings for a OneHotEncoder pipeline, NaN
where the model accepts it).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from ..utils.losses import Predictor, default_loss, get_loss
from ..utils.validation import RashomonInputError

__all__ = ["FixedModel", "check_estimator", "estimator_model", "weighted_mr"]

_BLOCK_ROWS = 200_000  # switched rows predicted per call


class FixedModel:
    """A fixed model seen as ``losses(frame) -> per-row losses`` on a frame of its input columns."""

    def __init__(self, losses: Callable[[pd.DataFrame, np.ndarray], np.ndarray], frame: pd.DataFrame,
                 y_rows: np.ndarray, loss: str, name: str):
        self._losses, self.frame, self.y_rows, self.loss, self.name = losses, frame, y_rows, loss, name

    def losses(self, frame: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
        return self._losses(frame, self.y_rows[rows])


def _model_columns(estimator: Any, raw: pd.DataFrame, features: list, func: str) -> list:
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return list(features)
    names = [str(c) for c in names]
    missing = [c for c in names if c not in raw.columns]
    if missing:
        raise RashomonInputError(f"The 'estimator' parameter of {func} was fitted on columns the data does not have: "
                                 f"{missing[:5]}. Got a model with feature_names_in_ = {names[:8]} instead.")
    return names


def _encode_labels(estimator: Any, y_raw: np.ndarray, y01: np.ndarray, func: str) -> np.ndarray:
    """The target as the model's classes: the table's own labels, else 0/1, else False/True."""
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        return y01
    cls = set(np.asarray(classes).tolist())
    for cand in (y_raw, y01, y01.astype(bool)):
        if set(pd.unique(cand).tolist()) <= cls:
            return np.asarray(cand)
    raise RashomonInputError(f"The 'estimator' parameter of {func} must predict the target's classes. Got a model with "
                             f"classes_ = {sorted(map(str, cls))[:5]}, and the target has {sorted(map(str, pd.unique(y_raw)))} "
                             "instead.")


def check_estimator(estimator: Any, raw: pd.DataFrame, features: list, func: str = "audit") -> None:
    """Before any computing: a fitted model with predict / predict_proba whose input columns the table has."""
    if not any(hasattr(estimator, m) for m in ("predict", "predict_proba")):
        raise RashomonInputError(f"The 'estimator' parameter of {func} must be a fitted model with predict or "
                                 f"predict_proba. Got {type(estimator).__name__} instead.")
    _model_columns(estimator, raw, features, func)


def estimator_model(estimator: Any, raw: pd.DataFrame, rows: np.ndarray, features: list, y_raw: np.ndarray,
                    y01: np.ndarray | None, func: str = "audit") -> FixedModel:
    """The user's fitted model on the held-out ``rows`` of ``raw``: log loss on ``predict_proba`` for a
    classifier that has it, squared error on ``predict`` otherwise (:func:`rashomon.utils.losses.default_loss`,
    as :func:`rashomon.model_reliance` chooses), labels encoded as the model's ``classes_``."""
    if not any(hasattr(estimator, m) for m in ("predict", "predict_proba")):
        raise RashomonInputError(f"The 'estimator' parameter of {func} must be a fitted model with predict or "
                                 f"predict_proba. Got {type(estimator).__name__} instead.")
    cols = _model_columns(estimator, raw, features, func)
    frame = raw.iloc[rows][cols].reset_index(drop=True)
    loss = get_loss(default_loss(estimator), func)
    pred = Predictor(estimator, loss, cols, func)
    y = np.asarray(y_raw)[rows]
    if loss.name == "log_loss":
        y = pred.encode_y(_encode_labels(estimator, y, np.asarray(y01)[rows], func), func)
    elif loss.name == "squared_error":
        y = (np.asarray(y01)[rows] if y01 is not None else y).astype(float)
    else:
        y = pred.encode_y(y, func)

    def losses(f: pd.DataFrame, yy: np.ndarray) -> np.ndarray:
        try:
            out = np.asarray(pred.method(f))
        except Exception as exc:  # the user's model refused its inputs: say which model and why
            raise RashomonInputError(f"The 'estimator' parameter of {func} failed to predict on the held-out rows "
                                     f"(columns {cols[:8]}): {type(exc).__name__}: {exc}") from None
        if loss.response != "predict_proba" and out.ndim == 2 and out.shape[1] == 1:
            out = out[:, 0]
        return pred.losses_from(yy, out.astype(float))

    return FixedModel(losses, frame, y, loss.name, type(estimator).__name__)


def weighted_mr(model: FixedModel, group: list, weights: np.ndarray | None = None) -> np.ndarray:
    """MR ratio ``e_switch / e_orig`` of ``model`` on ``group`` (columns of ``model.frame``) for each row of
    ``weights`` (shape (B, n), counts; None: the data itself). Row 0 of ones gives :func:`rashomon.model_reliance`'s
    exact value."""
    frame = model.frame
    n = len(frame)
    W = np.ones((1, n)) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
    own = model.losses(frame, np.arange(n))
    codes, uniq = pd.MultiIndex.from_frame(frame[group]).factorize() if len(group) > 1 else pd.factorize(frame[group[0]])
    codes = np.asarray(codes)
    if np.any(codes < 0):  # NaN group values: a level of their own (pandas marks them -1)
        codes = np.where(codes < 0, codes.max() + 1, codes)
    k = int(codes.max()) + 1
    first = np.array([np.flatnonzero(codes == v)[0] for v in range(k)])  # a row holding each distinct value
    C = np.zeros((W.shape[0], k))
    for b in range(W.shape[0]):
        C[b] = np.bincount(codes, weights=W[b], minlength=k)
    S = np.zeros(W.shape[0])
    per = max(1, _BLOCK_ROWS // max(n, 1))
    gvals = frame[group]
    for start in range(0, k, per):
        vs = range(start, min(k, start + per))
        block = pd.concat([frame] * len(vs), ignore_index=True)
        for c in group:
            col = np.repeat(gvals[c].to_numpy()[first[list(vs)]], n)
            block[c] = pd.Series(col, dtype=frame[c].dtype)
        L = model.losses(block, np.tile(np.arange(n), len(vs))).reshape(len(vs), n)
        S += np.einsum("bv,bv->b", C[:, list(vs)], W @ L.T)
    m = W.sum(axis=1)
    e_orig = (W @ own) / m
    e_switch = (S - W @ own) / (m * (m - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return e_switch / e_orig
