"""One-call functions: thin wrappers that fit a :class:`~rashomon.RashomonSet` and ask it one question."""

from __future__ import annotations

from typing import Any, Literal

from ..utils.validation import Boolean, Integral, Options, RandomStateLike, Real, validate_params
from ._rashomon_set import RashomonSet
from ._results import MCREnvelope, MCRResult

__all__ = ["model_class_reliance", "mcr_envelope", "rashomon_pd_band"]


@validate_params(
    {
        "epsilon_kind": Options(("relative", "additive", "absolute", "explained")),
        "kind": Options(("ratio", "difference")),
        "tol": Real(0.0, closed="neither"),
        "max_iter": Integral(1),
        "n_starts": Integral(1),
        "random_state": RandomStateLike(),
        "conditional": Boolean(),
        "max_time": Real(0.0, closed="neither", allow_none=True),
        "gap_tol": Real(0.0, closed="neither"),
    }
)
def model_class_reliance(
    model_class: Any,
    X: Any,
    y: Any,
    features: Any,
    *,
    epsilon: float = 0.1,
    epsilon_kind: Literal["relative", "additive", "absolute", "explained"] = "relative",
    reference: Any = None,
    kind: Literal["ratio", "difference"] = "ratio",
    tol: float = 2.0**-20,
    max_iter: int = 100,
    sample_weight: Any = None,
    loss: str | None = None,
    n_starts: int = 5,
    random_state: Any = 0,
    conditional: bool = False,
    strata: Any = None,
    max_time: float | None = None,
    gap_tol: float = 0.01,
) -> MCRResult:
    """Model class reliance: the range of MR over all good models of a class.

    ``RashomonSet(model_class, epsilon, epsilon_kind=..., reference=..., loss=...).fit(X, y,
    sample_weight).model_class_reliance(features, kind=..., ...)`` in one call; see
    :class:`~rashomon.RashomonSet` for the parameters and the meaning of ε (``max_time`` and ``gap_tol``:
    the anytime budget of the classifier classes' upper end, see :meth:`RashomonSet.model_class_reliance`).

    Returns
    -------
    MCRResult

    References
    ----------
    Fisher, Rudin & Dominici (2019), JMLR 20(177), §6 and Appendix A.
    """
    rs = RashomonSet(model_class, epsilon, epsilon_kind=epsilon_kind, reference=reference, loss=loss)
    rs.fit(X, y, sample_weight)
    return rs.model_class_reliance(
        features,
        kind=kind,
        conditional=conditional,
        strata=strata,
        tol=tol,
        max_iter=max_iter,
        n_starts=n_starts,
        random_state=random_state,
        max_time=max_time,
        gap_tol=gap_tol,
    )


@validate_params(
    {
        "epsilon_kind": Options(("relative", "additive", "absolute", "explained")),
        "kind": Options(("ratio", "difference")),
        "tol": Real(0.0, closed="neither"),
        "max_iter": Integral(1),
        "progress": Boolean(),
        "conditional": Boolean(),
    }
)
def mcr_envelope(
    model_class: Any,
    X: Any,
    y: Any,
    features: Any,
    *,
    epsilons: Any = None,
    epsilon_kind: Literal["relative", "additive", "absolute", "explained"] = "relative",
    reference: Any = None,
    kind: Literal["ratio", "difference"] = "ratio",
    tol: float = 2.0**-20,
    max_iter: int = 100,
    progress: bool = False,
    conditional: bool = False,
    strata: Any = None,
) -> MCREnvelope:
    """Trace MCR across ε values: ``RashomonSet(...).fit(X, y).envelope(features, epsilons)``.

    ``epsilons`` are read by ``epsilon_kind`` (default ``np.geomspace(0.005, 0.5, 20)``, relative).

    Returns
    -------
    MCREnvelope
    """
    rs = RashomonSet(model_class, 0.0, reference=reference).fit(X, y)
    return rs.envelope(
        features,
        epsilons,
        epsilon_kind=epsilon_kind,
        kind=kind,
        conditional=conditional,
        strata=strata,
        tol=tol,
        max_iter=max_iter,
        progress=progress,
    )


@validate_params(
    {
        "epsilon": Real(0.0),
        "epsilon_kind": Options(("relative", "additive", "absolute", "explained")),
        "grid_resolution": Integral(2),
        "tol": Real(0.0, closed="neither"),
    }
)
def rashomon_pd_band(
    model_class: Any,
    X: Any,
    y: Any,
    feature: Any,
    *,
    epsilon: float = 0.1,
    epsilon_kind: Literal["relative", "additive", "absolute", "explained"] = "relative",
    grid: Any = None,
    grid_resolution: int = 20,
    percentiles: tuple[float, float] = (0.05, 0.95),
    tol: float = 1e-9,
):
    """Minimum and maximum of PD(v) over all models of the class in the Rashomon set.

    ``RashomonSet(model_class, epsilon, epsilon_kind=...).fit(X, y).pd_band(feature, grid)``.
    Each end at each grid value is a linear objective over the set, solved exactly with a
    dual certificate (see :meth:`RashomonSet.pd_band`).

    Returns
    -------
    RashomonPDBand
    """
    rs = RashomonSet(model_class, epsilon, epsilon_kind=epsilon_kind).fit(X, y)
    return rs.pd_band(feature, grid, grid_resolution=grid_resolution, percentiles=percentiles, tol=tol)
