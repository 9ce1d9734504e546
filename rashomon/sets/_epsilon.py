"""The one meaning of ε: a threshold ε_abs on e_orig, given in one of four ways, and the null model it is read
against (the best constant model of the class, whose loss e_null is the loss of knowing nothing of X)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..utils.validation import RashomonInputError

__all__ = [
    "EPSILON_KINDS",
    "epsilon_threshold",
    "explained_epsilon",
    "explained_share",
    "null_loss",
    "null_notes",
    "null_scale",
    "warn_if_null",
]

#: Ways to give ε. They all define one threshold ε_abs, and the set is ``{f ∈ F : e_orig(f) <= ε_abs}``.
EPSILON_KINDS = ("relative", "additive", "absolute", "explained")


def epsilon_threshold(
    epsilon: float, epsilon_kind: str, e_ref: float, e_min: float, func: str, e_null: float | None = None
) -> float:
    """ε_abs, the one meaning of ε: the set is every model of the class with ``e_orig <= ε_abs``.

    ``"relative"``: ε_abs = e_ref·(1 + ε); ``"additive"``: ε_abs = e_ref + ε;
    ``"absolute"``: ε_abs = ε; ``"explained"``: ε_abs = e_min + ε·(e_null - e_min), a share ε of the loss
    the class explains beyond the null model (ε = 1 admits the best constant model). (The audit's held-out +
    CV rule is ``"additive"`` with ε = 0.1 × the reference's cross-validated loss.) A threshold below the
    least loss the class attains (the set would be empty) is an error; one within rounding of it is e_min
    itself (the set is the minimiser).
    """
    if epsilon_kind == "absolute":
        eps = epsilon
    elif epsilon_kind == "additive":
        eps = e_ref + epsilon
    elif epsilon_kind == "explained":
        if e_null is None:  # pragma: no cover - every fit computes e_null first
            raise RashomonInputError(f"{func}: epsilon_kind='explained' needs the null model's loss.")
        eps = e_min + epsilon * max(e_null - e_min, 0.0)
    else:
        eps = e_ref * (1.0 + epsilon)
    if eps < e_min * (1 - 1e-12):
        raise RashomonInputError(
            f"The 'epsilon' parameter of {func} gives an absolute threshold {eps:.6g} below the best loss the model "
            f"class attains ({e_min:.6g}); the Rashomon set would be empty. Use a larger epsilon."
        )
    return max(float(eps), float(e_min))


def null_loss(par: Any, y: Any, w: np.ndarray | None, loss: str) -> float:
    """e_null: the loss on (y, w) of the best constant model of the class ``par`` (exact, closed form).

    The class's constant functions are ``f ≡ v`` (``par.constant_model()``, e.g. v = 0 for a linear class
    without intercept, the kernel class's fixed μ) or, when the class has a free intercept, every constant.
    With a free constant: squared error → the weighted variance of y (the mean predicted); absolute error →
    the mean distance to the median; log loss (labels ±1) → the entropy of the base rate p, ``-p log p -
    (1-p) log(1-p)``; hinge → ``min_c mean max(0, 1 - y·c) = 2·min(p, 1-p)`` (piecewise linear in c, least at
    c = ±1). ``y`` may be a :class:`~._row_statistics.RowStatistics` (squared error only).
    """
    value, free = par.constant_model()
    if hasattr(y, "comoment"):  # sufficient statistics of a Dask fit: weighted mean and centred second moment
        var, mean = float(y.comoment[-1, -1] / y.weight_sum), float(y.mean[-1])
        return var if free else var + (mean - value) ** 2
    y = np.asarray(y, dtype=float)
    wt = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    if loss == "squared_error":
        c = float(np.average(y, weights=wt)) if free else value
        return float(np.average((y - c) ** 2, weights=wt))
    if loss == "absolute_error":
        c = float(np.median(y)) if free else value  # the convex losses take no weights
        return float(np.mean(np.abs(y - c)))
    p = float(np.mean(y > 0))
    if loss == "log_loss":
        if free:
            return -sum(q * math.log(q) for q in (p, 1.0 - p) if q > 0)
        return float(np.mean(np.logaddexp(0.0, -y * value)))
    if free:  # hinge
        return 2.0 * min(p, 1.0 - p)
    return float(np.mean(np.maximum(0.0, 1.0 - y * value)))


def explained_share(e_min: float, e_null: float, epsilon_abs: float) -> float:
    """``(e_null - ε_abs)/(e_null - e_min)``: the share of the loss the class explains (beyond the null model)
    that every member of the set still explains; 0 when the set reaches the null model or the class explains
    nothing (e_null - e_min below 1e-12 of e_null)."""
    span = e_null - e_min
    if not span > 1e-12 * max(abs(e_null), 1e-300):
        return 0.0
    return float(min(1.0, max(0.0, (e_null - epsilon_abs) / span)))


def null_notes(e_min: float, e_null: float, epsilon_abs: float) -> list[str]:
    """What a reader must know of the set against the null model: it contains a constant model (ε_abs >= e_null),
    or it keeps less than half of the loss the class explains; empty otherwise."""
    if epsilon_abs >= e_null:
        return [
            f"ε_abs = {epsilon_abs:.4g} is at or above the null model's loss e_null = {e_null:.4g} (the best "
            "constant model of the class): the set contains a constant model, so every MCR− is the null model's "
            "(no reliance on any feature) and every prediction range covers a constant prediction"
        ]
    share = explained_share(e_min, e_null, epsilon_abs)
    if share < 0.5:
        return [
            f"the set keeps {share:.1%} of the loss the class explains (e_null − ε_abs over e_null − e_min): its "
            "members may explain less than half of what the best model does"
        ]
    return []


def warn_if_null(rs: Any, func: str) -> None:
    """A :class:`~rashomon.utils.validation.RashomonWarning` when the fitted set ``rs`` contains a constant
    model (ε_abs >= e_null)."""
    import warnings

    from ..utils.validation import RashomonWarning

    if rs.epsilon_abs_ >= rs.e_null_:
        warnings.warn(
            f"{func}: {null_notes(rs.e_min_, rs.e_null_, rs.epsilon_abs_)[0]}. A smaller epsilon keeps a share of "
            "what the class explains.",
            RashomonWarning,
            stacklevel=4,
        )


def null_scale(model_class: Any, X: np.ndarray, y: np.ndarray, w: np.ndarray | None, func: str) -> tuple[float, float]:
    """``(e_min, e_null)`` of ``model_class`` on all of (X, y): its loss minimiser's loss and the null model's, the
    two ends of the explained scale on which :func:`~._epsilon_rules.select_epsilon` places each rule."""
    from ..model_classes import encode_margin_labels

    if hasattr(model_class, "minimise_loss"):  # the classifier classes (logistic, hinge)
        par, (theta,) = model_class.minimise_loss(X, y, w, func=func)
        ye = encode_margin_labels(y, func)
        ml = par.info["margin_loss"]
        e_min = float(np.mean(ml.exact(ye * (par.design(X) @ theta))))
        return e_min, null_loss(par, ye, None, "log_loss" if ml.name == "logistic" else "hinge")
    member = model_class.fit_reference(X, y, w)
    e_min = float(np.average((y - member.predict(X)) ** 2, weights=w))
    return e_min, null_loss(member.parametrization_, y, w, "squared_error")


def explained_epsilon(epsilon: float, epsilon_kind: str, e_min: float, e_null: float) -> float:
    """Where ε (read by ``epsilon_kind``, the reference the minimiser: e_ref = e_min) lands on the explained
    scale: ``(ε_abs - e_min)/(e_null - e_min)``; 1 or more means the set contains a constant model (inf when the
    class explains nothing)."""
    eps_abs = epsilon_threshold(epsilon, epsilon_kind, e_min, e_min, "select_epsilon", e_null)
    span = e_null - e_min
    if not span > 1e-12 * max(abs(e_null), 1e-300):
        return math.inf if eps_abs > e_min else 0.0
    return float((eps_abs - e_min) / span)


def set_threshold(rs, y, w, func: str) -> None:
    """e_null_ (the best constant model's loss on the set's rows, y as the loss sees it), ε_abs by the set's ε
    rule and the share of the explained loss the set keeps; needs e_min_, e_ref_ and parametrization_."""
    rs.e_null_ = null_loss(rs.parametrization_, y, w, rs.loss_)
    rs.epsilon_abs_ = epsilon_threshold(float(rs.epsilon), rs.epsilon_kind, rs.e_ref_, rs.e_min_, func, rs.e_null_)
    rs.explained_share_ = explained_share(rs.e_min_, rs.e_null_, rs.epsilon_abs_)
