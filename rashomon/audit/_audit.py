"""End-to-end reliance audits: the analysis of Fisher, Rudin & Dominici (2019, §10) for any table.

Pipeline (:func:`audit`):

0. Checks, all before any computing: the table (a CSV path, separator sniffed
   unless ``sep`` is given, or a DataFrame), the target (numeric, finite, not a
   feature), the groups (names: see below), missing values (an error counting
   them per column unless ``drop_missing=True``), ``train_size``, ε.
   Non-numeric feature columns are one-hot encoded with **all** their levels
   (no level dropped: MR scrambles a column's dummies together, and the
   penalised fits do not need a baseline level); a group naming such a column
   expands to its dummies ``"column=level"``. At most 50 levels per column.
1. Split the rows: a seeded random ``train_size`` part fits the reference, the
   rest (held out) is where MR and MCR are computed.
2. Numeric non-binary features are standardised with the training part's mean
   and sd; 0/1 columns (and dummies) are kept.
3. Reference: kernel ridge (RBF; bandwidth and penalty by ``cv``-fold
   cross-validation, on y minus its training mean) or ridge regression.
4. Model class: the same kernel with the training rows (unique) as dictionary,
   μ fixed at the training mean, and norm bound = the reference's RKHS norm; or
   linear models with ``||β||² <=`` the reference's.
5. ε_abs = held-out loss of the reference + ``epsilon`` × its cross-validated
   loss (``epsilon_kind="cv"``, the paper's rule), or as in
   :func:`model_class_reliance`.
6. For each feature group: MR of the reference, MCR− and MCR+, the refit
   without the group (held-out loss ratio), and bootstrap percentile intervals
   over held-out resamples (resample counts re-weight the cached sufficient
   statistics; nothing is rebuilt from replicated rows).

Group names: 1-64 characters among letters, digits, ``_``, ``-``, ``.`` and
space, starting with a letter or digit; no two names may give the same file
name (``group_slug``: spaces become ``_``, compared case-insensitively).
Figure files are named from the slug, never from the raw name.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..utils.validation import (
    Boolean,
    NJobs,
    RandomStateLike,
    RashomonInputError,
    check_choice,
    check_float,
    check_positive_int,
    seed_from,
    validate_params,
)
from . import _checks
from ._audit_binary import audit_binary as _audit_binary
from ._audit_classifier import check_classifier_options
from ._audit_fairness import check_sensitive, check_sensitive_rows
from ._audit_regression import audit_regression
from ._checks import _check_train_size, _Progress, check_split_train_size, check_writable_dir, group_slug, prepare
from ._estimator import check_estimator, check_trusted_types, load_estimator
from ._fit import _preprocess
from ._results import AuditResult, GroupAudit
from ._target import CLASSIFIER_CLASSES

__all__ = ["audit", "AuditResult", "GroupAudit", "group_slug", "check_writable_dir"]


@validate_params(
    {"random_state": RandomStateLike(), "n_jobs": NJobs(), "progress": Boolean(), "drop_missing": Boolean()}
)
def audit(
    data: Any,
    target: str,
    groups: dict,
    *,
    features: list | None = None,
    model_class: str | None = None,
    epsilon: float = 0.1,
    epsilon_kind: str = "cv",
    train_size: int | float | None = None,
    cv: int = 10,
    cv_rule: str | None = None,
    bootstrap: int = 0,
    confidence_level: float = 0.95,
    random_state: int = 0,
    n_jobs: int | None = None,
    progress: bool = False,
    provenance: str = "",
    drop_missing: bool = False,
    sep: str | None = None,
    split: str | None = None,
    positive_label: Any = None,
    estimator: Any = None,
    ambiguity_threshold: float = 0.5,
    ambiguity_rows: int | None = 500,
    bootstrap_mcr: bool = False,
    sensitive: str | None = None,
    benchmark_column: str | None = None,
    trusted_types: list | None = None,
) -> AuditResult:
    """Run a model-class-reliance audit on a table.

    Every input is checked before any computing; errors are
    :class:`~rashomon.RashomonInputError` naming the argument.

    Parameters
    ----------
    data : DataFrame, Dask DataFrame, str or Path
        The table, or the path of a CSV file, or of a Parquet file or folder
        (read by ``dask.dataframe.read_parquet`` when Dask is installed, by
        pandas otherwise). A Dask DataFrame is audited out of core: see
        Notes.
    target : str
        The outcome column; it may not be a feature or in a group. Numeric and
        finite for the regression classes (squared loss); binary for the
        classifier classes: 0/1, True/False, or two levels with
        ``positive_label`` naming the one coded 1 (log loss or hinge loss).
    groups : dict of {name: list of str}
        Feature groups whose reliance is audited, e.g.
        ``{"inadmissible": ["race", "sex"], "admissible": ["priors", "age"]}``.
        Names: 1-64 letters, digits, ``_``, ``-``, ``.`` or spaces, starting
        with a letter or digit, distinct as file names (``group_slug``). A
        non-numeric column stands for all its one-hot dummies.
    features : list of str, default=None
        Model inputs; default the union of the groups. Non-numeric columns are
        one-hot encoded with all their levels (at most 50; recorded in
        ``result.meta["encoding"]``).
    model_class : {"kernel", "linear", "logistic", "hinge"}, default=None
        None: ``"logistic"`` for a binary target (0/1, boolean, two non-numeric
        levels, or ``positive_label`` given), ``"kernel"`` otherwise. For
        ``"logistic"`` / ``"hinge"`` the reference is the class's own loss
        minimiser on the training rows (norm bound by the class's default, a
        cross-validated L2 fit of the same loss), its CV loss comes from
        ``cv`` stratified folds refitted over the same ball, and the MCR upper
        ends are certified outer bounds beside an attained inner value (both
        reported, with the gap). Levels absent from the training rows are
        dropped from the design (recorded in ``meta``).
    epsilon : float, default=0.1
        With ``epsilon_kind="cv"``: ε_abs = held-out loss of the reference +
        epsilon × its cross-validated loss (finite, >= 0). With
        ``"absolute"``: ε_abs itself (finite, > 0).
    epsilon_kind : {"cv", "absolute"}, default="cv"
    train_size : int or float, default=None
        Rows (seeded random) that fit the reference; the rest are held out. An
        int >= 10 is a count, a float in (0, 1) a fraction of the usable rows.
        Default ``min(500, n // 2)``: 500 rows, but never more than half, so
        at least half the rows are held out (on Dask: ``n // 2``). Both sides
        need >= 10 rows.
    cv : int, default=10
        Folds for the reference's hyper-parameters.
    cv_rule : {"stratified", "hash"} or None, default=None
        A classifier's folds (None for regression classes): ``"stratified"``
        (default in memory; norm bound by ``LogisticRegressionCV``) or
        ``"hash"`` (logistic; the only rule on Dask, giving in memory the
        audit's numbers on Parquet). ``meta["fold_rule"]``/``["cv_rule"]``.
    bootstrap : int, default=0
        Held-out resamples for percentile intervals (0: none).
    confidence_level : float, default=0.95
    random_state : int, default=0
    n_jobs : int, default=None
        joblib workers over bootstrap resamples (seeds drawn before dispatch,
        so results do not depend on n_jobs).
    progress : bool, default=False
        One progress bar per long phase on stderr (reference fit, each group's
        MCR search, the bootstrap counted in resamples); plain
        ``[rashomon] ...`` lines when stderr is not a terminal; False: silent.
    provenance : str, default=""
        A sentence on where the data came from, printed in the report.
    drop_missing : bool, default=False
        Rows with a missing value in the target or a feature are an error
        (counted per column) unless True; then they are dropped and counted in
        ``result.meta``.
    sep : str, default=None
        CSV separator when ``data`` is a path; None sniffs it from the first
        lines (``,``, ``;``, tab or ``|``; falls back to ``,``).
    split : str, default=None
        A column of True/False (or 0/1) values marking the training rows
        (True); the others are held out. It is neither a feature nor the
        target, and replaces the seeded split (``train_size`` must be None).
    positive_label : scalar, default=None
        The level of a binary target coded 1 (needed unless it is 0/1 or
        boolean; text is matched against the levels, as the CLI passes it).
    estimator : fitted estimator, str or Path, default=None
        A model the user already has (any scikit-learn classifier with
        ``predict_proba`` or regressor with ``predict``, Pipelines included),
        or its file: ``.skops`` (read by ``skops.io``, which runs no code),
        else joblib / pickle. **Loading a pickle runs code from the file**:
        load only files you trust; a file is loaded after every other input
        has been checked.
        Its MR per group is measured on the held-out rows exactly as
        :func:`rashomon.model_reliance` does (log loss on ``predict_proba``
        for a classifier, squared error on ``predict`` otherwise), with
        bootstrap intervals over the same resamples, and set beside the
        class's MCR. It receives the table's raw columns (its
        ``feature_names_in_`` when it has them, else ``features``): strings
        for a OneHotEncoder pipeline, and columns outside the audit's
        features may hold NaN if the model accepts it. It should not have
        been fitted on the held-out rows (pass ``split`` to choose them).
    ambiguity_threshold : float, default=0.5
        Classifier classes: the probability threshold at which ambiguity (the
        share of rows some member of the set classifies differently from the
        reference) is measured (:meth:`~rashomon.RashomonSet.multiplicity` with
        ``scale="probability"``); the hinge class uses the score 0.
    ambiguity_rows : int or None, default=500
        Held-out rows (a seeded sample) on which ambiguity is measured; None:
        all of them. Each row is an exact range query (seconds per hundred
        rows at p = 12 on today's solver).
    bootstrap_mcr : bool, default=False
        Classifier classes: also bootstrap MCR (each resample refits the set
        and reruns every group's MCR search: about the time of the full
        searches per resample, reported). Without it, ``bootstrap`` gives
        intervals for the MR of the reference and of ``estimator`` only.
    sensitive : str, default=None
        A column of group labels (2-20 groups, >= 10 held-out rows each; it
        need not be a feature): the report adds "Fairness over the Rashomon
        set" (``result.meta["fairness"]``; ``rashomon/audit/_audit_fairness.py``).
    benchmark_column : str, default=None
        With ``sensitive``: a deployed score (e.g. COMPAS's ``decile_score``;
        probabilities for the logistic class) placed in the set's ranges.
    trusted_types : list of str, default=None
        Types a ``.skops`` ``estimator`` file may hold beyond scikit-learn's
        and NumPy's (``skops.io.get_untrusted_types`` lists them).

    Returns
    -------
    AuditResult
        ``result.meta`` records what a report needs (loss, ε rule, encoding,
        standardised columns, row counts, input checksum, date, versions);
        for a classifier class also ``meta["classifier"]`` (labels, the
        reference's held-out log loss / accuracy / AUC, ambiguity, coefficient
        sign stability, bootstrap costs), and with ``estimator`` also
        ``meta["user_model"]`` and each group's ``extra``.

    Notes
    -----
    Out of core (``data`` a Dask DataFrame or a Parquet path with Dask
    installed), the rows are never gathered: three passes over the
    partitions (checks; the statistics of both parts; the ridge
    leave-one-out errors), on whatever Dask scheduler is active;
    ``bootstrap=0``. The split: a row fits the
    reference iff a 64-bit hash of its values mixed with the seed, as a
    number in [0, 1), is below ``train_size / n`` (the same seed gives the
    same split whatever the partitioning; identical rows fall on the same
    side), unless ``split`` names the rows. The ridge penalty is chosen by
    exact leave-one-out MSE instead of ``cv`` folds, and that MSE is the CV
    loss of the ε rule; ``n_jobs`` is not used. ``result.meta`` records the
    engine, partitions, passes and the split rule. Logistic (0/1 target):
    ``cv_rule="hash"``, MR exact for groups of at most 64 values (else the
    divide estimator), MCR not run (``meta["skipped"]``); docs/scaling.md.
    """
    func = "audit"
    t_start = time.perf_counter()
    digest = input_name = None
    if isinstance(data, (str, Path)):
        from ._dask_table import is_parquet_path, read_parquet

        if is_parquet_path(data):
            data, digest, input_name = read_parquet(data, func)
    dask_input = callable(getattr(data, "__dask_graph__", None))
    if dask_input and (estimator is not None or sensitive is not None):
        raise RashomonInputError(
            f"The 'data' parameter of {func} is a Dask DataFrame, which is audited out of core with "
            "model_class='linear', 'kernel' or 'logistic' and no estimator or sensitive column. Got "
            f"estimator={type(estimator).__name__ if estimator is not None else None}, sensitive={sensitive!r} "
            "instead."
        )
    model_class = "kernel" if (dask_input and model_class is None) else model_class
    prep: dict = (
        {}
        if dask_input
        else prepare(
            data,
            target,
            groups,
            features,
            sep=sep,
            drop_missing=drop_missing,
            func=func,
            split=split,
            model_class=model_class,
            positive_label=positive_label,
        )
    )
    model_class = model_class if dask_input else prep["model_class"]
    classifier = model_class in CLASSIFIER_CLASSES
    # ---------------------------------------------------------------- scalar options
    model_class = str(check_choice(model_class, ("kernel", "linear") + CLASSIFIER_CLASSES, "model_class", func))
    if classifier:
        ambiguity_threshold, ambiguity_rows = check_classifier_options(ambiguity_threshold, ambiguity_rows, func)
    trusted_types = check_trusted_types(trusted_types, func)
    fair = None if dask_input else check_sensitive(prep, sensitive, benchmark_column, model_class, target, func)
    if not isinstance(bootstrap_mcr, (bool, np.bool_)):
        raise RashomonInputError(
            f"The 'bootstrap_mcr' parameter of {func} must be True or False. Got {bootstrap_mcr!r} instead."
        )
    check_choice(epsilon_kind, ("cv", "absolute"), "epsilon_kind", func)
    epsilon = check_float(epsilon, "epsilon", func, low=0.0, strict=epsilon_kind == "absolute")
    if epsilon_kind == "cv":  # a multiple of the CV loss: 10 is most likely 10 % (a RashomonWarning)
        from ..utils.validation import check_relative_epsilon

        check_relative_epsilon(epsilon, func, unit="the cross-validated loss")
    bootstrap = check_positive_int(bootstrap, "bootstrap", func, minimum=0)
    cv = check_positive_int(cv, "cv", func, minimum=2)
    cv_rule = _checks.check_cv_rule(cv_rule, model_class, dask_input, func)
    confidence_level = check_float(confidence_level, "confidence_level", func, low=0.0, high=1.0)
    if dask_input:
        from ._dask_audit import audit_dask

        return audit_dask(
            data,
            target,
            groups,
            features=features,
            model_class=model_class,
            epsilon=epsilon,
            epsilon_kind=epsilon_kind,
            train_size=train_size,
            bootstrap=bootstrap,
            confidence_level=confidence_level,
            random_state=random_state,
            progress=_Progress(progress),
            provenance=provenance,
            drop_missing=drop_missing,
            split=split,
            digest=digest,
            input_name=input_name or "Dask DataFrame",
            t_start=t_start,
            func=func,
            cv=cv,
            positive_label=positive_label,
            classifier_options=(ambiguity_threshold, ambiguity_rows),
        )
    if digest is not None:  # a Parquet file read by pandas: its checksum and name, not the frame's
        prep["digest"], prep["input_name"] = digest, input_name
    work, features = prep["work"], prep["features"]
    n = len(work)
    mask = prep["train_mask"]
    check_split_train_size(split if mask is not None else None, train_size, func)
    if mask is not None and min(mask.sum(), (~mask).sum()) < 10:
        raise RashomonInputError(
            f"The 'split' parameter of {func} must leave at least 10 rows on each side (n = {n} "
            f"usable rows). Got {split!r} instead: {int(mask.sum())} training and "
            f"{int((~mask).sum())} held-out rows."
        )
    train_count = _check_train_size(train_size, n, func) if mask is None else int(mask.sum())
    if cv > train_count:
        raise RashomonInputError(
            f"The 'cv' parameter of {func} must be at most the number of training rows ({train_count}). Got {cv} instead."
        )
    pg = _Progress(progress)
    # ---------------------------------------------------------------- computing
    rng = np.random.RandomState(seed_from(random_state, func))
    perm = rng.permutation(n)  # drawn with a split column too: the later seeds stay the same
    tr, te = np.sort(perm[:train_count]), np.sort(perm[train_count:])
    if mask is not None:
        tr, te = np.flatnonzero(mask), np.flatnonzero(~mask)
    check_sensitive_rows(fair, te, func)
    if estimator is not None:  # a file is loaded last, every other input checked: a pickle runs code
        if isinstance(estimator, (str, Path)):
            estimator = load_estimator(estimator, trusted_types, func)
        check_estimator(estimator, prep["raw"], list(prep["groups_raw_features"]), func)
    X, scaled = _preprocess(work, features, tr)
    y = work[target].to_numpy(dtype=float)
    if classifier:
        return _audit_binary(
            prep,
            X,
            y,
            tr,
            te,
            scaled,
            target=target,
            model_class=model_class,
            epsilon=epsilon,
            epsilon_kind=epsilon_kind,
            cv=cv,
            cv_rule=cv_rule,
            bootstrap=bootstrap,
            bootstrap_mcr=bootstrap_mcr,
            confidence_level=confidence_level,
            rng=rng,
            pg=pg,
            threshold=ambiguity_threshold,
            amb_rows=ambiguity_rows,
            estimator=estimator,
            random_state=random_state,
            provenance=provenance,
            split=split,
            mask=mask,
            t_start=t_start,
            func=func,
            fair=fair,
        )
    return audit_regression(
        prep,
        X,
        y,
        tr,
        te,
        scaled,
        target=target,
        model_class=model_class,
        epsilon=epsilon,
        epsilon_kind=epsilon_kind,
        cv=cv,
        bootstrap=bootstrap,
        confidence_level=confidence_level,
        rng=rng,
        pg=pg,
        estimator=estimator,
        random_state=random_state,
        provenance=provenance,
        split=split,
        mask=mask,
        t_start=t_start,
        func=func,
        fair=fair,
        n_jobs=n_jobs,
    )
