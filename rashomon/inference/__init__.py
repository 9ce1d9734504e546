"""Inference over refits: learner-PFI and learner-PD with corrected intervals, corrected t-test, PIMP."""
from ._inference import (
    corrected_resampled_ttest,
    learner_importance,
    learner_pd,
    model_importance_ci,
    pimp,
)
from ._results import LearnerImportanceResult, LearnerPDResult, PIMPResult, TTestResult

__all__ = [
    "learner_importance",
    "learner_pd",
    "model_importance_ci",
    "corrected_resampled_ttest",
    "pimp",
    "LearnerImportanceResult",
    "LearnerPDResult",
    "TTestResult",
    "PIMPResult",
]
