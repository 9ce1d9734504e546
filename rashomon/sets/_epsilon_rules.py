"""Data-driven ε: one vocabulary of rules, each returning the ε (and how to read it) for a RashomonSet.

Every rule is defined for the class's own loss: squared error for the linear and kernel classes,
log loss for :class:`~rashomon.LogisticModelClass`, hinge loss for :class:`~rashomon.HingeModelClass`.

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
    Linear class: the profile-likelihood (t) rule for Gaussian errors: relative
    ε = t²_{1-α/2, n-d} / (n-d), with d the number of parameters (intercept
    included). For the unbounded linear class (a norm bound large enough to be
    inactive) and the least-squares reference, every coefficient range of the set
    is exactly the OLS t-interval at level 1-α.
    Logistic class: additive ε = χ²_{1, 1-α} / (2n), so the set (reference = the minimiser)
    is ``{θ : 2n(L(θ) - L_min) <= χ²_{1,1-α}}`` and the range of each coefficient over it is
    that coefficient's profile-likelihood interval -- when the class's norm bound does not cut
    the set. The rule checks that and raises an error asking for a larger norm bound otherwise:
    the loss minimiser must lie strictly inside the ball, and so must the members attaining the
    set's coefficient ranges, which it computes (a range attained strictly inside the ball is the
    range of the unbounded set, by convexity).
``"likelihood_ratio"``
    The asymptotic likelihood-ratio rule (the models a one-degree-of-freedom LR test at level α
    does not reject). Gaussian (squared-error classes): relative ε = exp(χ²_{1, 1-α} / n) - 1.
    Logistic: the LR statistic is 2n(L(θ) - L_min) for the mean log loss L, so additive
    ε = χ²_{1, 1-α} / (2n) (the same ε as ``"profile"``, without its check).

The hinge loss is no log-likelihood: ``"profile"`` and ``"likelihood_ratio"`` are errors for
the hinge class, as ``"profile"`` is for the kernel class.

For the classifier classes, each fold's model is the class's loss minimiser on the training
folds over the class parametrised once on all rows given (the ball of :meth:`fit_reference` on
those rows; the same certified solve), folds are stratified by label, and each fold's loss is the
mean log loss or hinge loss of its held-out rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..utils import DisplayMixin
from ..utils.validation import (
    RashomonInputError,
    check_choice,
    check_float,
    check_positive_int,
    check_sample_weight,
    check_X,
    check_y,
    seed_from,
)

__all__ = ["EPSILON_RULES", "EpsilonChoice", "select_epsilon"]

EPSILON_RULES = ("holdout_cv", "cv_1se", "profile", "likelihood_ratio")


@dataclass(frozen=True, repr=False)
class EpsilonChoice(DisplayMixin):
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
    e_min, e_null : float
        The class's least loss on all rows and its null model's (the best constant model's).
    explained_epsilon : float
        Where the rule lands on the explained scale, ``(ε_abs - e_min)/(e_null - e_min)`` with the minimiser
        as reference: the set keeps ``1 - explained_epsilon`` of the loss the class explains; 1 or more means
        it contains a constant model.
    """

    rule: str
    epsilon: float
    epsilon_kind: Literal["additive", "relative"]
    description: str
    cv_loss: float = math.nan
    cv_se: float = math.nan
    fold_losses: np.ndarray | None = field(repr=False, default=None)
    e_min: float = math.nan
    e_null: float = math.nan
    explained_epsilon: float = math.nan

    def _display_(self) -> tuple[dict, list]:
        fields = {"rule": self.rule, "epsilon": self.epsilon, "epsilon_kind": self.epsilon_kind}
        if math.isfinite(self.cv_loss):
            fields.update(cv_loss=self.cv_loss, cv_se=self.cv_se)
        fields.update(e_min=self.e_min, e_null=self.e_null, explained_epsilon=self.explained_epsilon)
        x = self.explained_epsilon
        where = "the set contains the null model" if x >= 1 else f"the set keeps {1 - x:.1%} of the explained loss"
        return fields, [(self.description, None), (f"On the explained scale ε lands at {x:.4g}: {where}.", None)]

    def rashomon_set(self, model_class: Any, **kwargs: Any):
        """An (unfitted) :class:`~rashomon.RashomonSet` of ``model_class`` with this ε."""
        from ._rashomon_set import RashomonSet

        return RashomonSet(model_class, self.epsilon, epsilon_kind=self.epsilon_kind, **kwargs)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "rule": self.rule,
                    "epsilon": self.epsilon,
                    "epsilon_kind": self.epsilon_kind,
                    "cv_loss": self.cv_loss,
                    "cv_se": self.cv_se,
                    "e_min": self.e_min,
                    "e_null": self.e_null,
                    "explained_epsilon": self.explained_epsilon,
                    "description": self.description,
                }
            ]
        )

    def plot(self, *, ax: Any = None):
        """Per-fold CV losses with their mean ± SE and the chosen ε (CV rules), or ε as a bar."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(layout="constrained")
        if self.fold_losses is not None:
            k = len(self.fold_losses)
            ax.plot(np.arange(1, k + 1), self.fold_losses, "o", color="C0", label="held-out loss per fold")
            ax.axhline(self.cv_loss, color="k", label=f"CV loss {self.cv_loss:.4g}")
            ax.axhspan(
                self.cv_loss - self.cv_se,
                self.cv_loss + self.cv_se,
                color="C0",
                alpha=0.2,
                label=f"± SE {self.cv_se:.3g}",
            )
            ax.set_xlabel("fold")
            ax.set_ylabel("loss")
        else:
            ax.bar([self.rule], [self.epsilon], color="C0", label=f"ε ({self.epsilon_kind}) = {self.epsilon:.4g}")
            ax.set_ylabel(f"ε ({self.epsilon_kind})")
        ax.set_title(f"ε by the {self.rule} rule: {self.epsilon:.4g} ({self.epsilon_kind})")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8)  # outside the data
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


def _margin_cv_losses(model_class, X, y, sample_weight, cv, seed, func):
    """Per-fold held-out log / hinge loss of the class's minimiser on the training folds (stratified folds)."""
    from sklearn.model_selection import StratifiedKFold

    from ..model_classes import encode_margin_labels

    ye = encode_margin_labels(y, func)
    rare = int(min(np.sum(ye > 0), np.sum(ye < 0)))
    if cv > rare:
        raise RashomonInputError(
            f"The 'cv' parameter of {func} must be at most the number of rows of the rarer label "
            f"({rare}) for {type(model_class).__name__} (folds are stratified by label). Got {cv} "
            "instead."
        )
    folds = list(StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed).split(X, ye))
    par, thetas = model_class.minimise_loss(X, y, sample_weight, func=func, folds=[tr for tr, _ in folds])
    loss = par.info["margin_loss"]
    return np.array(
        [float(np.mean(loss.exact(ye[te] * (par.design(X[te]) @ th)))) for (_, te), th in zip(folds, thetas)]
    )


