"""Partial dependence, ICE, PD importance and importance for predictive uncertainty.

Names load on first use (``rashomon.utils.lazy.lazy_exports``).
"""

from ..utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "partial_dependence": "._partial_dependence",
        "pd_importance": "._partial_dependence",
        "PartialDependenceResult": "._partial_dependence",
        "PDImportanceResult": "._partial_dependence",
        "likelihood_importance": "._uncertainty",
        "entropy_importance": "._uncertainty",
        "uncertainty_pd": "._uncertainty",
        "predictive_distribution": "._uncertainty",
        "UncertaintyImportanceResult": "._uncertainty",
    },
)
