"""Quadratic forms in a model's parameters θ, the common currency of MCR.

For squared loss every quantity the MCR search needs is a quadratic in θ:
``e_orig(θ) = θ'Q₀θ - 2c₀'θ + k₀`` and ``e_switch(θ) = θ'Q₁θ - 2c₁'θ + k₁``,
with the model class's constraint ``θ'Bθ <= r``. A model class only builds
these; the search, envelope and plots never look at the data again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # base imports this module
    from .base import Parametrization

__all__ = ["Quadratic", "MCRProblem", "switched_design_moments"]


@dataclass(frozen=True)
class Quadratic:
    """``q(θ) = θ'Qθ - 2c'θ + k``."""

    Q: np.ndarray
    c: np.ndarray
    k: float

    def __call__(self, theta: np.ndarray) -> float:
        theta = np.asarray(theta, dtype=float)
        return float(theta @ self.Q @ theta - 2 * self.c @ theta + self.k)

    def evaluate_many(self, thetas: np.ndarray) -> np.ndarray:
        """Values at each row of ``thetas`` (shape (m, d))."""
        return np.einsum("ij,jk,ik->i", thetas, self.Q, thetas) - 2 * thetas @ self.c + self.k


def switched_design_moments(D1: np.ndarray, D2: np.ndarray, y: np.ndarray, w: np.ndarray | None = None):
    """Moments of the all-pairs switched design without any pair loop.

    Rows of the switched design are ``(d1_i, d2_j)`` for ordered pairs i ≠ j with
    response ``y_j``. Returns ``(G, g, k)`` with
    ``G = Σ_{i≠j} z_ij z_ij' / (n(n-1))``, ``g = Σ_{i≠j} y_j z_ij / (n(n-1))``,
    ``k = Σ_{i≠j} y_j² / (n(n-1))``, using
    ``Σ_{i≠j} d1_i d2_j' = (1'D1)'(1'D2) - D1'D2`` (the cross block X1'WX2 with
    W = 11' - I) and ``Σ_{i≠j} a_i = (n-1) Σ a``. Cost O(n·d²).

    With counts ``w`` (a bootstrap resample: row i appears w_i times, n = Σw),
    the sum runs over ordered pairs of distinct *positions*:
    ``Σ_{i,j} w_i w_j L_ij - Σ_i w_i L_ii``, which keeps the same form with
    weighted sums.
    """
    if w is None:
        w = np.ones(D1.shape[0])
    n = float(w.sum())
    s1, s2, sy = D1.T @ w, D2.T @ w, float(w @ y)
    nn = n * (n - 1)
    D1w, D2w = D1 * w[:, None], D2 * w[:, None]
    G11 = (n - 1) * (D1.T @ D1w)
    G22 = (n - 1) * (D2.T @ D2w)
    G12 = np.outer(s1, s2) - D1w.T @ D2
    G = np.block([[G11, G12], [G12.T, G22]]) / nn
    g = np.concatenate([s1 * sy - D1w.T @ y, (n - 1) * (D2w.T @ y)]) / nn
    k = (n - 1) * float(w @ (y * y)) / nn
    return G, g, k


@dataclass(frozen=True)
class MCRProblem:
    """One feature group's problem: the quadratics of a fitted class, handed to the γ-search.

    Attributes
    ----------
    e_orig, e_switch : Quadratic
        Losses as quadratics in θ.
    par : Parametrization
        The class with its hyper-parameters fixed (``B``, ``r``, predictions, estimators).
    feature_names : tuple of str
        The switched features.
    """

    e_orig: Quadratic
    e_switch: Quadratic
    par: Parametrization
    feature_names: tuple = ()

    @property
    def B(self) -> np.ndarray:
        return self.par.B

    @property
    def r(self) -> float:
        return self.par.r

    @property
    def class_name(self) -> str:
        return self.par.class_name

    @property
    def info(self) -> dict:
        return self.par.info

    def to_model(self, theta: np.ndarray) -> dict:
        """The model θ in the user's units: ``coef``/``intercept`` (linear) or ``alpha``/``dictionary`` (kernel), and ``predict``."""
        est = self.par.estimator(theta)
        names = {
            "coef_": "coef",
            "intercept_": "intercept",
            "dual_coef_": "alpha",
            "dictionary_": "dictionary",
            "gamma_": "gamma",
        }
        out = {names[k]: getattr(est, k) for k in names if hasattr(est, k)}
        out["predict"] = est.predict
        return out
