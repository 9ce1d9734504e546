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

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..utils.losses import Predictor, default_loss, get_loss
from ..utils.validation import RashomonInputError

__all__ = ["FixedModel", "check_estimator", "estimator_model", "load_estimator", "weighted_mr"]

_BLOCK_ROWS = 200_000  # switched rows predicted per call


class FixedModel:
    """A fixed model on a frame of its input columns: ``predict(frame)`` and ``loss_from(y, predictions)``."""

    def __init__(
        self,
        predict: Callable[[pd.DataFrame], np.ndarray],
        loss_from: Callable[[np.ndarray, np.ndarray], np.ndarray],
        frame: pd.DataFrame,
        y_rows: np.ndarray,
        loss: str,
        name: str,
    ):
        self.predict, self.loss_from = predict, loss_from
        self.frame, self.y_rows, self.loss, self.name = frame, y_rows, loss, name

    def losses(self, frame: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
        return self.loss_from(self.y_rows[rows], self.predict(frame))


#: type-name prefixes a ``.skops`` file may hold without being named in ``trusted_types``
_SAFE_PREFIXES = ("sklearn.", "numpy.")


def load_estimator(path: Any, trusted_types: Any = None, func: str = "audit", param: str = "estimator") -> Any:
    """A fitted model from a file: ``.skops`` through :func:`skops.io.load` (a format that runs no code; types
    beyond scikit-learn's and NumPy's must be listed in ``trusted_types``), anything else through
    :func:`joblib.load` (a pickle: loading it runs code from the file, so it is called only after every
    other input has been checked)."""
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be a fitted model or an existing .skops, joblib or "
            f"pickle file. Got {str(p)!r} instead ({'a folder' if p.is_dir() else 'no such file'})."
        )
    trusted = check_trusted_types(trusted_types, func)
    if p.suffix.lower() == ".skops":
        return _load_skops(p, trusted, func, param)
    import joblib

    try:
        return joblib.load(p)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad input file
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be a joblib or pickle file of a fitted model. Got "
            f"{str(p)!r}, which could not be loaded ({type(exc).__name__}: {exc}) instead."
        ) from None


def check_trusted_types(trusted_types: Any, func: str = "audit") -> list:
    """``trusted_types``: None or a list of type names (str), as ``skops.io.get_untrusted_types`` gives them."""
    if trusted_types is None:
        return []
    vals = [trusted_types] if isinstance(trusted_types, str) else trusted_types
    if not isinstance(vals, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in vals):
        raise RashomonInputError(
            f"The 'trusted_types' parameter of {func} must be None or a list of type names such as "
            f"'xgboost.sklearn.XGBClassifier'. Got {trusted_types!r} instead."
        )
    return [v.strip() for v in vals]


def _load_skops(p: Any, trusted: list, func: str, param: str) -> Any:
    try:
        import skops.io as sio
    except ImportError:
        raise RashomonInputError(
            f"The '{param}' parameter of {func} is a .skops file, which needs the skops package "
            f"(pip install skops). Got {str(p)!r} instead."
        ) from None
    try:
        untrusted = list(sio.get_untrusted_types(file=p))
    except Exception as exc:  # noqa: BLE001 - not a skops archive
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be a .skops file written by skops.io.dump. Got "
            f"{str(p)!r}, which could not be read ({type(exc).__name__}: {exc}) instead."
        ) from None
    refused = [t for t in untrusted if not t.startswith(_SAFE_PREFIXES) and t not in trusted]
    if refused:
        raise RashomonInputError(
            f"The '{param}' parameter of {func} is a .skops file holding types that are not trusted: "
            f"{refused}. Got {str(p)!r} instead; if you trust them, pass them in 'trusted_types' "
            "(--trust-type on the command line)."
        )
    try:
        return sio.load(p, trusted=untrusted)
    except Exception as exc:  # noqa: BLE001 - a damaged archive
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be a .skops file of a fitted model. Got {str(p)!r}, "
            f"which could not be loaded ({type(exc).__name__}: {exc}) instead."
        ) from None


def _model_columns(estimator: Any, raw: pd.DataFrame, features: list, func: str) -> list:
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return list(features)
    names = [str(c) for c in names]
    missing = [c for c in names if c not in raw.columns]
    if missing:
        raise RashomonInputError(
            f"The 'estimator' parameter of {func} was fitted on columns the data does not have: "
            f"{missing[:5]}. Got a model with feature_names_in_ = {names[:8]} instead."
        )
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
    raise RashomonInputError(
        f"The 'estimator' parameter of {func} must predict the target's classes. Got a model with "
        f"classes_ = {sorted(map(str, cls))[:5]}, and the target has {sorted(map(str, pd.unique(y_raw)))} "
        "instead."
    )


