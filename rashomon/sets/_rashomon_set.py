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
from ..utils import DisplayMixin, one_blas_thread_methods
from ..utils.validation import (
    Boolean,
    Integral,
    Options,
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
from ._epsilon import warn_if_null
from ._mcr_queries import MCRQueries
from ._queries import SetQueries
from ._results import MCRResult
from ._set_display import set_display
from ._set_fit import finish_fit, fit_convex
from ._set_inputs import check_set_params, query_rows, record_names, row_index
from .fairness import FairnessQueries
from .quadratic import search_result
from .scale import any_dask, fit_dask

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
class RashomonSet(SetQueries, FairnessQueries, MCRQueries, DisplayMixin):
    """The empirical Rashomon set ``{f ∈ F : e_orig(f) <= ε_abs}`` of a model class, fitted once.

    Parameters
    ----------
    model_class : LinearModelClass, KernelModelClass, LogisticModelClass or HingeModelClass
        The class F (its norm bound, kernel, ... are chosen on the data by ``fit``): linear or kernel
        regression (squared loss), or a linear classifier (logistic or hinge loss, labels 0/1 or ±1).
    epsilon : float, default=0.1
        Size of the set, read by ``epsilon_kind`` (see ``epsilon_threshold``).
    epsilon_kind : {"relative", "additive", "absolute", "explained"}, default="relative"
        ``"relative"``: ε_abs = e_ref·(1 + ε); ``"additive"``: e_ref + ε; ``"absolute"``: ε;
        ``"explained"``: e_min + ε·(e_null - e_min), a share ε of the loss the class explains beyond the
        null model.
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
    e_null_ : float
        The loss of the null model, the best constant model of the class (the variance of y for a class
        with an intercept under squared loss, the base rate's log loss for the logistic class, ...).
    explained_share_ : float
        ``(e_null - ε_abs)/(e_null - e_min)``: the share of the loss the class explains that every member
        still explains (0 when the set contains a constant model).
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
        epsilon_kind: Literal["relative", "additive", "absolute", "explained"] = "relative",
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

        Warns
        -----
        RashomonWarning
            When ε_abs >= e_null: the set contains a constant model (the null model).
        """
        warn_if_null(self._fit(X, y, sample_weight), "RashomonSet.fit")
        return self

    def _fit(self, X: Any, y: Any, sample_weight: Any) -> RashomonSet:
        func = "RashomonSet.fit"
        self.loss_ = self._check_params(func)
        names = feature_names_of(X, func)  # scikit-learn's feature_names_in_: string column names only
        self._row_index = row_index(X)  # a pandas frame's index: sensitive Series are aligned with it
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
        fit_convex(self, Xa, ya, w, columns, func)

    def _finish_fit(self, func: str, cache: dict | None = None) -> None:
        """e_orig, e_min, the reference and ε_abs on the set's rows (:func:`~._set_fit.finish_fit`)."""
        finish_fit(self, func, cache)

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

        The parametrisation (hyper-parameters, norm bound) and the reference function are kept; e_orig, e_min, e_ref
        and ε_abs are recomputed under the weights by the same ε rule; kernel matrices of earlier queries are reused.

        Parameters
        ----------
        sample_weight : array-like of shape (n_samples,) of non-negative weights

        Returns
        -------
        RashomonSet
            A new fitted set; this one is unchanged.
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
            Classifier classes (logistic, hinge): the time limit of the call, in seconds. Once it has passed,
            no further search starts (the lower end's γ search and its search below γ = 0, the upper end's
            ascent); the slab search of the lower end gets at most half the time left when it starts, the
            branch and bound of the upper end (one feature, :mod:`rashomon.sets.margin._bnb`) the rest. The
            first step of each end always runs. The bounds stay valid, only less tight; ``lower_gap``,
            ``upper_gap`` and ``notes`` say what was reached and what the limit skipped. None: a
            fixed budget of counted work, so the same inputs give the same bits on any machine; with
            ``max_time`` the upper end's work budget is lifted and the result depends on the machine's speed
            and load.
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
        from .quadratic import convex_loss_mcr

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
