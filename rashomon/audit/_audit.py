"""End-to-end reliance audits: the analysis of Fisher, Rudin & Dominici (2019, §10) for any table.

Pipeline (:func:`audit`):

0. Checks, all before any computing: the table (a CSV path, separator sniffed
   unless ``sep`` is given, or a DataFrame), the target (numeric, finite, not a
   feature), the groups (names: see below), missing values (an error counting
   them per column unless ``drop_missing=True``), ``train_size``, ε.
   Non-numeric feature columns are one-hot encoded with **all** their levels
   (no level dropped: MR scrambles a column's dummies together, and the
   penalised fits do not need a baseline level); a group naming such a column
   expands to its dummies ``"column=level"``. At most 50 levels per column.
1. Split the rows: a seeded random ``train_size`` part fits the reference, the
   rest (held out) is where MR and MCR are computed.
2. Numeric non-binary features are standardised with the training part's mean
   and sd; 0/1 columns (and dummies) are kept.
3. Reference: kernel ridge (RBF; bandwidth and penalty by ``cv``-fold
   cross-validation, on y minus its training mean) or ridge regression.
4. Model class: the same kernel with the training rows (unique) as dictionary,
   μ fixed at the training mean, and norm bound = the reference's RKHS norm; or
   linear models with ``||β||² <=`` the reference's.
5. ε_abs = held-out loss of the reference + ``epsilon`` × its cross-validated
   loss (``epsilon_kind="cv"``, the paper's rule), or as in
   :func:`model_class_reliance`.
6. For each feature group: MR of the reference, MCR− and MCR+, the refit
   without the group (held-out loss ratio), and bootstrap percentile intervals
   over held-out resamples (resample counts re-weight the cached sufficient
   statistics; nothing is rebuilt from replicated rows).

Group names: 1-64 characters among letters, digits, ``_``, ``-``, ``.`` and
space, starting with a letter or digit; no two names may give the same file
name (:func:`group_slug`: spaces become ``_``, compared case-insensitively).
Figure files are named from the slug, never from the raw name.
"""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..sets import MCRResult, RashomonSet
from ..utils.validation import RashomonInputError, check_choice, check_float, check_positive_int, seed_from
from . import _report
from ._checks import _Progress, _check_train_size, check_writable_dir, group_slug, prepare
from ._fit import _fit_reference, _preprocess

from ..utils.validation import Boolean, NJobs, RandomStateLike, validate_params

__all__ = ["audit", "AuditResult", "GroupAudit", "group_slug", "check_writable_dir"]

_TOL = 2.0**-20  # MCR search tolerance, as model_class_reliance's default


@dataclass(frozen=True)
class GroupAudit:
    """Audit figures for one feature group (ratios; CIs are percentile bootstrap intervals)."""

    name: str
    features: tuple
    mr_ref: float
    mcr_lower: float
    mcr_upper: float
    refit_loss_ratio: float
    mcr: MCRResult = field(repr=False)
    ci: dict = field(default_factory=dict)
    bootstrap_draws: dict = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        feats = ", ".join(self.features)
        if len(feats) > 60:
            feats = feats[:57] + "..."
        return (f"GroupAudit({self.name!r}, features=[{feats}], mr_ref={self.mr_ref:.4g}, "
                f"mcr=[{self.mcr_lower:.4g}, {self.mcr_upper:.4g}], refit_loss_ratio={self.refit_loss_ratio:.4g})")

    def to_dict(self) -> dict:
        d = {"features": list(self.features), "mr_ref": self.mr_ref, "mcr_lower": self.mcr_lower,
             "mcr_upper": self.mcr_upper, "refit_loss_ratio": self.refit_loss_ratio,
             "lower_tight": self.mcr.lower_tight, "upper_tight": self.mcr.upper_tight,
             "lower_gap": self.mcr.lower_gap, "upper_gap": self.mcr.upper_gap}
        for k, (lo, hi) in self.ci.items():
            d[f"{k}_ci"] = [lo, hi]
        return d


