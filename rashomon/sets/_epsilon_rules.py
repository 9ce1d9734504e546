"""Data-driven ε: one vocabulary of rules, each returning the ε (and how to read it) for a RashomonSet.

``"holdout_cv"``
    The paper's rule (Fisher, Rudin & Dominici 2019, §10; the audit's default):
    ε_abs = e_ref + ``multiplier`` × the class's K-fold cross-validated loss
    (``epsilon_kind="additive"``). With a reference fitted on training rows and
    the set fitted on held-out rows (as :func:`rashomon.audit` does), this is the
    held-out + CV rule of the paper.
``"cv_1se"``
    The one-standard-error rule: models whose loss is within one standard error of
    the cross-validated loss estimate are statistically indistinguishable, so
    ε_abs = e_ref + SE, SE = sd(per-fold losses) / √K (``"additive"``).
``"profile"``
    The profile-likelihood (t) rule for Gaussian errors: relative
    ε = t²_{1-α/2, n-d} / (n-d), with d the number of parameters (intercept
    included). For the unbounded linear class (a norm bound large enough to be
    inactive) and the least-squares reference, every coefficient range of the set
    is exactly the OLS t-interval at level 1-α.
``"likelihood_ratio"``
    The asymptotic likelihood-ratio rule: relative ε = exp(χ²_{1, 1-α} / n) - 1
    (the models a one-degree-of-freedom LR test at level α does not reject).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..utils.validation import (
    RashomonInputError,
    check_choice,
    check_float,
    check_positive_int,
    check_X,
    check_y,
    seed_from,
)

__all__ = ["EPSILON_RULES", "EpsilonChoice", "select_epsilon"]

EPSILON_RULES = ("holdout_cv", "cv_1se", "profile", "likelihood_ratio")


@dataclass(frozen=True)
class EpsilonChoice:
    """An ε chosen from the data, with the reading that gives it its meaning.

    Pass it on as ``RashomonSet(model_class, choice.epsilon, epsilon_kind=choice.epsilon_kind)``
    (or :meth:`rashomon_set`).

    Attributes
    ----------
    rule : str
    epsilon : float
    epsilon_kind : {"additive", "relative"}
    description : str
        The rule in words, with its numbers (for reports).
    cv_loss, cv_se : float
        Cross-validated loss and its standard error (CV rules; NaN otherwise).
    fold_losses : ndarray or None
        Per-fold held-out losses (CV rules).
    """

    rule: str
    epsilon: float
    epsilon_kind: str
    description: str
    cv_loss: float = math.nan
    cv_se: float = math.nan
    fold_losses: np.ndarray | None = field(repr=False, default=None)

    def rashomon_set(self, model_class: Any, **kwargs: Any):
        """An (unfitted) :class:`~rashomon.RashomonSet` of ``model_class`` with this ε."""
        from ._rashomon_set import RashomonSet

        return RashomonSet(model_class, self.epsilon, epsilon_kind=self.epsilon_kind, **kwargs)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"rule": self.rule, "epsilon": self.epsilon, "epsilon_kind": self.epsilon_kind,
                              "cv_loss": self.cv_loss, "cv_se": self.cv_se, "description": self.description}])

    def plot(self, *, ax: Any = None):
        """Per-fold CV losses with their mean ± SE and the chosen ε (CV rules), or ε as a bar."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        if self.fold_losses is not None:
            k = len(self.fold_losses)
            ax.plot(np.arange(1, k + 1), self.fold_losses, "o", color="C0", label="held-out loss per fold")
            ax.axhline(self.cv_loss, color="k", label=f"CV loss {self.cv_loss:.4g}")
            ax.axhspan(self.cv_loss - self.cv_se, self.cv_loss + self.cv_se, color="C0", alpha=0.2,
                       label=f"± SE {self.cv_se:.3g}")
            ax.set_xlabel("fold")
            ax.set_ylabel("loss")
        else:
            ax.bar([self.rule], [self.epsilon], color="C0", label=f"ε ({self.epsilon_kind}) = {self.epsilon:.4g}")
            ax.set_ylabel(f"ε ({self.epsilon_kind})")
        ax.set_title(f"ε by the {self.rule} rule: {self.epsilon:.4g} ({self.epsilon_kind})")
        ax.legend(loc="best")
        return ax


