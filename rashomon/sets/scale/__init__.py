"""Scale: Dask arrays and DataFrames through sufficient statistics, and the bootstrap over resamples.

- ``_dask``: the out-of-core fit of a set (row statistics in one pass);
- ``_dask_kernel``, ``_dask_kernel_rows``: the kernel class on Dask (dictionary features, block sums);
- ``_dask_ridge``: a train / held-out analysis on one Dask table (used by the audit);
- ``_logistic_cv``: cross-validated L2 logistic regression by passes (folds from a row hash; the classifier
  audit's norm bound, in memory and on Dask), ``_dask_margin_reference``: the logistic class on Dask with a
  given reference (the audit's held-out set);
- ``_bootstrap``: MR and MCR over resamples as row weights, warm-started.

:mod:`rashomon.sets.out_of_core` is the public entry point of the out-of-core path.

Names load on first use (:func:`rashomon.utils.lazy.lazy_exports`).
"""

from ...utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "any_dask": "._dask_inputs",
        "block_sums": "._dask_inputs",
        "canonical_array": "._dask_inputs",
        "bootstrap_mcr": "._bootstrap",
        "BootstrapMCR": "._bootstrap",
        "dask_margin_ranges": "._dask_margin_ranges",
        "dask_reliance_losses": "._dask_reliance",
        "dask_row_statistics": "._dask",
        "dask_reducer": "._logistic_cv",
        "fit_dask_margin_reference": "._dask_margin_reference",
        "folds_from_hash": "._logistic_cv",
        "memory_reducer": "._logistic_cv",
        "penalised_logistic_cv": "._logistic_cv",
        "dask_strata": "._dask_kernel_rows",
        "dask_dictionary": "._dask_kernel",
        "kernel_member_loss": "._dask_kernel",
        "DaskKernelRows": "._dask_kernel_rows",
        "dask_split_statistics": "._dask_ridge",
        "fit_dask": "._dask",
        "fit_statistics": "._dask",
        "is_dask": "._dask_inputs",
        "is_dask_margin": "._dask_margin",
        "linear_model_losses": "._dask",
        "reference_from_statistics": "._dask_ridge",
        "ridge_loo_statistics": "._dask_ridge",
        "transform_statistics": "._dask_ridge",
    },
)