@dataclass(frozen=True)
class AuditResult:
    """Result of :func:`audit`; ``to_frame``, ``to_json``, ``to_html``, ``plot``."""

    groups: dict
    target: str
    features: tuple
    model_class: str
    n_train: int
    n_test: int
    epsilon_abs: float
    e_ref: float
    cv_loss: float
    reference: dict
    seed: int
    bootstrap: int
    confidence_level: float
    timings: dict
    provenance: str = ""
    rashomon_set: Any = field(default=None, repr=False, compare=False)
    meta: dict = field(default_factory=dict, repr=False, compare=False)

    def __repr__(self) -> str:
        gs = "; ".join(f"{g.name}: MR {g.mr_ref:.3g}, MCR [{g.mcr_lower:.3g}, {g.mcr_upper:.3g}]"
                       for g in list(self.groups.values())[:3])
        if len(self.groups) > 3:
            gs += f"; ... ({len(self.groups)} groups)"
        text = (f"AuditResult(target={self.target!r}, model_class={self.model_class!r}, n_train={self.n_train}, "
                f"n_test={self.n_test}, epsilon_abs={self.epsilon_abs:.4g}, {gs})")
        return text if len(text) <= 290 else text[:286] + "...)"

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for g in self.groups.values():
            row = {"group": g.name, "features": ", ".join(g.features), "MR(f_ref)": g.mr_ref,
                   "MCR-": g.mcr_lower, "MCR+": g.mcr_upper, "refit loss ratio": g.refit_loss_ratio}
            for k, (lo, hi) in g.ci.items():
                row[f"{k} CI"] = f"[{lo:.3f}, {hi:.3f}]"
            rows.append(row)
        return pd.DataFrame(rows).set_index("group")

    def to_dict(self) -> dict:
        out = {name: g.to_dict() for name, g in self.groups.items()}
        out["_meta"] = {"target": self.target, "features": list(self.features), "model_class": self.model_class,
                        "n_train": self.n_train, "n_test": self.n_test, "epsilon_abs": self.epsilon_abs,
                        "e_ref": self.e_ref, "cv_loss": self.cv_loss, "reference": self.reference, "seed": self.seed,
                        "bootstrap": self.bootstrap, "confidence_level": self.confidence_level, "timings": self.timings,
                        **{k: v for k, v in self.meta.items() if k not in ("target", "features")}}
        return out

    def to_json(self, path: str | Path) -> None:
        """Write the results as JSON (the folder is created if needed)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2, default=float))

    def save(self, *, out_dir: str | Path | None = None, json_path: str | Path | None = None) -> Path | None:
        """Write the JSON results and/or the HTML report with its PNG/SVG figures; returns the report path."""
        if json_path is not None:
            self.to_json(json_path)
        if out_dir is None:
            return None
        report = Path(out_dir) / "report.html"
        self.to_html(report)
        return report

    def plot(self, group: str, *, ax: Any = None):
        """Envelope figure of one group; returns an MCREnvelopeDisplay."""
        if group not in self.groups:
            raise RashomonInputError(f"The 'group' parameter of AuditResult.plot must be one of {list(self.groups)}. "
                                     f"Got {group!r} instead.")
        return self.groups[group].mcr.plot(ax=ax)

    def plot_summary(self, *, ax: Any = None):
        """MR of the reference and the MCR interval (with CIs) for each group."""
        return _report.plot_summary(self, ax=ax)

    def write_figures(self, out_dir: str | Path) -> dict:
        """Write each figure as PNG and SVG; returns {name: base64 PNG} for embedding."""
        return _report.write_figures(self, out_dir)

    def to_html(self, path: str | Path, figures: dict | None = None) -> None:
        """A self-contained HTML report (figures embedded as base64 PNG)."""
        _report.to_html(self, path, figures)


@validate_params({"random_state": RandomStateLike(), "n_jobs": NJobs(), "progress": Boolean(), "drop_missing": Boolean()})
def audit(
    data: Any,
    target: str,
    groups: dict,
    *,
    features: list | None = None,
    model_class: str = "kernel",
    epsilon: float = 0.1,
    epsilon_kind: str = "cv",
    train_size: int | float | None = None,
    cv: int = 10,
    bootstrap: int = 0,
    confidence_level: float = 0.95,
    random_state: int = 0,
    n_jobs: int | None = None,
    progress: bool = False,
    provenance: str = "",
    drop_missing: bool = False,
    sep: str | None = None,
) -> AuditResult:
    """Run a model-class-reliance audit on a table.

    Every input is checked before any computing; errors are
    :class:`~rashomon.RashomonInputError` naming the argument.

    Parameters
    ----------
    data : DataFrame or str or Path
        The table, or the path of a CSV file.
    target : str
        Numeric, finite outcome column (squared loss); it may not be a feature
        or in a group.
    groups : dict of {name: list of str}
        Feature groups whose reliance is audited, e.g.
        ``{"inadmissible": ["race", "sex"], "admissible": ["priors", "age"]}``.
        Names: 1-64 letters, digits, ``_``, ``-``, ``.`` or spaces, starting
        with a letter or digit, distinct as file names (:func:`group_slug`). A
        non-numeric column stands for all its one-hot dummies.
    features : list of str, default=None
        Model inputs; default the union of the groups. Non-numeric columns are
        one-hot encoded with all their levels (at most 50; recorded in
        ``result.meta["encoding"]``).
    model_class : {"kernel", "linear"}, default="kernel"
    epsilon : float, default=0.1
        With ``epsilon_kind="cv"``: ε_abs = held-out loss of the reference +
        epsilon × its cross-validated loss (finite, >= 0). With
        ``"absolute"``: ε_abs itself (finite, > 0).
    epsilon_kind : {"cv", "absolute"}, default="cv"
    train_size : int or float, default=None
        Rows (seeded random) that fit the reference; the rest are held out. An
        int >= 10 is a count, a float in (0, 1) a fraction of the usable rows.
        Default ``min(500, n // 2)``: 500 rows, but never more than half, so
        at least half the rows are held out. Both sides need >= 10 rows.
    cv : int, default=10
        Folds for the reference's hyper-parameters.
    bootstrap : int, default=0
        Held-out resamples for percentile intervals (0: none).
    confidence_level : float, default=0.95
    random_state : int, default=0
    n_jobs : int, default=None
        joblib workers over bootstrap resamples (seeds drawn before dispatch,
        so results do not depend on n_jobs).
    progress : bool, default=False
        One progress bar per long phase on stderr (reference fit, each group's
        MCR search, the bootstrap counted in resamples); plain
        ``[rashomon] ...`` lines when stderr is not a terminal; False: silent.
    provenance : str, default=""
        A sentence on where the data came from, printed in the report.
    drop_missing : bool, default=False
        Rows with a missing value in the target or a feature are an error
        (counted per column) unless True; then they are dropped and counted in
        ``result.meta``.
    sep : str, default=None
        CSV separator when ``data`` is a path; None sniffs it from the first
        lines (``,``, ``;``, tab or ``|``; falls back to ``,``).

    Returns
    -------
    AuditResult
        ``result.meta`` records what a report needs (loss, ε rule, encoding,
        standardised columns, row counts, input checksum, date, versions).
    """
    func = "audit"
    t_start = time.perf_counter()
    prep = prepare(data, target, groups, features, sep=sep, drop_missing=drop_missing, func=func)
    # ---------------------------------------------------------------- scalar options
    check_choice(model_class, ("kernel", "linear"), "model_class", func)
    check_choice(epsilon_kind, ("cv", "absolute"), "epsilon_kind", func)
    epsilon = check_float(epsilon, "epsilon", func, low=0.0, strict=epsilon_kind == "absolute")
    bootstrap = check_positive_int(bootstrap, "bootstrap", func, minimum=0)
    cv = check_positive_int(cv, "cv", func, minimum=2)
    confidence_level = check_float(confidence_level, "confidence_level", func, low=0.0, high=1.0)
    work, features, groups, encoding = prep["work"], prep["features"], prep["groups"], prep["encoding"]
    n_input, missing_by_column, digest, input_name = prep["n_input"], prep["missing_by_column"], prep["digest"], prep["input_name"]
    n = len(work)
    train_count = _check_train_size(train_size, n, func)
    if cv > train_count:
        raise RashomonInputError(f"The 'cv' parameter of {func} must be at most the number of training rows ({train_count}). Got {cv} instead.")
    pg = _Progress(progress)
    # ---------------------------------------------------------------- computing
    rng = np.random.RandomState(seed_from(random_state, func))
    perm = rng.permutation(n)
    tr, te = np.sort(perm[:train_count]), np.sort(perm[train_count:])
    X, scaled = _preprocess(work, features, tr)
    y = work[target].to_numpy(dtype=float)
    Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    timings = {}
    t0 = time.perf_counter()
    with pg.phase(f"fitting reference ({model_class}, {cv}-fold CV, {len(tr)} rows)") as tick:
        reference, mc, cv_loss, ref_info = _fit_reference(Xtr, ytr, model_class, cv, int(rng.randint(2**31 - 1)), n_jobs)
        tick(1)
    ref_info["standardised_features"] = scaled
    timings["reference_fit_s"] = time.perf_counter() - t0
    # One set for all groups: the class parametrised once (on the training rows, through the
    # reference), e_orig built and e_min solved once on the held-out rows, ε by the CV rule.
    rs = RashomonSet(mc, epsilon * cv_loss if epsilon_kind == "cv" else float(epsilon),
                     epsilon_kind="additive" if epsilon_kind == "cv" else "absolute",
                     reference=reference).fit(pd.DataFrame(Xte, columns=features), yte)
    e_ref, eps_abs = rs.e_ref_, rs.epsilon_abs_
    gidx = {name: tuple(sorted(features.index(c) for c in cols)) for name, cols in groups.items()}
    results = {}
    t0 = time.perf_counter()
    for name, g in gidx.items():
        with pg.phase(f"MCR search: {name}", total=2) as tick:
            mcr = rs.model_class_reliance(list(g), tol=_TOL)
            tick(1)
            # The reference lies in the class, so its exact all-pairs MR is the forms at its θ
            # (the same U-statistic as model_reliance, without n² kernel predictions).
            mr_ref = mcr.reference_model.mr
            keep = [j for j in range(len(features)) if j not in g]
            if keep:
                ref_wo, _, _, _ = _fit_reference(Xtr[:, keep], ytr, model_class, cv, int(rng.randint(2**31 - 1)), n_jobs)
                refit = float(np.mean((yte - ref_wo.predict(Xte[:, keep])) ** 2)) / e_ref
            else:
                refit = float(np.mean((yte - ytr.mean()) ** 2)) / e_ref
            tick(1)
        results[name] = dict(mcr=mcr, mr=mr_ref, refit=refit)
    timings["mr_mcr_s"] = time.perf_counter() - t0
    draws: dict = {name: {"mr_ref": [], "mcr_lower": [], "mcr_upper": []} for name in gidx}
    if bootstrap:
        from ..sets import bootstrap_mcr

        t0 = time.perf_counter()
        # resamples as row weights on the set's cached statistics, γ-searches warm-started at the
        # full-data γ; seeds drawn from rng as before (same resamples), identical for any n_jobs
        with pg.phase("bootstrap resamples", total=bootstrap) as tick:
            boot = bootstrap_mcr(rs, {name: list(g) for name, g in gidx.items()}, bootstrap, random_state=rng,
                                 n_jobs=n_jobs, tol=_TOL, callback=tick)
        for name in gidx:
            for key, src in (("mr_ref", "mr_ref"), ("mcr_lower", "lower"), ("mcr_upper", "upper")):
                draws[name][key] = list(boot.draws[name][src])
        timings["bootstrap_s"] = time.perf_counter() - t0
    a = (1 - confidence_level) / 2
    groups_out = {}
    for name, g in gidx.items():
        r = results[name]
        ci = {}
        if bootstrap:
            for k, v in draws[name].items():
                v = np.asarray(v, dtype=float)
                ci[k] = (float(np.quantile(v, a)), float(np.quantile(v, 1 - a)))
        groups_out[name] = GroupAudit(name, tuple(features[j] for j in g), float(r["mr"]), r["mcr"].lower, r["mcr"].upper,
                                      r["refit"], r["mcr"], ci, {k: np.asarray(v) for k, v in draws[name].items()})
    timings["total_s"] = time.perf_counter() - t_start
    from .. import __version__

    if model_class == "kernel":
        hyper = {"kernel": "rbf", "gamma": ref_info["gamma"], "penalty_alpha": ref_info["alpha"],
                 "dictionary_size": ref_info["dictionary_size"], "norm_bound": ref_info["rkhs_norm"]}
    else:
        hyper = {"kernel": "linear", "gamma": None, "penalty_alpha": ref_info["alpha"], "dictionary_size": None,
                 "norm_bound": ref_info["norm"]}
    eps_rule = (f"held-out loss of the reference + {epsilon:g} × its {cv}-fold CV loss" if epsilon_kind == "cv"
                else f"absolute threshold {epsilon:g} on the held-out loss")
    meta = {
        "loss": "squared error",
        "epsilon_rule": eps_rule,
        "epsilon_value": epsilon,
        "hyperparameters": hyper,
        "encoding": encoding,
        "standardised": list(scaled),
        "n_rows_input": int(n_input),
        "n_rows_used": int(n),
        "n_rows_dropped": int(n_input - n),
        "missing_by_column": missing_by_column,
        "train_size": int(len(tr)),
        "package_version": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "input_sha256": digest,
        "input_name": input_name,
        "ci_method": "percentile bootstrap over held-out rows" if bootstrap else None,
        "n_bootstrap": int(bootstrap),
    }
    return AuditResult(groups_out, target, tuple(features), model_class, len(tr), len(te), float(eps_abs), e_ref, cv_loss,
                       ref_info, int(random_state) if isinstance(random_state, (int, np.integer)) else -1, bootstrap,
                       float(confidence_level), timings, provenance, rs, meta)
