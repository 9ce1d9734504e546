"""Model reliance (MR) of fitted models: exact all-pairs e_switch, divide, permutations, conditional.

Names load on first use (``rashomon.utils.lazy.lazy_exports``).
"""

from ..utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "model_reliance": "._reliance",
        "feature_reliance": "._reliance",
        "conditional_model_reliance": "._conditional",
        "make_strata": "._conditional",
        "ModelRelianceResult": "._reliance",
        "FeatureRelianceResult": "._reliance",
    },
)
