"""Fairness queries of a fitted :class:`~rashomon.RashomonSet`: disparity ranges, the least disparate good model,
reliance differences and the certified order of features.

Coston, Rambachan & Chouldechova (ICML 2021) range group disparities over the set of good models; Black, Gillis
& Hall (2024) ask for the least discriminatory alternative; Laberge et al. (JMLR 2023) certify orders of feature
importance over Rashomon sets. Here each is one more problem for the set's exact engines (see
:mod:`._disparity`, :mod:`._least`, :mod:`._order`).
"""

from __future__ import annotations

from typing import Any, Literal

from ...utils.validation import Boolean, Integral, Options, Real, validate_params

__all__ = ["FairnessQueries"]

_METRIC = Options(
    ("mean_prediction", "mean_residual", "group_loss", "positive_rate", "true_positive_rate", "false_positive_rate")
)
_SCALE = Options(("prediction", "score", "probability"), allow_none=True)


class FairnessQueries:
    """Mixin of :class:`~rashomon.RashomonSet`: group disparities and reliance orders over the set."""

    epsilon_abs_: float  # set by RashomonSet.fit

    @validate_params(
        {
            "metric": _METRIC,
            "kind": Options(("difference", "ratio")),
            "threshold": Real(allow_none=True),
            "scale": _SCALE,
            "tol": Real(0.0, closed="neither"),
            "exact_rows": Integral(0),
            "time_limit": Real(0.0),
        },
        func="RashomonSet.disparity_range",
    )
    def disparity_range(
        self,
        sensitive: Any,
        metric: str = "mean_prediction",
        *,
        positive: Any = None,
        threshold: float | None = None,
        kind: Literal["difference", "ratio"] = "difference",
        scale: str | None = None,
        reference_group: Any = None,
        tol: float = 1e-10,
        exact_rows: int = 32,
        time_limit: float = 0.0,
    ):
        """Certified range over the set of a group disparity (definitions as fairlearn's).

        Parameters
        ----------
        sensitive : str or array-like of shape (n_samples,)
            A column name of the data the set was fitted on, or one group label per fitted row. Two or more groups.
        metric : {"mean_prediction", "mean_residual", "group_loss", "positive_rate", "true_positive_rate", \
"false_positive_rate"}, default="mean_prediction"
            Per-group mean of the prediction, of ``y - prediction`` (calibration in the large), of the loss, or of
            the decision ``prediction > threshold`` (over all rows, the rows with ``y = positive``, the others):
            fairlearn's ``MetricFrame(...).by_group`` of ``mean_prediction``, ``selection_rate``,
            ``true_positive_rate`` and ``false_positive_rate`` on a member's predictions.
        positive : label, default=None
            The positive label of y (TPR / FPR; the classifier classes score the larger label).
        threshold : float, default=None
            Decision threshold: 0.5 for a 0/1 regression target or on the probability scale, 0 on the score scale.
        kind : {"difference", "ratio"}, default="difference"
            ``m_g - m_ref`` or ``m_g / m_ref``; the last row is fairlearn's between-groups summary (``max - min``
            as ``demographic_parity_difference``, ``min / max`` as ``demographic_parity_ratio``).
        scale : {"prediction", "score", "probability"} or None
            Regression: the prediction. Logistic class: ``"probability"`` (default) or ``"score"``; hinge: score.
        reference_group : label, default=None
            The group every other is compared with (None: the first label in sorted order).
        tol : float, default=1e-10
            Tolerance of the exact functional ranges.
        exact_rows : int, default=32
            Classifier classes, metrics other than the mean score: the outer bounds use certified ellipsoid ranges
            of every row's score, tightened by exact per-row solves on this many distinct rows (those that matter
            most: for decisions, the rows whose range straddles the threshold). More rows, tighter outer bounds.
        time_limit : float, default=0.0
            Decision rates (positive, true and false positive rate) of logistic and hinge sets, difference kind:
            processor seconds given to each end of each pair by a branch and bound over boxes of parameters that
            tightens the certified bound toward the attained value (it stops earlier once each end is within
            2.5 % of the attained width). 0 skips it. The bound is certified whenever it stops.

        Returns
        -------
        DisparityRange
            Exact (``exact``) for the mean prediction and residual of regression classes and the score of
            classifiers (linear functionals of θ) and the squared group loss (γ-search); certified outer bounds
            with attained inner values for the rest (probabilities, rates, classifier losses), gaps reported.
        """
        from ._fair_inputs import check_ratio, finite_ratio
        from ._fair_metrics import make_spec
        from ._least import make_range

        func = "RashomonSet.disparity_range"
        spec = make_spec(
            self,
            sensitive,
            metric,
            positive=positive,
            threshold=threshold,
            scale=scale,
            reference_group=reference_group,
            func=func,
        )
        _check_kind(spec, kind, func)
        check_ratio(self, spec, kind, func)
        spec.exact_rows = exact_rows
        spec.time_limit = time_limit
        return finite_ratio(lambda: make_range(self, spec, kind, self.epsilon_abs_, tol, func)[0], kind, func)

    @validate_params(
        {
            "metric": _METRIC,
            "kind": Options(("difference", "ratio")),
            "threshold": Real(allow_none=True),
            "scale": _SCALE,
            "frontier": Boolean(),
            "tol": Real(0.0, closed="neither"),
            "exact_rows": Integral(0),
            "target": Real(0.0, allow_none=True),
        },
        func="RashomonSet.least_disparate",
    )
    def least_disparate(
        self,
        sensitive: Any,
        metric: str = "mean_prediction",
        *,
        features: Any = None,
        benchmark: Any = None,
        epsilons: Any = None,
        frontier: bool = True,
        positive: Any = None,
        threshold: float | None = None,
        kind: Literal["difference", "ratio"] = "difference",
        scale: str | None = None,
        reference_group: Any = None,
        tol: float = 1e-10,
        exact_rows: int = 32,
        target: float | None = None,
    ):
        """The good model closest to parity, certified, with its loss, reliances and the trade-off frontier.

        Parameters
        ----------
        sensitive, metric, positive, threshold, kind, scale, reference_group, tol
            As :meth:`disparity_range`.
        features : list of features or groups, default=None
            MR (ratio) of the least disparate member and of the reference on each.
        benchmark : fitted model or array-like of shape (n_samples,), default=None
            A model (``predict_proba`` on the probability scale, ``decision_function`` on the score scale, else
            ``predict``) or its predictions on the set's rows (e.g. a deployed score); its disparity is placed
            relative to the set's range.
        epsilons : array-like, default=None
            ε values (read by the set's ``epsilon_kind``) of the frontier; None: 9 thresholds from near the least
            loss to 3 × (ε_abs - e_min) above it, plus the set's.
        frontier : bool, default=True
        target : float, default=None
            A tolerated distance from parity δ (``|d|``, or ``1 - min/max`` for a ratio): the less discriminatory
            alternative question. The result's ``target_outcome`` is ``"member"`` (the returned member is within
            δ, with its loss), ``"none"`` (certified: no member of the set is within δ) or ``"undetermined"``
            (the certified bound is below δ and the closest member found above it).

        Returns
        -------
        LeastDisparate
            ``certified_lower``: no member of the set is closer to parity (``|d|``, or ``1 - min/max`` for a
            ratio); ``exact`` when the member attains it to 1e-6 (a member at parity, found by bisection on a
            segment between members on both sides, for every metric continuous in θ). For two groups and the
            exact metrics the member at parity is the least-loss one, bracketed by bisection over ε
            (``frontier.zero_loss_*``).
        """
        from ._fair_inputs import benchmark_predictions, check_frontier_epsilons, check_ratio, finite_ratio
        from ._fair_metrics import make_spec
        from ._least import least_disparate

        func = "RashomonSet.least_disparate"
        spec = make_spec(
            self,
            sensitive,
            metric,
            positive=positive,
            threshold=threshold,
            scale=scale,
            reference_group=reference_group,
            func=func,
        )
        _check_kind(spec, kind, func)
        check_ratio(self, spec, kind, func)
        epsilons = check_frontier_epsilons(self, epsilons, func)
        benchmark = benchmark_predictions(self, spec, benchmark, func)
        spec.exact_rows = exact_rows
        if features is not None and (isinstance(features, (str, int)) or not hasattr(features, "__len__")):
            features = [features]
        return finite_ratio(
            lambda: least_disparate(self, spec, kind, features, benchmark, epsilons, frontier, tol, func, target),
            kind,
            func,
        )

    @validate_params(
        {"kind": Options(("ratio", "difference")), "tol": Real(0.0, closed="neither"), "max_iter": Integral(1)},
        func="RashomonSet.reliance_difference",
    )
    def reliance_difference(
        self,
        a: Any,
        b: Any,
        *,
        kind: Literal["ratio", "difference"] = "ratio",
        tol: float = 2.0**-20,
        max_iter: int = 100,
    ):
        """Certified range over the set of ``MR(a) - MR(b)`` for features or groups a and b, with members.

        Exact for the quadratic classes (one γ-search per end with the numerator ``e_switch(a) - e_switch(b)``);
        for the classifier classes, outer bounds from the two certified MCR intervals and inner values from their
        members (``exact=False``, gaps reported).

        Returns
        -------
        RelianceDifference
        """
        from ._order import reliance_difference

        return reliance_difference(self, a, b, kind, tol, max_iter, "RashomonSet.reliance_difference")[0]

    @validate_params(
        {
            "kind": Options(("ratio", "difference")),
            "critical": Boolean(),
            "epsilon_max": Real(0.0, closed="neither", allow_none=True),
            "rtol": Real(0.0, closed="neither"),
            "tol": Real(0.0, closed="neither"),
            "max_iter": Integral(1),
            "progress": Boolean(),
        },
        func="RashomonSet.reliance_order",
    )
    def reliance_order(
        self,
        features: Any,
        *,
        kind: Literal["ratio", "difference"] = "ratio",
        critical: bool = True,
        epsilon_max: float | None = None,
        rtol: float = 1e-3,
        tol: float = 2.0**-20,
        max_iter: int = 100,
        progress: bool = False,
    ):
        """The certified partial order ``a ≻ b`` (lower end of ``MR(a) - MR(b)`` > 0) over the set.

        Parameters
        ----------
        features : list of features or groups, or dict {label: features}
        kind : {"ratio", "difference"}, default="ratio"
        critical : bool, default=True
            Bracket each relation's critical ε (the largest ε_abs at which it still holds) by bisection over ε:
            to ``rtol`` for the quadratic classes; for the classifiers, by secant steps over ε with at most 5 ε
            probed per relation, each searching only the ends it needs, shared with the other pairs (certified below
            the bracket, refuted above it only when ``critical_refuted``).
        epsilon_max : float, default=None
            Largest ε_abs searched, at least the set's ``epsilon_abs_`` (None: e_min + 4096·(ε_abs - e_min)).
        rtol : float, default=1e-3
            Relative width of the critical-ε brackets.
        tol, max_iter
            Accuracy and steps of each search (as :meth:`model_class_reliance`).
        progress : bool, default=False
            Report the work on stderr (a tqdm bar on a terminal: the MCRs of the classifier classes, or the pairs,
            then the critical ε of each relation).

        Returns
        -------
        RelianceOrder
            ``relations`` (one row per ``a ≻ b`` with its lower end and critical ε), ``hasse_edges()``, ``plot()``.
        """
        from ._order import reliance_order

        return reliance_order(
            self, features, kind, critical, epsilon_max, rtol, tol, max_iter, "RashomonSet.reliance_order", progress
        )


def _check_kind(spec, kind, func):
    from ...utils.validation import RashomonInputError

    if kind == "ratio" and spec.metric == "mean_residual":
        raise RashomonInputError(
            f"The 'kind' parameter of {func} must be 'difference' for metric='mean_residual' "
            "(residuals change sign, so their ratio is not a disparity). Got 'ratio' instead."
        )