#: rules with a meaning per class family (see the module notes)
_ALLOWED = {
    "LogisticModelClass": (EPSILON_RULES, "log loss"),
    "HingeModelClass": (
        ("holdout_cv", "cv_1se"),
        "the hinge loss is not a log-likelihood, so no likelihood-ratio or profile-likelihood rule is defined for it",
    ),
    "KernelModelClass": (
        ("holdout_cv", "cv_1se", "likelihood_ratio"),
        "the profile (t) rule needs the Gaussian linear model of a LinearModelClass",
    ),
}


def _family(model_class) -> str:
    from ..model_classes import HingeModelClass, KernelModelClass, LogisticModelClass

    for cls in (LogisticModelClass, HingeModelClass, KernelModelClass):
        if isinstance(model_class, cls):
            return cls.__name__
    return "LinearModelClass"


def _check_rule(rule, family, func):
    if family not in _ALLOWED:
        return
    allowed, why = _ALLOWED[family]
    if rule not in allowed:
        raise RashomonInputError(
            f"The 'rule' parameter of {func} must be one of {list(allowed)} for {family} ({why}). Got {rule!r} instead."
        )


def _logistic_lr(model_class, X, y, rule, alpha, n, func) -> EpsilonChoice:
    """``"likelihood_ratio"`` / ``"profile"`` for the logistic class: additive ε = χ²₁(1-α)/(2n); the profile rule
    also checks that no coefficient range is attained on the norm ball (see the module notes)."""
    from scipy import stats

    from ..model_classes import encode_margin_labels

    encode_margin_labels(y, func)
    q = float(stats.chi2.ppf(1 - alpha, 1))
    eps = q / (2 * n)
    desc = (
        f"likelihood-ratio rule for the log loss: ε_abs = e_ref + χ²₁({1 - alpha:g})/(2n) = e_ref + {q:.4g}/{2 * n}"
        f" = e_ref + {eps:.4g} (with e_ref = e_min: the models with LR statistic 2n(L - L_min) <= {q:.4g})"
    )
    if rule == "likelihood_ratio":
        return EpsilonChoice(rule, eps, "additive", desc)
    from ._rashomon_set import RashomonSet

    rs = RashomonSet(model_class, eps, epsilon_kind="additive").fit(X, y)
    B, r = rs.parametrization_.B, rs.parametrization_.r
    th = rs.theta_min_
    if th @ B @ th >= r * (1 - 1e-6):  # the minimiser itself on the ball (the cheap test, first)
        on_ball = ["the loss minimiser lies"]
    else:  # a range attained strictly inside the ball is the range of the unbounded set (convexity)
        cr = rs.coef_range(return_models=True)
        on_ball = [
            name
            for name, lo, hi in zip(cr.names, cr.lower_models, cr.upper_models)
            if max(lo @ B @ lo, hi @ B @ hi) >= r * (1 - 1e-6)
        ]
        on_ball = (
            [
                f"the members attaining the ranges of {on_ball[:5]}"
                + (f" and {len(on_ball) - 5} more" if len(on_ball) > 5 else "")
                + " lie"
            ]
            if on_ball
            else []
        )
    if on_ball:
        raise RashomonInputError(
            f"The 'rule' parameter of {func} is 'profile', whose coefficient ranges are the profile-likelihood "
            f"intervals only when the class's norm bound does not cut the set; here {on_ball[0]} on the norm "
            f"bound (r = {r:.6g}). Give {type(model_class).__name__} a larger norm_bound, or use "
            "rule='likelihood_ratio' (the same ε without this reading)."
        )
    return EpsilonChoice(
        rule,
        eps,
        "additive",
        "profile-likelihood rule for the log loss: "
        + desc[desc.index(":") + 2 :]
        + f"; each coefficient range is its {1 - alpha:.0%} profile-likelihood interval (checked: "
        "no range is attained on the norm bound)",
    )


