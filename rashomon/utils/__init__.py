"""Shared utilities: input validation (one message template), losses, randomness and threading helpers.

Public so that every subpackage uses the same validation layer and helpers;
not part of the statistical API.
"""
from ._grid import feature_grid
from ._random import permutation_indices, permuted, single_blas_thread
from .losses import LOSS_NAMES, Loss, Predictor, get_loss
from .validation import RashomonInputError
from ._versions import show_versions

__all__ = [
    "feature_grid",
    "permutation_indices",
    "permuted",
    "single_blas_thread",
    "LOSS_NAMES",
    "Loss",
    "Predictor",
    "get_loss",
    "RashomonInputError",
    "show_versions",
]