def check_estimator(estimator: Any, raw: pd.DataFrame, features: list, func: str = "audit") -> None:
    """Before any computing: a fitted model with predict / predict_proba whose input columns the table has."""
    if not any(hasattr(estimator, m) for m in ("predict", "predict_proba")):
        raise RashomonInputError(
            f"The 'estimator' parameter of {func} must be a fitted model with predict or "
            f"predict_proba. Got {type(estimator).__name__} instead."
        )
    _model_columns(estimator, raw, features, func)


def estimator_model(
    estimator: Any,
    raw: pd.DataFrame,
    rows: np.ndarray,
    features: list,
    y_raw: np.ndarray,
    y01: np.ndarray | None,
    func: str = "audit",
) -> FixedModel:
    """The user's fitted model on the held-out ``rows`` of ``raw``: log loss on ``predict_proba`` for a
    classifier that has it, squared error on ``predict`` otherwise (``rashomon.utils.losses.default_loss``,
    as :func:`rashomon.model_reliance` chooses), labels encoded as the model's ``classes_``."""
    if not any(hasattr(estimator, m) for m in ("predict", "predict_proba")):
        raise RashomonInputError(
            f"The 'estimator' parameter of {func} must be a fitted model with predict or "
            f"predict_proba. Got {type(estimator).__name__} instead."
        )
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

    def predict(f: pd.DataFrame) -> np.ndarray:
        try:
            out = np.asarray(pred.method(f))
        except Exception as exc:  # the user's model refused its inputs: say which model and why
            raise RashomonInputError(
                f"The 'estimator' parameter of {func} failed to predict on the held-out rows "
                f"(columns {cols[:8]}): {type(exc).__name__}: {exc}"
            ) from None
        if loss.response != "predict_proba" and out.ndim == 2 and out.shape[1] == 1:
            out = out[:, 0]
        return out.astype(float)

    return FixedModel(predict, pred.losses_from, frame, y, loss.name, type(estimator).__name__)


def _codes(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, first)``: each row's distinct-value code over the columns of ``df`` (NaN a value of its own),
    and a row holding each code."""
    if df.shape[1] == 0:
        return np.zeros(len(df), dtype=np.intp), np.zeros(1, dtype=np.intp)
    cols = np.column_stack([pd.factorize(df[c], use_na_sentinel=False)[0] for c in df.columns])
    _, first, codes = np.unique(cols, axis=0, return_index=True, return_inverse=True)
    return np.asarray(codes).ravel(), np.asarray(first)


def weighted_mr(model: FixedModel, group: list, weights: np.ndarray | None = None) -> np.ndarray:
    """MR ratio ``e_switch / e_orig`` of ``model`` on ``group`` (columns of ``model.frame``) for each row of
    ``weights`` (shape (B, n), counts; None: the data itself). Row 0 of ones gives :func:`rashomon.model_reliance`'s
    exact value.

    The model is called once per distinct (group value, other columns' value) pair: when the other columns
    take fewer distinct values than there are rows (a categorical complement), the switched rows are
    predicted on those combinations only and spread to the rows that share them."""
    frame = model.frame
    n = len(frame)
    W = np.ones((1, n)) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
    own = model.losses(frame, np.arange(n))
    codes, first = _codes(frame[group])
    k = len(first)
    codes2, first2 = _codes(frame[[c for c in frame.columns if c not in group]])
    if len(first2) < n:  # predict on the distinct complements only
        base, spread = frame.iloc[first2].reset_index(drop=True), codes2
    else:
        base, spread = frame, np.arange(n)
    m = len(base)
    C = np.vstack([np.bincount(codes, weights=w, minlength=k) for w in W])
    S = np.zeros(W.shape[0])
    per = max(1, _BLOCK_ROWS // max(m, 1))
    gvals = frame[group]
    for start in range(0, k, per):
        vs = list(range(start, min(k, start + per)))
        block = pd.concat([base] * len(vs), ignore_index=True)
        for c in group:
            block[c] = pd.Series(np.repeat(gvals[c].to_numpy()[first[vs]], m), dtype=frame[c].dtype)
        P = model.predict(block)
        P = P.reshape((len(vs), m) + P.shape[1:])
        L = np.vstack([model.loss_from(model.y_rows, P[i][spread]) for i in range(len(vs))])
        S += np.einsum("bv,bv->b", C[:, vs], W @ L.T)
    tot = W.sum(axis=1)
    e_orig = (W @ own) / tot
    e_switch = (S - W @ own) / (tot * (tot - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return e_switch / e_orig