def select_epsilon(
    model_class: Any,
    X: Any,
    y: Any,
    rule: str = "cv_1se",
    *,
    cv: int = 10,
    multiplier: float = 0.1,
    alpha: float = 0.05,
    sample_weight: Any = None,
    random_state: Any = 0,
) -> EpsilonChoice:
    """Choose ε from the data by a named rule, in the class's own loss (see the module notes for each rule).

    Parameters
    ----------
    model_class : LinearModelClass, KernelModelClass, LogisticModelClass or HingeModelClass
        The loss is the class's: squared error, log loss (logistic) or hinge loss (hinge).
    X, y : the data the set will be fitted on.
        y must not be constant; for a classifier class, labels in {0, 1} or {-1, +1}.
    rule : {"holdout_cv", "cv_1se", "profile", "likelihood_ratio"}, default="cv_1se"
        Allowed per class: all four for the linear and logistic classes; ``"holdout_cv"``,
        ``"cv_1se"`` and ``"likelihood_ratio"`` for the kernel class; ``"holdout_cv"`` and
        ``"cv_1se"`` for the hinge class (its loss is no log-likelihood).
    cv : int, default=10
        Folds of the CV rules (stratified by label for a classifier class). Each fold's model
        is the class's loss minimiser on the training folds; its loss is the class's loss on the
        held-out fold (mean log loss for logistic, mean hinge loss for hinge).
    multiplier : float, default=0.1
        ``"holdout_cv"``: ε = multiplier × CV loss.
    alpha : float, default=0.05
        Level of the ``"profile"`` and ``"likelihood_ratio"`` rules.
    sample_weight : array-like, default=None
        Not supported by the classifier classes.
    random_state : int, RandomState or None, default=0
        Fold assignment.

    Returns
    -------
    EpsilonChoice
        With ``e_min``, ``e_null`` and ``explained_epsilon``: where the rule lands between the best model of the
        class (0) and the null model (1), the reference taken as the minimiser. For the logistic class, ``"likelihood_ratio"`` and ``"profile"`` give the additive
        ε = χ²_{1,1-α}/(2n); ``"profile"`` checks that the set's coefficient ranges are then
        the profile-likelihood intervals (an error if the class's norm bound cuts them).

    Raises
    ------
    RashomonInputError
        A rule with no meaning for the class, a constant y, or invalid arguments.
    """
    from ._epsilon import explained_epsilon, null_scale

    func = "select_epsilon"
    choice = _select(model_class, X, y, rule, cv, multiplier, alpha, sample_weight, random_state, func)
    Xa, _ = check_X(X, func, min_rows=3)
    ya = check_y(y, Xa.shape[0], func)
    w = None if sample_weight is None else check_sample_weight(sample_weight, Xa.shape[0], func)
    e_min, e_null = null_scale(model_class, Xa, ya, w, func)
    x = explained_epsilon(choice.epsilon, choice.epsilon_kind, e_min, e_null)
    return replace(choice, e_min=e_min, e_null=e_null, explained_epsilon=x)


