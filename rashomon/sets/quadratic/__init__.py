"""The γ-search engine of the quadratic classes (squared loss: linear, kernel), and of linear models under other
convex losses through cvxpy.

- ``_search``: the γ-search, its certified bounds and the envelope (:class:`GammaSearch`);
- ``_search_result``: the best certified bounds of a search at one ε and their attaining members;
- ``_two_constraint``: MCR ends solved with both constraints exactly where the γ-path jumps;
- ``_convex``: MCR of linear models under convex non-quadratic losses (absolute; the old hinge / logistic path).

Names load on first use (:func:`rashomon.utils.lazy.lazy_exports`).
"""

from ...utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "convex_loss_mcr": "._convex",
        "e_orig_program": "._convex",
        "encode_labels": "._convex",
        "GammaSearch": "._search",
        "search_result": "._search_result",
    },
)
