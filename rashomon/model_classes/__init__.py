"""Model classes: each turns data into the quadratic forms a Rashomon set needs (see ``rashomon/model_classes/base.py``).

Names load on first use (``rashomon.utils.lazy.lazy_exports``).
"""

from ..utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ModelClass": ".base",
        "Parametrization": ".base",
        "ClassMember": ".base",
        "ClassifierMember": ".base",
        "LinearModelClass": "._linear",
        "LinearParametrization": "._linear",
        "KernelModelClass": "._kernel",
        "LogisticModelClass": "._classifiers",
        "HingeModelClass": "._classifiers",
        "MarginLoss": "._classifiers",
        "encode_margin_labels": "._labels",
        "KernelParametrization": "._kernel_param",
        "kernel_switch_block": "._kernel_stats",
        "kernel_switch_from_sums": "._kernel_stats",
        "kernel_switch_size": "._kernel_stats",
        "kernel_norm_bound": "._kernel",
        "nadaraya_watson_gamma": "._kernel",
        "MCRProblem": ".quadratics",
        "Quadratic": ".quadratics",
        "ridge_loo": "._linear",
        "switched_design_moments": ".quadratics",
    },
)