def _select(model_class, X, y, rule, cv, multiplier, alpha, sample_weight, random_state, func) -> EpsilonChoice:
    from scipy import stats

    check_choice(rule, EPSILON_RULES, "rule", func)
    family = _family(model_class)
    _check_rule(rule, family, func)
    Xa, _ = check_X(X, func, min_rows=3)
    ya = check_y(y, Xa.shape[0], func)
    n = Xa.shape[0]
    if np.ptp(ya) == 0:
        raise RashomonInputError(
            f"The 'y' parameter of {func} must take at least two distinct values (a constant y "
            f"leaves the class nothing to fit and no loss to measure ε by). Got y = {ya[0]:g} on "
            "every row instead."
        )
    classifier = family in ("LogisticModelClass", "HingeModelClass")
    if rule in ("profile", "likelihood_ratio"):
        alpha = check_float(alpha, "alpha", func, low=0.0, strict=True, high=1.0)
        if classifier:
            return _logistic_lr(model_class, X, ya, rule, alpha, n, func)
        if rule == "likelihood_ratio":
            eps = math.expm1(float(stats.chi2.ppf(1 - alpha, 1)) / n)
            return EpsilonChoice(
                rule,
                eps,
                "relative",
                f"likelihood-ratio rule: relative ε = exp(χ²₁({1 - alpha:g})/n) - 1 = {eps:.4g} (n = {n})",
            )
        d = Xa.shape[1] + (1 if model_class.fit_intercept else 0)
        if n - d < 1:
            raise RashomonInputError(
                f"The 'profile' rule of {func} needs more rows than parameters (n = {n}, d = {d})."
            )
        t = float(stats.t.ppf(1 - alpha / 2, n - d))
        eps = t * t / (n - d)
        return EpsilonChoice(
            rule,
            eps,
            "relative",
            f"profile (t) rule: relative ε = t²/(n-d) = {t:.4g}²/{n - d} = "
            f"{eps:.4g}; coefficient ranges are the OLS {1 - alpha:.0%} t-intervals when the norm "
            "bound is inactive",
        )
    cv = check_positive_int(cv, "cv", func, minimum=2)
    if cv > n:
        raise RashomonInputError(f"The 'cv' parameter of {func} must be at most the number of rows ({n}). Got {cv}.")
    seed = seed_from(random_state, func)
    if classifier:
        losses = _margin_cv_losses(model_class, Xa, ya, sample_weight, cv, seed, func)
    else:
        w = None if sample_weight is None else check_sample_weight(sample_weight, n, func)
        losses = _cv_losses(model_class, Xa, ya, w, cv, seed)
    name = {"LogisticModelClass": "log loss", "HingeModelClass": "hinge loss"}.get(family, "squared error")
    cv_loss, se = float(losses.mean()), float(losses.std(ddof=1) / math.sqrt(cv))
    if rule == "holdout_cv":
        multiplier = check_float(multiplier, "multiplier", func, low=0.0)
        eps = multiplier * cv_loss
        desc = (
            f"held-out + CV rule: ε_abs = e_ref + {multiplier:g} × {cv}-fold CV {name} ({cv_loss:.4g}) = "
            f"e_ref + {eps:.4g}"
        )
    else:
        eps = se
        desc = f"one-standard-error rule: ε_abs = e_ref + SE of the {cv}-fold CV {name} = e_ref + {se:.4g}"
    return EpsilonChoice(rule, eps, "additive", desc, cv_loss, se, losses)
