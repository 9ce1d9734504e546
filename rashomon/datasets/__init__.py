"""Bundled public datasets, loaded offline as pandas DataFrames.

Every file under ``rashomon/datasets/data`` was built by
``rashomon/datasets/_make_data.py`` from the raw public copies described in
``PROVENANCE.md`` next to this module (source repository, commit, citation,
checksum of the raw file). Nothing is downloaded.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from sklearn.utils import Bunch

__all__ = [
    "load_compas",
    "load_compas_fisher2019",
    "load_wine_quality",
    "load_concrete",
    "load_pima_diabetes",
    "load_bike_sharing",
]


def _read(name: str, **kw) -> pd.DataFrame:
    with resources.files(__name__).joinpath("data").joinpath(name).open("rb") as fh:
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


# Fisher, Rudin & Dominici (2019, §10) settings, from the authors' supplement
# (aaronjfisher/mcr-supplement, propublica-analysis/propublica_kernel.rmd and its outputs).
_FISHER2019_N_TRAIN = 500
_FISHER2019_N_TEST = 2873
_FISHER2019_ALPHA = 10.0 ** (-4 + 6 * 10 / 39)  # 11th value of 10^seq(-4, 2, length 40)


def load_compas_fisher2019() -> Bunch:
    """COMPAS with the exact training split of Fisher, Rudin & Dominici (2019, §10).

    The violent file (``load_compas("violent", races=("African-American",
    "Caucasian"))``, 3,373 rows in file order) is split into the authors' 500
    training rows and 2,873 held-out rows. The training rows are matched by
    ``id`` against the bundled list ``compas_fisher2019_train_ids.csv.gz``
    (taken from the authors' supplement), and their positions are checked too.

    Returns
    -------
    Bunch
        With attributes

        X_train, X_test : DataFrame of shape (500, 5) and (2873, 5)
            Columns ``race`` (1 = African-American), ``sex`` (1 = male),
            ``priors`` (``priors_count``, standardised), ``felony``
            (1 = ``c_charge_degree`` "F") and ``age`` (standardised). ``priors``
            and ``age`` are centred and scaled by the mean and the *sample*
            standard deviation (ddof=1) of the 500 training rows, as the
            authors did; the other columns are 0/1. All float64. The index is
            the row position in ``frame``.
        y_train, y_test : Series
            The outcome ``v_decile_score`` (COMPAS violent-recidivism decile,
            1-10), float64.
        frame : DataFrame of shape (3373, 18)
            The unstandardised filtered table, as returned by ``load_compas``.
        train_mask : ndarray of bool, shape (3373,)
            True on the 500 training rows of ``frame``.
        train_ids : ndarray of int, shape (500,)
            ``id`` of the training rows, in file order.
        feature_names : list of str
            ``["race", "sex", "priors", "felony", "age"]``.
        settings : dict
            The authors' settings and published numbers:

            - ``sigma`` = 1.857097: Gaussian kernel ``exp(-sigma ||x - x'||^2)``
              (``gamma`` in scikit-learn).
            - ``alpha_paper`` = 10**(-4 + 6*10/39) ≈ 0.0034551 and
              ``n_alpha`` = 500 * alpha_paper ≈ 1.72755: the reference minimises
              ``||y - mu - K w||^2 + n alpha w' K_D w`` with ``mu`` fixed at the
              training mean (``mu`` = 3.59); i.e. ``KernelRidge(kernel="rbf",
              gamma=sigma, alpha=n_alpha)`` fitted on ``y_train - mu``.
            - ``standardisation``: ``{"priors": (mean, sd), "age": (mean, sd)}``.
            - published values: ``e_ref`` = 2.848652 (held-out mean squared
              loss of the reference), ``norm`` = 177.7997 (its squared RKHS
              norm ``w' K_D w``, the class's norm bound), ``cv_loss`` = 3.226485
              (minimal 10-fold CV loss), ``epsilon_abs`` = e_ref + 0.1 cv_loss,
              and ``published`` = MR and MCR for the groups ``inadmissible``
              (race, sex) and ``admissible`` (priors, felony, age).

    Raises
    ------
    ValueError
        If the split does not give 500 training and 2,873 held-out rows, or
        the ids do not sit at the recorded positions.

    Notes
    -----
    The training rows are ``S_ind.rds`` in ``aaronjfisher/mcr-supplement``
    (``set.seed(0); sample(3373, 500)`` under R's pre-3.6 sampling); see
    ``PROVENANCE.md``. With these settings scikit-learn's ``KernelRidge``
    gives a held-out loss of 2.848676 and ``w' K w`` = 177.79922 (published
    2.848652 and 177.7997). The authors' printed MCR− values stopped the
    search at gamma = 0 and used sampled pairs, so they can be loose.

    M. Fisher, C. Rudin and F. Dominici, "All Models are Wrong, but Many are
    Useful: Learning a Variable's Importance by Studying an Entire Class of
    Prediction Models Simultaneously", JMLR 20(177):1-81, 2019.
    """
    from sklearn.utils import Bunch

    frame = load_compas("violent", races=("African-American", "Caucasian"))
    ids = _read("compas_fisher2019_train_ids.csv.gz")
    train_mask = frame["id"].isin(ids["id"]).to_numpy()
    n_train, n_test = int(train_mask.sum()), int((~train_mask).sum())
    if (n_train, n_test) != (_FISHER2019_N_TRAIN, _FISHER2019_N_TEST) or len(ids) != _FISHER2019_N_TRAIN:
        raise ValueError(
            f"load_compas_fisher2019: expected {_FISHER2019_N_TRAIN} training and {_FISHER2019_N_TEST} held-out "
            f"rows, got {n_train} and {n_test} ({len(ids)} ids listed, {len(frame)} filtered rows)."
        )
    pos = ids["row"].to_numpy()
    if pos.max() >= len(frame) or not np.array_equal(frame["id"].to_numpy()[pos], ids["id"].to_numpy()):
        raise ValueError("load_compas_fisher2019: the training ids are not at their recorded row positions.")

    X = pd.DataFrame(
        {
            "race": (frame["race"] == "African-American").astype(float),
            "sex": (frame["sex"] == "Male").astype(float),
            "priors": frame["priors_count"].astype(float),
            "felony": (frame["c_charge_degree"] == "F").astype(float),
            "age": frame["age"].astype(float),
        }
    )
    scale = {}
    for col in ("priors", "age"):
        mean, sd = float(X.loc[train_mask, col].mean()), float(X.loc[train_mask, col].std(ddof=1))
        X[col] = (X[col] - mean) / sd
        scale[col] = (mean, sd)
    y = frame["v_decile_score"].astype(float)

    e_ref, cv_loss = 2.848652, 3.226485
    settings = {
        "sigma": 1.857097,
        "alpha_paper": _FISHER2019_ALPHA,
        "n_alpha": _FISHER2019_N_TRAIN * _FISHER2019_ALPHA,
        "mu": float(y[train_mask].mean()),
        "standardisation": scale,
        "e_ref": e_ref,
        "norm": 177.7997,
        "cv_loss": cv_loss,
        "epsilon_abs": e_ref + 0.1 * cv_loss,
        "published": {
            "inadmissible": {"variables": ("race", "sex"), "mr": 1.0885, "mcr": (0.7951, 1.5644)},
            "admissible": {"variables": ("priors", "felony", "age"), "mr": 2.7806, "mcr": (1.7715, 3.6054)},
        },
    }
    return Bunch(
        X_train=X[train_mask],
        y_train=y[train_mask],
        X_test=X[~train_mask],
        y_test=y[~train_mask],
        frame=frame,
        train_mask=train_mask,
        train_ids=frame.loc[train_mask, "id"].to_numpy(),
        feature_names=list(X.columns),
        settings=settings,
    )


def load_wine_quality(color: Literal["red", "white"] = "red") -> pd.DataFrame:
    """Wine Quality (Vinho Verde) data: 11 physico-chemical inputs and ``quality``.

    Parameters
    ----------
    color : {"red", "white"}, default="red"
        Red has 1,599 rows, white 4,898.

    Returns
    -------
    DataFrame
        The 11 inputs and the integer target ``quality``.

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

    Returns
    -------
    DataFrame
        The eight inputs and ``strength``.

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

    Returns
    -------
    DataFrame
        Eight inputs and ``Outcome``.

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

    Returns
    -------
    DataFrame
        One row per day or hour.

    Notes
    -----
    H. Fanaee-T and J. Gama, "Event labeling combining ensemble detectors and
    background knowledge", Progress in Artificial Intelligence (2013) 1-15.
    UCI copy from ``udacity/deep-learning-v2-pytorch`` at c9404fc8.
    """
    if freq not in ("day", "hour"):
        raise ValueError(f"The 'freq' parameter of load_bike_sharing must be 'day' or 'hour'. Got {freq!r} instead.")
    return _read(f"bike_sharing_{freq}.csv.gz")
