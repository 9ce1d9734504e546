"""
ProPublica's question on COMPAS: how much could any good classifier of two-year recidivism rely on race and sex?
================================================================================================================

Data: ProPublica's compas-scores-two-years.csv, bundled in rashomon.datasets, with ProPublica's filters
(``|days_b_screening_arrest| <= 30``, is_recid != -1, c_charge_degree != "O", score_text != "N/A"): 6,172
defendants. Outcome ``two_year_recid`` (0/1); logistic model class (log loss); groups "race_sex" (race, sex)
against "history_age" (priors_count, c_charge_degree, age). A seeded split column chooses the training
rows, and a HistGradientBoostingClassifier fitted on them stands for "the model the user already has": its
MR per group is measured on the same held-out rows and set beside the class's MCR.

Run it::

    python examples/compas_recidivism_audit.py --bootstrap 100 --out demo-output --json demo-output/compas_recidivism.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import rashomon
from rashomon.datasets import load_compas

PROVENANCE = (
    "ProPublica, compas-scores-two-years.csv (propublica/compas-analysis, commit c062fbb5, 2016), bundled in "
    "rashomon.datasets; J. Angwin, J. Larson, S. Mattu and L. Kirchner, 'Machine Bias', ProPublica, 2016. "
    "ProPublica's filters applied (6,172 defendants)."
)
FEATURES = ["race", "sex", "priors_count", "c_charge_degree", "age"]
GROUPS = {"race_sex": ["race", "sex"], "history_age": ["priors_count", "c_charge_degree", "age"]}


def recidivism_frame(train_size: int = 500, seed: int = 0) -> pd.DataFrame:
    """The filtered table with a ``train`` column (``train_size`` seeded rows fit the reference)."""
    raw = load_compas("two_year")
    df = raw[FEATURES + ["two_year_recid"]].reset_index(drop=True)
    train = np.zeros(len(df), dtype=bool)
    train[np.random.RandomState(seed).choice(len(df), train_size, replace=False)] = True
    df["train"] = train
    return df


def users_model(df: pd.DataFrame):
    """A model fitted by the user on the training rows: gradient boosting on the raw columns (categories
    ordinal-encoded inside a pipeline)."""
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    cats = ["race", "sex", "c_charge_degree"]
    enc = make_column_transformer(
        (OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1), cats), remainder="passthrough"
    )
    model = make_pipeline(
        enc,
        HistGradientBoostingClassifier(
            max_iter=100, learning_rate=0.05, random_state=0, categorical_features=[0, 1, 2]
        ),
    )
    tr = df[df["train"]]
    return model.fit(tr[FEATURES], tr["two_year_recid"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n")[0])
    ap.add_argument("--bootstrap", type=int, default=0, help="held-out resamples for the MR intervals (0 = none)")
    ap.add_argument(
        "--bootstrap-mcr", action="store_true", help="bootstrap MCR too (each resample reruns the searches)"
    )
    ap.add_argument("--json", type=Path, help="write results as JSON")
    ap.add_argument("--out", type=Path, default=Path("compas-output"), help="folder for figures and report")
    ap.add_argument("--report-name", default="compas_recidivism.html")
    ap.add_argument("--no-plots", action="store_true", help="skip figures and the HTML report")
    ap.add_argument("--no-estimator", action="store_true", help="audit the class only (no user's model)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train-size", type=int, default=500)
    ap.add_argument("--ambiguity-rows", type=int, default=500, help="held-out rows for the ambiguity (0 = all)")
    args = ap.parse_args(argv)
    df = recidivism_frame(args.train_size, args.seed)
    model = None if args.no_estimator else users_model(df)
    t0 = time.perf_counter()
    res = rashomon.audit(
        df,
        "two_year_recid",
        GROUPS,
        features=FEATURES,
        model_class="logistic",
        epsilon=0.1,
        split="train",
        bootstrap=args.bootstrap,
        bootstrap_mcr=args.bootstrap_mcr,
        random_state=args.seed,
        estimator=model,
        ambiguity_threshold=0.5,
        ambiguity_rows=args.ambiguity_rows or None,
        progress=sys.stderr.isatty(),
        provenance=PROVENANCE,
    )
    m = res.meta["classifier"]["reference_metrics"]
    amb = res.meta["classifier"]["ambiguity"]
    print(
        f"COMPAS two-year recidivism: {len(df)} rows ({res.n_train} train / {res.n_test} held out); logistic class, "
        f"held-out log loss {m['log_loss']:.4f}, accuracy {m['accuracy']:.3f}, AUC {m['auc']:.3f}; "
        f"eps_abs={res.epsilon_abs:.4f} (CV loss {res.cv_loss:.4f}); ambiguity at p=0.5: {amb['ambiguity']:.3f} "
        f"on {amb['n_rows']} rows"
    )
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(res.to_frame().drop(columns="features").round(4).to_string())
    print(f"time: {time.perf_counter() - t0:.1f} s " + ", ".join(f"{k}={v:.1f}" for k, v in res.timings.items()))
    report = res.save(out_dir=None if args.no_plots else args.out, json_path=args.json, report_name=args.report_name)
    if report is not None:
        print(f"report: {report}")
    return 0


if __name__ == "__main__":
    status = main()
    if status:  # a script's exit status; none when it succeeds (sphinx-gallery runs it in-process)
        raise SystemExit(status)
