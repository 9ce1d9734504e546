"""The report's sections for a binary outcome (classifier class) and for the user's own model: HTML
fragments generated from ``result.meta["classifier"]``, ``result.meta["user_model"]`` and each group's
``extra``; empty strings when the audit had neither."""

from __future__ import annotations

import html

from ._report_text import _f, _g, _pct

__all__ = ["classifier_section", "class_text", "user_model_section"]

_CLASS_TEXT = {
    "logistic": (
        "linear classifiers (logistic regression: probability σ(μ + x′β)) whose squared coefficient norm, "
        "on standardised inputs, is at most the norm bound; the reference is the class's own log-loss "
        "minimiser on the training rows"
    ),
    "hinge": (
        "linear classifiers (score μ + x′β, predicted label its sign) under the hinge loss, whose squared "
        "coefficient norm on standardised inputs is at most the norm bound; the reference is the class's own "
        "hinge-loss minimiser on the training rows"
    ),
}


def class_text(model_class: str) -> str | None:
    return _CLASS_TEXT.get(model_class)


def _num(v) -> str:
    return "n/a" if v is None else _f(v)


def classifier_section(result) -> str:
    meta = getattr(result, "meta", None) or {}
    c = meta.get("classifier")
    if not c:
        return ""
    esc = html.escape
    lab, m, amb = c.get("labels") or {}, c.get("reference_metrics") or {}, c.get("ambiguity") or {}
    logistic = result.model_class == "logistic"
    loss_name = "log loss" if logistic else "hinge loss"
    parts = [
        f"<h2>Binary outcome: the classifier audit</h2><p>Outcome <b>{esc(result.target)}</b> coded 1 for "
        f"<b>{esc(str(lab.get('positive')))}</b> ({_g(lab.get('n_positive'))} of {_g(lab.get('n'))} rows) and 0 "
        f"for <b>{esc(str(lab.get('negative')))}</b>. Loss: the {loss_name} of the class "
        + ("(−log of the probability given to the observed label)" if logistic else "(max(0, 1 − y·score), y = ±1)")
        + "; MR and MCR are ratios of that loss.</p>"
    ]
    ll = (
        f"{_g(m['log_loss'])}"
        if m.get("log_loss") is not None
        else "not defined (the hinge class gives scores, not probabilities)"
    )
    hinge = f"; hinge loss {_g(m['hinge_loss'])}" if m.get("hinge_loss") is not None else ""
    parts.append(
        f'<h3>The reference model on the {_g(m.get("n"))} held-out rows</h3><dl class="kv">'
        f"<dt>Log loss</dt><dd>{ll}{hinge}</dd><dt>Accuracy</dt><dd>{_pct(m.get('accuracy'))} (score &gt; 0, "
        f"i.e. probability &gt; 0.5; share of positives {_pct(m.get('positive_rate'))})</dd>"
        f'<dt>AUC</dt><dd>{_g(m.get("auc"))}</dd></dl><p class="small">scikit-learn\'s log_loss, accuracy_score '
        "and roc_auc_score on the reference's held-out predictions.</p>"
    )
    rows = []
    for g in result.groups.values():
        x = g.extra
        lo_att, up_att = x.get("mcr_lower_attained"), x.get("mcr_upper_attained")
        lo_gap = g.mcr.lower_gap
        up_gap = g.mcr_upper - up_att if up_att is not None else float("nan")
        rows.append(
            f'<tr><td style="text-align:left">{esc(g.name)}</td><td>{_f(g.mr_ref)}</td><td>{_f(g.mcr_lower)}</td>'
            f"<td>{_num(lo_att)}</td><td>{_g(lo_gap, 3)}</td><td>{_num(up_att)}</td><td>{_f(g.mcr_upper)}</td>"
            f"<td>{_g(up_gap, 3)}</td></tr>"
        )
    parts.append(
        "<h3>MR and MCR per group, with both bounds and the attained values</h3><table><tr><th>group</th>"
        "<th>MR of reference</th><th>MCR− (certified bound)</th><th>MCR− attained</th><th>gap</th>"
        "<th>MCR+ attained (inner)</th><th>MCR+ (certified outer bound)</th><th>gap</th></tr>"
        + "".join(rows)
        + "</table><p>For a classifier class the lower end is a certified bound attained by a "
        "member of the set within the gap shown. The upper end is a certified <i>outer</i> bound: no member has "
        "a larger MR; the best member found attains the inner value, and the true MCR+ lies between them (the "
        "gap).</p>"
    )
    if amb:
        where = (
            f"a seeded sample of {_g(amb.get('n_rows'))} of the {_g(amb.get('n_held_out'))} held-out rows"
            if amb.get("n_rows") != amb.get("n_held_out")
            else f"all {_g(amb.get('n_rows'))} held-out rows"
        )
        thr = (
            f"probability threshold {_g(amb.get('threshold'))}"
            if amb.get("scale") == "probability"
            else "score threshold 0 (the predicted label)"
        )
        parts.append(
            f"<h3>Ambiguity</h3><p>At the {thr}, on {where}: <b>{_pct(amb.get('ambiguity'))}</b> of the rows "
            f"({_g(amb.get('n_flippable'))} of {_g(amb.get('n_rows'))}) are classified differently from the "
            f"reference by some member of the set (ambiguity); the share a single member flips (discrepancy) is at "
            f"most {_pct(amb.get('discrepancy_upper'))} (certified), and a member found flips "
            f"{_pct(amb.get('discrepancy_lower'))}. "
            f"Each row's range of predictions is exact ({_g(amb.get('seconds'), 3)} s).</p>"
        )
    coefs = c.get("coefficients") or []
    if coefs:
        stable = [k["coefficient"] for k in coefs if k["sign_stable"] and k["coefficient"] != "intercept"]
        trs = "".join(
            f'<tr><td style="text-align:left">{esc(k["coefficient"])}</td><td>{_f(k["lower"])}</td>'
            f"<td>{_f(k['upper'])}</td><td>{'yes' if k['sign_stable'] else 'no'}</td></tr>"
            for k in coefs
        )
        parts.append(
            "<h3>Coefficient sign stability</h3><p>"
            + (
                f"The sign of {esc(', '.join(stable))} is the same in every member of the set."
                if stable
                else "No coefficient keeps its sign across the whole set."
            )
            + (
                " With all levels of a categorical column one-hot encoded, a level's coefficient is identified "
                "only relative to the others, so its sign is rarely stable."
                if meta.get("encoding")
                else ""
            )
            + "</p><table><tr><th>coefficient</th>"
            "<th>lowest</th><th>highest</th><th>sign stable</th></tr>" + trs + "</table>"
        )
    dropped = c.get("dropped_constant_columns") or []
    if dropped:
        parts.append(
            f'<p class="small">Dropped from the design (constant on the training rows, e.g. a level absent '
            f"from them): {esc(', '.join(dropped))}.</p>"
        )
    parts.append(f"<p>{bootstrap_cost_text(result)}</p>")
    return "".join(parts)


