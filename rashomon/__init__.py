"""rashomon: how much does *any* good model rely on a variable?

Model reliance (MR) of fitted models and model class reliance (MCR) over
Rashomon sets (Fisher, Rudin & Dominici, JMLR 2019). The core object is
:class:`~rashomon.RashomonSet`: a model class, data, a reference inside the class and ε,
fitted once and asked many questions.

Subpackages: :mod:`rashomon.sets` (the set and its queries),
:mod:`rashomon.model_classes`, :mod:`rashomon.reliance` (MR of fitted models),
:mod:`rashomon.inspection` (PD/ICE, uncertainty), :mod:`rashomon.inference`,
``rashomon.audit`` (audit, CLI, report), :mod:`rashomon.plotting`,
:mod:`rashomon.datasets`, :mod:`rashomon.solvers` (optimisation engines) and
:mod:`rashomon.utils`.

Public names load on first use (``import rashomon`` imports no numerical
library); ``from rashomon import X`` works for every name in ``__all__``.
"""

import sys
import types

from .utils.lazy import lazy_exports

__version__ = "0.3.0"

# Public name -> subpackage holding it. Adding a public name is one line here.
_EXPORTS = {
    "RashomonSet": ".sets",
    "model_class_reliance": ".sets",
    "mcr_envelope": ".sets",
    "rashomon_pd_band": ".sets",
    "MCRResult": ".sets",
    "MCREnvelope": ".sets",
    "FunctionalRange": ".sets",
    "PredictionRange": ".sets",
    "CoefRange": ".sets",
    "Multiplicity": ".sets",
    "RashomonSample": ".sets",
    "ImportanceCloud": ".sets",
    "EpsilonChoice": ".sets",
    "select_epsilon": ".sets",
    "MCRModel": ".sets",
    "MCRStep": ".sets",
    "RashomonPDBand": ".sets",
    "DisparityRange": ".sets",
    "DisparityFrontier": ".sets",
    "LeastDisparate": ".sets",
    "RelianceDifference": ".sets",
    "RelianceOrder": ".sets",
    "ModelClass": ".model_classes",
    "ClassMember": ".model_classes",
    "ClassifierMember": ".model_classes",
    "LinearModelClass": ".model_classes",
    "KernelModelClass": ".model_classes",
    "LogisticModelClass": ".model_classes",
    "HingeModelClass": ".model_classes",
    "model_reliance": ".reliance",
    "feature_reliance": ".reliance",
    "conditional_model_reliance": ".reliance",
    "make_strata": ".reliance",
    "ModelRelianceResult": ".reliance",
    "FeatureRelianceResult": ".reliance",
    "partial_dependence": ".inspection",
    "pd_importance": ".inspection",
    "PartialDependenceResult": ".inspection",
    "PDImportanceResult": ".inspection",
    "likelihood_importance": ".inspection",
    "entropy_importance": ".inspection",
    "uncertainty_pd": ".inspection",
    "predictive_distribution": ".inspection",
    "UncertaintyImportanceResult": ".inspection",
    "learner_importance": ".inference",
    "learner_pd": ".inference",
    "model_importance_ci": ".inference",
    "corrected_resampled_ttest": ".inference",
    "pimp": ".inference",
    "LearnerImportanceResult": ".inference",
    "LearnerPDResult": ".inference",
    "TTestResult": ".inference",
    "PIMPResult": ".inference",
    "audit": ".audit",
    "AuditResult": ".audit",
    "GroupAudit": ".audit",
    "Loss": ".utils",
    "RashomonInputError": ".utils",
    "RashomonWarning": ".utils",
    "show_versions": ".utils",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, submodules=["datasets"])
__all__ += ["__version__"]


class _Package(types.ModuleType):
    """``rashomon.audit`` is the function :func:`~rashomon.audit.audit`, as it always was.

    Importing the subpackage ``rashomon.audit`` (the CLI does) would bind the module to that
    name; the binding is skipped so the attribute keeps resolving to the function (the
    subpackage stays in ``sys.modules``).
    """

    def __setattr__(self, name: str, value: object) -> None:
        if name == "audit" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
