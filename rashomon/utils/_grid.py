"""The partial-dependence grid rule (shared by PD, uncertainty PD and learner PD)."""

from __future__ import annotations

import numpy as np

__all__ = ["feature_grid"]


def feature_grid(x, grid_resolution, percentiles, categorical):
    """scikit-learn's grid rule: the unique values when there are fewer than
    ``grid_resolution`` (or the feature is categorical), else evenly spaced points
    between the ``percentiles`` (``scipy.stats.mstats.mquantiles``, as sklearn)."""
    from scipy.stats.mstats import mquantiles

    vals = np.unique(x)
    if categorical or len(vals) < grid_resolution:
        return vals
    lo, hi = np.asarray(mquantiles(x, prob=percentiles))
    if np.isclose(lo, hi):
        return vals
    return np.linspace(lo, hi, grid_resolution)
