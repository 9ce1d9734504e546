"""Linear classifiers with margin losses: logistic and hinge model classes.

The class is the one of :class:`~rashomon.LinearModelClass` -- scores
``f_θ(x) = μ + ((x - mean)/sd)'β̃`` with ``β̃'Mβ̃ <= r`` (standardised internally,
results mapped back) -- and the loss is applied to the margin ``m = y·f_θ(x)``
with labels y in {-1, +1} ({0, 1} are encoded):

* logistic: ``ℓ(m) = log(1 + e^{-m})`` (smooth, ``0 < ℓ'' <= 1/4``);
* hinge: ``ℓ(m) = max(0, 1 - m)``. The solvers work on its smoothing
  ``ℓ_τ(m) = τ·log(1 + e^{(1 - m)/τ})``, which satisfies
  ``ℓ <= ℓ_τ <= ℓ + τ·log 2`` everywhere; every bound reported for the hinge loss
  accounts for that offset, so it holds for the exact hinge loss.

Both losses are ``s·softplus((c - m)/s)`` (logistic: s = 1, c = 0; smoothed hinge:
s = τ, c = 1), whose second derivative is symmetric and unimodal around c: that is
all the curvature bounds of :class:`MarginLoss` use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

from ..utils.losses import canonical_loss_name
from ..utils.validation import RashomonInputError, Real, check_float
from ._labels import encode_margin_labels
from ._linear import LinearModelClass, LinearParametrization
from .base import ClassMember

__all__ = ["MarginLoss", "LogisticModelClass", "HingeModelClass", "encode_margin_labels"]


@dataclass(frozen=True)
class MarginLoss:
    """``ℓ(m) = s·softplus((c - m)/s)`` and, for the hinge, the exact loss it smooths.

    Attributes
    ----------
    name : {"logistic", "hinge"}
        The solvers' internal name; the class's public ``loss`` is ``"log_loss"`` or ``"hinge"``.
    s, c : float
        Scale and centre (logistic: 1, 0; hinge smoothed at τ: τ, 1).
    """

    name: str
    s: float = 1.0
    c: float = 0.0

    @property
    def offset(self) -> float:
        """``sup (ℓ_smooth - ℓ_exact)``: 0 for logistic, ``τ·log 2`` for the smoothed hinge."""
        return 0.0 if self.name == "logistic" else self.s * math.log(2.0)

    def smoothed(self, tau: float) -> MarginLoss:
        return self if self.name == "logistic" else MarginLoss("hinge", float(tau), 1.0)

    def value(self, m: np.ndarray) -> np.ndarray:
        return self.s * np.logaddexp(0.0, (self.c - m) / self.s)

    def exact(self, m: np.ndarray) -> np.ndarray:
        """The loss the set is defined with (the hinge itself for the hinge)."""
        return self.value(m) if self.name == "logistic" else np.maximum(0.0, 1.0 - m)

    def curvature(self, m: np.ndarray) -> np.ndarray:
        p = expit((self.c - m) / self.s)
        return p * (1.0 - p) / self.s

    def min_curvature(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """``min ℓ''`` on [lo, hi]: at the end farther from c (ℓ'' is symmetric unimodal around c)."""
        far = np.where(np.abs(lo - self.c) > np.abs(hi - self.c), lo, hi)
        return self.curvature(far)

    def max_curvature(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """``max ℓ''`` on [lo, hi]: at c when inside, else at the nearer end."""
        near = np.clip(self.c, lo, hi)
        return self.curvature(near)

    def jj_curvature(self, m0: np.ndarray) -> np.ndarray:
        """Curvature of the Jaakkola–Jordan bound: ``ℓ(m) <= ℓ(m0) + ℓ'(m0)(m - m0) + κ/2 (m - m0)²`` for
        *all* m with ``κ = tanh(u0/2)/(2·s·u0)``, u0 = (c - m0)/s (``1/(4s)`` at u0 = 0)."""
        u = np.abs((self.c - m0) / self.s)
        with np.errstate(invalid="ignore", divide="ignore"):
            k = np.where(u > 1e-6, np.tanh(u / 2) / (2 * np.maximum(u, 1e-300)), 0.25 - u * u / 48)
        return k / self.s

    def sc_curvatures(self, m0: np.ndarray, reach: np.ndarray):
        """Tangent-quadratic curvatures ``(κ_low, κ_high)`` at m0, valid for ``|m - m0| <= reach``.

        The third derivative is bounded by the second, ``|ℓ'''| <= ℓ''/s`` (generalised
        self-concordance, Bach 2010), so ``ℓ''(m0)·e^{-x} <= ℓ''(m0 + δ) <= ℓ''(m0)·e^{x}`` with
        ``x = |δ|/s``. Integrating twice, ``ℓ(m0 + δ) - ℓ(m0) - ℓ'(m0)·δ`` lies between
        ``ℓ''(m0)·s²·(e^{-x} + x - 1)`` and ``ℓ''(m0)·s²·(e^{x} - x - 1)``: curvatures
        ``2ℓ''(m0)·ψ(x)`` and ``2ℓ''(m0)·χ(x)`` with ``ψ(x) = (e^{-x} + x - 1)/x²`` (decreasing) and
        ``χ(x) = (e^{x} - x - 1)/x²`` (increasing), taken at the largest reach.
        """
        x = np.abs(reach) / self.s
        h = self.curvature(m0)
        small = x < 1e-3
        xs = np.where(small, 1.0, x)
        with np.errstate(over="ignore", invalid="ignore"):
            psi = np.where(small, 0.5 - x / 6 + x * x / 24, (np.exp(-xs) + xs - 1) / (xs * xs))
            chi = np.where(small, 0.5 + x / 6 + x * x / 24, (np.expm1(np.minimum(xs, 700.0)) - xs) / (xs * xs))
        return 2 * h * psi, np.where(x > 690, np.inf, 2 * h * chi)

    def inverse(self, v: float) -> float:
        """The margin m with exact loss ``ℓ(m) = v`` (v > 0): ℓ is decreasing."""
        if self.name == "logistic":
            return -math.log(math.expm1(v)) if v < 700 else -v
        return 1.0 - v


def margin_classes(y: np.ndarray) -> np.ndarray:
    """The two labels of y as a classifier member's ``classes_`` (integers when they are whole numbers)."""
    labels = np.unique(np.asarray(y, dtype=float))
    return labels.astype(int) if np.all(labels == np.round(labels)) else labels


class _MarginClass(LinearModelClass):
    """Shared parametrisation of the margin-loss classes (see the module docstring)."""

    loss = "log_loss"

    def margin_loss(self) -> MarginLoss:
        raise NotImplementedError

    def parametrize(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        *,
        columns: list[str] | None = None,
        func: str = "RashomonSet.fit",
        loss: str | None = None,
    ) -> LinearParametrization:
        """Standardisation and norm bound (``norm_bound=None``: the norm of a cross-validated
        L2-regularised fit of the same loss); y may be {0, 1} or ±1. The reference is the loss
        minimiser over the ball, solved by the set."""
        if canonical_loss_name(loss) not in (None, self.loss):
            raise RashomonInputError(
                f"The 'loss' parameter of {func} is {loss!r}, but {type(self).__name__} uses the {self.loss} loss."
            )
        if sample_weight is not None:
            raise RashomonInputError(
                f"The 'sample_weight' parameter of {func} is not supported by {type(self).__name__}."
            )
        ye = encode_margin_labels(np.asarray(y, dtype=float), func)
        fewest = int(min(np.sum(ye > 0), np.sum(ye < 0)))
        if self.norm_bound is None and fewest < 5:  # the norm comes from a 5-fold cross-validated fit
            raise RashomonInputError(
                f"The 'y' parameter of {func} must have at least 5 rows of each class for "
                f"{type(self).__name__}(norm_bound=None), whose norm bound is chosen by 5-fold "
                f"cross-validation. Got {fewest} row(s) of one class instead; give the class a "
                "norm_bound."
            )
        par = super().parametrize(X, ye, None, columns=columns, func=func, loss=self.loss)
        Ms = par.B[par.o :, par.o :]
        ev = np.linalg.eigvalsh(Ms)
        if ev[0] <= 1e-12 * max(ev[-1], 1e-300):
            raise RashomonInputError(
                f"The 'penalty_matrix' parameter of {type(self).__name__} must be positive "
                "definite (a singular penalty leaves the scores unbounded)."
            )
        par.class_name = repr(self)
        par.info["margin_loss"] = self.margin_loss()
        if math.isinf(par.r):
            self._loss_only_start(par, X, ye, func)
        par.classes_ = margin_classes(y)  # the members' labels (a set fitted on encoded labels resets them)
        return par

    def _loss_only_start(self, par: LinearParametrization, X: np.ndarray, ye: np.ndarray, func: str) -> None:
        """``norm_bound=np.inf``: a finite working bound that contains every θ with loss at most that of the
        set's starting point (so the loss minimiser over it is the loss's minimiser); the set then replaces it
        by the bound of the loss's own set at ε (``rashomon.sets`` after the fit). An error when the loss does
        not bound its sets (the classes are linearly separable, or X has dependent columns)."""
        from .norm_bounds import (
            HINGE_PIECES,
            LOGISTIC_PIECES,
            margin_minimiser,
            margin_norm_bound,
            polyhedral_norm_bound,
        )

        Dy = ye[:, None] * par.design(np.asarray(X, dtype=float))
        ml = self.margin_loss()
        # the logistic loss itself; for the hinge its smoothing at scale 1, below the hinge + log 2 everywhere, so
        # {hinge <= 1} (θ = 0 and the hinge's minimiser) lies in {ℓ_1 <= 1 + log 2}
        smooth = ml if ml.name == "logistic" else MarginLoss("hinge", 1.0, 1.0)
        start = margin_minimiser(Dy, smooth)
        r0 = math.inf
        if start is not None:
            e_start = float(np.mean(smooth.value(Dy @ start)))
            level = e_start if ml.name == "logistic" else max(1.0 + math.log(2.0), e_start)
            r0 = margin_norm_bound(Dy, start, level * (1 + 1e-9) + 1e-12, par.B, smooth)
        if not math.isfinite(r0):  # the linear programmes: a certain answer on separable data
            pieces = LOGISTIC_PIECES if ml.name == "logistic" else HINGE_PIECES
            level = math.log(2.0) if ml.name == "logistic" else 1.0  # the loss at θ = 0
            r0 = polyhedral_norm_bound(Dy, pieces, level * (1 + 1e-9) + 1e-12, par.B)
        if not math.isfinite(r0):
            raise RashomonInputError(
                f"The 'norm_bound' parameter of {type(self).__name__} must be finite in {func} here: the "
                f"{self.loss} loss alone does not bound the set, some direction of the coefficients never raises "
                "it (the classes are linearly separable, or X has linearly dependent columns). Got inf instead."
            )
        par.r = r0
        par.info.update(norm_bound=r0, norm_bound_requested=math.inf)

    def fit_reference(self, X: Any, y: Any, sample_weight: Any = None) -> ClassMember:
        """The class's loss minimiser on (X, y): ``argmin e_orig(θ)`` over the norm ball (log loss or hinge loss).

        The same certified solve as :meth:`RashomonSet.fit` uses for ``theta_min_``
        (``rashomon.sets.margin.MarginSet.fit``), so the member's loss on (X, y) is the
        set's ``e_min_`` on those rows. Its parametrisation (standardisation, norm bound)
        travels with it: ``RashomonSet(..., reference=member)`` fitted on other rows (held-out
        data) uses this class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels in {0, 1} or {-1, +1}, both present.
        sample_weight : None
            Not supported by the classifier classes (an error if given).

        Returns
        -------
        ClassMember
            A :class:`~rashomon.ClassifierMember`: ``decision_function`` returns scores (log-odds for the
            logistic class), ``predict`` labels; ``coef_``, ``intercept_``, ``theta_``.
        """
        par, (theta,) = self.minimise_loss(X, y, sample_weight, func=f"{type(self).__name__}.fit_reference")
        return par.estimator(theta)

    def minimise_loss(
        self, X: Any, y: Any, sample_weight: Any = None, *, func: str, folds: Any = None
    ) -> tuple[LinearParametrization, list[np.ndarray]]:
        """``(parametrisation, [θ_min, ...])``: the class parametrised on all of (X, y) (validated on behalf of
        ``func``) and its loss minimiser over that ball on all rows (``folds=None``) or on each set of row
        indices in ``folds`` (the training rows of :func:`~rashomon.select_epsilon`'s folds: one fixed class,
        its minimiser on each fold). θ is in the parametrisation's coordinates.

        Runs with one BLAS thread, as :meth:`RashomonSet.fit` does (the same bits; the norm's cross-validated
        fit is also much faster on a busy machine: breast cancer 0.8 s against 13 s)."""
        from ..utils import single_blas_thread
        from ..utils.validation import check_sample_weight, check_X, check_y

        Xa, columns = check_X(X, func, min_rows=3)
        ya = check_y(y, Xa.shape[0], func)
        w = None if sample_weight is None else check_sample_weight(sample_weight, Xa.shape[0], func)
        rows = [slice(None)] if folds is None else [np.asarray(ix) for ix in folds]
        return single_blas_thread(self._minimise, Xa, ya, w, columns, func, rows)

    def _minimise(self, Xa, ya, w, columns, func, rows):
        from ..sets.margin import MarginSet

        par = self.parametrize(Xa, ya, w, columns=columns, func=func)
        ye = encode_margin_labels(ya, func)
        return par, [MarginSet(par, Xa[ix], ye[ix]).fit()[0] for ix in rows]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(norm_bound={self.norm_bound!r}, fit_intercept={self.fit_intercept}, "
            f"standardize={self.standardize}, penalty_matrix={'None' if self.penalty_matrix is None else '...'})"
        )


class LogisticModelClass(_MarginClass):
    """Linear classifiers ``f(x) = μ + x'β`` with ``β̃'Mβ̃ <= r`` under the logistic loss (``loss = "log_loss"``).

    ``e_orig(f) = mean log(1 + exp(-y f(x)))`` with labels y in {-1, +1} ({0, 1} accepted):
    the log loss of the probabilities ``σ(f(x))``.

    Parameters
    ----------
    norm_bound : float, default=None
        r. ``None`` takes the norm of ``LogisticRegressionCV`` (5 folds, 10 values of C) on
        the standardised features. ``np.inf``: the set of the loss alone (an error when the
        classes are linearly separable). A bound that contains the loss's set is replaced
        by a smaller one certified to contain it (the same set, faster searches).
    penalty_matrix : ndarray of shape (p, p), default=None
        M (positive definite). ``None`` is the identity.
    fit_intercept : bool, default=True
        An unpenalised intercept μ.
    standardize : bool, default=True
        β̃ are coefficients of the standardised features (see :class:`LinearModelClass`).

    Examples
    --------
    >>> import numpy as np
    >>> from rashomon import LogisticModelClass, RashomonSet
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); y = (X[:, 0] + rng.logistic(size=300) > 0).astype(int)
    >>> res = RashomonSet(LogisticModelClass(), 0.05).fit(X, y).model_class_reliance(0)
    >>> bool(res.lower <= res.reference_model.mr <= res.upper)
    True
    """

    loss = "log_loss"

    def __init__(
        self,
        norm_bound: float | None = None,
        penalty_matrix: Any = None,
        fit_intercept: bool = True,
        standardize: bool = True,
    ):
        super().__init__(norm_bound, penalty_matrix, fit_intercept, standardize)

    def margin_loss(self) -> MarginLoss:
        return MarginLoss("logistic", 1.0, 0.0)


class HingeModelClass(_MarginClass):
    """Linear classifiers ``f(x) = μ + x'β`` with ``β̃'Mβ̃ <= r`` under the hinge loss ``max(0, 1 - y f(x))``.

    Parameters
    ----------
    norm_bound : float, default=None
        r. ``None`` takes the norm of a ``LinearSVC`` (hinge loss, liblinear's objective) with C in
        ``logspace(-3, 2, 11)`` chosen by 5-fold cross-validated accuracy on the standardised features, as
        ``GridSearchCV`` would, but every fit solved to its exact optimum (liblinear stops short at large C;
        ``rashomon/model_classes/_svm_path.py``). ``np.inf`` and large bounds: as for
        :class:`LogisticModelClass`.
    penalty_matrix, fit_intercept, standardize
        As for :class:`LogisticModelClass`.
    smoothing : float, default=1e-7
        τ of the smoothed hinge the solvers minimise, relative to the loss scale; the
        lower bounds subtract the smoothing error ``τ·log 2`` exactly, so they hold for the
        hinge itself and are within about τ of tight.
    """

    loss = "hinge"
    _parameter_constraints: dict = {
        **LinearModelClass._parameter_constraints,
        "smoothing": Real(0.0, 0.1, closed="right"),
    }

    def __init__(
        self,
        norm_bound: float | None = None,
        penalty_matrix: Any = None,
        fit_intercept: bool = True,
        standardize: bool = True,
        smoothing: float = 1e-7,
    ):
        super().__init__(norm_bound, penalty_matrix, fit_intercept, standardize)
        self.smoothing = smoothing

    def margin_loss(self) -> MarginLoss:
        tau = check_float(self.smoothing, "smoothing", "HingeModelClass", low=0.0)
        if tau > 0.1:
            raise RashomonInputError(
                f"The 'smoothing' parameter of HingeModelClass must be in (0, 0.1]. Got {tau!r} instead."
            )
        return MarginLoss("hinge", float(tau), 1.0)
