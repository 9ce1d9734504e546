"""What a :class:`~rashomon.RashomonSet` shows in a notebook and in its repr (:class:`~rashomon.utils.DisplayMixin`)."""

from __future__ import annotations

from typing import Any

from ._epsilon import null_notes

__all__ = ["set_display"]


def set_display(rs: Any) -> tuple[dict, list]:
    """The class, ε (as given, and absolute), e_min, e_ref and e_null side by side with the share of the explained
    loss the set keeps, rows and features; ``fitted=False`` before ``fit``. A note (a field in the text repr, a
    line in the HTML) when the set contains a constant model or keeps less than half of the explained loss."""
    fields: dict[str, Any] = {
        "model_class": type(rs.model_class).__name__,
        "epsilon": f"{rs.epsilon!r} ({rs.epsilon_kind})",
    }
    if not hasattr(rs, "epsilon_abs_"):
        return fields | {"fitted": False}, []
    X = getattr(rs, "X_", None)
    n_rows = X.shape[0] if X is not None and hasattr(X, "ndim") else getattr(X, "n_rows", None)
    names = list(rs._columns) if getattr(rs, "_columns", None) else None
    fields |= {"e_min_": rs.e_min_, "e_ref_": rs.e_ref_, "epsilon_abs_": rs.epsilon_abs_, "e_null_": rs.e_null_}
    fields["explained_kept"] = f"{rs.explained_share_:.1%}"
    if rs.loss_ != getattr(rs.model_class, "loss", "squared_error"):  # a classifier class's name says its loss
        fields["loss_"] = rs.loss_
    if n_rows is not None:
        fields["n_rows"] = int(n_rows)
    fields["features"] = names if names is not None else rs.n_features_in_
    notes = null_notes(rs.e_min_, rs.e_null_, rs.epsilon_abs_)
    if notes:
        short = "the set contains a constant model" if rs.epsilon_abs_ >= rs.e_null_ else "keeps < 50 % explained"
        fields = {"note": short} | fields
    return fields, [(f"Note: {n}.", None) for n in notes]
