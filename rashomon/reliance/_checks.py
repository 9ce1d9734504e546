"""Checks of the fitted model a reliance is computed for: fitted at all, and not fitting y to rounding."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..utils.validation import RashomonInputError

__all__ = ["check_fitted", "check_not_rounding", "ROUNDING_LOSS"]


def check_fitted(estimator: Any, func: str, param: str = "estimator") -> None:
    """A scikit-learn estimator must be fitted (scikit-learn's check_is_fitted, its message made ours); other
    models (callables, objects with predict) are taken as they are."""
    if not (hasattr(estimator, "fit") and hasattr(estimator, "get_params")):
        return
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise RashomonInputError(
            f"The '{param}' parameter of {func} must be a fitted model. Got an unfitted "
            f"{type(estimator).__name__} instead; call its fit(X, y) first."
        ) from None
    except TypeError:
        return


#: e_orig at or below this fraction of mean(y²) (squared error; of mean|y| for absolute error) is rounding: the
#: residuals are within about 1e-12 of y's size (a fitted interpolator leaves 1e-31 of mean(y²); noise of 1e-9
#: leaves 5e-20), so e_orig has no correct digits and the ratio e_switch / e_orig none either (it read 2.2e28)
ROUNDING_LOSS = {"squared_error": 1e-24, "absolute_error": 1e-12}


def check_not_rounding(prep: Any, e_orig: float, func: str) -> None:
    """A clear error for a model that fits y to rounding (e_orig > 0 but within rounding of 0): its ratio is noise.
    An e_orig of exactly 0 keeps its exact answer (a ratio of inf, or 1 when switching costs nothing)."""
    rel = ROUNDING_LOSS.get(prep.loss.name)
    if rel is None or not e_orig > 0:
        return
    y = np.asarray(prep.y, dtype=float)
    size = float(np.mean(y * y)) if prep.loss.name == "squared_error" else float(np.mean(np.abs(y)))
    if e_orig <= rel * size:
        what = "mean(y²)" if prep.loss.name == "squared_error" else "mean|y|"
        raise RashomonInputError(
            f"The 'estimator' parameter of {func} must not fit y to rounding: e_orig then has no correct digits and "
            "the ratio e_switch / e_orig is noise (an exact interpolator's ratio is infinite on any feature it uses). "
            f"Got e_orig = {e_orig:.3g}, {e_orig / size:.2g} of {what}, below the {rel:g} at which the residuals are "
            "double-precision rounding, instead. Evaluate the model on held-out rows, where it does not fit exactly."
        )
