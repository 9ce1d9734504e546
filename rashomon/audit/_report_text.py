"""The sentences of the audit report: numbers, certification, the ε rule, rows, encoding, intervals and the
computation, generated from an :class:`AuditResult` (and its ``meta``, with fallbacks on the result's fields)."""

from __future__ import annotations

import html
import math
from typing import Any

__all__ = ["certification_sentence", "headline"]


# ----------------------------------------------------------------------------- sentences


def _f(v: float) -> str:
    """Numbers as in the results table."""
    return f"{v:.4f}"


def _g(v: Any, digits: int = 4) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.{digits}g}"
    return str(v)


def _pct(v: Any) -> str:
    """A share (0-1) as a percentage: 0%, 100% exactly, else three significant digits (88.6%, 0.4%)."""
    if v is None or not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v):
        return "n/a"
    p = 100.0 * float(v)
    return f"{p:.0f}%" if p in (0.0, 100.0) else f"{p:.3g}%"


def _tol_text(tol: float) -> str:
    if tol > 0:
        k = math.log2(tol)
        if abs(k - round(k)) < 1e-12:
            return f"2<sup>{int(round(k))}</sup> (≈ {tol:.2g}, relative to the bound)".replace("<sup>-", "<sup>−")
    return f"{tol:.2g} (relative to the bound)"


def _end_sentence(end: str, bound: float, gap: float, tight: bool, certified: bool) -> str:
    """What is known of one end of the interval."""
    label = "MCR−" if end == "lower" else "MCR+"
    if not certified:
        return (
            f"{label} = {_f(bound)} is <b>not certified</b>: it is the MR of the best model found, so the true "
            f"{label} is {'at most' if end == 'lower' else 'at least'} this value."
        )
    if tight:
        return ""
    if not math.isfinite(gap):
        return f"{label} = {_f(bound)} is certified but <b>not tight</b>: no model of the set attaining it was found."
    found = bound + gap if end == "lower" else bound - gap
    return (
        f"{label} is <b>not tight</b>: the certified bound is {_f(bound)}, the best model found has MR "
        f"{_f(found)} ({_g(gap, 3)} {'above' if end == 'lower' else 'below'}); the true {label} lies between them."
    )


def certification_sentence(g) -> str:
    """One sentence per group on the tightness and certification of both ends."""
    m = g.mcr
    if _not_run(g):
        return "MCR was not run (see the computation notes)."
    lo_c, up_c = bool(getattr(m, "lower_certified", True)), bool(getattr(m, "upper_certified", True))
    if m.lower_tight and m.upper_tight and lo_c and up_c:
        return (
            f"Both ends are tight: a model of the set attains each bound within {_tol_text(m.tol)} "
            f"(gaps {_g(m.lower_gap, 2)} and {_g(m.upper_gap, 2)}), and both bounds are certified."
        )
    parts = [
        _end_sentence("lower", m.lower, m.lower_gap, m.lower_tight, lo_c),
        _end_sentence("upper", m.upper, m.upper_gap, m.upper_tight, up_c),
    ]
    ok = [lab for lab, t, c in (("MCR−", m.lower_tight, lo_c), ("MCR+", m.upper_tight, up_c)) if t and c]
    if ok:
        parts.append(f"{ok[0]} is tight within {_tol_text(m.tol)} and certified.")
    if getattr(m, "notes", ""):
        parts.append(f"Solver notes: {html.escape(m.notes)}.")
    return " ".join(p for p in parts if p)


def _attained(g) -> tuple[float, float]:
    """MRs of the members returned for each end (a classifier audit records them in ``extra``)."""
    x = getattr(g, "extra", None) or {}
    m = g.mcr
    lo = x.get("mcr_lower_attained", m.lower + m.lower_gap)
    up = x.get("mcr_upper_attained", m.upper - m.upper_gap)
    return float(lo), float(up)


def _not_run(g) -> bool:
    """MCR not run (both ends NaN): the logistic audit out of core, which has no certified method for it."""
    return math.isnan(g.mcr_lower) and math.isnan(g.mcr_upper)


