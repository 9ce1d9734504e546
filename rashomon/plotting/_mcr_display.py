from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._layout import legend_outside, new_axes, user_text


class MCREnvelopeDisplay:
    """The paper's MCR figure: loss against model reliance.

    Draws the certified envelope (no model of the class lies below it), the
    models the search found (one per γ), the Rashomon threshold ε as a
    horizontal line, the MCR interval on it (its ends written out) and the
    reference model (its MR and loss) as a star labelled "reference". Where
    an end is not tight, the MRs the members found attain are drawn inside the
    certified interval, labelled "attained [a, b] within certified [c, d]".
    The envelope is evaluated on a dense grid of MR values and the axes are set
    around the interval and the reference, so a search of a handful of steps
    still reads well. ``plot`` returns ``self`` and keeps ``ax_``, ``figure_``,
    ``envelope_line_``, ``models_``, ``interval_``, ``attained_`` (None when
    both ends are tight) and ``reference_`` (None when the reference is
    unknown).
    """

    def __init__(
        self,
        m_grid,
        envelope,
        model_mr,
        model_loss,
        epsilon,
        lower,
        upper,
        *,
        kind="ratio",
        features=(),
        e_min=math.nan,
        reference=None,
        attained=None,
    ):
        self.m_grid = np.asarray(m_grid)
        self.envelope = np.asarray(envelope)
        self.model_mr = np.asarray(model_mr)
        self.model_loss = np.asarray(model_loss)
        self.epsilon, self.lower, self.upper = epsilon, lower, upper
        self.kind, self.features, self.e_min, self.reference = kind, tuple(features), e_min, reference
        #: ``(lower, upper)`` attained by the members found, when an end is not tight (else None)
        self.attained = attained

    @staticmethod
    def _models(steps, kind):
        mr, loss = [], []
        for s in steps:
            if s.theta is not None and np.isfinite(s.e_orig):
                mr.append(s.e_switch / s.e_orig if kind == "ratio" else s.e_switch - s.e_orig)
                loss.append(s.e_orig)
        return np.array(mr), np.array(loss)

    @classmethod
    def _build(cls, steps, env_fn, kind, eps, lower, upper, features, e_min, reference, eps_max, attained=None):
        mr, loss = cls._models(steps, kind)
        # x range: the MCR interval, the reference and the models near the set, padded; the
        # envelope is evaluated on a dense grid, so a search of a handful of steps still draws a curve
        e_lo = e_min if np.isfinite(e_min) else (np.nanmin(loss) if loss.size else eps)
        span_e = max(eps_max - e_lo, 1e-9 * max(1.0, abs(eps_max)))
        finite = [v for v in (lower, upper) if np.isfinite(v)]
        if reference is not None and np.isfinite(reference[0]):
            finite.append(float(reference[0]))
        inside = mr[loss <= eps_max + 0.25 * span_e] if mr.size else mr
        span_vals = np.concatenate([np.array(finite, dtype=float), inside])
        span_vals = span_vals[np.isfinite(span_vals)]
        lo_m, hi_m = (span_vals.min(), span_vals.max()) if span_vals.size else (0.0, 2.0)
        pad = 0.25 * max(hi_m - lo_m, 0.02 * max(1.0, abs(hi_m)))
        grid = np.linspace(lo_m - pad, hi_m + pad, 800)
        return cls(
            grid,
            env_fn(grid),
            mr,
            loss,
            eps,
            lower,
            upper,
            kind=kind,
            features=features,
            e_min=e_min,
            reference=reference,
            attained=attained,
        )

    @classmethod
    def from_result(cls, result: Any) -> MCREnvelopeDisplay:
        ref = result.reference_model
        refpt = None if ref is None else (ref.mr, ref.e_orig)
        env_fn = result.envelope
        if getattr(result, "loss", "squared_error") != "squared_error":
            # a classifier's steps certify the curve only below ε (above it, only "loss > ε"): not drawn there
            eps = result.epsilon_abs

            def env_fn(m):
                v = result.envelope(m)
                return np.where(v < eps * (1 - 1e-12), v, np.nan)

        return cls._build(
            result.steps,
            env_fn,
            result.kind,
            result.epsilon_abs,
            result.lower,
            result.upper,
            result.features,
            result.e_min,
            refpt,
            result.epsilon_abs,
            None if result.lower_tight and result.upper_tight else (result.lower_attained, result.upper_attained),
        )

    @classmethod
    def from_envelope(cls, env: Any, *, epsilon: float | None = None) -> MCREnvelopeDisplay:
        eps = float(env.epsilons.max()) if epsilon is None else float(epsilon)
        lower, upper = env.bounds(eps)
        r0 = env.results[int(np.argmin(env.epsilons))]
        ref = r0.reference_model
        refpt = None if ref is None else (ref.mr, ref.e_orig)
        # the search run at this ε (if any) knows its members: their MRs beside bounds that are not tight
        at = [r for r in env.results if math.isclose(r.epsilon_abs, eps, rel_tol=1e-12)]
        attained = None
        if at and not (at[0].lower_tight and at[0].upper_tight):
            attained = (at[0].lower_attained, at[0].upper_attained)
        return cls._build(
            env.steps,
            env.envelope,
            env.kind,
            eps,
            lower,
            upper,
            env.features,
            env.e_min,
            refpt,
            float(env.epsilons.max()),
            attained,
        )

    @user_text
    def plot(
        self, *, ax: Any = None, line_kw: dict | None = None, scatter_kw: dict | None = None
    ) -> MCREnvelopeDisplay:
        ax = new_axes(ax, (8.5, 4.6))
        env = np.where(np.isfinite(self.envelope), self.envelope, np.nan)
        if np.isfinite(self.e_min):  # no model has a loss below e_min: the curve is never drawn under it
            env = np.maximum(env, self.e_min)
        (self.envelope_line_,) = ax.plot(
            self.m_grid, env, **({"color": "k", "lw": 1.5, "label": "certified envelope"} | (line_kw or {}))
        )
        self.models_ = ax.scatter(
            self.model_mr,
            self.model_loss,
            **(
                {"s": 16, "color": "#4c72b0", "alpha": 0.7, "label": "models found (one per γ)", "zorder": 3}
                | (scatter_kw or {})
            ),
        )
        ax.axhline(self.epsilon, color="#c44e52", ls="--", lw=1, label="ε (Rashomon threshold)")
        lo = self.lower if np.isfinite(self.lower) else self.m_grid[0]
        hi = self.upper if np.isfinite(self.upper) else self.m_grid[-1]
        (self.interval_,) = ax.plot(
            [lo, hi],
            [self.epsilon, self.epsilon],
            color="#c44e52",
            lw=5,
            alpha=0.6,
            solid_capstyle="butt",
            label=f"MCR [{self.lower:.3g}, {self.upper:.3g}]"
            if self.attained is None
            else f"certified MCR [{self.lower:.3g}, {self.upper:.3g}]",
        )
        self.attained_ = None
        if self.attained is not None and all(np.isfinite(self.attained)):
            a_lo, a_hi = self.attained
            (self.attained_,) = ax.plot(
                [a_lo, a_hi],
                [self.epsilon, self.epsilon],
                color="#67000d",
                lw=2,
                solid_capstyle="butt",
                marker="|",
                ms=10,
                label=f"attained [{a_lo:.3g}, {a_hi:.3g}]\nwithin certified [{self.lower:.3g}, {self.upper:.3g}]",
            )
        self.reference_ = None
        if self.reference is not None:
            rm, rl = self.reference
            self.reference_ = ax.scatter(
                [rm],
                [rl],
                marker="*",
                s=180,
                color="#dd8452",
                edgecolor="k",
                lw=0.6,
                zorder=5,
                label=f"reference (MR {rm:.3g}, loss {rl:.4g})",
            )
        # y range: from just below the best loss to above ε (the legend is outside, right of the axes)
        finite_env = env[np.isfinite(env)]
        bottom_c = [v for v in (self.e_min, finite_env.min() if finite_env.size else np.nan) if np.isfinite(v)]
        if self.reference is not None and np.isfinite(self.reference[1]):
            bottom_c.append(self.reference[1])
        base = min(bottom_c) if bottom_c else self.epsilon
        span = max(self.epsilon - base, 1e-3 * max(1.0, abs(self.epsilon)))
        bottom = base - 0.12 * span
        top = bottom + (self.epsilon - bottom) / 0.75
        ax.set_ylim(bottom=bottom, top=top)
        ax.set_xlim(self.m_grid[0], self.m_grid[-1])
        # the bounds' values written at the interval's ends (text, not extra lines), each running toward the
        # middle of the axes (never over the tick labels), MCR− below the ε line and MCR+ above it
        mid = 0.5 * (self.m_grid[0] + self.m_grid[-1])
        for x, name, dy in ((self.lower, "MCR−", -14), (self.upper, "MCR+", 6)):
            if np.isfinite(x):
                ha = "left" if x <= mid else "right"
                ax.annotate(
                    f"{name} = {x:.3g}",
                    (x, self.epsilon),
                    xytext=(3 if ha == "left" else -3, dy),
                    textcoords="offset points",
                    ha=ha,
                    fontsize=9,
                    color="#c44e52",
                    bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8},
                )
        ax.set_xlabel(f"model reliance ({self.kind}) on {', '.join(self.features)}")
        ax.set_ylabel("empirical loss e_orig")
        legend_outside(ax)
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
    def from_envelope(cls, env: Any) -> MCRBandDisplay:
        return cls(env.epsilons, env.lower, env.upper, kind=env.kind, features=env.features)

    @user_text
    def plot(self, *, ax: Any = None, fill_kw: dict | None = None) -> MCRBandDisplay:
        ax = new_axes(ax, (6, 4))
        self.band_ = ax.fill_between(
            self.epsilons, self.lower, self.upper, **({"color": "#4c72b0", "alpha": 0.3} | (fill_kw or {}))
        )
        ax.plot(self.epsilons, self.lower, color="#4c72b0")
        ax.plot(self.epsilons, self.upper, color="#4c72b0")
        ax.axhline(1.0 if self.kind == "ratio" else 0.0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("Rashomon threshold ε (absolute loss)")
        ax.set_ylabel(f"MCR ({self.kind}) on {', '.join(self.features)}")
        self.ax_, self.figure_ = ax, ax.figure
        return self
