"""Fairness queries over a Rashomon set: disparity ranges, the least disparate good model, reliance differences
and the certified order of features.

- ``_fairness``: the queries as methods of :class:`~rashomon.RashomonSet` (:class:`FairnessQueries`);
- ``_fair_inputs``, ``_fair_metrics``: the sensitive labels and the group metrics (fairlearn's definitions);
- ``_disparity``, ``_rowwise``, ``_joint``, ``_joint_lagrange``, ``_step_bound``, ``_step_bnb``, ``_step_search``:
  certified disparity ranges and their members;
- ``_least``: the least disparate member, its frontier over ε and a benchmark's place;
- ``_order``, ``_order_margin``: reliance differences and orders (quadratic and classifier classes);
- ``_fair_results``, ``_order_results``: the typed results.

Names load on first use (:func:`rashomon.utils.lazy.lazy_exports`).
"""

from ...utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DisparityFrontier": "._fair_results",
        "DisparityRange": "._fair_results",
        "FairnessQueries": "._fairness",
        "LeastDisparate": "._fair_results",
        "RelianceDifference": "._order_results",
        "RelianceOrder": "._order_results",
    },
)
