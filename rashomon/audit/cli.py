"""Command line: ``rashomon audit``.

Example::

    rashomon audit --data compas.csv --target v_decile_score \\
        --group inadmissible=race,sex --group admissible=priors_count,felony,age \\
        --epsilon 0.1 --bootstrap 200 --seed 0 --out report/ --json results.json

    rashomon audit --data table/ --model-class linear ...   # a folder of Parquet files, out of core (Dask)

Every input (including the ``--out`` folder, created and test-written) is checked
before any computing; a bad one prints ``rashomon audit: error: ...`` on stderr
and exits with status 2. A report that cannot be written (a full disk) exits with
status 1 after printing the results, naming the file. Ctrl-C (SIGINT) and SIGTERM
stop the run with one line on stderr and status 130 or 143: joblib's workers are
ended, and no file is left half-written (each is written under a temporary name
and renamed into place; report.html last).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..utils.validation import RashomonInputError


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


def _load_estimator(path: Path):
    """A fitted model from a joblib / pickle file (this runs code from the file)."""
    if not path.is_file():
        raise RashomonInputError(
            f"The '--estimator' option of rashomon audit must be an existing joblib or pickle file. "
            f"Got {str(path)!r} instead."
        )
    import joblib

    try:
        model = joblib.load(path)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad input file
        raise RashomonInputError(
            f"The '--estimator' option of rashomon audit must be a joblib or pickle file of a fitted "
            f"model. Got {str(path)!r}, which could not be loaded ({type(exc).__name__}: {exc}) "
            "instead."
        ) from None
    return model


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
        "dask.dataframe.read_parquet when Dask is installed: --model-class linear, no bootstrap)",
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
        help="the level of a binary target coded 1 (needed unless the target is 0/1 or True/False)",
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
    a.add_argument("--features", help="comma-separated model inputs (default: the union of the groups)")
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
        help="your fitted model (a joblib or pickle file, e.g. joblib.dump(model, 'model.joblib')): its MR "
        "per group on the held-out rows is set beside the class's MCR. WARNING: loading a pickle runs "
        "code from the file; only load files you trust",
    )
    a.add_argument(
        "--ambiguity-threshold",
        type=float,
        default=0.5,
        help="classifier classes: probability threshold of the ambiguity (default 0.5)",
    )
    a.add_argument(
        "--ambiguity-rows",
        type=int,
        default=500,
        help="classifier classes: held-out rows (seeded sample) for the ambiguity; 0 for all (default 500)",
    )
    a.add_argument(
        "--bootstrap-mcr",
        action="store_true",
        help="classifier classes: bootstrap MCR too (each resample reruns every MCR search; its cost "
        "is reported); without it --bootstrap gives intervals for the MR of the reference and of "
        "--estimator",
    )
    a.add_argument(
        "--sensitive",
        metavar="COLUMN",
        default=None,
        help="a column of group labels (2-20 groups; need not be a feature): the report adds fairness over "
        "the Rashomon set (disparity ranges, the least disparate good model, the certified order of "
        "the groups)",
    )
    a.add_argument(
        "--benchmark-column",
        metavar="COLUMN",
        default=None,
        help="with --sensitive: a deployed score column (e.g. decile_score; probabilities for the "
        "logistic class) placed in the set's disparity ranges",
    )
    a.add_argument(
        "--report-name",
        default="report.html",
        help="file name of the HTML report in --out (default report.html; another name prefixes the "
        "figure files with its stem)",
    )
    a.add_argument(
        "--epsilon",
        type=float,
        default=0.1,
        help="Rashomon margin: eps_abs = held-out reference loss + EPSILON x CV loss (or the absolute "
        "threshold with --epsilon-kind absolute)",
    )
    a.add_argument("--epsilon-kind", choices=["cv", "absolute"], default="cv")
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
        "seeded split; not with --train-size)",
    )
    a.add_argument("--cv", type=int, default=10, help="folds for the reference's hyper-parameters")
    a.add_argument(
        "--drop-missing",
        action="store_true",
        help="drop rows with missing values (default: missing values are an error)",
    )
    a.add_argument("--bootstrap", type=int, default=0)
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--n-jobs", type=int, default=None)
    a.add_argument("--out", type=Path, default=Path("rashomon-audit"), help="folder for report.html and figures")
    a.add_argument("--json", type=Path, help="write results as JSON")
    a.add_argument("--no-plots", action="store_true", help="no figures or HTML report")
    a.add_argument("--quiet", action="store_true", help="no progress bars or log lines on stderr")
    a.add_argument("--provenance", default="", help="a sentence on where the data came from")
    return ap


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread (a KeyboardInterrupt, so every clean-up path of Ctrl-C runs)."""


def _raise_terminated(signum, frame):  # noqa: ARG001 - signal handler signature
    raise Terminated()


