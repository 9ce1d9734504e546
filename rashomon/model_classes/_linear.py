"""Model classes for MCR: each builds the quadratic forms of its parameters."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..utils import one_blas_thread
from ..utils.losses import canonical_loss_name
from ..utils.validation import (
    Boolean,
    FiniteArray,
    PositiveGrid,
    RashomonInputError,
    Real,
    check_model_class_params,
    check_norm_bound,
    check_positive_grid,
)
from ._ridge import distinct_rows, ridge_fixed, ridge_loo  # noqa: F401  (re-exported: the classes' ridge fits)
from .base import ClassMember, ModelClass, Parametrization, member_of
from .quadratics import Quadratic, switched_design_moments

__all__ = ["LinearModelClass", "LinearParametrization", "ridge_loo", "convex_reference_norm", "distinct_rows"]


def _stratified(moments, strata, w):
    """Average ``moments(rows)`` over strata with at least two rows, weights n_g / n'."""
    acc, total = None, 0.0
    for s in np.unique(strata):
        idx = np.where(strata == s)[0]
        ng = float(w[idx].sum())
        if ng < 2:
            continue
        m = moments(idx)
        acc = [ng * v for v in m] if acc is None else [a + ng * v for a, v in zip(acc, m)]
        total += ng
    if acc is None:
        raise RashomonInputError("The 'strata' have no stratum with two or more rows; nothing can be switched.")
    return [a / total for a in acc]


def _reorder(G, g, first, second, d):
    """Moments of the design ordered [first, second] back to θ's order."""
    order = np.concatenate([first, second])
    inv = np.empty(d, dtype=int)
    inv[order] = np.arange(d)
    return G[np.ix_(inv, inv)], g[inv]


