"""The audit's result objects: one :class:`GroupAudit` per feature group inside an :class:`AuditResult`
(``to_frame``, ``to_json``, ``to_html``, ``plot``), for the in-memory and the out-of-core (Dask) audits."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..sets import MCRResult
from ..utils import DisplayMixin, write_text
from ..utils.validation import RashomonInputError
from . import _report

__all__ = ["AuditResult", "GroupAudit"]


@dataclass(frozen=True)
class GroupAudit(DisplayMixin):
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
    extra: dict = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        feats = ", ".join(self.features)
        if len(feats) > 60:
            feats = feats[:57] + "..."
        return (
            f"GroupAudit({self.name!r}, features=[{feats}], mr_ref={self.mr_ref:.4g}, "
            f"mcr={_mcr_text(self.mcr, 4)}, refit_loss_ratio={self.refit_loss_ratio:.4g})"
        )

    def _display_(self) -> tuple[dict, list]:
        return self.mcr._display_()[0] | {"mr_ref": self.mr_ref, "refit_loss_ratio": self.refit_loss_ratio}, [
            ("", pd.DataFrame([self.to_dict()], index=[self.name]).drop(columns="features"))
        ]

    def to_dict(self) -> dict:
        d = {
            "features": list(self.features),
            "mr_ref": self.mr_ref,
            "mcr_lower": self.mcr_lower,
            "mcr_upper": self.mcr_upper,
            "refit_loss_ratio": self.refit_loss_ratio,
            "lower_tight": self.mcr.lower_tight,
            "upper_tight": self.mcr.upper_tight,
            "lower_gap": self.mcr.lower_gap,
            "upper_gap": self.mcr.upper_gap,
        }
        for k, (lo, hi) in self.ci.items():
            d[f"{k}_ci"] = [lo, hi]
        for k, v in self.extra.items():  # classifier: attained ends; user's model: its MR, CI, bracketed
            if not k.endswith("_draws"):
                d[k] = list(v) if isinstance(v, tuple) else v
        return d


@dataclass(frozen=True)
class AuditResult(DisplayMixin):
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

    def __post_init__(self) -> None:
        rs = self.rashomon_set  # the set's losses beside the null model's, kept in meta (and so in the JSON)
        if rs is not None and hasattr(rs, "e_null_") and "null_model" not in self.meta:
            import warnings

            from ..utils.validation import RashomonWarning
            from ._report_text import null_model_note

            keys = ("e_min_", "e_ref_", "epsilon_abs_", "e_null_", "explained_share_")
            nm = self.meta["null_model"] = {k.rstrip("_"): float(getattr(rs, k)) for k in keys}
            note = null_model_note(nm)  # in the report; a set holding a constant model warned when it was fitted
            if note is not None and nm["epsilon_abs"] < nm["e_null"]:
                warnings.warn(f"audit: {note}", RashomonWarning, stacklevel=5)

    def __repr__(self) -> str:
        gs = "; ".join(
            f"{g.name}: MR {g.mr_ref:.3g}, MCR {_mcr_text(g.mcr, 3)}" for g in list(self.groups.values())[:3]
        )
        if len(self.groups) > 3:
            gs += f"; ... ({len(self.groups)} groups)"
        text = (
            f"AuditResult(target={self.target!r}, model_class={self.model_class!r}, n_train={self.n_train}, "
            f"n_test={self.n_test}, epsilon_abs={self.epsilon_abs:.4g}, {gs})"
        )
        return text if len(text) <= 290 else text[:286] + "...)"

    def _display_(self) -> tuple[dict, list]:
        fields = {
            "target": self.target,
            "model_class": self.model_class,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "epsilon_abs": self.epsilon_abs,
            "e_ref": self.e_ref,
            "cv_loss": self.cv_loss,
            **self._null_fields(),
            "bootstrap": self.bootstrap,
            "seed": self.seed,
        }
        df = self.to_frame()
        for k in ("lower_tight", "upper_tight", "lower_gap", "upper_gap"):
            df[k] = [getattr(g.mcr, k) for g in self.groups.values()]
        return fields, [("", df)]

    def _null_fields(self) -> dict:
        nm = self.meta.get("null_model")
        return {"e_null": nm["e_null"], "explained_kept": f"{nm['explained_share']:.1%}"} if nm else {}

    def null_model_line(self) -> str:
        """e_min, e_ref, ε_abs and e_null side by side with the share of the explained loss the set keeps, as one
        line (with its newline; empty when the result has no set)."""
        from ._report_text import null_model_line

        return null_model_line(self.meta)

    @property
    def fairness(self) -> dict | None:
        """The "Fairness over the Rashomon set" figures (``audit(..., sensitive=...)``), JSON-ready; else None."""
        return self.meta.get("fairness")

    def to_frame(self) -> pd.DataFrame:
        rows = []
        # an end not tight anywhere: every group's attained values beside its bounds (a classifier has them always)
        loose = any(not (g.mcr.lower_tight and g.mcr.upper_tight) for g in self.groups.values())
        for g in self.groups.values():
            row = {
                "group": g.name,
                "features": ", ".join(g.features),
                "MR(f_ref)": g.mr_ref,
                "MCR-": g.mcr_lower,
                "MCR+": g.mcr_upper,
                "refit loss ratio": g.refit_loss_ratio,
            }
            if "mcr_upper_attained" in g.extra:  # classifier: the attained values beside the bounds
                row["MCR- attained"] = g.extra["mcr_lower_attained"]
                row["MCR+ attained"] = g.extra["mcr_upper_attained"]
            elif loose:
                row["MCR- attained"], row["MCR+ attained"] = g.mcr.lower_attained, g.mcr.upper_attained
            if "model_mr" in g.extra:
                row["MR(your model)"] = g.extra["model_mr"]
                row["bracketed"] = (
                    "no" if not g.extra["bracketed"] else "yes" if g.extra.get("within_attained", True) else "undecided"
                )
            for k, (lo, hi) in list(g.ci.items()) + (
                [("model_mr", g.extra["model_mr_ci"])] if "model_mr_ci" in g.extra else []
            ):
                row[f"{k} CI"] = f"[{lo:.3f}, {hi:.3f}]"
            rows.append(row)
        return pd.DataFrame(rows).set_index("group")

    def to_dict(self) -> dict:
        out = {name: g.to_dict() for name, g in self.groups.items()}
        out["_meta"] = {
            "target": self.target,
            "features": list(self.features),
            "model_class": self.model_class,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "epsilon_abs": self.epsilon_abs,
            "e_ref": self.e_ref,
            "cv_loss": self.cv_loss,
            "reference": self.reference,
            "seed": self.seed,
            "bootstrap": self.bootstrap,
            "confidence_level": self.confidence_level,
            "timings": self.timings,
            **{k: v for k, v in self.meta.items() if k not in ("target", "features")},
        }
        return out

    def to_json(self, path: str | Path) -> None:
        """Write the results as JSON (the folder is created if needed)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(self.to_dict(), indent=2, default=float))

    def save(
        self,
        *,
        out_dir: str | Path | None = None,
        json_path: str | Path | None = None,
        report_name: str = "report.html",
    ) -> Path | None:
        """Write the JSON results and/or the HTML report with its PNG/SVG figures; returns the report path.

        A ``report_name`` other than ``report.html`` prefixes the figure files with its stem, so that several
        audits can share one folder."""
        if json_path is not None:
            self.to_json(json_path)
        if out_dir is None:
            return None
        report = Path(out_dir) / report_name
        prefix = "" if report_name == "report.html" else f"{Path(report_name).stem}_"
        self.to_html(report, self.write_figures(Path(out_dir), prefix=prefix) if prefix else None)
        return report

    def plot(self, group: str, *, ax: Any = None):
        """Envelope figure of one group; returns an MCREnvelopeDisplay."""
        if group not in self.groups:
            raise RashomonInputError(
                f"The 'group' parameter of AuditResult.plot must be one of {list(self.groups)}. Got {group!r} instead."
            )
        return self.groups[group].mcr.plot(ax=ax)

    def plot_summary(self, *, ax: Any = None):
        """MR of the reference and the MCR interval (with CIs) for each group."""
        return _report.plot_summary(self, ax=ax)

    def write_figures(self, out_dir: str | Path, prefix: str = "") -> dict:
        """Write each figure as PNG and SVG (file names start with ``prefix``); returns {name: base64 PNG}."""
        return _report.write_figures(self, out_dir, prefix=prefix)

    def to_html(self, path: str | Path, figures: dict | None = None) -> None:
        """A self-contained HTML report (figures embedded as base64 PNG)."""
        _report.to_html(self, path, figures)


