"""rashomon: how much does *any* good model rely on a variable?

Model reliance (MR) of fitted models and model class reliance (MCR) over
Rashomon sets (Fisher, Rudin & Dominici, JMLR 2019).
"""
from . import datasets
from ._audit import AuditResult, GroupAudit, audit
from ._conditional import conditional_model_reliance, make_strata
from ._inference import (
    LearnerImportanceResult,
    LearnerPDResult,
    PIMPResult,
    TTestResult,
    corrected_resampled_ttest,
    learner_importance,
    learner_pd,
    model_importance_ci,
    pimp,
)
from ._kernel import KernelModelClass
from ._losses import Loss
from ._partial_dependence import (
    PartialDependenceResult,
    PDImportanceResult,
    RashomonPDBand,
    partial_dependence,
    pd_importance,
    rashomon_pd_band,
)
from ._mcr import MCREnvelope, MCRModel, MCRResult, MCRStep, mcr_envelope, model_class_reliance
from ._model_classes import LinearModelClass
from ._reliance import FeatureRelianceResult, ModelRelianceResult, feature_reliance, model_reliance
from ._uncertainty import (
    UncertaintyImportanceResult,
    entropy_importance,
    likelihood_importance,
    predictive_distribution,
    uncertainty_pd,
)
from ._validation import RashomonInputError

__version__ = "0.1.0"

__all__ = [
    "datasets",
    "audit",
    "AuditResult",
    "GroupAudit",
    "Loss",
    "RashomonInputError",
    "ModelRelianceResult",
    "FeatureRelianceResult",
    "model_reliance",
    "feature_reliance",
    "conditional_model_reliance",
    "make_strata",
    "partial_dependence",
    "pd_importance",
    "rashomon_pd_band",
    "PartialDependenceResult",
    "PDImportanceResult",
    "RashomonPDBand",
    "likelihood_importance",
    "entropy_importance",
    "uncertainty_pd",
    "predictive_distribution",
    "UncertaintyImportanceResult",
    "learner_importance",
    "learner_pd",
    "model_importance_ci",
    "corrected_resampled_ttest",
    "pimp",
    "LearnerImportanceResult",
    "LearnerPDResult",
    "TTestResult",
    "PIMPResult",
    "LinearModelClass",
    "KernelModelClass",
    "model_class_reliance",
    "mcr_envelope",
    "MCRResult",
    "MCREnvelope",
    "MCRModel",
    "MCRStep",
]
