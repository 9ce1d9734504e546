"""The model-class protocol: what a class must provide for a :class:`~rashomon.RashomonSet`.

A *model class* is a family of models ``f_θ`` indexed by parameters θ ∈ R^d and
bounded by a norm constraint ``θ'Bθ <= r``. The Rashomon set needs five things
from it, and nothing else:

1. **A parametrisation** chosen on the data (:meth:`ModelClass.parametrize`):
   hyper-parameters (standardisation, kernel bandwidth, dictionary, penalty),
   the norm bound ``r`` and the class's own **reference** θ_ref, which lies in
   the class by construction.
2. **The quadratic form of e_orig** (:meth:`Parametrization.e_orig`), a weighted
   sum over rows (so Dask chunks and bootstrap weights fit the same form).
3. **The quadratic form of e_switch** for a feature group, optionally within
   strata (:meth:`Parametrization.e_switch`).
4. **The affine prediction map** ``f_θ(X) = Pθ + p₀`` (:meth:`Parametrization.prediction_map`),
   which turns PD values, predictions and contrasts into linear objectives.
5. **A fitted estimator for any θ** (:meth:`Parametrization.estimator`), so that
   members of the set can be handed to any function taking a fitted model.

The parametrisation is *data-independent once chosen*: the same θ means the same
function on any rows, which is what lets one set be reweighted (bootstrap),
evaluated on held-out rows, or computed chunk by chunk.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if

from .quadratics import Quadratic

__all__ = ["ModelClass", "Parametrization", "ClassMember", "ClassifierMember", "member_of"]


class ModelClass(abc.ABC):
    """Base class of the model classes (the contract is in the method docstrings)."""

    #: The loss whose e_orig/e_switch are quadratics in θ (squared error for the quadratic classes).
    loss: str = "squared_error"

    @abc.abstractmethod
    def parametrize(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        *,
        columns: list[str] | None = None,
        func: str = "RashomonSet.fit",
    ) -> Parametrization:
        """Choose the hyper-parameters and fit the class's reference on validated data.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
        sample_weight : ndarray of shape (n_samples,) or None
            Non-negative row weights (counts).
        columns : list of str or None
            Feature names, for messages and results.
        func : str
            The public function on whose behalf this runs (for error messages).

        Returns
        -------
        Parametrization
            With ``reference_theta`` inside ``{θ : θ'Bθ <= r}`` (to rounding).
        """

    def fit_reference(self, X: Any, y: Any, sample_weight: Any = None) -> ClassMember:
        """The class's reference fitted on (X, y): a member of the class by construction.

        Its parametrisation (hyper-parameters, norm bound) travels with it, so a
        :class:`~rashomon.RashomonSet` given ``reference=`` this member defines the set on
        other rows (e.g. held-out data) with the same class.
        """
        from ..solvers import QCQPSequence
        from ..utils.validation import check_sample_weight, check_X, check_y, feature_names_of

        func = f"{type(self).__name__}.fit_reference"
        Xa, columns = check_X(X, func, min_rows=3)
        ya = check_y(y, Xa.shape[0], func)
        w = None if sample_weight is None else check_sample_weight(sample_weight, Xa.shape[0], func)
        par = self.parametrize(Xa, ya, w, columns=columns, func=func)
        names = feature_names_of(X, func)
        if names is not None:  # the member checks new rows by name (ClassMember.feature_names_in_)
            par.feature_names_in_ = names
        theta = par.reference_theta
        if theta is None:
            eo = par.e_orig(Xa, ya, w)
            if np.isinf(par.r):  # the loss's own set
                from .norm_bounds import squared_loss_minimiser

                theta = squared_loss_minimiser(eo, type(self).__name__, func)
            else:
                theta = QCQPSequence(eo.Q, eo.c, par.B, par.r).solve(0.0).x
        return par.estimator(theta)

    def build(
        self,
        X: np.ndarray,
        y: np.ndarray,
        group: tuple[int, ...],
        columns: list[str] | None = None,
        sample_weight: np.ndarray | None = None,
        strata: np.ndarray | None = None,
    ):
        """One group's :class:`~rashomon.model_classes.quadratics.MCRProblem` on (X, y) (parametrised on the same rows).

        A convenience for tests and one-off use; a :class:`~rashomon.RashomonSet` parametrises once
        and builds e_switch per query.
        """
        from .quadratics import MCRProblem

        par = self.parametrize(X, y, sample_weight, columns=columns)
        names = tuple(columns[i] if columns else f"x{i}" for i in group)
        return MCRProblem(
            par.e_orig(X, y, sample_weight), par.e_switch(X, y, sample_weight, tuple(group), strata), par, names
        )


class Parametrization(abc.ABC):
    """A model class with its hyper-parameters fixed: ``θ ↦ f_θ`` and the ball ``θ'Bθ <= r``.

    Attributes (set by subclasses)
    ------------------------------
    B : ndarray of shape (d, d)
        PSD constraint matrix.
    r : float
        Norm bound.
    reference_theta : ndarray of shape (d,) or None
        The class's own reference (e.g. the ridge / kernel-ridge fit whose norm is r).
    info : dict
        Hyper-parameters, for reports (``norm_bound``, ``ridge_alpha``, ``gamma``, ...).
    class_name : str
    n_features : int
    """

    B: np.ndarray
    r: float
    reference_theta: np.ndarray | None
    info: dict
    class_name: str
    n_features: int
    #: The member's fitted attributes at θ (``coef_``, ``intercept_``, ...), defined by each class.
    member_attributes: Callable[[np.ndarray], dict]
    #: Set by ``fit_reference`` when X had column names (read with getattr, so absent otherwise).
    feature_names_in_: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.B.shape[0])

    @abc.abstractmethod
    def e_orig(self, X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, cache: dict | None = None) -> Quadratic:
        """``e_orig(θ) = Σ w_i (y_i - f_θ(x_i))² / Σ w_i`` as a :class:`Quadratic`.

        ``cache`` is a dict the caller keeps across calls on the same (X, y) (e.g. across the
        weightings of a bootstrap): a class may keep weight-independent pieces in it.
        """

    @abc.abstractmethod
    def e_switch(
        self,
        X: np.ndarray,
        y: np.ndarray,
        w: np.ndarray | None,
        group: tuple[int, ...],
        strata: np.ndarray | None = None,
        cache: dict | None = None,
    ) -> Quadratic:
        """The exact all-pairs e_switch of ``group`` (over ordered pairs of distinct positions) as a quadratic.

        ``strata`` (integer codes) restricts pairs to the same stratum (conditional
        reliance); ``cache`` is a dict the caller keeps across calls on the same (X, y), in which a
        class may keep weight-independent pieces so that a new weighting ``w`` is cheap.
        """

    @abc.abstractmethod
    def prediction_map(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(P, p0)`` such that ``f_θ(X) = P θ + p0``."""

    @abc.abstractmethod
    def estimator(self, theta: np.ndarray) -> ClassMember:
        """A fitted scikit-learn-compatible estimator for parameters θ."""

    def constant_model(self) -> tuple[float, bool]:
        """``(value, free)``: the constant functions of the class are ``f ≡ value`` (θ = 0) and, when ``free``
        (an unpenalised intercept), every constant. The null model (e_null) is the best of them."""
        raise NotImplementedError(f"{type(self).__name__} does not say which constant models it contains.")

    def in_class(self, theta: np.ndarray, rtol: float = 1e-9) -> bool:
        theta = np.asarray(theta, dtype=float)
        return bool(theta @ self.B @ theta <= self.r * (1 + rtol))

    def project(
        self, estimator: Any, X: np.ndarray, func: str, columns: list[str] | None = None, rtol: float = 1e-6
    ) -> np.ndarray:
        """θ of a fitted estimator that lies in the class: least squares on its predictions.

        Raises a :class:`~rashomon.RashomonInputError` that says how far outside the
        class the estimator is when its predictions are not those of any θ (relative
        residual above ``rtol``) or when its θ breaks the norm bound.
        """
        import pandas as pd

        from ..utils.validation import RashomonInputError

        if isinstance(estimator, ClassMember) and estimator.parametrization_ is self:
            return estimator.theta_.copy()
        # names only for estimators fitted with names (scikit-learn warns either way otherwise)
        data = (
            pd.DataFrame(X, columns=columns) if columns is not None and hasattr(estimator, "feature_names_in_") else X
        )
        # a classifier member's predictions are its labels: the class's coordinates are in its scores
        predict = estimator.decision_function if isinstance(estimator, ClassifierMember) else estimator.predict
        pred = np.asarray(predict(data), dtype=float).ravel()
        P, p0 = self.prediction_map(X)
        theta, *_ = np.linalg.lstsq(P, pred - p0, rcond=None)
        scale = 1.0 + float(np.max(np.abs(pred)))
        resid = float(np.max(np.abs(P @ theta + p0 - pred))) / scale
        if resid > rtol:
            raise RashomonInputError(
                f"The 'reference' parameter of {func} is not a model of the class {self.class_name}: its predictions "
                f"differ from the closest member's by up to {resid:.3g} (relative; tolerance {rtol:g}). Pass "
                "reference=None to use the class's own reference, or a model fitted by the class "
                "(model_class.fit_reference(X, y))."
            )
        norm = float(theta @ self.B @ theta)
        if norm > self.r * (1 + rtol):
            raise RashomonInputError(
                f"The 'reference' parameter of {func} lies outside the class's norm bound: its norm is {norm:.6g} > "
                f"r = {self.r:.6g} (by {norm / self.r - 1:.3g} relative). Raise the class's norm_bound."
            )
        return theta


class ClassMember(RegressorMixin, BaseEstimator):
    """A fitted member ``f_θ`` of a model class (returned by queries of a Rashomon set).

    A member of a regression class (linear, kernel) behaves as a fitted scikit-learn regressor:
    ``predict``, ``score`` (R²), ``coef_`` / ``intercept_`` for linear classes, ``dual_coef_`` (one weight
    per dictionary point) and ``dictionary_`` for kernel classes, ``theta_`` (the class coordinates) always.
    A member of a classifier class is a :class:`ClassifierMember`.
    """

    def __init__(self, parametrization: Any = None, theta: Any = None):
        self.parametrization = parametrization
        self.theta = theta
        if parametrization is not None and theta is not None:
            self._set_fitted(parametrization, np.asarray(theta, dtype=float))

    def _set_fitted(self, par: Parametrization, theta: np.ndarray) -> None:
        self.parametrization_ = par
        self.theta_ = theta
        self.n_features_in_ = par.n_features
        for k, v in par.member_attributes(theta).items():
            setattr(self, k, v)

    def fit(self, X: Any = None, y: Any = None) -> ClassMember:
        """Members are fitted by construction; ``fit`` only re-reads the parameters (scikit-learn API)."""
        self._set_fitted(self.parametrization, np.asarray(self.theta, dtype=float))
        return self

    @property
    def feature_names_in_(self) -> np.ndarray:
        """Column names of the frame the class was fitted on (absent when it had none), as in scikit-learn."""
        names = getattr(getattr(self, "parametrization_", None), "feature_names_in_", None)
        if names is None:
            raise AttributeError("feature_names_in_")
        return names

    def predict(self, X: Any) -> np.ndarray:
        """Predictions ``f_θ(X)``, shape (n_samples,); a frame's columns are matched by name."""
        from ..utils.validation import check_new_rows

        Xa = check_new_rows(X, self, "ClassMember.predict")
        P, p0 = self.parametrization_.prediction_map(Xa)
        return P @ self.theta_ + p0

    def __repr__(self) -> str:  # short: parameters can be long vectors
        name = getattr(self.parametrization, "class_name", "?")
        return f"{type(self).__name__}({name}, dim={0 if self.theta is None else len(self.theta)})"


def _has_probabilities(member: ClassifierMember) -> bool:
    """``predict_proba`` exists for the logistic loss only (a hinge score is no log-odds, as for SVC)."""
    ml = member.parametrization_.info.get("margin_loss")
    return getattr(ml, "name", None) == "logistic"


class ClassifierMember(ClassifierMixin, ClassMember):
    """A fitted member ``f_θ`` of a classifier class (logistic or hinge loss): a scikit-learn binary classifier.

    ``decision_function`` gives the scores ``f_θ(X)`` (log-odds for the logistic class), ``predict`` the labels
    (``classes_[1]`` where the score is positive), ``predict_proba`` the probabilities ``σ(f_θ(X))`` for the
    logistic class only (the hinge class has none: ``hasattr(member, "predict_proba")`` is False, as for
    scikit-learn's ``SVC(probability=False)``), ``score`` the accuracy; ``classes_`` are the labels the class
    was fitted on (0/1 or -1/+1), ``coef_`` / ``intercept_`` / ``theta_`` as for a linear member. It works in
    scikit-learn's scorers (``get_scorer("roc_auc")``), ``permutation_importance`` and
    ``CalibrationDisplay.from_estimator``, and pickles.
    """

    @property
    def classes_(self) -> np.ndarray:
        """The two labels, negative first (the labels the class was fitted on)."""
        par = getattr(self, "parametrization_", None)
        if par is None:
            raise AttributeError("classes_")
        return getattr(par, "classes_", np.array([-1, 1]))

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores ``f_θ(X)``, shape (n_samples,): positive for ``classes_[1]`` (log-odds for the logistic class)."""
        from ..utils.validation import check_new_rows

        Xa = check_new_rows(X, self, "ClassifierMember.decision_function")
        P, p0 = self.parametrization_.prediction_map(Xa)
        return P @ self.theta_ + p0

    def predict(self, X: Any) -> np.ndarray:
        """Labels: ``classes_[1]`` where the score is positive, ``classes_[0]`` elsewhere."""
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    @available_if(_has_probabilities)
    def predict_proba(self, X: Any) -> np.ndarray:
        """``[1 - σ(f), σ(f)]``, shape (n_samples, 2), columns in the order of ``classes_`` (logistic class)."""
        from scipy.special import expit

        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])


def member_of(par: Parametrization, theta: np.ndarray) -> ClassMember:
    """The fitted member at θ: a :class:`ClassifierMember` for a classifier class's parametrisation (it carries
    a margin loss), a :class:`ClassMember` otherwise."""
    cls = ClassifierMember if "margin_loss" in getattr(par, "info", {}) else ClassMember
    return cls(par, np.asarray(theta, dtype=float))
