"""The null model (the best constant model of the class) on every set, the explained ε, and defaults that say so."""

from __future__ import annotations

import numpy as np
import pytest

from rashomon import LinearModelClass, RashomonSet
from rashomon.utils.validation import RashomonInputError


def test_multiplicity_regression_needs_threshold_unless_target_is_binary():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = X[:, 0] + rng.normal(size=80)
    rs = RashomonSet(LinearModelClass(), 0.1).fit(X, y)
    with pytest.raises(RashomonInputError, match="'threshold' parameter of RashomonSet.multiplicity"):
        rs.multiplicity()
    assert rs.multiplicity(threshold=0.0).threshold == 0.0
    yb = (y > 0).astype(float)  # a 0/1 target keeps the default 0.5
    rb = RashomonSet(LinearModelClass(), 0.1).fit(X, yb)
    assert rb.multiplicity().threshold == 0.5
