"""Row queries of a Rashomon set: exact ranges of linear functionals (predictions, coefficients, contrasts), the
PD band, predictive multiplicity, members drawn from the set and the importance cloud.

- ``_functional``: the exact engine for the quadratic classes (:class:`LinearFunctionalRange`);
- ``_ranges``: the queries (``prediction_range``, ``coef_range``, ``functional_range``) on either engine, and
  their results (``_range_results``);
- ``_multiplicity``, ``_sampling``, ``_pd_band``.

Names load on first use (:func:`rashomon.utils.lazy.lazy_exports`).
"""

from ...utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "coef_range": "._ranges",
        "CoefRange": "._range_results",
        "engine_of": "._ranges",
        "functional_range": "._ranges",
        "FunctionalRange": "._range_results",
        "importance_cloud": "._sampling",
        "ImportanceCloud": "._sampling",
        "LinearFunctionalRange": "._functional",
        "multiplicity": "._multiplicity",
        "Multiplicity": "._multiplicity",
        "pd_band": "._pd_band",
        "prediction_range": "._ranges",
        "PredictionRange": "._range_results",
        "RashomonPDBand": "._pd_band",
        "RashomonSample": "._sampling",
        "sample_members": "._sampling",
    },
)
