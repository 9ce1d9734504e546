"""The MCR result of a γ-search (:class:`~rashomon.sets.GammaSearch`, ``_search.py``) at one ε: the best
certified bounds and the members attaining them, after the consistency checks that decide whether the
result is called certified.
"""

from __future__ import annotations

import math

import numpy as np

from ...utils import one_blas_thread
from ...utils.validation import RashomonInputError
from .._results import MCRResult
from ._search import GammaSearch
from ._two_constraint import close_gap

__all__ = ["search_result"]


@one_blas_thread
def search_result(
    srch: GammaSearch, eps: float, e_ref: float, theta_ref: np.ndarray, tol: float, degenerate: bool = False
) -> MCRResult:
    """The MCR result at ε from the steps so far, after its consistency checks.

    Nothing is called certified unless ``lower <= MR(reference) <= upper`` (for a
    reference inside the set) and ``lower <= upper`` hold within ``tol`` and every step
    giving a reported bound passed its full KKT certificate. ``degenerate=True`` (ε_abs at
    e_min) answers exactly: the set is the loss minimiser, so both ends are its MR.
    """
    ref_model = srch.model(theta_ref)
    notes = []
    if degenerate:
        m = srch.model(srch.theta_min)
        assert m is not None  # theta_min is set
        Q = srch.prob.e_orig.Q
        ev = np.linalg.eigvalsh(Q)
        unique = ev[0] > 1e-10 * max(ev[-1], 1e-300)
        if not unique:
            notes.append(
                "epsilon_abs equals the least loss and e_orig is flat in some direction: the minimiser may not "
                "be unique, so the single value is not certified as MCR"
            )
        return MCRResult(
            lower=m.mr,
            upper=m.mr,
            lower_model=m,
            upper_model=m,
            lower_gap=0.0,
            upper_gap=0.0,
            lower_tight=True,
            upper_tight=True,
            gamma_lower=math.nan,
            gamma_upper=math.nan,
            kind=srch.kind,
            features=srch.prob.feature_names,
            epsilon_abs=float(eps),
            e_ref=float(e_ref),
            e_min=float(srch.e_min),
            reference_model=ref_model,
            steps=list(srch.steps),
            model_class=srch.prob.class_name,
            tol=tol,
            certified=bool(unique),
            lower_certified=bool(unique),
            upper_certified=bool(unique),
            notes="; ".join(notes),
        )
    out = {}
    for side in ("lower", "upper"):
        srch.recertify(side, eps)
        bound = srch.best_bound(side, eps)
        th, _ = srch.best_model(side, eps)
        gap = srch.gap(side, eps)
        if not gap <= tol * max(1.0, abs(bound)):  # a duality gap: solve the end with both constraints
            bound, th, gap, note = close_gap(srch, side, eps, tol, bound)
            notes += [note] if note else []
        out[side] = (
            bound,
            srch.model(th),
            gap,
            gap <= tol * max(1.0, abs(bound)) if np.isfinite(bound) else False,
            srch.best_gamma(side, eps),
        )
    if srch.kind == "ratio" and not np.isfinite(out["lower"][0]):
        out["lower"] = (0.0,) + out["lower"][1:]  # MR >= 0 always
    lower, upper = float(out["lower"][0]), float(out["upper"][0])
    # Losses are quadratic forms whose terms are of the size of their constants (mean y²), so each
    # value carries an error up to ~1e3·eps·k: the certified bounds are widened by what that error
    # can do to MR (for a ratio, relative to the least loss), so rounding never inverts or breaks them.
    k = max(abs(float(srch.prob.e_orig.k)), abs(float(srch.prob.e_switch.k)), abs(float(srch.e_min)))
    res = 1e3 * np.finfo(float).eps * k
    if srch.kind == "ratio":
        e_lo = max(float(srch.e_min), 1e-300)
        d_lo, d_up = res * (1 + abs(lower)) / e_lo, res * (1 + abs(upper)) / e_lo
    else:
        d_lo = d_up = 2 * res
    if max(d_lo, d_up) > 1e-9 * max(1.0, abs(lower), abs(upper)):
        notes.append(f"bounds widened by {max(d_lo, d_up):.3g} for the rounding of losses of size {k:.3g}")
    lower = max(lower - d_lo, 0.0) if srch.kind == "ratio" else lower - d_lo
    upper = upper + d_up
    certified = all(s.certified for s in srch.steps)
    lo_cert = up_cert = True
    slack = 4 * tol * max(1.0, abs(lower), abs(upper))
    if lower > upper + slack:
        raise RashomonInputError(
            f"model_class_reliance: consistency check failed (lower {lower:.10g} > upper {upper:.10g} beyond the "
            "search tolerance and the loss rounding); no interval is reported. Please report this data."
        )
    if lower > upper:  # within the tolerance: the interval is the point between them
        lower = upper = 0.5 * (lower + upper)
    if ref_model is not None and ref_model.e_orig <= eps * (1 + 1e-12):
        if ref_model.mr < lower - slack:
            lo_cert = False
            notes.append(f"consistency check failed: MR(reference) = {ref_model.mr:.10g} < lower {lower:.10g}")
        if ref_model.mr > upper + slack:
            up_cert = False
            notes.append(f"consistency check failed: MR(reference) = {ref_model.mr:.10g} > upper {upper:.10g}")
    return MCRResult(
        lower=lower,
        upper=upper,
        lower_model=out["lower"][1],
        upper_model=out["upper"][1],
        lower_gap=float(out["lower"][2]),
        upper_gap=float(out["upper"][2]),
        lower_tight=bool(out["lower"][3] and lo_cert),
        upper_tight=bool(out["upper"][3] and up_cert),
        gamma_lower=float(out["lower"][4]),
        gamma_upper=float(out["upper"][4]),
        kind=srch.kind,
        features=srch.prob.feature_names,
        epsilon_abs=float(eps),
        e_ref=float(e_ref),
        e_min=float(srch.e_min),
        reference_model=ref_model,
        steps=list(srch.steps),
        model_class=srch.prob.class_name,
        tol=tol,
        certified=bool(certified and lo_cert and up_cert),
        lower_certified=lo_cert,
        upper_certified=up_cert,
        notes="; ".join(notes),
    )
