"""The classifier engine: Rashomon sets of margin losses (logistic, hinge).

The quadratic classes (squared loss: linear, kernel) run the γ-search of :mod:`rashomon.sets` on exact
one- and two-constraint QCQPs. The margin classes run convex steps for what is convex (the loss, the
norm ball, ranges of linear functionals) and certified relaxations for what is not (the switched loss
of MCR). Modules:

- ``_mcr``: fitting the set's pieces (:class:`MarginSet`) and MCR at both ends;
- ``_terms``: exact all-pairs switched sums over row classes;
- ``_solve``: certified solves of the smoothed problems; ``_ascent`` / ``_descent``: inner members;
- ``_bounds``, ``_secant``: outer bounds (γ = 0, surrogates, the slab bound);
- ``_ranges``: ranges of linear functionals (predictions, coefficients, PD band); ``_batch``, ``_polish``: all
  rows at once (batched KKT-Newton; the hinge's active-set polish), certified per row;
- ``_screen``: which rows' decisions the set can flip (multiplicity), screened by members and outer bounds;
- ``_sample``: members by hit-and-run with an exact membership oracle;
- ``_envelope``: MCR over ε.
"""

from ._envelope import margin_envelope
from ._mcr import MarginSet, fit_margin_set, margin_mcr
from ._ranges import MarginFunctionalRange
from ._sample import sample_margin_members, set_losses
from ._score_bounds import row_score_bounds
from ._screen import screen_of
from ._slabs import upper_hull
from ._terms import MarginTerms

__all__ = [
    "MarginFunctionalRange",
    "MarginSet",
    "MarginTerms",
    "fit_margin_set",
    "margin_envelope",
    "margin_mcr",
    "row_score_bounds",
    "sample_margin_members",
    "screen_of",
    "set_losses",
    "upper_hull",
]
