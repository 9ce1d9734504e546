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
        "RashomonPDBand": ".rows",
        "GammaSearch": ".quadratic",
        "envelope_loss": "._steps",
        "mr_value": "._steps",
        "step_bound": "._steps",
        "bootstrap_mcr": ".scale",
        "BootstrapMCR": ".scale",
        "LinearFunctionalRange": ".rows",
        "FunctionalRange": ".rows",
        "PredictionRange": ".rows",
        "CoefRange": ".rows",
        "Multiplicity": ".rows",
        "RashomonSample": ".rows",
        "ImportanceCloud": ".rows",
        "DisparityRange": ".fairness",
        "DisparityFrontier": ".fairness",
        "LeastDisparate": ".fairness",
        "RelianceDifference": ".fairness",
        "RelianceOrder": ".fairness",
    },
)
