"""The kernel class's seeded dictionary on Dask, with memory bounded per task.

In memory, ``KernelModelClass(dictionary=m)`` takes the sorted unique rows ``U = np.unique(X, axis=0)`` (rows in
lexicographic order) and keeps ``U[sort(RandomState(random_state).choice(len(U), m, replace=False))]``. The same
rows come from Dask without holding U anywhere:

1. with the row statistics, every partition gives up to 64 of its unique rows, evenly spaced in its order;
   their quantiles split the lexicographic order into B ranges (B from the table's size: about 64 MiB of
   distinct rows per range when they spread evenly);
2. one pass: each partition's unique rows are cut at the splitters, each range's pieces are merged up a tree
   of ``np.unique`` tasks, and only each range's count of distinct rows comes back, so ``len(U)`` and the
   offsets of the ranges in U are known; the seeded draw of ranks is then the in-memory one;
3. one pass: the same trees, for the ranges that hold drawn ranks, give the rows at those ranks.

Rows of different ranges differ, and the ranges are in order, so the rank of a row in U is its range's offset
plus its rank within the range: the dictionary is the in-memory one, bit for bit. Splitters drawn from a poor
sample only unbalance the ranges (more memory in one task), never change the result.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...utils.validation import RashomonInputError

__all__ = ["partition_sample", "draw_dictionary", "capped_dictionary"]

_RANGE_BYTES = 64 * 2**20
_SAMPLE = 64


def _struct(a: np.ndarray) -> np.ndarray:
    """Each row as one structured value: compared field by field, the order of ``np.unique(·, axis=0)``."""
    a = np.ascontiguousarray(a, dtype=float)
    return a.view([(f"f{i}", float) for i in range(a.shape[1])]).reshape(-1)


def _unique(*parts: Any) -> np.ndarray:
    return np.unique(np.concatenate([np.asarray(b, dtype=float) for b in parts]), axis=0)


def _rows(xb: Any, mb: Any = None) -> np.ndarray:
    xb = np.asarray(xb, dtype=float)
    return xb if mb is None else xb[np.asarray(mb, dtype=float).reshape(-1) > 0.5]


def _blocks(Xd: Any, mask: Any) -> list:
    xs = list(Xd.to_delayed().ravel())
    return [(x, None) for x in xs] if mask is None else list(zip(xs, mask.to_delayed().ravel()))


def _sample(xb: Any, mb: Any = None) -> np.ndarray:
    u = np.unique(_rows(xb, mb), axis=0)
    return u[np.unique(np.linspace(0, len(u) - 1, min(_SAMPLE, len(u))).astype(int))] if len(u) else u


def partition_sample(Xd: Any, mask: Any = None) -> Any:
    """A delayed array of up to 64 unique rows of every partition (sorted, unique; rows with mask 1 when given)."""
    import dask

    return dask.delayed(_unique)(*[dask.delayed(_sample)(x, mb) for x, mb in _blocks(Xd, mask)])


def _cut(xb: Any, splitters: np.ndarray, mb: Any = None) -> tuple:
    u = np.unique(_rows(xb, mb), axis=0)
    k = np.searchsorted(_struct(splitters), _struct(u), side="right") if len(splitters) else np.zeros(len(u), int)
    cuts = np.searchsorted(k, np.arange(len(splitters) + 2))  # u is sorted, so k does not decrease
    return tuple(u[cuts[i] : cuts[i + 1]] for i in range(len(splitters) + 1))


def _trees(Xd: Any, splitters: np.ndarray, mask: Any = None, split_every: int = 8) -> list:
    import dask

    n_ranges = len(splitters) + 1
    pieces = [dask.delayed(_cut, nout=n_ranges)(x, splitters, mb) for x, mb in _blocks(Xd, mask)]
    out = []
    for r in range(n_ranges):
        parts = [pc[r] for pc in pieces]
        while len(parts) > 1:
            parts = [dask.delayed(_unique)(*parts[i : i + split_every]) for i in range(0, len(parts), split_every)]
        out.append(dask.delayed(_unique)(parts[0]))
    return out


def _rows_at(u: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return u[pos]


def _counted_trees(Xd: Any, sample: np.ndarray, n_rows: int, mask: Any) -> tuple:
    import dask

    n_ranges = max(1, min(len(sample), math.ceil(n_rows * Xd.shape[1] * 8 / _RANGE_BYTES)))
    splitters = sample[np.linspace(0, len(sample), n_ranges + 1)[1:-1].astype(int)]
    trees = _trees(Xd, splitters, mask)
    return trees, np.asarray(dask.compute(*[dask.delayed(len)(t) for t in trees]), dtype=int)


def capped_dictionary(Xd: Any, mask: Any, cap: int, random_state: Any, n_rows: int) -> np.ndarray:
    """Every unique row of ``Xd`` where ``mask`` is 1 when there are at most ``cap`` of them (sorted, as
    ``np.unique``), else the seeded draw of ``cap`` of them: three passes, bounded memory."""
    import dask

    (sample,) = dask.compute(partition_sample(Xd, mask))
    trees, counts = _counted_trees(Xd, np.asarray(sample), n_rows, mask)
    if counts.sum() > cap:
        return draw_dictionary(Xd, np.asarray(sample), cap, random_state, n_rows, mask, (trees, counts))
    return np.vstack(dask.compute(*[t for t, c in zip(trees, counts) if c]))


def draw_dictionary(
    Xd: Any, sample: np.ndarray, m: int, random_state: Any, n_rows: int, mask: Any = None, counted: Any = None
) -> np.ndarray:
    """``KernelModelClass(dictionary=m, random_state=...).dictionary_points(X)`` of the Dask rows ``Xd``."""
    import dask

    trees, counts = _counted_trees(Xd, sample, n_rows, mask) if counted is None else counted
    total = int(counts.sum())
    if not 1 <= m <= total:
        raise RashomonInputError(
            f"The 'dictionary' parameter of KernelModelClass must be between 1 and {total} (unique rows). Got {m} "
            "instead."
        )
    idx = np.sort(np.random.RandomState(random_state).choice(total, m, replace=False))
    offsets = np.r_[0, np.cumsum(counts)]
    jobs = []
    for r, t in enumerate(trees):
        pos = idx[(idx >= offsets[r]) & (idx < offsets[r + 1])] - offsets[r]
        if len(pos):
            jobs.append(dask.delayed(_rows_at)(t, pos))
    return np.vstack(dask.compute(*jobs))