def audit_meta(
    epsilon: float,
    epsilon_kind: str,
    cv_text: str,
    hyper: dict,
    encoding: dict,
    scaled: list,
    n_input: int,
    n_used: int,
    missing_by_column: dict,
    n_train: int,
    digest: str | None,
    input_name: str,
    bootstrap: int,
) -> dict:
    """``AuditResult.meta``: what a report needs (loss, ε rule, encoding, rows, checksum, date, version)."""
    from datetime import datetime, timezone

    from .. import __version__

    eps_rule = (
        f"held-out loss of the reference + {epsilon:g} × its {cv_text} CV loss"
        if epsilon_kind == "cv"
        else f"absolute threshold {epsilon:g} on the held-out loss"
    )
    return {
        "loss": "squared error",
        "epsilon_rule": eps_rule,
        "epsilon_value": epsilon,
        "hyperparameters": hyper,
        "encoding": encoding,
        "standardised": list(scaled),
        "n_rows_input": int(n_input),
        "n_rows_used": int(n_used),
        "n_rows_dropped": int(n_input - n_used),
        "missing_by_column": missing_by_column,
        "train_size": int(n_train),
        "package_version": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "input_sha256": digest,
        "input_name": input_name,
        "ci_method": "percentile bootstrap over held-out rows" if bootstrap else None,
        "n_bootstrap": int(bootstrap),
    }


def _mcr_text(mcr, digits: int) -> str:
    """``[c, d]``; with ``(attained [a, b])`` after the certified bounds when an end is not tight."""
    text = f"[{mcr.lower:.{digits}g}, {mcr.upper:.{digits}g}]"
    if not (mcr.lower_tight and mcr.upper_tight):
        text += f" (attained [{mcr.lower_attained:.{digits}g}, {mcr.upper_attained:.{digits}g}])"
    return text
