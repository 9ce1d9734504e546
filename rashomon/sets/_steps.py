"""Steps of the γ-search and the bounds each certified step gives (Fisher, Rudin & Dominici 2019, §6)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..utils import DisplayMixin

__all__ = ["MCRStep", "MCRModel", "mr_value", "step_bound", "envelope_loss"]


@dataclass(frozen=True, repr=False)
class MCRStep(DisplayMixin):
    """One solve of the search: ``h* = min_F h(f; γ)`` and its minimiser.

    ``side`` is ``"lower"`` (h₋) or ``"upper"`` (h₊). ``certified`` is True when
    the engine's KKT certificate passed (so h* is the global minimum).
    """

    side: str
    gamma: float
    h_star: float
    theta: np.ndarray | None
    e_orig: float
    e_switch: float
    certified: bool
    nu: float = math.nan

    def _display_(self) -> tuple[dict, list]:
        return {
            "side": self.side,
            "gamma": self.gamma,
            "h_star": self.h_star,
            "e_orig": self.e_orig,
            "e_switch": self.e_switch,
            "certified": self.certified,
        }, []


@dataclass(frozen=True, repr=False)
class MCRModel(DisplayMixin):
    """A model of the class: parameters, losses and reliance."""

    theta: np.ndarray
    e_orig: float
    e_switch: float
    mr: float
    params: dict
    estimator: Any = field(default=None, repr=False, compare=False)

    def _display_(self) -> tuple[dict, list]:
        return {
            "mr": self.mr,
            "e_orig": self.e_orig,
            "e_switch": self.e_switch,
            "n_parameters": int(np.size(self.theta)),
        }, []

    @property
    def coef(self):
        return self.params.get("coef")

    @property
    def intercept(self):
        return self.params.get("intercept")


def mr_value(e_o: float, e_s: float, kind: str) -> float:
    if kind == "difference":
        return e_s - e_o
    return e_s / e_o if e_o > 0 else math.inf


def step_bound(step: MCRStep, eps: float, kind: str) -> float:
    """The bound a certified step gives at ε (``nan`` when it gives none)."""
    if not step.certified or not np.isfinite(step.h_star):
        return math.nan
    g, h = step.gamma, step.h_star
    if kind == "ratio":
        if h < 0:
            return math.nan
        if step.side == "lower":
            return h / eps - g
        return (h / eps - 1.0) / g if g < 0 else math.nan
    if step.side == "lower":
        return h - (1.0 + g) * eps if g >= -1 else math.nan
    return (h - eps) / g - eps if -1 <= g < 0 else math.nan


def envelope_loss(steps: list[MCRStep], m: np.ndarray, kind: str) -> np.ndarray:
    """Certified lower bound on e_orig of any model of the class with MR = m."""
    m = np.asarray(m, dtype=float)
    out = np.full(m.shape, -np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for s in steps:
            if not s.certified or not np.isfinite(s.h_star):
                continue
            g, h = s.gamma, s.h_star
            if kind == "ratio":
                if h < 0:
                    continue
                den = (m + g) if s.side == "lower" else (1.0 + g * m)
                if s.side == "upper" and g >= 0:
                    continue
                val = np.where(den > 0, h / den, np.inf if h > 0 else -np.inf)
            else:
                # lower: (1+γ)e_orig >= h - m ; upper: (1+γ)e_orig >= h - γ m
                num = h - m if s.side == "lower" else h - g * m
                if s.side == "upper" and not (-1 <= g < 0):
                    continue
                if s.side == "lower" and g < -1:
                    continue
                if 1 + g > 0:
                    val = num / (1 + g)
                else:  # γ = -1: a hard constraint num <= 0
                    val = np.where(num <= 0, -np.inf, np.inf)
            out = np.maximum(out, val)
    return out


def level_point(loss, a: np.ndarray, b: np.ndarray, eps: float, iters: int = 60) -> np.ndarray:
    """A point with ``loss <= eps`` as close as bisection gets to ``loss = eps`` on the segment from
    b (inside, ``loss(b) <= eps``) toward a (outside): a convex loss crosses ε once along it."""
    t0, t1 = 0.0, 1.0
    for _ in range(iters):
        tm = 0.5 * (t0 + t1)
        if loss(b + tm * (a - b)) <= eps:
            t0 = tm
        else:
            t1 = tm
    return b + t0 * (a - b)
