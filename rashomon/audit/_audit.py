"""End-to-end reliance audits: the analysis of Fisher, Rudin & Dominici (2019, §10) for any table.

Pipeline (:func:`audit`):

1. Split the rows: a seeded random ``train_size`` part fits the reference, the
   rest (held out) is where MR and MCR are computed.
2. Numeric non-binary features are standardised with the training part's mean
   and sd; 0/1 columns are kept.
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
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..model_classes import KernelModelClass, LinearModelClass
from ..sets import MCRResult, RashomonSet
from ..utils import single_blas_thread
from . import _report
from ..utils.validation import RashomonInputError, check_positive_int, seed_from

__all__ = ["audit", "AuditResult", "GroupAudit"]

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
                        "bootstrap": self.bootstrap, "confidence_level": self.confidence_level, "timings": self.timings}
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


def _preprocess(df: pd.DataFrame, features: list[str], train_idx: np.ndarray):
    X = df[features].to_numpy(dtype=float, copy=True)
    scaled = []
    for j, c in enumerate(features):
        vals = np.unique(X[:, j])
        if not (len(vals) <= 2 and set(vals.tolist()) <= {0.0, 1.0}):
            mu, sd = X[train_idx, j].mean(), X[train_idx, j].std()
            if sd == 0:
                raise RashomonInputError(f"The 'features' parameter of audit names a column ({c!r}) that is constant on the training part.")
            X[:, j] = (X[:, j] - mu) / sd
            scaled.append(c)
    return X, scaled


def _fit_reference(Xtr, ytr, model_class, cv, seed, n_jobs=None):
    """Hyper-parameters by ``cv``-fold cross-validation, then the reference fitted *by the class*.

    The kernel reference is the class's own penalised fit (kernel ridge with the chosen
    bandwidth and penalty, dictionary = the unique training rows, μ = training mean): a member
    of the class by construction, whose RKHS norm is the class's norm bound. Returns
    ``(reference, model_class, cv_loss, info)``.
    """
    from sklearn.model_selection import GridSearchCV, KFold

    folds = KFold(n_splits=cv, shuffle=True, random_state=seed)
    if model_class == "kernel":
        from sklearn.kernel_ridge import KernelRidge

        base = 1.0 / Xtr.shape[1]
        grid = {"gamma": [base * f for f in (0.03, 0.1, 0.3, 1.0, 3.0)], "alpha": list(np.logspace(-3, 2, 11))}
        gs = GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=folds, scoring="neg_mean_squared_error", n_jobs=n_jobs).fit(Xtr, ytr - ytr.mean())
        gamma, alpha = float(gs.best_params_["gamma"]), float(gs.best_params_["alpha"])
        ybar = float(ytr.mean())
        mc = KernelModelClass(kernel="rbf", gamma=gamma, alpha=alpha, intercept=ybar)
        ref = mc.fit_reference(Xtr, ytr)
        info = {"kind": "kernel ridge (rbf)", "gamma": gamma, "alpha": alpha,
                "rkhs_norm": ref.parametrization_.r, "intercept": ybar,
                "dictionary_size": int(ref.parametrization_.info["dictionary_size"])}
    else:
        from sklearn.linear_model import Ridge

        gs = GridSearchCV(Ridge(), {"alpha": list(np.logspace(-3, 3, 25))}, cv=folds, scoring="neg_mean_squared_error", n_jobs=n_jobs).fit(Xtr, ytr)
        ref = gs.best_estimator_
        norm = float(ref.coef_ @ ref.coef_)
        info = {"kind": "ridge", "alpha": float(ref.alpha), "norm": norm}
        mc = LinearModelClass(norm_bound=max(norm, 1e-12), standardize=False, penalty_matrix=np.eye(Xtr.shape[1]))
    return ref, mc, float(-gs.best_score_), info


def _boot_chunk(rs, groups, seeds, kind, tol):
    """MR(f_ref), MCR− and MCR+ of every group on each resample (row weights on the held-out set)."""
    out = []
    n = rs.X_.shape[0]
    for s in seeds:
        w = np.random.RandomState(s).multinomial(n, np.full(n, 1.0 / n)).astype(float)
        rb = rs.reweighted(w)
        row = {}
        for name, group in groups.items():
            res = rb.model_class_reliance(list(group), kind=kind, tol=tol)
            row[name] = (res.reference_model.mr, res.lower, res.upper)
        out.append(row)
    return out


def audit(
    data: Any,
    target: str,
    groups: dict,
    *,
    features: list | None = None,
    model_class: str = "kernel",
    epsilon: float = 0.1,
    epsilon_kind: str = "cv",
    train_size: int = 500,
    cv: int = 10,
    bootstrap: int = 0,
    confidence_level: float = 0.95,
    random_state: int = 0,
    n_jobs: int | None = None,
    progress: bool = False,
    provenance: str = "",
) -> AuditResult:
    """Run a model-class-reliance audit on a table.

    Parameters
    ----------
    data : DataFrame or str
        The table, or the path of a CSV file.
    target : str
        Numeric outcome column (squared loss).
    groups : dict of {name: list of str}
        Feature groups whose reliance is audited, e.g.
        ``{"inadmissible": ["race", "sex"], "admissible": ["priors", "age"]}``.
    features : list of str, default=None
        Model inputs; default the union of the groups.
    model_class : {"kernel", "linear"}, default="kernel"
    epsilon : float, default=0.1
        With ``epsilon_kind="cv"``: ε_abs = held-out loss of the reference +
        epsilon × its cross-validated loss. With ``"absolute"``: ε_abs itself.
    epsilon_kind : {"cv", "absolute"}, default="cv"
    train_size : int, default=500
        Rows (seeded random) that fit the reference; the rest are held out.
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
        tqdm progress bars on long steps.
    provenance : str, default=""
        A sentence on where the data came from, printed in the report.

    Returns
    -------
    AuditResult
    """
    func = "audit"
    t_start = time.perf_counter()
    if isinstance(data, (str, Path)):
        try:
            data = pd.read_csv(data)
        except (OSError, pd.errors.ParserError) as exc:
            raise RashomonInputError(f"The 'data' parameter of {func} could not be read as CSV: {exc}") from None
    if not isinstance(data, pd.DataFrame):
        raise RashomonInputError(f"The 'data' parameter of {func} must be a DataFrame or a CSV path. Got {type(data).__name__} instead.")
    if target not in data.columns:
        raise RashomonInputError(f"The 'target' parameter of {func} must be a column of the data. Got unknown column {target!r} instead.")
    if not pd.api.types.is_numeric_dtype(data[target]):
        raise RashomonInputError(f"The 'target' parameter of {func} must name a numeric column; {target!r} has dtype {data[target].dtype}.")
    if not isinstance(groups, dict) or not groups:
        raise RashomonInputError(f"The 'groups' parameter of {func} must be a non-empty dict of name -> list of columns.")
    for name, cols in groups.items():
        if not cols:
            raise RashomonInputError(f"The 'groups' parameter of {func} has an empty group {name!r}.")
        for c in cols:
            if c not in data.columns:
                raise RashomonInputError(f"The 'groups' parameter of {func} has unknown column {c!r} in group {name!r}.")
    if model_class not in ("kernel", "linear"):
        raise RashomonInputError(f"The 'model_class' parameter of {func} must be 'kernel' or 'linear'. Got {model_class!r} instead.")
    if epsilon_kind not in ("cv", "absolute"):
        raise RashomonInputError(f"The 'epsilon_kind' parameter of {func} must be 'cv' or 'absolute'. Got {epsilon_kind!r} instead.")
    bootstrap = check_positive_int(bootstrap, "bootstrap", func, minimum=0)
    if features is None:
        features = list(dict.fromkeys(c for cols in groups.values() for c in cols))
    for c in features:
        if c not in data.columns:
            raise RashomonInputError(f"The 'features' parameter of {func} has unknown column {c!r}.")
        if not pd.api.types.is_numeric_dtype(data[c]) and not pd.api.types.is_bool_dtype(data[c]):
            raise RashomonInputError(f"The 'features' parameter of {func} has non-numeric column {c!r}; encode it first.")
    missing = [c for cols in groups.values() for c in cols if c not in features]
    if missing:
        raise RashomonInputError(f"The 'groups' parameter of {func} uses columns that are not among the features: {missing}.")
    df = data[features + [target]].dropna()
    n = len(df)
    if not 10 <= train_size <= n - 10:
        raise RashomonInputError(f"The 'train_size' parameter of {func} must leave at least 10 rows on each side (n = {n}). Got {train_size} instead.")
    rng = np.random.RandomState(seed_from(random_state, func))
    perm = rng.permutation(n)
    tr, te = np.sort(perm[:train_size]), np.sort(perm[train_size:])
    X, scaled = _preprocess(df, features, tr)
    y = df[target].to_numpy(dtype=float)
    Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    timings = {}
    t0 = time.perf_counter()
    reference, mc, cv_loss, ref_info = _fit_reference(Xtr, ytr, model_class, cv, int(rng.randint(2**31 - 1)), n_jobs)
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
        mcr = rs.model_class_reliance(list(g), tol=_TOL)
        # The reference lies in the class, so its exact all-pairs MR is the forms at its θ
        # (the same U-statistic as model_reliance, without n² kernel predictions).
        mr_ref = mcr.reference_model.mr
        keep = [j for j in range(len(features)) if j not in g]
        if keep:
            ref_wo, _, _, _ = _fit_reference(Xtr[:, keep], ytr, model_class, cv, int(rng.randint(2**31 - 1)), n_jobs)
            refit = float(np.mean((yte - ref_wo.predict(Xte[:, keep])) ** 2)) / e_ref
        else:
            refit = float(np.mean((yte - ytr.mean()) ** 2)) / e_ref
        results[name] = dict(mcr=mcr, mr=mr_ref, refit=refit)
    timings["mr_mcr_s"] = time.perf_counter() - t0
    draws: dict = {name: {"mr_ref": [], "mcr_lower": [], "mcr_upper": []} for name in gidx}
    if bootstrap:
        from joblib import Parallel, delayed

        seeds = rng.randint(0, 2**31 - 1, size=bootstrap)
        n_chunks = max(1, min(bootstrap, 16))
        chunks = [list(c) for c in np.array_split(seeds, n_chunks)]
        t0 = time.perf_counter()
        # one BLAS thread per chunk wherever it runs, so any n_jobs gives identical numbers
        jobs = (delayed(single_blas_thread)(_boot_chunk, rs, gidx, c, "ratio", _TOL) for c in chunks)
        gen = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
        if progress:
            from tqdm.auto import tqdm

            gen = tqdm(gen, total=len(chunks), desc="bootstrap")
        for chunk in gen:
            for row in chunk:
                for name, (mr_b, lo_b, hi_b) in row.items():
                    draws[name]["mr_ref"].append(mr_b)
                    draws[name]["mcr_lower"].append(lo_b)
                    draws[name]["mcr_upper"].append(hi_b)
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
    return AuditResult(groups_out, target, tuple(features), model_class, len(tr), len(te), float(eps_abs), e_ref, cv_loss,
                       ref_info, int(random_state) if isinstance(random_state, (int, np.integer)) else -1, bootstrap,
                       confidence_level, timings, provenance, rs)
