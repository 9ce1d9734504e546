"""Command line: ``rashomon audit``.

Example::

    rashomon audit --data compas.csv --target v_decile_score \\
        --group inadmissible=race,sex --group admissible=priors_count,felony,age \\
        --epsilon 0.1 --bootstrap 200 --seed 0 --out report/ --json results.json

    rashomon audit --data table/ --model-class logistic ...  # a folder of Parquet files, out of core (Dask)

Every input is checked before any computing, and a model file (``--estimator``)
is loaded only after all of them (loading a pickle runs code from the file;
a ``.skops`` file, read by skops.io, does not). The ``--out`` folder is checked
writable but created only when the report is written; no output may replace an
input or another output. A bad input prints ``rashomon audit: error: ...`` on
stderr and exits with status 2. A report that cannot be written (a full disk) exits with
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
from ._cli_parser import _train_size, build_parser
from ._cli_text import _OPTIONS, _as_option, _fairness_line, _show_warning  # noqa: F401 - re-exported names

__all__ = ["build_parser", "main"]


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


def _cli_warning(message, category, filename, lineno, line=None) -> str:  # noqa: ARG001 - formatwarning's
    """A warning as a CLI user reads it: one line, no source file or code line."""
    return f"rashomon audit: warning: {_as_option(' '.join(str(message).split()))}\n"


def _cli_showwarning(quiet: bool):
    """``warnings.showwarning`` for the command line: one line naming options (none with --quiet); a caller that
    records warnings (``catch_warnings(record=True)``, as pytest does) still receives each one."""
    import warnings

    impl = getattr(warnings, "_showwarnmsg_impl", None)
    recording = impl is not None and getattr(impl, "__module__", "warnings") != "warnings"  # a recorder's append

    def show(message, category, filename, lineno, file=None, line=None):
        if not quiet:
            _show_warning(message, category, filename, lineno, file, line)
        if recording and impl is not None:
            impl(warnings.WarningMessage(message, category, filename, lineno, file, line))

    return show


def _main(argv: list[str] | None = None) -> int:
    import warnings

    args = build_parser().parse_args(argv)
    # warnings are printed for a CLI user (no source lines), or not at all with --quiet; they are still
    # issued (a caller recording them sees them)
    previous = warnings.formatwarning
    env = os.environ.get("PYTHONWARNINGS")
    warnings.formatwarning = (lambda *a, **k: "") if args.quiet else _cli_warning
    # shown through showwarning too (a caller's own capture, e.g. pytest's, replaces formatwarning's printer);
    # main()'s catch_warnings restores it
    warnings.showwarning = _cli_showwarning(args.quiet)
    if args.quiet:  # the workers this run starts are quiet too
        os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [env, "ignore"]))
    try:
        return _run(args)
    finally:
        warnings.formatwarning = previous
        if env is None:
            os.environ.pop("PYTHONWARNINGS", None)
        else:
            os.environ["PYTHONWARNINGS"] = env


def _run(args: argparse.Namespace) -> int:
    from ._audit import audit
    from ._checks import check_group_names
    from ._outputs import check_outputs, check_writable_target, missing_dirs, remove_created

    try:
        names = [name for name, _ in args.group]
        check_group_names(names, "rashomon audit", "--group")
        groups = dict(args.group)
        features = [c.strip() for c in args.features.split(",") if c.strip()] if args.features else None
        train_size = None if args.train_size is None else _train_size(args.train_size)
        if not args.no_plots:
            check_writable_target(args.out, "--out")
        if args.json is not None:
            if args.json.is_dir():
                raise RashomonInputError(
                    f"The '--json' option of rashomon audit must be a file path. Got the folder {str(args.json)!r} instead."
                )
            check_writable_target(args.json.parent if str(args.json.parent) else Path("."), "--json")
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
        check_outputs(
            data=args.data,
            estimator=args.estimator,
            json_path=args.json,
            out=None if args.no_plots else args.out,
            report_name=args.report_name,
        )
        if args.estimator is not None and not args.estimator.is_file():
            raise RashomonInputError(
                f"The '--estimator' option of rashomon audit must be an existing .skops, joblib or pickle "
                f"file. Got {str(args.estimator)!r} instead."
            )
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
            cv_rule=args.cv_rule,
            bootstrap=args.bootstrap,
            random_state=args.seed,
            n_jobs=args.n_jobs,
            progress=not args.quiet,
            provenance=args.provenance,
            drop_missing=args.drop_missing,
            sep=args.sep,
            split=args.split,
            positive_label=args.positive_label,
            estimator=args.estimator,  # a path: audit() loads it after checking every other input
            ambiguity_threshold=args.ambiguity_threshold,
            ambiguity_rows=None if args.ambiguity_rows == 0 else args.ambiguity_rows,
            bootstrap_mcr=args.bootstrap_mcr,
            sensitive=args.sensitive,
            benchmark_column=args.benchmark_column,
            trusted_types=args.trust_type,
        )
    except RashomonInputError as exc:
        print(f"rashomon audit: error: {_as_option(str(exc))}", file=sys.stderr)
        return 2
    print(res.to_frame().round(4).to_string(), end="\n" + res.null_model_line())  # + the null model's losses
    if res.fairness and "mean_prediction" in res.fairness.get("disparity", {}):
        print(_fairness_line(res.fairness))
    for note in res.meta.get("notes") or []:
        print(f"note: {note}", file=sys.stderr)
    for item in res.meta.get("skipped") or []:  # what the table's empty (NaN) columns mean
        print(f"not run: {item}", file=sys.stderr)
    for col, levels in ({} if args.quiet else res.meta.get("encoding") or {}).items():
        shown = ", ".join(map(repr, levels[:8])) + (", ..." if len(levels) > 8 else "")
        print(f"text column {col!r}: one-hot encoded, {len(levels)} levels ({shown})", file=sys.stderr)
    if res.meta.get("n_rows_dropped"):
        print(
            f"dropped {res.meta['n_rows_dropped']} of {res.meta['n_rows_input']} rows with missing values",
            file=sys.stderr,
        )
    # folders the writes create: removed again (when left empty) if the writing fails or is interrupted
    created = [[] if args.no_plots else missing_dirs(args.out)]
    created += [[] if args.json is None else missing_dirs(args.json.parent if str(args.json.parent) else ".")]
    try:
        report = res.save(
            out_dir=None if args.no_plots else args.out, json_path=args.json, report_name=args.report_name
        )
    except Exception as exc:  # the results are computed: keep them even if the report cannot be written
        for folders in created:
            remove_created(folders)
        print(
            f"rashomon audit: error: writing the report failed ({type(exc).__name__}: {exc}); the results are "
            "printed above",
            file=sys.stderr,
        )
        return 1
    except BaseException:
        for folders in created:
            remove_created(folders)
        raise
    if report is not None:
        print(f"report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
