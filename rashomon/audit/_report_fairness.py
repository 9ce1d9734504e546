"""The report's "Fairness over the Rashomon set" section, generated from ``result.meta["fairness"]`` (an empty
string when the audit had no ``sensitive`` column)."""

from __future__ import annotations

import html

from ._report_text import _g

__all__ = ["fairness_section", "alternative_text"]

_METRIC_TEXT = {
    "mean_prediction": "Mean prediction (demographic parity of the {scale})",
    "positive_rate": "Positive rate at {scale} threshold {threshold} (selection rate of the decision)",
}
_LEFT = ' style="text-align:left"'


def _n(v, digits: int = 4) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, str):
        return html.escape(v)
    return _g(float(v), digits)


def _range_table(d: dict) -> str:
    scale = {"prediction": "prediction", "probability": "probability", "score": "score"}.get(d["scale"], d["scale"])
    title = _METRIC_TEXT.get(d["metric"], d["metric"]).format(scale=scale, threshold=_n(d.get("threshold")))
    rows = "".join(
        f"<tr><td{_LEFT}>{html.escape(str(r['disparity']))}</td><td>{_n(r['lower'])}</td><td>{_n(r['lower_attained'])}</td>"
        f"<td>{_n(r['reference'])}</td><td>{_n(r['upper_attained'])}</td><td>{_n(r['upper'])}</td>"
        f"<td>{'exact' if r['exact'] else 'outer bound'}</td></tr>"
        for r in d["rows"]
    )
    exact = all(r["exact"] for r in d["rows"])
    how = (
        "Both ends are exact: members of the set attain the certified bounds."
        if exact
        else "The certified bounds are <i>outer</i> bounds: no member of the set lies outside them; the attained values "
        "are those of members found, and the true ends lie between the two (the gap)."
    )
    return (
        f'<h3>{html.escape(title)}</h3><table class="fairness"><tr><th>disparity</th><th>certified lower</th>'
        "<th>attained lower</th><th>reference model</th><th>attained upper</th><th>certified upper</th>"
        f"<th>ends</th></tr>{rows}</table><p>{how} Method: {html.escape(d['method'])}.</p>"
    )


def _least_text(ld: dict, f: dict, benches: list) -> str:
    esc = html.escape
    loss = esc(ld.get("loss_name", "loss"))
    cert = f"no member of the set is closer to parity than {_n(ld['certified_lower'])}" + (
        " (exact: this member attains it)" if ld["exact"] else " (an outer bound; this member is the closest found)"
    )
    rows = [
        f"<tr><td{_LEFT}>least disparate good model</td><td>{_n(ld['disparity'])}</td><td>{_n(ld['loss'])}</td></tr>",
        f"<tr><td{_LEFT}>reference model</td><td>{_n(ld['reference_disparity'])}</td><td>{_n(ld['e_ref'])}</td></tr>",
    ]
    for b in benches:
        m = b["metrics"].get("mean_prediction")
        if m is not None:
            i = 0 if len(m["rows"]) == 2 else len(m["rows"]) - 1
            rows.append(
                f"<tr><td{_LEFT}>{esc(b['name'])}</td><td>{_n(m['rows'][i]['value'])}</td>"
                f"<td>{_n(b.get('loss'))}</td></tr>"
            )
    rel = "".join(
        f"<li>{esc(str(r.get('group', r['features'])))}: MR {_n(r['least_disparate'])} (reference "
        f"{_n(r['reference'])})</li>"
        for r in ld.get("reliance") or []
    )
    return (
        f"<h3>The least disparate good model</h3><p>On the mean prediction ({esc(str(ld['name']))}), certified: {cert}. "
        f"{esc(alternative_text(ld))} Its "
        f"held-out {loss} beside the reference's, and the threshold of the set (ε<sub>abs</sub> = "
        f"{_n(ld['epsilon_abs'])}):</p><table><tr><th>model</th><th>disparity ({esc(str(ld['name']))})</th>"
        f"<th>held-out {loss}</th></tr>{''.join(rows)}</table>"
        + (f"<p>Its model reliance on the audited groups:</p><ul>{rel}</ul>" if rel else "")
    )


def alternative_text(ld: dict) -> str:
    """The less discriminatory alternative question, answered from a least-disparate summary: against its
    ``target`` when one was asked, else against the reference model's distance from parity."""
    q = "A less discriminatory alternative (the question fair-lending and employment law ask of a deployed model)"
    cert, dist = float(ld["certified_lower"]), abs(float(ld["disparity"]))
    if ld.get("target") is not None:
        delta, bar = float(ld["target"]), f"at most {_n(ld['target'])} from parity"
        yes, no = ld.get("target_outcome") == "member", ld.get("target_outcome") == "none"
    else:
        delta = abs(float(ld["reference_disparity"]))
        bar = f"closer to parity than the reference model ({_n(delta)})"
        yes, no = dist < delta, cert >= delta
    if yes:
        return f"{q}: yes. A good model (loss within ε_abs) is {bar}: the least disparate one, {_n(ld['disparity'])}."
    if no:
        return f"{q}: no, certified. No model within ε_abs is {bar}; every one is at least {_n(cert)} from parity."
    return (
        f"{q}: undetermined. No good model {bar} was found (the closest is {_n(dist)} from parity) and the "
        f"certified bound ({_n(cert)}) does not rule one out."
    )


