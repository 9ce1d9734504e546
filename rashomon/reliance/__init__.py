"""Model reliance (MR) of fitted models: exact all-pairs e_switch, divide, permutations, conditional."""
from ._conditional import conditional_model_reliance, make_strata
from ._reliance import FeatureRelianceResult, ModelRelianceResult, feature_reliance, model_reliance

__all__ = [
    "model_reliance",
    "feature_reliance",
    "conditional_model_reliance",
    "make_strata",
    "ModelRelianceResult",
    "FeatureRelianceResult",
]
