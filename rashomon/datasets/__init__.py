"""Bundled public datasets, loaded offline as pandas DataFrames.

Every file under ``rashomon/datasets/data`` was built by
``rashomon/datasets/_make_data.py`` from the raw public copies described in
``PROVENANCE.md`` next to this module (source repository, commit, citation,
checksum of the raw file). Nothing is downloaded.
"""
from __future__ import annotations

from importlib import resources
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "load_compas",
    "load_wine_quality",
    "load_concrete",
    "load_pima_diabetes",
    "load_bike_sharing",
]


def _read(name: str, **kw) -> pd.DataFrame:
    with resources.files(__name__).joinpath("data", name).open("rb") as fh:
        return pd.read_csv(fh, compression="gzip", **kw)


def load_compas(
    kind: Literal["two_year", "violent"] = "two_year",
    *,
    propublica_filters: bool = True,
    races: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    """ProPublica's COMPAS data for Broward County, Florida (2013-2014).

    Parameters
    ----------
    kind : {"two_year", "violent"}, default="two_year"
        ``"two_year"`` is ``compas-scores-two-years.csv`` (7,214 rows);
        ``"violent"`` is ``compas-scores-two-years-violent.csv`` (4,743 rows),
        which adds the violent-recidivism score ``v_decile_score``.
    propublica_filters : bool, default=True
        Apply ProPublica's filters: ``|days_b_screening_arrest| <= 30`` (rows
        with it missing drop out), ``is_recid != -1``, ``c_charge_degree != "O"``,
        ``score_text != "N/A"`` and, for ``kind="violent"``, also
        ``v_score_text != "N/A"``. They leave 6,172 rows (two-year) and 4,015
        rows (violent; 4,020 with the ``v_score_text`` filter alone).
    races : tuple of str, default=None
        Keep only these values of ``race`` (e.g. ``("African-American",
        "Caucasian")`` as in Fisher, Rudin & Dominici 2019, §10).

    Returns
    -------
    DataFrame
        Columns ``id, sex, age, age_cat, race, juv_fel_count, juv_misd_count,
        juv_other_count, priors_count, days_b_screening_arrest,
        c_charge_degree, is_recid, decile_score, score_text, v_decile_score,
        v_score_text, two_year_recid`` (and ``is_violent_recid`` for
        ``"violent"``).

    Notes
    -----
    Source: ``propublica/compas-analysis`` (files last changed in commit
    c062fbb5, 2016-05-22; copied at bafff5da). J. Angwin, J. Larson, S. Mattu
    and L. Kirchner, "Machine Bias", ProPublica, 23 May 2016. No licence is
    stated by the source repository. "N/A" in ``score_text`` is kept as the
    string ProPublica wrote, not as a missing value.
    """
    files = {"two_year": "compas_two_year.csv.gz", "violent": "compas_violent.csv.gz"}
    if kind not in files:
        raise ValueError(f"The 'kind' parameter of load_compas must be one of {sorted(files)}. Got {kind!r} instead.")
    df = _read(files[kind], keep_default_na=False, na_values={"days_b_screening_arrest": [""]})
    if propublica_filters:
        keep = (
            (df["days_b_screening_arrest"].abs() <= 30)
            & (df["is_recid"] != -1)
            & (df["c_charge_degree"] != "O")
            & (df["score_text"] != "N/A")
        )
        if kind == "violent":
            keep &= df["v_score_text"] != "N/A"
        df = df[keep.fillna(False).astype(bool)]
    if races is not None:
        unknown = set(races) - set(df["race"].unique())
        if unknown:
            raise ValueError(f"The 'races' parameter of load_compas has unknown values {sorted(unknown)}.")
        df = df[df["race"].isin(races)]
    return df.reset_index(drop=True)


def load_wine_quality(color: Literal["red", "white"] = "red") -> pd.DataFrame:
    """Wine Quality (Vinho Verde) data: 11 physico-chemical inputs and ``quality``.

    Parameters
    ----------
    color : {"red", "white"}, default="red"
        Red has 1,599 rows, white 4,898.

    Notes
    -----
    P. Cortez, A. Cerdeira, F. Almeida, T. Matos and J. Reis, "Modeling wine
    preferences by data mining from physicochemical properties", Decision
    Support Systems 47(4):547-553, 2009. UCI Machine Learning Repository. Copy
    from ``nurblieh/machine-learning`` at ef80d508 (values identical to
    ``jbrownlee/Datasets``).
    """
    if color not in ("red", "white"):
        raise ValueError(f"The 'color' parameter of load_wine_quality must be 'red' or 'white'. Got {color!r} instead.")
    return _read(f"winequality_{color}.csv.gz")


def load_concrete() -> pd.DataFrame:
    """Concrete compressive strength (1,030 rows), full precision.

    Columns ``cement, slag, ash, water, superplastic, coarseagg, fineagg, age``
    (kg/m³, age in days) and the target ``strength`` (MPa).

    Notes
    -----
    I-C. Yeh, "Modeling of strength of high-performance concrete using
    artificial neural networks", Cement and Concrete Research
    28(12):1797-1808, 1998. UCI repository; converted from the UCI
    ``Concrete_Data.xls`` (``Daniel-RPS/Concrete-Repository-UCI`` at 4a13f04c)
    keeping the stored float64 values.
    """
    return _read("concrete.csv.gz")


def load_pima_diabetes(*, zeros_as_missing: bool = False) -> pd.DataFrame:
    """Pima Indians diabetes data (768 rows, ``Outcome`` 0/1).

    Parameters
    ----------
    zeros_as_missing : bool, default=False
        Zeros in ``Glucose, BloodPressure, SkinThickness, Insulin, BMI`` stand
        for missing values; set True to turn them into NaN.

    Notes
    -----
    J. W. Smith et al., "Using the ADAP learning algorithm to forecast the
    onset of diabetes mellitus", Proc. Symp. Computer Applications and Medical
    Care, 261-265, 1988. NIDDK; UCI copy from ``jbrownlee/Datasets`` at d20fcb64.
    """
    df = _read("pima.csv.gz")
    if zeros_as_missing:
        cols = ["Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI"]
        df[cols] = df[cols].replace(0, np.nan)
    return df


def load_bike_sharing(freq: Literal["day", "hour"] = "day") -> pd.DataFrame:
    """Capital Bikeshare rentals, Washington D.C., 2011-2012.

    Parameters
    ----------
    freq : {"day", "hour"}, default="day"
        731 daily or 17,379 hourly rows. ``casual + registered = cnt``; drop
        them when ``cnt`` is the target.

    Notes
    -----
    H. Fanaee-T and J. Gama, "Event labeling combining ensemble detectors and
    background knowledge", Progress in Artificial Intelligence (2013) 1-15.
    UCI copy from ``udacity/deep-learning-v2-pytorch`` at c9404fc8.
    """
    if freq not in ("day", "hour"):
        raise ValueError(f"The 'freq' parameter of load_bike_sharing must be 'day' or 'hour'. Got {freq!r} instead.")
    return _read(f"bike_sharing_{freq}.csv.gz")
