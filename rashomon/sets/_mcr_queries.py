"""Queries of a fitted :class:`~rashomon.RashomonSet` built on its γ-search: the MCR problem and the search of
one feature group (which :meth:`~rashomon.RashomonSet.model_class_reliance` runs), MCR traced over several ε (the
envelope), and the PD band."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..utils.validation import Boolean, Integral, Options, Percentiles, RashomonInputError, Real, validate_params
from ._epsilon import epsilon_threshold
from ._results import MCREnvelope
from ._set_inputs import check_epsilons
from .quadratic import GammaSearch, search_result
from .scale import any_dask, dask_strata

__all__ = ["MCRQueries"]


class MCRQueries:
    """Mixin of :class:`~rashomon.RashomonSet`: the MCR problem and γ-search of a feature group, the MCR envelope
    over ε and the PD band (the bodies are the functions below, on the fitted set)."""

    theta_min_: np.ndarray  # set by RashomonSet.fit

    def problem(
        self, features: Any, *, conditional: bool = False, strata: Any = None, func: str = "RashomonSet.problem"
    ):
        """The :class:`~rashomon.model_classes.quadratics.MCRProblem` of one feature group on this set."""
        return problem_of(self, features, conditional, strata, func)

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

    @validate_params(
        {
            "epsilon_kind": Options(("relative", "additive", "absolute", "explained"), allow_none=True),
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

        Every certified step stays valid at every ε, so :meth:`MCREnvelope.bounds` answers any ε.

        Parameters
        ----------
        features : feature, list of features or group
            Column name(s) or index(es) whose reliance is traced (a list is one group).
        epsilons : array-like, default=None
            The ε values, read by ``epsilon_kind``. None: ``np.geomspace(0.005, 0.5, 20)`` (relative).
        epsilon_kind : {"relative", "additive", "absolute"} or None, default=None
            How ``epsilons`` are read (None: the set's own ``epsilon_kind``).
        kind : {"ratio", "difference"}, default="ratio"
            MR as a loss ratio ``e_switch / e_orig`` or difference ``e_switch - e_orig``.
        conditional : bool, default=False
            Conditional MCR: permute within ``strata`` only.
        strata : array-like of shape (n_samples,), default=None
            Stratum of each row for ``conditional=True`` (None: :func:`~rashomon.make_strata`).
        tol : float, default=2**-20
            Relative tolerance of the γ-search at each end.
        max_iter : int, default=100
            Largest number of γ-steps per end.
        progress : bool, default=False
            Show a progress bar over the ε values.

        Returns
        -------
        MCREnvelope
            The certified bounds at every ε (``to_frame()``, ``bounds(eps)``), the members attaining them, and
            ``plot()`` / ``plot_band()``.
        """
        return envelope_of(self, features, epsilons, epsilon_kind, kind, conditional, strata, tol, max_iter, progress)

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
        """Lowest and highest partial dependence of ``feature`` over the set (see :func:`rashomon.rashomon_pd_band`).

        Parameters
        ----------
        feature : str or int
            The column whose partial dependence is bounded.
        grid : array-like, default=None
            The values at which PD is evaluated (None: ``grid_resolution`` points between ``percentiles``).
        grid_resolution : int, default=20
            Number of grid points when ``grid`` is None.
        percentiles : tuple of float, default=(0.05, 0.95)
            Lower and upper percentiles of the column spanned by the grid.
        tol : float, default=1e-9
            Tolerance of the exact ranges at each grid value.

        Returns
        -------
        RashomonPDBand
            The lowest and highest PD at each grid value, with the members attaining them.
        """
        return pd_band_of(self, feature, grid, grid_resolution, percentiles, tol)


def problem_of(rs, features, conditional, strata, func):
    """The body of :meth:`MCRQueries.problem` on the set ``rs``."""
    from ..model_classes.quadratics import MCRProblem

    rs._check_fitted("problem")
    if rs.loss_ != "squared_error":  # no quadratic e_orig / e_switch forms
        raise RashomonInputError(
            f"{func} needs a quadratic class (loss='squared_error'); {type(rs.model_class).__name__} "
            f"uses loss={rs.loss_!r}. Use model_class_reliance / envelope for its MCR."
        )
    group = rs._group(features, func)
    if conditional and strata is not None and any_dask(strata):  # a Dask column: stratified block sums, one pass
        codes = dask_strata(strata, rs.X_, func)
    else:
        codes = rs._strata(conditional, strata, group, func)
    es = rs.parametrization_.e_switch(
        rs.X_, rs.y_, rs.sample_weight_, group, codes, cache=rs._cache if codes is None else None
    )
    names = tuple(rs._columns[i] if rs._columns else f"x{i}" for i in group)
    return MCRProblem(rs.e_orig_form_, es, rs.parametrization_, names)


def envelope_of(rs, features, epsilons, epsilon_kind, kind, conditional, strata, tol, max_iter, progress):
    """The body of :meth:`MCRQueries.envelope` on the set ``rs``."""
    func = "RashomonSet.envelope"
    rs._check_fitted("envelope")
    epsilon_kind = rs.epsilon_kind if epsilon_kind is None else epsilon_kind
    eps_in = (
        np.geomspace(0.005, 0.5, 20) if epsilons is None else check_epsilons(epsilons, epsilon_kind, func, "epsilons")
    )
    abs_eps = np.array(
        [epsilon_threshold(float(e), epsilon_kind, rs.e_ref_, rs.e_min_, func, rs.e_null_) for e in eps_in]
    )
    if rs.loss_ != "squared_error":  # classifier classes: rashomon/sets/margin/_envelope.py
        from .margin import margin_envelope

        return margin_envelope(
            rs,
            features,
            abs_eps,
            kind=kind,
            conditional=conditional,
            strata=strata,
            tol=tol,
            max_iter=max_iter,
            progress=progress,
        )
    srch = rs.searcher(features, kind, conditional=conditional, strata=strata, tol=tol, max_iter=max_iter, func=func)
    order = np.argsort(abs_eps)
    results: list = [None] * len(abs_eps)
    it = order
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(order, desc="MCR envelope")
    start: dict = {"lower": None, "upper": None}
    for i in it:
        eps = abs_eps[i]
        degenerate = rs._at_e_min(eps)
        if not degenerate:
            for side in ("lower", "upper"):
                srch.search(side, eps, start=start[side])
                g = srch.best_gamma(side, eps)
                start[side] = g if np.isfinite(g) else None
        results[i] = search_result(srch, eps, rs.e_ref_, rs.reference_theta_, tol, degenerate=degenerate)
    return MCREnvelope(
        epsilons=abs_eps,
        lower=np.array([r.lower for r in results]),
        upper=np.array([r.upper for r in results]),
        results=results,
        steps=list(srch.steps),
        kind=kind,
        features=srch.prob.feature_names,
        e_ref=rs.e_ref_,
        e_min=rs.e_min_,
    )


def pd_band_of(rs, feature, grid, grid_resolution, percentiles, tol):
    """The body of :meth:`MCRQueries.pd_band` on the set ``rs``."""
    from .rows import pd_band

    rs._check_fitted("pd_band")
    return pd_band(rs, feature, grid, grid_resolution, percentiles, tol)
