"""The audit's displays: the summary figure, figure files and the self-contained HTML report.

The report states what was done (loss, ε rule, hyper-parameters, encoding, rows
used and dropped, certification of each bound, interval method, package
version, date, input checksum) in sentences generated from the result, so that
the page can be handed on without the code. It reads the run's bookkeeping from
``result.meta`` and falls back on the result's own fields when a key is absent.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..utils import save_figure, write_bytes, write_text
from ._report_classifier import class_text, classifier_section, user_model_section
from ._report_fairness import fairness_section
from ._report_text import (
    _HP_LABELS,
    _LOSS_TEXT,
    _attained,
    _ci_text,
    _computation_text,
    _encoding_text,
    _epsilon_text,
    _f,
    _g,
    _hyperparameters,
    _limits_ci_text,
    _package_version,
    _rows_text,
    certification_sentence,
    headline,
)

__all__ = ["plot_summary", "write_figures", "to_html", "figure_slug"]

FIG_SIZE = (10, 6.5)  # inches; at FIG_DPI the PNGs are >= 1,000 px wide
FIG_DPI = 120


def plot_summary(result, *, ax: Any = None):
    """MR of the reference and the MCR interval (with CIs) for each group."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 0.9 * len(result.groups) + 1.5), layout="constrained")
    shown = _shows_attained(result)
    for k, g in enumerate(result.groups.values()):
        ax.plot(
            [g.mcr_lower, g.mcr_upper],
            [k, k],
            color="#4c72b0",
            lw=8,
            alpha=0.5,
            solid_capstyle="butt",
            label=("MCR (certified bounds)" if shown else "MCR") if k == 0 else None,
        )
        x = getattr(g, "extra", None) or {}
        if shown:  # the members found, inside the certified bounds (a classifier, or an end not tight)
            ax.plot(
                list(_attained(g)),
                [k, k],
                color="#27408b",
                lw=3,
                solid_capstyle="butt",
                label="attained by members found" if k == 0 else None,
            )
        ax.plot([g.mr_ref], [k], "o", color="#dd8452", label="MR of reference" if k == 0 else None)
        if "model_mr" in x:
            ax.plot([x["model_mr"]], [k + 0.2], "D", color="#2a9d4b", label="MR of your model" if k == 0 else None)
            if "model_mr_ci" in x:
                ax.plot(list(x["model_mr_ci"]), [k + 0.2, k + 0.2], color="#2a9d4b", lw=1.5, marker="|")
        if "mcr_lower" in g.ci:
            # each CI drawn as its own segment: a percentile interval need not contain the estimate
            for end in ("mcr_lower", "mcr_upper"):
                lo, hi = g.ci[end]
                ax.plot(
                    [lo, hi],
                    [k - 0.2, k - 0.2],
                    color="grey",
                    lw=1.5,
                    marker="|",
                    label=f"{result.confidence_level:.0%} bootstrap CI of MCR-/MCR+"
                    if (k == 0 and end == "mcr_lower")
                    else None,
                )
    ax.axvline(1.0, color="grey", ls="--", lw=0.8)
    ax.set_yticks(range(len(result.groups)), list(result.groups))
    ax.set_ylim(-0.8, len(result.groups) - 0.4)
    ax.set_xlabel("model reliance (ratio)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)  # outside the data
    return ax


def _shows_attained(result) -> bool:
    """Whether the summary draws the attained MRs: a classifier audit, or some group with an end not tight."""
    return any(
        "mcr_upper_attained" in (getattr(g, "extra", None) or {}) or not (g.mcr.lower_tight and g.mcr.upper_tight)
        for g in result.groups.values()
    )


def figure_slug(name: str) -> str:
    """A file-name-safe form of a group name (letters, digits, ``_``, ``-``, ``.``)."""
    s = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name).strip()).strip("._-")
    return s[:64] or "group"


