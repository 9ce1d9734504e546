"""Rebuild the bundled data files from the raw copies in ``../shared/data``.

Developers' tool, not used at run time::

    python -m rashomon.datasets._make_data ../shared/data

Each bundled file keeps the raw rows (no filtering) and the columns the loaders
expose; filters such as ProPublica's are applied by the loaders so they stay
visible and optional. Files are written gzip-compressed with a fixed mtime so
that rebuilding gives byte-identical files.
"""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import pandas as pd

from ..utils import atomic_write

OUT = Path(__file__).parent / "data"

COMPAS_COLUMNS = [
    "id",
    "sex",
    "age",
    "age_cat",
    "race",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
    "priors_count",
    "days_b_screening_arrest",
    "c_charge_degree",
    "is_recid",
    "decile_score",
    "score_text",
    "v_decile_score",
    "v_score_text",
    "two_year_recid",
]


def _write(df: pd.DataFrame, name: str) -> None:
    buf = io.StringIO()
    df.to_csv(buf, index=False, float_format="%.17g")
    with atomic_write(OUT / name, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
        gz.write(buf.getvalue().encode())


def main(src: str) -> None:
    src_dir = Path(src)
    OUT.mkdir(exist_ok=True)
    for raw, name in [
        ("compas-scores-two-years.csv", "compas_two_year.csv.gz"),
        ("compas-scores-two-years-violent.csv", "compas_violent.csv.gz"),
    ]:
        # "N/A" is a real category in ProPublica's files (R reads it as a string);
        # keep it as the string so the documented filter can see it.
        d = pd.read_csv(src_dir / raw, keep_default_na=False, na_values={"days_b_screening_arrest": [""]})
        cols = [c for c in COMPAS_COLUMNS if c in d.columns]
        if "is_violent_recid" in d.columns:
            cols.append("is_violent_recid")
        _write(d[cols], name)
    # Fisher, Rudin & Dominici (2019, §10): the authors' 500 training rows, as 0-based
    # positions in the filtered African-American/Caucasian violent table and their `id`.
    fisher = pd.read_csv(src_dir / "compas-fisher2019-training-rows.csv")
    if list(fisher.columns) != ["row", "id"] or len(fisher) != 500:
        raise ValueError("compas-fisher2019-training-rows.csv: expected 500 rows with columns row, id")
    _write(fisher.sort_values("row"), "compas_fisher2019_train_ids.csv.gz")
    _write(pd.read_csv(src_dir / "winequality-red.csv", sep=";"), "winequality_red.csv.gz")
    _write(pd.read_csv(src_dir / "winequality-white.csv", sep=";"), "winequality_white.csv.gz")
    _write(pd.read_csv(src_dir / "concrete-uci-full-precision.csv"), "concrete.csv.gz")
    pima_names = [
        "Pregnancies",
        "Glucose",
        "BloodPressure",
        "SkinThickness",
        "Insulin",
        "BMI",
        "DiabetesPedigreeFunction",
        "Age",
        "Outcome",
    ]
    _write(pd.read_csv(src_dir / "pima-indians-diabetes.csv", header=None, names=pima_names), "pima.csv.gz")
    _write(pd.read_csv(src_dir / "bike-sharing-day.csv"), "bike_sharing_day.csv.gz")
    _write(pd.read_csv(src_dir / "bike-sharing-hour.csv"), "bike_sharing_hour.csv.gz")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
