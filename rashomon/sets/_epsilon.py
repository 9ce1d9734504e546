"""The one meaning of ε: a threshold ε_abs on e_orig, given in one of three ways."""

from __future__ import annotations

from ..utils.validation import RashomonInputError

__all__ = ["EPSILON_KINDS", "epsilon_threshold"]

#: Ways to give ε. They all define one threshold ε_abs, and the set is ``{f ∈ F : e_orig(f) <= ε_abs}``.
EPSILON_KINDS = ("relative", "additive", "absolute")


def epsilon_threshold(epsilon: float, epsilon_kind: str, e_ref: float, e_min: float, func: str) -> float:
    """ε_abs, the one meaning of ε: the set is every model of the class with ``e_orig <= ε_abs``.

    ``"relative"``: ε_abs = e_ref·(1 + ε); ``"additive"``: ε_abs = e_ref + ε;
    ``"absolute"``: ε_abs = ε. (The audit's held-out + CV rule is ``"additive"`` with
    ε = 0.1 × the reference's cross-validated loss.) A threshold below the least loss
    the class attains (the set would be empty) is an error; one within rounding of it
    is e_min itself (the set is the minimiser).
    """
    if epsilon_kind == "absolute":
        eps = epsilon
    elif epsilon_kind == "additive":
        eps = e_ref + epsilon
    else:
        eps = e_ref * (1.0 + epsilon)
    if eps < e_min * (1 - 1e-12):
        raise RashomonInputError(
            f"The 'epsilon' parameter of {func} gives an absolute threshold {eps:.6g} below the best loss the model "
            f"class attains ({e_min:.6g}); the Rashomon set would be empty. Use a larger epsilon."
        )
    return max(float(eps), float(e_min))
