"""Kernel (RKHS) model class for MCR.

Models ``f(x) = μ + Σ_d α_d k(x, d)`` over dictionary points d with
``||f||²_H = α'K_Dα <= r``. With squared loss e_orig and e_switch are
quadratics in α. When the kernel factorises across the switched block X1 and
the rest X2, ``k((x1, x2), d) = k₁(x1, d₁)·k₂(x2, d₂)`` (Gaussian and Laplacian
do), the all-pairs sums collapse to Hadamard products: with ``A = k₁(X1, D₁)``,
``B = k₂(X2, D₂)``, ``K = A∘B``,

    Σ_{i≠j} (Σ_d α_d A_id B_jd)²      = α'[(A'A)∘(B'B) − K'K]α
    Σ_{i≠j} r_j Σ_d α_d A_id B_jd     = α'[(A'1)∘(B'r) − K'r]

so exact e_switch costs O(n·D²) with no pair loop, accumulated over row blocks
(memory O(block·D + D²)); with few distinct switched values (coded features) the
distinct pairs are summed directly in θ-space. Kernels that do not factorise use a
streamed all-pairs fallback, O(n²·D) time. The weight-independent pieces live in
``KernelStatistics`` (``_kernel_stats.py``), kept in a set's cache, so a new
row weighting (a bootstrap resample) costs a few θ-space matrix products.

Parametrisation: with ``K_D = VΛV'`` (eigenvalues below ``1e-10·λ_max``
dropped), ``θ = Λ^{1/2}V'α`` so that ``||f||² = θ'θ`` and the features are
``Φ = K V Λ^{-1/2}``; the reference kernel ridge fit is then ridge regression
on Φ, which is exactly scikit-learn's ``KernelRidge`` when the dictionary is
the set of (unique) training rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

from ..utils import one_blas_thread
from ..utils.validation import (
    AnyOf,
    CallableC,
    FiniteArray,
    Integral,
    Options,
    PositiveGrid,
    RashomonInputError,
    Real,
    check_norm_bound,
    check_X,
)
from ._kernel_param import KernelParametrization
from ._ridge import ridge_fixed, ridge_loo
from .base import ModelClass

__all__ = ["KernelModelClass", "kernel_norm_bound", "nadaraya_watson_gamma"]


def _rbf(X, D, gamma):
    return np.exp(-gamma * cdist(X, D, "sqeuclidean"))


def _laplacian(X, D, gamma):
    return np.exp(-gamma * cdist(X, D, "cityblock"))


_KERNELS = {"rbf": _rbf, "laplacian": _laplacian}


def nadaraya_watson_gamma(
    X: np.ndarray,
    y: np.ndarray,
    gammas: Any = None,
    *,
    kernel: str = "rbf",
    cv: int = 5,
    sample_weight: np.ndarray | None = None,
    random_state: int = 0,
) -> tuple[float, np.ndarray]:
    """Kernel parameter by ``cv``-fold cross-validation of Nadaraya–Watson regression.

    ``ŷ(x) = Σ_i k(x, x_i) y_i / Σ_i k(x, x_i)`` over the training folds; the γ with the least
    held-out squared error is returned with the error of every γ. ``gammas`` defaults to
    ``p^linspace(-5, 5, 40)`` (p = number of features), the grid of Fisher, Rudin & Dominici
    (2019, COMPAS analysis); a row whose kernel weights all underflow is predicted by the
    training mean.
    """
    from sklearn.model_selection import KFold

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    p = X.shape[1]
    grid = float(p) ** np.linspace(-5, 5, 40) if gammas is None else np.asarray(gammas, dtype=float)
    folds = list(KFold(n_splits=cv, shuffle=True, random_state=random_state).split(X))
    err = np.zeros(len(grid))
    for tr, te in folds:
        dist = cdist(X[te], X[tr], "sqeuclidean" if kernel == "rbf" else "cityblock")
        ybar = float(np.average(y[tr], weights=w[tr]))
        for k, g in enumerate(grid):
            K = np.exp(-g * dist) * w[tr]
            s = K.sum(1)
            pred = np.where(s > 0, (K @ y[tr]) / np.where(s > 0, s, 1.0), ybar)
            err[k] += float(w[te] @ (y[te] - pred) ** 2)
    err /= w.sum()
    return float(grid[int(np.argmin(err))]), err


def kernel_norm_bound(
    model_class: Any, ref: dict | None, mu: float, free: bool, info: dict, func: str
) -> tuple[float, np.ndarray | None]:
    """The norm bound of a kernel set and the reference's θ, in memory and out of core alike.

    Parameters
    ----------
    model_class : KernelModelClass
        The class (its ``norm_bound``).
    ref : dict or None
        The kernel-ridge reference (``theta``, ``intercept``, ``alpha``, ``loo_mse``), needed when
        ``norm_bound`` is None.
    mu : float
        The intercept's centre.
    free : bool
        Whether the intercept is a free coordinate of θ.
    info : dict
        The parametrisation's information, updated in place with the reference's penalty and the bound.
    func : str
        The caller's name, for messages.

    Returns
    -------
    r : float
        The norm bound: the reference's squared norm when ``norm_bound`` is None, else ``norm_bound``.
    theta_ref : ndarray or None
        The reference's θ when it sets the bound, else None.
    """
    theta_ref = None
    if model_class.norm_bound is None:
        assert ref is not None
        theta_ref = ref["theta"] if not free else np.r_[ref["intercept"] - mu, ref["theta"]]
        r = float(ref["theta"] @ ref["theta"])
        if not r > 0:
            raise RashomonInputError(
                f"The kernel-ridge reference of {func} has zero norm; give KernelModelClass a norm_bound."
            )
    else:
        r = check_norm_bound(model_class.norm_bound, "KernelModelClass")
    if ref:
        info.update(ridge_alpha=ref["alpha"], ridge_loo_mse=ref["loo_mse"])
    info["norm_bound"] = r
    return r, theta_ref


class KernelModelClass(ModelClass):
    """Kernel models ``f(x) = μ + Σ_d α_d k(x, d)`` with RKHS norm ``α'K_Dα <= r``.

    Parameters
    ----------
    kernel : {"rbf", "laplacian"} or callable, default="rbf"
        scikit-learn's conventions: ``exp(-γ||x - x'||²)`` and
        ``exp(-γ||x - x'||₁)``. A callable ``k(X, D) -> (n, m)`` array is used
        as is; it is not assumed to factorise (streamed all-pairs e_switch).
    gamma : float, "nadaraya_watson" or None, default=None
        Kernel parameter. None: chosen with the ridge penalty by exact
        leave-one-out error over ``gammas × alphas``. ``"nadaraya_watson"``:
        chosen as Fisher et al. chose σ, by 5-fold cross-validation of a
        Nadaraya–Watson kernel regression (``nadaraya_watson_gamma``, over
        ``gammas``, default ``p^linspace(-5, 5, 40)``), then the penalty as for None.
    dictionary : None, int or array of shape (m, p), default=None
        None: the unique rows of the data the class is built on. An int m: a
        seeded random subset of m unique rows (``random_state``). An array:
        those points.
    norm_bound : float, default=None
        r. None: the RKHS norm of the kernel-ridge reference (penalty by exact
        leave-one-out over ``alphas``). ``np.inf``: the set of the loss alone
        (an error where the feature map's design is rank deficient).
    intercept : "mean", "free" or float, default="mean"
        μ fixed at the mean of y (as Fisher et al.), free and unpenalised, or
        fixed at a given value.
    alphas, gammas : array-like, optional
        Grids for the reference fit (defaults ``logspace(-4, 3, 36)`` and
        ``{0.1, 0.3, 1, 3, 10} / (p·mean variance of X)``).
    alpha : float, default=None
        Fixed penalty of the kernel-ridge reference, in scikit-learn's ``KernelRidge``
        convention (``||y - μ - Kw||² + alpha·w'K_D w``; Fisher et al.'s n·α). None:
        chosen by leave-one-distinct-row-out error over ``alphas``.
    e_switch : {"exact", "divide"}, default="exact"
        ``"divide"`` uses the divide estimator's pairs (n rows) instead.
    random_state : int, default=0
    """

    #: constructor arguments, checked when the class is used (``check_model_class_params``, scikit-learn style)
    _parameter_constraints: dict = {
        "kernel": AnyOf(Options(("rbf", "laplacian")), CallableC()),
        "gamma": AnyOf(Real(0.0, closed="neither"), Options(("nadaraya_watson",)), allow_none=True),
        "dictionary": AnyOf(Integral(1), FiniteArray(2), allow_none=True),
        "norm_bound": Real(0.0, closed="neither", allow_none=True, allow_inf=True),
        "intercept": AnyOf(Options(("mean", "free")), Real()),
        "alphas": PositiveGrid(allow_none=True),
        "gammas": PositiveGrid(allow_none=True),
        "e_switch": Options(("exact", "divide")),
        "random_state": Integral(0, 2**32 - 1, allow_none=True),
        "alpha": Real(0.0, closed="neither", allow_none=True),
    }

    def __init__(
        self,
        kernel: str | Callable = "rbf",
        gamma: float | str | None = None,
        dictionary: Any = None,
        norm_bound: float | None = None,
        intercept: Any = "mean",
        alphas: Any = None,
        gammas: Any = None,
        e_switch: str = "exact",
        random_state: int = 0,
        alpha: float | None = None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.dictionary = dictionary
        self.norm_bound = norm_bound
        self.intercept = intercept
        self.alphas = alphas
        self.gammas = gammas
        self.e_switch = e_switch
        self.random_state = random_state
        self.alpha = alpha

    def __repr__(self) -> str:
        return f"KernelModelClass(kernel={self.kernel!r}, gamma={self.gamma!r}, norm_bound={self.norm_bound!r}, intercept={self.intercept!r})"

    # ------------------------------------------------------------------ pieces
    def _k(self, X, D, gamma):
        if callable(self.kernel):  # a user's kernel: its values are checked (shape, finite) before any use
            try:
                K = np.asarray(self.kernel(X, D), dtype=float)
            except (TypeError, ValueError) as exc:
                raise RashomonInputError(
                    f"The 'kernel' parameter of KernelModelClass must return an array of numbers "
                    f"k(X, D). Got an error instead: {exc}"
                ) from None
            if K.shape != (len(X), len(D)) or not np.all(np.isfinite(K)):
                raise RashomonInputError(
                    f"The 'kernel' parameter of KernelModelClass must return a finite array of "
                    f"shape (len(X), len(D)) = ({len(X)}, {len(D)}). Got "
                    f"{'shape ' + str(K.shape) if K.shape != (len(X), len(D)) else 'NaN or inf'} "
                    "instead."
                )
            return K
        return _KERNELS[self.kernel](X, D, gamma)

    def _check(self, func):
        from ..utils.validation import check_model_class_params, check_positive_grid

        check_model_class_params(self)
        check_positive_grid(self.alphas, "alphas", "KernelModelClass")
        check_positive_grid(self.gammas, "gammas", "KernelModelClass")
        if not callable(self.kernel) and self.kernel not in _KERNELS:
            raise RashomonInputError(
                f"The 'kernel' parameter of KernelModelClass must be 'rbf', 'laplacian' or a callable. Got {self.kernel!r} instead."
            )
        if self.e_switch not in ("exact", "divide"):
            raise RashomonInputError(
                f"The 'e_switch' parameter of KernelModelClass must be 'exact' or 'divide'. Got {self.e_switch!r} instead."
            )
        if not (
            self.intercept in ("mean", "free")
            or (isinstance(self.intercept, (int, float)) and np.isfinite(self.intercept))
        ):
            raise RashomonInputError(
                f"The 'intercept' parameter of KernelModelClass must be 'mean', 'free' or a float. Got {self.intercept!r} instead."
            )
        if isinstance(self.gamma, str):
            if self.gamma != "nadaraya_watson":
                raise RashomonInputError(
                    f"The 'gamma' parameter of KernelModelClass must be a float > 0, "
                    f"'nadaraya_watson' or None. Got {self.gamma!r} instead."
                )
        elif self.gamma is not None and not (np.isfinite(self.gamma) and self.gamma > 0):
            raise RashomonInputError(
                f"The 'gamma' parameter of KernelModelClass must be a float > 0. Got {self.gamma!r} instead."
            )

    def dictionary_points(self, X: np.ndarray) -> np.ndarray:
        if self.dictionary is None:
            return np.unique(X, axis=0)
        if isinstance(self.dictionary, (int, np.integer)) and not isinstance(self.dictionary, bool):
            U = np.unique(X, axis=0)
            if not 1 <= self.dictionary <= len(U):
                raise RashomonInputError(
                    f"The 'dictionary' parameter of KernelModelClass must be between 1 and {len(U)} (unique rows). Got {self.dictionary} instead."
                )
            idx = np.sort(np.random.RandomState(self.random_state).choice(len(U), self.dictionary, replace=False))
            return U[idx]
        D, _ = check_X(self.dictionary, "KernelModelClass", param="dictionary", min_rows=1)
        if D.shape[1] != X.shape[1]:
            raise RashomonInputError(
                f"The 'dictionary' parameter of KernelModelClass must have {X.shape[1]} columns. Got {D.shape[1]} instead."
            )
        return D

    def feature_map(self, D: np.ndarray, gamma: float | None) -> tuple[np.ndarray, np.ndarray]:
        """``W`` (m × m') with ``θ = W⁺α``-coordinates: α = W θ, ``||f||² = θ'θ``; and K_D's kept eigenvalues."""
        KD = self._k(D, D, gamma)
        KD = 0.5 * (KD + KD.T)
        lam, V = np.linalg.eigh(KD)
        keep = lam > 1e-10 * lam.max()
        return V[:, keep] / np.sqrt(lam[keep]), lam[keep]

    def _mu(self, y, w=None):
        if self.intercept == "mean":
            return float(np.average(y, weights=w)), False
        if self.intercept == "free":
            return 0.0, True
        return float(self.intercept), False

    def select(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> dict:
        """Kernel parameter, ridge penalty and reference fit.

        The penalty is ``alpha`` when given, else chosen by leave-one-distinct-row-out
        error over ``alphas`` (``ridge_loo``: copies of a row are left out together,
        so duplicated rows do not make an interpolating fit look perfect); the kernel
        parameter is ``gamma`` when given, else chosen on ``gammas`` by the same error.
        """
        D = self.dictionary_points(X)
        mu, free = self._mu(y, sample_weight)
        alphas = np.logspace(-4, 3, 36) if self.alphas is None else np.asarray(self.alphas, dtype=float)
        if self.gamma == "nadaraya_watson" and not callable(self.kernel):
            grid: list[Any] = [
                nadaraya_watson_gamma(
                    X, y, self.gammas, kernel=self.kernel, sample_weight=sample_weight, random_state=self.random_state
                )[0]
            ]
        elif self.gamma is not None or callable(self.kernel):
            grid = [self.gamma]  # a user's callable kernel ignores gamma
        elif self.gammas is not None:
            grid = list(np.asarray(self.gammas, dtype=float))
        else:
            base = 1.0 / (X.shape[1] * max(float(X.var(0).mean()), 1e-12))
            grid = [base * f for f in (0.1, 0.3, 1.0, 3.0, 10.0)]
        best: dict[str, Any] = {}
        for g in grid:
            W, _ = self.feature_map(D, g)
            Phi = self._k(X, D, g) @ W
            if self.alpha is not None:
                theta, icpt = ridge_fixed(Phi, y - mu, float(self.alpha), free, sample_weight)
                a = float(self.alpha)
                loo = ridge_loo(Phi, y - mu, np.array([a]), free, sample_weight)[3] if len(grid) > 1 else math.nan
            else:
                a, theta, icpt, loo = ridge_loo(Phi, y - mu, alphas, free, sample_weight)
            if not best or loo < best["loo_mse"]:
                best = dict(gamma=g, alpha=a, theta=theta, intercept=mu + icpt, loo_mse=loo, W=W, D=D)
        return best

    @one_blas_thread
    def parametrize(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        *,
        columns: list[str] | None = None,
        func: str = "RashomonSet.fit",
    ) -> KernelParametrization:
        """Bandwidth, dictionary, norm bound and the kernel-ridge reference (see :class:`ModelClass`).

        The bandwidth is chosen once here; every query of the set reuses it.
        """
        self._check(func)
        ref: dict[str, Any] = {}
        if (
            (self.gamma is None or isinstance(self.gamma, str)) and not callable(self.kernel)
        ) or self.norm_bound is None:
            ref = self.select(X, y, sample_weight)
        gamma = (
            self.gamma
            if (self.gamma is not None and not isinstance(self.gamma, str))
            else (ref["gamma"] if ref else None)
        )
        D = ref["D"] if ref else self.dictionary_points(X)
        W = ref["W"] if ref else self.feature_map(D, gamma)[0]
        mu, free = self._mu(y, sample_weight)
        info = {"gamma": gamma, "dictionary_size": len(D), "rank": W.shape[1], "intercept": mu}
        r, theta_ref = kernel_norm_bound(self, ref, mu, free, info, func)
        return KernelParametrization(self, D, gamma, W, mu, free, r, theta_ref, info)
