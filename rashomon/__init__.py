"""rashomon: how much does *any* good model rely on a variable?

Model reliance (MR) of fitted models and model class reliance (MCR) over
Rashomon sets (Fisher, Rudin & Dominici, JMLR 2019). The core object is
:class:`RashomonSet`: a model class, data, a reference inside the class and ε,
fitted once and asked many questions.

Subpackages: :mod:`rashomon.sets` (the set and its queries),
:mod:`rashomon.model_classes`, :mod:`rashomon.reliance` (MR of fitted models),
:mod:`rashomon.inspection` (PD/ICE, uncertainty), :mod:`rashomon.inference`,
:mod:`rashomon.audit` (audit, CLI, report), :mod:`rashomon.plotting`,
:mod:`rashomon.datasets`, :mod:`rashomon.solvers` (optimisation engines) and
:mod:`rashomon.utils`.
"""
from . import datasets
from .audit import AuditResult, GroupAudit, audit
from .inference import (
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
from .inspection import (
    PartialDependenceResult,
    PDImportanceResult,
    UncertaintyImportanceResult,
    entropy_importance,
    likelihood_importance,
    partial_dependence,
    pd_importance,
    predictive_distribution,
    uncertainty_pd,
)
from .model_classes import ClassMember, KernelModelClass, LinearModelClass, ModelClass
from .reliance import (
    FeatureRelianceResult,
    ModelRelianceResult,
    conditional_model_reliance,
    feature_reliance,
    make_strata,
    model_reliance,
)
from .sets import (
    MCREnvelope,
    MCRModel,
    MCRResult,
    MCRStep,
    RashomonPDBand,
    RashomonSet,
    mcr_envelope,
    model_class_reliance,
    rashomon_pd_band,
)
from .utils import Loss, RashomonInputError, show_versions

__version__ = "0.2.0"

__all__ = [
    "RashomonSet",
    "show_versions",
    "__version__",
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
    "ModelClass",
    "ClassMember",
    "LinearModelClass",
    "KernelModelClass",
    "model_class_reliance",
    "mcr_envelope",
    "MCRResult",
    "MCREnvelope",
    "MCRModel",
    "MCRStep",
]
