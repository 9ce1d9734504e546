"""What a :class:`~rashomon.RashomonSet` shows in a notebook and in its repr (:class:`~rashomon.utils.DisplayMixin`)."""

from __future__ import annotations

from typing import Any

__all__ = ["set_display"]


def set_display(rs: Any) -> tuple[dict, list]:
    """The class, ε (as given, and absolute), e_ref, e_min, rows and features; ``fitted=False`` before ``fit``."""
    fields: dict[str, Any] = {
        "model_class": type(rs.model_class).__name__,
        "epsilon": f"{rs.epsilon!r} ({rs.epsilon_kind})",
    }
    if not hasattr(rs, "epsilon_abs_"):
        return fields | {"fitted": False}, []
    X = getattr(rs, "X_", None)
    n_rows = X.shape[0] if X is not None and hasattr(X, "ndim") else getattr(X, "n_rows", None)
    names = list(rs._columns) if getattr(rs, "_columns", None) else None
    fields |= {"epsilon_abs_": rs.epsilon_abs_, "e_ref_": rs.e_ref_, "e_min_": rs.e_min_, "loss_": rs.loss_}
    if n_rows is not None:
        fields["n_rows"] = int(n_rows)
    fields["features"] = names if names is not None else rs.n_features_in_
    return fields, []
