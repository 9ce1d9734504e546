"""The audit's displays: the summary figure, figure files and the result-contained HTML report."""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

__all__ = ["plot_summary", "write_figures", "to_html"]


def plot_summary(result, *, ax: Any = None):
    """MR of the reference and the MCR interval (with CIs) for each group."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.9 * len(result.groups) + 1.5))
    for k, g in enumerate(result.groups.values()):
        ax.plot([g.mcr_lower, g.mcr_upper], [k, k], color="#4c72b0", lw=8, alpha=0.5, solid_capstyle="butt",
                label="MCR" if k == 0 else None)
        ax.plot([g.mr_ref], [k], "o", color="#dd8452", label="MR of reference" if k == 0 else None)
        if "mcr_lower" in g.ci:
            # each CI drawn as its own segment: a percentile interval need not contain the estimate
            for end in ("mcr_lower", "mcr_upper"):
                lo, hi = g.ci[end]
                ax.plot([lo, hi], [k - 0.2, k - 0.2], color="grey", lw=1.5, marker="|",
                        label=f"{result.confidence_level:.0%} bootstrap CI of MCR-/MCR+" if (k == 0 and end == "mcr_lower") else None)
    ax.axvline(1.0, color="grey", ls="--", lw=0.8)
    ax.set_yticks(range(len(result.groups)), list(result.groups))
    ax.set_ylim(-0.8, len(result.groups) - 0.4)
    ax.set_xlabel("model reliance (ratio)")
    ax.legend(fontsize=8)
    return ax

def write_figures(result, out_dir: str | Path) -> dict:
    """Write each figure as PNG and SVG; returns {name: base64 PNG} for embedding."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figs = {}
    items = [(f"envelope_{n}", lambda ax, n=n: result.plot(n, ax=ax)) for n in result.groups]
    items.append(("summary", lambda ax: result.plot_summary(ax=ax)))
    for name, draw in items:
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        draw(ax)
        if name.startswith("envelope_"):
            ax.set_title(f"Model class reliance: {name[9:]}")
        fig.tight_layout()
        fig.savefig(out / f"{name}.png", dpi=120)
        fig.savefig(out / f"{name}.svg")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        figs[name] = base64.b64encode(buf.getvalue()).decode()
        plt.close(fig)
    return figs

def to_html(result, path: str | Path, figures: dict | None = None) -> None:
    """A result-contained HTML report (figures embedded as base64 PNG)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if figures is None:
        figures = result.write_figures(path.parent)
    esc = html.escape
    table = result.to_frame().to_html(float_format=lambda v: f"{v:.4f}", classes="results", border=0)
    imgs = "".join(f'<figure><img alt="{esc(k)}" src="data:image/png;base64,{v}"/><figcaption>{esc(k)}</figcaption></figure>'
                   for k, v in figures.items())
    ci_txt = (f"{result.confidence_level:.0%} percentile intervals from {result.bootstrap} bootstrap resamples of the held-out rows"
              if result.bootstrap else "no bootstrap intervals were requested")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Reliance audit: {esc(result.target)}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.45}}
table.results{{border-collapse:collapse}}table.results td,table.results th{{padding:4px 10px;border-bottom:1px solid #ccc;text-align:right}}
figure{{display:inline-block;margin:0.5em}}img{{max-width:28em}}</style></head><body>
<h1>How much could any good model rely on these variables?</h1>
<p>Target <b>{esc(result.target)}</b>; features {esc(", ".join(result.features))}; model class <b>{esc(result.model_class)}</b>.
{result.n_train} rows fitted the reference model, {result.n_test} held-out rows are where reliance was measured.</p>
<h2>Method in plain words</h2>
<p><b>Model reliance (MR)</b> of a model on a group of variables is the ratio of its loss when the group is scrambled
(each row's group values replaced by another row's, over all pairs of rows) to its loss on the real data. MR = 1 means the
model does not use the group; MR = 2 means scrambling doubles the error.</p>
<p><b>Model class reliance (MCR)</b> is the lowest and highest MR of <i>any</i> model in the class whose held-out loss is at
most ε = {result.epsilon_abs:.4g} (the reference's held-out loss {result.e_ref:.4g} plus a margin from its cross-validated
loss {result.cv_loss:.4g}). These "good models" form the Rashomon set. The bounds are computed exactly and certified
(Fisher, Rudin &amp; Dominici, JMLR 2019): no model of the class in the set lies outside [MCR−, MCR+], and a model
attaining each end was found.</p>
<h2>Results</h2>{table}
<p>Intervals: {esc(ci_txt)}. "refit loss ratio" is the held-out loss of the reference refitted without the group,
divided by the reference's held-out loss.</p>
<h2>Figures</h2>{imgs}
<h2>Data provenance</h2><p>{esc(result.provenance or "Supplied by the user.")}</p>
<h2>What MCR does and does not show</h2><ul>
<li>If MCR+ for a group is near 1, no well-performing model of this class needs the group: any model that uses it
heavily is not among the good ones.</li>
<li>If MCR− is well above 1, every well-performing model of the class relies on the group.</li>
<li>MCR describes a <i>class</i> of models and a data set; a model outside the class (e.g. a proprietary score) is
bracketed only if the class contains a model that relies on the variables as much as it does.</li>
<li>Reliance is not causation, nor a measure of fairness by itself: a variable can carry information through
correlated variables, and scrambling it can create unusual combinations of values.</li>
<li>The intervals reflect resampling of the held-out rows only; the reference fit and the class are held fixed.</li>
</ul>
<p style="color:#777">Generated by rashomon (seed {result.seed}).</p></body></html>"""
    path.write_text(page, encoding="utf-8")
