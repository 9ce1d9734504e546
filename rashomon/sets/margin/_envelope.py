"""MCR over a grid of ε for the classifier classes (logistic, hinge).

Each ε is answered by the classifier MCR (:func:`._mcr.margin_mcr`: certified lower bound and
outer upper bound, members attaining inner values). The sets are nested (``S_ε ⊆ S_ε'`` for ε <= ε'),
which gives three valid improvements, applied to the reported bounds:

* a lower bound at ε' is a lower bound at every ε <= ε' (fewer members), so the reported lower end at ε
  is the largest lower bound over the grid values >= ε; the reported upper end the least outer bound
  over the grid values >= ε;
* a member of S_ε is a member of every larger set, so the attained values are carried upward.

So the reported bounds are monotone in ε (lower non-increasing, upper non-decreasing). Unlike the
quadratic classes' γ-steps, the classifier's steps are certified over a ball-and-intercept box that
depends on ε, so :meth:`MarginEnvelope.bounds` answers an ε between grid values from the next grid value
above it (valid by nesting), and :meth:`MarginEnvelope.envelope` is the step function "MR = m is outside
the bounds at ε_k, so its loss exceeds ε_k".
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...utils.validation import RashomonInputError
from .._results import MCREnvelope

__all__ = ["MarginEnvelope", "margin_envelope", "classifier_only"]


@dataclasses.dataclass(frozen=True, repr=False)
class MarginEnvelope(MCREnvelope):
    """:class:`~rashomon.sets.MCREnvelope` of a classifier set (see the module docstring for ``bounds``)."""

    def __repr__(self) -> str:
        return MCREnvelope.__repr__(self)

    def bounds(self, epsilon: float) -> tuple[float, float]:
        """Certified ``(lower, upper)`` at an absolute ε <= the largest grid value (from the next grid value >= ε)."""
        eps = float(epsilon)
        top = float(np.max(self.epsilons))
        if eps < self.e_min * (1 - 1e-12) or eps > top * (1 + 1e-12):
            raise RashomonInputError(
                f"The 'epsilon' parameter of MarginEnvelope.bounds must be in [e_min, largest "
                f"epsilon searched] = [{self.e_min:.6g}, {top:.6g}]. Got {eps!r} instead."
            )
        above = self.epsilons >= eps * (1 - 1e-12)
        return float(np.max(self.lower[above])), float(np.min(self.upper[above]))

    def envelope(self, m) -> np.ndarray:
        """Certified lower bound on the loss of any member with MR = m: the largest grid ε whose bounds exclude m."""
        m = np.asarray(m, dtype=float)
        out = np.full(m.shape, self.e_min)
        for eps, lo, up in sorted(zip(self.epsilons, self.lower, self.upper)):
            out = np.where((m < lo) | (m > up), np.maximum(out, eps), out)
        return out


def _tightened(results, order, kind):
    """Bounds and attained members made monotone by nesting (see the module docstring)."""
    out = list(results)
    lo_b, up_b = -math.inf, math.inf
    for i in order[::-1]:  # from the largest ε down: bounds of larger sets hold for smaller ones
        lo_b, up_b = max(lo_b, results[i].lower), min(up_b, results[i].upper)
        out[i] = (lo_b, up_b)
    best_lo = best_up = None
    final = [None] * len(results)
    for i in order:  # from the smallest ε up: members of smaller sets are members of larger ones
        r = results[i]
        lm = (
            r.lower_model
            if best_lo is None or (r.lower_model is not None and r.lower_model.mr <= best_lo.mr)
            else best_lo
        )
        um = (
            r.upper_model
            if best_up is None or (r.upper_model is not None and r.upper_model.mr >= best_up.mr)
            else best_up
        )
        best_lo, best_up = lm, um
        lower, upper = out[i]
        lower, upper = min(lower, lm.mr) if lm is not None else lower, max(upper, um.mr) if um is not None else upper
        lgap = max(lm.mr - lower, 0.0) if lm is not None else math.inf
        ugap = max(upper - um.mr, 0.0) if um is not None else math.inf
        final[i] = dataclasses.replace(
            r,
            lower=float(lower),
            upper=float(upper),
            lower_model=lm,
            upper_model=um,
            lower_gap=float(lgap),
            upper_gap=float(ugap),
            lower_tight=bool(r.lower_certified and lgap <= r.tol * max(1.0, abs(lower))),
            upper_tight=bool(r.upper_certified and ugap <= r.tol * max(1.0, abs(upper))),
        )
    return final


def classifier_only(rs, func: str, *, conditional: bool = False, strata=None) -> None:
    """A clear error for what the classifier classes do not answer (conditional switching, other convex losses)."""
    from ._access import margin_set

    name = type(rs.model_class).__name__
    if margin_set(rs) is None:
        raise RashomonInputError(
            f"{func} needs a quadratic class (loss='squared_error') or a classifier class "
            f"(LogisticModelClass, HingeModelClass). Got {name} with loss={rs.loss_!r}; only "
            "model_class_reliance answers this loss."
        )
    if conditional or strata is not None:
        raise RashomonInputError(
            f"The 'conditional' and 'strata' parameters of {func} are not supported for {name} "
            f"(loss={rs.loss_!r}): classifier sets answer the marginal MCR (conditional=False) "
            "only; conditional MCR needs a quadratic class (loss='squared_error')."
        )


def margin_envelope(
    rs,
    features,
    abs_eps: np.ndarray,
    *,
    kind: str,
    tol: float,
    max_iter: int,
    progress: bool,
    conditional: bool = False,
    strata=None,
    n_starts: int = 5,
    random_state=0,
) -> MarginEnvelope:
    """The classifier MCR at every absolute ε of ``abs_eps`` (see the module docstring)."""
    from ._mcr import margin_mcr

    func = "RashomonSet.envelope"
    classifier_only(rs, func, conditional=conditional, strata=strata)
    group = rs._group(features, func)
    order = np.argsort(abs_eps)
    it = order
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(order, desc="MCR envelope")
    results: list = [None] * len(abs_eps)
    for i in it:
        results[i] = margin_mcr(
            rs._margin,
            rs._columns,
            group,
            e_ref=rs.e_ref_,
            epsilon_abs=float(abs_eps[i]),
            reference_theta=rs.reference_theta_,
            kind=kind,
            tol=tol,
            max_iter=max_iter,
            n_starts=n_starts,
            random_state=random_state,
            func=func,
        )
    results = _tightened(results, order, kind)
    steps = [s for r in results for s in r.steps]
    return MarginEnvelope(
        epsilons=np.asarray(abs_eps, dtype=float),
        lower=np.array([r.lower for r in results]),
        upper=np.array([r.upper for r in results]),
        results=results,
        steps=steps,
        kind=kind,
        features=results[0].features,
        e_ref=rs.e_ref_,
        e_min=rs.e_min_,
    )
