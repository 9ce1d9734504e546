"""Partial dependence, ICE, PD importance and importance for predictive uncertainty."""
from ._partial_dependence import PartialDependenceResult, PDImportanceResult, partial_dependence, pd_importance
from ._uncertainty import (
    UncertaintyImportanceResult,
    entropy_importance,
    likelihood_importance,
    predictive_distribution,
    uncertainty_pd,
)

__all__ = [
    "partial_dependence",
    "pd_importance",
    "PartialDependenceResult",
    "PDImportanceResult",
    "likelihood_importance",
    "entropy_importance",
    "uncertainty_pd",
    "predictive_distribution",
    "UncertaintyImportanceResult",
]
