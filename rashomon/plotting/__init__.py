"""Display classes. matplotlib is imported inside ``plot()`` so ``import rashomon`` stays light.

Names load on first use (``rashomon.utils.lazy.lazy_exports``).
"""

from ..utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RelianceDisplay": "._reliance_display",
        "MCREnvelopeDisplay": "._mcr_display",
        "MCRBandDisplay": "._mcr_display",
        "PDDisplay": "._pd_display",
        "RashomonPDBandDisplay": "._pd_display",
        "UncertaintyImportanceDisplay": "._pd_display",
        "UncertaintyPDDisplay": "._pd_display",
        "LearnerImportanceDisplay": "._inference_display",
        "LearnerPDDisplay": "._inference_display",
        "PIMPDisplay": "._inference_display",
        "RangeDisplay": "._range_display",
        "PredictionRangeDisplay": "._range_display",
        "SampleDisplay": "._range_display",
        "ImportanceCloudDisplay": "._range_display",
        "DisparityRangeDisplay": "._fairness_display",
        "DisparityFrontierDisplay": "._fairness_display",
        "RelianceOrderDisplay": "._fairness_display",
        "plain_text": "._layout",
    },
)
