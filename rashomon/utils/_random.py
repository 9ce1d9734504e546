"""Randomness helpers shared by the estimators (seeds, permutations); BLAS threads are in ``_threads``."""

from __future__ import annotations

import numpy as np

__all__ = ["permuted", "permutation_indices"]


def permuted(X: np.ndarray, group, perm: np.ndarray) -> np.ndarray:
    """A copy of X whose ``group`` columns are taken from rows ``perm`` (the rest unchanged)."""
    g = list(group)
    Xp = X.copy()
    Xp[:, g] = X[perm][:, g]
    return Xp


def permutation_indices(n: int, n_repeats: int, seed: int) -> list[np.ndarray]:
    """The permutations scikit-learn's permutation_importance draws from the same seed.

    One RandomState seeded once; each repeat shuffles an index array in place
    and scikit-learn applies it to the *already permuted* column, so the
    permutation in effect at repeat k is the composition of the first k
    shuffles (still uniformly distributed). All features share them.
    """
    rs = np.random.RandomState(seed)
    idx = np.arange(n)
    current = np.arange(n)
    out = []
    for _ in range(n_repeats):
        rs.shuffle(idx)
        current = current[idx]
        out.append(current.copy())
    return out