def bootstrap_cost_text(result) -> str:
    c = (getattr(result, "meta", None) or {}).get("classifier") or {}
    b = c.get("bootstrap") or {}
    search = b.get("mcr_search_seconds")
    if b.get("mcr"):
        return (
            f"MCR was bootstrapped over {_g(b.get('n_resamples'))} resamples of the held-out rows, "
            f"{_g(b.get('seconds_per_resample'), 3)} s per resample (each refits the set and reruns every group's "
            "MCR search)."
        )
    cost = f" about {_g(search, 3)} s per resample here (the full-data MCR searches took that long)" if search else ""
    what = (
        f"The bootstrap ({_g(b.get('n_resamples'))} resamples) gave intervals for the MR of the reference"
        + (" and of your model" if result.meta.get("user_model") else "")
        + "; MCR itself was not bootstrapped"
        if b.get("n_resamples")
        else "No bootstrap was run; MCR was not bootstrapped"
    )
    return (
        f"{what}: for a classifier class each resample refits the set and reruns every MCR search,{cost}. "
        "Pass bootstrap_mcr=True (--bootstrap-mcr) to run it."
    )


def user_model_section(result) -> str:
    meta = getattr(result, "meta", None) or {}
    u = meta.get("user_model")
    if not u:
        return ""
    esc = html.escape
    loss = {"log_loss": "log loss on predict_proba", "squared_error": "squared error on predict"}.get(
        u["loss"], u["loss"]
    )
    rows = []
    for g in result.groups.values():
        x = g.extra
        ci = x.get("model_mr_ci")
        ci_txt = f"[{_f(ci[0])}, {_f(ci[1])}]" if ci else "—"
        verdict = (
            "<b>no</b>"
            if not x.get("bracketed")
            else "yes"
            if x.get("within_attained", True)
            else "within the certified bounds, beyond the members found (undecided)"
        )
        rows.append(
            f'<tr><td style="text-align:left">{esc(g.name)}</td><td>{_f(x["model_mr"])}</td><td>{ci_txt}</td>'
            f"<td>[{_f(g.mcr_lower)}, {_f(g.mcr_upper)}]</td><td>{verdict}</td></tr>"
        )
    out = [
        f"<h2>Your model</h2><p>Your fitted model ({esc(u['name'])}) was measured on the same {_g(u['n_rows'])} "
        f"held-out rows, with its own inputs ({esc(', '.join(map(str, u['columns'])))}), in {loss}: its MR per group "
        "is the all-pairs estimate of rashomon.model_reliance.</p><table><tr><th>group</th><th>MR of your model</th>"
        f"<th>{result.confidence_level:.0%} bootstrap CI</th><th>MCR of the class</th><th>bracketed</th></tr>"
        + "".join(rows)
        + "</table>"
    ]
    out.append(
        "<p>Reading (Fisher, Rudin &amp; Dominici 2019): if some good model of the class relies on a group as much "
        "as your model does, the class's MCR interval brackets your model's MR. \"no\" means no member of the set "
        "relies on the group as your model does: your model uses it in a way the class cannot express (or "
        'performs differently). "Undecided": the MR lies between the MR attained by the best member found and '
        "the certified outer bound of a classifier class, where the search cannot say whether a member reaches "
        "it.</p>"
    )
    if not u.get("same_loss_as_class"):
        out.append(
            f"<p class=\"small\">Your model's MR is in {esc(str(u['loss']))} and the class's MCR in "
            f"{esc(str(meta.get('loss')))}: ratios of different losses, compare them with care.</p>"
        )
    return "".join(out)
