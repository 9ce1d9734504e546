"""The options of ``rashomon audit`` (:mod:`rashomon.audit.cli`): the argument parser and its value types."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..utils.validation import RashomonInputError

__all__ = ["build_parser"]


def _group(text: str) -> tuple[str, list[str]]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--group must look like NAME=col1,col2; got {text!r}")
    name, cols = text.split("=", 1)
    cols_l = [c.strip() for c in cols.split(",") if c.strip()]
    if not name.strip() or not cols_l:
        raise argparse.ArgumentTypeError(f"--group must look like NAME=col1,col2; got {text!r}")
    return name.strip(), cols_l


def _train_size(text: str) -> int | float:
    """``--train-size``: a count (>= 10) or a fraction in (0, 1); range checked by audit()."""
    t = text.strip()
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        raise RashomonInputError(
            f"The '--train-size' option of rashomon audit must be a row count >= 10 or a fraction in "
            f"(0, 1). Got {text!r} instead."
        ) from None


def _sep(text: str) -> str:
    return {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(text, text)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="rashomon", description="Model class reliance audits (Fisher, Rudin & Dominici 2019)."
    )
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("audit", help="audit how much any good model of a class could rely on feature groups")
    a.add_argument(
        "--data",
        required=True,
        help="CSV file, or a Parquet file or folder of Parquet files (audited out of core through "
        "dask.dataframe.read_parquet when Dask is installed: --model-class linear, kernel or logistic, no bootstrap)",
    )
    a.add_argument(
        "--sep",
        type=_sep,
        default=None,
        help="CSV separator (default: sniffed from the first lines among , ; tab |, else ','; '\\t' or 'tab' for tab)",
    )
    a.add_argument(
        "--target",
        required=True,
        help="outcome column: numeric (kernel or linear class), or binary (logistic or hinge class): 0/1, "
        "True/False, or two levels with --positive-label",
    )
    a.add_argument(
        "--positive-label",
        default=None,
        metavar="LEVEL",
        help="the level of a binary target coded 1 (needed unless the target is 0/1 or True/False; default: none)",
    )
    a.add_argument(
        "--group",
        action="append",
        type=_group,
        required=True,
        metavar="NAME=COL1,COL2",
        help="a feature group to audit (repeat for several; names: letters, digits, _ - . and spaces, "
        "distinct); a categorical column stands for all its one-hot dummies",
    )
    a.add_argument("--features", default=None, help="comma-separated model inputs (default: the union of the groups)")
    a.add_argument(
        "--model-class",
        choices=["kernel", "linear", "logistic", "hinge"],
        default=None,
        help="default: logistic for a binary target (0/1, True/False, two levels or --positive-label), "
        "kernel otherwise",
    )
    a.add_argument(
        "--estimator",
        type=Path,
        default=None,
        metavar="MODEL.joblib",
        help="your fitted model: a .skops file (skops.io, which runs no code; needs skops) or a joblib / "
        "pickle file (e.g. joblib.dump(model, 'model.joblib')); its MR per group on the held-out rows is "
        "set beside the class's MCR. WARNING: loading a pickle runs code from the file; only load files "
        "you trust (it is loaded after every other input is checked; default: none)",
    )
    a.add_argument(
        "--trust-type",
        action="append",
        default=None,
        metavar="TYPE",
        help="a type a .skops --estimator may hold beyond scikit-learn's and NumPy's (repeat for several; "
        "skops.io.get_untrusted_types lists them; default: none)",
    )
    a.add_argument(
        "--ambiguity-threshold",
        type=float,
        default=0.5,
        help="classifier classes: probability threshold of the ambiguity (default: %(default)s)",
    )
    a.add_argument(
        "--ambiguity-rows",
        type=int,
        default=500,
        help="classifier classes: held-out rows (seeded sample) for the ambiguity; 0 for all (default: %(default)s)",
    )
    a.add_argument(
        "--bootstrap-mcr",
        action="store_true",
        help="classifier classes: bootstrap MCR too (each resample reruns every MCR search; its cost "
        "is reported); without it --bootstrap gives intervals for the MR of the reference and of "
        "--estimator (default: off)",
    )
    a.add_argument(
        "--sensitive",
        metavar="COLUMN",
        default=None,
        help="a column of group labels (2-20 groups; need not be a feature): the report adds fairness over "
        "the Rashomon set (disparity ranges, the least disparate good model, the certified order of "
        "the groups; default: none)",
    )
    a.add_argument(
        "--benchmark-column",
        metavar="COLUMN",
        default=None,
        help="with --sensitive: a deployed score column (e.g. decile_score; probabilities for the "
        "logistic class) placed in the set's disparity ranges (default: none)",
    )
    a.add_argument(
        "--report-name",
        default="report.html",
        help="file name of the HTML report in --out (default: %(default)s; another name prefixes the "
        "figure files with its stem)",
    )
    a.add_argument(
        "--epsilon",
        type=float,
        default=0.1,
        help="Rashomon margin: eps_abs = held-out reference loss + EPSILON x CV loss (or the absolute "
        "threshold with --epsilon-kind absolute; default: %(default)s, i.e. 10 %% of the CV loss)",
    )
    a.add_argument(
        "--epsilon-kind",
        choices=["cv", "absolute"],
        default="cv",
        help="how --epsilon is read: a multiple of the cross-validated loss, or an absolute loss (default: "
        "%(default)s)",
    )
    a.add_argument(
        "--train-size",
        type=str,
        default=None,
        help="rows fitting the reference: a count >= 10 or a fraction in (0, 1) (default: min(500, half the rows))",
    )
    a.add_argument(
        "--split",
        metavar="COLUMN",
        default=None,
        help="a True/False (or 0/1) column marking the rows that fit the reference (instead of the "
        "seeded split; not with --train-size; default: none, the seeded split)",
    )
    a.add_argument(
        "--cv", type=int, default=10, help="folds for the reference's hyper-parameters (default: %(default)s)"
    )
    a.add_argument(
        "--cv-rule",
        metavar="{stratified,hash}",
        default=None,
        help="how a classifier class draws its --cv folds: stratified (in memory, the default) or hash (a seeded "
        "row hash; logistic only; the only rule and the default on Parquet read through Dask: the same table in "
        "memory and on Parquet then gives the same numbers)",
    )
    a.add_argument(
        "--drop-missing",
        action="store_true",
        help="drop rows with missing values (default: off, missing values are an error)",
    )
    a.add_argument(
        "--bootstrap",
        type=int,
        default=0,
        help="bootstrap resamples of the held-out rows for the intervals; 0 for none (default: %(default)s)",
    )
    a.add_argument(
        "--seed",
        type=int,
        default=0,
        help="random seed of the split, the samples and the bootstrap (default: %(default)s)",
    )
    a.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="joblib workers over the bootstrap resamples, -1 for all cores (default: joblib's, one)",
    )
    a.add_argument(
        "--out",
        type=Path,
        default=Path("rashomon-audit"),
        help="folder for report.html and figures (default: %(default)s)",
    )
    a.add_argument("--json", type=Path, help="write results as JSON to this file (default: none)")
    a.add_argument("--no-plots", action="store_true", help="no figures or HTML report (default: off)")
    a.add_argument(
        "--quiet", action="store_true", help="no progress bars, log lines or warnings on stderr (default: off)"
    )
    a.add_argument("--provenance", default="", help="a sentence on where the data came from (default: none)")
    return ap
