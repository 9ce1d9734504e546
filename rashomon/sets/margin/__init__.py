"""The classifier engine: Rashomon sets of margin losses (logistic, hinge).

The quadratic classes (squared loss: linear, kernel) run the γ-search of :mod:`rashomon.sets` on exact
one- and two-constraint QCQPs. The margin classes run convex steps for what is convex (the loss, the
norm ball, ranges of linear functionals) and certified relaxations for what is not (the switched loss
of MCR). Modules:

- ``_mcr``: the set's pieces (:class:`MarginSet`) and MCR at both ends; ``_fit``: fitting a set;
- ``_terms``: exact all-pairs switched sums over row classes; ``_binned``: certified sums on cells of a feature's
  values (large sets);
- ``_solve``: certified solves of the smoothed problems; ``_ascent`` / ``_descent``: inner members;
- ``_bounds``, ``_secant``: outer bounds (γ = 0, surrogates, the slab bound);
- ``_ranges``: ranges of linear functionals (predictions, coefficients, PD band); ``_batch``, ``_hinge_exact``,
  ``_hinge_lp``: all rows at once (batched KKT-Newton; the hinge's exact active-set finish), certified per row;
- ``_screen``: which rows' decisions the set can flip (multiplicity), screened by members and outer bounds;
  ``_rays``: each undecided row's own line search (a member and a tangent plane of the loss, no Hessian);
  ``_inner``: an ellipsoid of members about every point evaluated, for every row;
- ``_sample``: members by hit-and-run with an exact membership oracle;
- ``_envelope``: MCR over ε;
- ``_access``: the fitted pieces of a :class:`~rashomon.RashomonSet` (``margin_set``).

Names load on first use (:func:`rashomon.utils.lazy.lazy_exports`).
"""

from ...utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "MarginFunctionalRange": "._ranges",
        "MarginSet": "._mcr",
        "MarginTerms": "._terms",
        "fit_margin_set": "._fit",
        "margin_envelope": "._envelope",
        "margin_mcr": "._mcr",
        "margin_set": "._access",
        "row_score_bounds": "._score_bounds",
        "sample_margin_members": "._sample",
        "screen_of": "._screen",
        "set_losses": "._sample",
        "upper_hull": "._slabs",
    },
)
