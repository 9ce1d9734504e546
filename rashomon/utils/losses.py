"""Loss functions and the bridge from a model to the predictions a loss needs.

A loss is ``L(y, prediction) -> per-row losses``. Each named loss knows which
prediction it needs (``predict``, ``predict_proba`` or a real-valued margin)
and how to encode the labels (e.g. hinge maps 0/1 to -1/+1 once, up front).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .validation import RashomonInputError

__all__ = ["Loss", "get_loss", "default_loss", "resolve_loss", "canonical_loss_name", "Predictor"]

LOSS_NAMES = ("squared_error", "absolute_error", "hinge", "log_loss", "zero_one")
#: the one place where other spellings of a loss are mapped to the package's name (scikit-learn's words)
LOSS_ALIASES = {"logistic": "log_loss", "squared": "squared_error"}


def canonical_loss_name(name: Any) -> Any:
    """The package's name of a loss: ``"logistic"`` is ``"log_loss"``, ``"squared"`` is ``"squared_error"``.

    Anything that is not a known alias (other names, callables) is returned unchanged.
    """
    return LOSS_ALIASES.get(name, name) if isinstance(name, str) else name


def default_loss(estimator: Any, y: Any = None) -> str:
    """The loss ``loss="auto"`` chooses for a (fitted or unfitted) estimator.

    * a regressor (``sklearn.base.is_regressor``, pipelines included): ``"squared_error"`` on ``predict``;
    * a classifier (``is_classifier``) with ``predict_proba``: ``"log_loss"`` on ``predict_proba``;
    * a classifier without ``predict_proba`` (``LinearSVC``, ``SVC(probability=False)``, hard voting):
      ``"hinge"`` on ``decision_function`` when it has one and the problem is binary, else
      ``"zero_one"`` on ``predict``;
    * anything else (a plain function, an object that is neither): ``"squared_error"`` on ``predict``.

    Parameters
    ----------
    estimator : estimator or callable
    y : array-like, default=None
        Labels, used to count classes only when the estimator has no ``classes_`` (an unfitted
        learner). Without either, a classifier is taken as binary.

    Returns
    -------
    str
        One of :data:`LOSS_NAMES`. The functions that take ``loss="auto"`` record it on their
        result (``result.loss``) instead of printing a message.
    """
    from sklearn.base import is_classifier

    if not any(hasattr(estimator, m) for m in ("predict", "predict_proba", "decision_function")):
        return "squared_error"  # a plain function f(X) -> predictions
    try:
        classifier = is_classifier(estimator)
    except (AttributeError, TypeError):  # not a scikit-learn estimator (no tags): its declared type, if any
        classifier = getattr(estimator, "_estimator_type", None) == "classifier"
    if not classifier:
        return "squared_error"
    if hasattr(estimator, "predict_proba"):
        return "log_loss"
    classes = getattr(estimator, "classes_", None)
    if classes is not None:
        n_classes = len(np.asarray(classes))
    elif y is not None:
        n_classes = len(np.unique(np.asarray(y)))
    else:
        n_classes = 2
    return "hinge" if n_classes <= 2 and hasattr(estimator, "decision_function") else "zero_one"


@dataclass(frozen=True)
class Loss:
    """A per-row loss and the prediction it needs.

    Attributes
    ----------
    name : str
    func : callable ``(y, prediction) -> ndarray of shape (n,)``
    response : {"predict", "predict_proba", "margin"}
        ``"margin"`` uses ``decision_function`` when the model has one, else
        ``predict``.
    """

    name: str
    func: Callable[[np.ndarray, np.ndarray], np.ndarray]
    response: str = "predict"

    def __call__(self, y: np.ndarray, pred: np.ndarray) -> np.ndarray:
        return self.func(y, pred)


def _squared(y, p):
    return (y - p) ** 2


def _absolute(y, p):
    return np.abs(y - p)


def _hinge(y, p):
    return np.maximum(0.0, 1.0 - y * p)


def _zero_one(y, p):
    return (y != p).astype(float)


def _log_loss(y, proba):
    # y holds column indices into proba (encoded up front by Predictor).
    eps = np.finfo(float).eps
    picked = proba[np.arange(proba.shape[0]), y.astype(np.intp)]
    return -np.log(np.clip(picked, eps, 1.0))


_NAMED = {
    "squared_error": Loss("squared_error", _squared, "predict"),
    "absolute_error": Loss("absolute_error", _absolute, "predict"),
    "hinge": Loss("hinge", _hinge, "margin"),
    "log_loss": Loss("log_loss", _log_loss, "predict_proba"),
    "zero_one": Loss("zero_one", _zero_one, "predict"),
}


def get_loss(loss: Any, func: str) -> Loss:
    """Resolve a loss name (or an alias of one, ``LOSS_ALIASES``), a ``Loss`` or a callable ``L(y, prediction)``."""
    if isinstance(loss, Loss):
        return loss
    if isinstance(loss, str):
        loss = canonical_loss_name(loss)
        if loss not in _NAMED:
            raise RashomonInputError(
                f"The 'loss' parameter of {func} must be 'auto', one of {list(LOSS_NAMES)} or a callable. Got {loss!r} instead."
            )
        return _NAMED[loss]
    if callable(loss):
        return Loss(getattr(loss, "__name__", "custom"), loss, "predict")
    raise RashomonInputError(
        f"The 'loss' parameter of {func} must be 'auto', one of {list(LOSS_NAMES)} or a callable. Got {loss!r} instead."
    )


def resolve_loss(loss: Any, estimator: Any, func: str, y: Any = None) -> Loss:
    """:func:`get_loss`, with ``"auto"`` replaced by :func:`default_loss` of ``estimator``."""
    if isinstance(loss, str) and loss == "auto":
        loss = default_loss(estimator, y)
    return get_loss(loss, func)


class Predictor:
    """Calls a fitted estimator (or a plain function) on numeric row blocks.

    Keeps DataFrame column names when the model was fitted on a DataFrame, picks
    the response method the loss needs and encodes ``y`` for that loss.
    """

    def __init__(self, estimator: Any, loss: Loss, columns: list[str] | None, func: str):
        self.estimator = estimator
        self.loss = loss
        self.columns = columns
        self.is_callable = not any(hasattr(estimator, m) for m in ("predict", "predict_proba", "decision_function"))
        if self.is_callable and not callable(estimator):
            raise RashomonInputError(
                f"The 'estimator' parameter of {func} must be a fitted estimator with predict/predict_proba "
                f"or a callable f(X) -> predictions. Got {type(estimator).__name__} instead."
            )
        resp = loss.response
        self.method_name = "__call__"
        if self.is_callable:
            self.method: Callable = estimator
        elif resp == "predict_proba":
            if not hasattr(estimator, "predict_proba"):
                raise RashomonInputError(
                    f"The 'loss' parameter of {func} is {loss.name!r}, which needs predicted probabilities, but the "
                    f"estimator {type(estimator).__name__} has no predict_proba."
                )
            self.method = estimator.predict_proba
            self.method_name = "predict_proba"
        elif resp == "margin" and hasattr(estimator, "decision_function"):
            self.method = estimator.decision_function
            self.method_name = "decision_function"
        else:
            if not hasattr(estimator, "predict"):
                raise RashomonInputError(
                    f"The 'estimator' parameter of {func} must have predict for loss {loss.name!r}."
                )
            self.method = estimator.predict
            self.method_name = "predict"

    def encode_y(self, y: np.ndarray, func: str) -> np.ndarray:
        name = self.loss.name
        if name == "hinge":
            classes = getattr(self.estimator, "classes_", None)
            if classes is not None and len(np.asarray(classes)) == 2 and np.isin(y, classes).all():
                # a binary classifier's decision_function is positive for classes_[1]
                return np.where(y == np.asarray(classes)[1], 1.0, -1.0)
            vals = set(np.unique(y).tolist())
            if vals <= {-1.0, 1.0}:
                return y.astype(float)
            if vals <= {0.0, 1.0}:
                return 2.0 * y.astype(float) - 1.0
            raise RashomonInputError(
                f"The 'y' parameter of {func} must hold labels in {{-1, +1}} or {{0, 1}} for the hinge loss. "
                f"Got values {sorted(vals)[:5]} instead."
            )
        if name == "log_loss":
            classes = getattr(self.estimator, "classes_", None)
            if classes is None:
                classes = np.unique(y)
            classes = np.asarray(classes)
            idx = np.searchsorted(classes, y)
            idx = np.clip(idx, 0, len(classes) - 1)
            if not np.all(classes[idx] == y):
                raise RashomonInputError(
                    f"The 'y' parameter of {func} has labels the model does not know (classes_ = {classes.tolist()})."
                )
            return idx.astype(float)
        return y

    def __call__(self, X: np.ndarray) -> np.ndarray:
        data = pd.DataFrame(X, columns=self.columns) if self.columns is not None else X
        out = np.asarray(self.method(data))
        if self.loss.response == "predict_proba":
            if out.ndim != 2:
                raise RashomonInputError("log_loss needs predictions of shape (n_samples, n_classes).")
            return out.astype(float)
        if out.ndim == 2 and out.shape[1] == 1:
            out = out[:, 0]
        return out

    def losses(self, y_enc: np.ndarray, X: np.ndarray) -> np.ndarray:
        return self.losses_from(y_enc, self(X))

    def losses_from(self, y_enc: np.ndarray, pred: np.ndarray) -> np.ndarray:
        vals = np.asarray(self.loss(y_enc, pred), dtype=float)
        if vals.shape != (y_enc.shape[0],):
            raise RashomonInputError(
                f"The loss {self.loss.name!r} must return one value per row; got shape {vals.shape} for {y_enc.shape[0]} rows."
            )
        if not np.all(np.isfinite(vals)):
            raise RashomonInputError(f"The loss {self.loss.name!r} returned NaN or inf for some rows.")
        return vals