def headline(g) -> str:
    feats = html.escape(", ".join(g.features))
    if _not_run(g):
        how = (g.extra or {}).get("mr_method")
        return (
            f"<b>{html.escape(g.name)}</b> ({feats}): the reference model's MR is {_f(g.mr_ref)}"
            + (f" ({html.escape(str(how))} estimator)" if how else "")
            + "; MCR was not run: "
            + html.escape(str((g.extra or {}).get("mcr_not_run", "")))
            + "."
        )
    s = (
        f"<b>{html.escape(g.name)}</b> ({feats}): the reference model's MR is {_f(g.mr_ref)}; every model of the "
        f"class whose held-out loss is at most ε has MR between <b>{_f(g.mcr_lower)}</b> and <b>{_f(g.mcr_upper)}</b>"
    )
    lo_att, up_att = _attained(g)
    loose = not (g.mcr.lower_tight and g.mcr.upper_tight)
    if loose:
        s += (
            f" (certified bounds; the members found attain [{_f(lo_att)}, {_f(up_att)}], and the true ends lie "
            "between the two)"
        )
    s += ". "
    if g.mcr_lower > 1:
        s += "Every good model relies on this group (MCR− &gt; 1)."
    elif g.mcr_upper <= 1:
        s += "No good model relies on this group in a helpful way (MCR+ ≤ 1)."
    else:  # MCR− ≤ 1 < MCR+: what members were found on each side of 1, and what the bounds leave open
        some = (
            "Some good models rely on this group (MCR+ &gt; 1)"
            if up_att > 1 or not math.isfinite(up_att)
            else "No member found relies on this group in a helpful way (attained MCR+ ≤ 1), though the certified "
            "MCR+ &gt; 1 leaves open whether a good model does,"
        )
        others = (
            "others do not need it (MCR− ≤ 1)"
            if lo_att <= 1 or not math.isfinite(lo_att)
            else "whether some good model does without it is open (every member found has MR &gt; 1; the certified "
            "MCR− ≤ 1)"
        )
        s += f"{some} while {others}."
    return s


_LOSS_TEXT = {
    "squared_error": "squared error, the mean of (y − prediction)² over the held-out rows",
    "absolute_error": "absolute error, the mean of |y − prediction| over the held-out rows",
    "log loss": "log loss, the mean of −log(probability of the observed label) over the held-out rows",
    "hinge": "hinge loss, the mean of max(0, 1 − y·score) with y = ±1 over the held-out rows",
}
_LOSS_TEXT.update({k.replace("_", " "): v for k, v in _LOSS_TEXT.items()})

_HP_LABELS = {
    "kind": "reference model",
    "kernel": "kernel",
    "gamma": "bandwidth γ (kernel exp(−γ‖x − x′‖²))",
    "bandwidth": "bandwidth",
    "alpha": "penalty α (ridge)",
    "penalty": "penalty α (ridge)",
    "dictionary_size": "dictionary size (unique training rows)",
    "rkhs_norm": "norm bound (RKHS norm of the reference)",
    "norm_bound": "norm bound",
    "penalty_alpha": "penalty α (ridge)",
    "norm": "norm bound (‖β‖² of the reference)",
    "intercept": "intercept μ (training mean)",
    "cv": "cross-validation folds",
}


def _hyperparameters(result, meta: dict) -> dict:
    hp = meta.get("hyperparameters")
    if not isinstance(hp, dict) or not hp:
        hp = {k: v for k, v in (result.reference or {}).items() if k != "standardised_features"}
    return {k: v for k, v in hp.items() if v is not None}


def _package_version(meta: dict) -> str:
    v = meta.get("package_version")
    if v:
        return str(v)
    try:
        from .. import __version__

        return str(__version__)
    except Exception:  # pragma: no cover - version is always defined in the package
        return "unknown"


def null_model_text(meta: dict) -> str:
    """The set's losses beside the null model's (the best constant model of the class) and the share of the
    explained loss the set keeps, with what it means when the set holds a constant model; empty without figures."""
    nm = meta.get("null_model")
    if not nm:
        return ""
    s = (
        f" Against the null model (the best constant model of the class, which ignores every input): least loss "
        f"e<sub>min</sub> {_g(nm['e_min'])}, reference e<sub>ref</sub> {_g(nm['e_ref'])}, threshold "
        f"ε<sub>abs</sub> {_g(nm['epsilon_abs'])}, null model e<sub>null</sub> {_g(nm['e_null'])}: every model of "
        f"the set keeps at least {nm['explained_share']:.1%} of the loss the class explains, (e<sub>null</sub> − "
        "ε<sub>abs</sub>)/(e<sub>null</sub> − e<sub>min</sub>)."
    )
    note = null_model_note(nm)
    return s if note is None else f"{s} <b>{html.escape(note)}</b>"


