"""Queries of a fitted :class:`~rashomon.RashomonSet` beyond reliance: ranges, multiplicity, sampling."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..utils import scope_inside
from ..utils.validation import Boolean, Integral, NJobs, Options, RandomStateLike, Real, validate_params

__all__ = ["SetQueries"]


class SetQueries:
    """Mixin of :class:`~rashomon.RashomonSet`: exact ranges, predictive multiplicity, members and the cloud.

    For the quadratic classes (squared loss, linear or kernel) the set is the loss
    ellipsoid cut by the class's norm ball, so the range of any linear functional of
    the parameters (a prediction, a coefficient, a contrast) is a convex problem
    solved exactly (:class:`~rashomon.sets.LinearFunctionalRange`), with a certified
    bound and a member attaining it at each end.
    """

    #: Set by RashomonSet.fit when X has string column names (absent otherwise, as in scikit-learn).
    feature_names_in_: np.ndarray

    @validate_params(
        {"tol": Real(0.0, closed="neither"), "return_models": Boolean()}, func="RashomonSet.functional_range"
    )
    def functional_range(
        self, c: Any, c0: Any = None, *, names: Any = None, tol: float = 1e-10, return_models: bool = False
    ):
        """Range of ``c'θ + c0`` over the set, for one functional or a matrix of them (rows).

        Parameters
        ----------
        c : array-like of shape (d,) or (m, d)
            Coefficients on the set's parameters θ (``parametrization_.dim`` entries;
            ``reference_theta_`` shows the coordinates).
        c0 : float or array-like of shape (m,), default=None
            Constant terms (0).
        names : list of str, default=None
        tol : float, default=1e-10
            Relative gap between the certified bound and the attaining member at each end.
        return_models : bool, default=False
            Keep the attaining parameters (``lower_models``, ``upper_models``).

        Returns
        -------
        FunctionalRange
        """
        from ._set_inputs import scaled_functional_range

        return scaled_functional_range(self, c, c0, names, tol, return_models, "RashomonSet.functional_range")

    @validate_params(
        {
            "tol": Real(0.0, closed="neither"),
            "return_models": Boolean(),
            "scale": Options(("score", "probability"), allow_none=True),
            "progress": Boolean(),
        },
        func="RashomonSet.prediction_range",
    )
    def prediction_range(
        self,
        X: Any = None,
        *,
        tol: float = 1e-10,
        return_models: bool = False,
        scale: Literal["score", "probability"] | None = None,
        progress: bool = False,
    ):
        """Lowest and highest prediction of any member of the set, for every row of ``X``.

        For the classifier classes each end is ``min c'θ`` over the set (convex), solved for all rows at once
        (batched Newton on the KKT system, :mod:`rashomon.sets.margin._batch`) and certified per row by weak
        duality, with a member of the set attaining it (breast cancer, 569 rows: about 1 s, logistic).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features), default=None
            Rows to predict (None: the rows the set was fitted on).
        tol : float, default=1e-10
        return_models : bool, default=False
            Keep the parameters attaining each end (``member(i, "lower")`` gives a fitted member).
        scale : {"score", "probability"} or None, default=None
            None: ``"probability"`` for the logistic class (σ of the score ends, exact since σ is
            increasing), ``"score"`` for the hinge class (its only scale: the decision function, what
            members' ``predict`` returns; a label can flip where the range contains 0), the prediction
            for a regression class. ``"score"`` gives the logistic class's decision function. The result's
            ``scale`` attribute says which.
        progress : bool, default=False
            A progress bar on stderr (tqdm on a terminal; classifier classes, where many rows take seconds).

        Returns
        -------
        PredictionRange
        """
        from .rows import prediction_range

        return prediction_range(
            self,
            X,
            tol=tol,
            return_models=return_models,
            func="RashomonSet.prediction_range",
            scale=scale,
            progress=progress,
        )

    @scope_inside  # a closed-form answer is served from its cache with no BLAS call; the rest runs in the scope
    @validate_params(
        {
            "standardize": Boolean(),
            "tol": Real(0.0, closed="neither"),
            "return_models": Boolean(),
            "progress": Boolean(),
        },
        func="RashomonSet.coef_range",
    )
    def coef_range(
        self, *, standardize: bool = False, tol: float = 1e-10, return_models: bool = False, progress: bool = False
    ):
        """Per-coefficient range over the set in the user's units (linear classes), with sign stability.

        Parameters
        ----------
        standardize : bool, default=False
            Coefficients per standard deviation of each feature on the fitting rows (weighted;
            the root mean square for a class without intercept), comparable across features.
        tol, return_models
            See :meth:`functional_range`.
        progress : bool, default=False
            See :meth:`prediction_range`.

        Returns
        -------
        CoefRange
            ``intercept`` first, then one row per feature; ``sign_stable`` marks
            coefficients whose sign no member can flip.
        """
        from .rows import coef_range

        return coef_range(
            self, tol, return_models, "RashomonSet.coef_range", standardize=bool(standardize), progress=progress
        )

    @validate_params(
        {
            "threshold": Real(allow_none=True),
            "max_candidates": Integral(1),
            "tol": Real(0.0, closed="neither"),
            "scale": Options(("score", "probability"), allow_none=True),
            "progress": Boolean(),
        },
        func="RashomonSet.multiplicity",
    )
    def multiplicity(
        self,
        X: Any = None,
        threshold: float | None = None,
        *,
        max_candidates: int = 500,
        tol: float = 1e-10,
        scale: Literal["score", "probability"] | None = None,
        progress: bool = False,
    ):
        """Predictive multiplicity of the decisions ``prediction > threshold``.

        Parameters
        ----------
        X : array-like, default=None
            Rows (None: the fitting rows).
        threshold : float, default=None
            Decision threshold on ``scale``. None: 0.5 on the probability scale (the logistic class's
            default: ``threshold=0.3`` means probability 0.3 and must lie in (0, 1)), 0 on the score scale
            (the hinge class; its predicted label), 0.5 for a regression class with a 0/1 target; a
            regression class with any other target needs it (an error otherwise).
        max_candidates : int, default=500
            Attaining members tried for the discrepancy's certified lower end.
        scale : {"score", "probability"} or None, default=None
            Scale of the threshold and the ranges (see :meth:`prediction_range`; None: probability for
            the logistic class, score for the hinge class). The result's ``scale`` says which.
        progress : bool, default=False
            See :meth:`prediction_range`.
        tol : float, default=1e-10
            Tolerance of the exact row ranges.

        Returns
        -------
        Multiplicity
            Exact ambiguity and per-row flips; discrepancy as a certified interval.
        """
        from .rows import multiplicity

        return multiplicity(
            self, X, threshold, max_candidates, tol, "RashomonSet.multiplicity", scale=scale, progress=progress
        )

    @validate_params(
        {
            "n_models": Integral(1),
            "method": Options(("auto", "rejection", "hit_and_run")),
            "random_state": RandomStateLike(),
        },
        func="RashomonSet.sample",
    )
    def sample(
        self,
        n_models: int = 1000,
        *,
        method: Literal["auto", "rejection", "hit_and_run"] = "auto",
        random_state: Any = None,
    ):
        """Members drawn uniformly from the set (see :mod:`rashomon.sets` sampling notes).

        Parameters
        ----------
        n_models : int, default=1000
        method : {"auto", "rejection", "hit_and_run"}, default="auto"
            ``"rejection"`` is exact (uniform in the loss ellipsoid, kept inside the norm
            ball); ``"hit_and_run"`` is a Markov chain with the uniform law as its
            stationary distribution; ``"auto"`` uses rejection when >= 5% is accepted.
        random_state : int, RandomState, Generator or None

        Returns
        -------
        RashomonSample
            Parameters, losses and norms (each verified inside the set) and fitted estimators.
        """
        from .rows import sample_members

        return sample_members(self, n_models, method, random_state, "RashomonSet.sample")

    @validate_params(
        {
            "n_models": Integral(1),
            "kind": Options(("ratio", "difference")),
            "method": Options(("auto", "rejection", "hit_and_run")),
            "random_state": RandomStateLike(),
            "tol": Real(0.0, closed="neither"),
            "n_jobs": NJobs(),
        },
        func="RashomonSet.importance_cloud",
    )
    def importance_cloud(
        self,
        features: Any = None,
        *,
        n_models: int = 1000,
        kind: Literal["ratio", "difference"] = "ratio",
        method: str = "auto",
        random_state: Any = None,
        tol: float = 2.0**-20,
        n_jobs: int | None = None,
    ):
        """The variable importance cloud: exact MCR per feature with the MR of sampled members.

        Parameters
        ----------
        features : list of int, str or lists (groups), default=None
            None: every feature.
        n_models : int, default=1000
        kind : {"ratio", "difference"}, default="ratio"
        method, random_state
            Sampling (see :meth:`sample`).
        tol : float
            MCR tolerance (see :meth:`model_class_reliance`).
        n_jobs : int, default=None
            Features computed in parallel (joblib). Every feature's MCR and member MRs are a deterministic
            function of the set and the sample (drawn once, before), so any ``n_jobs`` gives identical numbers.

        Returns
        -------
        ImportanceCloud
        """
        from .rows import importance_cloud

        return importance_cloud(
            self, features, n_models, kind, method, random_state, tol, "RashomonSet.importance_cloud", n_jobs
        )
