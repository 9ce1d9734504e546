"""Display classes. matplotlib is imported inside ``plot()`` so ``import rashomon`` stays light."""
from ._inference_display import LearnerImportanceDisplay, LearnerPDDisplay, PIMPDisplay
from ._mcr_display import MCRBandDisplay, MCREnvelopeDisplay
from ._pd_display import PDDisplay, RashomonPDBandDisplay, UncertaintyImportanceDisplay, UncertaintyPDDisplay
from ._reliance_display import RelianceDisplay

__all__ = ["RelianceDisplay", "MCREnvelopeDisplay", "MCRBandDisplay", "PDDisplay", "RashomonPDBandDisplay",
           "UncertaintyImportanceDisplay", "UncertaintyPDDisplay", "LearnerImportanceDisplay", "LearnerPDDisplay",
           "PIMPDisplay"]