def _bench_text(b: dict) -> str:
    esc = html.escape
    parts = [f"<h4>{esc(b['name'])}</h4>"]
    for metric, m in b["metrics"].items():
        rows = "".join(
            f"<tr><td{_LEFT}>{esc(str(r['disparity']))}</td><td>{_n(r['value'])}</td><td>[{_n(r['lower'])}, "
            f"{_n(r['upper'])}]</td><td>{esc(r['position'])}</td></tr>"
            for r in m["rows"]
        )
        verdict = (
            "<b>more disparate than every member of the set</b> (certified)"
            if m["more_disparate_than_every_member"]
            else "more disparate than every member found, but within the certified outer bound (undecided)"
            if m.get("more_disparate_than_every_member_found")
            else "not more disparate than every member of the set (its max − min gap is within the set's)"
        )
        parts.append(
            f"<p>{esc(metric.replace('_', ' '))}: {verdict}.</p><table><tr><th>disparity</th><th>value</th>"
            f"<th>the set's certified range</th><th>position</th></tr>{rows}</table>"
        )
    if b.get("loss") is not None:
        parts.append(f'<p class="small">Its held-out loss in the class\'s loss: {_n(b["loss"])}.</p>')
    return "".join(parts)


def _order_text(o: dict) -> str:
    esc = html.escape
    rels = []
    for r in o["relations"]:
        crit = ""
        if r.get("critical_epsilon_abs_lower") is not None:
            hi = r.get("critical_epsilon_abs_upper")
            crit = f"; it holds for every ε<sub>abs</sub> up to {_n(r['critical_epsilon_abs_lower'])}" + (
                f" and fails at {_n(hi)}" if hi not in (None, "inf") else " (no failure found)"
            )
        elif r.get("note"):
            crit = f" ({esc(r['note'])})"
        rels.append(
            f"<li>Every good model relies more on <b>{esc(str(r['a']))}</b> than on <b>{esc(str(r['b']))}</b>: "
            f"certified lower end of MR({esc(str(r['a']))}) − MR({esc(str(r['b']))}) = {_n(r['lower'])}{crit}.</li>"
        )
    diffs = "".join(
        f"<tr><td{_LEFT}>MR({esc(str(d['a']))}) − MR({esc(str(d['b']))})</td><td>{_n(d['lower'])}</td>"
        f"<td>{_n(d.get('lower_attained'))}</td><td>{_n(d.get('upper_attained'))}</td>"
        f"<td>{_n(d['upper'])}</td><td>{'exact' if d.get('exact') else 'outer bound'}</td></tr>"
        for d in o["differences"]
    )
    no_members = any(d.get("lower_attained") is None for d in o["differences"])
    head = (
        f"<ul>{''.join(rels)}</ul>"
        if rels
        else "<p>No order between the groups is certified: for every pair some good model relies on each at least as "
        "much as on the other (or the bounds cannot exclude it).</p>"
    )
    return (
        f"<h3>The certified order of the audited groups</h3>{head}<table><tr><th>difference</th><th>certified lower"
        "</th><th>attained lower</th><th>attained upper</th><th>certified upper</th><th>ends</th></tr>"
        f'{diffs}</table><p class="small">'
        + (
            "n/a: no member was searched for this difference (its bounds combine the two groups' MCR intervals). "
            if no_members
            else "Attained: the differences of members found; an outer bound's true end lies between the two. "
        )
        + f"Method: {esc(o['method'])}.</p>"
    )


def fairness_section(result) -> str:
    f = (getattr(result, "meta", None) or {}).get("fairness")
    if not f:
        return ""
    esc = html.escape
    groups = ", ".join(f"{esc(str(r['group']))} ({_g(r['n_rows'])} rows)" for r in f.get("group_rows") or [])
    col = esc(str(f["sensitive"]))
    feature = any(str(c) == f["sensitive"] or str(c).startswith(f"{f['sensitive']}=") for c in result.features)
    role = (
        "It is also an input of the models."
        if feature
        else "It is not an input of the models: the disparities are between its groups, of predictions made without it."
    )
    parts = [
        f"<h2>Fairness over the Rashomon set</h2><p>Sensitive column <b>{col}</b>, groups {groups or 'n/a'} on the "
        f"{_g(f['n_held_out'])} held-out rows; each group is compared with the reference group "
        f'<b>{esc(str(f.get("reference_group")))}</b>, and "max − min" is fairlearn\'s between-groups summary '
        f"(demographic_parity_difference). {role} The ranges are over the same set of good models as above "
        "(Coston, Rambachan &amp; Chouldechova 2021): every member's disparity lies in the certified range.</p>"
    ]
    for d in f.get("disparity", {}).values():
        parts.append(_range_table(d))
    if f.get("least_disparate"):
        parts.append(_least_text(f["least_disparate"], f, f.get("benchmarks") or []))
    if f.get("benchmarks"):
        parts.append(
            "<h3>The deployed score and your model</h3><p>Their disparities on the same held-out rows, "
            'placed in the set\'s certified ranges ("inside": some good model may be as disparate).</p>'
        )
        parts.extend(_bench_text(b) for b in f["benchmarks"])
    if f.get("order"):
        parts.append(_order_text(f["order"]))
    sec = f.get("seconds") or {}
    cost = ", ".join(f"{esc(k.removesuffix('_s').replace('_', ' '))} {v:.2f} s" for k, v in sec.items())
    skipped = "".join(f"<li>{esc(s)}</li>" for s in f.get("skipped") or [])
    parts.append(
        f'<p class="small">Cost of this section: {cost or "not recorded"}'
        + (
            " (the least disparate member without its frontier over ε, which would cost nine more ranges)"
            if f.get("least_disparate")
            else ""
        )
        + ".</p>"
        + (f'<p class="small">Skipped:</p><ul class="small">{skipped}</ul>' if skipped else "")
    )
    return "".join(parts)
