"""Inference over refits: learner-PFI and learner-PD with corrected intervals, corrected t-test, PIMP.

Names load on first use (``rashomon.utils.lazy.lazy_exports``).
"""

from ..utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "learner_importance": "._inference",
        "learner_pd": "._inference",
        "model_importance_ci": "._inference",
        "corrected_resampled_ttest": "._pvalues",
        "pimp": "._pvalues",
        "LearnerImportanceResult": "._results",
        "LearnerPDResult": "._results",
        "TTestResult": "._results",
        "PIMPResult": "._results",
    },
)