def _worker_ignores_sigint() -> None:
    """loky worker initializer: Ctrl-C in a terminal signals the whole process group, and the parent alone
    handles it (it ends the workers); a worker would otherwise print its own KeyboardInterrupt traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _end_workers() -> None:
    """End joblib's loky workers now (and with them what keeps loky's resource tracker alive).

    joblib keeps one reusable loky executor per process; its workers would otherwise idle for
    minutes after an interrupted run. Does not start an executor when none is running.
    """
    mod = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(mod, "_executor", None) if mod is not None else None
    if executor is not None:
        try:
            executor.shutdown(wait=True, kill_workers=True)
        except Exception:  # noqa: BLE001 - best effort while stopping
            pass


def main(argv: list[str] | None = None) -> int:
    """``rashomon audit``: returns the exit status (0; 1 report not written; 2 bad input; 130 SIGINT; 143 SIGTERM).

    SIGINT (Ctrl-C) and SIGTERM stop the run cleanly: joblib's workers are ended, no file is left
    half-written (every file is written under a temporary name and renamed into place; the
    report.html last), and one line on stderr says so, without a traceback.
    """
    import signal
    import threading
    import warnings

    from joblib import parallel_config

    # loky's resource tracker (a child process) cleans up what an interrupted worker leaves and warns about it
    # on the shared stderr after the one-line message below; its note says nothing more, so it is silenced in the
    # children this command starts (the user's own PYTHONWARNINGS is kept)
    quiet = "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker"
    os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), quiet]))
    in_main = threading.current_thread() is threading.main_thread()
    prev_int = signal.getsignal(signal.SIGINT)
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main else None
    try:
        with warnings.catch_warnings(), parallel_config(backend="loky", initializer=_worker_ignores_sigint):
            # joblib's note on the tasks an interrupted Parallel cancelled: the one-line message below says it
            warnings.filterwarnings(
                "ignore",
                message=r".*tasks which were still being processed by the workers "
                r"have been cancelled",
                category=UserWarning,
            )
            return _main(argv)
    except KeyboardInterrupt as exc:
        if in_main:  # a second Ctrl-C or SIGTERM must not interrupt the clean-up
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _end_workers()
        what, code = ("terminated (SIGTERM)", 143) if isinstance(exc, Terminated) else ("interrupted (SIGINT)", 130)
        print(
            f"rashomon audit: {what}; stopped before the end (workers ended, no file left half-written)",
            file=sys.stderr,
            flush=True,
        )
        return code
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
            signal.signal(signal.SIGINT, prev_int if prev_int is not None else signal.default_int_handler)


def _main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ._audit import audit
    from ._checks import check_group_names, check_writable_dir

    try:
        names = [name for name, _ in args.group]
        check_group_names(names, "rashomon audit", "--group")
        groups = dict(args.group)
        features = [c.strip() for c in args.features.split(",") if c.strip()] if args.features else None
        train_size = None if args.train_size is None else _train_size(args.train_size)
        if not args.no_plots:
            check_writable_dir(args.out, "rashomon audit", "--out")
        if args.json is not None:
            if args.json.is_dir():
                raise RashomonInputError(
                    f"The '--json' option of rashomon audit must be a file path. Got the folder {str(args.json)!r} instead."
                )
            check_writable_dir(args.json.parent if str(args.json.parent) else Path("."), "rashomon audit", "--json")
        if not (
            isinstance(args.report_name, str)
            and args.report_name.endswith(".html")
            and Path(args.report_name).name == args.report_name
            and len(args.report_name) > 5
        ):
            raise RashomonInputError(
                f"The '--report-name' option of rashomon audit must be a file name ending in .html "
                f"(no folder; use --out). Got {args.report_name!r} instead."
            )
        estimator = None if args.estimator is None else _load_estimator(args.estimator)
        res = audit(
            args.data,
            args.target,
            groups,
            features=features,
            model_class=args.model_class,
            epsilon=args.epsilon,
            epsilon_kind=args.epsilon_kind,
            train_size=train_size,
            cv=args.cv,
            bootstrap=args.bootstrap,
            random_state=args.seed,
            n_jobs=args.n_jobs,
            progress=not args.quiet,
            provenance=args.provenance,
            drop_missing=args.drop_missing,
            sep=args.sep,
            split=args.split,
            positive_label=args.positive_label,
            estimator=estimator,
            ambiguity_threshold=args.ambiguity_threshold,
            ambiguity_rows=None if args.ambiguity_rows == 0 else args.ambiguity_rows,
            bootstrap_mcr=args.bootstrap_mcr,
            sensitive=args.sensitive,
            benchmark_column=args.benchmark_column,
        )
    except RashomonInputError as exc:
        print(f"rashomon audit: error: {_as_option(str(exc))}", file=sys.stderr)
        return 2
    print(res.to_frame().round(4).to_string(), end="\n" + res.null_model_line())  # + the null model's losses
    if res.fairness and "mean_prediction" in res.fairness.get("disparity", {}):
        row = res.fairness["disparity"]["mean_prediction"]["rows"][-1]
        print(
            f"fairness ({res.fairness['sensitive']}): mean-prediction {row['disparity']} over the set in "
            f"[{row['lower']:.4g}, {row['upper']:.4g}] (reference {row['reference']:.4g}); see the report"
        )
    for note in res.meta.get("notes") or []:
        print(f"note: {note}", file=sys.stderr)
    if res.meta.get("n_rows_dropped"):
        print(
            f"dropped {res.meta['n_rows_dropped']} of {res.meta['n_rows_input']} rows with missing values",
            file=sys.stderr,
        )
    try:
        report = res.save(
            out_dir=None if args.no_plots else args.out, json_path=args.json, report_name=args.report_name
        )
    except Exception as exc:  # the results are computed: keep them even if the report cannot be written
        print(
            f"rashomon audit: error: writing the report failed ({type(exc).__name__}: {exc}); the results are "
            "printed above",
            file=sys.stderr,
        )
        return 1
    if report is not None:
        print(f"report: {report}")
    return 0


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
}


def _as_option(message: str) -> str:
    import re

    return re.sub(
        r"The '(\w+)' parameter of audit",
        lambda m: f"The '{_OPTIONS.get(m.group(1), m.group(1))}' option of rashomon audit",
        message,
    )


if __name__ == "__main__":
    sys.exit(main())