def null_model_note(nm: dict) -> str | None:
    """What the report says (and the audit warns) when its set contains a constant model (ε_abs >= e_null) or keeps
    less than half of the loss the class explains; None otherwise."""
    if nm["epsilon_abs"] >= nm["e_null"]:
        return (
            f"ε_abs = {nm['epsilon_abs']:.4g} is at or above the null model's loss e_null = {nm['e_null']:.4g}: the "
            "set contains a constant model, so every MCR− is the null model's (it relies on nothing) and the lower "
            "bounds say nothing about the variables."
        )
    if nm["explained_share"] < 0.5:
        return (
            f"The set keeps only {nm['explained_share']:.1%} of the loss the class explains beyond the null model "
            f"(ε_abs = {nm['epsilon_abs']:.4g} against e_min = {nm['e_min']:.4g} and e_null = {nm['e_null']:.4g}): "
            "its good models may explain little of what the best one does, so wide MCR intervals say more about ε "
            "than about the variables."
        )
    return None


def null_model_line(meta: dict) -> str:
    """The CLI summary's line: the set's losses beside the null model's and the share of the explained loss kept
    (with its newline; empty without figures)."""
    nm = meta.get("null_model")
    if not nm:
        return ""
    held = (
        " -- it contains a constant model: every MCR- is the null model's" if nm["epsilon_abs"] >= nm["e_null"] else ""
    )
    return (
        f"losses: e_min {nm['e_min']:.4g}, e_ref {nm['e_ref']:.4g}, epsilon_abs {nm['epsilon_abs']:.4g}, e_null "
        f"{nm['e_null']:.4g} (null model); the set keeps {nm['explained_share']:.1%} of the explained loss{held}\n"
    )


def _epsilon_text(result, meta: dict) -> str:
    return _epsilon_rule_text(result, meta) + null_model_text(meta)


def _epsilon_rule_text(result, meta: dict) -> str:
    eps, e_ref, cv = result.epsilon_abs, result.e_ref, result.cv_loss
    rule, value = meta.get("epsilon_rule"), meta.get("epsilon_value")
    margin = eps - e_ref
    arith = f"ε = {_g(eps)}: the reference's held-out loss {_g(e_ref)} plus {_g(margin)}"
    rule_s = str(rule).lower() if rule is not None else ""
    if rule_s in ("cv", "additive"):
        k = value if isinstance(value, (int, float)) else (margin / cv if cv else math.nan)
        return (
            f"Rule: the reference's held-out loss plus a margin of {_g(k)} × its {_g(cv)} cross-validated "
            f"loss (Fisher, Rudin &amp; Dominici's rule). {arith}."
        )
    if rule_s == "absolute":
        return f"Rule: ε given as an absolute loss ({_g(value if value is not None else eps)}). {arith}."
    if rule is not None:
        extra = f" (parameter value {_g(value)})" if value is not None else ""
        return f"Rule: {html.escape(str(rule))}{extra}. {arith}."
    ratio = f" (= {_g(margin / cv)} × its cross-validated loss {_g(cv)})" if cv else ""
    return f"{arith}{ratio}."


def _rows_text(result, meta: dict) -> str:
    n_used = meta.get("n_rows_used", result.n_train + result.n_test)
    n_in, n_drop = meta.get("n_rows_input"), meta.get("n_rows_dropped")
    if n_drop is None and n_in is not None:
        n_drop = int(n_in) - int(n_used)
    train = meta.get("train_size", result.n_train)
    s = f"The input table had {_g(int(n_in))} rows. " if n_in is not None else ""
    if n_drop:
        miss = meta.get("missing_by_column") or {}
        miss = {k: v for k, v in miss.items() if v}
        by = (
            (" (missing values: " + ", ".join(f"{html.escape(str(k))} {_g(int(v))}" for k, v in miss.items()) + ")")
            if miss
            else ""
        )
        s += f"{_g(int(n_drop))} rows with missing values were dropped{by}. "
    rule = html.escape(str(meta.get("split_rule_short") or "seeded random"))
    s += (
        f"{_g(int(n_used))} rows were used: {_g(int(train))} ({rule}) fitted the reference model and chose its "
        f"hyper-parameters; the other {_g(int(result.n_test))} were held out, and all losses, MR and MCR are measured on them."
    )
    return s


