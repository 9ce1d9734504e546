"""Results of the reliance-order queries (``_order.py``): the range of a difference of two reliances over the
set and the certified order of features. Each has ``to_frame()``, ``to_dict()`` (JSON-ready) and ``plot()``;
the disparity results are in ``_fair_results.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...utils import DisplayMixin
from ._fair_results import _num, _records

__all__ = ["RelianceDifference", "RelianceOrder"]


@dataclass(frozen=True, repr=False)
class RelianceDifference(DisplayMixin):
    """Range over the set of ``MR(a) - MR(b)``, certified, with members attaining (or approaching) each end.

    ``exact`` when both gaps are within the search tolerance (quadratic classes); for the classifier classes
    the bounds come from the two MCR intervals (outer) and the members from their searches (inner).
    """

    a: tuple
    b: tuple
    kind: str
    lower: float
    upper: float
    lower_attained: float
    upper_attained: float
    exact: bool
    lower_theta: np.ndarray | None
    upper_theta: np.ndarray | None
    reference: float
    epsilon_abs: float
    method: str
    parametrization: Any = None

    def __repr__(self) -> str:
        return (
            f"RelianceDifference(MR({', '.join(map(str, self.a))}) - MR({', '.join(map(str, self.b))}), "
            f"kind={self.kind!r}: [{self.lower:.6g}, {self.upper:.6g}]{' exact' if self.exact else ' outer'}, "
            f"reference={self.reference:.6g}, epsilon_abs={self.epsilon_abs:.6g})"
        )

    @property
    def gap(self) -> tuple[float, float]:
        return self.lower_attained - self.lower, self.upper - self.upper_attained

    def member(self, end: str = "lower"):
        return self.parametrization.estimator(self.lower_theta if end == "lower" else self.upper_theta)

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "a": list(self.a),
                "b": list(self.b),
                "kind": self.kind,
                "range": (self.lower, self.upper),
                "exact": self.exact,
                "reference": self.reference,
                "epsilon_abs": self.epsilon_abs,
            },
            [("", self.to_frame())],
        )

    def to_frame(self) -> pd.DataFrame:
        g = self.gap
        return pd.DataFrame(
            [
                {
                    "a": ", ".join(map(str, self.a)),
                    "b": ", ".join(map(str, self.b)),
                    "kind": self.kind,
                    "lower": self.lower,
                    "lower_attained": self.lower_attained,
                    "reference": self.reference,
                    "upper_attained": self.upper_attained,
                    "upper": self.upper,
                    "lower_gap": g[0],
                    "upper_gap": g[1],
                    "exact": self.exact,
                }
            ]
        )

    def to_dict(self) -> dict:
        return {"method": self.method, "epsilon_abs": _num(self.epsilon_abs), **_records(self.to_frame())[0]}

    def plot(self, *, ax: Any = None, **kwargs: Any):
        from ...plotting import RelianceOrderDisplay

        return RelianceOrderDisplay.interval(self, ax=ax, **kwargs)


@dataclass(frozen=True, repr=False)
class RelianceOrder(DisplayMixin):
    """The certified partial order of reliances: ``a ≻ b`` when the certified lower end of MR(a) - MR(b) is > 0.

    ``relations`` has one row per ordered pair that holds, with the lower end and the critical ε: the relation
    holds (certified) for every ε_abs <= ``critical_lower`` and fails (a member witnesses it) at
    ``critical_upper`` (inf: holds up to the largest ε searched, ``epsilon_max``, or, for the classifiers, no member
    breaking it was found). ``critical_refuted``: a member witnesses the failure at ``critical_upper``;
    ``critical_exact``: the bracket is closed to ``rtol`` (quadratic classes; the classifiers' is bounded in steps).
    ``differences`` holds the :class:`RelianceDifference` of every unordered pair.
    """

    features: list
    relations: pd.DataFrame
    differences: dict
    kind: str
    epsilon_abs: float
    e_ref: float
    epsilon_max: float

    def __repr__(self) -> str:
        rel = "; ".join(f"{r.a} > {r.b}" for r in self.relations.itertuples())
        return (
            f"RelianceOrder({len(self.features)} features, {len(self.relations)} relations"
            f"{': ' + rel if rel else ''}, epsilon_abs={self.epsilon_abs:.6g})"
        )[:300]

    def holds(self, a, b) -> bool:
        """Whether ``a ≻ b`` is certified at the set's ε."""
        df = self.relations
        return bool(((df["a"] == str(a)) & (df["b"] == str(b))).any())

    def hasse_edges(self) -> list[tuple[str, str]]:
        """The covering relations (transitive reduction) of the order."""
        rel = {(r.a, r.b) for r in self.relations.itertuples()}
        names = [str(f) for f in self.features]
        return sorted((a, b) for a, b in rel if not any((a, c) in rel and (c, b) in rel for c in names))

    def _display_(self) -> tuple[dict, list]:
        return (
            {
                "features": [str(f) for f in self.features],
                "kind": self.kind,
                "epsilon_abs": self.epsilon_abs,
                "e_ref": self.e_ref,
                "epsilon_max": self.epsilon_max,
            },
            [("", self.to_frame())],
        )

    def to_frame(self) -> pd.DataFrame:
        return self.relations.copy()

    def to_dict(self) -> dict:
        return {
            "features": [str(f) for f in self.features],
            "kind": self.kind,
            "epsilon_abs": self.epsilon_abs,
            "e_ref": self.e_ref,
            "epsilon_max": _num(self.epsilon_max),
            "relations": _records(self.relations),
            "hasse_edges": [list(e) for e in self.hasse_edges()],
            "differences": [d.to_dict() for d in self.differences.values()],
        }

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """Hasse diagram: an arrow a → b for each covering relation a ≻ b, labelled with its critical ε."""
        from ...plotting import RelianceOrderDisplay

        return RelianceOrderDisplay(self).plot(ax=ax, **kwargs)