def convex_reference_norm(loss: str, Z: np.ndarray, y: np.ndarray, M: np.ndarray) -> float:
    """r for ``norm_bound=None`` under a non-quadratic loss: the norm ``β̃'Mβ̃`` of a cross-validated
    L2-regularised fit of the same loss on the standardised features Z (y in {-1, +1} for
    hinge / logistic): ``LogisticRegressionCV``, ``LinearSVC`` over a grid of C (5-fold grid search, each
    fit exact: :func:`~._svm_path.hinge_svm_cv`), or ridge (absolute)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    loss = canonical_loss_name(loss)  # "logistic" is "log_loss"
    if loss in ("log_loss", "hinge"):
        # scikit-learn's deprecation and convergence notices concern its own defaults, not the
        # norm chosen here (a cross-validated C); they must not leak to users.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", ConvergenceWarning)
            if loss == "log_loss":
                from sklearn.linear_model import LogisticRegressionCV

                coef = LogisticRegressionCV(Cs=10, cv=5).fit(Z, y > 0).coef_.ravel()
            else:
                # GridSearchCV(LinearSVC(loss="hinge"), C in logspace(-3, 2, 11), cv=5) with every fit
                # exact (liblinear stopped at its iteration cap for large C: COMPAS took 18 CPU-s)
                from ._svm_path import hinge_svm_cv

                coef = hinge_svm_cv(Z, y)[1]
    else:
        coef = ridge_loo(Z, y, np.logspace(-4, 4, 81))[1]
    return float(coef @ M @ coef)


class _Scores:
    """An estimator seen through its decision function (the score a margin loss is applied to)."""

    def __init__(self, estimator):
        self.estimator = estimator
        if hasattr(estimator, "feature_names_in_"):
            self.feature_names_in_ = estimator.feature_names_in_

    def predict(self, X):
        return self.estimator.decision_function(X)


class LinearModelClass(ModelClass):
    """Linear models ``f(x) = μ + x'β`` with ``β̃'Mβ̃ <= r`` (squared loss).

    Parameters
    ----------
    norm_bound : float, default=None
        r. ``None`` takes ``r = β̃_ref' M β̃_ref`` from a ridge reference fit
        (``RidgeCV``, efficient leave-one-out over ``alphas``) on the
        standardised features. ``np.inf``: the set of the loss alone (an
        error where the loss does not bound it: X without full column rank).
        A bound that contains the loss's set is replaced by the smallest one
        certified to contain it (the same set; the queries then use closed forms).
    penalty_matrix : ndarray of shape (p, p), default=None
        M (PSD). ``None`` is the identity.
    fit_intercept : bool, default=True
        Include an unpenalised intercept μ (a free direction of the constraint).
    standardize : bool, default=True
        If True, β̃ are the coefficients of the standardised features
        ``(x - mean) / sd`` (population sd of the data MCR is computed on), so
        the default constraint is the identity on standardised features and
        MCR does not depend on the units of X. If False, β̃ = β, the raw
        coefficients. Internally the search always works in standardised
        coordinates (for conditioning); M is transformed accordingly.
    alphas : array-like, default=None
        Ridge penalties tried when ``norm_bound=None`` (default
        ``np.logspace(-4, 4, 81)``).

    Notes
    -----
    θ = (μ, β̃ on standardised features). With the design ``D = [1, Z]``,
    ``e_orig(θ) = θ'(D'D/n)θ - 2(D'y/n)'θ + y'y/n`` and the switched loss uses
    the all-pairs moments of :func:`~rashomon._quadratics.switched_design_moments`,
    so building both costs O(n·p²) with no pair loop.
    """

    #: constructor arguments, checked when the class is used (``check_model_class_params``, scikit-learn style)
    _parameter_constraints: dict = {
        "norm_bound": Real(0.0, closed="neither", allow_none=True, allow_inf=True),
        "penalty_matrix": FiniteArray(2, square=True, allow_none=True),
        "fit_intercept": Boolean(),
        "standardize": Boolean(),
        "alphas": PositiveGrid(allow_none=True),
    }

    def __init__(
        self,
        norm_bound: float | None = None,
        penalty_matrix: Any = None,
        fit_intercept: bool = True,
        standardize: bool = True,
        alphas: Any = None,
    ):
        self.norm_bound = norm_bound
        self.penalty_matrix = penalty_matrix
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.alphas = alphas

    def __repr__(self) -> str:
        return (
            f"LinearModelClass(norm_bound={self.norm_bound!r}, fit_intercept={self.fit_intercept}, "
            f"standardize={self.standardize}, penalty_matrix={'None' if self.penalty_matrix is None else '...'})"
        )

    def coordinates(self, X: np.ndarray, columns: list[str] | None, func: str, w: np.ndarray | None = None):
        """``(mean, sd, Z, M_s)``: the (weighted) standardisation and the penalty in standardised coordinates.

        Without an intercept nothing is centred (centring would change the class) and sd is the
        root mean square.
        """
        n, p = X.shape
        w = np.ones(n) if w is None else w
        nw = float(w.sum())
        mean = (w @ X) / nw if self.fit_intercept else np.zeros(p)
        sd = np.sqrt((w @ (X - mean) ** 2) / nw)
        if np.any(sd <= 0):
            bad = [columns[i] if columns else i for i in np.where(sd <= 0)[0]]
            raise RashomonInputError(
                f"The 'X' parameter of {func} has constant (or all-zero) column(s) {bad}; drop them."
            )
        return mean, sd, (X - mean) / sd, self.standard_penalty(sd)

    def standard_penalty(self, sd: np.ndarray) -> np.ndarray:
        """M_s: the penalty matrix in standardised coordinates, given the standard deviations ``sd``
        (shared by the in-memory and the sufficient-statistics paths)."""
        p = len(sd)
        if self.penalty_matrix is None:
            return np.eye(p) if self.standardize else np.diag(1.0 / sd**2)
        M = np.asarray(self.penalty_matrix, dtype=float)
        if M.shape != (p, p) or not np.all(np.isfinite(M)):
            raise RashomonInputError(
                f"The 'penalty_matrix' parameter of LinearModelClass must be a finite ({p}, {p}) matrix. Got shape {M.shape} instead."
            )
        M = 0.5 * (M + M.T)
        cls = type(self).__name__
        ev = np.linalg.eigvalsh(M)
        if ev[0] < -1e-10 * max(1.0, np.abs(M).max()):
            raise RashomonInputError(
                f"The 'penalty_matrix' parameter of {cls} must be positive semi-definite. Got a "
                f"least eigenvalue of {ev[0]:.3g} instead."
            )
        if self.loss != "squared_error" and ev[0] <= 1e-12 * max(ev[-1], 1e-300):
            raise RashomonInputError(
                f"The 'penalty_matrix' parameter of {cls} must be positive definite (a singular "
                f"penalty leaves the scores unbounded). Got eigenvalues from {ev[0]:.3g} to "
                f"{ev[-1]:.3g} instead."
            )
        if self.norm_bound is None and not ev[-1] > 0:
            raise RashomonInputError(
                f"The 'penalty_matrix' parameter of {cls} must be non-zero when norm_bound=None "
                "(the norm bound is then the reference's β'Mβ, 0 for every β). Got the zero matrix "
                "instead; give a norm_bound or a non-zero penalty."
            )
        return M if self.standardize else M / np.outer(sd, sd)

    def ball(self, Ms: np.ndarray) -> np.ndarray:
        """B of the constraint θ'Bθ <= r in θ = (intercept, β̃) coordinates (the intercept is not penalised)."""
        o = 1 if self.fit_intercept else 0
        p = Ms.shape[0]
        B = np.zeros((p + o, p + o))
        B[o:, o:] = Ms
        return B

    def alpha_grid(self) -> np.ndarray:
        """The ridge penalties searched by leave-one-out (``alphas``, checked; default ``logspace(-4, 4, 81)``)."""
        grid = check_positive_grid(self.alphas, "alphas", "LinearModelClass")
        return np.logspace(-4, 4, 81) if grid is None else grid

    def ridge_reference(
        self, beta: np.ndarray, intercept: float, Ms: np.ndarray, alpha: float, loo: float, info: dict, func: str
    ) -> tuple[float, np.ndarray]:
        """``(r, θ_ref)`` of the ridge reference: its norm defines the class; records α and the LOO error in ``info``."""
        r = float(beta @ Ms @ beta)
        info.update(ridge_alpha=float(alpha), ridge_loo_mse=float(loo))
        if not r > 0:
            raise RashomonInputError(
                f"The ridge reference of {func} has zero norm (y is not predicted by X at "
                "any penalty); give LinearModelClass a norm_bound."
            )
        return r, np.r_[[intercept] * (1 if self.fit_intercept else 0), beta]

    @one_blas_thread
    def parametrize(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        *,
        columns: list[str] | None = None,
        func: str = "RashomonSet.fit",
        loss: str = "squared_error",
    ) -> LinearParametrization:
        """Standardisation, norm bound and the class's reference (see :class:`ModelClass`).

        The reference is the ridge fit (penalty by leave-one-distinct-row-out error) when
        ``norm_bound=None`` -- it minimises e_orig over the ball of its own norm, so it is the
        class's loss minimiser -- and the e_orig minimiser over the ball otherwise (computed by
        the set, which solves that problem once).

        For ``loss`` "hinge", "log_loss" (alias "logistic"; y already in {-1, +1}) or "absolute_error",
        ``norm_bound=None`` takes r from a cross-validated L2-regularised fit of the same loss
        (``convex_reference_norm``); the reference is always the loss minimiser over the
        ball, solved by the set.
        """
        check_model_class_params(self)
        mean, sd, Z, Ms = self.coordinates(X, columns, func, sample_weight)
        o = 1 if self.fit_intercept else 0
        B = self.ball(Ms)
        info: dict = {}
        ref = None
        loss = canonical_loss_name(loss)
        if loss != "squared_error":
            r = (
                convex_reference_norm(loss, Z, y, Ms)
                if self.norm_bound is None
                else check_norm_bound(self.norm_bound, "LinearModelClass")
            )
            if not r > 0:
                raise RashomonInputError(
                    f"The norm bound of {func} must be > 0 (got {r!r}); give LinearModelClass a norm_bound."
                )
            if np.isinf(r) and loss not in ("log_loss", "hinge"):
                raise RashomonInputError(
                    f"The 'norm_bound' parameter of LinearModelClass must be finite for loss={loss!r} in {func} "
                    "(np.inf, the set of the loss alone, is supported for the squared, logistic and hinge "
                    "losses). Got inf instead."
                )
            info.update(norm_bound=r, loss=loss)
            return LinearParametrization(mean, sd, B, r, None, info, repr(self), o)
        if self.norm_bound is None:
            alpha, beta, icpt, loo = ridge_loo(Z, y, self.alpha_grid(), self.fit_intercept, sample_weight)
            r, ref = self.ridge_reference(beta, icpt, Ms, alpha, loo, info, func)
        else:
            r = check_norm_bound(self.norm_bound, "LinearModelClass")
        info["norm_bound"] = r
        return LinearParametrization(mean, sd, B, r, ref, info, repr(self), o)


class LinearParametrization(Parametrization):
    """θ = (μ, β̃): ``f_θ(x) = μ + ((x - mean)/sd)'β̃`` (μ absent without an intercept)."""

    def __init__(self, mean, sd, B, r, reference_theta, info, class_name, offset):
        self.mean, self.sd, self.B, self.r = mean, sd, B, float(r)
        self.reference_theta, self.info, self.class_name = reference_theta, info, class_name
        self.o = offset
        self.n_features = len(mean)

    def design(self, X: np.ndarray) -> np.ndarray:
        if not self.o:
            return (X - self.mean) / self.sd
        D = np.empty((X.shape[0], X.shape[1] + 1))  # [1, (X - mean)/sd] written in place (the same values)
        D[:, 0] = 1.0
        np.subtract(X, self.mean, out=D[:, 1:])
        D[:, 1:] /= self.sd
        return D

    @one_blas_thread
    def e_orig(self, X, y, w=None, cache=None) -> Quadratic:
        D = self.design(X)
        w = np.ones(len(y)) if w is None else w
        nw = float(w.sum())
        Dw = D * w[:, None]
        return Quadratic(D.T @ Dw / nw, Dw.T @ y / nw, float(w @ (y * y)) / nw)

    def _full_moments(self, X, y, cache):
        """``(S, s, cy, sy, syy, n)`` = (D'D, D'1, D'y, Σy, Σy², n) of the unweighted design, computed once per
        data set and kept in ``cache``: every group's all-pairs e_switch follows from them in O(p²)."""
        key = ("linear-full-moments", self.o, id(self))
        if cache is not None and key in cache:
            return cache[key]
        D = self.design(X)
        out = (D.T @ D, D.sum(axis=0), D.T @ y, float(y.sum()), float(y @ y), float(len(y)))
        if cache is not None:
            cache[key] = out
        return out

    @one_blas_thread
    def e_switch(self, X, y, w, group, strata=None, cache=None) -> Quadratic:
        d = self.B.shape[0]
        sw = np.array(group) + self.o
        keep = np.setdiff1d(np.arange(d), sw)
        if strata is None and w is None and isinstance(X, np.ndarray):
            # Σ_{i≠j} over the switched design from the full moments (see switched_design_moments):
            # G11 = (n-1)S₁₁, G22 = (n-1)S₂₂, G12 = s₁s₂' - S₁₂, g = (s₁Σy - D₁'y, (n-1)D₂'y), k = (n-1)Σy²
            S, sd, cy, sy, syy, n = self._full_moments(X, y, cache)
            nn = n * (n - 1)
            G = (
                np.block(
                    [
                        [(n - 1) * S[np.ix_(sw, sw)], np.outer(sd[sw], sd[keep]) - S[np.ix_(sw, keep)]],
                        [(np.outer(sd[sw], sd[keep]) - S[np.ix_(sw, keep)]).T, (n - 1) * S[np.ix_(keep, keep)]],
                    ]
                )
                / nn
            )
            g = np.concatenate([sd[sw] * sy - cy[sw], (n - 1) * cy[keep]]) / nn
            Q1, c1 = _reorder(G, g, sw, keep, d)
            return Quadratic(Q1, c1, (n - 1) * syy / nn)
        D = self.design(X)
        w = np.ones(len(y)) if w is None else w
        if strata is None:
            G, g, k1 = switched_design_moments(D[:, sw], D[:, keep], y, w)
        else:
            G, g, k1 = _stratified(
                lambda idx: switched_design_moments(D[idx][:, sw], D[idx][:, keep], y[idx], w[idx]), strata, w
            )
        Q1, c1 = _reorder(G, g, sw, keep, d)
        return Quadratic(Q1, c1, k1)

    @one_blas_thread
    def prediction_map(self, X):
        return self.design(np.asarray(X, dtype=float)), np.zeros(len(X))

    def constant_model(self) -> tuple[float, bool]:
        """β̃ = 0 is the constant μ (free with an intercept; 0 without)."""
        return 0.0, bool(self.o)

    def member_attributes(self, theta) -> dict:
        coef = theta[self.o :] / self.sd
        return {"coef_": coef, "intercept_": float((theta[0] if self.o else 0.0) - self.mean @ coef)}

    def estimator(self, theta) -> ClassMember:
        return member_of(self, theta)  # a ClassifierMember for the classifier classes

    def convex_reference(
        self, reference: Any, X: np.ndarray, loss: str, func: str, columns: list[str] | None = None
    ) -> np.ndarray:
        """θ of a user reference under a non-quadratic loss, in this parametrisation.

        A member of this parametrisation gives its θ; any other fitted model is projected
        (:meth:`project`, with its error when it is not a member) through the values the loss
        is applied to: ``decision_function`` for hinge / logistic when it has one (a
        classifier), ``predict`` otherwise.
        """
        if (
            canonical_loss_name(loss) in ("hinge", "log_loss")
            and not isinstance(reference, ClassMember)
            and hasattr(reference, "decision_function")
        ):
            reference = _Scores(reference)
        return self.project(reference, X, func, columns)