def _encoding_text(result, meta: dict) -> str:
    enc = meta.get("encoding")
    std = meta.get("standardised")
    if std is None:
        std = (result.reference or {}).get("standardised_features", [])
    if enc:
        dummies = {f"{c}={lv}" for c, lvs in enc.items() for lv in lvs}
        dropped = [d for d in (meta.get("classifier") or {}).get("dropped_constant_columns") or [] if d in dummies]
        s = (
            "Categorical columns were one-hot encoded with all their levels ("
            + ("" if dropped else "no level dropped; ")
            + "a group naming the column scrambles all its dummies together): "
            + "; ".join(f"{html.escape(str(c))} → {html.escape(', '.join(map(str, lv)))}" for c, lv in enc.items())
            + ". "
        )
        if dropped:
            s += (
                f"{'This level was' if len(dropped) == 1 else 'These levels were'} then dropped from the design, "
                f"constant on the training rows (absent from them): {html.escape(', '.join(dropped))}. "
            )
    else:
        s = "No categorical column needed encoding: all features were numeric. "
    if std:
        s += (
            "Numeric columns other than 0/1 were standardised with the training rows' mean and standard deviation: "
            f"{html.escape(', '.join(map(str, std)))}; 0/1 columns were kept as they are."
        )
    else:
        s += "No column was standardised (all were 0/1 or already on a common scale)."
    return s


def _ci_text(result, meta: dict) -> str:
    nb = meta.get("n_bootstrap", result.bootstrap)
    if not nb:
        return (
            "No bootstrap was run (bootstrap = 0), so the table carries no sampling-uncertainty intervals; the "
            "MCR interval itself is not a confidence interval."
        )
    method = meta.get("ci_method") or "percentile bootstrap over held-out rows"
    return (
        f"Intervals: {result.confidence_level:.0%} intervals by {html.escape(str(method))}, from {_g(int(nb))} "
        "bootstrap resamples of the held-out rows; the reference fit, its hyper-parameters and ε's margin are "
        "held fixed, so the intervals reflect which held-out rows were drawn, not the training split."
    )


def _limits_ci_text(result, meta: dict) -> str:
    """The report's closing remark on what its intervals reflect (none when no bootstrap ran)."""
    if meta.get("n_bootstrap", result.bootstrap):
        return (
            "The bootstrap intervals reflect resampling of the held-out rows only; the reference fit and the class "
            "are held fixed."
        )
    return (
        "No bootstrap was run, so no interval here describes sampling uncertainty: the MCR interval is over the "
        "models of the set, on these held-out rows."
    )


def _computation_text(result, meta: dict) -> str:
    """How the numbers were computed: in memory, or out of core on Dask (partitions, passes, what was skipped)."""
    engine = meta.get("engine")
    if not engine or engine == "in memory":
        rule = meta.get("cv_rule")
        return "In memory (pandas / NumPy)." + (f" Penalty choice: {html.escape(str(rule))}." if rule else "")
    s = (
        f"{html.escape(str(engine))}: the rows were never gathered; every loss, MR and MCR comes from sums over the "
        f"rows (sufficient statistics) computed partition by partition"
    )
    if meta.get("n_partitions") is not None:
        passes = meta.get("n_passes")
        k = int(meta["n_partitions"])
        s += f" ({_g(k)} partition{'' if k == 1 else 's'}" + (
            f", {_g(int(passes))} passes over the data)" if passes is not None else ")"
        )
    s += ". "
    if meta.get("split_rule"):
        s += f"Split rule: {html.escape(str(meta['split_rule']))}. "
    if meta.get("cv_rule"):
        s += f"Penalty choice: {html.escape(str(meta['cv_rule']))}. "
    skipped = meta.get("skipped") or []
    if skipped:
        s += "Skipped out of core: " + "; ".join(html.escape(str(k)) for k in skipped) + "."
    return s
