"""Results of the fairness queries: disparity ranges, the least disparate member and its frontier (the reliance
differences and the certified reliance order are in ``_order_results.py``). Each has ``to_frame()``,
``to_dict()`` (JSON-ready) and ``plot()``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...utils import DisplayMixin

__all__ = ["DisparityRange", "DisparityFrontier", "LeastDisparate"]


def _num(v):
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else (None if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def _records(df: pd.DataFrame) -> list:
    return [{k: _num(v) for k, v in row.items()} for row in df.to_dict(orient="records")]


@dataclass(frozen=True, repr=False)
class DisparityRange(DisplayMixin):
    """Range over the Rashomon set of a group disparity (fairlearn's definitions), certified.

    One row per group against the reference group (``m_g - m_ref`` or ``m_g / m_ref``), then the
    between-groups summary (fairlearn's ``demographic_parity_difference``-style ``max - min``, or ``min / max``).

    Attributes
    ----------
    names : list of str
    lower, upper : ndarray
        Certified: no member of the set has a disparity outside ``[lower, upper]``.
    lower_attained, upper_attained : ndarray
        Disparities of returned members (``lower_models``, ``upper_models``: their parameters).
        ``lower_attained - lower`` and ``upper - upper_attained`` are the gaps.
    exact : ndarray of bool
        Both ends attained within 1e-6 relative (linear functionals, the squared group loss). Otherwise
        ``lower``/``upper`` are certified *outer* bounds and the attained values *inner* ones.
    reference : ndarray
        The set's reference model's disparities.
    metric, kind, scale, method : str
    groups : list
        Group labels; ``reference_group`` is the one compared against.
    group_values : DataFrame
        Per-group metric of the reference model.
    threshold, positive : float or None
    epsilon_abs : float
    """

    names: list
    lower: np.ndarray
    upper: np.ndarray
    lower_attained: np.ndarray
    upper_attained: np.ndarray
    exact: np.ndarray
    reference: np.ndarray
    lower_models: np.ndarray
    upper_models: np.ndarray
    metric: str
    kind: str
    scale: str
    method: str
    groups: list
    reference_group: Any
    group_values: pd.DataFrame
    threshold: float | None
    positive: float | None
    epsilon_abs: float
    parametrization: Any = field(default=None)
    spec: Any = field(default=None)

    def bounds_text(self, i: int = 0, digits: int = 4) -> str:
        """Row ``i``'s range in words, with the attained values beside the certified bounds when they differ.

        Parameters
        ----------
        i : int, default=0
            The row (a disparity of ``names``).
        digits : int, default=4
            Significant digits of each number.

        Returns
        -------
        str
            ``"[c, d] (exact)"`` when members attain both bounds; otherwise ``"attained [a, b] within certified
            [c, d]"``: members reach ``[a, b]``, and no member lies outside ``[c, d]``.
        """
        lo, up = f"{self.lower[i]:.{digits}g}", f"{self.upper[i]:.{digits}g}"
        if self.exact[i]:
            return f"[{lo}, {up}] (exact)"
        return (
            f"attained [{self.lower_attained[i]:.{digits}g}, {self.upper_attained[i]:.{digits}g}] within certified "
            f"[{lo}, {up}]"
        )

    def __repr__(self) -> str:
        return (
            f"DisparityRange(metric={self.metric!r}, kind={self.kind!r}, {self.names[0]}: {self.bounds_text(0)}, "
            f"reference={self.reference[0]:.4g}, groups={len(self.groups)}, epsilon_abs={self.epsilon_abs:.4g})"
        )

    @property
    def gap(self) -> np.ndarray:
        """Gaps between the certified bounds and the attained values, shape (2, m): lower end, upper end."""
        return np.vstack([self.lower_attained - self.lower, self.upper - self.upper_attained])

    def member(self, i: int = 0, end: str = "upper"):
        """The fitted member (:class:`~rashomon.ClassMember`) attaining ``end`` of row ``i``."""
        return self.parametrization.estimator((self.upper_models if end == "upper" else self.lower_models)[i])

    def evaluate(self, thetas: Any) -> np.ndarray:
        """The rows' disparities of members with parameters ``thetas`` (m, d): shape (m, rows)."""
        from ._disparity import between_value

        G = self.spec.group_values(np.atleast_2d(thetas))
        ref = self.spec.ref
        cols = [
            G[:, g] - G[:, ref] if self.kind == "difference" else G[:, g] / G[:, ref]
            for g in range(G.shape[1])
            if g != ref
        ]
        return np.column_stack(cols + [between_value(G, self.kind)])

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "metric": self.metric,
                "kind": self.kind,
                "scale": self.scale,
                "method": self.method,
                "epsilon_abs": self.epsilon_abs,
                "n_disparities": len(self.names),
            }
            | (
                {}
                if self.exact[0]
                else {
                    f"{self.names[0]}: attained": (float(self.lower_attained[0]), float(self.upper_attained[0])),
                    "within certified": (float(self.lower[0]), float(self.upper[0])),
                }
            ),
            [("", self.to_frame())],
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per disparity: lower, attained ends, reference, upper, gaps and exactness."""
        g = self.gap
        return pd.DataFrame(
            {
                "disparity": self.names,
                "lower": self.lower,
                "lower_attained": self.lower_attained,
                "reference": self.reference,
                "upper_attained": self.upper_attained,
                "upper": self.upper,
                "lower_gap": g[0],
                "upper_gap": g[1],
                "exact": self.exact,
            }
        )

    def to_dict(self) -> dict:
        """JSON-ready summary (for reports)."""
        return {
            "metric": self.metric,
            "kind": self.kind,
            "scale": self.scale,
            "method": self.method,
            "groups": [_num(v) for v in self.groups],
            "reference_group": _num(self.reference_group),
            "threshold": _num(self.threshold),
            "positive": _num(self.positive),
            "epsilon_abs": _num(self.epsilon_abs),
            "rows": _records(self.to_frame()),
            "group_values": _records(self.group_values.reset_index()),
        }

    def plot(self, *, ax: Any = None, benchmark: float | None = None, **kwargs: Any):
        """Intervals per disparity (certified outer and attained inner) with the reference marked."""
        from ...plotting import DisparityRangeDisplay

        return DisparityRangeDisplay(self, benchmark).plot(ax=ax, **kwargs)


@dataclass(frozen=True, repr=False)
class DisparityFrontier(DisplayMixin):
    """Least ``|disparity|`` over the set against ε: certified lower bound and attained value per ε.

    ``epsilons`` are absolute thresholds (ε_abs); ``loss_relative`` is ε_abs / e_ref - 1.
    ``zero_loss`` is the least loss of a member with zero disparity (or disparity ratio 1), bracketed:
    ``[zero_loss_lower, zero_loss_upper]`` (inf when no member of the class reaches it in the range searched).
    """

    epsilons: np.ndarray
    lower: np.ndarray
    attained: np.ndarray
    e_ref: float
    e_min: float
    epsilon_abs: float
    reference_disparity: float
    name: str
    kind: str
    zero_loss_lower: float = math.nan
    zero_loss_upper: float = math.nan
    benchmark: float | None = None

    def __repr__(self) -> str:
        return (
            f"DisparityFrontier({self.name}, n_epsilons={len(self.epsilons)}, least |disparity| at the set's "
            f"epsilon={np.interp(self.epsilon_abs, self.epsilons, self.attained):.4g}, zero disparity from loss "
            f"{self.zero_loss_upper:.6g})"
        )

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "name": self.name,
                "kind": self.kind,
                "e_ref": self.e_ref,
                "e_min": self.e_min,
                "epsilon_abs": self.epsilon_abs,
                "reference_disparity": self.reference_disparity,
            },
            [("", self.to_frame())],
        )

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "epsilon_abs": self.epsilons,
                "epsilon_relative": self.epsilons / self.e_ref - 1,
                "least_disparity_lower": self.lower,
                "least_disparity_attained": self.attained,
            }
        )

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "e_ref": self.e_ref,
            "e_min": self.e_min,
            "epsilon_abs": self.epsilon_abs,
            "reference_disparity": _num(self.reference_disparity),
            "zero_loss": [_num(self.zero_loss_lower), _num(self.zero_loss_upper)],
            "benchmark": _num(self.benchmark),
            "frontier": _records(self.to_frame()),
        }

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """Least ``|disparity|`` against the loss threshold (the envelope), the set's ε and the reference marked."""
        from ...plotting import DisparityFrontierDisplay

        return DisparityFrontierDisplay(self).plot(ax=ax, **kwargs)


@dataclass(frozen=True, repr=False)
class LeastDisparate(DisplayMixin):
    """The good model with the least ``|disparity|``, with its certificate.

    Attributes
    ----------
    disparity : float
        The member's disparity (signed; for more than two groups, the between-groups summary).
    certified_lower : float
        No member of the set has ``|disparity|`` (or ``|1 - ratio|``-wise distance) below this.
    exact : bool
        ``|disparity| - certified_lower`` within 1e-6 (linear functionals and the squared group loss).
    member : ClassMember
    theta : ndarray
    loss, e_ref, epsilon_abs : float
        The member's loss, the reference's, the set's threshold.
    reference_disparity : float
    reliance : DataFrame
        MR (ratio) of the member and of the reference on the requested features.
    range : DisparityRange
    frontier : DisparityFrontier or None
    benchmark : dict or None
        The benchmark's disparity and where it sits relative to the set's range.
    target, target_outcome : float or None, str or None
        The tolerated distance from parity δ asked for, and the answer: ``"member"``, ``"none"`` (certified) or
        ``"undetermined"``; ``alternative`` says it in words.
    """

    disparity: float
    certified_lower: float
    exact: bool
    member: Any
    theta: np.ndarray
    loss: float
    e_ref: float
    epsilon_abs: float
    reference_disparity: float
    name: str
    reliance: pd.DataFrame
    range: DisparityRange
    frontier: DisparityFrontier | None = None
    benchmark: dict | None = None
    target: float | None = None
    target_outcome: str | None = None

    @property
    def alternative(self) -> str | None:
        """The less discriminatory alternative question for ``target`` δ, answered in one sentence."""
        if self.target is None:
            return None
        d = f"distance from parity at most {self.target:.4g}"
        if self.target_outcome == "member":
            return (
                f"A less discriminatory alternative exists: a good model (loss {self.loss:.6g} <= epsilon_abs "
                f"{self.epsilon_abs:.6g}) with {d} ({self.name} = {self.disparity:.4g})."
            )
        if self.target_outcome == "none":
            return (
                f"Certified: no model within epsilon_abs {self.epsilon_abs:.6g} has {d}; every good model is at "
                f"least {self.certified_lower:.4g} from parity."
            )
        return (
            f"Undetermined: no good model with {d} was found (the closest is {self.disparity:.4g}), and the "
            f"certified bound ({self.certified_lower:.4g}) does not rule one out."
        )

    def __repr__(self) -> str:
        b = (
            ""
            if self.benchmark is None
            else f", benchmark={self.benchmark['disparity']:.4g} ({self.benchmark['position']})"
        )
        if self.target is not None:
            b += f", target={self.target:.4g}: {self.target_outcome}"
        return (
            f"LeastDisparate({self.name}={self.disparity:.4g} (certified least |.| >= {self.certified_lower:.4g}"
            f"{', exact' if self.exact else ''}), loss={self.loss:.6g}, e_ref={self.e_ref:.6g}, reference "
            f"disparity={self.reference_disparity:.4g}{b})"
        )

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "name": self.name,
                "disparity": self.disparity,
                "certified_lower": self.certified_lower,
                "exact": self.exact,
                "loss": self.loss,
                "e_ref": self.e_ref,
                "epsilon_abs": self.epsilon_abs,
                "reference_disparity": self.reference_disparity,
            },
            [("", self.to_frame())],
        )

    def to_frame(self) -> pd.DataFrame:
        rows = [
            {"model": "least disparate", "disparity": self.disparity, "loss": self.loss},
            {"model": "reference", "disparity": self.reference_disparity, "loss": self.e_ref},
        ]
        if self.benchmark is not None:
            rows.append(
                {
                    "model": "benchmark",
                    "disparity": self.benchmark["disparity"],
                    "loss": self.benchmark.get("loss", math.nan),
                }
            )
        df = pd.DataFrame(rows)
        for _, r in self.reliance.iterrows():
            df[f"MR({r['features']})"] = [r["least_disparate"], r["reference"]] + ([math.nan] if len(rows) == 3 else [])
        return df

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "disparity": _num(self.disparity),
            "certified_lower": _num(self.certified_lower),
            "exact": bool(self.exact),
            "loss": _num(self.loss),
            "e_ref": _num(self.e_ref),
            "epsilon_abs": _num(self.epsilon_abs),
            "reference_disparity": _num(self.reference_disparity),
            "reliance": _records(self.reliance),
            "range": self.range.to_dict(),
            "frontier": None if self.frontier is None else self.frontier.to_dict(),
            "benchmark": None if self.benchmark is None else {k: _num(v) for k, v in self.benchmark.items()},
            "target": _num(self.target),
            "target_outcome": self.target_outcome,
            "alternative": self.alternative,
        }

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """The frontier (least ``|disparity|`` against ε) with this member, the reference and the benchmark.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on (None: a new figure).
        **kwargs
            Passed to the frontier's display.

        Returns
        -------
        DisparityFrontierDisplay or DisparityRangeDisplay
            The frontier's display; the range's when the frontier was not computed (``frontier=False``).
        """
        if self.frontier is None:
            return self.range.plot(ax=ax, benchmark=None if self.benchmark is None else self.benchmark["disparity"])
        return self.frontier.plot(ax=ax, **kwargs)