def _cv_losses(model_class, X, y, w, cv, seed):
    from sklearn.model_selection import KFold

    folds = KFold(n_splits=cv, shuffle=True, random_state=seed).split(X)
    losses = []
    for tr, te in folds:
        member = model_class.fit_reference(X[tr], y[tr], None if w is None else w[tr])
        err = (y[te] - member.predict(X[te])) ** 2
        losses.append(float(np.average(err, weights=None if w is None else w[te])))
    return np.array(losses)


def select_epsilon(model_class: Any, X: Any, y: Any, rule: str = "cv_1se", *, cv: int = 10,
                   multiplier: float = 0.1, alpha: float = 0.05, sample_weight: Any = None,
                   random_state: Any = 0) -> EpsilonChoice:
    """Choose ε from the data by a named rule (see the module notes for each rule).

    Parameters
    ----------
    model_class : LinearModelClass or KernelModelClass
    X, y : the data the set will be fitted on.
    rule : {"holdout_cv", "cv_1se", "profile", "likelihood_ratio"}, default="cv_1se"
    cv : int, default=10
        Folds of the CV rules.
    multiplier : float, default=0.1
        ``"holdout_cv"``: ε = multiplier × CV loss.
    alpha : float, default=0.05
        Level of the ``"profile"`` and ``"likelihood_ratio"`` rules.
    sample_weight : array-like, default=None
    random_state : int, RandomState or None, default=0
        Fold assignment.

    Returns
    -------
    EpsilonChoice
    """
    from scipy import stats

    func = "select_epsilon"
    check_choice(rule, EPSILON_RULES, "rule", func)
    Xa, _ = check_X(X, func, min_rows=3)
    ya = check_y(y, Xa.shape[0], func)
    n = Xa.shape[0]
    if rule in ("profile", "likelihood_ratio"):
        alpha = check_float(alpha, "alpha", func, low=0.0, strict=True, high=1.0)
        if rule == "likelihood_ratio":
            eps = math.expm1(float(stats.chi2.ppf(1 - alpha, 1)) / n)
            return EpsilonChoice(rule, eps, "relative", f"likelihood-ratio rule: relative ε = exp(χ²₁({1 - alpha:g})/n)"
                                 f" - 1 = {eps:.4g} (n = {n})")
        from ..model_classes import LinearModelClass

        if not isinstance(model_class, LinearModelClass):
            raise RashomonInputError(f"The 'profile' rule of {func} needs a LinearModelClass (Gaussian linear model). "
                                     f"Got {type(model_class).__name__} instead.")
        d = Xa.shape[1] + (1 if model_class.fit_intercept else 0)
        if n - d < 1:
            raise RashomonInputError(f"The 'profile' rule of {func} needs more rows than parameters (n = {n}, d = {d}).")
        t = float(stats.t.ppf(1 - alpha / 2, n - d))
        eps = t * t / (n - d)
        return EpsilonChoice(rule, eps, "relative", f"profile (t) rule: relative ε = t²/(n-d) = {t:.4g}²/{n - d} = "
                             f"{eps:.4g}; coefficient ranges are the OLS {1 - alpha:.0%} t-intervals when the norm "
                             "bound is inactive")
    cv = check_positive_int(cv, "cv", func, minimum=2)
    if cv > n:
        raise RashomonInputError(f"The 'cv' parameter of {func} must be at most the number of rows ({n}). Got {cv}.")
    w = None
    if sample_weight is not None:
        from ..utils.validation import check_sample_weight

        w = check_sample_weight(sample_weight, n, func)
    losses = _cv_losses(model_class, Xa, ya, w, cv, seed_from(random_state, func))
    cv_loss, se = float(losses.mean()), float(losses.std(ddof=1) / math.sqrt(cv))
    if rule == "holdout_cv":
        multiplier = check_float(multiplier, "multiplier", func, low=0.0)
        eps = multiplier * cv_loss
        desc = f"held-out + CV rule: ε_abs = e_ref + {multiplier:g} × {cv}-fold CV loss ({cv_loss:.4g}) = e_ref + {eps:.4g}"
    else:
        eps = se
        desc = f"one-standard-error rule: ε_abs = e_ref + SE of the {cv}-fold CV loss = e_ref + {se:.4g}"
    return EpsilonChoice(rule, eps, "additive", desc, cv_loss, se, losses)
