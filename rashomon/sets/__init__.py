"""The Rashomon set (:class:`~rashomon.RashomonSet`), its γ-search, certified bounds, envelope and PD band.

Names load on first use (``rashomon.utils.lazy.lazy_exports``); adding one is one line below.
"""

from ..utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RashomonSet": "._rashomon_set",
        "EPSILON_KINDS": "._epsilon",
        "epsilon_threshold": "._epsilon",
        "EPSILON_RULES": "._epsilon_rules",
        "EpsilonChoice": "._epsilon_rules",
        "select_epsilon": "._epsilon_rules",
        "model_class_reliance": "._api",
        "mcr_envelope": "._api",
        "rashomon_pd_band": "._api",
        "MCRResult": "._results",
        "MCREnvelope": "._results",
        "MCRModel": "._steps",
        "MCRStep": "._steps",
        "RashomonPDBand": "._pd_band",
        "GammaSearch": "._search",
        "envelope_loss": "._steps",
        "mr_value": "._steps",
        "step_bound": "._steps",
        "bootstrap_mcr": "._bootstrap",
        "BootstrapMCR": "._bootstrap",
        "LinearFunctionalRange": "._functional",
        "FunctionalRange": "._range_results",
        "PredictionRange": "._range_results",
        "CoefRange": "._range_results",
        "Multiplicity": "._multiplicity",
        "RashomonSample": "._sampling",
        "ImportanceCloud": "._sampling",
        "DisparityRange": "._fair_results",
        "DisparityFrontier": "._fair_results",
        "LeastDisparate": "._fair_results",
        "RelianceDifference": "._order_results",
        "RelianceOrder": "._order_results",
    },
)
