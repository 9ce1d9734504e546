"""What ``rashomon audit`` prints besides the results table: the fairness summary line (attained values within
the certified bounds), and errors and warnings in the command line's terms (options, not Python arguments; one line,
no source line)."""

from __future__ import annotations

import re
import sys

__all__: list[str] = []


def _fairness_line(fairness: dict) -> str:
    """The summary's fairness line: the between-groups mean-prediction gap, attained and certified."""
    row = fairness["disparity"]["mean_prediction"]["rows"][-1]
    lo, up = f"{row['lower']:.4g}", f"{row['upper']:.4g}"
    if row.get("exact"):
        where = f"over the set in [{lo}, {up}] (exact)"
    else:
        where = (
            f"attained [{row['lower_attained']:.4g}, {row['upper_attained']:.4g}] by members of the set, "
            f"within certified outer bounds [{lo}, {up}]"
        )
    return (
        f"fairness ({fairness['sensitive']}): mean-prediction {row['disparity']} {where} "
        f"(reference {row['reference']:.4g}); see the report"
    )


#: audit() parameter -> the CLI option that sets it (messages name what the user typed)
_OPTIONS = {
    "data": "--data",
    "target": "--target",
    "groups": "--group",
    "features": "--features",
    "model_class": "--model-class",
    "epsilon": "--epsilon",
    "epsilon_kind": "--epsilon-kind",
    "train_size": "--train-size",
    "cv": "--cv",
    "cv_rule": "--cv-rule",
    "bootstrap": "--bootstrap",
    "random_state": "--seed",
    "n_jobs": "--n-jobs",
    "sep": "--sep",
    "split": "--split",
    "positive_label": "--positive-label",
    "estimator": "--estimator",
    "ambiguity_threshold": "--ambiguity-threshold",
    "ambiguity_rows": "--ambiguity-rows",
    "bootstrap_mcr": "--bootstrap-mcr",
    "sensitive": "--sensitive",
    "benchmark_column": "--benchmark-column",
    "trusted_types": "--trust-type",
}


def _as_option(message: str) -> str:
    message = re.sub(
        r"The '(\w+)' parameter of audit",
        lambda m: f"The '{_OPTIONS.get(m.group(1), m.group(1))}' option of rashomon audit",
        message,
    )
    # "pass epsilon=0.1" in a message written for Python callers: the option as typed on the command line
    return re.sub(
        r"\b(\w+)=(\S+?)(?=[.,;)]?(?:\s|$))",
        lambda m: f"{_OPTIONS[m.group(1)]} {m.group(2)}" if m.group(1) in _OPTIONS else m.group(0),
        message,
    )


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG001
    """``warnings.showwarning`` for the command line: one line on stderr, naming options, no source line."""
    text = " ".join(str(message).split())
    print(f"rashomon audit: warning: {_as_option(text)}", file=sys.stderr if file is None else file, flush=True)
