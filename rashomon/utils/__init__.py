"""Shared utilities: input validation (one message template), losses, randomness and threading helpers.

Public so that every subpackage uses the same validation layer and helpers;
not part of the statistical API. Names load on first use (``rashomon.utils.lazy``).
"""

from .lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "feature_grid": "._grid",
        "permutation_indices": "._random",
        "permuted": "._random",
        "one_blas_thread": "._threads",
        "one_blas_thread_methods": "._threads",
        "single_blas_thread": "._threads",
        "scope_inside": "._threads",
        "LOSS_NAMES": ".losses",
        "Loss": ".losses",
        "Predictor": ".losses",
        "get_loss": ".losses",
        "RashomonInputError": ".validation",
        "RashomonWarning": ".validation",
        "show_versions": "._versions",
        "FileWriteError": "._io",
        "atomic_write": "._io",
        "write_text": "._io",
        "write_bytes": "._io",
        "save_figure": "._io",
        "checkpoint": "._io",
        "DisplayMixin": "._display",
    },
)
