"""The Rashomon set as one object: a model class, data, a reference in the class, and ε.

``RashomonSet(model_class, epsilon).fit(X, y)`` parametrises the class once
(hyper-parameters, norm bound, kernel bandwidth), builds the quadratic form of
e_orig once, solves for the least loss e_min once, and fixes the reference θ_ref
and the threshold ε_abs. Every query then adds only its own pieces (the e_switch
form of a feature group, a linear objective, ...) and runs on the same engines.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..model_classes.base import ClassMember
from ..solvers import QCQPSequence
from ..utils import DisplayMixin, one_blas_thread_methods
from ..utils.validation import (
    Boolean,
    Integral,
    Options,
    Percentiles,
    RandomStateLike,
    RashomonInputError,
    Real,
    check_columns,
    check_sample_weight,
    check_strata,
    check_X,
    check_y,
    feature_names_of,
    resolve_group,
    validate_params,
)
from ._dask import any_dask, fit_dask
from ._epsilon import epsilon_threshold
from ._fairness import FairnessQueries
from ._queries import SetQueries
from ._results import MCREnvelope, MCRResult
from ._row_statistics import RowStatistics
from ._search import GammaSearch, search_result
from ._set_display import set_display
from ._set_inputs import check_epsilons, check_set_params, query_rows, record_names

__all__ = ["RashomonSet"]


@one_blas_thread_methods(
    "fit",
    "reweighted",
    "model_class_reliance",
    "envelope",
    "pd_band",
    "functional_range",
    "prediction_range",
    "coef_range",
    "multiplicity",
    "sample",
    "importance_cloud",
    "disparity_range",
    "least_disparate",
    "reliance_difference",
    "reliance_order",
)
class RashomonSet(SetQueries, FairnessQueries, DisplayMixin):
    """The empirical Rashomon set ``{f ∈ F : e_orig(f) <= ε_abs}`` of a model class, fitted once.

    Parameters
    ----------
    model_class : LinearModelClass or KernelModelClass
        The class F (its norm bound, kernel, ... are chosen on the data by ``fit``).
    epsilon : float, default=0.1
        Size of the set, read by ``epsilon_kind`` (see ``epsilon_threshold``).
    epsilon_kind : {"relative", "additive", "absolute"}, default="relative"
        ``"relative"``: ε_abs = e_ref·(1 + ε); ``"additive"``: e_ref + ε; ``"absolute"``: ε.
    reference : None, ClassMember or fitted estimator, default=None
        f_ref. None: the class's loss minimiser on the data (for the default norm
        bound, the ridge / kernel-ridge fit). A member returned by
        ``model_class.fit_reference`` (possibly on other rows) carries its own
        parametrisation, which the set then uses. Any other fitted estimator is
        projected into the class; one that is not a member is an error saying how far
        outside it lies.
    loss : {"squared_error", "hinge", "log_loss", "absolute_error"} or None, default=None
        None: the class's own loss (``"squared_error"`` for the linear and kernel classes).
        ("squared" and "logistic" are accepted aliases; ``loss_`` holds the package's name.)
        Non-quadratic losses need a ``LinearModelClass``; a classifier class
        (``LogisticModelClass``, ``HingeModelClass``) carries its own loss, and an explicit
        ``loss`` that differs from it is an error.

    Attributes
    ----------
    parametrization_ : Parametrization
        The class with its hyper-parameters fixed.
    reference_ : ClassMember
        The reference as a fitted estimator (inside the class by construction).
    e_ref_, e_min_, epsilon_abs_ : float
        The reference's loss, the least loss in the class, and the threshold.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X is a frame whose column names are all strings (scikit-learn's rule). Queries
        taking new rows match a frame's columns to these by name (any order; missing, unseen or
        repeated names are an error) and warn, as scikit-learn does, for an array.

    Examples
    --------
    >>> import numpy as np
    >>> from rashomon import LinearModelClass, RashomonSet
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = X @ [1.0, 0.5, 0.0] + rng.normal(size=200)
    >>> rs = RashomonSet(LinearModelClass(), epsilon=0.05).fit(X, y)
    >>> res = rs.model_class_reliance(0)
    >>> bool(res.lower <= res.reference_model.mr <= res.upper)
    True
    """

    def __init__(
        self,
        model_class: Any,
        epsilon: float = 0.1,
        *,
        epsilon_kind: Literal["relative", "additive", "absolute"] = "relative",
        reference: Any = None,
        loss: str | None = None,
    ):
        self.model_class = model_class
        self.epsilon = epsilon
        self.epsilon_kind = epsilon_kind
        self.reference = reference
        self.loss = loss

    def _display_(self) -> tuple[dict, list]:
        return set_display(self)

    # ------------------------------------------------------------------ fit
    def _check_params(self, func: str) -> str:
        """Check the constructor arguments (and the class's); return the loss name the set uses."""
        return check_set_params(self, func)

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> RashomonSet:
        """Parametrise the class, build e_orig, solve e_min once and fix the reference and ε_abs.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative counts (e.g. a bootstrap resample).

        Returns
        -------
        self
        """
        func = "RashomonSet.fit"
        self.loss_ = self._check_params(func)
        names = feature_names_of(X, func)  # scikit-learn's feature_names_in_: string column names only
        if isinstance(self.reference, ClassMember) and hasattr(self.reference, "feature_names_in_"):
            X = check_columns(X, self.reference, func)  # a member fitted on named columns takes X's by name
        if any_dask(X, y, sample_weight):  # out of core: the rows are replaced by sufficient statistics
            return self._record_names(fit_dask(self, X, y, sample_weight, func), names)
        Xa, columns = check_X(X, func, min_rows=3)
        ya = check_y(y, Xa.shape[0], func)
        w = None if sample_weight is None else check_sample_weight(sample_weight, Xa.shape[0], func)
        yw = ya if w is None else ya[w > 0]
        if self.loss_ == "squared_error" and np.ptp(yw) == 0:
            raise RashomonInputError(
                f"The 'y' parameter of {func} must vary. Got the constant {yw[0]!r} (on every "
                "weighted row): a class with an intercept fits it exactly, so every loss ratio "
                "is 0/0."
            )
        self.n_features_in_ = Xa.shape[1]
        self._columns, self.X_, self.y_, self.sample_weight_ = columns, Xa, ya, w
        self._cache: dict = {}
        if self.loss_ != "squared_error":
            self._fit_convex(Xa, ya, w, columns, func)
            return self._record_names(self, names)
        ref = self.reference
        if isinstance(ref, ClassMember):
            par = ref.parametrization_
            if par.n_features != Xa.shape[1]:
                raise RashomonInputError(
                    f"The 'reference' parameter of {func} was fitted on {par.n_features} features; X has {Xa.shape[1]}."
                )
        else:
            if ref is not None and not hasattr(ref, "predict"):
                raise RashomonInputError(
                    f"The 'reference' parameter of {func} must be None or a fitted model with "
                    f"predict. Got {ref!r} instead."
                )
            par = self.model_class.parametrize(Xa, ya, w, columns=columns, func=func)
        self.parametrization_ = par
        self._finish_fit(func)
        return self._record_names(self, names)

    @staticmethod
    def _record_names(rs: RashomonSet, names: Any) -> RashomonSet:
        return record_names(rs, names)

    def _fit_convex(self, Xa, ya, w, columns, func: str) -> None:
        """The non-quadratic-loss fit: the same pieces as the squared path, on a convex e_orig programme."""
        from ..model_classes import LinearModelClass
        from ._convex import e_orig_program, encode_labels

        if not isinstance(self.model_class, LinearModelClass):
            raise RashomonInputError(
                f"The 'loss' parameter of {func} is {self.loss_!r}; non-quadratic losses need a LinearModelClass as "
                f"'model_class'. Got {type(self.model_class).__name__} instead."
            )
        if w is not None:
            raise RashomonInputError(f"The 'sample_weight' parameter of {func} needs loss='squared_error'.")
        if self.loss_ in ("log_loss", "hinge"):  # classifier classes: rashomon/sets/margin/_mcr.py
            from .margin import fit_margin_set

            return fit_margin_set(self, Xa, ya, columns, func)
        ref = self.reference
        if ref is not None and not hasattr(ref, "predict") and not hasattr(ref, "decision_function"):
            raise RashomonInputError(
                f"The 'reference' parameter of {func} must be None or a fitted model with "
                f"predict or decision_function. Got {ref!r} instead."
            )
        ye = encode_labels(ya, self.loss_, func)
        par = self.model_class.parametrize(Xa, ye, None, columns=columns, func=func, loss=self.loss_)
        self.parametrization_, self._y_encoded = par, ye
        t_orig, self.theta_min_, self.e_min_ = e_orig_program(par, Xa, ye, self.loss_)
        self.e_orig_term_ = t_orig
        theta_ref = self.theta_min_ if ref is None else par.convex_reference(ref, Xa, self.loss_, func, columns)
        self.reference_theta_ = theta_ref
        self.reference_ = par.estimator(theta_ref)
        self.e_ref_ = t_orig.value(theta_ref)
        self.epsilon_abs_ = epsilon_threshold(float(self.epsilon), self.epsilon_kind, self.e_ref_, self.e_min_, func)
        self._degenerate = False

    def _finish_fit(self, func: str, cache: dict | None = None) -> None:
        par = self.parametrization_
        Xa, ya, w = self.X_, self.y_, self.sample_weight_
        # reweighted copies pass the shared cache: the weight-independent pieces of e_orig are kept there
        eo = par.e_orig(Xa, ya, w) if cache is None else par.e_orig(Xa, ya, w, cache=cache)
        self.e_orig_form_ = eo
        self.theta_min_ = QCQPSequence(eo.Q, eo.c, par.B, par.r).solve(0.0).x
        self.e_min_ = eo(self.theta_min_)
        if self.reference is None:
            theta_ref = self.theta_min_
        else:
            theta_ref = par.project(self.reference, Xa, func, self._columns)
        self.reference_theta_ = theta_ref
        self.reference_ = par.estimator(theta_ref)
        self.e_ref_ = eo(theta_ref)
        scale = ya.mean_square if isinstance(ya, RowStatistics) else float(np.average(ya**2, weights=w))
        # e_orig is a quadratic form whose terms are of the size of mean(y²): below 1e-10 of it, fewer than six
        # digits of the least loss are right, and losses ratios built on it would be noise
        if self.e_min_ <= 1e-10 * max(scale, 1e-300):
            raise RashomonInputError(
                f"{func}: the model class fits the data (almost) exactly: least loss {self.e_min_:.3g}, "
                f"{self.e_min_ / max(scale, 1e-300):.2g} of mean(y²), below the 1e-10 that double precision resolves, so "
                "loss ratios are 0/0 to rounding. Use a smaller norm_bound or dictionary (a class that cannot fit the "
                "noise), or check that y is not a function of X."
            )
        self.epsilon_abs_ = epsilon_threshold(float(self.epsilon), self.epsilon_kind, self.e_ref_, self.e_min_, func)
        self._degenerate = self._at_e_min(self.epsilon_abs_)

    def _at_e_min(self, eps: float) -> bool:
        """ε_abs within rounding of the least loss: the set is the minimiser (answered exactly, no search).

        Rounding is measured on the loss's own arithmetic: e_orig is a quadratic form whose terms are
        of the size of its constant k (mean y²), so a loss value carries an error of order eps_mach·k,
        and the search needs the set's thickness ε_abs - e_min well above it (1e5·eps_mach·k = 2e-11·k)
        to resolve its two ends; a thinner set (or one thinner than 1e-12 of e_min) cannot be told from
        its minimiser, and is answered by it.
        """
        eo = getattr(self, "e_orig_form_", None)
        k = abs(float(eo.k)) if eo is not None and hasattr(eo, "k") else 0.0
        resolution = max(1e-12 * abs(self.e_min_), 1e5 * np.finfo(float).eps * k)
        return eps - self.e_min_ <= resolution

    def reweighted(self, sample_weight: Any) -> RashomonSet:
        """The same set definition on the same rows with new weights (e.g. a bootstrap resample).

        The parametrisation (hyper-parameters, norm bound) and the reference function are
        kept; e_orig, e_min, e_ref and ε_abs are recomputed under the weights by the same ε
        rule, and kernel matrices computed for earlier queries are reused.
        """
        self._check_fitted("reweighted")
        func = "RashomonSet.reweighted"
        if self.loss_ != "squared_error":
            raise RashomonInputError(
                f"{func} needs loss='squared_error' (row weights are not supported for loss={self.loss_!r})."
            )
        w = check_sample_weight(sample_weight, self.X_.shape[0], func)
        new = RashomonSet(
            self.model_class, self.epsilon, epsilon_kind=self.epsilon_kind, reference=self.reference_, loss=self.loss
        )
        new.loss_, new.n_features_in_ = self.loss_, self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            new.feature_names_in_ = self.feature_names_in_
        new._columns, new.X_, new.y_, new.sample_weight_, new._cache = self._columns, self.X_, self.y_, w, self._cache
        new.parametrization_ = self.parametrization_
        new._finish_fit(func, cache=new._cache)
        return new

    # ------------------------------------------------------------------ helpers
    def _check_fitted(self, method: str) -> None:
        if not hasattr(self, "loss_"):
            raise RashomonInputError(f"RashomonSet.{method} needs a fitted set; call fit(X, y) first.")

    def _rows(self, X: Any, func: str) -> np.ndarray:
        """The fitting rows (X None) or new rows checked by name (:func:`~._set_inputs.query_rows`)."""
        return query_rows(self, X, func)

    def _group(self, features: Any, func: str) -> tuple[int, ...]:
        return resolve_group(features, self._columns, self.n_features_in_, func)

    def _strata(self, conditional: bool, strata: Any, group: tuple[int, ...], func: str):
        if not conditional:
            if strata is not None:
                raise RashomonInputError(f"The 'strata' parameter of {func} needs conditional=True.")
            return None
        from ..reliance import make_strata

        codes = check_strata(strata, self.X_.shape[0], func) if strata is not None else make_strata(self.X_, group)
        return np.unique(codes, return_inverse=True)[1].ravel()

    def problem(
        self, features: Any, *, conditional: bool = False, strata: Any = None, func: str = "RashomonSet.problem"
    ):
        """The :class:`~rashomon.model_classes.quadratics.MCRProblem` of one feature group on this set."""
        from ..model_classes.quadratics import MCRProblem

        self._check_fitted("problem")
        if self.loss_ != "squared_error":  # no quadratic e_orig / e_switch forms
            raise RashomonInputError(
                f"{func} needs a quadratic class (loss='squared_error'); {type(self.model_class).__name__} "
                f"uses loss={self.loss_!r}. Use model_class_reliance / envelope for its MCR."
            )
        group = self._group(features, func)
        codes = self._strata(conditional, strata, group, func)
        es = self.parametrization_.e_switch(
            self.X_, self.y_, self.sample_weight_, group, codes, cache=self._cache if codes is None else None
        )
        names = tuple(self._columns[i] if self._columns else f"x{i}" for i in group)
        return MCRProblem(self.e_orig_form_, es, self.parametrization_, names)

    def searcher(
        self,
        features: Any,
        kind: str = "ratio",
        *,
        conditional: bool = False,
        strata: Any = None,
        tol: float = 2.0**-20,
        max_iter: int = 100,
        func: str = "RashomonSet.model_class_reliance",
    ) -> GammaSearch:
        """A :class:`~rashomon.sets.GammaSearch` of one feature group on this set (θ_min reused)."""
        prob = self.problem(features, conditional=conditional, strata=strata, func=func)
        return GammaSearch(prob, kind, tol, max_iter, theta_min=self.theta_min_)

    # ------------------------------------------------------------------ queries
    @validate_params(
        {
            "kind": Options(("ratio", "difference")),
            "conditional": Boolean(),
            "tol": Real(0.0, closed="neither"),
            "max_iter": Integral(1),
            "n_starts": Integral(1),
            "random_state": RandomStateLike(),
            "max_time": Real(0.0, closed="neither", allow_none=True),
            "gap_tol": Real(0.0, closed="neither"),
        },
        func="RashomonSet.model_class_reliance",
    )
    def model_class_reliance(
        self,
        features: Any,
        *,
        kind: Literal["ratio", "difference"] = "ratio",
        conditional: bool = False,
        strata: Any = None,
        tol: float = 2.0**-20,
        max_iter: int = 100,
        n_starts: int = 5,
        random_state: Any = 0,
        max_time: float | None = None,
        gap_tol: float = 0.01,
    ) -> MCRResult:
        """MCR of ``features``: the lowest and highest MR of any member of the set, certified.

        Parameters
        ----------
        features : int, str or list
            The feature or group X1.
        kind : {"ratio", "difference"}, default="ratio"
        conditional : bool, default=False
            Switch X1 only within ``strata`` (conditional MCR; still exact).
        strata : array-like of shape (n_samples,), default=None
            Stratum labels; None with ``conditional=True`` builds them (:func:`rashomon.make_strata`).
        tol : float, default=2**-20
            Stop when a member attains each bound within ``tol·max(1, |bound|)``.
        max_iter : int, default=100
            Search steps per end.
        n_starts, random_state
            Starts of the inner ascent of non-quadratic losses.
        max_time : float, default=None
            Classifier classes (logistic, hinge), upper end of one feature: seconds after which the branch and
            bound refining the outer bound stops (:mod:`rashomon.sets.margin._bnb`; the bound stays valid, only
            less tight; ``upper_gap`` and ``notes`` say what was reached). None: a fixed budget of counted work,
            so the same inputs give the same bits on any machine; with ``max_time`` the result depends on the
            machine's speed and load.
        gap_tol : float, default=0.01
            Classifier classes: the branch and bound stops once ``upper_gap/upper`` is at most this (``tol`` is
            the convex ends' accuracy, far below what a non-convex end can certify within the budget).

        Returns
        -------
        MCRResult
        """
        func = "RashomonSet.model_class_reliance"
        self._check_fitted("model_class_reliance")
        if self.loss_ != "squared_error":
            return self._convex_mcr(
                features, kind, conditional, tol, max_iter, n_starts, random_state, func, max_time, gap_tol
            )
        srch = self.searcher(
            features, kind, conditional=conditional, strata=strata, tol=tol, max_iter=max_iter, func=func
        )
        eps = self.epsilon_abs_
        if not self._degenerate:
            srch.search("lower", eps)
            srch.search("upper", eps)
        return search_result(srch, eps, self.e_ref_, self.reference_theta_, tol, degenerate=self._degenerate)

    def _convex_mcr(self, features, kind, conditional, tol, max_iter, n_starts, random_state, func, mt=None, gt=0.01):
        from ._convex import convex_loss_mcr

        if self.sample_weight_ is not None or conditional:
            raise RashomonInputError(
                f"The 'sample_weight' and 'conditional' parameters of {func} are not supported for "
                f"{type(self.model_class).__name__} (loss={self.loss_!r}); they need loss='squared_error'."
            )
        group = self._group(features, func)
        if getattr(self, "_margin", None) is not None:
            from .margin import margin_mcr

            return margin_mcr(
                self._margin,
                self._columns,
                group,
                e_ref=self.e_ref_,
                epsilon_abs=self.epsilon_abs_,
                reference_theta=self.reference_theta_,
                kind=kind,
                tol=tol,
                max_iter=max_iter,
                n_starts=n_starts,
                random_state=random_state,
                func=func,
                max_time=mt,
                gap_tol=gt,
            )
        return convex_loss_mcr(
            self.parametrization_,
            self.X_,
            self._y_encoded,
            self._columns,
            group,
            loss=self.loss_,
            t_orig=self.e_orig_term_,
            theta_min=self.theta_min_,
            e_min=self.e_min_,
            e_ref=self.e_ref_,
            epsilon_abs=self.epsilon_abs_,
            reference_theta=self.reference_theta_,
            kind=kind,
            tol=tol,
            max_iter=max_iter,
            n_starts=n_starts,
            random_state=random_state,
            func=func,
        )

    @validate_params(
        {
            "epsilon_kind": Options(("relative", "additive", "absolute"), allow_none=True),
            "kind": Options(("ratio", "difference")),
            "conditional": Boolean(),
            "tol": Real(0.0, closed="neither"),
            "max_iter": Integral(1),
            "progress": Boolean(),
        },
        func="RashomonSet.envelope",
    )
    def envelope(
        self,
        features: Any,
        epsilons: Any = None,
        *,
        epsilon_kind: str | None = None,
        kind: Literal["ratio", "difference"] = "ratio",
        conditional: bool = False,
        strata: Any = None,
        tol: float = 2.0**-20,
        max_iter: int = 100,
        progress: bool = False,
    ) -> MCREnvelope:
        """MCR traced over several ε (read by ``epsilon_kind``, default the set's), warm-starting γ.

        ``epsilons`` defaults to ``np.geomspace(0.005, 0.5, 20)`` (relative). Every
        certified step stays valid at every ε, so :meth:`MCREnvelope.bounds` answers any ε.
        """
        func = "RashomonSet.envelope"
        self._check_fitted("envelope")
        epsilon_kind = self.epsilon_kind if epsilon_kind is None else epsilon_kind
        eps_in = (
            np.geomspace(0.005, 0.5, 20)
            if epsilons is None
            else check_epsilons(epsilons, epsilon_kind, func, "epsilons")
        )
        abs_eps = np.array([epsilon_threshold(float(e), epsilon_kind, self.e_ref_, self.e_min_, func) for e in eps_in])
        if self.loss_ != "squared_error":  # classifier classes: rashomon/sets/margin/_envelope.py
            from .margin import margin_envelope

            return margin_envelope(
                self,
                features,
                abs_eps,
                kind=kind,
                conditional=conditional,
                strata=strata,
                tol=tol,
                max_iter=max_iter,
                progress=progress,
            )
        srch = self.searcher(
            features, kind, conditional=conditional, strata=strata, tol=tol, max_iter=max_iter, func=func
        )
        order = np.argsort(abs_eps)
        results: list = [None] * len(abs_eps)
        it = order
        if progress:
            from tqdm.auto import tqdm

            it = tqdm(order, desc="MCR envelope")
        start: dict = {"lower": None, "upper": None}
        for i in it:
            eps = abs_eps[i]
            degenerate = self._at_e_min(eps)
            if not degenerate:
                for side in ("lower", "upper"):
                    srch.search(side, eps, start=start[side])
                    g = srch.best_gamma(side, eps)
                    start[side] = g if np.isfinite(g) else None
            results[i] = search_result(srch, eps, self.e_ref_, self.reference_theta_, tol, degenerate=degenerate)
        return MCREnvelope(
            epsilons=abs_eps,
            lower=np.array([r.lower for r in results]),
            upper=np.array([r.upper for r in results]),
            results=results,
            steps=list(srch.steps),
            kind=kind,
            features=srch.prob.feature_names,
            e_ref=self.e_ref_,
            e_min=self.e_min_,
        )

    @validate_params(
        {"grid_resolution": Integral(2), "percentiles": Percentiles(), "tol": Real(0.0, closed="neither")},
        func="RashomonSet.pd_band",
    )
    def pd_band(
        self,
        feature: Any,
        grid: Any = None,
        *,
        grid_resolution: int = 20,
        percentiles: tuple[float, float] = (0.05, 0.95),
        tol: float = 1e-9,
    ):
        """Lowest and highest partial dependence of ``feature`` over the set (see :func:`rashomon.rashomon_pd_band`)."""
        from ._pd_band import pd_band

        self._check_fitted("pd_band")
        return pd_band(self, feature, grid, grid_resolution, percentiles, tol)
