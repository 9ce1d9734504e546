"""The Rashomon set (:class:`RashomonSet`), its γ-search, certified bounds, envelope and PD band."""
from ._api import mcr_envelope, model_class_reliance, rashomon_pd_band
from ._epsilon import EPSILON_KINDS, epsilon_threshold
from ._pd_band import RashomonPDBand
from ._rashomon_set import RashomonSet
from ._results import MCREnvelope, MCRResult
from ._search import GammaSearch
from ._steps import MCRModel, MCRStep, envelope_loss, mr_value, step_bound

__all__ = [
    "RashomonSet",
    "EPSILON_KINDS",
    "epsilon_threshold",
    "model_class_reliance",
    "mcr_envelope",
    "rashomon_pd_band",
    "MCRResult",
    "MCREnvelope",
    "MCRModel",
    "MCRStep",
    "RashomonPDBand",
    "GammaSearch",
    "envelope_loss",
    "mr_value",
    "step_bound",
]
