"""Results of MCR queries: the interval with its attaining models, and the envelope over ε."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..utils import DisplayMixin
from ..utils.validation import RashomonInputError, Real
from ._steps import MCRModel, envelope_loss, mr_value, step_bound

__all__ = ["MCRResult", "MCREnvelope"]


@dataclass(frozen=True, repr=False)
class MCRResult(DisplayMixin):
    """Model class reliance ``[lower, upper]`` over the empirical Rashomon set.

    Attributes
    ----------
    lower, upper : float
        Certified bounds: no model of the class with ``e_orig <= epsilon_abs``
        has MR outside ``[lower, upper]``.
    lower_model, upper_model : MCRModel or None
        Models of the Rashomon set attaining (within ``lower_gap`` /
        ``upper_gap``) each bound.
    lower_gap, upper_gap : float
        ``MR(lower_model) - lower`` and ``upper - MR(upper_model)`` (>= 0).
    lower_tight, upper_tight : bool
        Gap within ``tol·max(1, |bound|)``.
    lower_certified, upper_certified : bool
        True when the value is a certified bound. For non-quadratic losses the
        upper end is an *inner* value (the best model found, a lower bound on
        MCR+) and ``upper_certified`` is False; see ``notes``.
    loss : str
    notes : str
    gamma_lower, gamma_upper : float
        The multipliers of the best bounds.
    kind : {"ratio", "difference"}
    features : tuple of str
    epsilon_abs, e_ref, e_min : float
        Rashomon threshold, reference loss and best attainable loss in the class.
    reference_model : MCRModel or None
        The class's loss minimiser (when it is the reference).
    steps : list of MCRStep
        The whole search path (both ends).
    model_class : str
    tol : float
    """

    lower: float
    upper: float
    lower_model: MCRModel | None
    upper_model: MCRModel | None
    lower_gap: float
    upper_gap: float
    lower_tight: bool
    upper_tight: bool
    gamma_lower: float
    gamma_upper: float
    kind: str
    features: tuple
    epsilon_abs: float
    e_ref: float
    e_min: float
    reference_model: MCRModel | None
    steps: list = field(repr=False, default_factory=list)
    model_class: str = ""
    tol: float = 2.0**-20
    certified: bool = True
    lower_certified: bool = True
    upper_certified: bool = True
    loss: str = "squared_error"
    notes: str = ""

    def __repr__(self) -> str:
        feats = ", ".join(map(str, self.features))
        if len(feats) > 50:
            feats = feats[:47] + "..."
        # an end that is not tight: the attained value (a returned member's MR) is shown beside the bound
        att = (
            ""
            if self.lower_tight and self.upper_tight
            else f"attained=[{self.lower_attained:.6g}, {self.upper_attained:.6g}], "
        )
        text = (
            f"MCRResult(features=[{feats}], kind={self.kind!r}, lower={self.lower:.6g}, upper={self.upper:.6g}, "
            f"tight=({self.lower_tight}, {self.upper_tight}), {att}epsilon_abs={self.epsilon_abs:.6g}, "
            f"e_ref={self.e_ref:.6g}, e_min={self.e_min:.6g}, steps={len(self.steps)})"
        )
        return text if len(text) <= 295 else text[:291] + "...)"

    @property
    def lower_attained(self) -> float:
        """MR of the member returned for the lower end (``lower + lower_gap``; NaN when none was found)."""
        return float(self.lower + self.lower_gap) if math.isfinite(self.lower_gap) else math.nan

    @property
    def upper_attained(self) -> float:
        """MR of the member returned for the upper end (``upper - upper_gap``; NaN when none was found)."""
        return float(self.upper - self.upper_gap) if math.isfinite(self.upper_gap) else math.nan

    def bounds_text(self, digits: int = 4) -> str:
        """The interval in words, with the attained values beside the bounds when an end is not tight.

        Parameters
        ----------
        digits : int, default=4
            Significant digits of each number.

        Returns
        -------
        str
            ``"[c, d] (tight)"`` when members attain both bounds; otherwise ``"attained [a, b] within certified
            [c, d]"`` (an end that is not certified, the best value found for a non-quadratic loss, is named).
        """
        lo, up = f"{self.lower:.{digits}g}", f"{self.upper:.{digits}g}"
        if self.lower_tight and self.upper_tight and self.lower_certified and self.upper_certified:
            return f"[{lo}, {up}] (tight)"
        text = f"attained [{self.lower_attained:.{digits}g}, {self.upper_attained:.{digits}g}] within certified [{lo}, {up}]"
        loose = [n for n, c in (("MCR-", self.lower_certified), ("MCR+", self.upper_certified)) if not c]
        if loose:
            text = (
                f"attained [{self.lower_attained:.{digits}g}, {self.upper_attained:.{digits}g}], bounds [{lo}, {up}] "
                f"({' and '.join(loose)} not certified)"
            )
        return text

    def _display_(self) -> tuple[dict, list]:
        ref = self.reference_model
        fields: dict[str, Any] = {"features": list(self.features), "kind": self.kind, "MCR": (self.lower, self.upper)}
        if not (self.lower_tight and self.upper_tight):
            fields["MCR_attained"] = (self.lower_attained, self.upper_attained)
        fields |= {
            "MR_of_reference": math.nan if ref is None else ref.mr,
            "epsilon_abs": self.epsilon_abs,
            "e_ref": self.e_ref,
            "e_min": self.e_min,
            "loss": self.loss,
            "steps": len(self.steps),
        }
        frame = pd.DataFrame(
            {
                "bound": [self.lower, self.upper],
                "attained": [self.lower_attained, self.upper_attained],
                "gap": [self.lower_gap, self.upper_gap],
                "tight": [self.lower_tight, self.upper_tight],
                "certified": [self.lower_certified, self.upper_certified],
                "gamma": [self.gamma_lower, self.gamma_upper],
            },
            index=["MCR-", "MCR+"],
        )
        return fields, [("", frame)] + ([(f"notes: {self.notes}", None)] if self.notes else [])

    def to_frame(self) -> pd.DataFrame:
        """The search path: one row per step (side, γ, h*, e_orig, e_switch, MR, bound)."""
        rows = []
        for s in self.steps:
            rows.append(
                {
                    "side": s.side,
                    "gamma": s.gamma,
                    "h_star": s.h_star,
                    "e_orig": s.e_orig,
                    "e_switch": s.e_switch,
                    "mr": mr_value(s.e_orig, s.e_switch, self.kind) if s.theta is not None else math.nan,
                    "in_rashomon_set": s.theta is not None and s.e_orig <= self.epsilon_abs * (1 + 1e-12),
                    "bound": step_bound(s, self.epsilon_abs, self.kind),
                    "certified": s.certified,
                }
            )
        return pd.DataFrame(rows)

    def summary(self) -> pd.Series:
        return pd.Series(
            {
                "features": ", ".join(self.features),
                "kind": self.kind,
                "epsilon_abs": self.epsilon_abs,
                "e_ref": self.e_ref,
                "e_min": self.e_min,
                "mcr_lower": self.lower,
                "mcr_upper": self.upper,
                "mcr_lower_attained": self.lower_attained,
                "mcr_upper_attained": self.upper_attained,
                "lower_gap": self.lower_gap,
                "upper_gap": self.upper_gap,
                "lower_tight": self.lower_tight,
                "upper_tight": self.upper_tight,
                "lower_certified": self.lower_certified,
                "upper_certified": self.upper_certified,
                "loss": self.loss,
            }
        )

    def envelope(self, m) -> np.ndarray:
        """Certified lower bound on the loss of any model of the class with MR = m, never below ``e_min``.

        For a classifier (``loss`` not squared error) the steps are certified on a box that depends on ε, so
        the bound is capped at ``epsilon_abs``: where it reaches ε, what is certified is "loss > ε"."""
        arr = _mr_values(m, "MCRResult.envelope")
        out = envelope_loss(self.steps, arr, self.kind)
        if np.isfinite(self.e_min):
            out = np.maximum(out, self.e_min)
        if self.loss != "squared_error":
            out = np.minimum(out, self.epsilon_abs)
        return out

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """Envelope figure (x: MR, y: loss); returns an MCREnvelopeDisplay."""
        from ..plotting import MCREnvelopeDisplay

        return MCREnvelopeDisplay.from_result(self).plot(ax=ax, **kwargs)


@dataclass(frozen=True, repr=False)
class MCREnvelope(DisplayMixin):
    """MCR traced over a range of ε, with the certified envelope.

    Attributes
    ----------
    epsilons : ndarray of shape (k,)
        Absolute thresholds searched.
    lower, upper : ndarray of shape (k,)
        MCR bounds from the search at each ε.
    results : list of MCRResult
    steps : list of MCRStep
        Every step of every search (they all stay valid at every ε).
    kind, features, e_ref, e_min
    """

    epsilons: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    results: list
    steps: list = field(repr=False)
    kind: str = "ratio"
    features: tuple = ()
    e_ref: float = math.nan
    e_min: float = math.nan

    def __repr__(self) -> str:
        feats = ", ".join(map(str, self.features))
        if len(feats) > 50:
            feats = feats[:47] + "..."
        k = len(self.epsilons)
        if k:
            rng = (
                f"epsilon_abs=[{float(np.min(self.epsilons)):.4g}, {float(np.max(self.epsilons)):.4g}], "
                f"lower=[{float(np.min(self.lower)):.4g}, {float(np.max(self.lower)):.4g}], "
                f"upper=[{float(np.min(self.upper)):.4g}, {float(np.max(self.upper)):.4g}], "
            )
        else:
            rng = ""
        text = (
            f"MCREnvelope(features=[{feats}], kind={self.kind!r}, n_epsilons={k}, {rng}"
            f"e_ref={self.e_ref:.4g}, e_min={self.e_min:.4g}, steps={len(self.steps)})"
        )
        return text if len(text) <= 295 else text[:291] + "...)"

    def _display_(self) -> tuple[dict, list]:
        fields = {
            "features": list(self.features),
            "kind": self.kind,
            "n_epsilons": len(self.epsilons),
            "e_ref": self.e_ref,
            "e_min": self.e_min,
            "steps": len(self.steps),
        }
        frame = self.to_frame()
        if len(self.results) == len(frame):
            frame["lower_tight"] = [r.lower_tight for r in self.results]
            frame["upper_tight"] = [r.upper_tight for r in self.results]
        return fields, [("MCR at each ε", frame)]

    def bounds(self, epsilon: float) -> tuple[float, float]:
        """Certified ``(lower, upper)`` at any absolute ε, from all steps at once.

        Parameters
        ----------
        epsilon : float
            An absolute loss threshold ε_abs.

        Returns
        -------
        tuple of float
            The certified ``(MCR-, MCR+)`` at that threshold.
        """
        eps = Real().check(epsilon, "epsilon", "MCREnvelope.bounds")  # NaN gave (0, inf); a finite float
        if eps < self.e_min * (1 - 1e-12):
            raise RashomonInputError(
                f"The 'epsilon' parameter of MCREnvelope.bounds must be >= e_min = {self.e_min:.6g}. Got {eps!r} instead."
            )
        lo = [step_bound(s, eps, self.kind) for s in self.steps if s.side == "lower"]
        up = [step_bound(s, eps, self.kind) for s in self.steps if s.side == "upper"]
        lo = [v for v in lo if np.isfinite(v)]
        up = [v for v in up if np.isfinite(v)]
        lower = max(lo) if lo else (0.0 if self.kind == "ratio" else -math.inf)
        return float(lower), float(min(up) if up else math.inf)

    def envelope(self, m) -> np.ndarray:
        """Certified lower bound on the loss of any model of the class with MR = m.

        Parameters
        ----------
        m : float or array-like
            Model reliance value(s).

        Returns
        -------
        ndarray
            The envelope's loss at each ``m`` (no model of the class with that MR has a lower loss).
        """
        arr = _mr_values(m, "MCREnvelope.envelope")
        return envelope_loss(self.steps, arr, self.kind)

    def to_frame(self) -> pd.DataFrame:
        """One row per ε: the certified bounds and the MRs the members found attain (equal where tight).

        Returns
        -------
        DataFrame
            Columns ``epsilon_abs``, ``mcr_lower``, ``mcr_lower_attained``, ``mcr_upper_attained``, ``mcr_upper``.
        """
        df = pd.DataFrame({"epsilon_abs": self.epsilons, "mcr_lower": self.lower, "mcr_upper": self.upper})
        if len(self.results) == len(df):
            df.insert(2, "mcr_lower_attained", [r.lower_attained for r in self.results])
            df.insert(3, "mcr_upper_attained", [r.upper_attained for r in self.results])
        return df

    def plot(self, *, ax: Any = None, epsilon: float | None = None, **kwargs: Any):
        """The paper's figure: the certified envelope in the (MR, loss) plane.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        epsilon : float, default=None
            The absolute ε whose MCR interval is marked (None: the largest).
        **kwargs
            Passed to ``MCREnvelopeDisplay.plot`` (``line_kw``, ``scatter_kw``).

        Returns
        -------
        MCREnvelopeDisplay
        """
        from ..plotting import MCREnvelopeDisplay

        return MCREnvelopeDisplay.from_envelope(self, epsilon=epsilon).plot(ax=ax, **kwargs)

    def plot_band(self, *, ax: Any = None, **kwargs: Any):
        """MCR lower and upper against ε.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        **kwargs
            Passed to ``MCRBandDisplay.plot`` (``fill_kw``).

        Returns
        -------
        MCRBandDisplay
        """
        from ..plotting import MCRBandDisplay

        return MCRBandDisplay.from_envelope(self).plot(ax=ax, **kwargs)


def _mr_values(m: Any, func: str) -> np.ndarray:
    """``m`` as a float array of model reliance values, or the layer's error naming ``func``'s 'm'."""
    try:
        arr = np.asarray(m, dtype=float) if not isinstance(m, (str, bytes)) else None
    except (TypeError, ValueError):
        arr = None
    if arr is None or not np.all(np.isfinite(arr)):
        raise RashomonInputError(
            f"The 'm' parameter of {func} must be a finite float or array of "
            f"them (model reliance values). Got {m!r:.80} instead."
        )
    return arr
