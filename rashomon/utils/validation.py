"""Input validation shared by the public functions.

Every error names the argument and what was expected, following one template:
"The 'X' parameter of model_reliance must be ... Got ... instead."
"""

from __future__ import annotations

from ._checks import (  # noqa: F401  (re-exported: the one validation layer)
    MAX_MAGNITUDE,
    MAX_Y_MAGNITUDE,
    MIN_Y_MAGNITUDE,
    _one_feature,
    check_choice,
    check_finite,
    check_float,
    check_norm_bound,
    check_positive_grid,
    check_positive_int,
    check_sample_weight,
    check_strata,
    check_X,
    check_y,
    group_name,
    resolve_features,
    resolve_group,
    seed_from,
)
from ._errors import RashomonInputError, RashomonWarning, _param_error  # noqa: F401

# The declared-constraint layer (one constraint per parameter, checked by a decorator).
from ._inputs import (  # noqa: F401  (re-exported: the one validation layer)
    check_columns,
    check_feature_indices,
    check_functional,
    check_grid,
    check_memory,
    check_new_rows,
    check_relative_epsilon,
    feature_names_of,
    memory_limit,
)
from ._params import (  # noqa: F401  (re-exported: the one validation layer)
    AnyOf,
    Boolean,
    CallableC,
    Constraint,
    FiniteArray,
    Integral,
    NJobs,
    Options,
    Percentiles,
    PositiveGrid,
    RandomStateLike,
    Real,
    check_model_class_params,
    check_n_jobs,
    check_random_state,
    validate_params,
)
