"""Public entry points of the out-of-core (Dask) path, for other subpackages and advanced use.

``RashomonSet.fit`` routes Dask input here by itself; these are the pieces other functions
(e.g. the linear closed form of model reliance, the audit on a Dask table) need. See
``docs/scaling.md``.
"""

from ._row_statistics import RowStatistics
from .scale import (
    any_dask,
    dask_dictionary,
    dask_reliance_losses,
    dask_row_statistics,
    dask_split_statistics,
    fit_statistics,
    is_dask,
    kernel_member_loss,
    linear_model_losses,
    reference_from_statistics,
    ridge_loo_statistics,
    transform_statistics,
)

__all__ = [
    "is_dask",
    "any_dask",
    "dask_row_statistics",
    "linear_model_losses",
    "dask_reliance_losses",
    "RowStatistics",
    "fit_statistics",
    "dask_split_statistics",
    "transform_statistics",
    "ridge_loo_statistics",
    "reference_from_statistics",
    "dask_dictionary",
    "kernel_member_loss",
]
