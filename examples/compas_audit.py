"""
The COMPAS analysis of Fisher, Rudin & Dominici (2019, §10), end to end.
========================================================================

How much could any well-performing model of the COMPAS violent-recidivism score
rely on race and sex ("inadmissible") versus criminal history, charge degree and
age ("admissible")? Data: ProPublica's compas-scores-two-years-violent.csv,
bundled in rashomon.datasets (filters ``|days_b_screening_arrest| <= 30``,
is_recid != -1, c_charge_degree != "O", score_text != "N/A"), African-American
and Caucasian defendants; outcome v_decile_score; squared loss.

Run it::

    python examples/compas_audit.py --bootstrap 100 --out compas-output --json compas.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

import rashomon
from rashomon.datasets import load_compas

PROVENANCE = (
    "ProPublica, compas-scores-two-years-violent.csv (propublica/compas-analysis, commit c062fbb5, 2016), "
    "bundled in rashomon.datasets; J. Angwin, J. Larson, S. Mattu and L. Kirchner, 'Machine Bias', ProPublica, 2016. "
    "ProPublica's filters applied; African-American and Caucasian defendants only."
)


def compas_frame() -> pd.DataFrame:
    raw = load_compas("violent", races=("African-American", "Caucasian"))
    return pd.DataFrame(
        {
            "race": (raw["race"] == "African-American").astype(float),
            "sex": (raw["sex"] == "Male").astype(float),
            "priors_count": raw["priors_count"].astype(float),
            "felony": (raw["c_charge_degree"] == "F").astype(float),
            "age": raw["age"].astype(float),
            "v_decile_score": raw["v_decile_score"].astype(float),
        }
    )


GROUPS = {"inadmissible": ["race", "sex"], "admissible": ["priors_count", "felony", "age"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n")[0])
    ap.add_argument("--bootstrap", type=int, default=0, help="held-out bootstrap resamples (0 = none)")
    ap.add_argument("--json", type=Path, help="write results as JSON")
    ap.add_argument("--no-plots", action="store_true", help="skip figures and the HTML report")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("compas-output"), help="folder for figures and report")
    ap.add_argument("--n-jobs", type=int, default=None)
    ap.add_argument("--subsample", type=int, default=None, help="use only this many rows (fast checks)")
    ap.add_argument("--train-size", type=int, default=500)
    args = ap.parse_args(argv)
    df = compas_frame()
    if args.subsample:
        df = df.sample(n=args.subsample, random_state=args.seed).reset_index(drop=True)
    t0 = time.perf_counter()
    res = rashomon.audit(
        df,
        "v_decile_score",
        GROUPS,
        epsilon=0.1,
        train_size=args.train_size,
        bootstrap=args.bootstrap,
        random_state=args.seed,
        n_jobs=args.n_jobs,
        progress=sys.stderr.isatty(),
        provenance=PROVENANCE,
    )
    print(
        f"COMPAS audit: {len(df)} rows ({res.n_train} train / {res.n_test} held out), "
        f"reference {res.reference['kind']} gamma={res.reference.get('gamma', float('nan')):.3g} "
        f"alpha={res.reference['alpha']:.3g}; e_ref={res.e_ref:.4f}, CV loss={res.cv_loss:.4f}, eps_abs={res.epsilon_abs:.4f}"
    )
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(res.to_frame().round(4).to_string())
    print(f"time: {time.perf_counter() - t0:.1f} s " + ", ".join(f"{k}={v:.1f}" for k, v in res.timings.items()))
    report = res.save(out_dir=None if args.no_plots else args.out, json_path=args.json)
    if report is not None:
        print(f"report: {report}")
    return 0


if __name__ == "__main__":
    status = main()
    if status:  # a script's exit status; none when it succeeds (sphinx-gallery runs it in-process)
        raise SystemExit(status)
