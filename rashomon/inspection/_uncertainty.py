"""Importance for predictive uncertainty (Wood et al., "Model-agnostic variable importance for
predictive uncertainty: an entropy-based approach").

For a model that predicts a distribution q(y | x):

* likelihood-PFI of feature j: mean over rows of ``log q(y|x) - log q(y|x̃)`` where x̃ has
  feature j permuted (how much the fit of the *distribution* degrades);
* entropy-PFI: mean of ``H_q(Y|x̃) - H_q(Y|x)`` (how much the model's *confidence* moves
  when the feature is scrambled).

Predictive distributions come from classifiers with ``predict_proba`` (categorical),
regressors whose ``predict`` takes ``return_std=True`` (Gaussian, e.g.
``GaussianProcessRegressor``), a callable returning ``(mean, std)``, or predictive samples
(the members of a fitted ensemble, or a callable returning an (n, S) array) summarised as a
Gaussian or kept empirical (a Gaussian kernel density with Silverman's bandwidth per row).
Gaussian entropy is ``½ + ½·log(2πσ²)``; categorical ``-Σ q·log q``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from ..utils import DisplayMixin, permutation_indices, permuted
from ..utils.validation import (
    Integral,
    Options,
    Percentiles,
    RandomStateLike,
    RashomonInputError,
    check_grid,
    check_X,
    check_y,
    resolve_features,
    resolve_group,
    seed_from,
    validate_params,
)

if TYPE_CHECKING:
    from ._partial_dependence import PartialDependenceResult


__all__ = [
    "predictive_distribution",
    "likelihood_importance",
    "entropy_importance",
    "UncertaintyImportanceResult",
    "uncertainty_pd",
]

_EPS = np.finfo(float).eps


@dataclass
class _Gaussian:
    mean: np.ndarray
    std: np.ndarray

    def log_prob(self, y):
        s2 = np.maximum(self.std, 1e-300) ** 2
        return -0.5 * np.log(2 * np.pi * s2) - (y - self.mean) ** 2 / (2 * s2)

    def entropy(self):
        return 0.5 + 0.5 * np.log(2 * np.pi * np.maximum(self.std, 1e-300) ** 2)


@dataclass
class _Categorical:
    probs: np.ndarray
    classes: np.ndarray

    def log_prob(self, y):
        idx = np.searchsorted(self.classes, y)
        idx = np.clip(idx, 0, len(self.classes) - 1)
        if not np.all(self.classes[idx] == y):
            raise RashomonInputError("The 'y' parameter holds labels the classifier does not know.")
        return np.log(np.clip(self.probs[np.arange(len(y)), idx], _EPS, 1.0))

    def entropy(self):
        p = np.clip(self.probs, 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=1)


@dataclass
class _Empirical:
    samples: np.ndarray  # n × S

    def _bw(self):
        s = self.samples.std(axis=1, ddof=1)
        return np.maximum(1.06 * s * self.samples.shape[1] ** (-0.2), 1e-12)

    def log_prob(self, y):
        h = self._bw()[:, None]
        z = (y[:, None] - self.samples) / h
        return np.log(np.mean(np.exp(-0.5 * z**2), axis=1) / (np.sqrt(2 * np.pi) * h[:, 0]) + 1e-300)

    def entropy(self):
        # resubstitution estimate: -mean over the samples of the log kernel density
        h = self._bw()[:, None, None]
        S = self.samples
        z = (S[:, :, None] - S[:, None, :]) / h
        dens = np.mean(np.exp(-0.5 * z**2), axis=2) / (np.sqrt(2 * np.pi) * h[:, :, 0])
        return -np.mean(np.log(dens + 1e-300), axis=1)


@validate_params({"summary": Options(("gaussian", "empirical"))})
def predictive_distribution(
    model: Any, *, summary: Literal["gaussian", "empirical"] = "gaussian", columns: list[str] | None = None
) -> Callable[[np.ndarray], Any]:
    """A function ``X -> distribution`` (with ``log_prob(y)`` and ``entropy()``) for ``model``.

    Detection order: ``predict_proba`` (categorical); ``predict`` with a ``return_std``
    argument (Gaussian); a fitted ensemble with ``estimators_`` (member predictions as
    samples); a callable returning ``(mean, std)`` (Gaussian) or an (n, S) array of samples.
    """

    def frame(X):
        return pd.DataFrame(X, columns=columns) if columns is not None else X

    if hasattr(model, "predict_proba"):
        classes = np.asarray(model.classes_)
        return lambda X: _Categorical(np.asarray(model.predict_proba(frame(X)), dtype=float), classes)
    if hasattr(model, "predict") and "return_std" in inspect.signature(model.predict).parameters:

        def gauss(X):
            m, s = model.predict(frame(X), return_std=True)
            return _Gaussian(np.asarray(m, dtype=float).ravel(), np.asarray(s, dtype=float).ravel())

        return gauss
    if hasattr(model, "estimators_") and hasattr(model, "predict"):
        members = list(np.ravel(model.estimators_))
        sampler = lambda X: np.column_stack([np.asarray(e.predict(X), dtype=float).ravel() for e in members])  # noqa: E731
    elif callable(model):
        sampler = None
    else:
        raise RashomonInputError(
            "The 'model' parameter of predictive_distribution must predict a distribution: predict_proba, predict(..., return_std=True), "
            "an ensemble with estimators_, or a callable returning (mean, std) or samples."
        )

    def from_callable(X):
        out = sampler(X) if sampler is not None else model(frame(X))
        if isinstance(out, tuple) and len(out) == 2:
            return _Gaussian(np.asarray(out[0], dtype=float).ravel(), np.asarray(out[1], dtype=float).ravel())
        S = np.asarray(out, dtype=float)
        if S.ndim != 2:
            raise RashomonInputError(
                "A callable model must return (mean, std) or an (n, n_samples) array of predictive samples."
            )
        if summary == "gaussian":
            return _Gaussian(S.mean(axis=1), S.std(axis=1, ddof=1))
        return _Empirical(S)

    return from_callable


@dataclass(frozen=True, repr=False)
class UncertaintyImportanceResult(DisplayMixin):
    """Likelihood- or entropy-based permutation importance.

    Attributes
    ----------
    measure : {"likelihood", "entropy"}
    names : list of str
    importances : ndarray of shape (n_features, n_repeats)
    importances_mean, importances_std : ndarray of shape (n_features,)
    """

    measure: str
    names: list
    importances: np.ndarray
    importances_mean: np.ndarray = field(init=False)
    importances_std: np.ndarray = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "importances_mean", self.importances.mean(axis=1))
        sd = self.importances.std(axis=1, ddof=1) if self.importances.shape[1] > 1 else np.zeros(len(self.names))
        object.__setattr__(self, "importances_std", sd)

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "measure": self.measure,
                "n_features": len(self.names),
                "n_repeats": int(self.importances.shape[1]),
                "importance": dict(zip(self.names, self.importances_mean)),
            },
            [("", self.to_frame())],
        )

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {f"{self.measure}_pfi": self.importances_mean, "std": self.importances_std},
            index=pd.Index(self.names, name="feature"),
        )

    def plot(self, *, other: UncertaintyImportanceResult | None = None, ax: Any = None):
        """Bars; with ``other``, both measures side by side ordered by likelihood-PFI."""
        from ..plotting import UncertaintyImportanceDisplay

        lik, ent = (self, other) if self.measure == "likelihood" else (other, self)
        return UncertaintyImportanceDisplay(lik, ent).plot(ax=ax)


def _pfi(model, X, y, features, n_repeats, random_state, measure, summary, func):
    Xa, columns = check_X(X, func)
    dist = predictive_distribution(model, summary=summary, columns=columns)
    if measure == "likelihood":
        ya = check_y(y, Xa.shape[0], func, numeric=not hasattr(model, "predict_proba"))
        score = lambda Z: dist(Z).log_prob(ya)  # noqa: E731
        base = score(Xa)
    else:
        score = lambda Z: dist(Z).entropy()  # noqa: E731
        base = score(Xa)
    if not np.all(np.isfinite(base)):
        raise RashomonInputError(f"{func}: the model's predictive distribution gives non-finite values.")
    items = resolve_features(features, columns, Xa.shape[1], func)
    perms = permutation_indices(Xa.shape[0], n_repeats, seed_from(random_state, func))
    imp = np.empty((len(items), n_repeats))
    for k, g in enumerate(items.values()):
        for r, perm in enumerate(perms):
            s = score(permuted(Xa, g, perm))
            imp[k, r] = np.mean(base - s) if measure == "likelihood" else np.mean(s - base)
    return UncertaintyImportanceResult(measure, list(items), imp)


@validate_params(
    {"n_repeats": Integral(1), "random_state": RandomStateLike(), "summary": Options(("gaussian", "empirical"))}
)
def likelihood_importance(
    model: Any,
    X: Any,
    y: Any,
    *,
    features: Any = None,
    n_repeats: int = 5,
    random_state: Any = None,
    summary: Literal["gaussian", "empirical"] = "gaussian",
) -> UncertaintyImportanceResult:
    """Likelihood-based PFI: mean over rows of ``log q(y|x) - log q(y|x̃)``, x̃ with the feature permuted.

    Permutations are drawn as in :func:`model_reliance` (shared by all features), so for a
    Gaussian model with fixed σ this equals squared-error PFI / (2σ²) exactly.
    """
    return _pfi(model, X, y, features, n_repeats, random_state, "likelihood", summary, "likelihood_importance")


@validate_params(
    {"n_repeats": Integral(1), "random_state": RandomStateLike(), "summary": Options(("gaussian", "empirical"))}
)
def entropy_importance(
    model: Any,
    X: Any,
    *,
    features: Any = None,
    n_repeats: int = 5,
    random_state: Any = None,
    summary: Literal["gaussian", "empirical"] = "gaussian",
) -> UncertaintyImportanceResult:
    """Entropy-based PFI: mean of ``H_q(Y|x̃) - H_q(Y|x)``; needs no labels.

    Zero for a model whose predictive spread does not depend on x; about zero in expectation
    when the feature is independent of the others (Wood et al., Proposition 1).
    """
    return _pfi(model, X, None, features, n_repeats, random_state, "entropy", summary, "entropy_importance")


@validate_params(
    {
        "measure": Options(("entropy", "likelihood")),
        "grid_resolution": Integral(2),
        "percentiles": Percentiles(),
        "summary": Options(("gaussian", "empirical")),
    }
)
def uncertainty_pd(
    model: Any,
    X: Any,
    feature: Any,
    *,
    y: Any = None,
    measure: Literal["entropy", "likelihood"] = "entropy",
    grid: Any = None,
    grid_resolution: int = 30,
    percentiles: tuple[float, float] = (0.05, 0.95),
    summary: Literal["gaussian", "empirical"] = "gaussian",
) -> PartialDependenceResult:
    """Entropy-PD/ICE (``H_q(Y | x with x_j = v)``) or likelihood-PD/ICE (``log q(y_i | x_i with x_j = v)``).

    Returns a :class:`PartialDependenceResult` (kind "both") whose single output is the
    measure; ``.plot()`` draws it, and :class:`~rashomon.plotting.UncertaintyPDDisplay` adds the original
    point on each ICE curve, colours by class or feature value and rugs per class.
    """
    from ..utils import feature_grid
    from ._partial_dependence import PartialDependenceResult

    func = "uncertainty_pd"
    Xa, columns = check_X(X, func, min_rows=1)
    group = resolve_group(feature, columns, Xa.shape[1], func)
    if len(group) != 1:
        raise RashomonInputError(f"The 'feature' parameter of {func} must be one feature.")
    j = group[0]
    dist = predictive_distribution(model, summary=summary, columns=columns)
    if measure == "likelihood":
        if y is None:
            raise RashomonInputError(f"The 'y' parameter of {func} is needed for measure='likelihood'.")
        ya = check_y(y, Xa.shape[0], func, numeric=not hasattr(model, "predict_proba"))
        f = lambda Z: dist(Z).log_prob(ya)  # noqa: E731
    else:
        f = lambda Z: dist(Z).entropy()  # noqa: E731
    g = feature_grid(Xa[:, j], grid_resolution, percentiles, False) if grid is None else check_grid(grid, 1, func)[0]
    ice = np.empty((Xa.shape[0], len(g)))
    for k, v in enumerate(g):
        Z = Xa.copy()
        Z[:, j] = v
        ice[:, k] = f(Z)
    name = columns[j] if columns else f"x{j}"
    return PartialDependenceResult(
        (name,),
        [g],
        ice.mean(0)[None],
        ice[None],
        ice.std(0)[None],
        [measure],
        "regression",
        False,
        None,
        (False,),
        Xa[:, [j]],
        original_values=f(Xa),
    )