def _figure_names(result, prefix: str = "") -> dict:
    """{file stem: group name or None (summary)}; stems unique (case-insensitively)."""
    out, seen = {}, set()
    for name in result.groups:
        stem = f"{prefix}envelope_{figure_slug(name)}"
        base, k = stem, 2
        while stem.lower() in seen:
            stem, k = f"{base}_{k}", k + 1
        seen.add(stem.lower())
        out[stem] = name
    out[f"{prefix}summary"] = None
    return out


def write_figures(result, out_dir: str | Path, prefix: str = "") -> dict:
    """Write each figure as PNG and SVG (file names from the slugified group names).

    Figures are drawn at ``FIG_SIZE`` inches and ``FIG_DPI`` (>= 1,000 px wide) with a tight
    bounding box, so no label is clipped. Returns ``{file stem: base64 PNG}`` for embedding;
    the embedded PNG is byte for byte the written one.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from ..plotting import plain_text

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figs = {}
    n = len(result.groups)
    for stem, group in _figure_names(result, prefix).items():
        with plt.rc_context({"font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12}):
            if group is None:
                fig, ax = plt.subplots(figsize=(FIG_SIZE[0], max(3.5, 0.9 * n + 2.2)))
                result.plot_summary(ax=ax)
                ax.set_title("MCR interval and the reference's MR, by group")
                leg = ax.get_legend()
            else:
                fig, ax = plt.subplots(figsize=FIG_SIZE)
                result.plot(group, ax=ax)
                ax.set_title(f"Model class reliance: {group}")
                leg = ax.get_legend()
            if leg is not None:
                for t in leg.get_texts():
                    t.set_fontsize(10)
            plain_text(fig)  # labels from the data are text, never mathtext
            fig.tight_layout()
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=FIG_DPI, bbox_inches="tight")
            png = buf.getvalue()
            try:
                write_bytes(out / f"{stem}.png", png)
                save_figure(fig, out / f"{stem}.svg", bbox_inches="tight")
            finally:
                plt.close(fig)
        figs[stem] = base64.b64encode(png).decode()
    return figs


# ----------------------------------------------------------------------------- page

_CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:62em;margin:2em auto;padding:0 1em;line-height:1.5;color:#222}
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
.wide{overflow-x:auto}table{border-collapse:collapse;margin:0.5em 0}td,th{padding:4px 10px;border-bottom:1px solid #ccc;text-align:right}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:0.35em 1.2em;margin:0.6em 0}
dl.kv dt{font-weight:bold}dl.kv dd{margin:0}
figure{margin:1.2em 0}img{display:block;max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:0.92em;color:#444}.small{color:#666;font-size:0.9em}
ul.summary li{margin-bottom:0.4em}code{font-size:0.92em}"""


def first_group(result):
    return next(iter(result.groups.values()))


def _caption(result, stem: str, group: str | None) -> str:
    if group is None:
        ci = (
            "; grey ticks: the bootstrap intervals of MCR− and MCR+"
            if any("mcr_lower" in g.ci for g in result.groups.values())
            else ""
        )
        extra = getattr(first_group(result), "extra", None) or {}
        att = (
            "; dark blue line: the MRs attained by the members found, inside the certified bounds (where the two "
            "differ, the true end lies between the line's end and the bar's)"
            if _shows_attained(result)
            else ""
        )
        yours = "; green diamond: your model's MR (with its bootstrap interval)" if "model_mr" in extra else ""
        return (
            "For each group: the MCR interval (blue bar) and the reference model's MR (orange dot)"
            f"{ci}{att}{yours}. The dashed line is MR = 1 (the group is not used)."
        )
    g = result.groups[group]
    ref = g.mcr.reference_model
    refs = (
        f" Orange star: the reference model (MR {_g(ref.mr)}, held-out loss {_g(ref.e_orig)})."
        if ref is not None
        else ""
    )
    if g.mcr.lower_tight and g.mcr.upper_tight:
        seg = (
            f"thick red segment: the MCR interval [{_f(g.mcr_lower)}, {_f(g.mcr_upper)}], the MRs of all models "
            "under the line."
        )
    else:
        lo_att, up_att = _attained(g)
        seg = (
            f"thick red segment: the certified MCR bounds [{_f(g.mcr_lower)}, {_f(g.mcr_upper)}], no model under "
            f"the line lies outside them; dark segment: attained [{_f(lo_att)}, {_f(up_att)}] by the members found."
        )
    return (
        f"Loss against model reliance on {html.escape(', '.join(g.features))} (group {html.escape(group)}). "
        "Black curve: the certified envelope, no model of the class has a loss below it at that MR. "
        f"Blue dots: models found by the search. Dashed red line: ε; {seg}{refs}"
    )


