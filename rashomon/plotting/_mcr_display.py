from __future__ import annotations

import math
from typing import Any

import numpy as np


class MCREnvelopeDisplay:
    """The paper's MCR figure: loss against model reliance.

    Draws the certified envelope (no model of the class lies below it), the
    models the search found (one per γ), the Rashomon threshold ε as a
    horizontal line and the MCR interval on it. ``plot`` returns ``self`` and
    keeps ``ax_``, ``figure_``, ``envelope_line_``, ``models_``, ``interval_``.
    """

    def __init__(self, m_grid, envelope, model_mr, model_loss, epsilon, lower, upper, *, kind="ratio",
                 features=(), e_min=math.nan, reference=None):
        self.m_grid = np.asarray(m_grid)
        self.envelope = np.asarray(envelope)
        self.model_mr = np.asarray(model_mr)
        self.model_loss = np.asarray(model_loss)
        self.epsilon, self.lower, self.upper = epsilon, lower, upper
        self.kind, self.features, self.e_min, self.reference = kind, tuple(features), e_min, reference

    @staticmethod
    def _models(steps, kind):
        mr, loss = [], []
        for s in steps:
            if s.theta is not None and np.isfinite(s.e_orig):
                mr.append(s.e_switch / s.e_orig if kind == "ratio" else s.e_switch - s.e_orig)
                loss.append(s.e_orig)
        return np.array(mr), np.array(loss)

    @classmethod
    def _build(cls, steps, env_fn, kind, eps, lower, upper, features, e_min, reference, eps_max):
        mr, loss = cls._models(steps, kind)
        finite = [v for v in (lower, upper) if np.isfinite(v)]
        inside = mr[loss <= eps_max * 1.5] if mr.size else mr
        span_vals = np.concatenate([np.array(finite), inside]) if inside.size else np.array(finite)
        lo_m, hi_m = (span_vals.min(), span_vals.max()) if span_vals.size else (0.0, 2.0)
        pad = 0.15 * max(hi_m - lo_m, 1e-3)
        grid = np.linspace(lo_m - pad, hi_m + pad, 600)
        return cls(grid, env_fn(grid), mr, loss, eps, lower, upper, kind=kind, features=features, e_min=e_min,
                   reference=reference)

    @classmethod
    def from_result(cls, result: Any) -> "MCREnvelopeDisplay":
        ref = result.reference_model
        refpt = None if ref is None else (ref.mr, ref.e_orig)
        return cls._build(result.steps, result.envelope, result.kind, result.epsilon_abs, result.lower, result.upper,
                          result.features, result.e_min, refpt, result.epsilon_abs)

    @classmethod
    def from_envelope(cls, env: Any, *, epsilon: float | None = None) -> "MCREnvelopeDisplay":
        eps = float(env.epsilons.max()) if epsilon is None else float(epsilon)
        lower, upper = env.bounds(eps)
        r0 = env.results[int(np.argmin(env.epsilons))]
        ref = r0.reference_model
        refpt = None if ref is None else (ref.mr, ref.e_orig)
        return cls._build(env.steps, env.envelope, env.kind, eps, lower, upper, env.features, env.e_min, refpt,
                          float(env.epsilons.max()))

    def plot(self, *, ax: Any = None, line_kw: dict | None = None, scatter_kw: dict | None = None) -> "MCREnvelopeDisplay":
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4.2))
        env = np.where(np.isfinite(self.envelope), self.envelope, np.nan)
        (self.envelope_line_,) = ax.plot(self.m_grid, env, **({"color": "k", "lw": 1.5, "label": "certified envelope"} | (line_kw or {})))
        ymax = max(self.epsilon * 1.6, np.nanmin(env) * 1.05 if np.any(np.isfinite(env)) else self.epsilon)
        self.models_ = ax.scatter(self.model_mr, self.model_loss, **({"s": 14, "color": "#4c72b0", "alpha": 0.7, "label": "models found (one per γ)", "zorder": 3} | (scatter_kw or {})))
        ax.axhline(self.epsilon, color="#c44e52", ls="--", lw=1, label="ε (Rashomon threshold)")
        lo = self.lower if np.isfinite(self.lower) else self.m_grid[0]
        hi = self.upper if np.isfinite(self.upper) else self.m_grid[-1]
        (self.interval_,) = ax.plot([lo, hi], [self.epsilon, self.epsilon], color="#c44e52", lw=5, alpha=0.6,
                                    solid_capstyle="butt", label=f"MCR [{self.lower:.3g}, {self.upper:.3g}]")
        if self.reference is not None:
            ax.scatter([self.reference[0]], [self.reference[1]], marker="*", s=120, color="#dd8452", zorder=4, label="loss minimiser")
        ax.set_ylim(bottom=min(self.e_min * 0.98, np.nanmin(self.model_loss) if self.model_loss.size else self.e_min), top=ymax)
        ax.set_xlim(self.m_grid[0], self.m_grid[-1])
        ax.set_xlabel(f"model reliance ({self.kind}) on {', '.join(self.features)}")
        ax.set_ylabel("empirical loss e_orig")
        ax.legend(fontsize=8, loc="upper center")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class MCRBandDisplay:
    """MCR lower and upper bounds against the Rashomon threshold ε."""

    def __init__(self, epsilons, lower, upper, *, kind="ratio", features=()):
        o = np.argsort(epsilons)
        self.epsilons = np.asarray(epsilons)[o]
        self.lower = np.asarray(lower)[o]
        self.upper = np.asarray(upper)[o]
        self.kind, self.features = kind, tuple(features)

    @classmethod
    def from_envelope(cls, env: Any) -> "MCRBandDisplay":
        return cls(env.epsilons, env.lower, env.upper, kind=env.kind, features=env.features)

    def plot(self, *, ax: Any = None, fill_kw: dict | None = None) -> "MCRBandDisplay":
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        self.band_ = ax.fill_between(self.epsilons, self.lower, self.upper, **({"color": "#4c72b0", "alpha": 0.3} | (fill_kw or {})))
        ax.plot(self.epsilons, self.lower, color="#4c72b0")
        ax.plot(self.epsilons, self.upper, color="#4c72b0")
        ax.axhline(1.0 if self.kind == "ratio" else 0.0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("Rashomon threshold ε (absolute loss)")
        ax.set_ylabel(f"MCR ({self.kind}) on {', '.join(self.features)}")
        self.ax_, self.figure_ = ax, ax.figure
        return self
