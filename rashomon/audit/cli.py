"""Command line: ``rashomon audit``.

Example::

    rashomon audit --data compas.csv --target v_decile_score \\
        --group inadmissible=race,sex --group admissible=priors_count,felony,age \\
        --epsilon 0.1 --bootstrap 200 --seed 0 --out report/ --json results.json
"""
from __future__ import annotations

import argparse
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


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rashomon", description="Model class reliance audits (Fisher, Rudin & Dominici 2019).")
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("audit", help="audit how much any good model of a class could rely on feature groups")
    a.add_argument("--data", required=True, help="CSV file")
    a.add_argument("--target", required=True, help="numeric outcome column")
    a.add_argument("--group", action="append", type=_group, required=True, metavar="NAME=COL1,COL2",
                   help="a feature group to audit (repeat for several)")
    a.add_argument("--features", help="comma-separated model inputs (default: the union of the groups)")
    a.add_argument("--model-class", choices=["kernel", "linear"], default="kernel")
    a.add_argument("--epsilon", type=float, default=0.1,
                   help="Rashomon margin: eps_abs = held-out reference loss + EPSILON x CV loss (or the absolute "
                        "threshold with --epsilon-kind absolute)")
    a.add_argument("--epsilon-kind", choices=["cv", "absolute"], default="cv")
    a.add_argument("--train-size", type=int, default=500)
    a.add_argument("--bootstrap", type=int, default=0)
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--n-jobs", type=int, default=None)
    a.add_argument("--out", type=Path, default=Path("rashomon-audit"), help="folder for report.html and figures")
    a.add_argument("--json", type=Path, help="write results as JSON")
    a.add_argument("--no-plots", action="store_true", help="no figures or HTML report")
    a.add_argument("--provenance", default="", help="a sentence on where the data came from")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ._audit import audit

    groups = dict(args.group)
    features = [c.strip() for c in args.features.split(",")] if args.features else None
    try:
        res = audit(args.data, args.target, groups, features=features, model_class=args.model_class,
                    epsilon=args.epsilon, epsilon_kind=args.epsilon_kind, train_size=args.train_size,
                    bootstrap=args.bootstrap, random_state=args.seed, n_jobs=args.n_jobs,
                    progress=sys.stderr.isatty(), provenance=args.provenance)
    except RashomonInputError as exc:
        print(f"rashomon audit: error: {exc}", file=sys.stderr)
        return 2
    print(res.to_frame().round(4).to_string())
    report = res.save(out_dir=None if args.no_plots else args.out, json_path=args.json)
    if report is not None:
        print(f"report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