def to_html(result, path: str | Path, figures: dict | None = None) -> None:
    """A self-contained HTML report (figures embedded as base64 PNG; also written beside it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if figures is None:
        figures = result.write_figures(path.parent)
    meta = getattr(result, "meta", None) or {}
    esc = html.escape
    prefix = next((k[: -len("summary")] for k in figures if k.endswith("summary")), "")
    names = _figure_names(result, prefix)
    first = next(iter(result.groups.values()))

    run = [g for g in result.groups.values() if math.isfinite(g.mcr_lower) or math.isfinite(g.mcr_upper)]
    table = result.to_frame().to_html(
        float_format=_f, classes="results", border=0, na_rep="not run" if len(run) < len(result.groups) else "NaN"
    )
    bounds_txt = (
        "The bounds were computed by the certified search of Fisher, Rudin &amp; Dominici (JMLR 2019): no model "
        "of the class in the set lies outside [MCR−, MCR+]."
        if run
        else "MCR was not run (see the computation notes), so the report gives no bounds over the set."
    )
    summary = "".join(f"<li>{headline(g)}</li>" for g in result.groups.values())
    cert = "".join(f"<li><b>{esc(g.name)}</b>: {certification_sentence(g)}</li>" for g in result.groups.values())
    loss = meta.get("loss") or getattr(first.mcr, "loss", "squared_error")
    loss_txt = _LOSS_TEXT.get(str(loss), esc(str(loss)))
    hp = _hyperparameters(result, meta)
    hp_rows = "".join(f"<dt>{esc(_HP_LABELS.get(k, str(k)))}</dt><dd>{esc(_g(v))}</dd>" for k, v in hp.items())
    cls_txt = class_text(result.model_class) or (
        "kernel ridge models with an RBF kernel on a fixed dictionary (the unique training rows), intercept "
        "fixed at the training mean, and RKHS norm at most the reference's"
        if result.model_class == "kernel"
        else "linear models whose squared coefficient norm is at most the reference's (ridge) fit"
    )
    imgs = "".join(
        f'<figure><img alt="{esc(k)}" src="data:image/png;base64,{v}"/>'
        f"<figcaption>{_caption(result, k, names.get(k)) if k in names else esc(k)} "
        f'<span class="small">Files: <code>{esc(k)}.png</code>, <code>{esc(k)}.svg</code>.</span></figcaption></figure>'
        for k, v in figures.items()
    )
    date = meta.get("date") or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") + " (report written)"
    sha = meta.get("input_sha256")
    in_name = meta.get("input_name")
    if in_name and str(in_name) != "DataFrame":
        input_txt = esc(str(in_name))
    else:
        input_txt = "a table passed in memory (a DataFrame, no file)"
    sha_txt = f"<code>{esc(str(sha))}</code>" if sha else "not recorded"
    notes = "".join(f"<dt>Note</dt><dd>{esc(str(t))}</dd>" for t in meta.get("notes") or [])
    timings = ", ".join(f"{esc(k)} {v:.1f} s" for k, v in (result.timings or {}).items())

    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reliance audit: {esc(result.target)}</title>
<style>{_CSS}</style></head><body>
<h1>How much could any good model rely on these variables?</h1>
<p>Outcome <b>{esc(result.target)}</b>; inputs {esc(", ".join(result.features))}; model class <b>{esc(result.model_class)}</b>.
{_g(result.n_train)} rows fitted the reference model; {_g(result.n_test)} held-out rows are where reliance was measured.</p>
<h2>Summary</h2><ul class="summary">{summary}</ul>

<h2>How to read this</h2>
<ul>
<li><b>Model reliance (MR)</b> of a model on a group of variables is the ratio of its loss when the group's values are
scrambled (each row's group values replaced by another row's, over all pairs of rows) to its loss on the real data.</li>
<li><b>MR = 1</b>: scrambling changes nothing, the model does not use the group.</li>
<li><b>MR &gt; 1</b>: the model relies on the group; MR = 2 means scrambling it doubles the error.</li>
<li><b>MR &lt; 1</b>: scrambling the variables <i>improves</i> the loss: the model does worse with the real values
than with scrambled ones. It uses them in a way that does not generalise to the held-out rows, or the variables hurt.
With MR below 1 the model is not relying on the group in a helpful way.</li>
<li><b>Model class reliance (MCR)</b> is the interval [MCR−, MCR+] of the MRs of <i>all</i> models of the class whose
held-out loss is at most ε, the "good models" (the Rashomon set). A narrow interval means every good model relies on
the group about equally; a wide one means good models can rely on it a lot or little. An MCR+ near 1 says no good
model needs the group; an MCR− above 1 says every good model uses it.</li>
<li><b>The null model</b> is the best model of the class that ignores every input (a constant); when ε reaches its
loss e<sub>null</sub> the set contains it, and its MR of 1 on every group makes MCR− uninformative, so the report
gives the share of the explained loss, (e<sub>null</sub> − ε)/(e<sub>null</sub> − e<sub>min</sub>), that the set keeps.</li>
</ul>

<h2>What was done</h2>
<dl class="kv">
<dt>Loss</dt><dd>{loss_txt}</dd>
<dt>Model class</dt><dd>{cls_txt}.</dd>
<dt>Rashomon threshold ε</dt><dd>{_epsilon_text(result, meta)}</dd>
<dt>Rows</dt><dd>{_rows_text(result, meta)}</dd>
<dt>Encoding</dt><dd>{_encoding_text(result, meta)}</dd>
<dt>Intervals</dt><dd>{_ci_text(result, meta)}</dd>
<dt>Computation</dt><dd>{_computation_text(result, meta)}</dd>{notes}
</dl>
<h3>Hyper-parameters of the reference and the class</h3>
<dl class="kv">{hp_rows}</dl>
<p>The reference's hyper-parameters were chosen by cross-validation on the training rows (cross-validated loss
{_g(result.cv_loss)}); its held-out loss is {_g(result.e_ref)}. {bounds_txt}</p>

<h2>Results</h2><div class="wide">{table}</div>
<p>"refit loss ratio" is the held-out loss of the reference refitted without the group, divided by the reference's
held-out loss. {_ci_text(result, meta)}</p>
<h3>Are the bounds exact?</h3><ul>{cert}</ul>
{classifier_section(result)}{user_model_section(result)}{fairness_section(result)}

<h2>Figures</h2>{imgs}

<h2>What MCR does and does not show</h2><ul>
<li>MCR describes a <i>class</i> of models and a data set; a model outside the class (e.g. a proprietary score) is
bracketed only if the class contains a model that relies on the variables as much as it does.</li>
<li>Reliance is not causation, nor a measure of fairness by itself: a variable can carry information through
correlated variables, and scrambling it can create unusual combinations of values.</li>
<li>{_limits_ci_text(result, meta)}</li>
</ul>

<h2>Data and reproducibility</h2>
<dl class="kv">
<dt>Data provenance</dt><dd>{esc(result.provenance or "Supplied by the user.")}</dd>
<dt>Input</dt><dd>{input_txt}</dd>
<dt>SHA-256 of the input</dt><dd>{sha_txt}</dd>
<dt>Package</dt><dd>rashomon {esc(_package_version(meta))}</dd>
<dt>Date</dt><dd>{esc(str(date))}</dd>
<dt>Random seed</dt><dd>{result.seed}</dd>
<dt>Run time</dt><dd>{timings or "not recorded"}</dd>
</dl>
</body></html>"""
    write_text(path, page)  # last: a report.html is only there once its figures are
