"""Access to the classifier engine's fitted pieces from a :class:`~rashomon.RashomonSet`."""

from __future__ import annotations

from typing import Any

__all__ = ["margin_set"]


def margin_set(rs: Any) -> Any:
    """The fitted classifier pieces (:class:`~rashomon.sets.margin.MarginSet`) of a logistic / hinge set, else None."""
    return rs.__dict__.get("_margin") if rs.loss_ in ("log_loss", "logistic", "hinge") else None
